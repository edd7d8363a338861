"""The simulated rewriter of optimize-description: a documented rule over the request's train failures, no canned text.

Contract of :func:`rewrite` (what :func:`respond` answers a request forcing ``propose_description`` with). It reads
only the request's payload (:func:`skillbench.quality.read_rewrite_payload`: the current description, the missed
should-trigger queries, the false triggers, ``max_chars``) — never the suite, the simulation's truth, or any query
the request does not hold — and is deterministic (no draw: the same request gives the same description).

Words are :mod:`skillbench.sim._triggering`'s (lower-case words of three or more letters, its stop words out,
compared by stem), so the rewrite speaks the language the simulated model reads descriptions in.

1. **Contexts** from the missed queries: each stem scored by how many missed queries hold it (ties: first seen
   first); stems that also occur in a false trigger, or in the current description's exclusions, are left out. The
   best :data:`MAX_CONTEXT_WORDS` are paired in rank order into two-word quoted phrases (each word's first surface
   form), appended as ``Use when: 'w1 w2', 'w3 w4', ….`` — a model matches a context on part of its words, so a
   pair reaches the missed queries and their neighbours.
2. **Exclusions** from the false triggers: per false trigger (in order), its first three words whose stems are in
   no missed query and not in the current description's positive part, as one quoted phrase, at most
   :data:`MAX_EXCLUSIONS`, appended as ``Do not use for: 'x y z', ….`` — three words, so an exclusion needs most of
   them and stays narrow.
3. **Length**: the current description is kept whole, then the new sentences; while the result is longer than
   ``max_chars``, the last phrase is dropped (exclusions first, then contexts). No failures, or no room: the
   current description is returned unchanged.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from skillbench.quality import DESCRIPTION_TOOL, read_rewrite_payload
from skillbench.sim import _draws as draws, _triggering as triggering
from skillbench.sim._agent import Reply
from skillbench.suite import MAX_DESCRIPTION_CHARS

MAX_CONTEXT_WORDS = 12
MAX_EXCLUSIONS = 4
_WORD = re.compile(r"[a-z][a-z0-9]{2,}")


def _words(text: str) -> list[tuple[str, str]]:
    """``(stem, surface)`` of the content words of ``text``, in order (triggering's words and stop list)."""
    return [(triggering.stem(w), w) for w in _WORD.findall(text.lower()) if triggering.content_words(w)]


def _contexts(missed: Sequence[str], banned: set[str]) -> list[str]:
    score: dict[str, int] = {}
    surface: dict[str, str] = {}
    for query in missed:
        for st, word in dict.fromkeys(_words(query)):
            if st in banned:
                continue
            surface.setdefault(st, word)
        for st in {s for s, _ in _words(query)} - banned:
            score[st] = score.get(st, 0) + 1
    order = list(surface)
    ranked = sorted(order, key=lambda s: (-score[s], order.index(s)))[:MAX_CONTEXT_WORDS]
    return [" ".join(surface[s] for s in ranked[i:i + 2]) for i in range(0, len(ranked), 2)]


def _exclusions(false_triggers: Sequence[str], missed_stems: set[str], positive: set[str]) -> list[str]:
    out: list[str] = []
    for query in false_triggers:
        picked: list[str] = []
        for st, word in _words(query):
            if st not in missed_stems and st not in positive and word not in picked:
                picked.append(word)
            if len(picked) == 3:
                break
        phrase = " ".join(picked)
        if picked and phrase not in out:
            out.append(phrase)
        if len(out) == MAX_EXCLUSIONS:
            break
    return out


def _compose(base: str, contexts: list[str], exclusions: list[str]) -> str:
    text = base.rstrip()
    if text and text[-1] not in ".!?":
        text += "."
    if contexts:
        text += " Use when: " + ", ".join(f"'{c}'" for c in contexts) + "."
    if exclusions:
        text += " Do not use for: " + ", ".join(f"'{x}'" for x in exclusions) + "."
    return text


def rewrite(payload: Mapping[str, Any]) -> str:
    """The rewritten description of one request's payload (module docstring)."""
    base = str(payload.get("current_description") or "").strip()
    missed = [str(q) for q in payload.get("missed") or []]
    false_triggers = [str(q) for q in payload.get("false_triggers") or []]
    max_chars = int(payload.get("max_chars") or MAX_DESCRIPTION_CHARS)
    read = triggering.read_description(str(payload.get("skill") or ""), base)
    excluded = set().union(*read.exclusions) if read.exclusions else set()
    false_stems = {s for q in false_triggers for s, _ in _words(q)}
    missed_stems = {s for q in missed for s, _ in _words(q)}
    contexts = _contexts(missed, false_stems | excluded)
    exclusions = _exclusions(false_triggers, missed_stems, set(read.topic))
    text = _compose(base, contexts, exclusions)
    while len(text) > max_chars and (contexts or exclusions):
        (exclusions if exclusions else contexts).pop()
        text = _compose(base, contexts, exclusions)
    return text if len(text) <= max_chars and (contexts or exclusions) else base


def respond(sim: Any, body: dict[str, Any], headers: Mapping[str, str]) -> Reply:
    """The forced ``propose_description`` call answering a rewrite request."""
    try:
        payload = read_rewrite_payload(body)
    except (ValueError, json.JSONDecodeError):
        payload = {}
    digest = hashlib.blake2b(json.dumps(body.get("messages"), sort_keys=True).encode(), digest_size=8).hexdigest()
    tool_id = "toolu_" + draws.short_id(getattr(sim, "seed", 0), "rewrite", digest)
    block = {"type": "tool_use", "id": tool_id, "name": DESCRIPTION_TOOL,
             "input": {"description": rewrite(payload) if payload else ""}}
    return Reply([block], "tool_use")


__all__ = ["rewrite", "respond"]
