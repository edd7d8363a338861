"""The identifiers pass over a week: every graded answer checked against the suite's declared surfaces, one group
per answer in ``identifiers.csv``, resumable and idempotent, a suite without ``[[api]]`` one note; the ledger's
reader refuses a damaged file; the sim's code pools are what the detector says they are.

The pass's surface is a small installed library (``lazy_loader``, the package fronts' loader) built once per module
into a private cache; the pool test reads the bundled suite's real surfaces, which ``make setup`` caches.
"""

from __future__ import annotations

import json
import shutil
from importlib.metadata import version
from pathlib import Path

import pandas as pd
import pytest

from skillbench.identifiers import IdentifierOptions, Surfaces, build_surface, check_answer, check_week
from skillbench.judge import select_runs
from skillbench.ledgers import (
    IDENTIFIERS_COLUMNS,
    IDENTIFIERS_FILE,
    IDENTIFIERS_PASS_FILE,
    LedgerError,
    open_week_views,
    read_identifiers,
)
from skillbench.runtime import PassContext
from skillbench.scorecard._fabrication import fabrication_check, fabrication_markdown
from skillbench.suite import ApiSettings

TINY_WEEK = Path(__file__).resolve().parents[1] / "data" / "tiny-week" / "20261130"
LAZY = ApiSettings(package="lazy_loader", version=version("lazy_loader"))
CODE = ("Here is the loader.\n\n```python\nimport lazy_loader as lazy\n"
        "__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)\n"
        "mod = lazy.load_everything('json')\n```\n\nAnd `lazy.attach(name)` inline, and a Go line:\n\n"
        "```go\nfmt.Println(lazy.Missing)\n```\n")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cache")
    build_surface(LAZY, root / "surfaces")
    return root


def _suite(folder: Path, api: bool = True) -> Path:
    folder.mkdir()
    toml = "[suite]\nskills_root = \"skills\"\n"
    if api:
        toml += f'\n[[api]]\npackage = "lazy_loader"\nversion = "{LAZY.version}"\n'
    (folder / "skillbench.toml").write_text(toml, encoding="utf-8")
    return folder


def _answer(run_dir: Path, run_id: str, text: str) -> None:
    """Replace a run's final answer (the transcript's result event)."""
    path = run_dir / run_id / "transcript.jsonl"
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    next(e for e in reversed(events) if e.get("type") == "result")["result"] = text
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")


