"""The week's run pages: a click from any prompt, family, verdict or violation to the answers behind it.

``reports/<run_key>/runs/`` holds one static page per prompt × model (:data:`~skillbench.ledgers.RUN_PAGES_DIR`):
the prompt; per rep, each arm's final answer side by side with every rubric verdict, its evidence quote marked
inside the answer; the pairwise judgement both ways; the checks with their output; activation, cost, turns and
duration; and each run's transcript, every message and tool call collapsed. ``runs/index.html`` lists the week's
prompts × models by family. :func:`link_run_pages` then turns the names in a page's tables (scorecard.html, the
stage pages) into links to them, at HTML time, so ``scorecard.md`` — qdrant's format — is unchanged.

Everything shown is data under evaluation and is escaped: the pages are Jinja templates with autoescape; an answer
is escaped first and only then are its quotes marked (:func:`marked_answer`), so a ``<mark>`` never wraps raw
markup; every ``href`` is a slug (:func:`skillbench.ledgers.slug`) through the report's one link filter; and the
pages carry the report's Content-Security-Policy. The week's ledgers are read through their readers
(:func:`skillbench.ledgers.load_week`) and each transcript once (:func:`skillbench.signals.read_transcript`).

A very large week (over :data:`RUN_PAGES_LIMIT` runs) gets pages only for the prompts × models the scorecard
points at — an avoid violation, a failed check, a pairwise loss or a judge error — at most :data:`MAX_PAGES` of
them; the index says so and lists the rest without a link (``skillbench run-pages RUN_DIR --prompts …`` writes any
of them on demand).
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup, escape

from skillbench.ledgers import (
    INDEX_FILE,
    RUN_KEYS,
    RUN_PAGES_DIR,
    TEST_PROMPT_FILE,
    TMP_PREFIX,
    TRANSCRIPT_FILE,
    LedgerError,
    WeekLedgers,
    atomic_write_text,
    load_week,
    slug,
)
from skillbench.report._pages import _jinja, _relative_link
from skillbench.scorecard import arm_order
from skillbench.signals import Transcript, activated, false_trigger_arms, read_transcript

RUN_PAGES_LIMIT = 5_000  # runs: above it, only the prompts × models the scorecard points at get a page
MAX_PAGES = 1_000  # pages of a week over the limit (never 100k files)
SHOWN_CHARS = 2_000  # of one transcript step: the rest behind "show all"
FULL_CHARS = 200_000  # of one transcript step at most, even behind "show all" (the transcript file has it whole)
MAX_STEPS = 500  # transcript steps on a page per run; the rest is in transcript.jsonl
LINKS_FILE = "links.json"  # runs/links.json: what the pages' names link to, for linking pages written later
PAGE_TEMPLATE = "run_page.html.j2"
INDEX_TEMPLATE = "run_pages_index.html.j2"
ITEM_LETTERS = {"must": "M", "bonus": "B", "avoid": "A"}


@dataclass(frozen=True)
class RunLinks:
    """Where each name of a week links to, relative to the runs folder: a page per prompt × model, an anchor of
    the index per prompt and per family."""

    pages: dict[tuple[str, str], str] = field(default_factory=dict)  # (prompt, model) → page file
    prompts: dict[str, str] = field(default_factory=dict)  # prompt → "index.html#p-…"
    families: dict[str, str] = field(default_factory=dict)  # family → "index.html#f-…"
    models: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, Any]:
        return {"pages": [[p, m, f] for (p, m), f in sorted(self.pages.items())], "prompts": self.prompts,
                "families": self.families, "models": sorted(self.models)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunLinks:
        return cls({(str(p), str(m)): str(f) for p, m, f in data.get("pages", [])},
                   {str(k): str(v) for k, v in data.get("prompts", {}).items()},
                   {str(k): str(v) for k, v in data.get("families", {}).items()},
                   frozenset(map(str, data.get("models", []))))


# -- the answer, its quotes marked --------------------------------------------------------------------------------


@functools.cache
def _char_form(char: str) -> str:
    from skillbench.judge import normalize_quote

    return normalize_quote(char) or char


def _normalized(text: str) -> tuple[str, list[int]]:
    """``text`` in the judge's quote form (:func:`skillbench.judge.normalize_quote`, applied per character so each
    normalized character knows where it came from), and the index of its source character for each one."""
    out: list[str] = []
    where: list[int] = []
    for i, char in enumerate(text):
        if char.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                where.append(i)
            continue
        for n in _char_form(char):
            out.append(n)
            where.append(i)
    return "".join(out), where


def quote_spans(answer: str, quotes: Iterable[tuple[str, str]]) -> list[tuple[int, int, list[str]]]:
    """Where each ``(label, quote)`` is in ``answer`` (matched as the judge's evidence check matches a quote),
    as non-overlapping ``(start, end, labels)`` in the answer's own characters; a quote not found has no span."""
    quotes = [(label, quote) for label, quote in quotes if str(quote).strip()]
    if not quotes:
        return []
    norm, where = _normalized(answer)
    hits: list[tuple[int, int, str]] = []
    from skillbench.judge import normalize_quote

    for label, quote in quotes:
        q = normalize_quote(str(quote)).strip(" .…")
        at = norm.find(q) if q else -1
        if at >= 0:
            hits.append((where[at], where[at + len(q) - 1] + 1, label))
    merged: list[tuple[int, int, list[str]]] = []
    for start, end, label in sorted(hits):
        if merged and start < merged[-1][1]:
            s, e, labels = merged[-1]
            merged[-1] = (s, max(e, end), [*labels, label])
        else:
            merged.append((start, end, [label]))
    return merged


def marked_answer(answer: str, quotes: Iterable[tuple[str, str]]) -> Markup:
    """The answer as HTML: every piece escaped first, then each evidence quote wrapped in ``<mark>`` with its item
    labels — the marks are the only markup, so nothing the answer holds can become a tag."""
    return _marked(answer, quote_spans(answer, quotes))


def _marked(answer: str, spans: Sequence[tuple[int, int, list[str]]]) -> Markup:
    parts: list[str] = []
    pos = 0
    for start, end, labels in spans:
        kind = "avoid" if all(lb.startswith("A") for lb in labels) else "hit"
        tag = ",".join(labels)
        parts += [str(escape(answer[pos:start])),
                  f'<mark class="{kind}" title="{escape(tag)}">{escape(answer[start:end])}<sup>{escape(tag)}</sup>'
                  "</mark>"]
        pos = end
    parts.append(str(escape(answer[pos:])))
    return Markup("".join(parts))


# -- a transcript, readable ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One message or tool call of a transcript as a page shows it: a one-line title, the text (cut to
    :data:`SHOWN_CHARS` with "…"), and the whole text when it was cut."""

    kind: str
    title: str
    text: str
    full: str | None = None


def _step(kind: str, title: str, text: str) -> Step:
    one_line = " ".join(title.split())
    title = one_line if len(one_line) <= 120 else one_line[:119] + "…"
    if len(text) <= SHOWN_CHARS:
        return Step(kind, title, text)
    full = text if len(text) <= FULL_CHARS else text[:FULL_CHARS] + f"\n… ({len(text) - FULL_CHARS:,} more " \
        f"characters in {TRANSCRIPT_FILE})"
    return Step(kind, title, text[:SHOWN_CHARS] + "…", full)


def _text_of(content: Any) -> str:
    """A message's content as text: a string as it is, a list of blocks by their ``text`` (one level: anything else,
    however nested, as JSON)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] if isinstance(b, dict) and isinstance(b.get("text"), str) else
                         b if isinstance(b, str) else json.dumps(b, ensure_ascii=False) for b in content)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def transcript_steps(transcript: Transcript) -> list[Step]:
    """The transcript's messages and tool calls, in order: the session start, each assistant text, thinking and tool
    call, each tool result and user message (a skill's body when the Skill tool loaded one), system events, the
    result."""
    steps: list[Step] = []
    for event in transcript.events:
        try:
            steps += _event_steps(event)
        except (TypeError, AttributeError, ValueError, KeyError, IndexError):
            # a line of an unexpected shape (the run wrote it): shown as it is rather than failing the page
            steps.append(_step("unreadable", "an event of an unexpected shape", json.dumps(event, ensure_ascii=False)))
    return steps


