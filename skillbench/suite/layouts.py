"""The suite layouts skillbench reads, and which one a folder is: one rule, used by preflight and the chain.

* ``qdrant`` — ``SUITE_DIR/test-prompts/*.json`` (qdrant's format, and the bundled suite);
* ``dotnet`` — a dotnet/skills tree, ``DIR/tests/<plugin>/<skill>/eval.yaml`` beside ``DIR/plugins/``
  (:mod:`skillbench.suite.dotnet`);
* ``skill-creator`` — a skill folder with ``evals/evals.json``, or a folder of them
  (:mod:`skillbench.suite.skill_creator`).

Every layout loads into the same :class:`~skillbench.suite.Suite`.
"""

from __future__ import annotations

from pathlib import Path

from skillbench.ledgers.files import PROMPTS_DIR

QDRANT, DOTNET, SKILL_CREATOR = "qdrant", "dotnet", "skill-creator"
FORMATS = (QDRANT, DOTNET, SKILL_CREATOR)
TESTS_DIR = "tests"  # a dotnet tree's DIR/tests/<plugin>/<skill>/


def detect_format(suite_dir: str | Path) -> str:
    """``qdrant`` when the folder holds ``test-prompts/``, ``dotnet`` when it holds ``tests/*/*/eval*.yaml``,
    ``skill-creator`` when it is a skill folder with ``evals/evals.json`` or a tree of such folders; else
    ``qdrant`` (whose preflight says what is missing)."""
    from skillbench.suite.dotnet.stimulus import SPEC_NAMES
    from skillbench.suite.skill_creator.layout import is_skill_creator_tree

    folder = Path(suite_dir)
    if (folder / PROMPTS_DIR).is_dir():
        return QDRANT
    tests = folder / TESTS_DIR
    if tests.is_dir() and any(p.name in SPEC_NAMES for p in tests.glob("*/*/eval*.yaml")):
        return DOTNET
    if is_skill_creator_tree(folder):
        return SKILL_CREATOR
    return QDRANT


def is_suite(suite_dir: str | Path) -> bool:
    """True when the folder is a suite of any layout (a qdrant folder must hold ``test-prompts/``)."""
    return detect_format(suite_dir) != QDRANT or (Path(suite_dir) / PROMPTS_DIR).is_dir()
