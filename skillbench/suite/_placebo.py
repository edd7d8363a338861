"""The placebo of a skill family: its hub SKILL.md with the real frontmatter over a neutral body of the same length.

The ``placebo`` arm (:mod:`skillbench.arms`) asks whether a skill's *content* helps, or any extra context would:
its runs install, for the prompt's family, a folder that is listed and triggers exactly like the skill and
carries nothing about the skill's topic.

Contract of :func:`placebo_text` (the bytes a placebo installs):

* **Frontmatter**: the real hub SKILL.md's ``---`` block, byte for byte (``name``, ``description`` and any other
  field such as ``allowed-tools``), so the CLI lists it under the same name and description and the model
  decides to load it as it would the skill.
* **Body**: the real body's leading and trailing whitespace kept as they are, and between them neutral text,
  so the body has exactly the real body's UTF-8 byte length. The text is paragraphs of whole sentences drawn
  from :data:`SENTENCES` (original, topic-free sentences about everyday scenes: no instruction, no code, no
  number, no link), one paragraph per line, a blank line between paragraphs; the last sentence is cut where the
  length runs out (a cut that would end on a space ends on ``.``).
* **Deterministic**: which sentences, in which order, is drawn from the SHA-256 of the real SKILL.md's bytes,
  so the same family content always gives the same placebo bytes, and an edited skill gives another placebo.
* **The hub only**: a placebo folder holds ``<family>/SKILL.md`` and nothing else — no sub-skill, no script,
  no reference file. A model that follows a link it remembers from nowhere finds no file.

The one recognisable property (:func:`carries_placebo`): a text carries a placebo when it contains the first
:data:`RECOGNISED_CHARS` characters of one of :data:`SENTENCES`. The simulated endpoint reads it to give a loaded
placebo the profile's ``placebo_gain`` instead of the skill's gain; a body shorter than that many bytes (no real
skill is) is not recognised. Nothing in the placebo names it a placebo, so a real model is not told.

Where a placebo lives (:func:`materialize_placebo`): ``RUN_DIR/_placebo/<family>-<tree hash>/<family>/SKILL.md``,
generated into the run directory, never into the suite, written atomically and reused. The tree hash is
:func:`skillbench.suite._versions.tree_hash` of the placebo folder — the ``skills_tree`` a placebo run records
in ``metadata.json`` and the manifest — so a run's record names the folder it installed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from pathlib import Path

from skillbench.suite._format import FRONTMATTER, SKILL_FILE
from skillbench.suite._versions import tree_hash

RECOGNISED_CHARS = 24  # the opening of a sentence that identifies a placebo's text (every opening is distinct)

# Original sentences about nothing a skill could be about: everyday scenes, no instruction, no technical word,
# no digit. Their words are kept out of the bundled suites' vocabulary (tests/generation/test_placebo.py checks it).
SENTENCES: tuple[str, ...] = (
    "A gull circled slowly above the harbour and drifted out of sight.",
    "The kettle clicked off while a radio hummed somewhere upstairs.",
    "Rain tapped softly against the kitchen panes all afternoon.",
    "A blue umbrella leaned quietly against the porch railing.",
    "The cat stretched, yawned, and curled up again on the rug.",
    "Autumn leaves gathered beside the garden gate in crinkly piles.",
    "A neighbour waved from across the lane, heading to the bakery.",
    "A candle on the mantel flickered calmly through the evening.",
    "Bread was cooling on the sill, and the room smelled of it.",
    "The hills seemed soft and mossy after the rain.",
    "A gentle song drifted down the hall from a neighbour's radio.",
    "The tea had cooled to lukewarm, but nobody seemed bothered.",
    "Clouds piled up over the far ridge and then thinned again.",
    "A dog barked once somewhere far away and then fell quiet.",
    "The lamp threw a warm yellow glow onto the ceiling.",
    "Snow had settled lightly on the roofs overnight.",
    "Market stalls opened one by one as dawn broke over the rooftops.",
    "A breeze carried the scent of mown grass through the hallway.",
    "The river wandered slowly under the mossy stone bridge.",
    "Somebody was humming while sweeping the doorstep.",
    "The pears in the bowl were ripe and faintly golden.",
    "Curtains billowed and sank back as the wind gusted.",
    "Sparrows quarrelled noisily in the hedge by the porch.",
    "The afternoon felt drowsy, mild and unhurried.",
    "A postcard of a lighthouse hung above the desk.",
    "The bus rumbled past, its panes fogged and dripping.",
    "Muddy boots waited neatly beside the doorway.",
    "The orchard was quiet except for the bees.",
    "Moonlight silvered the edge of the pond.",
    "A scarf hung forgotten on the back of a chair.",
    "The baker dusted flour from his hands and smiled.",
    "Far below, the lake lay calm and pale in the dusk.",
    "The garden bench was damp with dew from the night.",
    "A paper kite tugged at its cord above the meadow.",
    "The smell of woodsmoke hung in the chilly evening air.",
    "Boats knocked gently against the wooden pier.",
)
_MEMO: dict[tuple[str, str], Path] = {}  # (placebo root, sha of the source) -> its folder: one build per pass
_MEMO_LOCK = threading.Lock()


def split_skill(text: str) -> tuple[str, str]:
    """A SKILL.md's frontmatter block (its closing ``---`` line included) and its body.

    Raises:
        ValueError: the text has no leading ``---`` frontmatter block.
    """
    match = FRONTMATTER.match(text)
    if not match:
        raise ValueError("no YAML frontmatter (a leading '---' block)")
    return text[: match.end()], text[match.end():]


def _draw(seed: bytes, *key: object) -> int:
    """A deterministic non-negative integer from ``seed`` and ``key`` (SHA-256, stable across Python versions)."""
    data = seed + b"\0" + "\0".join(str(k) for k in key).encode()
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


def neutral_text(n_bytes: int, seed: bytes) -> str:
    """Exactly ``n_bytes`` of ASCII neutral text: paragraphs of :data:`SENTENCES` drawn from ``seed``.

    Never ends on whitespace (a cut that would is closed with ``.``), so the caller's trailing whitespace is the
    only whitespace after the text.
    """
    if n_bytes <= 0:
        return ""
    paragraphs: list[str] = []
    size, prev, j = 0, -1, 0
    while size < n_bytes:
        p = len(paragraphs)
        sentences = []
        for _ in range(3 + _draw(seed, "paragraph", p) % 3):
            pick = _draw(seed, "sentence", j) % len(SENTENCES)
            pick = (pick + 1) % len(SENTENCES) if pick == prev else pick  # never the same sentence twice in a row
            sentences.append(SENTENCES[pick])
            prev, j = pick, j + 1
        paragraphs.append(" ".join(sentences))
        size += len(paragraphs[-1]) + 2
    text = "\n\n".join(paragraphs)[:n_bytes]
    return text[:-1] + "." if text[-1].isspace() else text


def placebo_text(skill_md: str) -> str:
    """The placebo of a hub SKILL.md's text (see the module's contract).

    Raises:
        ValueError: the text has no frontmatter block.
    """
    front, body = split_skill(skill_md)
    core = body.strip()
    lead = body[: len(body) - len(body.lstrip())]
    trail = body[len(lead) + len(core):] if core else ""
    n_core = len(body.encode("utf-8")) - len(lead.encode("utf-8")) - len(trail.encode("utf-8"))
    seed = hashlib.sha256(skill_md.encode("utf-8")).digest()
    return front + lead + neutral_text(n_core, seed) + trail


def carries_placebo(text: str) -> bool:
    """True when ``text`` contains a placebo's neutral text (the opening of one of :data:`SENTENCES`)."""
    return any(s[:RECOGNISED_CHARS] in text for s in SENTENCES)


