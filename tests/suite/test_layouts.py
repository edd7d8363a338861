"""The suite-format registry (skillbench.suite._layouts): detection (data-driven), the built-ins, the docs table, and
a format added by one decorated class that preflight, ``validate --format`` and the table pick up."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillbench.cli import main
from skillbench.suite import (
    FORMATS,
    FileField,
    Layout,
    PreflightReport,
    Suite,
    SuiteConfig,
    SuiteOverrides,
    SuiteRepo,
    SuiteRoots,
    VersionError,
    _layouts as registry,
    detect_format,
    git,
    is_suite,
    layout_named,
    layouts_table,
    preflight,
    register_layout,
    registered_layouts,
)
from tests.helpers.shared import ROOT

CASES = json.loads((Path(__file__).parent / "layout_cases.json").read_text(encoding="utf-8"))["cases"]


def _tree(root: Path, files: list[str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel in files:
        path = root / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")
    return root


@pytest.mark.parametrize("case", CASES, ids=[c["why"][:50] for c in CASES])
def test_detection_cases(case: dict, tmp_path: Path) -> None:
    folder = _tree(tmp_path / "suite", case["files"])
    assert detect_format(folder) == case["format"], case["why"]
    assert is_suite(folder) is case["is_suite"], case["why"]


def test_the_builtins_in_detection_order() -> None:
    assert [layout.name for layout in registered_layouts()] == ["qdrant", "dotnet", "skill-creator"]
    assert list(FORMATS) == ["qdrant", "dotnet", "skill-creator"] and "dotnet" in FORMATS and len(FORMATS) == 3
    assert [layout.absence_rule for layout in registered_layouts()] == [False, True, True]  # ours: opt in per item
    for layout in registered_layouts():
        assert layout_named(layout.name) is layout
        assert layout.detected_by and layout.loads and layout.roots_doc and layout.fields


def test_an_unknown_format_is_one_line_naming_the_choices() -> None:
    choices = "qdrant, dotnet, skill-creator"
    with pytest.raises(ValueError, match=rf"^unknown suite format 'nope' \(use one of: {choices}\)$"):
        preflight(ROOT / "evals", SuiteOverrides(format="nope"))


def test_the_layout_that_loads_a_suite_is_the_one_it_records() -> None:
    report = preflight(ROOT / "evals")
    assert report.suite.layout == "qdrant" and report.ok()
    roots = layout_named("qdrant").roots(report.suite)
    assert roots.suite == (ROOT / "evals").resolve() and roots.skills == report.suite.skills_root
    assert all(p.is_dir() for p in roots.fixtures)


def test_layouts_table_has_a_row_per_layout_and_its_fields() -> None:
    table = layouts_table()
    lines = table.strip().splitlines()
    assert lines[0] == "| Format | Detected when | Roots (suite, skills, fixtures) | Loads | File fields |"
    assert lines[1] == "| --- | --- | --- | --- | --- |"
    rows = lines[2:]
    assert [r.split(" | ")[0] for r in rows] == ["| `qdrant`", "| `dotnet`", "| `skill-creator`"]
    for row, layout in zip(rows, registered_layouts(), strict=True):
        cells = [c for c in row.replace("\\|", "").split("|")[1:-1]]
        assert len(cells) == 5, row  # a | inside a cell is escaped, so the table keeps its columns
        for f in layout.fields:
            assert f"`{f.field}`".replace("|", "\\|") in row
    assert "absence rule" in rows[1] and "absence rule" not in rows[0]


def test_the_table_is_exposed_at_the_package_front() -> None:
    from skillbench import suite

    assert suite.layouts_table() == layouts_table()


def test_building_the_parser_imports_no_layout_module() -> None:
    """``--format``'s choices and help are read from the registry only when used (startup stays as fast)."""
    code = ("import sys, skillbench.cli as c; c.build_parser(); "
            "print(sorted(m for m in sys.modules if m in " + repr(registry.BUILTIN_MODULES) + "))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_validate_help_lists_every_layout_and_its_detection(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["validate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "one of qdrant, dotnet, skill-creator" in out
    assert "qdrant when the folder holds" in out and "dotnet when the folder holds" in out and "else qdrant)" in out


# -- a format added by one module ---------------------------------------------------------------------------------


class _ToyReport(PreflightReport):
    def summary(self) -> str:
        return f"Checked {len(self.suite.prompts)} toy prompts"


@pytest.fixture
def toy() -> Iterator[type[Layout]]:
    """A format defined the way a new module would define it, unregistered afterwards."""

    @register_layout
    class ToyLayout(Layout):
        name = "toy"
        detected_by = "the folder holds `toy.txt`"
        loads = "nothing"
        roots_doc = "suite: `DIR`; skills: `DIR/skills`"
        fields = (FileField("toy.txt", "line | cell", "a field whose name has a pipe"),)

        def detect(self, folder: Path) -> bool:
            return (folder / "toy.txt").is_file()

        def preflight(self, suite_dir: Path, **options) -> PreflightReport:
            suite = Suite(suite_dir=suite_dir.resolve(), config=SuiteConfig(), skills_root=suite_dir / "skills",
                          site_base="", heldout_prefixes=(), layout=self.name)
            return _ToyReport(suite)

        def archived(self, roots: SuiteRoots) -> tuple[Path, ...]:
            return (roots.suite, roots.suite.parent / "shared")

    try:
        yield ToyLayout
    finally:
        registry._REGISTRY.pop("toy", None)


def test_a_registered_format_is_detected_validated_and_tabled(toy, tmp_path: Path, capsys) -> None:
    folder = _tree(tmp_path / "suite", ["toy.txt", "test-prompts/"])
    assert detect_format(folder) == "qdrant", "a built-in is tried first"
    folder = _tree(tmp_path / "other", ["toy.txt"])
    assert detect_format(folder) == "toy" and is_suite(folder)
    assert preflight(folder).summary() == "Checked 0 toy prompts"
    assert main(["validate", str(folder), "--format", "toy"]) == 0
    assert capsys.readouterr().out.strip() == "Checked 0 toy prompts"
    assert "| `toy` |" in layouts_table() and "line \\| cell" in layouts_table()
    with pytest.raises(ValueError, match="registered twice"):
        register_layout(type("Again", (toy,), {}))


def test_a_ref_is_materialised_from_what_the_layout_archives(toy, tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", ["evals/toy.txt", "shared/data.txt", "other/x.txt"])
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"]):
        git(repo, *args)
    suite = preflight(repo / "evals").suite
    at = SuiteRepo.of(suite)
    assert at.rel == "evals" and at.archived == ("evals", "shared")
    copy = at.materialize(str(git(repo, "rev-parse", "HEAD")), tmp_path / "cache")
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()) == [
        "evals/toy.txt", "shared/data.txt"]


def test_a_root_outside_the_repository_is_one_line(toy, tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", ["toy.txt"])
    git(repo, "init", "-q")
    with pytest.raises(VersionError, match=r"^\.\./shared: the toy suite reads it, but it lies outside the git "):
        SuiteRepo.of(preflight(repo).suite)
