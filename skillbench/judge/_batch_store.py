"""``RUN_DIR/judge-batches.json``: which Message Batches a judging pass submitted, and what each request was.

A batched pass (``judge --batch``, ``judge-pairs --batch``, ``calibrate --batch``) asks the same questions as a
synchronous one, in rounds (:mod:`skillbench.judge._batch`). Every request gets a ``custom_id``
(:func:`custom_id`: a short hash, ``^[a-zA-Z0-9_-]{1,64}$``) of what defines it — the pass kind, the judge model,
the run (or pair), the sample, the attempt and the request body itself — so rebuilding the same request gives
the same id. The file maps each id to its batch and to what it asks (``run_id``, ``sample``, ``attempt``,
``kind``), and it is written atomically right after a batch is accepted and **before** it is polled: a killed
pass rerun rebuilds the same requests, finds their ids here and polls the same batches, never submitting an
accepted request again. (The one window left is a kill between the API's acceptance and this write, a few
milliseconds: that batch's requests are sent once more, and billed once more.)

Layout::

    {"version": 1,
     "batches": {"msgbatch_…": {"kind": "rubric", "model": "…", "submitted": "…", "requests": 12,
                                "closed": false}},
     "requests": {"sb…": {"batch_id": "msgbatch_…", "kind": "rubric", "run_id": "…", "sample": 1,
                          "attempt": 1}}}

A batch's ``kind`` is its pass (``rubric``, ``pairs``, ``calibration``); a request's ``kind`` says what it asks
(``rubric``, ``pair:ab``/``pair:ba`` — the order —, ``calibration``).

A pass that finishes closes its kind (:meth:`BatchStore.close`): its requests are forgotten (the batch ids stay,
marked ``closed``, as provenance), so the next pass of that kind asks again instead of reading old answers.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillbench.ledgers import JUDGE_BATCHES_FILE, atomic_write_json

STORE_VERSION = 1
CUSTOM_ID_PREFIX = "sb"


class BatchStoreError(ValueError):
    """``judge-batches.json`` cannot be read; the message names the file and the fix."""


def custom_id(kind: str, model: str, run_id: str, sample: int, attempt: int, request: Mapping[str, Any]) -> str:
    """The request's ``custom_id``: ``sb`` and 40 hex digits of what defines the request (stable across reruns)."""
    body = json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)
    key = f"{kind}\x00{model}\x00{run_id}\x00{sample}\x00{attempt}\x00{body}"
    return CUSTOM_ID_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:40]


@dataclass(frozen=True)
class RequestInfo:
    """What one batched request asks, as the store records it."""

    kind: str
    run_id: str
    sample: int
    attempt: int

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "run_id": self.run_id, "sample": self.sample, "attempt": self.attempt}


class BatchStore:
    """The ``judge-batches.json`` of one run directory (thread-safe; every change is one atomic rewrite).

    Raises:
        BatchStoreError: the file exists but is not this layout (one line naming it; nothing is overwritten).
    """

    def __init__(self, run_dir: str | Path):
        self.path = Path(run_dir) / JUDGE_BATCHES_FILE
        self._lock = threading.Lock()
        self._data = self._read()

    def _read(self) -> dict[str, Any]:
        if not self.path.is_file():
            return {"version": STORE_VERSION, "batches": {}, "requests": {}}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise BatchStoreError(f"{self.path}: not readable JSON ({exc}) — it records accepted batches; restore "
                                  "it, or delete it to submit the pending requests again (they may be billed "
                                  "twice)") from exc
        ok = (isinstance(data, dict) and data.get("version") == STORE_VERSION
              and isinstance(data.get("batches"), dict) and isinstance(data.get("requests"), dict))
        if not ok:
            raise BatchStoreError(f"{self.path}: not a judge-batches file of version {STORE_VERSION} (keys "
                                  "version, batches, requests) — restore it, or delete it to submit again")
        return data

    def _save(self) -> None:
        atomic_write_json(self.path, self._data)

    def batch_of(self, cid: str) -> str | None:
        """The batch that accepted request ``cid`` (None: never submitted by an open pass)."""
        with self._lock:
            entry = self._data["requests"].get(cid)
            return entry["batch_id"] if entry else None

    def add_batch(self, batch_id: str, kind: str, model: str, requests: Mapping[str, RequestInfo]) -> None:
        """Record an accepted batch and its requests (the write that must precede polling)."""
        with self._lock:
            self._data["batches"][batch_id] = {
                "kind": kind, "model": model, "requests": len(requests), "closed": False,
                "submitted": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
            for cid, info in requests.items():
                self._data["requests"][cid] = {"batch_id": batch_id, **info.to_json()}
            self._save()

    def note_status(self, batch_id: str, status: str, counts: Mapping[str, int]) -> None:
        """Record a batch's last seen processing status and request counts (provenance; rewritten when changed)."""
        with self._lock:
            entry = self._data["batches"].get(batch_id)
            if entry is None or (entry.get("status"), entry.get("counts")) == (status, dict(counts)):
                return
            entry.update(status=status, counts=dict(counts))
            self._save()

    def open_batches(self, kind: str) -> list[str]:
        """The batch ids of ``kind``'s unfinished pass, in submission order."""
        with self._lock:
            return [b for b, e in self._data["batches"].items() if e["kind"] == kind and not e.get("closed")]

    def close(self, kinds: Iterable[str]) -> list[str]:
        """End the passes of ``kinds``: forget their requests, keep their batch ids marked ``closed``.

        Returns:
            The batch ids closed.
        """
        kinds = set(kinds)
        with self._lock:
            closed = [b for b, e in self._data["batches"].items() if e["kind"] in kinds and not e.get("closed")]
            gone = set(closed)
            stale = [c for c, e in self._data["requests"].items() if e["batch_id"] in gone]
            if not closed and not stale:
                return []
            for b in closed:
                self._data["batches"][b]["closed"] = True
            for c in stale:
                del self._data["requests"][c]
            self._save()
            return closed