def materialize_placebo(family_dir: Path, root: Path) -> Path:
    """The placebo folder of a family (named as the family), written under ``root`` on first use and reused.

    Args:
        family_dir: the real family's folder (its ``SKILL.md`` is the hub the placebo mirrors).
        root: where placebos live, ``RUN_DIR/_placebo``.

    Returns:
        ``root/<family>-<tree hash>/<family>``, holding only ``SKILL.md``.

    Raises:
        ValueError: the hub SKILL.md has no frontmatter block.
        OSError: the hub cannot be read or the placebo cannot be written.
    """
    source = (family_dir / SKILL_FILE).read_bytes()
    memo_key = (str(root.resolve()), hashlib.sha256(source).hexdigest())
    with _MEMO_LOCK:
        known = _MEMO.get(memo_key)
    if known is not None and (known / SKILL_FILE).is_file():
        return known
    family = family_dir.name
    root.mkdir(parents=True, exist_ok=True)
    # Built beside its final name and renamed into place: a kill leaves no half a placebo, and two passes (or two
    # worker threads) that build the same placebo write the same bytes.
    tmp = root / f".tmp-{family}-{os.getpid()}-{threading.get_ident()}"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / family).mkdir(parents=True)
    text = placebo_text(source.decode("utf-8"))
    (tmp / family / SKILL_FILE).write_bytes(text.encode("utf-8"))
    dest = root / f"{family}-{tree_hash([tmp / family])}"
    if dest.is_dir():
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        try:
            os.replace(tmp, dest)
        except OSError:  # another thread put the same placebo in place first: the same bytes
            shutil.rmtree(tmp, ignore_errors=True)
    with _MEMO_LOCK:
        _MEMO[memo_key] = dest / family
    return dest / family