def _event_steps(event: dict[str, Any]) -> list[Step]:
    """The steps of one event (raises on a shape it does not expect: the caller shows that event as it is)."""
    steps: list[Step] = []
    kind, message = event.get("type"), event.get("message") or {}
    if kind == "system" and event.get("subtype") == "init":
        steps.append(_step("system", f"session start: {event.get('model', '?')}, "
                           f"{len(event.get('tools') or [])} tools, skills: "
                           f"{', '.join(map(str, event.get('skills') or [])) or 'none'}",
                           json.dumps({k: event.get(k) for k in ("model", "tools", "skills", "cwd")},
                                      indent=1, ensure_ascii=False)))
    elif kind == "system":
        steps.append(_step("system", f"system: {event.get('subtype', '')}",
                           json.dumps(event, indent=1, ensure_ascii=False)))
    elif kind == "assistant":
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                args = json.dumps(block.get("input"), indent=1, ensure_ascii=False)
                steps.append(_step("tool call", f"tool call: {block.get('name', '')} {args}", args))
            elif block.get("type") == "thinking":
                steps.append(_step("thinking", "thinking: " + str(block.get("thinking", "")),
                                   str(block.get("thinking", ""))))
            elif block.get("type") == "text":
                steps.append(_step("assistant", "assistant: " + str(block.get("text", "")),
                                   str(block.get("text", ""))))
    elif kind == "user":
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": _text_of(content)}]
        for block in blocks:
            if not isinstance(block, dict):
                continue
            text = _text_of(block.get("content") if block.get("type") == "tool_result" else block.get("text"))
            if block.get("type") == "tool_result":
                error = " (error)" if block.get("is_error") else ""
                steps.append(_step("tool result", f"tool result{error}: {text}", text))
            elif text.startswith("Base directory for this skill: "):
                steps.append(_step("skill", "skill loaded: " + text.split("\n", 1)[0].split(": ", 1)[1], text))
            else:
                steps.append(_step("user", "user: " + text, text))
    elif kind == "result":
        cost = event.get("total_cost_usd")
        steps.append(_step("result", f"result: {event.get('subtype', '')}, {event.get('num_turns', '?')} turns"
                           + (f", ${float(cost):.4f}" if isinstance(cost, int | float) else ""),
                           _text_of(event.get("result"))))
    return steps


