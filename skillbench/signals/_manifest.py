"""Run signals: one manifest row per run directory, derived from its transcript and metadata.

``manifest.csv`` starts with qdrant's 23 columns in their order, then ours. The rules:

* availability: the run's skill family is in the init event's ``skills`` list;
* activation, by priority ``skill_tool`` > ``file_read`` > ``web_fetch`` > ``none``, counting only tool calls
  that ran (attempts listed in ``permission_denials`` are netted out);
* a reach of the published site is a WebFetch of a URL under a site base, or a Bash command that contains one
  (the suite's real site base, or the simulated one the run's metadata records); WebSearch results are not reaches;
* ``reached_leaf`` also holds when the leaf is the family's top-level SKILL.md and the Skill tool loaded it;
* ``budget_hit`` from ``error_max_budget_usd`` or ``budget_exhausted``; API errors by ``is_error`` (the CLI
  reports subtype ``success`` for them); ``signals_ok`` = 0 when init or result is missing or a line did not parse;
* ``run_state`` is :func:`run_state`, the one decision (ARCHITECTURE.md, "Run states") that resume,
  reconciliation and the scorecard read; a run without a result event names its state in ``terminal_reason``;
* ``rate_limited``: an attempt of the run (its transcript, or a retried first attempt's) has a CLI ``api_retry``
  event for a 429 or 529 (:func:`rate_limit_retries`, the one rule generation's limiter reads too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.arms import lists_skill
from skillbench.ledgers import (
    MANIFEST_COLUMNS,
    MANIFEST_FILE,
    TRANSCRIPT_FILE,
    VERSION_COLUMNS,
    LedgerError,
    atomic_write_text,
    metadata_or_none,
    read_metadata as read_folder_metadata,  # this module's read_metadata adds the manifest's required keys
)
from skillbench.signals._transcript import Transcript, read_transcript
from skillbench.vocab import (  # noqa: F401 - re-exported: the state names travel with run_state
    API_ERROR,
    BUDGET_HIT,
    COMPLETE_STATES,
    FINISHED,
    HARNESS_INVALID,
    PLAN_STATES,
    RUN_STATES,
    SANDBOX_FAILURE,
    TAMPERED,
    TIMEOUT,
    WORKER_LOST,
)

SKILLS_DIR_MARK = "/.claude/skills/"
# The CLI's own retry events (stream-json ``system``/``api_retry``) that mean the API asked it to slow down:
# ``rate_limit`` for a 429, ``overloaded`` for a 529 (``server_error`` and ``unknown`` are not rate limits).
RATE_LIMIT_ERRORS: frozenset[str] = frozenset({"rate_limit", "overloaded"})
RATE_LIMIT_STATUSES: frozenset[int] = frozenset({429, 529})


def site_bases(meta: dict[str, Any]) -> list[str]:
    bases = [meta.get("suite_site_base"), meta.get("site_base")]
    return [b.rstrip("/") + "/" for b in bases if b]


def _reaches(tool_uses: Iterable, bases: list[str]) -> list[str]:
    """URLs (or commands) by which a run reached a published site."""
    out = []
    for tool in tool_uses:
        if tool.name == "WebFetch":
            url = str(tool.input.get("url", ""))
            if any(url.startswith(b) or url.rstrip("/") + "/" == b for b in bases):
                out.append(url)
        elif tool.name == "Bash":
            command = str(tool.input.get("command", ""))
            if not any(b.rstrip("/") in command for b in bases):
                continue
            urls = [tok.strip("'\"") for tok in command.split()]
            hits = [u for u in urls if any(u.startswith(b.rstrip("/")) for b in bases)]
            out.extend(hits or [command])  # the base appears inside a longer word: still a reach
    return out


def _skill_paths_read(tool_uses: Iterable) -> list[str]:
    """Installed-skill paths (``<family>/…``) the run read with Read, or cat'ed with Bash."""
    out = []
    for tool in tool_uses:
        if tool.name == "Read":
            paths = [str(tool.input.get("file_path", ""))]
        elif tool.name == "Bash":
            paths = str(tool.input.get("command", "")).split()
        else:
            continue
        out.extend(p.split(SKILLS_DIR_MARK, 1)[1] for p in paths if SKILLS_DIR_MARK in p)
    return out


