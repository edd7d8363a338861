"""The weekly notebook chain: notebook conventions, the whole chain on the tiny suite, resume, a failing stage,
nbval over the notebooks with their defaults, and the helpers and figures the notebooks call.

The chain runs once per session (the ``tiny_chain`` fixture, ``tests/conftest.py``): the tiny suite with one model
and one rep (8 runs) on the simulated endpoint, Docker when the engine answers, else the local sandbox. It needs
the pinned CLI and the ``skillbench`` kernel, which ``make setup`` installs; outside CI their absence skips, in CI
it fails. Each figure test checks that the figure plots its input frame's values (bar widths, point offsets,
line data, heatmap cells), not only that a Figure came back.
"""

from __future__ import annotations

import ast
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pandas as pd
import papermill as pm
import pytest
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

from skillbench import weekly
from skillbench.report import figures
from skillbench.suite import load_suite
from skillbench.weekly import STAGES, WeeklyOptions, notebook_parameters, run_weekly
from skillbench.weekly._chain import stage_parameters
from skillbench.weekly._week_pages import report_notes as _notes
from tests.helpers.shared import ROOT, TINY_SUITE, TINY_WEEK
from tests.helpers.weekly import RUN_KEY, require_kernel

NOTEBOOKS = ROOT / "notebooks"
ALL_NOTEBOOKS = sorted(NOTEBOOKS.glob("*.ipynb"))
JSON_TYPES = (str, int, float, bool, list, dict)
EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']https?://|url\(\s*["']?https?://|@import""", re.I)


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
    params = stage_parameters(WeeklyOptions(), suite_dir=TINY_SUITE, run_dir=TINY_SUITE / "weekly" / "k",
                                     history=TINY_SUITE / "weekly" / "h.csv", backend="sim", endpoint="http://x",
                                     sandbox="local")
    for stage in STAGES:
        declared = notebook_parameters(NOTEBOOKS / stage.notebook)
        for name in declared:
            if name.endswith(("_dir", "_path")) or name in ("run_key", "backend", "endpoint", "write", "dry_run",
                                                             "wait", "allow_dirty"):
                assert name in params, f"{stage.id}: the chain does not pass {name}"
        assert type(params.get("write", False)) is bool
        if stage.id != "00_preflight":  # every later stage writes the week's ledgers under its lock
            assert "wait" in declared, f"{stage.id} cannot be told to wait for another pass (weekly --wait)"


def test_weekly_s_wait_and_allow_dirty_reach_the_stages():
    """What a stage's refusal suggests (rerun with --wait; --allow-dirty for a dirty HEAD) weekly accepts and
    passes on."""
    from skillbench.cli import build_parser

    args = build_parser().parse_args(["weekly", "--wait", "--allow-dirty"])
    assert args.wait and args.allow_dirty
    params = stage_parameters(WeeklyOptions(wait=True, allow_dirty=True), suite_dir=TINY_SUITE,
                              run_dir=TINY_SUITE / "weekly" / "k", history=TINY_SUITE / "weekly" / "h.csv",
                              backend="sim", endpoint="http://x", sandbox="local")
    assert params["wait"] is True and params["allow_dirty"] is True
    assert "allow_dirty" in notebook_parameters(NOTEBOOKS / "01_generate.ipynb")


# --- the chain on the tiny suite --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chain(tiny_chain) -> dict[str, Any]:
    """The session's chain on the tiny suite (``tests/conftest.py``)."""
    return tiny_chain


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


PROGRESS = re.compile(r"\| *(\d+)/(\1) \[\d\d:\d\d<\d\d:\d\d, +[\d.?]+ ?(s/run|run/s|s/pair|pair/s)\]$")