# -- the week's pages ---------------------------------------------------------------------------------------------


def _records(frame: pd.DataFrame | None) -> list[dict[str, Any]]:
    if frame is None or frame.empty:
        return []
    return [{k: (None if _missing(v) else v) for k, v in row.items()} for row in frame.to_dict("records")]


def _missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _prompt_text(folder: Path) -> str:
    from skillbench.suite import TestPrompt

    try:
        return TestPrompt.model_validate_json((folder / TEST_PROMPT_FILE).read_text(encoding="utf-8")).prompt
    except (OSError, ValueError):
        return ""


def _anchor(prefix: str, name: str) -> str:
    return f"{prefix}-{slug(name)}"


def _page_names(keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """A file name per prompt × model: slugs joined by ``--``; a second key that would share a file gets a hash."""
    from skillbench.ledgers import short_id

    names: dict[tuple[str, str], str] = {}
    used: set[str] = set()
    for prompt, model in sorted(keys):
        name = f"{slug(prompt)}--{slug(model)}"
        if name.lower() in used:  # case-insensitive file systems too
            name = f"{name}-{short_id(prompt + chr(0) + model)[:8]}"
        used.add(name.lower())
        names[(prompt, model)] = name + ".html"
    return names


def pointed_keys(week: WeekLedgers) -> set[tuple[str, str]]:
    """The prompts × models the scorecard points at: an avoid violation, a failed check, a pairwise loss or a
    judge error — the pages a week over :data:`RUN_PAGES_LIMIT` runs still gets."""
    keys: set[tuple[str, str]] = set()
    scores = week.scores
    if not scores.empty:
        bad = scores[(scores["item_type"] == "avoid") & (scores["verdict"] == "violated")]
        keys |= set(zip(bad["prompt"].astype(str), bad["model"].astype(str), strict=True))
    checks = week.checks
    if not checks.empty:
        bad = checks[checks["status"] == "failed"]
        keys |= set(zip(bad["prompt"].astype(str), bad["model"].astype(str), strict=True))
    if week.pairs is not None and not week.pairs.empty:
        bad = week.pairs[(week.pairs["outcome"] == "L") | (week.pairs["error"] != "")]
        keys |= set(zip(bad["prompt"].astype(str), bad["model"].astype(str), strict=True))
    return keys


@dataclass
class _Week:
    """The week's ledgers split by run and by prompt × model, read once for every page."""

    week: WeekLedgers
    scores: dict[tuple[str, ...], list[dict[str, Any]]]  # by RUN_KEYS
    checks: dict[str, list[dict[str, Any]]]
    pairs: dict[tuple[str, str], list[dict[str, Any]]]

    @classmethod
    def read(cls, run_dir: Path) -> _Week:
        week = load_week(run_dir)
        scores = week.scores.sort_values(["run_id", "item_index"]) if not week.scores.empty else week.scores
        pairs = week.pairs.sort_values("rep") if week.pairs is not None else None
        # scores by the run's key, not its run id: qdrant's ledger has none
        return cls(week, _by(scores, *RUN_KEYS), _by(week.checks, "run_id"), _by(pairs, "prompt", "model"))


def _by(frame: pd.DataFrame | None, *columns: str) -> dict[Any, list[dict[str, Any]]]:
    """The frame's rows as dicts, grouped by ``columns`` (one string key, else a tuple), in the frame's order."""
    out: dict[Any, list[dict[str, Any]]] = {}
    for row in _records(frame):
        key = tuple(str(row[c]) for c in columns)
        out.setdefault(key[0] if len(key) == 1 else key, []).append(row)
    return out


def _run_key(run: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(run[c]) for c in RUN_KEYS)


def _run_view(run: Mapping[str, Any], data: _Week, run_dir: Path) -> dict[str, Any]:
    folder = run_dir / str(run["run_id"])
    transcript = read_transcript(folder / TRANSCRIPT_FILE)
    has_folder = (folder / TRANSCRIPT_FILE).is_file()
    items = data.scores.get(_run_key(run), [])
    for n, item in enumerate(items):
        index = item.get("item_index")
        item["label"] = f"{ITEM_LETTERS.get(str(item['item_type']), '?')}{(index if index is not None else n) + 1}"
    answer = transcript.final_answer()
    spans = quote_spans(answer, [(i["label"], i["evidence_quote"]) for i in items if i.get("evidence_quote")])
    found = {label for _, _, labels in spans for label in labels}
    for item in items:
        item["marked"] = item["label"] in found
    steps = transcript_steps(transcript)
    return {**run, "answer": _marked(answer, spans), "has_answer": bool(answer.strip()), "items": items,
            "checks": data.checks.get(str(run["run_id"]), []), "steps": steps[:MAX_STEPS],
            "steps_left": max(0, len(steps) - MAX_STEPS), "parse_errors": transcript.parse_errors,
            "folder": folder, "has_transcript": has_folder, "anchor": _anchor("t", str(run["run_id"]))}


def _page_context(prompt: str, model: str, runs: list[dict[str, Any]], data: _Week, run_dir: Path) -> dict[str, Any]:
    views = [_run_view(r, data, run_dir) for r in runs]
    order = arm_order([v["condition"] for v in views], data.week.arms)
    order += sorted({str(v["condition"]) for v in views} - set(order))
    reps = sorted({int(v["rep"]) for v in views})
    grid = [{"rep": rep, "cells": [next((v for v in views if v["condition"] == c and int(v["rep"]) == rep), None)
                                   for c in order]} for rep in reps]
    # the prompt as run: one file per run, the same question in each (the first that reads)
    prompt_text = next((text for v in views if (text := _prompt_text(v["folder"]))), "")
    family = str(views[0].get("skill_family") or "")
    return {"prompt": prompt, "model": model, "family": family,
            "family_href": run_href(f"{INDEX_FILE}#{_anchor('f', family)}"),
            "dormancy": bool(views[0].get("dormancy")), "prompt_text": prompt_text, "conditions": order,
            "grid": grid, "runs": sorted(views, key=lambda v: (order.index(v["condition"]), int(v["rep"]))),
            "pairs": data.pairs.get((prompt, model), []), "pair": data.week.arms,
            "run_key": data.week.run_key}


def write_run_pages(run_dir: str | Path, report_dir: str | Path, *, prompts: Sequence[str] = (),
                    limit: int = RUN_PAGES_LIMIT) -> RunLinks:
    """Write ``REPORT_DIR/runs/``: a page per prompt × model of the week in ``run_dir`` and the index.

    Args:
        run_dir: the week's run directory (its ``manifest.csv`` and run folders).
        report_dir: the week's report folder (``reports/<run_key>/``).
        prompts: only these prompts' pages (written beside the pages already there); the index lists every
            prompt and links the pages that exist.
        limit: above this many runs, only the prompts × models the scorecard points at (:func:`pointed_keys`)
            get a page, at most :data:`MAX_PAGES`.

    Raises:
        LedgerError: a damaged ledger (one line naming the file).
    """
    run_dir, out = Path(run_dir), Path(report_dir) / RUN_PAGES_DIR
    data = _Week.read(run_dir)
    manifest = data.week.manifest
    groups = dict(sorted(_by(manifest, "prompt", "model").items()))
    names = _page_names(groups)
    too_many = len(manifest) > limit
    wanted = set(groups)
    if prompts:
        wanted = {k for k in groups if k[0] in set(prompts)}
    elif too_many:
        wanted = set(sorted(pointed_keys(data.week) & set(groups))[:MAX_PAGES])
    # A whole rendering is built beside the pages it replaces and swapped in at the end, so a failure half-way
    # leaves the earlier pages (which the report's links name) whole; one prompt's pages are added in place.
    work = out if prompts else out.with_name(f"{TMP_PREFIX}{RUN_PAGES_DIR}")
    if work != out and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    # in place each file is replaced atomically; a folder swapped in whole needs no fsync per page
    write = atomic_write_text if work == out else _write_text
    env = _jinja()
    page = env.get_template(PAGE_TEMPLATE)
    incomplete = data.week.reconciliation is not None and not data.week.reconciliation.complete
    for key in sorted(wanted):
        write(work / names[key], page.render(**_page_context(*key, groups[key], data, run_dir),
                                                         incomplete=incomplete))
    written = {k: n for k, n in names.items() if (work / n).is_file()}
    links = RunLinks(written, {p: f"{INDEX_FILE}#{_anchor('p', p)}" for p, _ in groups},
                     {str(f): f"{INDEX_FILE}#{_anchor('f', str(f))}" for f in manifest["skill_family"].unique()},
                     frozenset(manifest["model"].astype(str)))
    write(work / INDEX_FILE, env.get_template(INDEX_TEMPLATE).render(
        **_index_context(data, groups, written), too_many=too_many, limit=limit, max_pages=MAX_PAGES))
    write(work / LINKS_FILE, json.dumps(links.to_json(), indent=1, ensure_ascii=False))
    if work != out:
        if out.exists():
            shutil.rmtree(out)  # an earlier rendering: a page no longer wanted must go
        work.rename(out)
    return links


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def _index_context(data: _Week, groups: Mapping[tuple[str, str], list[dict[str, Any]]],
                   written: Mapping[tuple[str, str], str]) -> dict[str, Any]:
    models = sorted({m for _, m in groups})
    families: dict[str, dict[str, dict[str, Any]]] = {}
    for (prompt, model), runs in groups.items():
        rows = families.setdefault(str(runs[0]["skill_family"]), {})
        row = rows.setdefault(prompt, {"prompt": prompt, "anchor": _anchor("p", prompt),
                                       "dormancy": bool(runs[0]["dormancy"]), "cells": {}})
        items = [i for r in runs for i in data.scores.get(_run_key(r), [])]
        frame = pd.DataFrame(runs)
        # a dormancy prompt's cell says how often the skill fired on it (the activation contract's evidence)
        fired = int((activated(frame) & false_trigger_arms(frame["condition"], data.week.arms)).sum())
        row["cells"][model] = {
            "page": written.get((prompt, model)), "runs": len(runs), "fired": fired,
            "failed_checks": sum(c["status"] == "failed" for r in runs for c in data.checks.get(str(r["run_id"]), [])),
            "violations": sum(i["item_type"] == "avoid" and i["verdict"] == "violated" for i in items),
            "outcomes": "".join(str(p.get("outcome") or "E") for p in data.pairs.get((prompt, model), [])),
        }
    reconciliation = data.week.reconciliation
    return {"run_key": data.week.run_key, "models": models,
            "families": [{"name": f, "anchor": _anchor("f", f), "rows": list(rows.values())}
                         for f, rows in sorted(families.items())],
            "incomplete": reconciliation is not None and not reconciliation.complete,
            "n_runs": len(data.week.manifest), "n_pages": len(written), "pair": data.week.arms}


# -- links from the other pages -----------------------------------------------------------------------------------


def read_run_links(report_dir: str | Path) -> RunLinks | None:
    """The links of a week's run pages (``runs/links.json``), ``None`` when the week has none."""
    try:
        data = json.loads((Path(report_dir) / RUN_PAGES_DIR / LINKS_FILE).read_text(encoding="utf-8"))
        return RunLinks.from_json(data) if isinstance(data, dict) else None
    except (OSError, ValueError, TypeError, AttributeError):  # damaged: the pages link nothing rather than fail
        return None


def run_href(target: str) -> str:
    """A link to a run page or an anchor of the runs index, as every page writes one: the path through the report's
    one link filter (percent-encoded, so no ``javascript:`` or ``../`` survives) and the anchor likewise."""
    return _relative_link(target)  # the report's one link filter keeps an anchor an anchor


_LINK_CLASS = 'class="run-link"'
_ROW = re.compile(r"<tr\b[^>]*>.*?</tr>", re.S)
_CELL = re.compile(r"(<t[dh]\b[^>]*>)(.*?)(</t[dh]>)", re.S)
_TAG = re.compile(r"<[^>]*>")


def _cell_text(cell: str) -> str:
    return " ".join(html.unescape(_TAG.sub("", cell)).replace("\\", "").split())


def _row_targets(texts: Sequence[str], links: RunLinks) -> dict[int, str]:
    """Which cells of a table row link where: a prompt to its page with the row's model (else to its row of the
    index), a family to its section of the index, and — in a row naming a prompt or family — each verdict and each
    number to the row's most specific place (a prompt's page before a family's section): a click from any number
    to the runs behind it."""
    model = next((t for t in texts if t in links.models), None)
    out: dict[int, str] = {}
    for i, text in enumerate(texts):
        if text in links.prompts:
            out[i] = links.pages.get((text, model), links.prompts[text]) if model else links.prompts[text]
        elif text in links.families:
            out[i] = links.families[text]
    if out:
        target = min(out.values(), key=lambda href: href.startswith(INDEX_FILE))
        for i, text in enumerate(texts):
            if i not in out and (_NUMBER.match(text) or _verdict_cell().search(text)):
                out[i] = target
    return out


# A number cell: digits with signs, decimals, intervals, ratios or arrows, and no word (a name, a state).
_NUMBER = re.compile(r"^[^A-Za-z]*\d[^A-Za-z]*$")


@functools.cache
def _verdict_cell() -> re.Pattern[str]:
    """A verdict cell: a gate or objective rule's state or plain label (the one verdict specification,
    ``scorecard._verdicts``), after an optional icon — read from the rules, so a relabelled verdict still links."""
    from skillbench.scorecard import GATE_RULES, OBJECTIVE_RULES, PREFERENCE_LOSS_LABEL

    words = {w for r in (*GATE_RULES, *OBJECTIVE_RULES) for w in (r.state, r.label)} | {PREFERENCE_LOSS_LABEL}
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True) if w)
    return re.compile(rf"^\W*(?:{alternatives})(?![\w-])")


