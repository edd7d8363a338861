"""The weekly notebook chain: notebook conventions, the whole chain on the tiny suite, resume, a failing stage,
nbval over the notebooks with their defaults, and the helpers and figures the notebooks call.

The chain runs once per session (``tiny_chain``): the tiny suite with one model and one rep (8 runs) on the
simulated endpoint, Docker when the engine answers, else the local sandbox. It needs the pinned CLI and the
``skillbench`` kernel, which ``make setup`` installs; outside CI their absence skips, in CI it fails.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import papermill as pm
import pytest
from matplotlib.figure import Figure

from skillbench import weekly
from skillbench.report import figures
from skillbench.weekly.chain import STAGES, WeeklyOptions, notebook_parameters, run_weekly
from tests.shared_data import IN_CI, ROOT
from tests.sim_helpers import require_cli

NOTEBOOKS = ROOT / "notebooks"
TINY_SUITE = ROOT / "tests" / "data" / "tiny-suite"
TINY_WEEK = ROOT / "tests" / "data" / "tiny-week"
ALL_NOTEBOOKS = sorted(NOTEBOOKS.glob("*.ipynb"))
JSON_TYPES = (str, int, float, bool, list, dict)
EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']https?://|url\(\s*["']?https?://|@import""", re.I)
RUN_KEY = "t1"


def require_kernel() -> None:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(weekly.KERNEL_NAME)
    except NoSuchKernel:
        if IN_CI:
            pytest.fail("CI must have the 'skillbench' Jupyter kernel: `make setup` registers it")
        pytest.skip("the 'skillbench' Jupyter kernel is not registered (run `make setup`)")


# --- notebook conventions ---------------------------------------------------------------------------------


def test_the_chain_and_explore_notebooks_exist():
    names = {p.stem for p in ALL_NOTEBOOKS}
    assert {s.id for s in STAGES} | {"explore_weeks"} <= names


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_one_parameters_cell_of_json_literals_with_help(path: Path):
    nb = nbformat.read(str(path), as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: {len(tagged)} cells tagged 'parameters'"
    assert nb.metadata["kernelspec"]["name"] == "skillbench"
    params = notebook_parameters(path)
    assert params, f"{path.name}: no parameters"
    for name, value in params.items():
        assert isinstance(value, JSON_TYPES), f"{path.name}: {name} = {value!r} is not a JSON type"
        json.dumps(value)
    # papermill's own inspection must see every parameter with its help comment (it skips a line it
    # cannot parse, e.g. a comment containing "=", and the parameter would silently keep its default).
    inspected = pm.inspect_notebook(str(path))
    assert list(inspected) == list(params), f"{path.name}: papermill sees {list(inspected)}"
    for name, info in inspected.items():
        assert info["help"].strip(), f"{path.name}: parameter {name} has no help comment"
        assert info["inferred_type_name"] != "None", f"{path.name}: parameter {name} has no type annotation"
    # Every line of the cell is an annotated assignment (no logic in the parameters cell).
    body = ast.parse(tagged[0].source).body
    assert all(isinstance(node, ast.AnnAssign) for node in body)


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_outputs_are_cleared(path: Path):
    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name}: outputs committed"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_defaults_point_at_committed_data(path: Path):
    """Standalone defaults read the committed simulated weeks; the writing stages default to read-only."""
    params = notebook_parameters(path)
    for name, value in params.items():
        if name.endswith(("_dir", "_path")) and value:
            assert (NOTEBOOKS / value).resolve().exists(), f"{path.name}: {name} = {value} does not exist"
    assert params.get("write", False) is False
    assert params.get("dry_run", True) is True


