"""The public API: the entry points resolve, every name of the old flat layout still resolves (with a
DeprecationWarning naming its new home), no public name is shadowed by a module, and the CLI lists every
subcommand."""

from __future__ import annotations

import importlib
import pkgutil
import re
import types
import warnings
from typing import Any

import pytest

import skillbench
from skillbench.cli import build_parser, main


def _home(dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _skillbench_warnings(caught: list[warnings.WarningMessage]) -> list[warnings.WarningMessage]:
    """The deprecation warnings skillbench raised (not those of a third-party import done on first use)."""
    return [w for w in caught
            if issubclass(w.category, DeprecationWarning) and str(w.message).startswith("skillbench.")]


def _resolve(name: str) -> tuple[Any, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(skillbench, name)
    return value, _skillbench_warnings(caught)


# Every name importable from ``skillbench`` before the sub-packages, and where it lives now.
_OLD = {
    "skillbench.suite": "CONFIG_FILENAME ConfigError Defect PreflightReport PromptSpec RubricItem Skill Suite "
                        "SuiteConfig SuiteError TestPrompt load_config load_suite parse_skill_url preflight",
    "skillbench.generation": "BackendError Endpoint GenerateOptions generate make_plan reconcile resolve_backend",
    "skillbench.signals": "Transcript activation_summary read_transcript run_signals self_served_baseline "
                          "trigger_health write_manifest",
    "skillbench.judge": "DEFAULT_JUDGE_MODEL JudgeClient JudgeOptions JudgeReport PreferenceInput RubricJudge "
                        "VerdictsInput build_judge_request build_pair_request evidence_summary find_pairs "
                        "judge_headers judge_pairs judge_prompt_sha judge_run_dir pairs_frame parse_preference "
                        "parse_verdicts position_agreement select_runs",
    "skillbench.calibration": "Calibration CalibrationOptions calibrate cohen_kappa export_labels fleiss_kappa "
                              "flipping_items krippendorff_alpha krippendorff_reading landis_koch pabak "
                              "pair_agreement read_labels self_agreement",
    "skillbench.scorecard": "GateDecision HistoryError ScorecardData ScorecardResult WeekOverWeek bootstrap_lift "
                            "cell_scores collapse_votes compute_scorecard cost_cells decide lift_table "
                            "minimum_detectable_effect paired_differences preference_gate prompt_rep_scores "
                            "prompt_scores read_history render_markdown scorecard_frames uncertainty_table "
                            "update_history week_over_week write_scorecard",
    "skillbench.ledgers": "LedgerError Reconciliation read_judge_skips read_manifest read_pairs read_reconciliation "
                          "read_scores",
    "skillbench.prices": "price usage_cost",
    "skillbench.sim": "SimServer simulated_endpoint",
    "skillbench.weekly": "model_endpoint",  # it may start the simulation: above it (ARCHITECTURE.md)
}
OLD_HOMES: dict[str, str] = {name: f"{home}.{name}" for home, names in _OLD.items() for name in names.split()}
OLD_HOMES |= {"load_run": "skillbench.ledgers.load_week", "RunLedgers": "skillbench.ledgers.WeekLedgers"}  # renamed


def test_the_old_names_are_the_hundred_and_one_of_the_flat_layout():
    assert len(OLD_HOMES) == 101


def test_every_entry_point_resolves_without_a_warning():
    assert skillbench.__all__ and set(skillbench.__all__) <= set(dir(skillbench))
    for name in skillbench.__all__:
        value, caught = _resolve(name)
        assert value is not None and not isinstance(value, types.ModuleType), name
        assert not caught, f"skillbench.{name} warned: {caught[0].message}"


@pytest.mark.parametrize("name", sorted(OLD_HOMES, key=str.lower))
def test_every_old_name_still_resolves_and_warns_only_when_it_moved(name: str):
    home = OLD_HOMES[name]
    value, caught = _resolve(name)
    assert value is _home(home), f"skillbench.{name} is not {home}"
    if name in skillbench.__all__:
        assert not caught, f"skillbench.{name} is an entry point but warned: {caught[0].message}"
        return
    assert len(caught) == 1, f"skillbench.{name} resolved without a DeprecationWarning"
    assert str(caught[0].message) == f"skillbench.{name} is deprecated; use {home}"
    assert caught[0].filename == __file__, "the warning points at the caller's line"


def test_no_public_name_is_shadowed_by_a_submodule():
    """Importing ``skillbench.x`` rebinds ``skillbench.x`` to the module: a function must not share its name."""
    import importlib.util

    clashes = [n for n in skillbench.__all__ if importlib.util.find_spec(f"skillbench.{n}") is not None]
    assert not clashes


def test_no_package_export_resolves_to_a_module_once_every_module_is_imported():
    """A sub-package's export that shares its name with one of its modules must still be the export."""
    for info in pkgutil.walk_packages(skillbench.__path__, "skillbench."):
        importlib.import_module(info.name)
    shadowed = []
    for info in pkgutil.iter_modules(skillbench.__path__, "skillbench."):
        package = importlib.import_module(info.name)
        for name in getattr(package, "__all__", ()):
            if isinstance(getattr(package, name), types.ModuleType):
                shadowed.append(f"{info.name}.{name}")
    assert not shadowed


def test_cli_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    registered = set(sub.choices)
    assert {"validate", "generate", "signals", "judge", "scorecard", "weekly"} <= registered
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    section = text.split("positional arguments:", 1)[1].split("options:", 1)[0]
    listed = set(re.findall(r"^ {4}(\S+)", section, flags=re.M))
    assert listed == registered, f"registered but not in --help: {registered - listed}; extra: {listed - registered}"