def link_cells(page_html: str, target: Callable[[Sequence[str]], Mapping[int, str]]) -> str:
    """``page_html`` with table cells wrapped in links: ``target`` gets each row's cell texts (tags stripped,
    unescaped) and names the cells to link and their ``href`` (already a safe relative link). A cell that holds a
    link already is left as it is."""
    def row(match: re.Match[str]) -> str:
        cells = list(_CELL.finditer(match.group()))
        wanted = target([_cell_text(c.group(2)) for c in cells]) if cells else {}
        if not wanted:
            return match.group()
        text, out, pos = match.group(), [], 0
        for i, cell in enumerate(cells):
            out.append(text[pos:cell.start()])
            inner = cell.group(2)
            if i in wanted and "<a " not in inner:
                inner = f'<a {_LINK_CLASS} href="{escape(run_href(wanted[i]))}">{inner}</a>'
            out.append(cell.group(1) + inner + cell.group(3))
            pos = cell.end()
        out.append(text[pos:])
        return "".join(out)

    return _ROW.sub(row, page_html)


_TABLE = re.compile(r"<table\b.*?</table>", re.S)
_INLINE = re.compile(r"<(strong|code)>([^<]*)</\1>")
_PAIR_NAME = re.compile(r"^(.+?) × (.+)$")


