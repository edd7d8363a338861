"""Where the project's own folders are: the checkout skillbench runs from (``make setup`` installs it editable)."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"  # the weekly chain's stage notebooks
REPORTS_DIR = PROJECT_ROOT / "reports"  # reports/<run_key>/ and reports/index.html
DEFAULT_SUITE = PROJECT_ROOT / "evals"  # the bundled suite
TOOLS_DIR = PROJECT_ROOT / ".tools"  # the pinned CLI (claude-code/) and the image build cache (image/)