def test_chain_passes_every_stage_parameter():
    """The chain supplies a value for every parameter a stage declares that it knows, paths first of all."""
    params = weekly.stage_parameters(WeeklyOptions(), suite_dir=TINY_SUITE, run_dir=TINY_SUITE / "weekly" / "k",
                                     history=TINY_SUITE / "weekly" / "h.csv", backend="sim", endpoint="http://x",
                                     sandbox="local")
    for stage in STAGES:
        declared = notebook_parameters(NOTEBOOKS / stage.notebook)
        for name in declared:
            if name.endswith(("_dir", "_path")) or name in ("run_key", "backend", "endpoint", "write", "dry_run"):
                assert name in params, f"{stage.id}: the chain does not pass {name}"
        assert type(params.get("write", False)) is bool


# --- the chain on the tiny suite --------------------------------------------------------------------------

_CHAIN: dict[str, Any] = {}


def tiny_chain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run the chain once per session on a copy of the tiny suite (haiku × 3 conditions × 1 rep = 8 runs)."""
    if "result" in _CHAIN:
        return _CHAIN
    require_cli()
    require_kernel()
    base = tmp_path_factory.mktemp("weekly-chain")
    suite = base / "tiny-suite"
    shutil.copytree(TINY_SUITE, suite)
    opts = WeeklyOptions(suite_dir=suite, run_key=RUN_KEY, backend="sim", models=["haiku"], reps=1, jobs=2,
                         calibration_repeat=2, reports_dir=base / "reports")
    lines: list[str] = []
    result = run_weekly(opts, log=lines.append)
    _CHAIN.update(result=result, base=base, suite=suite, run_dir=suite / "weekly" / RUN_KEY, opts=opts, log=lines,
                  reports=base / "reports")
    return _CHAIN


@pytest.fixture(scope="module")
def chain(tmp_path_factory) -> dict[str, Any]:
    return tiny_chain(tmp_path_factory)


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def test_chain_completes_every_stage(chain):
    result = chain["result"]
    assert result.ok, f"failed at {result.failed_stage}: {result.state['error']}"
    assert [s.status for s in result.stages] == ["ok"] * len(STAGES)
    state = json.loads((result.report_dir / "weekly.json").read_text())
    assert state["status"] == "complete" and state["endpoint_kind"] == "simulated"
    assert all(s["seconds"] > 0 and s["cell_seconds"] is not None for s in state["stages"])
    assert 0 < state["overhead_seconds"] < state["seconds"]


def test_chain_ledgers(chain):
    run_dir: Path = chain["run_dir"]
    plan = _csv(run_dir / "plan.csv")
    assert len(plan) == 8 and set(plan["model"]) == {"haiku"} and set(plan["rep"]) == {"1"}
    manifest = _csv(run_dir / "manifest.csv")
    assert sorted(manifest["run_id"]) == sorted(plan["run_id"])
    assert set(manifest["endpoint"]) == {"simulated"}
    recon = json.loads((run_dir / "reconciliation.json").read_text())
    assert recon["complete"] and recon["expected"] == recon["observed"] == recon["written"] == 8
    scores = _csv(run_dir / "scores.csv")
    graded = set(scores["run_id"])
    lift_runs = set(manifest.loc[manifest["condition"].isin(["no-skill", "with-skill"])
                                 & manifest["dormancy"].eq("0"), "run_id"])
    assert graded == lift_runs  # 2 lift prompts × 2 arms; plugin and dormancy runs are not graded
    assert "ungraded" not in set(scores["verdict"])
    pairs = _csv(run_dir / "pairs.csv")
    assert len(pairs) == 2 and set(pairs["outcome"]) <= {"W", "T", "L"}
    calibration = _csv(run_dir / "calibration.csv")
    assert "self-agreement" in set(calibration["comparison"])
    history = _csv(chain["suite"] / "weekly" / "scorecard-history.csv")
    assert list(history.loc[history["run_key"] == RUN_KEY, "model"]) == ["haiku"]


def test_chain_scorecard(chain):
    text = (chain["run_dir"] / "scorecard.md").read_text()
    assert text.splitlines()[0] == f"# Weekly Skill Scorecard — {RUN_KEY} — simulated endpoint"
    for section in ("## Lift per model", "## Week-over-week lift delta", "## Preference gate", "## Coverage",
                    "## Provenance"):
        assert section in text
    assert "runs graded: **4 of 4**" in text


def test_chain_notebooks_got_the_weeks_paths(chain):
    """Each executed notebook ran on this week's files, never on a default pointing into tests/data."""
    report_dir: Path = chain["result"].report_dir
    for stage in STAGES:
        nb = nbformat.read(str(report_dir / stage.notebook), as_version=4)
        injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
        assert len(injected) == 1, stage.id
        source = injected[0].source
        assert "tests/data/tiny-week" not in source
        if "run_dir" in notebook_parameters(NOTEBOOKS / stage.notebook):
            assert f'run_dir = "{chain["run_dir"]}"' in source