def test_chain_relays_live_progress_of_generation_and_judging(chain):
    """The chain's terminal shows each long stage's progress bar (done / total, rate, ETA) while it runs."""
    lines: list[str] = chain["log"]
    for stage, bar in (("01_generate", f"generate {RUN_KEY}: "), ("03_judge", "judge: "),
                       ("03_judge", "judge-pairs: ")):
        start, end = lines.index(f"weekly {RUN_KEY}: {stage} …"), next(
            i for i, line in enumerate(lines) if line.startswith(f"weekly {RUN_KEY}: {stage} ok"))
        relayed = [line for line in lines[start:end] if line.startswith(f"weekly {RUN_KEY}: {stage}: {bar}")]
        assert relayed, f"no progress line of {bar.strip()} relayed during {stage}: {lines}"
        assert PROGRESS.search(relayed[-1]), relayed[-1]  # the stage's final state: every run done
    assert not any("claude -p" in line for line in lines)
    assert not (chain["result"].report_dir / ".progress").exists()


def test_the_cli_preview_stays_in_the_notebook_not_on_the_terminal(tmp_path):
    """01_generate shows the next runs' ``claude -p …`` lines in the notebook; the chain relays none of them."""
    require_kernel()
    relayed = io.StringIO()
    opts = WeeklyOptions(stream=relayed, notebooks_dir=NOTEBOOKS)
    params = {"run_key": "pv", "suite_dir": str(TINY_SUITE), "run_dir": str(tmp_path / "pv"), "dry_run": True}
    result = weekly.execute_stage(STAGES[1], params, opts, tmp_path)
    assert result.status == "ok", result.error
    nb = nbformat.read(str(tmp_path / STAGES[1].notebook), as_version=4)
    shown = "\n".join(str(o.get("data", {}).get("text/markdown", "")) for c in nb.cells if c.cell_type == "code"
                      for o in c.outputs)
    assert "claude -p --no-session-persistence" in shown
    assert "claude -p" not in relayed.getvalue()
    assert not (tmp_path / "pv").exists(), "a dry run writes nothing"


def test_a_second_chain_of_one_run_key_is_refused(tmp_path, capsys):
    """The chain holds its report folder's lock (never the run directory's: each stage takes that in its kernel)."""
    require_kernel()
    from skillbench.cli import main

    suite = Path(shutil.copytree(TINY_SUITE, tmp_path / "suite"))
    hold = ("import sys, time\nfrom skillbench.ledgers import run_dir_lock\n"
            "with run_dir_lock(sys.argv[1], command='another skillbench weekly'):\n"
            "    print('locked', flush=True)\n    time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", hold, str(tmp_path / "reports" / "busy")],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "locked"
        code = main(["weekly", "--suite", str(suite), "--reports", str(tmp_path / "reports"), "--run-key", "busy",
                     "--backend", "sim", "--quiet"])
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"PID {holder.pid}" in err[0], err
    assert "another skillbench weekly" in err[0]
    assert not (suite / "weekly").exists(), "nothing written"


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

    with pytest.raises(SystemExit) as refused:  # argparse refuses the run key (ledgers.check_run_key) itself
        main(["weekly", "--run-key", "../escape", "--suite", str(TINY_SUITE)])
    assert refused.value.code == 2
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
    ok = movers.dropna(subset=["p_value"])
    # the raw p is the band's verdict; moved is the Benjamini–Hochberg-adjusted one (never more than the raw)
    assert ((ok["p_value"] < 0.05) == (ok["delta"].abs() > ok["threshold"])).all()
    assert ((ok["moved"] == "yes") == (ok["p_adjusted"] <= 0.05)).all()
    assert (ok["p_adjusted"] >= ok["p_value"] - 1e-12).all()
    assert (ok["threshold"] >= ok[["within", "between"]].max(axis=1) - 1e-12).all()
    assert movers["delta"].abs().is_monotonic_decreasing
    # Comparing a week with itself moves nothing.
    same = weekly.prompt_movers(weeks, run_key=weeks.keys[-1], previous=weeks.keys[-1])
    assert (same["delta"] == 0).all()


