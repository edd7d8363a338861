"""Host files never come in: every path a spec names stays inside the suite's roots, at validate and at install.

The attack: a spec (content under evaluation) names a workspace file that is absolute, climbs out with ``..``, is a
link to a host file or folder, or is a folder with such a link deep inside; or it writes to the workspace root or
``.claude/``. Before issue 29 such a ``src`` copied the host file into the sandbox (and the agent's answer carried
its text into the ledgers) while ``validate`` reported 0 errors. Each case here builds a small suite of one format
(qdrant, dotnet skill-validator and Vally, skill-creator) in tmp_path beside a host secret, and shows ``validate``
refuse it in one line naming the file, the field and the path, and task preparation refuse it again — also when the
file is swapped for a link after validation — with no byte of the secret in what would enter the workspace.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from skillbench.cli import main
from skillbench.generation import GenerateOptions, TaskError, generate, prepare_task
from skillbench.runtime import PassContext
from skillbench.signals import run_state
from skillbench.suite import load_suite, preflight
from skillbench.weekly import model_endpoint
from tests.generation.test_generate import require_docker
from tests.helpers.sim import SITE, forced, make_suite, require_cli, write_profiles

SECRET = "HOST-SECRET-4f1c"
SKILL_MD = "---\nname: {name}\ndescription: Fixes things. Use when something is broken.\n---\nBody.\n"


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """Host files outside every suite: a secret file and a folder holding one."""
    root = tmp_path / "host"
    (root / "dir").mkdir(parents=True)
    (root / "secret.txt").write_text(SECRET)
    (root / "dir" / "key.txt").write_text(SECRET)
    return root


def _errors(report) -> list[str]:
    return [str(d) for d in report.errors]


def _one_error(report, *needles: str) -> str:
    errors = _errors(report)
    assert len(errors) == 1, errors
    assert all(n in errors[0] for n in needles), errors[0]
    assert "\n" not in errors[0]
    return errors[0]


def _no_secret(task) -> None:
    assert task is None or all(SECRET.encode() not in (item.data or b"") for item in task.items)


# -- qdrant -------------------------------------------------------------------------------------------------------
def _qdrant(root: Path, workspace: list[dict]) -> Path:
    make_suite(root)
    (root / "fixtures" / "data" / "a" / "b").mkdir(parents=True)
    (root / "fixtures" / "data" / "a" / "b" / "ok.txt").write_text("fine\n")
    data = {"name": "t", "product_area": "p", "skill_url": f"{SITE}/tyre-repair/SKILL.md", "prompt": "q",
            "rubric": [{"type": "must", "text": "x"}], "workspace": workspace}
    (root / "test-prompts" / "t.json").write_text(json.dumps(data))
    return root


def _link(at: Path, target: Path) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(target)


QDRANT_ESCAPES = [
    # (id, workspace entry, link to make: (path under the suite, "file"/"dir"), needle in the line)
    ("absolute", lambda host: {"dest": "w.txt", "src": str(host / "secret.txt")}, None, "is absolute"),
    ("dotdot", lambda host: {"dest": "w.txt", "src": "../../host/secret.txt"}, None, "outside the suite's roots"),
    ("linked-file", lambda host: {"dest": "w.txt", "src": "leak.txt"}, ("fixtures/leak.txt", "file"),
     "(a link) resolves to"),
    ("linked-folder", lambda host: {"dest": "w", "src": "leakdir"}, ("fixtures/leakdir", "dir"), "(a link) resolves"),
    ("deep-link", lambda host: {"dest": "w", "src": "data"}, ("fixtures/data/a/b/leak.txt", "file"),
     "'data'/a/b/leak.txt (a link) resolves to"),
    ("deep-folder-link", lambda host: {"dest": "w", "src": "data"}, ("fixtures/data/a/hostdir", "dir"),
     "'data'/a/hostdir (a link) resolves to"),
]


@pytest.mark.parametrize(("entry", "link", "needle"), [c[1:] for c in QDRANT_ESCAPES],
                         ids=[c[0] for c in QDRANT_ESCAPES])
def test_qdrant_src_that_leaves_the_suite_is_refused_by_validate_and_at_install(tmp_path, host, entry, link, needle):
    suite = _qdrant(tmp_path / "suite", [entry(host)])
    if link is not None:
        _link(suite / link[0], host / ("secret.txt" if link[1] == "file" else "dir"))
    report = preflight(suite)
    line = _one_error(report, "t.json", "workspace[0].src", needle, "copy the file into the suite")
    assert str(host.resolve()) in line or "is absolute" in line  # the line names where it leads
    # install time: the same spec, handed to generation as if validation had been skipped
    assert "t" not in {p.name for p in report.suite.prompts}  # a refused prompt is not in the suite
    ok = _qdrant(tmp_path / "ok", [{"dest": "w", "src": "data"}])
    loaded = load_suite(ok).prompt("t")
    loaded.test.workspace[0] = type(loaded.test.workspace[0])(**entry(host))
    if link is not None:
        _link(ok / link[0], host / ("secret.txt" if link[1] == "file" else "dir"))
    with pytest.raises(TaskError) as err:
        prepare_task(loaded)
    assert "t.json" in str(err.value) and len(str(err.value).splitlines()) == 1


def test_a_link_swapped_in_after_validation_is_refused_at_install(tmp_path, host):
    suite = _qdrant(tmp_path / "suite", [{"dest": "w", "src": "data"}, {"dest": "one.txt", "src": "data/a/b/ok.txt"}])
    spec = load_suite(suite).prompt("t")  # validation passed
    _no_secret(prepare_task(spec))
    target = suite / "fixtures" / "data" / "a" / "b" / "ok.txt"
    target.unlink()
    target.symlink_to(host / "secret.txt")  # the swap, after validation
    with pytest.raises(TaskError) as err:
        prepare_task(spec)
    assert "outside the suite's roots" in str(err.value) and str(host.resolve()) in str(err.value)


def test_links_inside_the_suite_are_still_copied(tmp_path, host):
    """Not every link is hostile: one that stays inside the suite's folders is followed (real trees carry some)."""
    suite = _qdrant(tmp_path / "suite", [{"dest": "w", "src": "data"}])
    _link(suite / "fixtures" / "data" / "same.txt", suite / "fixtures" / "data" / "a" / "b" / "ok.txt")
    _link(suite / "fixtures" / "data" / "twin", suite / "fixtures" / "data" / "a")
    report = preflight(suite)
    assert _errors(report) == []
    task = prepare_task(report.suite.prompt("t"))
    got = {item.dest: item.data for item in task.items}
    assert got["w/same.txt"] == b"fine\n" and got["w/twin/b/ok.txt"] == b"fine\n"


