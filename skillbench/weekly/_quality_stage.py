"""The skill-quality stage: what ``skillbench lint-skills`` and the "Skill quality" section of ``00_preflight`` run.

The only module that wires lint-skills' options and endpoint (as :mod:`skillbench.weekly._stages` does for the other
stages): it reads the suite (:func:`skillbench.suite._validation.preflight`, so prompt defects never stop a lint of
the skills — ``skillbench validate`` reports them), builds the units, runs the static checks, opens the endpoint
with :func:`skillbench.weekly.model_endpoint` for the anchored judge, adds measured triggering from a week, and
writes the files.

**Where it writes** (:func:`quality_out_dir`): ``--out DIR`` when given; else the week's run directory with
``--week RUN_DIR`` (under the run directory's lock, :func:`skillbench.ledgers.run_dir_lock`); else
``SUITE_DIR/quality/``. A destination that cannot be written (a read-only suite, such as the shared qdrant copy) is
refused in one line before any model call, naming ``--out``; nothing is written into a read-only suite.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from skillbench.ledgers import MANIFEST_FILE
from skillbench.runtime import PassContext

if TYPE_CHECKING:
    from skillbench.weekly._stages import StageRuntime

QUALITY_DIR = "quality"  # SUITE_DIR/quality/: lint-skills' default output folder
PREFLIGHT_JUDGES = 3  # the weekly preflight's judge samples (on the sim: Fleiss' κ, a few seconds)
Log = Callable[[str], None]


class QualityError(ValueError):
    """lint-skills cannot run as asked; the message is one line saying what to fix (a usage error)."""


def quality_out_dir(suite_dir: str | Path, week: str | Path = "", out: str | Path = "") -> Path:
    """Where the files go (module docstring), checked writable.

    Raises:
        QualityError: the destination (or its nearest existing parent) cannot be written.
    """
    target = Path(out) if out else Path(week) if week else Path(suite_dir) / QUALITY_DIR
    probe = target
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    # The mode bits too: root may write anywhere, but a folder marked read-only (the shared qdrant copy) stays so.
    if not os.access(probe, os.W_OK) or not probe.stat().st_mode & 0o222:
        where = "the suite is read-only" if not out and not week else "it is not writable"
        raise QualityError(f"{target}: cannot write skill-quality files there ({where}) — pass --out DIR")
    return target


def _measured(week: Path, required: bool):
    """The week's measured triggering (E's module, imported only here), or None."""
    if not (week / MANIFEST_FILE).is_file():
        if required:
            raise QualityError(f"{week}: no {MANIFEST_FILE} — run `skillbench signals {week}` (or generate) first, "
                               "or drop --week")
        return None
    from skillbench.quality import measured_triggering

    return measured_triggering(week)


@dataclass(frozen=True)
class LintOptions:
    """What ``skillbench lint-skills`` was asked to do."""

    judge: bool = False  # score the skills with the anchored judge too
    judges: int = 1  # its samples per family
    judge_model: str = ""  # "": the default judge
    seed: int = 0
    week: str | Path = ""  # a week's run directory: the default destination, and the source of measured triggering
    out: str | Path = ""  # where the files go ("": the week, else the reports folder)
    measured: bool | None = None  # measured triggering from ``week`` — None: when it has a manifest; True: required
    site_base: str | None = None  # the published site base links may use (None: the suite's, else a skill_url's)
    skills_root: str | Path | None = None
    families: Sequence[str] = ()  # lint only these families (empty: all)
    jobs: int = 2
    max_retries: int = 4
    timeout: float = 120.0
    write: bool = True  # write the files (False: compute only, e.g. the preflight notebook outside the chain)
    html: bool = True


def lint_skills(suite_dir: str | Path, options: LintOptions, runtime: StageRuntime):
    """Lint a suite's skills; with ``options.judge``, score them with the anchored judge (``judges`` samples) on
    ``runtime``'s endpoint.

    Returns:
        ``(LintResult, {kind: path})`` (no paths when not ``write``).

    Raises:
        QualityError: no skills to read, an unknown family, a malformed ``[quality]`` table, an unwritable
            destination, or a week without a manifest when measured triggering is required.
        RunDirBusy: another pass holds the week's run directory.
        BackendError: the endpoint cannot be used.
    """
    o, log = options, runtime.log
    week, families, site_base, measured = o.week, o.families, o.site_base, o.measured
    from skillbench.quality import CategoryError, lint_suite, quality_settings, site_base_of, skill_units, write_quality
    from skillbench.suite import SuiteOverrides, preflight

    suite_dir = Path(suite_dir)
    out_dir = quality_out_dir(suite_dir, week, o.out) if o.write else None
    report = preflight(suite_dir, SuiteOverrides(skills_root=o.skills_root, site_base=site_base))
    suite = report.suite
    if not suite.skills:
        raise QualityError(f"{suite_dir}: no SKILL.md could be read under {suite.skills_root} — check --skills-root "
                           "(`skillbench validate` lists the defects)")
    unknown = sorted(set(families) - set(suite.families))
    if unknown:
        raise QualityError(f"unknown famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)} (the suite has: "
                           f"{', '.join(suite.families)})")
    try:
        settings = quality_settings(suite_dir)
    except CategoryError as exc:
        raise QualityError(str(exc)) from exc
    base, base_source = (site_base, "--site-base") if site_base else site_base_of(suite)
    units = skill_units(suite, settings, list(families) or None, site_base=base)
    want_measured = measured if measured is not None else bool(week)
    found = _measured(Path(week), measured is True) if week and want_measured else None
    record = {"judge": o.judge, "judges": o.judges if o.judge else 0, "judge_model": o.judge_model, "seed": o.seed,
               "week": str(week), "families": list(families), "site_base": base, "site_base_source": base_source,
               "preflight_errors": len(report.errors), "out_dir": str(out_dir or "")}
    passed = None
    if o.judge:
        from skillbench.judge import JudgeOptions, resolve_judge_model
        from skillbench.quality import judge_units

        judging = JudgeOptions(judge_model=resolve_judge_model(o.judge_model), samples=o.judges, jobs=o.jobs,
                               max_retries=o.max_retries, timeout=o.timeout)
        record["judge_model"] = judging.judge_model
        with runtime.context(seed=o.seed).open_endpoint() as ep:
            record["endpoint_kind"] = ep.kind
            passed = judge_units(units, judging, PassContext(endpoint=ep, log=log))
    result = lint_suite(suite_dir, units, judge=passed, measured=found, options=record)
    if out_dir is None:
        return result, {}
    if week and out_dir.resolve() == Path(week).resolve():
        from skillbench.ledgers import run_dir_lock

        with run_dir_lock(out_dir, log=log):
            return result, write_quality(result, out_dir, html=o.html)
    return result, write_quality(result, out_dir, html=o.html)


def preflight_quality(suite_dir: str | Path, run_dir: str | Path = "", *, backend: str = "sim", endpoint: str = "",
                      seed: int = 0, write: bool = False, judges: int = PREFLIGHT_JUDGES):
    """The weekly preflight's "Skill quality" section: the static lint, and the anchored judge when the week runs
    on the simulation (``judges`` samples; a real week's judge costs money and is ``lint-skills --judge``'s call).

    With ``write`` and a ``run_dir`` the files go into the week's run directory (no measured triggering yet: the
    runs come later; 02_signals sets it beside the prediction).

    Returns:
        The :class:`~skillbench.quality._lint.LintResult`.
    """
    from skillbench.weekly._stages import StageRuntime

    on_sim = backend == "sim"
    options = LintOptions(judge=on_sim, judges=judges, seed=seed, week=run_dir if write and run_dir else "",
                          measured=False, write=bool(write and run_dir), html=False)
    result, _ = lint_skills(suite_dir, options, StageRuntime(backend=backend, endpoint=endpoint, log=print))
    return result