def test_activation_by_week_and_never_triggered(weeks):
    table = weekly.activation_by_week(weeks)
    assert set(table["run_key"]) == set(weeks.keys)
    assert ((table["activations"] <= table["runs"]) & (table["false_triggers"] <= table["dormancy_runs"])).all()
    known = table[table["runs"] > 0]  # every activation rate carries its interval (issue 31)
    assert ((known["low"] <= known["rate"]) & (known["rate"] <= known["high"])).all()
    # A family that never triggers shows up; build one by blanking the dates family's activations.
    blank = weekly.Weeks(weeks.keys, weeks.runs.assign(
        skill_activation=weeks.runs["skill_activation"].where(weeks.runs["skill_family"] != "dates", "none")),
        weeks.prompts, weeks.paired, weeks.history)
    never = weekly.never_triggered_in_weeks(blank)
    assert ("family", "dates") in set(zip(never["level"], never["name"], strict=True))
    per_family = table.groupby("skill_family")["activations"].sum()
    real = weekly.never_triggered_in_weeks(weeks)
    assert set(real.loc[real["level"] == "family", "name"]) == set(per_family[per_family == 0].index)


def test_markdown_sections_demotes_headings():
    md = "# T\n\n## Lift per model (x)\nbody\n### sub\n## Coverage\nc\n"
    assert weekly.markdown_sections(md, "Lift per model") == "#### Lift per model (x)\nbody\n##### sub\n"


@pytest.fixture(scope="module")
def latest(weeks) -> dict[str, Any]:
    """The committed latest week as the notebooks see it: scorecard frames, judge and calibration tables."""
    run_dir = TINY_WEEK / weeks.keys[-1]
    sc = weekly.scorecard_week(run_dir, TINY_WEEK / "scorecard-history.csv", n_resamples=200)
    return {"frames": sc.frames, "manifest": sc.data.manifest, "judge": weekly.judge_tables(run_dir),
            "calibration": weekly.calibration_tables(run_dir)}


def _renders(fig: Figure) -> Figure:
    """The figure is a Figure and renders to PNG without error."""
    assert isinstance(fig, Figure)
    fig.savefig(io.BytesIO(), format="png")
    return fig


def _ticks(labels) -> list[str]:
    return [t.get_text() for t in labels]


def _bars(ax) -> dict[str, list[float]]:
    """Bar widths of a horizontal stacked bar chart, by bar label (one BarContainer per ``barh`` call)."""
    return {c.get_label(): [r.get_width() for r in c] for c in ax.containers}


def _points(ax) -> np.ndarray:
    """Every scatter/strip point offset of an axis, one row per point."""
    offsets = [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets())]
    return np.concatenate(offsets) if offsets else np.empty((0, 2))


def test_lift_forest_plots_each_models_lift_its_clipped_interval_and_the_bootstrap_band(latest):
    lift, boot = latest["frames"]["lift"], latest["frames"]["uncertainty"].set_index("model")
    ax = _renders(figures.lift_forest(lift, latest["frames"]["uncertainty"])).axes[0]
    y = dict(zip(_ticks(ax.get_yticklabels()), ax.get_yticks(), strict=True))
    assert set(y) == set(lift["model"])
    for rec in lift.itertuples():
        at = [ln for ln in ax.lines if len(ln.get_ydata()) and np.allclose(ln.get_ydata(), y[rec.model])]
        diamond = [ln for ln in at if ln.get_marker() == "D"]
        assert len(diamond) == 1 and diamond[0].get_xdata() == pytest.approx([rec.paired_lift])  # the headline
        interval = [ln for ln in at if ln.get_marker() in ("None", None, "")]
        assert len(interval) == 1
        assert interval[0].get_xdata() == pytest.approx([max(rec.ci_low, -1.0), min(rec.ci_high, 1.0)])
        band = [ln for ln in ax.lines if np.allclose(ln.get_ydata(), y[rec.model] - 0.18)]
        if not np.isfinite(boot.loc[rec.model, "boot_low"]):  # BCa needs >= 3 prompts: no band is drawn
            assert band == []
            continue
        assert len(band) == 1
        assert band[0].get_xdata() == pytest.approx([boot.loc[rec.model, "boot_low"], boot.loc[rec.model, "boot_high"]])
    assert (lift["ci_low"] < -1).any(), "the committed week has an interval to clip"


