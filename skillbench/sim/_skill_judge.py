"""The simulated skill-quality judge: scores a ``record_skill_quality`` request from the SKILL.md text it carries.

Contract: :func:`respond` reads only the request (:func:`skillbench.quality._anchored.parse_request`: the documents,
the category's target, the dimensions sent) and the requested judge model's profile; it never sees the suite.
Each dimension's **honest score** is an anchor decided by observable features of the documents:

* **triggering accuracy** — the hub's description, split by the simulated model's reading rule
  (:func:`skillbench.suite._description.read_description`): no context → 0 (0.25 when the description has at least
  12 words: a topic sentence); 1–2 contexts → 0.5; 3 or more → 0.75; 3 or more and at least one exclusion → 1.
  Evidence: the description's first "Use when" sentence (else its first sentence).
* **orchestration fitness** — four contract features, each a line matching its pattern in any document: inputs
  (``input``, ``given``, ``expects``, ``requires``, ``prerequisite``), ordered steps (a numbered list line),
  the output (``output``, ``return``, ``report``, ``produce``, ``deliverable``), verification (``verify``,
  ``confirm``, ``check that``, ``done when``); score = features / 4, one anchor lower when a line delegates
  (``orchestrat…``, ``delegat…``, ``sub-agent``, ``spawn``). Evidence: the first feature's line.
* **output quality** — four features: a code fence, an example (``example``, ``e.g.``), a table row (a line
  starting with ``|``), an output format (a heading naming a format, template, report or output); score =
  features / 4. Evidence: the first feature's line (a fence's first code line).
* **scope calibration** — the documents' total lines against the request's target ``lo–hi``: inside → 1 (0.75
  when over 80 % of ``hi`` and no sub-skill shares the load); else by the relative distance outside the range
  (``lo − n`` over ``lo``, or ``n − hi`` over ``hi``): ≤ 25 % → 0.75, ≤ 50 % → 0.5, ≤ 100 % → 0.25, beyond → 0.
  Evidence: the hub's first heading (else its first body line).

**Noise**, so independent samples disagree as real judges do: per (documents, dimension, sample) the score moves
one anchor (up or down with equal chance, clamped to [0, 1]) with probability ``min(0.5, 3 × flip_rate)`` of the
judge profile (0.09 for the default judge; a profile with ``flip_rate: 0`` is exact). A quote is fabricated
(a word inserted, :func:`skillbench.sim._judge.fabricate`) with the profile's ``fabricated_quote_rate``, drawn per
(documents, dimension, sample, attempt, ask) so a re-ask draws afresh. Every other quote is a verbatim passage of
a document sent. A request that does not follow the protocol is answered with an empty tool input (the client's
validation then refuses it and re-asks once).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from skillbench.judge import ProtocolError
from skillbench.quality import ANCHORS, SKILL_QUALITY_TOOL, RequestView, parse_request
from skillbench.sim import _draws as draws
from skillbench.sim._agent import Reply
from skillbench.sim._judge import fabricate
from skillbench.suite import FRONTMATTER, read_description
from skillbench.wire import ATTEMPT_HEADER, RUN_ID_HEADER, SAMPLE_HEADER

NOISE_PER_FLIP = 3.0
MAX_NOISE = 0.5
MAX_QUOTE = 160
_INPUT = re.compile(r"\b(inputs?|given|expects?|requires?|prerequisites?)\b", re.I)
_STEP = re.compile(r"^\s*\d+[.)]\s+\S")
_OUTPUT = re.compile(r"\b(outputs?|returns?|report(?:s|ing)?|produces?|deliverables?)\b", re.I)
_VERIFY = re.compile(r"\b(verify|verif(?:y|ies|ied|ication)|confirm|check that|done when)\b", re.I)
_DELEGATE = re.compile(r"\b(orchestrat\w*|delegat\w*|sub-?agents?|spawn\w*)\b", re.I)
_EXAMPLE = re.compile(r"\b(examples?|e\.g\.)", re.I)
_FORMAT_HEADING = re.compile(r"^#{1,6}\s.*\b(format|template|report\w*|outputs?)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_USE_WHEN = re.compile(r"\buse (?:it |this(?: skill)? )?(?:when|whenever|for|if)\b", re.I)


def _body_lines(text: str) -> list[str]:
    """The non-empty lines of a document after its frontmatter, stripped."""
    match = FRONTMATTER.match(text)
    body = text[match.end():] if match else text
    return [line.strip() for line in body.splitlines() if line.strip()]


def _clip(text: str) -> str:
    """A verbatim prefix of ``text`` of at most :data:`MAX_QUOTE` characters, cut at a space."""
    text = text.strip()
    if len(text) <= MAX_QUOTE:
        return text
    cut = text.rfind(" ", 0, MAX_QUOTE)
    return text[: cut if cut > 20 else MAX_QUOTE]


def _description(view: RequestView) -> tuple[str, str]:
    """The hub's name and description from its frontmatter (empty when it has none)."""
    from skillbench.quality import frontmatter

    meta = frontmatter(view.docs[0][1])
    return str(meta.get("name") or view.family), str(meta.get("description") or "")


