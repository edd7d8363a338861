"""Preflight: read a suite and refuse a broken one before any model call is paid for.

:func:`preflight` hands the folder to its layout (:mod:`skillbench.suite._layouts`), which reads and checks it.
Errors make a run measure nothing (a prompt that cannot be graded or passed to the CLI, a skill that cannot be
installed or would carry a host file into the sandbox); warnings make it measure less than it seems (a family too
small for the paired gate, a description with no trigger phrase). Every defect is one line:
``path: field: what is wrong — how to fix it``. A config file that cannot be read is reported alone: checking the
suite against defaults it never asked for would only add knock-on errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbench.suite._defects import Defect
from skillbench.suite._format import Suite

if TYPE_CHECKING:
    from skillbench.suite._config import ConfigError, SuiteConfig
    from skillbench.suite._ownership import Ownership


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

    @cached_property
    def ownership(self) -> Ownership:
        """Who wrote each family's skill and its rubrics, from git history (:mod:`skillbench.suite._ownership`).

        Read when first asked (``validate``, the preflight page), not by every command that loads a suite: it is a
        git call, and its warnings never stop anything — not even with ``--strict``, since the history cannot be
        fixed by editing the suite.
        """
        from skillbench.suite._ownership import Ownership, rubric_ownership

        if self.stopped:
            return Ownership(unread=f"the suite was not read ({self.stopped})")
        return rubric_ownership(self.suite)

    def defects_df(self):
        """Tidy table of defects (severity, path, field, problem, fix) for notebooks, then the rubric-ownership
        warnings (:attr:`ownership`), one row per family and person."""
        import pandas as pd

        from skillbench.suite._defects import display_path
        from skillbench.suite._ownership import FIX

        rows = [d.__dict__ for d in self.defects]
        rows += [{"severity": "warning", "path": display_path(self.suite.family_dir(o.family)),
                  "field": "rubric ownership", "problem": o.problem, "fix": FIX} for o in self.ownership.overlaps]
        return pd.DataFrame(rows, columns=["severity", "path", "field", "problem", "fix"])


class SuiteError(ValueError):
    """A suite that failed preflight; the message is the first error and a count."""

    def __init__(self, report: PreflightReport):
        self.report = report
        errors = report.errors
        more = f" (and {len(errors) - 1} more; run `skillbench validate`)" if len(errors) > 1 else ""
        super().__init__(f"{errors[0]}{more}")


@dataclass(frozen=True)
class SuiteOverrides:
    """What a command line says about a suite, over its config file: every command that reads a suite takes the
    same flags (:func:`skillbench.commands.add_suite_args`) and hands them here as this one object.

    Attributes:
        format: a registered layout's name (``qdrant``, ``dotnet``, ``skill-creator``) forces it (default: detected,
            see :func:`skillbench.suite._layouts.detect_layout`).
        skills_root: overrides ``[suite].skills_root`` (a path, not relative to the suite folder).
        site_base: overrides ``[suite].site_base``.
        heldout_prefixes: override ``[suite].heldout_prefixes``.
        heldout_tags: override ``[suite].heldout_tags``: a prompt whose tags include one is held out.
        skip_missing: run a task without the workspace files the tree lacks and what uses them
            (:mod:`skillbench.suite._skip_missing`), each dropped piece a warning, instead of refusing it.
        config: a ``skillbench.toml`` read instead of the suite folder's own (for a repository that commits none).
        trigger_set: a skill-creator trigger eval set (``skill-creator`` layout, one skill) read besides the
            documented file beside ``evals.json`` (:mod:`skillbench.suite.skill_creator`).
    """

    format: str | None = None
    skills_root: str | None = None
    site_base: str | None = None
    heldout_prefixes: tuple[str, ...] | None = None
    heldout_tags: tuple[str, ...] | None = None
    skip_missing: bool = False
    config: str | None = None
    trigger_set: str | None = None

    def as_params(self) -> dict[str, Any]:
        """JSON-typed fields (a notebook stage's ``suite_overrides`` parameter); :meth:`from_params` reads it back."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None) -> SuiteOverrides:
        """The overrides :meth:`as_params` wrote ({} or None: none)."""
        values = dict(params or {})
        for key in ("heldout_prefixes", "heldout_tags"):
            if values.get(key) is not None:
                values[key] = tuple(values[key])
        return cls(**values)


def preflight(suite_dir: str | Path = "evals", overrides: SuiteOverrides | None = None, *,
              config: SuiteConfig | None = None) -> PreflightReport:
    """Read and check a suite; never raises for a defect in the suite, and writes nothing.

    Args:
        suite_dir: the folder that contains ``test-prompts/`` (or, for a dotnet tree, ``tests/`` and ``plugins/``).
        overrides: what the command line says over the config file (see :class:`SuiteOverrides`).
        config: an already loaded config (else ``overrides.config``'s file, else the suite folder's).

    Returns:
        The report: the suite as far as it could be read, and its defects.

    Raises:
        ValueError: ``overrides.format`` names no registered layout.
    """
    from skillbench.suite._layouts import detect_layout, layout_named

    o = overrides or SuiteOverrides()
    layout = layout_named(o.format) if o.format is not None else detect_layout(suite_dir)
    if config is None and o.config is not None:
        from skillbench.suite._config import ConfigError, read_config

        try:
            config = read_config(o.config)
        except ConfigError as exc:
            return _config_refused(Path(suite_dir), exc, o)
    report = layout.preflight(Path(suite_dir), skills_root=o.skills_root, site_base=o.site_base,
                              heldout_prefixes=list(o.heldout_prefixes) if o.heldout_prefixes is not None else None,
                              config=config, skip_missing=o.skip_missing, trigger_set=o.trigger_set)
    if not report.stopped:
        if o.config is not None:
            report.suite.config_file = Path(o.config).resolve()
        tags = o.heldout_tags if o.heldout_tags is not None else tuple(report.suite.config.suite.heldout_tags)
        _hold_out_tagged(report, tags)
    return report


def _config_refused(suite_dir: Path, exc: ConfigError, o: SuiteOverrides) -> PreflightReport:
    """The report of a suite whose ``--config`` file cannot be read: that one line alone (checking the suite against
    defaults it never asked for would only add knock-on errors)."""
    from skillbench.suite._config import SuiteConfig
    from skillbench.suite._defects import display_path

    bare = Suite(suite_dir=suite_dir.resolve(), config=SuiteConfig(), skills_root=suite_dir.resolve(),
                 site_base=(o.site_base or "").rstrip("/"), heldout_prefixes=())
    defect = Defect("error", display_path(exc.path), f"--config: {exc.field}", exc.problem, exc.fix)
    return PreflightReport(bare, [defect], stopped="the --config file must read first")


def _hold_out_tagged(report: PreflightReport, tags: tuple[str, ...]) -> None:
    """Hold out every prompt one of whose tags is in ``tags`` (whatever layout loaded it: a layout records a
    prompt's tags on its :class:`PromptSpec`, e.g. a dotnet stimulus's), and say when a tag holds out nothing (a
    typo would otherwise score what was meant to stay out)."""
    from dataclasses import replace

    from skillbench.suite._defects import display_path

    suite = report.suite
    suite.heldout_tags = tuple(tags)
    if not tags:
        return
    used: set[str] = set()
    for i, spec in enumerate(suite.prompts):
        hit = [t for t in tags if t in spec.tags]
        if not hit:
            continue
        used.update(hit)
        if spec.dormancy:
            report.defects.append(Defect("error", display_path(spec.path), f"{spec.stimulus or spec.name}: tags",
                                         f"a dormancy prompt is also held out (tag {hit[0]!r})",
                                         "drop the tag from the held-out tags, or from the prompt"))
        if not spec.heldout:
            suite.prompts[i] = replace(spec, heldout=True)
            for j, info in enumerate(suite.evals):
                if info.path == spec.path:
                    suite.evals[j] = replace(info, heldout=info.heldout + 1)
    for tag in tags:
        if tag not in used:
            report.defects.append(Defect("warning", display_path(suite.suite_dir), "heldout tag",
                                         f"no prompt has the tag {tag!r}, so it holds out nothing",
                                         "check the tag's spelling (a mapping's tags read key=value)"))


# -- loading a suite for a run ---------------------------------------------------------------------------
# Load a suite for a run: preflight it, and refuse it when it has errors (warnings do not stop a run).


def load_suite(suite_dir: str | Path = "evals", overrides: SuiteOverrides | None = None) -> Suite:
    """Read a suite for a run: preflight it (with the command line's ``overrides``) and refuse it when it has errors.

    Raises:
        SuiteError: the suite has preflight errors (warnings do not stop a run).
    """
    report = preflight(suite_dir, overrides)
    if report.errors:
        raise SuiteError(report)
    return report.suite