def test_prompt_lift_dots_plot_each_prompts_lift_on_its_row(latest):
    paired = latest["frames"]["paired"]
    ax = _renders(figures.prompt_lift_dots(paired)).axes[0]
    rows = _ticks(ax.get_yticklabels())
    assert rows == list(paired.groupby("prompt")["d"].mean().sort_values(ascending=False).index)
    points = _points(ax)
    plotted = sorted((rows[round(yv)], round(xv, 9)) for xv, yv in points)
    assert plotted == sorted((p, round(d, 9)) for p, d in zip(paired["prompt"], paired["d"], strict=True))


def test_cost_vs_lift_plots_the_scorecards_cost_deltas_against_the_lift(latest):
    frames = latest["frames"]
    paired, deltas, lift = frames["paired"], frames["prompt_cost_deltas"], frames["lift"]
    ax = _renders(figures.cost_vs_lift(paired, deltas, lift)).axes[0]
    per_prompt, *overall = [c.get_offsets() for c in ax.collections]
    expected = paired.merge(deltas, on=["model", "prompt"])
    assert len(expected) == len(paired) > 0
    assert sorted(map(tuple, np.round(per_prompt, 9))) == sorted(zip(expected["cost_delta"].round(9),
                                                                     expected["d"].round(9), strict=True))
    assert sorted(tuple(np.round(o[0], 9)) for o in overall) == sorted(zip(lift["cost_delta"].round(9),
                                                                         lift["must_lift"].round(9), strict=True))


def test_activation_breakdown_bars_are_each_routes_share_per_family(latest):
    m = latest["manifest"]
    fig = _renders(figures.activation_breakdown(m))
    families = sorted(m["skill_family"].unique())
    skilled = m["condition"].isin(["with-skill", "plugin"])
    panels = [m[m["condition"].eq("with-skill") & ~m["dormancy"]], m[m["condition"].eq("plugin") & ~m["dormancy"]],
              m[m["dormancy"] & skilled]]
    panels = [d for d in panels if not d.empty]
    assert len(fig.axes) == len(panels) == 3
    assert _ticks(fig.axes[0].get_yticklabels()) == families
    for ax, d in zip(fig.axes, panels, strict=True):
        bars = _bars(ax)
        assert set(bars) == set(m["skill_activation"])
        for i, family in enumerate(families):
            runs = d[d["skill_family"] == family]
            for route, widths in bars.items():
                share = (runs["skill_activation"] == route).mean() if len(runs) else 0.0
                assert widths[i] == pytest.approx(share), (family, route)


def test_lift_trend_plots_each_weeks_lift_its_error_bar_and_the_exact_latest_band(latest):
    history, wow = latest["frames"]["history"], latest["frames"]["week_over_week"].set_index("model")
    fig = _renders(figures.lift_trend(history, latest["frames"]["week_over_week"]))
    kind = history.sort_values("window_end")["endpoint"].iloc[-1]
    h = history[history["endpoint"] == kind].sort_values(["window_end", "run_key"])
    assert [ax.get_title(loc="left") for ax in fig.axes] == list(dict.fromkeys(h["model"]))
    for ax in fig.axes:
        model = ax.get_title(loc="left")
        rows = h[h["model"] == model]
        (container,) = ax.containers
        data_line, _, (bars,) = container.lines
        assert list(data_line.get_ydata()) == pytest.approx(list(rows["must_lift"]))
        assert _ticks(ax.get_xticklabels()) == list(rows["run_key"])
        half = [abs(seg[1][1] - seg[0][1]) / 2 for seg in bars.get_segments()]
        assert half == pytest.approx(list(figures.Z95 * rows["must_lift_se"]))
        # The latest week's band is the week-over-week table's exact threshold around the previous lift.
        last = [c for c in ax.collections if c is not bars][-1].get_paths()[0].vertices[:, 1]
        rec = wow.loc[model]
        assert (last.min(), last.max()) == pytest.approx((rec["prev_lift"] - rec["threshold"],
                                                          rec["prev_lift"] + rec["threshold"]))


