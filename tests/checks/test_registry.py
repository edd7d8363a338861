"""The check-type registry: one record per type, read by suite parsing, preflight, probes, grading, the sim and
the dotnet loaders; the docs' field table built from it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from skillbench.checks import check_types_table
from skillbench.checktypes import Check, CheckKind, check_kind, check_kinds, register
from skillbench.checktypes._registry import OPTION_NAMES, RegistryError
from skillbench.generation._workspace import probe_for
from skillbench.suite.dotnet import ASSERTIONS, GRADERS


def test_every_record_is_complete():
    for kind in check_kinds():
        assert kind.passes and kind.passes == kind.passes.strip(), kind.name
        assert set(kind.options) <= set(OPTION_NAMES), f"{kind.name}: an option that is no Check field"
        assert len(set(kind.options)) == len(kind.options), kind.name
        if kind.answer_line is not None:
            assert kind.answer_line.option in kind.needs, kind.name


def test_check_type_is_validated_against_the_registry():
    assert Check(type="file_exists", path="a").kind is check_kind("file_exists")
    with pytest.raises(ValidationError) as err:
        Check(type="file_exist", path="a")
    (error,) = err.value.errors()
    assert error["type"] == "literal_error" and error["input"] == "file_exist"  # suite.defects words it


def test_a_type_or_dotnet_name_is_declared_once():
    taken = check_kind("output_contains")
    with pytest.raises(RegistryError, match="declared twice"):
        register(taken)
    with pytest.raises(RegistryError, match="already reads as"):
        register(CheckKind("output_contains_again", ("value",), "x", taken.grade, taken.simulate,
                           dotnet=("output_contains",)))
    assert "output_contains_again" not in {k.name for k in check_kinds()}


def test_probes_follow_the_records():
    """A workspace check has a probe (its record's request turned into argv); a transcript check has none."""
    for kind in check_kinds():
        check = Check(type=kind.name, path="out.txt", command="true")
        probe = probe_for(check)
        assert (probe is not None) == kind.reads_workspace == check.in_workspace, kind.name


def test_dotnet_names_come_from_the_records():
    assert ASSERTIONS == {n: k.name for k in check_kinds() for n in k.dotnet}
    assert ASSERTIONS["exit_success"] == "output_nonempty"  # skill-validator's exit_success: produced output
    assert GRADERS == {g: (k.name, dict(c)) for k in check_kinds() for g, c in k.vally.items()}
    assert GRADERS["exit-success"][0] == "output_nonempty"  # Vally's too: "agent produced non-empty output"


def _rows(table: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in table.strip().splitlines()]


def test_check_types_table_has_one_row_per_registered_type():
    rows = _rows(check_types_table())
    assert rows[0] == ["type", "options", "passes when", "workspace probe", "dotnet names"]
    assert set(rows[1]) == {"---"}
    body = {row[0].strip("`"): row for row in rows[2:]}
    assert list(body) == sorted(k.name for k in check_kinds()), "one row per registered type, sorted by name"
    for kind in check_kinds():
        row = body[kind.name]
        assert len(row) == 5 and row[2] == kind.passes.replace("|", "\\|")
        for option in kind.needs:
            assert f"`{option}` (" in row[1]
        assert ("graded from the transcript" in row[3]) != kind.reads_workspace
        for name in kind.dotnet:
            assert f"`{name}` (skill-validator)" in row[4]


@pytest.mark.parametrize(("kind", "cell", "text"), [
    ("run_command", 1, "`timeout` (number > 0, optional)"),
    ("max_turns", 1, "`turns` (integer ≥ 1)"),
    ("expect_tools", 1, "`tools` (list of string)"),
    ("file_contains", 3, "a glob: the names and bytes of the files it matches"),
    ("file_exists", 3, "a glob: the names of the files it matches"),
    ("output_nonempty", 4, "`exit_success` (skill-validator)"),
    ("run_command", 4, "`run-command` (Vally)"),
    ("file_not_contains", 1, "`case_sensitive` (boolean, optional)"),
    ("output_contains", 2, "case-insensitive unless `case_sensitive`"),
])
def test_check_types_table_cells(kind, cell, text):
    row = next(r for r in _rows(check_types_table())[2:] if r[0] == f"`{kind}`")
    assert text in row[cell]


# Vally's grader catalog (https://microsoft.github.io/vally/reference/graders/) and skill-validator's assertion
# types (EvalSchema.ParseAssertion): the names their sources define, read here or refused on purpose
VALLY_CATALOG = ("completed", "error-count", "exit-success", "file-contains", "file-exists", "file-matches",
                 "file-not-contains", "file-not-exists", "file-not-matches", "output-contains", "output-matches",
                 "output-not-contains", "output-not-matches", "pairwise", "panel", "program", "prompt",
                 "run-command", "skill-invocation", "token-budget", "tool-call-count", "tool-calls", "turn-count",
                 "wall-time", "custom-metrics")  # custom-metrics: Vally 0.8.0's release notes
SKILL_VALIDATOR_ASSERTIONS = ("file_exists", "file_not_exists", "file_contains", "file_not_contains",
                              "output_contains", "output_not_contains", "output_matches", "output_not_matches",
                              "exit_success")


def test_every_name_dotnet_defines_is_read_or_refused_on_purpose():
    from skillbench.suite.dotnet import UNSUPPORTED_GRADERS

    assert set(SKILL_VALIDATOR_ASSERTIONS) == set(ASSERTIONS)
    read = set(GRADERS) | {"prompt", "tool-calls"}  # tool-calls: expect_tools / reject_tools from one grader
    assert read.isdisjoint(UNSUPPORTED_GRADERS)
    assert read | set(UNSUPPORTED_GRADERS) == set(VALLY_CATALOG)


# ids of checks written before case_sensitive existed (computed on the commit before it): they must not move, or
# checks.csv rows would stop meaning the same check from week to week
IDS_BEFORE = [
    ({"type": "file_contains", "path": "Src/Ledger.cs", "value": "#nullable enable"}, "file_contains-05e11fe3"),
    ({"type": "output_contains", "value": "Done"}, "output_contains-8bf853e0"),
    ({"type": "file_not_contains", "path": "*.cs", "value": "null!"}, "file_not_contains-b1f4bd19"),
    ({"type": "output_not_contains", "value": "error"}, "output_not_contains-69982e96"),
]


@pytest.mark.parametrize(("raw", "check_id"), IDS_BEFORE, ids=[r["type"] for r, _ in IDS_BEFORE])
def test_case_sensitive_leaves_the_ids_of_checks_without_it_unchanged(raw, check_id):
    assert Check(**raw).check_id == check_id
    assert "case_sensitive" not in Check(**raw).options()
    ids = {check_id, Check(**raw, case_sensitive=True).check_id, Check(**raw, case_sensitive=False).check_id}
    assert len(ids) == 3  # set, it is part of the check: another rule is another check


def test_case_sensitive_is_an_option_of_the_contains_types_with_dotnets_rule():
    """The four ``*_contains`` types take it, and their records carry the rule skill-validator and Vally compare
    by (``AssertionEvaluator``: ``string.Contains`` on files, ``OrdinalIgnoreCase`` on the answer); no other type
    takes it, so preflight refuses it there."""
    takers = {k.name: k.dotnet_case for k in check_kinds() if "case_sensitive" in k.options}
    assert takers == {"file_contains": True, "file_not_contains": True, "output_contains": False,
                      "output_not_contains": False}
    assert all(k.dotnet_case is None for k in check_kinds() if k.name not in takers)
    with pytest.raises(ValidationError):
        Check(type="output_contains", value="x", case_sensitive="yes")  # a bool, never a truthy string