def activation_signals(transcript: Transcript, family: str, leaf: str, site_bases: list[str]) -> dict[str, Any]:
    """How (and whether) the run reached its target skill, net of denied attempts."""
    allowed = transcript.allowed_tool_uses()
    skill_calls = [t for t in allowed if t.name == "Skill"
                   and str(t.input.get("skill", "")).split(":")[-1] == family]
    loaded = [d for d in transcript.skill_bodies() if d.rstrip("/").endswith(SKILLS_DIR_MARK + family)]
    read_paths = [p for p in _skill_paths_read(allowed) if p.split("/", 1)[0] == family]
    reaches = _reaches(allowed, site_bases)
    family_reaches = [u for u in reaches if any(u.startswith(f"{b}{family}/") for b in site_bases)]

    if skill_calls or loaded:
        activation = "skill_tool"
    elif read_paths:
        activation = "file_read"
    elif family_reaches:
        activation = "web_fetch"
    else:
        activation = "none"
    top_leaf = leaf == f"{family}/SKILL.md"
    reached_leaf = (
        any(p == leaf for p in read_paths)
        or any(u.endswith("/" + leaf) for u in reaches)
        or (top_leaf and bool(skill_calls or loaded))
    )
    return {
        "skill_activation": activation,
        "reached_leaf": int(reached_leaf),
        "fetched_site": int(bool(reaches)),
        "fetched_count": len(reaches),
    }


def is_rate_limit_retry(event: Any) -> bool:
    """A stream-json event is the CLI retrying because of a rate limit (429) or an overload (529)."""
    if not isinstance(event, dict) or event.get("type") != "system" or event.get("subtype") != "api_retry":
        return False
    return event.get("error") in RATE_LIMIT_ERRORS or event.get("error_status") in RATE_LIMIT_STATUSES


def rate_limit_retries(events: Iterable[Any]) -> list[dict[str, Any]]:
    """The CLI's ``api_retry`` events of a transcript that were rate limits or overloads, in order."""
    return [e for e in events if is_rate_limit_retry(e)]


def was_rate_limited(run_dir: Path) -> bool:
    """Any attempt of the run folder (its transcript, a retried first attempt's) saw a rate-limit retry."""
    paths = [run_dir / TRANSCRIPT_FILE, *sorted(run_dir.glob(f"attempt-*.{TRANSCRIPT_FILE}"))]
    return any(rate_limit_retries(read_transcript(p).events) for p in paths if p.is_file())


class SignalsError(ValueError):
    """A run folder whose metadata cannot be read; the message names the file and the field."""


REQUIRED_METADATA = ("run_id", "prompt", "skill_family", "skill_leaf", "model", "condition", "rep")


def read_metadata(run_dir: Path) -> dict[str, Any]:
    """A run's ``metadata.json``, checked for the fields a manifest row needs.

    Raises:
        SignalsError: not JSON, not an object, or a required field missing (one line naming the file and field).
    """
    try:
        return read_folder_metadata(run_dir, REQUIRED_METADATA)
    except LedgerError as exc:
        raise SignalsError(str(exc)) from exc


def api_failure(result: dict[str, Any] | None) -> bool:
    """The result event reports an API error (the CLI says subtype ``success`` for those) rather than an answer."""
    result = result or {}
    return bool(result.get("is_error")) and (result.get("terminal_reason") == "api_error"
                                             or bool(result.get("api_error_status")))


