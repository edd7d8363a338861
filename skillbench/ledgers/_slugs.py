"""One slug rule: run ids, condition labels and stimulus ids as safe folder names, and short ids mapped back.

A name becomes a folder name (``RUN_DIR/<run_id>/``), part of a run id, a request header and a ledger cell, so
every command maps names through :func:`slug`:

* a name that is already safe — letters, digits, ``-``, ``_`` and ``.``, starting with a letter or a digit
  (a folder starting with ``.`` or ``_`` is not a run folder), without ``..``, at most :data:`MAX_SLUG`
  characters — is its own slug, byte for byte (every run id of qdrant's weeks
  and of the committed tiny weeks is such a name);
* any other name (a space, ``@``, ``/``, a dotnet stimulus name, a version condition such as
  ``with-skill@origin/main``) has every run of other characters replaced by ``-``, is cut to fit, and gets
  ``-`` and the first :data:`HASH_CHARS` hex digits of the SHA-256 of the original name appended. The suffix
  is always added to a changed name, so two names that clean up alike (``a b`` and ``a/b``) still differ, and
  a changed name never equals a name that was already safe — without looking at the other names of the week.

An id that must be short (an API ``custom_id``: ``[A-Za-z0-9_-]{1,64}``) is :func:`short_id`, a hash of the
name. Every changed name and every short id is recorded in :data:`SLUGS_FILE` in the run directory
(:func:`record_slugs`), so :func:`original_name` maps it back; a week of ordinary names has no such file.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from skillbench.ledgers._atomic import atomic_write_json
from skillbench.ledgers._files import SLUGS_FILE

MAX_SLUG = 200  # folder names are at most 255 bytes; leave room for ".tmp-" and the _aside/ suffix
HASH_CHARS = 8
SHORT_ID_CHARS = 32  # an API custom_id allows 64; 128 bits of SHA-256 never collide within a week
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._-]+")
_FILE_LOCK = threading.Lock()  # one read-modify-write of slugs.json at a time within the process


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()


def is_safe(name: str) -> bool:
    """True when ``name`` is its own slug (safe as a folder name on every platform skillbench runs on)."""
    return bool(_SAFE.match(name)) and ".." not in name and len(name) <= MAX_SLUG


def slug(name: str) -> str:
    """The folder-safe form of ``name`` (``name`` itself when it is already safe; see the module docstring)."""
    if is_safe(name):
        return name
    base = _UNSAFE_RUN.sub("-", name)
    while ".." in base:
        base = base.replace("..", ".")
    base = base.lstrip("._-") or "x"
    base = base[: MAX_SLUG - HASH_CHARS - 1].rstrip(".-") or "x"
    return f"{base}-{_digest(name)[:HASH_CHARS]}"


def short_id(name: str) -> str:
    """A short, opaque id of ``name`` (``[0-9a-f]{32}``; fits an API ``custom_id``), mapped back through
    :data:`SLUGS_FILE` once recorded with :func:`record_slugs`."""
    return _digest(name)[:SHORT_ID_CHARS]


def read_slugs(run_dir: str | Path) -> dict[str, dict[str, str]]:
    """``slugs.json`` of a run directory: ``{"slugs": {slug: name}, "short_ids": {id: name}}`` (empty when absent).

    Raises:
        ValueError: the file exists but is not the mapping this module writes (names the file).
    """
    path = Path(run_dir) / SLUGS_FILE
    if not path.is_file():
        return {"slugs": {}, "short_ids": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not JSON ({str(exc).splitlines()[0]}) — restore it from the run folders' "
                         "metadata.json, or delete it and rerun generate") from exc
    if not isinstance(data, dict) or not all(isinstance(data.get(k, {}), dict) for k in ("slugs", "short_ids")):
        raise ValueError(f"{path}: expected {{\"slugs\": {{…}}, \"short_ids\": {{…}}}}")
    return {"slugs": dict(data.get("slugs", {})), "short_ids": dict(data.get("short_ids", {}))}


def record_slugs(run_dir: str | Path, names: Iterable[str] = (), *, short: Iterable[str] = ()) -> dict[str, str]:
    """Record the slug of every changed name in ``names`` and the short id of every name in ``short``.

    Writes ``slugs.json`` (atomically) only when there is something new to record, so a week of ordinary names
    never gets the file. Call it with the run directory's lock held (a pass owns its run directory).

    Returns:
        The slug of each name in ``names``.

    Raises:
        ValueError: a slug or short id already maps to another name (two names would share a folder).
    """
    names, short = list(names), list(short)
    mapped = {name: slug(name) for name in names}
    changed = {s: n for n, s in mapped.items() if s != n}
    ids = {short_id(n): n for n in short}
    if not changed and not ids:
        return mapped
    path = Path(run_dir) / SLUGS_FILE
    with _FILE_LOCK:
        data = read_slugs(run_dir)
        new = False
        for table, entries in (("slugs", changed), ("short_ids", ids)):
            for key, name in entries.items():
                known = data[table].get(key)
                if known is not None and known != name:
                    raise ValueError(f"{path}: {key!r} already names {known!r}, not {name!r} — two names would "
                                     "share one id; rename one of them")
                new = new or known is None
                data[table][key] = name
        if new:
            atomic_write_json(path, {"slugs": dict(sorted(data["slugs"].items())),
                                     "short_ids": dict(sorted(data["short_ids"].items()))})
    return mapped


def original_name(run_dir: str | Path, key: str, mapping: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """The name a slug or short id stands for (``key`` itself when it was never changed)."""
    data = mapping if mapping is not None else read_slugs(run_dir)
    return data.get("slugs", {}).get(key) or data.get("short_ids", {}).get(key) or key