def test_a_link_cycle_is_refused(tmp_path):
    suite = _qdrant(tmp_path / "suite", [{"dest": "w", "src": "data"}])
    _link(suite / "fixtures" / "data" / "a" / "loop", suite / "fixtures" / "data")
    _one_error(preflight(suite), "workspace[0].src", "a cycle")


@pytest.mark.parametrize(("dest", "needle"), [
    (".", "the workspace root itself"), ("", "is empty"), ("./", "the workspace root itself"),
    ("a/..", "leaves the workspace"), ("/", "is absolute"), ("/etc/x", "is absolute"),
    (".claude/settings.json", "writes into the workspace's .claude/"),
    (".claude/skills/x/SKILL.md", "writes into the workspace's .claude/"),
    (".Claude/settings.local.json", "writes into the workspace's .claude/"),
])
def test_a_destination_over_the_workspace_root_or_claude_is_refused_by_validate(tmp_path, dest, needle):
    suite = _qdrant(tmp_path / "suite", [{"dest": dest, "content": "x"}])
    _one_error(preflight(suite), "t.json", "workspace[0].dest", needle)
    spec = load_suite(_qdrant(tmp_path / "ok", [{"dest": "w", "content": "x"}])).prompt("t")
    spec.test.workspace[0].dest = dest
    with pytest.raises(TaskError, match="must be a path inside the workspace"):
        prepare_task(spec)