def budget_stopped(result: dict[str, Any] | None) -> bool:
    """The CLI stopped the run at ``--max-budget-usd`` (the answer, if any, is truncated)."""
    result = result or {}
    return result.get("subtype") == "error_max_budget_usd" or result.get("terminal_reason") == "budget_exhausted"


def decide_run_state(meta: Mapping[str, Any] | None, transcript: Transcript) -> str:
    """The run-state rule (:func:`run_state` documents it) on a run's metadata and transcript, read or in memory.

    Generation asks it of each attempt before the attempt is written (:func:`skillbench.generation._retries.
    needs_retry`, with the attempt's ``timed_out`` and ``worker_lost``), so the retry and the resume decide alike.
    """
    if meta is None:
        return HARNESS_INVALID  # a folder whose metadata cannot be read cannot be scored: rerun it
    if meta.get(SANDBOX_FAILURE):
        return SANDBOX_FAILURE
    if meta.get(HARNESS_INVALID):
        return HARNESS_INVALID
    if meta.get(WORKER_LOST):
        return WORKER_LOST
    if meta.get(TAMPERED):
        return TAMPERED
    if not transcript.complete:  # no result event last: the CLI never finished
        return TIMEOUT if meta.get("timed_out") else HARNESS_INVALID
    if api_failure(transcript.result):
        return API_ERROR
    return BUDGET_HIT if budget_stopped(transcript.result) else FINISHED


def run_state(folder: str | Path) -> str:
    """The state a run folder ended its pass in: one of :data:`RUN_STATES` (ARCHITECTURE.md, "Run states").

    * ``sandbox_failure`` / ``harness_invalid``: generation recorded that the sandbox failed, or that it could
      not set the run up, in ``metadata.json``; unreadable metadata is ``harness_invalid`` too;
    * ``worker_lost``: the Dask worker of both attempts died under the run (``metadata.json``'s ``worker_lost``);
    * ``tampered``: the transcript disagrees with what the run's relay saw (``metadata.json``'s ``tampered``, set by
      generation from :func:`skillbench.signals.relay_disagreements`): never graded; resume reruns it;
    * ``timeout``: no final result event and the external timeout fired; without the timeout, ``harness_invalid``
      (the CLI never ran to its end);
    * ``api_error``: the result event is an API error (after its one retry);
    * ``budget_hit``: the CLI stopped at ``--max-budget-usd``; ``finished``: any other result event.

    Only ``finished`` and ``budget_hit`` are complete (:data:`COMPLETE_STATES`): resume keeps them and
    reconciliation counts them; resume moves every other folder aside and reruns it.
    """
    folder = Path(folder)
    return decide_run_state(metadata_or_none(folder), read_transcript(folder / TRANSCRIPT_FILE))


def run_states(out_dir: str | Path) -> dict[str, str]:
    """The state of every run folder of a week (:func:`run_state`), by run id; ``_aside/`` and ``.tmp-`` folders
    are not runs."""
    return {folder.name: run_state(folder) for folder in run_dirs(out_dir)}


