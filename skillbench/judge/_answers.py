"""The runs a judge grades: each run's question, rubric and final answer, and the runs it cannot grade.

:func:`select_runs` decides which runs are gradeable: a preference-eligible prompt (dormancy prompts are for
trigger health only) in one of the week's graded arms (:attr:`skillbench.arms.ArmPair.graded_arms`: no-skill and
with-skill for a weekly run; treatment, control and reference for a comparison; the placebo and aa controls when
they ran; the plugin arm on request), with
an answer that :func:`skillbench.signals.skip_reason` accepts. Only ``prompt_text``, ``answer`` and ``items`` of a
:class:`RunAnswer` ever reach a judge; the rest is for the ledger.

A pass over part of a week (``--prompts``/``--families``) passes a :class:`RunSelection`: it
narrows the runs to grade (rubric judge, pairwise judge) and nothing else — every gradeable run's skip reason
is still recorded, and rows already in a ledger are kept whatever the selection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbench.arms import ArmPair, arm_kind
from skillbench.judge._protocol import RubricLine, absence_line
from skillbench.ledgers import (
    MANIFEST_FILE,
    TEST_PROMPT_FILE,
    TRANSCRIPT_FILE,
    LedgerError,
    metadata_or_none,
    read_manifest,
    read_metadata,
    read_plan,
    week_arms,
)
from skillbench.signals import NO_RUBRIC, read_transcript, run_dirs, skip_reason
from skillbench.suite import TestPrompt, absence_indexes
from skillbench.vocab import CONTROL_ARMS, PLUGIN


@dataclass(frozen=True)
class RunAnswer:
    """One run as the judge needs it: identity, question, rubric and final answer.

    Only ``prompt_text``, ``answer`` and ``items`` ever reach the judge; the rest is for the ledger.
    ``items`` are the rubric as recorded (an absence item is a must); :meth:`lines` is the rubric as sent,
    where each item of ``absence`` is an avoid line (:func:`~skillbench.judge._protocol.absence_line`).
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
    absence: frozenset[int] = frozenset()  # indexes of the must items graded by absence
    trigger_only: bool = False  # a should-trigger query: trigger recall only, never graded

    def lines(self, indexes: Iterable[int] | None = None) -> list[RubricLine]:
        """The rubric lines as sent to the judge, all or those at ``indexes`` (file order)."""
        wanted = None if indexes is None else set(indexes)
        return [absence_line(i, text) if i in self.absence else (i, kind, text)
                for i, kind, text in self.items if wanted is None or i in wanted]

    def item_type(self, index: int) -> str:
        """The item's type as recorded (an absence item is a must)."""
        return self.items[index][1]


@dataclass(frozen=True)
class Skip:
    """A gradeable run that is not graded, and why (a ``judge-skips.csv`` row)."""

    run_id: str
    reason: str


@dataclass(frozen=True)
class RunSelection:
    """The part of a week a pass grades: runs of these prompts and of these skill families (empty: any)."""

    prompts: tuple[str, ...] = ()
    families: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.prompts or self.families)

    def keeps(self, prompt: str, family: str) -> bool:
        return (not self.prompts or prompt in self.prompts) and (not self.families or family in self.families)


class WeekSelectionError(ValueError):
    """``--prompts``/``--families`` names a prompt or family the week has no run of (a usage error)."""


def week_names(run_dir: str | Path) -> tuple[set[str], set[str]]:
    """The prompts and skill families of a week's runs (from ``plan.csv`` when it exists, and the run folders)."""
    prompts: set[str] = set()
    families: set[str] = set()
    plan = read_plan(run_dir)
    if plan is not None:
        prompts |= set(plan["prompt"])
        families |= set(plan["skill_family"])
    for folder in run_dirs(run_dir):
        meta = metadata_or_none(folder)
        if meta is None:
            continue
        prompts.add(str(meta.get("prompt", "")))
        families.add(str(meta.get("skill_family", "")))
    return prompts - {""}, families - {""}


def check_selection(run_dir: str | Path, prompts: Sequence[str] = (), families: Sequence[str] = ()) -> RunSelection:
    """The selection, after checking that the week has runs of every prompt and family it names.

    Raises:
        WeekSelectionError: a name the week has no run of (the message names it and lists the week's names).
    """
    known_prompts, known_families = week_names(run_dir)
    for flag, names, known in (("--prompts", prompts, known_prompts), ("--families", families, known_families)):
        for name in names:
            if name not in known:
                raise WeekSelectionError(f"{flag} {name}: the week {Path(run_dir)} has no run of it — its "
                                     f"{flag.removeprefix('--')}: {', '.join(sorted(known)) or '(none)'}")
    return RunSelection(tuple(prompts), tuple(families))


# The metadata fields a run's answer is named by (the rest of its identity is in the manifest).
ANSWER_FIELDS = ("run_id", "prompt", "skill_family", "model", "condition", "rep")