def test_validate_on_the_command_line_refuses_it_in_one_line(tmp_path, host, capsys):
    suite = _qdrant(tmp_path / "suite", [{"dest": "w.txt", "src": "leak.txt"}])
    _link(suite / "fixtures" / "leak.txt", host / "secret.txt")
    code = main(["validate", str(suite)])
    out = capsys.readouterr()
    errors = [line for line in (out.out + out.err).splitlines() if "workspace[0].src" in line]
    assert code == 1 and len(errors) == 1 and str(host.resolve() / "secret.txt") in errors[0], out
    assert "Traceback" not in out.out + out.err and SECRET not in out.out + out.err


# -- dotnet -------------------------------------------------------------------------------------------------------
def _dotnet(root: Path, scenario: dict | None = None, stimulus: dict | None = None) -> Path:
    (root / "plugins" / "p" / "skills" / "s").mkdir(parents=True)
    (root / "plugins" / "p" / "skills" / "s" / "SKILL.md").write_text(SKILL_MD.format(name="s"))
    evals = root / "tests" / "p" / "s"
    (evals / "fixtures").mkdir(parents=True)
    (evals / "fixtures" / "ok.txt").write_text("fine\n")
    if scenario is not None:
        spec = {"scenarios": [{"name": "one", "prompt": "fix it", "rubric": ["says why"], **scenario}]}
        (evals / "eval.yaml").write_text(yaml.safe_dump(spec))
    else:
        spec = {"name": "s", "stimuli": [{"name": "one", "prompt": "fix it", "rubric": ["says why"], **stimulus}]}
        (evals / "eval.vally.yaml").write_text(yaml.safe_dump(spec))
    return root


DOTNET_ESCAPES = [
    ("copy-test-files-link", {"setup": {"copy_test_files": True}}, None, ("tests/p/s/fixtures/leak.txt", "file"),
     "setup.copy_test_files"),
    ("source-link", {"setup": {"files": [{"path": "w.txt", "source": "leak.txt"}]}}, None,
     ("plugins/p/skills/s/leak.txt", "file"), "setup.files[0].source"),
    ("source-absolute", {"setup": {"files": [{"path": "w.txt", "source": "{host}/secret.txt"}]}}, None, None,
     "setup.files[0].source"),
    ("source-dotdot", {"setup": {"files": [{"path": "w.txt", "source": "../../../../../host/secret.txt"}]}}, None,
     None, "setup.files[0].source"),
    ("vally-folder-link", None, {"environment": {"files": [{"src": "fixtures", "dest": "data"}]}},
     ("tests/p/s/fixtures/deep/hostdir", "dir"), "environment.files[0].src"),
    ("vally-dotdot", None, {"environment": {"files": [{"src": "../../../../host/secret.txt", "dest": "w"}]}},
     None, "environment.files[0].src"),
    ("vally-dest-root", None, {"environment": {"files": [{"src": "fixtures/ok.txt", "dest": "."}]}}, None,
     "environment.files[0].dest"),
    ("vally-dest-claude", None, {"environment": {"files": [{"src": "fixtures/ok.txt",
                                                            "dest": ".claude/settings.json"}]}}, None,
     "environment.files[0].dest"),
]


@pytest.mark.parametrize(("scenario", "stimulus", "link", "field"), [c[1:] for c in DOTNET_ESCAPES],
                         ids=[c[0] for c in DOTNET_ESCAPES])
def test_dotnet_paths_that_leave_the_tree_are_refused(tmp_path, host, scenario, stimulus, link, field):
    fill = json.loads(json.dumps(scenario or stimulus).replace("{host}", str(host)))
    tree = _dotnet(tmp_path / "tree", fill if scenario else None, None if scenario else fill)
    if link is not None:
        _link(tree / link[0], host / ("secret.txt" if link[1] == "file" else "dir"))
    report = preflight(tree)
    errors = [e for e in _errors(report) if field in e]
    assert len(errors) == 1, _errors(report)
    assert "eval" in errors[0] and SECRET not in errors[0]
    assert report.suite.prompts == [], "the stimulus is refused"


def test_dotnet_install_refuses_a_fixture_swapped_for_a_link(tmp_path, host):
    tree = _dotnet(tmp_path / "tree", {"setup": {"copy_test_files": True}})
    report = preflight(tree)
    assert _errors(report) == []
    spec = report.suite.prompts[0]
    _no_secret(prepare_task(spec))
    fixture = tree / "tests" / "p" / "s" / "fixtures" / "ok.txt"
    fixture.unlink()
    fixture.symlink_to(host / "secret.txt")
    with pytest.raises(TaskError, match="outside the suite's roots"):
        prepare_task(spec)