def run_signals(run_dir: str | Path) -> dict[str, Any]:
    """One manifest row for a run directory (metadata.json + transcript.jsonl).

    Raises:
        SignalsError: the run's metadata.json is unreadable or incomplete.
    """
    run_dir = Path(run_dir)
    meta = read_metadata(run_dir)
    transcript = read_transcript(run_dir / TRANSCRIPT_FILE)
    init, result = transcript.init, transcript.result
    family, leaf = meta["skill_family"], meta["skill_leaf"]
    state = decide_run_state(meta, transcript)
    result = result or {}
    subtype = result.get("subtype", "")
    models = transcript.assistant_models()
    row = {
        "prompt": meta["prompt"],
        "skill_family": family,
        "skill_leaf": leaf,
        "model": meta["model"],
        "condition": meta["condition"],
        "rep": meta["rep"],
        "run_id": meta["run_id"],
        "exit_code": meta.get("exit_code"),
        "skills_sha": meta.get("skills_sha", ""),
        "timestamp": meta.get("timestamp", ""),
        "skill_available": int(family in ((init or {}).get("skills") or [])),
        **activation_signals(transcript, family, leaf, site_bases(meta)),
        "model_snapshot": models[0] if models else (init or {}).get("model", ""),
        "cli_version": (init or {}).get("claude_code_version", meta.get("cli_version", "")),
        "total_cost_usd": result.get("total_cost_usd"),
        "num_turns": result.get("num_turns"),
        "result_subtype": subtype,
        "budget_hit": int(budget_stopped(result)),
        "signals_ok": int(init is not None and bool(result) and transcript.parse_errors == 0),
        "duration_ms": result.get("duration_ms"),
        "dormancy": int(bool(meta.get("dormancy"))),
        "trigger_only": int(bool(meta.get("trigger_only"))),
        "sandbox": meta.get("sandbox", ""),
        "is_error": int(bool(result.get("is_error"))) if result else 1,
        "terminal_reason": result.get("terminal_reason", state if state not in COMPLETE_STATES else ""),
        "denials": len(transcript.denied_ids()),
        "attempts": len(meta.get("attempts") or [1]),
        "endpoint": meta.get("endpoint", ""),
        "run_state": state,  # ARCHITECTURE.md, "Run states"
        **{key: str(meta.get(key) or "") for key in VERSION_COLUMNS},
        "rate_limited": int(was_rate_limited(run_dir)),
    }
    return row


def run_dirs(out_dir: str | Path) -> list[Path]:
    """Run sub-folders of a week's output folder (those with a metadata.json), sorted by name."""
    from skillbench.ledgers import run_folder_ids  # the one rule for which folders are runs

    out_dir = Path(out_dir)
    return [out_dir / name for name in run_folder_ids(out_dir)]


def write_manifest(out_dir: str | Path) -> pd.DataFrame:
    """(Re)write ``OUT_DIR/manifest.csv`` from every run directory; idempotent (atomic replace)."""
    out_dir = Path(out_dir)
    rows = [run_signals(d) for d in run_dirs(out_dir)]
    frame = pd.DataFrame(rows, columns=list(MANIFEST_COLUMNS))
    atomic_write_text(out_dir / MANIFEST_FILE, frame.to_csv(index=False))
    return frame


# -- gradeability ----------------------------------------------------------------------------------------
# Gradeability: whether a run's answer can be graded, and if not, the one reason recorded.
#
# Used by the judge (``judge-skips.csv``) and the scorecard's coverage, so both name the same reason.


# A prompt with no rubric items (a skill-creator eval before its assertions are written) has nothing for the rubric
# judge: its runs are skipped with this reason and still vote in the pairwise preference; the scorecard counts them
# as not graded by design, never as dropped.
NO_RUBRIC = "no rubric items (pairwise preference only)"


def skip_reason(signals: Mapping[str, Any], answer: str | None = None) -> str | None:
    """Why a run cannot be graded (the judge's ``judge-skips.csv`` and the scorecard's coverage), else None.

    Budget-capped answers are truncated; a skilled-arm run (``with-skill``, ``plugin`` and their version arms
    ``with-skill@REF``) without its skill measures nothing, nor does a ``placebo`` run whose placebo is not listed
    (:func:`skillbench.arms.lists_skill`); an errored run has nothing to grade; nor has an empty answer (checked
    only when ``answer`` is given).
    """
    if signals.get("budget_hit") == 1:
        return "budget-capped (truncated)"
    if lists_skill(str(signals.get("condition") or "")) and signals.get("skill_available") != 1:
        return "invalid: skill unavailable"
    exit_code = signals.get("exit_code")
    if exit_code != 0:
        return f"errored (exit {'missing' if exit_code is None else exit_code})"
    if signals.get("is_error"):
        return "errored (API error)"
    if answer is not None and not answer.strip():
        return "no gradeable answer"
    return None
