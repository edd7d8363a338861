"""Preflight: every error class, the warnings, the summary line, and real suites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillbench.cli import main
from skillbench.suite import SkillUrlError, parse_skill_url, preflight
from tests.helpers.shared import QDRANT, ROOT, require

SITE = "https://skills.example.test"


def _skill(root: Path, rel: str, name: str, description: str = "Helps. Use when asked about it.") -> None:
    path = root / rel / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: \"{description}\"\n---\n# {name}\nBody.\n")


def _rubric(musts: int = 3, bonus: int = 1, avoid: int = 1) -> list[dict]:
    return ([{"type": "must", "text": f"must claim {i}"} for i in range(musts)]
            + [{"type": "bonus", "text": f"bonus claim {i}"} for i in range(bonus)]
            + [{"type": "avoid", "text": f"avoid claim {i}"} for i in range(avoid)])


def _prompt(suite: Path, name: str, *, leaf: str = "alpha/SKILL.md", stem: str | None = None, raw: str | None = None,
            **fields) -> Path:
    body = {"name": name, "product_area": "area", "skill_url": f"{SITE}/{leaf}", "prompt": f"Question {name}?",
            "rubric": _rubric(), **fields}
    path = suite / "test-prompts" / f"{stem or name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(raw if raw is not None else json.dumps(body, indent=2))
    return path


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A clean suite: one family 'alpha' (hub with a leaf) with 5 prompts, a config with a held-out prefix."""
    s = tmp_path / "evals"
    _skill(s / "skills", "alpha", "alpha")
    _skill(s / "skills", "alpha/leafy", "leafy")
    (s / "skillbench.toml").write_text(f'[suite]\nsite_base = "{SITE}"\nheldout_prefixes = ["held-"]\n')
    for i in range(5):
        _prompt(s, f"alpha-q{i}", leaf="alpha/leafy/SKILL.md" if i % 2 else "alpha/SKILL.md")
    return s


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main(["validate", *argv])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_clean_suite_passes_strict(suite, capsys):
    code, out = _run(capsys, str(suite), "--strict")
    assert code == 0, out
    assert out.strip().splitlines()[-1] == (
        "Checked 5 prompts (5 scored, 0 held-out, 0 dormancy) in 1 skill families: 0 errors, 0 warnings")