@pytest.fixture
def week(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLBENCH_CACHE", str(cache))
    run_dir = Path(shutil.copytree(TINY_WEEK, tmp_path / "week"))
    for name in (IDENTIFIERS_FILE, IDENTIFIERS_PASS_FILE):
        (run_dir / name).unlink(missing_ok=True)
    return run_dir


def _rows(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / IDENTIFIERS_FILE, dtype=str, keep_default_na=False)


def test_every_graded_answer_is_checked_once_and_a_rerun_keeps_every_row(week: Path, tmp_path: Path) -> None:
    runs, _ = select_runs(week)
    target = next(r for r in runs if r.condition == "with-skill")
    _answer(week, target.run_id, CODE)
    opts = IdentifierOptions(suite_dir=_suite(tmp_path / "suite"))
    report = check_week(week, opts, PassContext(log=lambda _: None))
    assert (report.declared, report.checked, report.kept) == (True, len(runs), 0)
    rows = _rows(week)
    assert sorted(rows.loc[rows["row"].eq("run"), "run_id"]) == sorted(r.run_id for r in runs), \
        "one run row per graded answer, an answer without identifiers too"
    mine = rows[rows["run_id"].eq(target.run_id) & rows["row"].eq("identifier")].set_index("text")
    assert mine.loc["lazy.attach_stub", "status"] == "resolved"
    assert mine.loc["lazy.load_everything", "status"] == "unresolved"
    assert mine.loc["lazy.load_everything", "quote"] == "mod = lazy.load_everything('json')"
    assert (mine["surface"].eq(f"lazy_loader=={LAZY.version}") | mine["status"].eq("unchecked")).all()
    assert report.unresolved == 1
    record = json.loads((week / IDENTIFIERS_PASS_FILE).read_text())
    assert record["complete"] and record["surfaces"][0]["cached"] and not record["gate_fabrication"]
    before = (week / IDENTIFIERS_FILE).read_bytes()
    again = check_week(week, opts, PassContext(log=lambda _: None))
    assert (again.checked, again.kept) == (0, len(runs)) and (week / IDENTIFIERS_FILE).read_bytes() == before
    # a kill mid-write: the torn last group is dropped and checked again, nothing else is lost or doubled
    (week / IDENTIFIERS_FILE).write_bytes(before[:-7])
    with pytest.raises(LedgerError, match="cut"):
        read_identifiers(week)
    resumed = check_week(week, opts, PassContext(log=lambda _: None))
    assert resumed.checked == 1 and (week / IDENTIFIERS_FILE).read_bytes() == before


def test_the_week_reads_into_the_section(week: Path, tmp_path: Path) -> None:
    runs, _ = select_runs(week)
    for run in runs:
        if run.condition == "no-skill":
            _answer(week, run.run_id, CODE)
    check_week(week, IdentifierOptions(suite_dir=_suite(tmp_path / "suite")), PassContext(log=lambda _: None))
    manifest = pd.DataFrame({"run_id": [r.run_id for r in runs]})
    from skillbench.arms import DEFAULT_PAIR

    f = fabrication_check(read_identifiers(week), manifest, DEFAULT_PAIR, ["sonnet", "haiku"])
    arms = f.arms.set_index(["model", "condition"])
    assert arms.xs("no-skill", level="condition")["rate"].eq(1.0).all()
    assert arms.xs("with-skill", level="condition")["fabricated"].eq(0).all()
    assert f.delta["delta"].eq(-1.0).all() and (f.delta["n_prompts"] == 2).all()
    page = fabrication_markdown(f, DEFAULT_PAIR)
    assert "lazy.load\\_everything" in page or "lazy.load_everything" in page
    # the same rows in SQL over the weeks (the ``identifiers`` view)
    con = open_week_views(week.parent, "tiny")
    answers, unresolved = con.execute("SELECT count(*) FILTER (WHERE row = 'run'), count(*) FILTER (WHERE status = "
                                      "'unresolved') FROM identifiers").fetchone()
    assert (answers, unresolved) == (len(runs), int(f.arms["unresolved"].sum()))


def test_a_suite_without_api_is_one_note_and_never_reads_as_checked(week: Path, tmp_path: Path) -> None:
    lines: list[str] = []
    report = check_week(week, IdentifierOptions(suite_dir=_suite(tmp_path / "suite", api=False)),
                        PassContext(log=lines.append))
    assert not report.declared and not lines and "declares no API surface" in report.line()
    assert not (week / IDENTIFIERS_FILE).exists()
    checked = read_identifiers(week)
    assert checked is not None and not checked.declared and checked.runs.empty
    # a week that names no suite (qdrant's published layout: no run.json) says so, also without an error
    (week / "run.json").unlink()
    report = check_week(week, IdentifierOptions(), PassContext(log=lines.append))
    assert not report.declared and "names no suite" in report.note


def test_another_surface_checks_every_answer_again(week: Path, tmp_path: Path) -> None:
    opts = IdentifierOptions(suite_dir=_suite(tmp_path / "suite"))
    first = check_week(week, opts, PassContext(log=lambda _: None))
    record = json.loads((week / IDENTIFIERS_PASS_FILE).read_text())
    (week / IDENTIFIERS_PASS_FILE).write_text(json.dumps(record | {"fingerprint": "another"}))
    again = check_week(week, opts, PassContext(log=lambda _: None))
    assert (again.checked, again.kept) == (first.checked, 0) and "afresh" in again.note
    assert _rows(week)["row"].eq("run").sum() == first.checked, "no answer twice"


@pytest.mark.parametrize(("edit", "words"), [
    (lambda rows: pd.concat([rows, rows[rows["row"].eq("run")].head(1)]), "checked twice"),
    (lambda rows: rows[~(rows["row"].eq("run") & rows["run_id"].eq(rows.loc[rows["row"].eq("identifier"),
                                                                          "run_id"].iloc[0]))],
     "without its 'run' row"),
    (lambda rows: rows.assign(row=rows["row"].replace("run", "answer")), "column 'row'"),
])
def test_the_reader_refuses_a_damaged_ledger_in_one_line(tmp_path: Path, edit, words: str) -> None:
    """(The reader needs the pass's two files only: a hand-made ledger of one answer with two identifiers.)"""
    blank = dict.fromkeys(IDENTIFIERS_COLUMNS, "")
    ident = blank | {"run_id": "r1", "prompt": "p", "skill_family": "f", "model": "m", "condition": "no-skill",
                     "rep": "1"}
    rows = pd.DataFrame([ident | {"row": "run"},
                         *(ident | {"row": "identifier", "text": t, "status": "resolved"} for t in ("a", "b"))])
    (tmp_path / IDENTIFIERS_PASS_FILE).write_text(json.dumps({"surfaces": []}))
    rows.to_csv(tmp_path / IDENTIFIERS_FILE, index=False)
    assert len(read_identifiers(tmp_path).identifiers) == 2
    edit(rows).to_csv(tmp_path / IDENTIFIERS_FILE, index=False)
    with pytest.raises(LedgerError, match=words) as err:
        read_identifiers(tmp_path)
    assert "\n" not in str(err.value)


def test_the_sims_code_pools_are_what_the_detector_says(bundled_surfaces: Surfaces) -> None:
    """Every real line of the simulated answers resolves (or is unchecked), every fabricated line is flagged: against
    the bundled suite's surfaces, which `make setup` caches (the ``bundled_surfaces`` fixture skips outside CI
    without them, fails in CI)."""
    from skillbench.sim._answers import LIBRARY_CODE

    for name, lib in LIBRARY_CODE.items():
        for line in lib.real:
            found = check_answer(f"```python\n{lib.imports}\n{line}\n```\n", bundled_surfaces)
            assert not [i.text for i in found if i.status == "unresolved"], (name, line)
        for line in lib.fabricated:
            found = check_answer(f"```python\n{lib.imports}\n{line}\n```\n", bundled_surfaces)
            assert [i.text for i in found if i.status == "unresolved"], (name, line)


def test_a_week_generated_with_config_reads_its_api_from_that_file(week: Path, tmp_path: Path) -> None:
    """qdrant's repository commits no skillbench.toml: a week generated with ``--config FILE`` records the file in
    run.json, and the passes after generation (this one, the judge's [judge] table) read the same file."""
    from skillbench.suite import ConfigError, week_config
    from skillbench.weekly import StageError
    from skillbench.weekly._stages import judge_settings

    declared = _suite(tmp_path / "elsewhere") / "skillbench.toml"
    bare = tmp_path / "repo"
    bare.mkdir()  # the suite folder itself has no config
    run = json.loads((week / "run.json").read_text())
    (week / "run.json").write_text(json.dumps({**run, "suite_dir": str(bare), "config_file": str(declared)}))
    report = check_week(week, IdentifierOptions(), PassContext(log=lambda _: None))
    assert report.declared and report.checked > 0
    assert week_config({"suite_dir": str(bare)})[0].api == []  # without the record: the folder's defaults
    declared.unlink()  # a recorded file that is gone is one line, never the defaults read silently
    with pytest.raises(ConfigError, match="does not exist"):
        week_config({"suite_dir": str(bare), "config_file": str(declared)})
    with pytest.raises(StageError, match="does not exist"):
        judge_settings(week)