# -- skill-creator ------------------------------------------------------------------------------------------------
def _skill(root: Path, files: list[str]) -> Path:
    skill = root / "myskill"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD.format(name="myskill"))
    (skill / "data").mkdir()
    (skill / "data" / "ok.txt").write_text("fine\n")
    evals = {"skill_name": "myskill", "evals": [{"id": 1, "prompt": "do it", "expectations": ["did it"],
                                                 "files": files}]}
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    return skill


@pytest.mark.parametrize(("files", "link", "needles"), [
    # a link out of the skill folder is the skill's own defect (the folder is installed too), named by its path
    (["data/leak.txt"], ("data/leak.txt", "file"), ("myskill: symlink:", "data/leak.txt (a link) resolves to")),
    (["data"], ("data/deep/hostdir", "dir"), ("myskill: symlink:", "data/deep/hostdir (a link) resolves to")),
    (["hostdir"], ("hostdir", "dir"), ("myskill: symlink:", "hostdir (a link) resolves to")),
    (["../host/secret.txt"], None, ("evals.json", "evals[id=1].files[0]", "not a plain path inside the skill")),
    (["/etc/hostname"], None, ("evals.json", "evals[id=1].files[0]", "not a plain path inside the skill folder")),
    ([".claude/settings.json"], (".claude/settings.json", "file"),
     ("evals.json", "evals[id=1].workspace[0].dest", "writes into the workspace's .claude/")),
], ids=["linked-file", "deep-folder-link", "linked-folder", "dotdot", "absolute", "dest-claude"])
def test_skill_creator_files_that_leave_the_skill_are_refused(tmp_path, host, files, link, needles):
    skill = _skill(tmp_path / "skills", files)
    if link is not None:
        target = host / ("secret.txt" if link[1] == "file" else "dir")
        _link(skill / link[0], target if link[0] != ".claude/settings.json" else skill / "data" / "ok.txt")
    report = preflight(skill)
    line = _one_error(report, *needles)
    assert SECRET not in line and report.suite.prompts == []


def test_skill_creator_install_refuses_a_file_swapped_for_a_link(tmp_path, host):
    skill = _skill(tmp_path / "skills", ["data"])
    report = preflight(skill)
    assert _errors(report) == []
    spec = report.suite.prompts[0]
    assert {i.dest for i in prepare_task(spec).items} == {"data", "data/ok.txt"}
    (skill / "data" / "ok.txt").unlink()
    os.symlink(host / "secret.txt", skill / "data" / "ok.txt")
    with pytest.raises(TaskError, match="outside the suite's roots"):
        prepare_task(spec)


# -- workspace settings are inert, and validate says so ---------------------------------------------------------------
def test_a_workspace_carrying_claude_settings_gets_one_warning(tmp_path):
    suite = _qdrant(tmp_path / "suite", [{"dest": "proj", "src": "proj"}])
    hooks = suite / "fixtures" / "proj" / ".claude"
    hooks.mkdir(parents=True)
    (hooks / "settings.json").write_text('{"hooks": {}}')
    (hooks / "settings.local.json").write_text("{}")
    report = preflight(suite)
    assert _errors(report) == []
    warned = [str(d) for d in report.warnings if "inert" in d.problem]
    assert len(warned) == 1 and "proj/.claude/settings.json and 1 more" in warned[0], warned
    assert "--setting-sources user" in warned[0]


