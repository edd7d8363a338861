"""The simulated near-miss generator of optimize-description: a documented rule over the request, no canned text.

Contract of :func:`near_misses` (what :func:`respond` answers a request forcing ``propose_near_misses`` with). It
reads only the request's payload (:func:`skillbench.quality.read_near_miss_payload`: the family's name and
description, the other families' names and descriptions, ``count``, ``max_chars``) — never the suite, the
simulation's truth or any query of the trigger set (the request holds none) — and is deterministic (no draw: the
same request gives the same queries).

Words are :mod:`skillbench.sim._triggering`'s (lower-case words of three or more letters, its stop words out,
compared by stem), so the queries speak the language the simulated model reads descriptions in.

1. **Common words**: :func:`~skillbench.sim._triggering.common_words` over the family and the other skills (words
   in most descriptions say nothing about which skill fits) are never used as vocabulary.
2. **The family's vocabulary**: the words of the family's description — its quoted phrases first (the words its
   users write), then the whole text — in order of first appearance (each stem once, its first surface form),
   whose stem is in the description's topic (its positive part), not common and in no other skill's topic; when
   that leaves fewer than two words, the topic's non-common words whatever the other skills say. No vocabulary
   at all: no queries.
3. **The other skills' intents**, per other skill in request order: the quoted phrases of its description (the
   phrasings its users write), less those that are one of its exclusions, and less those with half or more of
   their stems in the family's topic (a phrase the family could claim is no near-miss); with none left, "Can you
   help with <its name, hyphens as spaces>".
4. **Query i** (i = 0, 1, …): the intent ``⌊i / m⌋ mod len`` of other skill ``i mod m`` (m other skills, so the
   queries go round the other skills first) and vocabulary words ``2i`` and ``2i + 1`` (mod the vocabulary's
   length), as ``"<Intent>? It has <w1> and <w2> in it too, but that is not what I ask about."`` (one word
   when both are the same) — the family's words are present, its task is not asked for, and the frame's own
   words are all stop words (:func:`~skillbench.sim._triggering.content_words` reads none of them), so a rewrite
   can only learn the intent and the family's words from a generated near-miss, never the template. A query
   longer than ``max_chars`` or equal to an earlier one is skipped; the rule stops at ``count`` queries or after
   ``4 × count`` combinations.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from skillbench.quality import MAX_QUERY_CHARS, NEAR_MISS_TOOL, read_near_miss_payload
from skillbench.sim import _draws as draws, _triggering as triggering
from skillbench.sim._agent import Reply

_WORD = re.compile(r"[a-z][a-z0-9]{2,}")
_QUOTED = re.compile(r"(?<!\w)'(.+?)'(?!\w)|\"(.+?)\"|“(.+?)”|‘(.+?)’")
TEMPLATE = "{intent}? It has {words} in it too, but that is not what I ask about."


def _vocabulary(description: str, topic: frozenset[str], others: frozenset[str], common: frozenset[str]
                ) -> list[str]:
    def words(allowed: frozenset[str]) -> list[str]:
        seen: dict[str, str] = {}
        quoted = " ".join(next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(description))
        for word in _WORD.findall(f"{quoted} {description}".lower()):
            st = triggering.stem(word)
            if st in allowed and triggering.content_words(word):
                seen.setdefault(st, word)
        return list(seen.values())

    distinct = words(topic - common - others)
    return distinct if len(distinct) >= 2 else words(topic - common)


def _intents(name: str, description: str, family_topic: frozenset[str]) -> list[str]:
    read = triggering.read_description(name, description)
    out: list[str] = []
    for match in _QUOTED.finditer(description):
        phrase = next(g for g in match.groups() if g is not None).strip().rstrip("?.!").strip()
        stems = triggering.content_words(phrase)
        if not stems or stems in read.exclusions or len(stems & family_topic) * 2 >= len(stems):
            continue
        if phrase not in out:
            out.append(phrase)
    return out or [f"Can you help with {name.replace('-', ' ')}"]


def near_misses(payload: Mapping[str, Any]) -> list[str]:
    """The near-miss queries of one request's payload (module docstring)."""
    name = str(payload.get("skill") or "")
    description = str(payload.get("description") or "")
    others = [(str(o.get("name") or ""), str(o.get("description") or ""))
              for o in payload.get("other_skills") or [] if isinstance(o, Mapping)]
    count = int(payload.get("count") or 0)
    max_chars = int(payload.get("max_chars") or MAX_QUERY_CHARS)
    if count <= 0 or not others:
        return []
    common = triggering.common_words([(name, description), *others])
    topic = triggering.read_description(name, description).topic
    other_topics = frozenset().union(*(triggering.read_description(n, d).topic for n, d in others))
    vocab = _vocabulary(description, topic, other_topics, common)
    if not vocab:
        return []
    intents = [_intents(n, d, topic - common) for n, d in others]
    out: list[str] = []
    for i in range(4 * count):
        pool = intents[i % len(others)]
        intent = pool[(i // len(others)) % len(pool)]
        words = dict.fromkeys([vocab[(2 * i) % len(vocab)], vocab[(2 * i + 1) % len(vocab)]])
        query = TEMPLATE.format(intent=intent[:1].upper() + intent[1:], words=" and ".join(words))
        if len(query) <= max_chars and query not in out:
            out.append(query)
        if len(out) == count:
            break
    return out


def respond(sim: Any, body: dict[str, Any], headers: Mapping[str, str]) -> Reply:
    """The forced ``propose_near_misses`` call answering a near-miss request."""
    try:
        payload = read_near_miss_payload(body)
    except ValueError:
        payload = {}
    digest = hashlib.blake2b(json.dumps(body.get("messages"), sort_keys=True).encode(), digest_size=8).hexdigest()
    tool_id = "toolu_" + draws.short_id(getattr(sim, "seed", 0), "near_miss", digest)
    block = {"type": "tool_use", "id": tool_id, "name": NEAR_MISS_TOOL,
             "input": {"queries": near_misses(payload) if payload else []}}
    return Reply([block], "tool_use")


__all__ = ["TEMPLATE", "near_misses", "respond"]
