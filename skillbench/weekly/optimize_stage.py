"""optimize-description's stage: the one place that wires its endpoints (the trigger runs' and the rewriter's).

:func:`run_optimize` builds the trigger set (refusing a family below 4/4 test queries before anything is written),
creates ``OUT_DIR/<family>-<UTC stamp>/`` (never inside the suite's skills tree), runs the loop
(:func:`skillbench.quality.optimizer.optimize`: the trigger runs are generate passes, each starting its endpoint
as ``skillbench generate`` does), asks the rewriter through :class:`skillbench.judge.client.JudgeClient` (the real
``anthropic`` SDK with the client's limiter and retries; a reply that does not validate is re-asked once) on an
endpoint opened here — the simulated one (:mod:`skillbench.sim.rewrite`) or Anthropic's — and writes the files
(:mod:`skillbench.quality.optimize_report`).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from skillbench.generation.cli_call import ATTEMPT_HEADER, RUN_ID_HEADER
from skillbench.quality.optimize_report import write_outputs
from skillbench.quality.optimizer import OptimizeResult, optimize
from skillbench.quality.rewriter import parse_description, rewrite_request
from skillbench.quality.trigger_runs import RunSpec
from skillbench.quality.trigger_set import build_trigger_set
from skillbench.suite.format import Suite

RUNS_DIR = "_runs"  # the trigger suites and the generate passes of each candidate, under the result folder
DEFAULT_REWRITER_MODEL = "claude-opus-5-5"


class OptimizeError(ValueError):
    """An --out-dir that would write into the suite's skills tree (a usage error)."""


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def result_folder(suite: Suite, family: str, out_dir: Path) -> Path:
    """``OUT_DIR/<family>-<UTC stamp>/``, created new (a second one in the same second gets ``-2``).

    Raises:
        OptimizeError: ``out_dir`` is inside the suite's skills tree.
    """
    out_dir = out_dir.resolve()
    skills = suite.skills_root.resolve()
    if out_dir == skills or skills in out_dir.parents:
        raise OptimizeError(f"--out-dir {out_dir}: inside the suite's skills tree {skills} — choose a folder "
                            "outside it (default: reports/optimize/)")
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for n in itertools.count(1):
        folder = out_dir / (f"{family}-{stamp}" + (f"-{n}" if n > 1 else ""))
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
    raise AssertionError("unreachable")  # pragma: no cover


def run_optimize(suite: Suite, family: str, out_dir: Path, *, iterations: int, spec: RunSpec,
                 rewriter_model: str = DEFAULT_REWRITER_MODEL, max_total_usd: float | None = None,
                 trigger_set: Path | None = None, log: Callable[[str], None] = _stderr
                 ) -> tuple[OptimizeResult, dict[str, Path]]:
    """The whole command: trigger set, loop, files. Returns the result and the files written.

    Raises:
        TriggerSetError: the family cannot be split 4/4 (nothing written).
        OptimizeError: ``out_dir`` inside the skills tree (nothing written).
        BackendError: the rewriter's endpoint cannot be used.
        SlotFailed: the rewriter failed twice.
    """
    from skillbench.generation.backend import model_endpoint
    from skillbench.judge.client import JudgeClient, ask_validated

    tset = build_trigger_set(suite, family, spec.seed, trigger_set)
    folder = result_folder(suite, family, out_dir)
    with model_endpoint(spec.backend, endpoint=spec.endpoint or None, seed=spec.seed) as ep:
        client = JudgeClient(ep.base_url, ep.api_key, rewriter_model)
        calls = itertools.count(1)

        def rewriter(payload: dict) -> tuple[str, float]:
            spent = [0.0]

            def observe(_attempt: int, result, _error: str) -> None:
                spent[0] += result.cost_usd if result is not None else 0.0

            n = next(calls)
            description = ask_validated(
                client, lambda attempt: (rewrite_request(payload),
                                         {RUN_ID_HEADER: f"optimize-{family}-{n}", ATTEMPT_HEADER: str(attempt)}),
                lambda message: parse_description(message, int(payload["max_chars"])),
                next_attempt=itertools.count(1).__next__, observe=observe)
            return description, spent[0]

        try:
            result = optimize(suite, tset, folder / RUNS_DIR, iterations=iterations, spec=spec, rewriter=rewriter,
                              max_total_usd=max_total_usd, log=log)
        finally:
            client.close()
    return result, write_outputs(result, suite, folder)


__all__ = ["OptimizeError", "result_folder", "run_optimize"]