# -- a real pass: the run is harness-invalid and no host byte reaches the week ----------------------------------------
@pytest.mark.docker
@pytest.mark.cli
def test_a_pass_whose_fixture_became_a_link_copies_nothing(tmp_path, host):
    require_cli()
    require_docker()
    suite_dir = _qdrant(tmp_path / "suite", [{"dest": "notes.txt", "src": "data/a/b/ok.txt"}])
    suite = load_suite(suite_dir)  # validated, then the fixture is swapped for a link to the host secret
    fixture = suite_dir / "fixtures" / "data" / "a" / "b" / "ok.txt"
    fixture.unlink()
    fixture.symlink_to(host / "secret.txt")
    profiles = write_profiles(tmp_path / "p.yaml", {"haiku": forced()})
    out_dir = tmp_path / "week"
    opts = GenerateOptions(run_key="tk", out_dir=out_dir, models=["haiku"], conditions=["with-skill"], reps=1,
                           jobs=1, seed=3, sandbox="docker", timeout_s=120, prompts=["t"])
    generate(suite, opts, PassContext(endpoint=lambda: model_endpoint("sim", suite_dir=suite, profiles=profiles),
                                      log=lambda m: None))
    run = next(p for p in out_dir.iterdir() if (p / "metadata.json").is_file())
    assert run_state(run) == "harness_invalid"
    reason = json.loads((run / "metadata.json").read_text())["harness_invalid"]
    assert "outside the suite's roots" in reason and str(host.resolve() / "secret.txt") in reason
    assert not (run / "transcript.jsonl").exists(), "the CLI never ran"
    leaked = [p for p in out_dir.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaked == []


def test_copy_test_files_leaves_the_eval_folders_claude_folder_out_with_a_warning(tmp_path):
    """Real trees may carry a .claude/ folder innocently: copy_test_files leaves it out (one warning), no error."""
    tree = _dotnet(tmp_path / "tree", {"setup": {"copy_test_files": True}})
    settings = tree / "tests" / "p" / "s" / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {}}')
    report = preflight(tree)
    assert _errors(report) == []
    warned = [str(d) for d in report.warnings if ".claude/settings.json" in d.problem]
    assert len(warned) == 1 and "setup.copy_test_files" in warned[0] and "is not copied" in warned[0]
    dests = {i.dest for i in prepare_task(report.suite.prompts[0]).items}
    assert "fixtures/ok.txt" in dests and not [d for d in dests if d.startswith(".claude")]


def test_a_link_that_never_resolves_is_one_line_not_a_traceback(tmp_path):
    suite = _qdrant(tmp_path / "suite", [{"dest": "w", "src": "data"}])
    loop = suite / "fixtures" / "data" / "loop"
    loop.symlink_to(loop)
    _one_error(preflight(suite), "workspace[0].src", "never resolves (a loop of links)")


@pytest.mark.parametrize("fmt", ["dotnet", "skill-creator"])
def test_a_skill_folder_with_a_link_out_is_refused_by_validate(tmp_path, host, fmt):
    """qdrant's preflight always refused these; the imported formats now do too (the run would refuse it later)."""
    if fmt == "dotnet":
        target = _dotnet(tmp_path / "tree", {})
        folder = target / "plugins" / "p" / "skills" / "s"
    else:
        target = folder = _skill(tmp_path / "skills", [])
    _link(folder / "references" / "notes.md", host / "secret.txt")
    report = preflight(target)
    line = _one_error(report, ": symlink:", "references/notes.md (a link) resolves to", "outside its skill folder")
    assert SECRET not in line


def test_a_solution_linked_out_of_the_suite_is_refused(tmp_path, host):
    """solutions/ is read on the host by the simulated agent, which writes it into the run: the suite's files only."""
    suite = _qdrant(tmp_path / "suite", [{"dest": "w", "content": "x"}])
    _link(suite / "solutions" / "t" / "fix.py", host / "secret.txt")
    _one_error(preflight(suite), "t.json", ": solutions:", "solutions/t/fix.py (a link) resolves to")


def test_a_setup_command_writing_claude_settings_gets_one_warning(tmp_path):
    suite = _qdrant(tmp_path / "suite", [{"dest": "w", "content": "x"}])
    data = json.loads((suite / "test-prompts" / "t.json").read_text())
    data["setup"] = ["mkdir -p .claude && echo '{\"hooks\": {}}' > .claude/settings.json"]
    (suite / "test-prompts" / "t.json").write_text(json.dumps(data))
    report = preflight(suite)
    warned = [str(d) for d in report.warnings if "inert" in d.problem]
    assert _errors(report) == [] and len(warned) == 1 and ": setup: a command names .claude/" in warned[0]