def test_chain_html_report(chain):
    report_dir: Path = chain["result"].report_dir
    index = (report_dir / "index.html").read_text()
    for stage in STAGES:
        page = report_dir / f"{stage.id}.html"
        assert page.is_file() and f'href="{stage.id}.html"' in index and f'href="{stage.id}.ipynb"' in index
        html = page.read_text()
        assert "weekly.notebook_setup()" not in html  # code hidden
        assert not EXTERNAL.search(html), f"{page.name} loads something from the network"
    assert 'href="scorecard.html"' in index and 'href="calibration.html"' in index
    assert "Simulated endpoint" in index
    scorecard = (report_dir / "scorecard.html").read_text()
    assert "<table>" in scorecard and "Weekly Skill Scorecard" in scorecard
    assert "<img" in (report_dir / "05_scorecard.html").read_text()  # the figures are in the page
    top = (chain["reports"] / "index.html").read_text()
    assert f'href="{RUN_KEY}/index.html"' in top
    for page in (index, scorecard, top):
        assert not EXTERNAL.search(page)


def test_chain_resumes_the_same_run_key(chain):
    before = {name: (chain["run_dir"] / name).read_text() for name in ("manifest.csv", "scores.csv", "pairs.csv",
                                                                        "calibration.csv")}
    again = run_weekly(chain["opts"])
    assert again.ok, again.state["error"]
    gen = nbformat.read(str(again.report_dir / "01_generate.ipynb"), as_version=4)
    text = "\n".join(o.get("text", "") for c in gen.cells if c.cell_type == "code" for o in c.outputs)
    assert "8 planned, 8 finished, 0 to run" in text
    judge = nbformat.read(str(again.report_dir / "03_judge.ipynb"), as_version=4)
    text = "\n".join(o.get("text", "") for c in judge.cells if c.cell_type == "code" for o in c.outputs)
    assert "0 to grade" in text and "0 to judge" in text
    for name, content in before.items():
        if name == "manifest.csv":
            assert len(_csv(chain["run_dir"] / name)) == 8  # rewritten from the same run folders
        else:
            assert (chain["run_dir"] / name).read_text() == content, f"{name} changed on resume"