def link_inline(page_html: str, links: RunLinks, runs_href: str) -> str:
    """``page_html`` with the bold or code names outside its tables linked like the tables' cells: a prompt, a
    family, or "family × model" (the verdict lines and lists of a page). Text already inside a link is left alone."""
    def name(match: re.Match[str]) -> str:
        text = " ".join(html.unescape(match.group(2)).replace("\\", "").split())
        pair = _PAIR_NAME.match(text)
        if text in links.prompts:
            target = links.prompts[text]
        elif text in links.families:
            target = links.families[text]
        elif pair and pair.group(1) in links.families and pair.group(2) in links.models:
            target = links.families[pair.group(1)]
        else:
            return match.group()
        return f'<a {_LINK_CLASS} href="{escape(run_href(f"{runs_href}/{target}"))}">{match.group()}</a>'

    out, pos = [], 0
    for table in _TABLE.finditer(page_html):
        out += [_outside_links(page_html[pos:table.start()], name), table.group()]
        pos = table.end()
    out.append(_outside_links(page_html[pos:], name))
    return "".join(out)


_ANCHOR = re.compile(r"<a\b.*?</a>", re.S)


def _outside_links(text: str, replace: Callable[[re.Match[str]], str]) -> str:
    out, pos = [], 0
    for a in _ANCHOR.finditer(text):
        out += [_INLINE.sub(replace, text[pos:a.start()]), a.group()]
        pos = a.end()
    out.append(_INLINE.sub(replace, text[pos:]))
    return "".join(out)