def triggering(view: RequestView) -> tuple[float, str]:
    name, desc = _description(view)
    read = read_description(name, desc)
    n, k = len(read.contexts), len(read.exclusions)
    score = 0.0 if n == 0 else 0.5 if n < 3 else (1.0 if k else 0.75)
    if n == 0 and len(desc.split()) >= 12:
        score = 0.25
    sentences = _SENTENCE.split(desc) if desc else []
    quote = next((s for s in sentences if _USE_WHEN.search(s)), sentences[0] if sentences else "")
    return score, _clip(quote) or _first_line(view)


def _first_line(view: RequestView) -> str:
    for _, text in view.docs:
        if lines := _body_lines(text):
            return _clip(next((ln for ln in lines if ln.startswith("#")), lines[0]))
    return _clip(view.docs[0][1].splitlines()[0] if view.docs[0][1] else "")


def _features(view: RequestView, tests: list[Any]) -> list[str]:
    """The first line of the documents satisfying each test, in the tests' order ("" when none does)."""
    lines = [ln for _, text in view.docs for ln in _body_lines(text)]
    return [next((ln for ln in lines if test(ln)), "") for test in tests]


def orchestration(view: RequestView) -> tuple[float, str]:
    found = _features(view, [_INPUT.search, _STEP.match, _OUTPUT.search, _VERIFY.search])
    score = sum(bool(f) for f in found) / 4
    if _features(view, [_DELEGATE.search])[0]:
        score = max(0.0, score - 0.25)
    return score, _clip(next((f for f in found if f), "")) or _first_line(view)


def output_quality(view: RequestView) -> tuple[float, str]:
    fence_code = ""
    for _, text in view.docs:
        if (m := re.search(r"^(```|~~~)[^\n]*\n\s*(\S[^\n]*)", text, re.M)) is not None:
            fence_code = m.group(2)
            break
    found = [fence_code, *_features(view, [_EXAMPLE.search, lambda ln: ln.startswith("|"), _FORMAT_HEADING.match])]
    return sum(bool(f) for f in found) / 4, _clip(next((f for f in found if f), "")) or _first_line(view)


def scope(view: RequestView) -> tuple[float, str]:
    lo, hi = view.target
    n = sum(len(text.splitlines()) for _, text in view.docs)
    if lo <= n <= hi:
        score = 0.75 if n > 0.8 * hi and len(view.docs) == 1 else 1.0
    else:
        off = (lo - n) / lo if n < lo else (n - hi) / hi
        score = 0.75 if off <= 0.25 else 0.5 if off <= 0.5 else 0.25 if off <= 1.0 else 0.0
    return score, _first_line(view)


RULES = {"triggering_accuracy": triggering, "orchestration_fitness": orchestration,
         "output_quality": output_quality, "scope_calibration": scope}


def honest_scores(view: RequestView) -> dict[str, tuple[float, str]]:
    """Each dimension sent: its honest anchor and a verbatim quote (before noise)."""
    return {d: RULES[d](view) for d in view.dimensions if d in RULES}


def _noisy(score: float, u: float, up: float, noise: float) -> float:
    if u >= noise:
        return score
    i = ANCHORS.index(score) + (1 if up < 0.5 else -1)
    return ANCHORS[min(max(i, 0), len(ANCHORS) - 1)]


def respond(sim: Any, body: dict[str, Any], headers: Mapping[str, str]) -> Reply:
    """The ``record_skill_quality`` reply to one request (the module docstring's rule)."""
    h = {k.lower(): v for k, v in headers.items()}
    sample = _int(h.get(SAMPLE_HEADER.lower()), 1)
    attempt = _int(h.get(ATTEMPT_HEADER.lower()), 1)
    messages = body.get("messages") or []
    content = messages[0].get("content", "") if messages and isinstance(messages[0], dict) else ""
    if isinstance(content, list):
        content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    digest = hashlib.blake2b(json.dumps(messages, sort_keys=True).encode(), digest_size=8).hexdigest()
    ask = sim.next_count("skill-judge", h.get(RUN_ID_HEADER.lower(), ""), sample, attempt, digest)
    prof = sim.profiles.judge(str(body.get("model") or ""))
    try:
        view = parse_request(str(content))
    except ProtocolError:
        data: dict[str, Any] = {}
    else:
        docs = hashlib.blake2b("\x00".join(t for _, t in view.docs).encode(), digest_size=8).hexdigest()
        noise = min(MAX_NOISE, NOISE_PER_FLIP * prof.flip_rate)
        scores = []
        for dim, (score, quote) in honest_scores(view).items():
            score = _noisy(score, draws.uniform(sim.seed, "skill-judge", "noise", docs, dim, sample),
                           draws.uniform(sim.seed, "skill-judge", "direction", docs, dim, sample), noise)
            if draws.uniform(sim.seed, "skill-judge", "fabricate", docs, dim, sample, attempt,
                             ask) < prof.fabricated_quote_rate:
                quote = fabricate(quote)
            scores.append({"dimension": dim, "score": score, "evidence": quote,
                           "reason": f"{dim.replace('_', ' ')} read from the skill's text: anchor {score:g}."})
        data = {"scores": scores}
    tool_id = "toolu_" + draws.short_id(sim.seed, "skill-judge", digest, sample, attempt, ask)
    return Reply([{"type": "tool_use", "id": tool_id, "name": SKILL_QUALITY_TOOL, "input": data}], "tool_use")


def _int(value: str | None, default: int) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default
