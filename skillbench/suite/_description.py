"""How a model reads a skill's description: its topic, its "Use when" contexts and its "Do not use for" exclusions.

One reading, shared by whatever needs it: the simulated model's triggering (:mod:`skillbench.sim._triggering`,
whose docstring states the rule), lint-skills' static checks (:mod:`skillbench.quality._static`) and the simulated
skill judge and rewriter. A description is split into sentences and, within each, into cue-delimited stretches
(:func:`segments`: ``topic``, ``pos`` after "Use when"/"Use for"…, ``neg`` after "Do not use for"/"Not for"…),
quoted phrases masked first so a cue inside a quote never counts; :func:`read_description` turns them into word
sets of light stems (:func:`stem`), stop words and the suite's common words (:func:`common_words`) left out.

Whether a description says *when* to use the skill at all — what validate's "no explicit trigger phrase" warning
asks — is :func:`says_when`: authors say it in many ways and languages ("Use when", "Trigger on", "This skill should
be used when", "适用于", "当用户…时使用", "…と言った時", "…할 때"), and where the rule does not read the language it
answers that it cannot tell rather than warn.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

MAX_DESCRIPTION_CHARS = 1024  # the Agent Skills specification's (and the CLI's) limit on a description
_WORD = re.compile(r"[a-z][a-z0-9]{2,}")
_STOP = frozenset(
    "the and for with that this from into when what which your you use using used how can are was were "
    "will would should could have has had not but all any each its our they them then than there their "
    "about also just only more most some such very does did doing get got make made want need like why "
    "who whom whose where here out over under after before between while until because been being one "
    "two three new now way ways work works working someone something anything thing things don doesn "
    "isn aren didn won per via etc yes too much many ask asks asked say says said tell tells "
    "mention mentions without within".split()
)
# Cues are matched on the text with quoted phrases masked, so a quoted "not for" is never a cue.
_CUE = re.compile(
    r"\b(?P<neg>(?:do not|don't|never) use(?: (?:this|it))?(?: skill)?(?= (?:for|when|if|on|to|with)\b)"
    r"|not (?:meant |intended )?for)\b"
    r"|\b(?P<pos>use(?: (?:this|it))?(?: skill)?(?= (?:when|whenever|for|if)\b))",
    re.IGNORECASE,
)
_QUOTE = re.compile(r"(?<!\w)'(.+?)'(?!\w)|\"(.+?)\"|“(.+?)”|‘(.+?)’")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_CLAUSE = re.compile(r"[,;()]|\bor\b", re.IGNORECASE)
_MASK = "\x00{}\x00"


def stem(word: str) -> str:
    """A light stem, so ``fits``/``fitting``/``fitted`` and ``schedule``/``scheduling`` meet."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]
    return word


def content_words(text: str) -> frozenset[str]:
    """The stems of the content words of ``text`` (lower case, stop words out)."""
    return frozenset(stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP)


@dataclass(frozen=True)
class Description:
    """A skill description split the way a model reads it (stems, the suite's common words already out)."""

    topic: frozenset[str]
    contexts: tuple[frozenset[str], ...]
    exclusions: tuple[frozenset[str], ...]


def _phrases(segment: str, quoted: list[str], common: frozenset[str]) -> list[frozenset[str]]:
    """Each quoted phrase of a segment, then each clause of the rest, as word sets (empty ones dropped)."""
    parts = [quoted[int(i)] for i in re.findall(r"\x00(\d+)\x00", segment)]
    parts += _CLAUSE.split(re.sub(r"\x00\d+\x00", ",", segment))
    words = (content_words(p) - common for p in parts)
    return [w for w in words if w]


def segments(description: str) -> tuple[list[tuple[str, str]], list[str]]:
    """``(kind, text)`` per cue-delimited stretch of each sentence (kind: topic, pos or neg), and the quotes.

    Quoted phrases are masked first so that neither a cue nor a sentence break inside a quote counts.
    """
    quoted: list[str] = []

    def mask(m: re.Match[str]) -> str:
        quoted.append(next(g for g in m.groups() if g is not None))
        return _MASK.format(len(quoted) - 1)

    masked = _QUOTE.sub(mask, description)
    out: list[tuple[str, str]] = []
    for sentence in _SENTENCE.split(masked):
        kind, start = "topic", 0
        for cue in _CUE.finditer(sentence):
            out.append((kind, sentence[start:cue.start()]))
            kind, start = ("neg" if cue.group("neg") else "pos"), cue.end()
        out.append((kind, sentence[start:]))
    return out, quoted


