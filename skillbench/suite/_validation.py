"""Preflight: read a suite and refuse a broken one before any model call is paid for.

:func:`preflight` hands the folder to its layout (:mod:`skillbench.suite._layouts`), which reads and checks it.
Errors make a run measure nothing (a prompt that cannot be graded or passed to the CLI, a skill that cannot be
installed or would carry a host file into the sandbox); warnings make it measure less than it seems (a family too
small for the paired gate, a description with no trigger phrase). Every defect is one line:
``path: field: what is wrong — how to fix it``. A config file that cannot be read is reported alone: checking the
suite against defaults it never asked for would only add knock-on errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from skillbench.suite._defects import Defect
from skillbench.suite._format import Suite

if TYPE_CHECKING:
    from skillbench.suite._config import SuiteConfig


@dataclass
class PreflightReport:
    """What preflight found: the suite as far as it could be read, and its defects.

    A layout whose summary counts other things (stimuli, evals) returns a subclass that overrides :meth:`summary`.
    """

    suite: Suite
    defects: list[Defect] = field(default_factory=list)
    prompt_files: list[Path] = field(default_factory=list)  # every prompt file read, broken ones included
    stopped: str = ""  # why the rest of the suite was not checked (an unreadable config file)

    @property
    def errors(self) -> list[Defect]:
        return [d for d in self.defects if d.severity == "error"]

    @property
    def warnings(self) -> list[Defect]:
        return [d for d in self.defects if d.severity == "warning"]

    def ok(self, strict: bool = False) -> bool:
        return not self.errors and not (strict and self.warnings)

    def summary(self) -> str:
        if self.stopped:
            return f"Prompts and skills not checked ({self.stopped}): {len(self.errors)} errors, " \
                   f"{len(self.warnings)} warnings"
        files = self.prompt_files or [p.path for p in self.suite.prompts]
        heldout = sum(f.stem.startswith(self.suite.heldout_prefixes) for f in files)  # () matches nothing
        dormancy = sum(p.dormancy for p in self.suite.prompts)  # known only for files that parsed
        return (
            f"Checked {len(files)} prompts ({len(files) - heldout} scored, {heldout} held-out, "
            f"{dormancy} dormancy) in {len(self.suite.families)} skill families: "
            f"{len(self.errors)} errors, {len(self.warnings)} warnings"
        )

    def defects_df(self):
        """Tidy table of defects (severity, path, field, problem, fix) for notebooks."""
        import pandas as pd

        return pd.DataFrame([d.__dict__ for d in self.defects], columns=["severity", "path", "field", "problem", "fix"])


class SuiteError(ValueError):
    """A suite that failed preflight; the message is the first error and a count."""

    def __init__(self, report: PreflightReport):
        self.report = report
        errors = report.errors
        more = f" (and {len(errors) - 1} more; run `skillbench validate`)" if len(errors) > 1 else ""
        super().__init__(f"{errors[0]}{more}")


def preflight(
    suite_dir: str | Path = "evals",
    *,
    skills_root: str | Path | None = None,
    site_base: str | None = None,
    heldout_prefixes: list[str] | None = None,
    config: SuiteConfig | None = None,
    format: str | None = None,
    skip_missing: bool = False,
    trigger_set: str | Path | None = None,
) -> PreflightReport:
    """Read and check a suite; never raises for a defect in the suite, and writes nothing.

    Args:
        suite_dir: the folder that contains ``test-prompts/`` (or, for a dotnet tree, ``tests/`` and ``plugins/``).
        skills_root: overrides ``[suite].skills_root`` (a path, not relative to ``suite_dir``).
        site_base: overrides ``[suite].site_base``.
        heldout_prefixes: override ``[suite].heldout_prefixes``.
        config: an already loaded config (else read from ``suite_dir``).
        format: a registered layout's name (``qdrant``, ``dotnet``, ``skill-creator``) forces it (default:
            detected, see :func:`skillbench.suite._layouts.detect_layout`).
        skip_missing: run a task without the workspace files the tree lacks and what uses them
            (:mod:`skillbench.suite._skip_missing`), each dropped piece a warning, instead of refusing it.
        trigger_set: a skill-creator trigger eval set (``skill-creator`` layout, one skill) read besides the
            documented file beside ``evals.json`` (:mod:`skillbench.suite.skill_creator`).

    Returns:
        The report: the suite as far as it could be read, and its defects.

    Raises:
        ValueError: ``format`` names no registered layout.
    """
    from skillbench.suite._layouts import detect_layout, layout_named

    layout = layout_named(format) if format is not None else detect_layout(suite_dir)
    return layout.preflight(Path(suite_dir), skills_root=skills_root, site_base=site_base,
                            heldout_prefixes=heldout_prefixes, config=config, skip_missing=skip_missing,
                            trigger_set=trigger_set)


# -- loading a suite for a run ---------------------------------------------------------------------------
# Load a suite for a run: preflight it, and refuse it when it has errors (warnings do not stop a run).


def load_suite(suite_dir: str | Path = "evals", **overrides) -> Suite:
    """Read a suite for a run: preflight it and refuse it when it has errors.

    Raises:
        SuiteError: the suite has preflight errors (warnings do not stop a run).
    """
    report = preflight(suite_dir, **overrides)
    if report.errors:
        raise SuiteError(report)
    return report.suite