def read_run_answer(folder: Path) -> RunAnswer:
    """Read one run folder's answer: its identity (``metadata.json``), question and rubric (``test-prompt.json``)
    and the transcript's final answer.

    Raises:
        OSError, ValueError: the folder lacks a readable ``metadata.json`` or ``test-prompt.json``.
    """
    meta = read_metadata(folder, ANSWER_FIELDS)
    test = TestPrompt.model_validate_json((folder / TEST_PROMPT_FILE).read_text(encoding="utf-8"))
    answer = read_transcript(folder / TRANSCRIPT_FILE).final_answer()
    return RunAnswer(
        run_id=str(meta["run_id"]), prompt=str(meta["prompt"]), skill=str(meta["skill_family"]),
        model=str(meta["model"]), condition=str(meta["condition"]), rep=int(meta["rep"]),
        dormancy=bool(meta.get("dormancy")), trigger_only=bool(meta.get("trigger_only")), prompt_text=test.prompt,
        items=tuple((i, item.type, item.text) for i, item in enumerate(test.rubric)),
        answer=answer, rubric_sha=test.rubric_sha(), folder=folder,
        # The run folder's copy states each decision (suite.absence.resolve_absence): explicit values only.
        absence=absence_indexes(test.rubric),
    )


# The manifest's signals the gradeability rule reads (skillbench.signals.skip_reason).
_GRADEABILITY_COLUMNS = ["budget_hit", "condition", "skill_available", "exit_code", "is_error"]


def manifest_signals(run_dir: str | Path) -> dict[str, Mapping[str, Any]]:
    """Each run's signals as ``manifest.csv`` records them (signals wrote it at the end of generate), by run id.

    The judge reads the file contract's manifest rather than deriving the signals again, so it grades exactly
    the runs the scorecard counts.

    Raises:
        LedgerError: no ``manifest.csv``, or a malformed one (one line naming the file and the fix).
    """
    manifest = read_manifest(Path(run_dir) / MANIFEST_FILE)
    rows = manifest[_GRADEABILITY_COLUMNS].astype(object)
    records = rows.where(rows.notna(), None).to_dict("records")  # an empty cell reads None, as from a transcript
    return dict(zip(manifest["run_id"].astype(str), records, strict=True))


def graded_arm(condition: str, pair: ArmPair, *, include_plugin: bool = False) -> bool:
    """True for a condition the rubric judge grades: one of the pair's graded arms, a control arm (placebo, aa:
    opt-in, so a week that ran one wants its lift), or a plugin arm on request."""
    kind = arm_kind(condition)
    return condition in pair.graded_arms or kind in CONTROL_ARMS or (include_plugin and kind == PLUGIN)


def select_runs(run_dir: str | Path, *, include_plugin: bool = False, selection: RunSelection | None = None,
                pair: ArmPair | None = None, preference: bool = False) -> tuple[list[RunAnswer], list[Skip]]:
    """The runs to grade and the gradeable runs that cannot be.

    Gradeable: a preference-eligible prompt (dormancy prompts and trigger-only queries are for trigger health
    only) in one of the pair's graded arms (:func:`graded_arm`), and the plugin arm with ``include_plugin``.
    With a ``selection`` only its runs are returned to grade; the skips still cover every gradeable run.

    Args:
        run_dir: the week.
        include_plugin: grade the plugin arm too.
        selection: grade only these prompts/families.
        pair: the arms compared (default: the week's, :func:`skillbench.ledgers.week_arms`).
        preference: select for the pairwise preference, which compares whole answers: a run whose prompt has no
            rubric items is selected too (else it is a skip, :data:`NO_RUBRIC`).

    Returns:
        ``(runs, skips)``, both sorted by run id.
    """
    pair = pair or week_arms(run_dir)
    selection = selection or RunSelection()
    signals: dict[str, Mapping[str, Any]] | None = None  # read when a run needs it: a week without runs has none
    runs, skips = [], []
    for folder in run_dirs(run_dir):
        try:
            run = read_run_answer(folder)
        except (OSError, ValueError, KeyError) as exc:
            skips.append(Skip(folder.name, f"unreadable run folder ({type(exc).__name__}: {exc})"[:200]))
            continue
        if run.dormancy or run.trigger_only or not graded_arm(run.condition, pair, include_plugin=include_plugin):
            continue
        signals = manifest_signals(run_dir) if signals is None else signals
        if run.run_id not in signals:  # a run folder newer than the manifest (a pass killed before its end)
            raise LedgerError(f"{Path(run_dir) / MANIFEST_FILE}: no row for run {run.run_id} — the manifest is "
                              f"older than the run folders; rebuild it with `skillbench signals {run_dir}`")
        reason = skip_reason(signals[run.run_id], run.answer) or ("" if run.items or preference else NO_RUBRIC)
        if reason:
            skips.append(Skip(run.run_id, reason))
        elif selection.keeps(run.prompt, run.skill):
            runs.append(run)
    return runs, skips