def read_description(name: str, description: str, common: frozenset[str] = frozenset()) -> Description:
    """Split ``description`` into topic, contexts and exclusions (module docstring)."""
    parts, quoted = segments(description)
    contexts: list[frozenset[str]] = []
    exclusions: list[frozenset[str]] = []
    topic = set(content_words(name.replace("-", " ")))
    for kind, text in parts:
        if kind == "neg":
            exclusions += _phrases(text, quoted, common)
            continue
        if kind == "pos":
            contexts += _phrases(text, quoted, common)
        topic |= content_words(re.sub(r"\x00(\d+)\x00", lambda m: " " + quoted[int(m.group(1))] + " ", text))
    return Description(frozenset(topic) - common, tuple(contexts), tuple(exclusions))


def common_words(skills: Iterable[tuple[str, str]]) -> frozenset[str]:
    """Words in more than half of the ``(name, description)`` pairs' topics (none with fewer than three skills)."""
    docs = [read_description(n, d).topic for n, d in skills]
    counts: dict[str, int] = {}
    for doc in docs:
        for w in doc:
            counts[w] = counts.get(w, 0) + 1
    return frozenset(w for w, n in counts.items() if len(docs) >= 3 and n > len(docs) / 2)


# How descriptions say when to use a skill, per language this rule reads. English: "Use when/for/if/any time…",
# "should be used when", "Trigger on/when…", "TRIGGER:", "Invoke for…", "whenever", "when the user…" (a bare
# "when to …" is content: "how and when to kill a project"). Chinese: 当…时, 适用于, 适合, 触发, 场景, …时使用/加载.
# Japanese: …時, …場合, トリガー. Korean: …때, 경우. Spanish, French, German, Portuguese, Italian, Russian: their
# "when" words and "use it for/when".
_WHEN_CUES = {
    "en": re.compile(
        r"\b(?:use|used|using|invoke|invoked|activate|activated|trigger(?:s|ed)?|load|loaded|fire|fires|apply|"
        r"applies|consult|run)(?: (?:this|it|me))?(?: skill)?(?: (?:only|also|proactively|automatically))?"
        r" (?:when|whenever|for|if|on|upon|after|before|any ?time|in any|to (?:handle|help|answer))\b"
        r"|\btrigger(?:s|ed)?\s*(?:on|when|words?|phrases?|keywords?)?\s*[:：—–-]"
        r"|\bwhen(?!\s+to\b)|\bwhenever\b|\bany ?time\b|\bif (?:the )?(?:user|you|someone)\b"
        r"|\b(?:applies|applicable|suitable|ideal|meant|intended|designed) (?:to|for)\b"
        r"|\bfor (?:requests|tasks|questions|prompts|queries) (?:about|like|that|involving|on|to)\b",
        re.IGNORECASE),
    # 当…时 but not 适当/相当/当前 (appropriate, quite, current), nor 时 of 时间/实时-like words
    "zh": re.compile(r"(?<![适相应])当(?![前中然地])[^。；;]{0,80}?时(?![间代区序长刻期效])|的时候|之时"
                     r"|时(?:使用|调用|触发|加载|启用|激活)|适用于|适用场景|适合|触发|使用场景|场景[:：]"
                     r"|(?:用户|使用者)(?:提到|说|要求|需要|想要|询问|提出)|加载本|如果用户"),
    "ja": re.compile(r"時[にはの、]|ときに|とき[、は]|場合|トリガー|使用する|使って"),
    "ko": re.compile(r"때|경우|사용하세요|트리거"),
    "es": re.compile(r"\b(?:cuando|siempre que|úsal[oa]|usar? (?:est[ae] )?(?:skill|habilidad)?\s*(?:para|cuando))\b",
                     re.IGNORECASE),
    "fr": re.compile(r"\b(?:quand|lorsque|lorsqu|dès que|utilise[rz]? (?:cette )?(?:compétence )?(?:pour|quand))",
                     re.IGNORECASE),
    "de": re.compile(r"\b(?:wenn|sobald|verwende(?:n)?|nutze(?:n)?|einsetzen) ", re.IGNORECASE),
    "pt": re.compile(r"\b(?:quando|sempre que|use (?:para|quando)|usar (?:para|quando))\b", re.IGNORECASE),
    "it": re.compile(r"\b(?:quando|ogni volta che|usa(?:re)? (?:per|quando))\b", re.IGNORECASE),
    "ru": re.compile(r"(?:когда|если пользователь|используй|применяй)", re.IGNORECASE),
}
# Function words that say a Latin-script text is in a language whose cues the rule knows.
_LATIN_WORDS = {
    "en": {"the", "and", "for", "with", "to", "of", "or", "a", "an", "in", "on", "is", "your", "from"},
    "es": {"el", "la", "los", "las", "para", "con", "que", "una", "del", "por"},
    "fr": {"le", "la", "les", "des", "pour", "avec", "une", "du", "et", "est"},
    "de": {"der", "die", "das", "und", "für", "mit", "ein", "eine", "zu", "von"},
    "pt": {"o", "os", "as", "para", "com", "uma", "do", "da", "que", "em"},
    "it": {"il", "lo", "gli", "per", "con", "una", "di", "che", "della", "e"},
}
# Function words of Latin-script languages whose cues the rule does not know (Dutch, the Scandinavian languages,
# Polish, Czech, Turkish, Indonesian): a description in one of them gets no verdict.
_OTHER_LATIN_WORDS = {"een", "het", "van", "voor", "och", "för", "og", "af", "til", "jest", "dla", "się", "oraz",
                      "pro", "který", "bir", "için", "ile", "yang", "untuk", "dengan", "dan"}