def link_run_pages(page: str | Path, links: RunLinks, *, runs_href: str = RUN_PAGES_DIR) -> int:
    """Rewrite a written report page so that its tables' prompts, families and verdicts link to the run pages.

    Args:
        page: an HTML page of the report (scorecard.html, a stage page, the compare page).
        links: the week's :class:`RunLinks` (from :func:`write_run_pages` or :func:`read_run_links`).
        runs_href: the runs folder relative to the page (``runs`` for a page of the week's report folder).

    Returns:
        How many cells became links.
    """
    path = Path(page)
    text = path.read_text(encoding="utf-8")
    linked = link_cells(text, lambda texts: {i: f"{runs_href}/{href}"
                                              for i, href in _row_targets(texts, links).items()})
    linked = link_inline(linked, links, runs_href)
    count = linked.count(_LINK_CLASS) - text.count(_LINK_CLASS)
    if count:
        atomic_write_text(path, linked)
    return count


def write_report_run_pages(run_dir: str | Path, report_dir: str | Path) -> str | None:
    """A week report's run pages, and every page of the report (``REPORT_DIR/*.html``) linked to them.

    Returns:
        ``None``, or the one line saying why the week has no run pages (a ledger its readers refuse: the stage
        that reads it fails and says so too, and the pages never show a damaged week as a clean one).
    """
    try:
        links = write_run_pages(run_dir, report_dir)
    except (LedgerError, OSError, ValueError) as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - the pages are a convenience: the chain's report must still be written
        return f"run pages not written: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    for page in sorted(Path(report_dir).glob("*.html")):
        link_run_pages(page, links)
    return None


def link_to_week(page: str | Path, week_report: str | Path) -> int:
    """Link a page outside a week's report (the explore page, which compares the newest week with the one before)
    to that week's run pages; 0 when the week has none."""
    links = read_run_links(week_report)
    if links is None:
        return 0
    runs = Path(os.path.relpath(Path(week_report) / RUN_PAGES_DIR, Path(page).parent)).as_posix()
    return link_run_pages(page, links, runs_href=runs)