# (description, how to break the suite, file named in the message, field named in the message)
ERROR_CASES = {
    "json_syntax": (lambda s: _prompt(s, "bad", raw='{"name": "bad",\n  "prompt": }'), "bad.json", "json"),
    "missing_field": (lambda s: _prompt(s, "nofield", raw=json.dumps(
        {"name": "nofield", "product_area": "a", "skill_url": f"{SITE}/alpha/SKILL.md", "rubric": _rubric()})),
        "nofield.json", "prompt"),
    "unknown_field": (lambda s: _prompt(s, "extra", expected_output="x"), "extra.json", "expected_output"),
    "name_not_stem": (lambda s: _prompt(s, "other-name", stem="the-file"), "the-file.json", "name"),
    "empty_prompt": (lambda s: _prompt(s, "emptyq", prompt="  "), "emptyq.json", "prompt"),
    "unknown_rubric_type": (lambda s: _prompt(s, "badtype", rubric=_rubric() + [{"type": "nice", "text": "t"}]),
                            "badtype.json", "rubric[5].type"),
    "empty_item_text": (lambda s: _prompt(s, "emptytext", rubric=_rubric() + [{"type": "bonus", "text": " "}]),
                        "emptytext.json", "rubric[5].text"),
    "duplicate_item": (lambda s: _prompt(s, "dupitem", rubric=_rubric() + [{"type": "bonus", "text": "Must claim 0"}]),
                       "dupitem.json", "rubric[5].text"),
    "no_must": (lambda s: _prompt(s, "nomust", rubric=_rubric(musts=0)), "nomust.json", "rubric"),
    "other_host": (lambda s: _prompt(s, "host", skill_url="https://evil.example.test/alpha/SKILL.md"),
                   "host.json", "skill_url"),
    "malformed_url": (lambda s: _prompt(s, "malformed", skill_url=f"{SITE}/alpha/README.md"),
                      "malformed.json", "skill_url"),
    "family_missing": (lambda s: _prompt(s, "nofamily", leaf="ghost/SKILL.md"), "nofamily.json", "skill_url"),
    "leaf_missing": (lambda s: _prompt(s, "noleaf", leaf="alpha/ghost/SKILL.md"), "noleaf.json", "skill_url"),
    "bad_frontmatter": (lambda s: (s / "skills/alpha/leafy/SKILL.md").write_text("# no frontmatter\n"),
                        "leafy/SKILL.md", "frontmatter"),
    "frontmatter_no_description": (lambda s: (s / "skills/alpha/SKILL.md").write_text("---\nname: alpha\n---\nx\n"),
                                   "alpha/SKILL.md", "frontmatter"),
    "duplicate_names": (lambda s: _prompt(s, "ALPHA-Q1"), "alpha-q1.json", "name"),
    "dormancy_heldout": (lambda s: _prompt(s, "held-dorm", expect_activation=False), "held-dorm.json",
                         "expect_activation"),
    "dormancy_no_skill": (lambda s: _prompt(s, "dorm-noskill", expect_activation=False, skill_url=""),
                          "dorm-noskill.json", "skill_url"),
    "wrong_type": (lambda s: _prompt(s, "booltype", expect_activation="no"), "booltype.json", "expect_activation"),
    "bad_config": (lambda s: (s / "skillbench.toml").write_text('[suite]\nsite_base = "x"\ncolour = 1\n'),
                   "skillbench.toml", "suite.colour"),
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_error_class(suite, capsys, case):
    breaker, file_part, field = ERROR_CASES[case]
    breaker(suite)
    code, out = _run(capsys, str(suite))
    assert code == 1, out
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert any(file_part.lower() in line.lower() and f": {field}: " in line for line in errors), out
    assert all(" — " in line for line in errors), "every defect says how to fix it"
    assert "errors" in out.splitlines()[-1] and "0 errors" not in out.splitlines()[-1]


def test_duplicate_is_reported_once_and_summary_counts_every_file(suite, capsys):
    _prompt(suite, "ALPHA-Q1")
    _prompt(suite, "held-broken", raw="{")
    _, out = _run(capsys, str(suite))
    assert sum("duplicate prompt name" in line for line in out.splitlines()) == 1
    assert "Checked 7 prompts (6 scored, 1 held-out" in out.splitlines()[-1]
    assert not any(line.startswith("warning:") for line in out.splitlines()), "no family warnings while broken"


def test_json_error_has_line_and_column(suite, capsys):
    _prompt(suite, "bad", raw='{\n  "name": "bad",\n  "prompt": }')
    _, out = _run(capsys, str(suite))
    assert "line 3, column 13" in out


WARNING_CASES = {
    "rubric_counts": (lambda s: _prompt(s, "alpha-many", rubric=_rubric(musts=6, bonus=0, avoid=4)), "rubric"),
    "family_without_prompts": (lambda s: _skill(s / "skills", "beta", "beta"), "family"),
    "small_family": (lambda s: (s / "test-prompts/alpha-q4.json").unlink(), "family"),
    "no_trigger_phrase": (lambda s: _skill(s / "skills", "alpha/leafy", "leafy", "Knows things."), "description"),
    # the pinned CLI lists a skill by its folder (the family), so another name is a slip, not a missing skill
    "family_name_not_folder": (lambda s: _skill(s / "skills", "alpha", "alpha-skill"), "frontmatter.name"),
}


@pytest.mark.parametrize("case", sorted(WARNING_CASES))
def test_warning_class(suite, capsys, case):
    breaker, field = WARNING_CASES[case]
    breaker(suite)
    code, out = _run(capsys, str(suite))
    assert code == 0, out
    assert any(line.startswith("warning: ") and f": {field}: " in line for line in out.splitlines()), out
    code, _ = _run(capsys, str(suite), "--strict")
    assert code == 1


def test_heldout_and_dormancy_counts(suite, capsys):
    _prompt(suite, "held-one")
    _prompt(suite, "alpha-dormant", expect_activation=False)
    code, out = _run(capsys, str(suite), "--strict")
    assert code == 0, out
    assert "Checked 7 prompts (6 scored, 1 held-out, 1 dormancy) in 1 skill families" in out
    report = preflight(suite)
    names = {p.name: p for p in report.suite.prompts}
    assert names["held-one"].heldout and not names["held-one"].preference_eligible
    assert names["alpha-dormant"].scored and not names["alpha-dormant"].preference_eligible


def test_flags_override_config(suite, capsys):
    _prompt(suite, "xheld-1")
    _, out = _run(capsys, str(suite), "--heldout-prefix", "xheld-")
    assert "(5 scored, 1 held-out" in out
    code, out = _run(capsys, str(suite), "--site-base", "https://elsewhere.test")
    assert code == 1 and "skill_url" in out


def test_usage_errors_exit_2(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope")]) == 2
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--bogus"])
    assert exc.value.code == 2


def test_validate_writes_nothing(suite, capsys):
    before = sorted((p, p.stat().st_mtime_ns) for p in suite.rglob("*"))
    _run(capsys, str(suite))
    assert sorted((p, p.stat().st_mtime_ns) for p in suite.rglob("*")) == before


@pytest.mark.parametrize(
    ("url", "family", "leaf"),
    [
        ("https://skills.qdrant.tech/qdrant-search-quality/search-strategies/hybrid-search/combining-searches/SKILL.md",
         "qdrant-search-quality", "qdrant-search-quality/search-strategies/hybrid-search/combining-searches/SKILL.md"),
        ("https://skills.qdrant.tech/qdrant-scaling/minimize-latency/SKILL.md",
         "qdrant-scaling", "qdrant-scaling/minimize-latency/SKILL.md"),
        ("https://skills.qdrant.tech/qdrant-edge/SKILL.md", "qdrant-edge", "qdrant-edge/SKILL.md"),
    ],
)
def test_family_and_leaf_resolution(url, family, leaf):
    assert parse_skill_url(url, "https://skills.qdrant.tech") == (family, leaf)


@pytest.mark.parametrize("url", ["https://skills.qdrant.tech/SKILL.md", "https://skills.qdrant.tech/a/b.md",
                                 "http://skills.qdrant.tech/a/SKILL.md", "skills.qdrant.tech/a/SKILL.md",
                                 "https://skills.qdrant.tech/a/../SKILL.md"])
def test_malformed_skill_urls(url):
    with pytest.raises(SkillUrlError):
        parse_skill_url(url, "https://skills.qdrant.tech")


def test_qdrant_suite_validates(capsys):
    evals = require(QDRANT / "evals")
    code, out = _run(capsys, str(evals), "--skills-root", str(QDRANT / "skills"),
                     "--site-base", "https://skills.qdrant.tech", "--heldout-prefix", "discord-")
    assert code == 0, out
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("Checked 26 prompts (26 scored, 0 held-out, 0 dormancy)"), summary
    assert " 0 errors" in summary


def test_bundled_suite_is_clean_under_strict(capsys):
    code, out = _run(capsys, str(ROOT / "evals"), "--strict")
    assert code == 0, out
    assert out.strip().splitlines()[-1].endswith(": 0 errors, 0 warnings")
    suite = preflight(ROOT / "evals").suite
    families = suite.families
    assert len(families) >= 4
    eligible = suite.prompts_df().query("preference_eligible").groupby("skill_family").size()
    assert all(eligible.get(f, 0) >= 5 for f in families)
    assert sum(p.heldout for p in suite.prompts) >= 3
    assert sum(p.dormancy for p in suite.prompts) >= 2
    assert any("/" in leaf.removesuffix("/SKILL.md") for leaf in suite.skills), "a hub with linked sub-skills"


# -- the OS argument limit ------------------------------------------------------------------------------


def _exec_one_argument(text: str) -> bool:
    """Whether the kernel accepts ``text`` as one argument of a real exec (how the CLI receives the prompt)."""
    import subprocess

    try:
        subprocess.run(["/bin/true", text], check=True)
    except OSError as exc:
        assert exc.errno == 7, exc  # E2BIG: "Argument list too long"
        return False
    return True


@pytest.mark.skipif(not Path("/proc/sys/kernel").is_dir(), reason="the limit is Linux's MAX_ARG_STRLEN")
@pytest.mark.parametrize("char", ["x", "é"])  # the limit counts UTF-8 bytes, not characters
def test_a_prompt_over_the_os_argument_limit_is_refused(suite, capsys, char):
    from skillbench.suite._defects import MAX_PROMPT_BYTES

    width = len(char.encode())
    at_limit = char * (MAX_PROMPT_BYTES // width) + "x" * (MAX_PROMPT_BYTES % width)
    assert len(at_limit.encode()) == MAX_PROMPT_BYTES == 131071
    assert _exec_one_argument(at_limit) and not _exec_one_argument(at_limit + "x"), "the limit is the kernel's"
    _prompt(suite, "alpha-huge", prompt=at_limit)
    code, out = _run(capsys, str(suite))
    assert code == 0, out
    _prompt(suite, "alpha-huge", prompt=at_limit + "x")
    code, out = _run(capsys, str(suite))
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert code == 1 and len(errors) == 1, out
    assert "alpha-huge.json: prompt: 131072 bytes (UTF-8)" in errors[0] and "131071" in errors[0]


# -- the config file ------------------------------------------------------------------------------------


def test_a_non_utf8_config_is_one_error_not_a_traceback(suite, capsys):
    from skillbench.suite import ConfigError, SuiteError, load_config, load_suite

    (suite / "skillbench.toml").write_bytes(b'[suite]\nsite_base = "caf\xe9"\n')
    with pytest.raises(ConfigError, match=r"skillbench.toml: file: not UTF-8 text .* — save it as UTF-8"):
        load_config(suite)
    code, out = _run(capsys, str(suite))
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert code == 1 and len(errors) == 1 and "skillbench.toml: file: not UTF-8" in errors[0], out
    with pytest.raises(SuiteError) as exc:
        load_suite(suite)
    assert "skillbench.toml: file: not UTF-8" in str(exc.value) and "more" not in str(exc.value)


@pytest.mark.parametrize("text", ['[suite]\nsite_base = "x"\ncolour = 1\n', "[suite\n", "[run]\nreps = 0\n"])
def test_a_bad_config_is_reported_alone(suite, capsys, text):
    """Falling back to the defaults would lose site_base and fail every prompt's skill_url: one line instead."""
    (suite / "skillbench.toml").write_text(text)
    code, out = _run(capsys, str(suite))
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert code == 1 and len(errors) == 1 and "skillbench.toml" in errors[0], out
    assert not any(line.startswith("warning: ") for line in out.splitlines())
    assert out.splitlines()[-1].endswith("1 errors, 0 warnings")
    assert "not checked" in out.splitlines()[-1]


# -- symlinks in the skills tree ------------------------------------------------------------------------


def test_a_symlink_that_leaves_the_skills_root_is_refused(suite, capsys, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("host file")
    link = suite / "skills" / "alpha" / "notes.md"
    link.symlink_to(secret)
    code, out = _run(capsys, str(suite))
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert code == 1 and len(errors) == 1, out
    assert "alpha/notes.md: symlink:" in errors[0] and str(secret) in errors[0]
    assert "leaves the skills root" in errors[0]


def test_a_symlinked_folder_outside_and_a_broken_link_are_refused(suite, capsys, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (suite / "skills" / "alpha" / "more").symlink_to(outside, target_is_directory=True)
    (suite / "skills" / "alpha" / "gone.md").symlink_to(suite / "skills" / "alpha" / "nothing-here.md")
    code, out = _run(capsys, str(suite))
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert code == 1 and len(errors) == 2, out
    assert any("alpha/more: symlink:" in e and str(outside) in e for e in errors)
    assert any("alpha/gone.md: symlink:" in e and "is broken" in e and "nothing-here.md" in e for e in errors)


def test_a_symlink_inside_the_skills_root_is_fine(suite, capsys):
    (suite / "skills" / "alpha" / "leafy" / "hub.md").symlink_to(suite / "skills" / "alpha" / "SKILL.md")
    code, out = _run(capsys, str(suite), "--strict")
    assert code == 0, out


def test_a_symlink_into_another_family_is_refused(suite, capsys):
    """A run installs one family and the sandbox never follows a link out of it: refuse it before any run."""
    families = sorted(p for p in (suite / "skills").iterdir() if p.is_dir())
    other = next((f for f in families if f.name != "alpha"), None)
    target = (other / "SKILL.md") if other else (suite / "skills" / "shared.md")
    if other is None:
        target.write_text("shared notes\n")
    (suite / "skills" / "alpha" / "borrowed.md").symlink_to(target)
    code, out = _run(capsys, str(suite))
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert code == 1 and len(errors) == 1, out
    assert "alpha/borrowed.md: symlink:" in errors[0] and "leaves its skill family's folder" in errors[0]