def test_calibration_heatmap_cells_are_the_kappas_and_the_confusion_counts(latest):
    agreement = latest["calibration"]["agreement"]
    fig = _renders(figures.calibration_heatmap(agreement))
    grid_ax, confusion_ax = fig.axes[:2]
    columns = _ticks(grid_ax.get_xticklabels())
    assert columns == [t for t in ("must", "bonus", "avoid", "all") if t in set(agreement["item_type"])]
    cells = np.ma.filled(grid_ax.collections[0].get_array(), np.nan).reshape(-1, len(columns))
    assert cells.shape[0] == len(agreement.drop_duplicates(["comparison", "rater_a", "rater_b"]))
    kappa = agreement["cohen_kappa"].where(agreement["rater_b"].astype(str) != "", agreement["fleiss_kappa"])
    for j, item_type in enumerate(columns):
        plotted = sorted(v for v in cells[:, j] if np.isfinite(v))
        assert plotted == pytest.approx(sorted(kappa[agreement["item_type"] == item_type].dropna()))
    first = agreement[(agreement["rater_b"].astype(str) != "") & (agreement["item_type"] == "all")].iloc[0]
    counts = np.asarray(confusion_ax.collections[0].get_array()).reshape(2, 2)
    assert counts.tolist() == [[first["true_positive"], first["false_negative"]],
                               [first["false_positive"], first["true_negative"]]]


def test_verdict_breakdown_bars_are_each_verdicts_share_per_model_and_arm(latest):
    scores = latest["judge"]["scores"]
    fig = _renders(figures.verdict_breakdown(scores))
    types = [t for t in ("must", "bonus", "avoid") if t in set(scores["item_type"])]
    assert [ax.get_title(loc="left") for ax in fig.axes] == [f"{t} items" for t in types]
    rows = _ticks(fig.axes[0].get_yticklabels())
    for ax, item_type in zip(fig.axes, types, strict=True):
        sub = scores[scores["item_type"] == item_type]
        bars = _bars(ax)
        assert set(bars) == set(sub["verdict"])
        for i, row in enumerate(rows):
            model, condition = row.split(" · ")
            cell = sub[(sub["model"] == model) & (sub["condition"] == condition)]
            for verdict, widths in bars.items():
                assert widths[i] == pytest.approx((cell["verdict"] == verdict).mean()), (item_type, row, verdict)


def test_pair_outcomes_bars_are_the_win_tie_loss_counts(latest):
    outcomes = latest["judge"]["pair_outcomes"]
    ax = _renders(figures.pair_outcomes(outcomes)).axes[0]
    assert _ticks(ax.get_yticklabels()) == [f"{f} · {m}" for f, m in zip(outcomes["skill_family"], outcomes["model"],
                                                                         strict=True)]
    bars = _bars(ax)
    for key, label in (("W", "with-skill wins"), ("T", "tie"), ("L", "with-skill loses")):
        assert bars[label] == list(outcomes[key])
    assert sum(bars["with-skill wins"]) > 0


def test_run_durations_plot_every_runs_seconds_and_cost_under_its_model(latest):
    m = latest["manifest"]
    fig = _renders(figures.run_durations(m))
    for ax, values in zip(fig.axes, (m["duration_ms"] / 1000, m["total_cost_usd"]), strict=True):
        models = _ticks(ax.get_xticklabels())
        plotted = sorted((models[round(xv)], round(yv, 9)) for xv, yv in _points(ax))
        expected = sorted((mo, round(v, 9)) for mo, v in zip(m["model"], values, strict=True) if np.isfinite(v))
        assert plotted == expected and len(plotted) == len(m)


def test_suite_composition_bars_count_each_familys_prompts(latest):
    prompts = load_suite(TINY_SUITE).prompts_df()
    ax = _renders(figures.suite_composition(prompts)).axes[0]
    families = _ticks(ax.get_yticklabels())
    assert families == sorted(prompts["skill_family"].unique())
    bars = _bars(ax)
    for i, family in enumerate(families):
        p = prompts[prompts["skill_family"] == family]
        assert bars["held-out"][i] == p["heldout"].sum()
        assert bars["dormancy"][i] == (p["dormancy"] & ~p["heldout"]).sum()
        assert bars["lift-scored"][i] == (~p["dormancy"] & ~p["heldout"]).sum()
    assert sum(sum(w) for w in bars.values()) == len(prompts)