_SCRIPTS = {"LATIN": "latin", "CJK": "zh", "HIRAGANA": "ja", "KATAKANA": "ja", "HANGUL": "ko", "CYRILLIC": "ru"}


def _scripts(text: str) -> dict[str, int]:
    """Letters per writing system (``latin``, ``zh``, ``ja``, ``ko``, ``ru``, or the Unicode name's first word)."""
    counts: dict[str, int] = {}
    for ch in text:
        if ch.isalpha():
            first = unicodedata.name(ch, "UNKNOWN").split()[0]
            counts[_SCRIPTS.get(first, first)] = counts.get(_SCRIPTS.get(first, first), 0) + 1
    return counts


def says_when(description: str) -> bool | None:
    """True when the description says when to use the skill, False when — written in languages this rule reads —
    it does not, None when it cannot tell (a script or language without cues here, e.g. Arabic or Dutch).

    A cue in any language counts (a Chinese description with an English "Use when" says when). Without one, every
    writing system holding a fifth of the letters must be one the rule reads, and Latin text must be in a language
    whose cues are known (its function words say so; plain ASCII without any is read as English), before the
    answer is "no".
    """
    text = " ".join(description.split())
    if any(cue.search(text) for cue in _WHEN_CUES.values()):
        return True
    counts = _scripts(text)
    letters = sum(counts.values())
    if not letters:
        return None
    major = {s for s, n in counts.items() if n * 5 >= letters}
    if major - {"latin", "zh", "ja", "ko", "ru"}:
        return None
    if "latin" in major:
        words = set(re.findall(r"[^\W\d_]+", text.lower()))
        if words & _OTHER_LATIN_WORDS and not words & _LATIN_WORDS["en"]:
            return None
        # no function word of a known language: a short keyword-style description, read as English when plain ASCII
        if not any(words & known for known in _LATIN_WORDS.values()) and not text.isascii():
            return None
    return False


__all__ = ["MAX_DESCRIPTION_CHARS", "Description", "common_words", "content_words", "read_description", "says_when",
           "segments", "stem"]
