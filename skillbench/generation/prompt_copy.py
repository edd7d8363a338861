"""The prompt as run: the copy of a test prompt a run's folder keeps (``test-prompt.json``), which the judge reads.

A JSON prompt file is copied byte for byte; an imported spec (a dotnet or skill-creator eval) is written as JSON
with each must's grading decided (:mod:`skillbench.suite.absence`), once, when the run is made.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from skillbench.ledgers.atomic import atomic_write_text


def write_test_prompt(spec: Any, path: Path) -> None:
    """The prompt as run: a JSON prompt file byte for byte; an imported spec as JSON, each must's grading decided.

    The judge reads this copy and honours explicit ``absence`` values only, so an imported spec's absence rule
    (:mod:`skillbench.suite.absence`) is decided here, once, for whoever grades the run later.
    """
    from skillbench.suite.absence import resolve_absence

    if not spec.absence_rule:
        shutil.copy2(spec.path, path)
        return
    atomic_write_text(path, resolve_absence(spec.test, rule=True).model_dump_json(indent=2, exclude_none=True) + "\n")