def test_failing_stage_stops_the_chain_and_names_it(tmp_path):
    require_kernel()
    suite = tmp_path / "broken-suite"
    shutil.copytree(TINY_SUITE, suite)
    (suite / "test-prompts" / "csv-garbled-names.json").write_text('{"name": "csv-garbled-names",\n  oops\n}')
    reports = tmp_path / "reports"
    proc = subprocess.run([sys.executable, "-m", "skillbench.cli", "weekly", "--suite", str(suite), "--reports",
                           str(reports), "--run-key", "broken", "--backend", "sim", "--quiet"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    assert "stage 00_preflight failed" in proc.stderr and "StageError" in proc.stderr
    assert proc.stdout.strip() == str(reports / "broken" / "index.html")
    state = json.loads((reports / "broken" / "weekly.json").read_text())
    assert state["status"] == "failed" and state["failed_stage"] == "00_preflight"
    assert [s["status"] for s in state["stages"]] == ["failed"] + ["not run"] * (len(STAGES) - 1)
    nb = nbformat.read(str(reports / "broken" / "00_preflight.ipynb"), as_version=4)
    failing = [c for c in nb.cells if c.cell_type == "code" and any(o.get("output_type") == "error"
                                                                     for o in c.outputs)]
    assert len(failing) == 1 and "require_sound" in failing[0].source
    page = (reports / "broken" / "00_preflight.html").read_text()
    assert "require_sound" in page  # a failed stage's page shows its code, so the failing cell is visible
    index = (reports / "broken" / "index.html").read_text()
    assert "failed" in index and "00_preflight" in index
    assert not (tmp_path / "broken-suite" / "weekly" / "broken" / "plan.csv").exists()  # nothing ran


def test_usage_errors_exit_2(tmp_path):
    from skillbench.cli import main

    assert main(["weekly", "--run-key", "../escape", "--suite", str(TINY_SUITE)]) == 2
    assert main(["weekly", "--suite", str(tmp_path)]) == 2  # not a suite


# --- nbval: every notebook runs standalone with its defaults ------------------------------------------------


def test_nbval_lax_over_the_notebooks():
    """``pytest --nbval-lax notebooks/`` passes with the defaults (read-only on the committed weeks)."""
    require_kernel()
    before = {p: p.stat().st_mtime for p in TINY_WEEK.rglob("*") if p.is_file()}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "-p", "no:cacheprovider", "-q",
                           str(NOTEBOOKS)], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    after = {p: p.stat().st_mtime for p in TINY_WEEK.rglob("*") if p.is_file()}
    assert after == before, "running the notebooks with their defaults wrote into tests/data/tiny-week"


# --- what the notebooks call ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def weeks() -> weekly.Weeks:
    return weekly.load_weeks(TINY_WEEK)


def test_committed_weeks_are_a_simulated_history(weeks):
    assert weeks.keys == sorted(weeks.keys) and len(weeks.keys) >= 4
    assert set(weeks.runs["endpoint"]) == {"simulated"} and not weeks.skipped
    assert set(weeks.history["run_key"]) == set(weeks.keys)
    assert {"must_coverage", "run_key", "skill_activation"} <= set(weeks.runs.columns)


def test_prompt_movers_apply_the_noise_rule(weeks):
    movers = weekly.prompt_movers(weeks)
    assert not movers.empty
    assert set(movers["moved"]) <= {"yes", "no (within noise)", "n/a"}
    ok = movers.dropna(subset=["threshold"])
    assert ((ok["moved"] == "yes") == (ok["delta"].abs() > ok["threshold"])).all()
    assert (ok["threshold"] >= ok[["within", "between"]].max(axis=1) - 1e-12).all()
    assert movers["delta"].abs().is_monotonic_decreasing
    # Comparing a week with itself moves nothing.
    same = weekly.prompt_movers(weeks, run_key=weeks.keys[-1], previous=weeks.keys[-1])
    assert (same["delta"] == 0).all()


def test_activation_by_week_and_never_triggered(weeks):
    table = weekly.activation_by_week(weeks)
    assert set(table["run_key"]) == set(weeks.keys)
    assert ((table["activations"] <= table["runs"]) & (table["false_triggers"] <= table["dormancy_runs"])).all()
    # A family that never triggers shows up; build one by blanking the dates family's activations.
    blank = weekly.Weeks(weeks.keys, weeks.runs.assign(
        skill_activation=weeks.runs["skill_activation"].where(weeks.runs["skill_family"] != "dates", "none")),
        weeks.prompts, weeks.paired, weeks.history)
    never = weekly.never_triggered(blank)
    assert ("family", "dates") in set(zip(never["level"], never["name"], strict=True))
    per_family = table.groupby("skill_family")["activations"].sum()
    real = weekly.never_triggered(weeks)
    assert set(real.loc[real["level"] == "family", "name"]) == set(per_family[per_family == 0].index)


def test_markdown_sections_demotes_headings():
    md = "# T\n\n## Lift per model (x)\nbody\n### sub\n## Coverage\nc\n"
    assert weekly.markdown_sections(md, "Lift per model") == "#### Lift per model (x)\nbody\n##### sub\n"


def test_every_figure_renders_from_the_committed_week_and_from_nothing(weeks):
    run_dir = TINY_WEEK / weeks.keys[-1]
    sc = weekly.scorecard_week(run_dir, TINY_WEEK / "scorecard-history.csv", n_resamples=200)
    f = sc.frames
    jt = weekly.judge_tables(run_dir)
    cal = weekly.calibration_tables(run_dir)
    import skillbench

    made = [
        figures.lift_forest(f["lift"], f["uncertainty"]), figures.prompt_lift_dots(f["paired"]),
        figures.cost_vs_lift(f["paired"], sc.data.manifest, f["lift"]), figures.activation_breakdown(sc.data.manifest),
        figures.lift_trend(f["history"], f["week_over_week"]), figures.calibration_heatmap(cal["agreement"]),
        figures.verdict_breakdown(jt["scores"]), figures.pair_outcomes(jt["pair_outcomes"]),
        figures.run_durations(sc.data.manifest), figures.suite_composition(skillbench.load_suite(TINY_SUITE)
                                                                           .prompts_df()),
        figures.activation_by_week_heatmap(weekly.activation_by_week(weeks)),
        figures.prompt_moves(weekly.prompt_movers(weeks)),
    ]
    empty = pd.DataFrame()
    made += [figures.lift_forest(empty), figures.prompt_lift_dots(empty), figures.lift_trend(empty),
             figures.calibration_heatmap(empty), figures.pair_outcomes(empty), figures.prompt_moves(empty),
             figures.activation_breakdown(empty), figures.verdict_breakdown(empty)]
    assert all(isinstance(fig, Figure) for fig in made)
    for fig in made:
        fig.canvas.draw()  # renders without error


def test_trend_bands_follow_the_week_over_week_rule(weeks):
    bands = figures.trend_bands(weeks.history)
    for _, g in bands.groupby("model"):
        g = g.reset_index(drop=True)
        assert pd.isna(g.loc[0, "band_low"])  # no band before a previous week exists
        for i in range(1, len(g)):
            centre = (g.loc[i, "band_low"] + g.loc[i, "band_high"]) / 2
            assert centre == pytest.approx(g.loc[i - 1, "must_lift"])
            half = (g.loc[i, "band_high"] - g.loc[i, "band_low"]) / 2
            within = figures.Z95 * (g.loc[i, "must_lift_se"] ** 2 + g.loc[i - 1, "must_lift_se"] ** 2) ** 0.5
            assert half >= within - 1e-12


def test_markdown_pages_render_tables_and_escape_answers(tmp_path):
    from skillbench.report import pages as report

    md = tmp_path / "scorecard.md"
    md.write_text("# T\n\n| item | evidence |\n|---|---|\n| avoid | <script>alert(1)</script> |\n")
    page = report.write_markdown_page(md, tmp_path / "scorecard.html", title="T").read_text()
    assert "<table>" in page and "<script>alert" not in page and "&lt;script&gt;" in page


def test_week_notes_say_simulated_and_why_the_local_sandbox():
    notes = weekly._notes({"endpoint_kind": "simulated", "sandbox": "local", "sandboxes_used": ["local"],
                           "sandbox_requested": None})
    assert any(n.startswith("Simulated endpoint") for n in notes)
    assert any("local sandbox" in n and "no Docker engine answered" in n for n in notes)
    notes = weekly._notes({"endpoint_kind": "real", "sandbox": "docker", "sandboxes_used": ["docker"]})
    assert notes == []
