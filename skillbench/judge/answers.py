"""The runs a judge grades: each run's question, rubric and final answer, and the runs it cannot grade.

:func:`select_runs` decides which runs are gradeable: a preference-eligible prompt (dormancy prompts are for
trigger health only) in the no-skill or with-skill arm (the plugin arm on request), with an answer that
:func:`skillbench.signals.skip_reason` accepts. Only ``prompt_text``, ``answer`` and ``items`` of a
:class:`RunAnswer` ever reach a judge; the rest is for the ledger.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbench.judge.protocol import RubricLine
from skillbench.ledgers.files import METADATA_FILE, TEST_PROMPT_FILE, TRANSCRIPT_FILE
from skillbench.signals.gradeability import skip_reason
from skillbench.signals.manifest import run_dirs, run_signals
from skillbench.signals.transcript import read_transcript
from skillbench.suite.format import TestPrompt
from skillbench.vocab import LIFT_ARMS, PLUGIN


@dataclass(frozen=True)
class RunAnswer:
    """One run as the judge needs it: identity, question, rubric and final answer.

    Only ``prompt_text``, ``answer`` and ``items`` ever reach the judge; the rest is for the ledger.
    """

    run_id: str
    prompt: str
    skill: str  # the skill family
    model: str
    condition: str
    rep: int
    dormancy: bool
    prompt_text: str
    items: tuple[RubricLine, ...]  # (index in the prompt file, type, text as written)
    answer: str
    rubric_sha: str
    folder: Path

    def lines(self, indexes: Iterable[int] | None = None) -> list[RubricLine]:
        """The rubric lines, all or those at ``indexes`` (file order)."""
        if indexes is None:
            return list(self.items)
        wanted = set(indexes)
        return [line for line in self.items if line[0] in wanted]

    def item_type(self, index: int) -> str:
        return self.items[index][1]


@dataclass(frozen=True)
class Skip:
    """A gradeable run that is not graded, and why (a ``judge-skips.csv`` row)."""

    run_id: str
    reason: str


def read_run_answer(folder: Path) -> tuple[RunAnswer, dict[str, Any]]:
    """Read one run folder: its answer (from ``test-prompt.json`` and the transcript) and its signals.

    Raises:
        OSError, ValueError: the folder lacks a readable ``metadata.json`` or ``test-prompt.json``.
    """
    meta = json.loads((folder / METADATA_FILE).read_text(encoding="utf-8"))
    test = TestPrompt.model_validate_json((folder / TEST_PROMPT_FILE).read_text(encoding="utf-8"))
    answer = read_transcript(folder / TRANSCRIPT_FILE).final_answer()
    run = RunAnswer(
        run_id=str(meta["run_id"]), prompt=str(meta["prompt"]), skill=str(meta["skill_family"]),
        model=str(meta["model"]), condition=str(meta["condition"]), rep=int(meta["rep"]),
        dormancy=bool(meta.get("dormancy")), prompt_text=test.prompt,
        items=tuple((i, item.type, item.text) for i, item in enumerate(test.rubric)),
        answer=answer, rubric_sha=test.rubric_sha(), folder=folder,
    )
    return run, run_signals(folder)


def select_runs(run_dir: str | Path, *, include_plugin: bool = False) -> tuple[list[RunAnswer], list[Skip]]:
    """The runs to grade and the gradeable runs that cannot be.

    Gradeable: a preference-eligible prompt (dormancy prompts are for trigger health only) in the no-skill
    or with-skill arm, and the plugin arm with ``include_plugin``.

    Returns:
        ``(runs, skips)``, both sorted by run id.
    """
    arms = (*LIFT_ARMS, PLUGIN) if include_plugin else LIFT_ARMS
    runs, skips = [], []
    for folder in run_dirs(run_dir):
        try:
            run, signals = read_run_answer(folder)
        except (OSError, ValueError, KeyError) as exc:
            skips.append(Skip(folder.name, f"unreadable run folder ({type(exc).__name__}: {exc})"[:200]))
            continue
        if run.dormancy or run.condition not in arms:
            continue
        reason = skip_reason(signals, run.answer)
        if reason:
            skips.append(Skip(run.run_id, reason))
        else:
            runs.append(run)
    return runs, skips
