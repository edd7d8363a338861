"""The README stays a five-minute read whose links all resolve; the docs site's generated tables fail loudly.

The strict build itself (`mkdocs build --strict`, every link and anchor of the site) runs in CI as `make docs`.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 250
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _load(name: str) -> ModuleType:
    # docs/ is not a package on the test path; load its modules by file, as mkdocs loads the hook
    spec = importlib.util.spec_from_file_location(f"skillbench_docs_{name}", DOCS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


hooks = _load("hooks")
cli_reference = _load("cli_reference")


def test_readme_is_a_five_minute_read() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"


def test_every_relative_link_in_the_readme_resolves() -> None:
    text = README.read_text(encoding="utf-8")
    targets = [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t) and not t.startswith("#")]
    assert targets, "the README links to the docs"
    missing = [t for t in targets if not (README.parent / t.split("#", 1)[0]).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_the_readme_links_every_page_of_the_docs_it_promises() -> None:
    text = README.read_text(encoding="utf-8")
    for page in ("docs/cli.md", "docs/getting-started.md", "docs/scorecard.md", "docs/suite-format.md"):
        assert f"]({page}" in text, page


def test_a_marker_is_replaced_by_what_its_function_returns() -> None:
    page = "intro\n<!-- skillbench-table: platform:python_version -->\noutro"
    out = hooks.replace_markers(page, "x.md")
    import platform

    assert out == f"intro\n{platform.python_version()}\noutro"


@pytest.mark.parametrize(("target", "why"), [
    ("skillbench_no_such_module:table", "cannot import skillbench_no_such_module"),
    ("platform:no_such_table", "platform has no function no_such_table"),
    ("platform", "is not MODULE:FUNCTION"),
    ("os:getcwdb", "returned bytes, not a markdown string"),
])
def test_a_marker_without_a_table_fails_the_build_in_one_line(target: str, why: str) -> None:
    page = f"# Page\n\n<!-- skillbench-table: {target} -->\n"
    with pytest.raises(PluginError) as raised:
        hooks.replace_markers(page, "suite-format.md")
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"suite-format.md: <!-- skillbench-table: {target} -->: ")
    assert why in message


def test_allow_missing_shows_a_warning_instead_of_failing() -> None:
    out = hooks.replace_markers("<!-- skillbench-table: platform:nope -->", "a.md", allow_missing=True)
    assert out.startswith('!!! warning "Table not built"') and "platform:nope" in out


def test_a_marker_inside_a_code_fence_is_an_example_and_stays() -> None:
    page = "```text\n<!-- skillbench-table: MODULE:FUNCTION -->\n```\n"
    assert hooks.replace_markers(page, "development.md") == page


def test_every_marker_in_the_docs_names_module_colon_function() -> None:
    markers = [m for p in DOCS.rglob("*.md") for m in re.findall(r"skillbench-table:\s*(\S+)\s*-->", p.read_text())]
    expected = {"skillbench.checks:check_types_table", "skillbench.suite:layouts_table",
                "skillbench.scorecard:verdicts_table", "docs.cli_reference:commands_reference"}
    assert expected <= set(markers)


def test_the_cli_reference_lists_every_command_and_every_option() -> None:
    reference = cli_reference.commands_reference()
    guide = (DOCS / "cli.md").read_text(encoding="utf-8")
    for name, parser in cli_reference.leaf_commands():
        assert f"### skillbench {name}\n" in reference, name
        # the hand-written table at the top sends each command to the page that explains it
        assert re.search(rf"`{re.escape(name)}`", guide), f"docs/cli.md: no row for `{name}`"
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help":
                    assert f"`{option}" in reference, f"skillbench {name} {option}"
