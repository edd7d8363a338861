"""Where the test data lives: the committed ``tests/data`` and the third-party datasets at test time (../shared
beside the repo; never copied into it), and the skip-outside-CI rule for what is missing."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT / "tests" / "data"
TINY_SUITE = DATA_DIR / "tiny-suite"
TINY_WEEK = DATA_DIR / "tiny-week"
SHARED = Path(os.environ.get("SKILLBENCH_SHARED", ROOT.parent / "shared"))
QDRANT = SHARED / "datasets" / "qdrant-skills"
DOTNET = SHARED / "datasets" / "dotnet-skills"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(path: Path) -> Path:
    """Skip outside CI when a shared dataset is absent; in CI its absence is a failure."""
    if not path.exists():
        if IN_CI:
            pytest.fail(f"{path} is missing: CI lays shared/ beside the clone")
        pytest.skip(f"{path} is missing (shared datasets are not beside this checkout)")
    return path


def read_csv_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    """A CSV ledger as (header, rows) of strings, for tests that damage ledgers on purpose."""
    with path.open(newline="", encoding="utf-8") as fh:
        records = list(csv.reader(fh))
    return records[0], records[1:]


def write_csv_rows(path: Path, header: list[str], rows: list[list[str]]) -> None:
    """Write (header, rows) back as the csv module's default dialect."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header, *rows])
