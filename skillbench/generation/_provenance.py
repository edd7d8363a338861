"""What a pass ran with — the code's commit, the suite's commit, the runner image's tag, the CLI version, the
config — recorded in every shard summary so ``skillbench consolidate`` merges only legs that ran the same thing.

The image is named by its **tag** (:attr:`~skillbench.generation._image.ImageSpec.tag`, a hash of its inputs), not
its id: two machines that build the same inputs locally get different ids but the same tag.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skillbench.ledgers import PLAN_FILE, RUN_FILE, file_sha, git_commit, json_object_or_none
from skillbench.paths import PROJECT_ROOT

# run.json keys that say where, not what: they may differ between the machines of one matrix
WHERE_KEYS = ("suite_dir",)


def config_sha(run_json: Mapping[str, Any]) -> str:
    """SHA-256 of ``run.json`` without the keys that only say where the suite lay."""
    what = {k: v for k, v in run_json.items() if k not in WHERE_KEYS}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()


def image_tag() -> str:
    """The runner image's tag for the installed CLI ("" when the CLI is not installed)."""
    from skillbench.generation._image import current_spec

    try:
        return current_spec().tag
    except (OSError, subprocess.SubprocessError):
        return ""


def cli_version() -> str:
    """The installed CLI's version ("" when it is not installed)."""
    from skillbench.generation._toolchain import claude_version

    try:
        return claude_version()
    except (OSError, subprocess.SubprocessError):
        return ""


def pass_provenance(out_dir: str | Path, suite_dir: str | Path) -> dict[str, Any]:
    """The identity of a generate pass: commits, image tag, CLI version, config and plan hashes."""
    out_dir = Path(out_dir)
    run_json = json_object_or_none(out_dir / RUN_FILE) or {}
    return {
        "run_key": run_json.get("run_key", ""),
        "skillbench_commit": git_commit(PROJECT_ROOT),
        "suite_commit": git_commit(suite_dir),
        "image_tag": image_tag(),
        "cli_version": cli_version(),
        "config_sha": config_sha(run_json),
        "plan_sha": file_sha(out_dir / PLAN_FILE),
    }