def test_activation_by_week_heatmap_cells_are_the_rates(weeks):
    table = weekly.activation_by_week(weeks)
    ax = _renders(figures.activation_by_week_heatmap(table)).axes[0]
    families, keys = _ticks(ax.get_yticklabels()), _ticks(ax.get_xticklabels())
    assert keys == list(weeks.keys) and set(families) == set(table["skill_family"])
    cells = np.ma.filled(ax.collections[0].get_array(), np.nan).reshape(len(families), len(keys))
    rate = table.set_index(["skill_family", "run_key"])["rate"]
    for i, family in enumerate(families):
        for j, key in enumerate(keys):
            assert cells[i, j] == pytest.approx(rate[(family, key)]), (family, key)
    # each cell's text: the rate over its 95 % interval
    bounds = table.set_index(["skill_family", "run_key"])
    texts = [t.get_text() for t in ax.texts]
    for family, key in bounds.index:
        r = bounds.loc[(family, key)]
        if r["runs"] > 0:
            assert f"{r['rate']:.2f}\n[{r['low']:.2f}, {r['high']:.2f}]" in texts, (family, key)


def test_prompt_moves_draw_each_movers_previous_and_current_lift(weeks):
    movers = weekly.prompt_movers(weeks)
    ax = _renders(figures.prompt_moves(movers)).axes[0]
    labels = _ticks(ax.get_yticklabels())
    shown = movers.head(15)
    assert sorted(labels) == sorted(f"{p} · {m}" for p, m in zip(shown["prompt"], shown["model"], strict=True))
    dumbbells = {labels[round(ln.get_ydata()[0])]: ln for ln in ax.lines
                 if len(ln.get_xdata()) == 2 and ln.get_ydata()[0] == ln.get_ydata()[1]}
    assert len(dumbbells) == len(shown)
    for rec in shown.itertuples():
        line = dumbbells[f"{rec.prompt} · {rec.model}"]
        assert list(line.get_xdata()) == pytest.approx([rec.prev_lift, rec.now_lift])
        assert (line.get_color() == "#c8553d") == (rec.moved == "yes")


@pytest.mark.parametrize("draw", [
    figures.lift_forest, figures.prompt_lift_dots, figures.lift_trend, figures.calibration_heatmap,
    figures.pair_outcomes, figures.prompt_moves, figures.activation_breakdown, figures.verdict_breakdown,
    lambda empty: figures.cost_vs_lift(empty, empty),
], ids=lambda f: getattr(f, "__name__", "figure"))
def test_an_empty_input_draws_nothing_and_says_so(draw):
    fig = _renders(draw(pd.DataFrame()))
    (ax,) = fig.axes
    assert not ax.lines and not ax.patches and not ax.collections, "nothing is plotted"
    assert len(ax.texts) == 1 and ax.texts[0].get_text(), "the figure says why it is empty"


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
    from skillbench.report import _pages as report

    md = tmp_path / "scorecard.md"
    md.write_text("# T\n\n| item | evidence |\n|---|---|\n| avoid | <script>alert(1)</script> |\n")
    page = report.write_markdown_page(md, tmp_path / "scorecard.html", title="T").read_text()
    assert "<table>" in page and "<script>alert" not in page and "&lt;script&gt;" in page


def test_week_notes_say_simulated_and_why_the_local_sandbox():
    notes = _notes({"endpoint_kind": "simulated", "sandbox": "local", "sandboxes_used": ["local"],
                           "sandbox_requested": None})
    assert any(n.startswith("Simulated endpoint") for n in notes)
    assert any("local sandbox" in n and "no Docker engine answered" in n for n in notes)
    notes = _notes({"endpoint_kind": "real", "sandbox": "docker", "sandboxes_used": ["docker"]})
    assert notes == []
