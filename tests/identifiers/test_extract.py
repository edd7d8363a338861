"""check_answer pinned on tricky cases (data-driven: tests/data/identifiers/cases-*.json)."""

from __future__ import annotations

import json
import time

import pytest

from skillbench.identifiers import RESOLVED, UNCHECKED, UNRESOLVED, Identifier, Surfaces, check_answer
from tests.helpers.shared import DATA_DIR

CASES = DATA_DIR / "identifiers"


def _cases(name: str) -> list[dict]:
    return json.loads((CASES / name).read_text(encoding="utf-8"))["cases"]


def _check(case: dict, surfaces: Surfaces) -> None:
    found = check_answer(case["answer"], surfaces)
    seen = {(i.status, i.kind, i.text) for i in found}
    for status, kind, text in case["expect"]:
        assert (status, kind, text) in seen, f"{case['name']}: {status} {kind} {text} not in {sorted(seen)}"
    texts = {i.text for i in found}
    for text in case.get("absent", []):
        assert text not in texts, f"{case['name']}: {text} must not be an identifier"


@pytest.mark.parametrize("case", _cases("cases-synthetic.json"), ids=lambda c: c["name"][:60])
def test_synthetic_cases(case: dict, synth_surfaces: Surfaces) -> None:
    _check(case, synth_surfaces)


@pytest.mark.parametrize("case", _cases("cases-bundled.json"), ids=lambda c: c["name"][:60])
def test_bundled_suite_cases(case: dict, bundled_surfaces: Surfaces) -> None:
    _check(case, bundled_surfaces)


@pytest.mark.parametrize("case", _cases("cases-qdrant.json"), ids=lambda c: c["name"][:60])
def test_qdrant_cases(case: dict) -> None:
    from skillbench.suite import read_config
    from tests.helpers.shared import ROOT
    from tests.identifiers.conftest import cached_surfaces

    config = read_config(ROOT / "benchmarks" / "data" / "fabrication" / "qdrant.skillbench.toml")
    _check(case, cached_surfaces(config, "qdrant's"))


def test_an_identifier_carries_its_surface_and_quote(synth_surfaces: Surfaces) -> None:
    found = check_answer("```python\nimport synthpkg as sp\nsp.merge_near(a, b, fuzzy=1)  # join\n```",
                         synth_surfaces)
    flag = next(i for i in found if i.status == UNRESOLVED)
    assert flag == Identifier(text="sp.merge_near(fuzzy=...)", target="synthpkg.core.frame.merge_near(fuzzy)",
                              kind="keyword", language="python", status=UNRESOLVED, surface="synthpkg==1.0.0",
                              quote="sp.merge_near(a, b, fuzzy=1)  # join")


def test_a_surface_missing_from_the_cache_leaves_everything_unchecked(tmp_path) -> None:
    from skillbench.identifiers import load_surfaces
    from skillbench.suite import SuiteConfig
    from tests.identifiers.conftest import SYNTH_SPEC

    surfaces = load_surfaces(SuiteConfig(api=[SYNTH_SPEC]), cache=tmp_path)
    assert len(surfaces.warnings) == 1
    assert "synthpkg==1.0.0 is not cached" in surfaces.warnings[0]
    assert "skillbench surfaces --suite" in surfaces.warnings[0]
    found = check_answer("```python\nimport synthpkg as sp\nsp.nope(fuzzy=1)\n```", surfaces)
    assert found and {i.status for i in found} == {UNCHECKED}


def test_hostile_answers_take_bounded_time(synth_surfaces: Surfaces) -> None:
    deep = "import synthpkg as sp\nx = " + "(" * 5000 + "sp.Frame()" + ")" * 5000 + "\n"
    chain = "import synthpkg as sp\nsp.Frame()" + ".group_by('a').transform(len)" * 2000 + "\n"
    parsable_chain = "import synthpkg as sp\nsp.Frame()" + ".group_by('a').transform(len)" * 300 + "\n"
    huge = "```python\nimport synthpkg as sp\n" + "sp.Frame().window(2, closd=1)\n" * 2000 + "```\n"
    unclosed = "```python\n" + "f(\n" * 1000 + "```\n"
    laughs = "```yaml\na: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(9)) + "```\n"
    for answer in (f"```python\n{deep}```", f"```python\n{chain}```", f"```python\n{parsable_chain}```",
                   f"`{parsable_chain.splitlines()[1]}`", huge, unclosed, "`" * 100000, laughs):
        started = time.monotonic()
        found = check_answer(answer, synth_surfaces)
        assert time.monotonic() - started < 2.0
        assert all(i.status in (RESOLVED, UNRESOLVED, UNCHECKED) for i in found)
