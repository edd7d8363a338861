"""optimize-description's stage: the one place that wires its endpoints (the trigger runs', the model calls').

:func:`run_optimize` refuses a family below 4/4 test queries and an ``--out-dir`` inside the skills tree before
any model call or write (:func:`skillbench.quality._trigger_set.check_splittable`), then, on an endpoint opened
here — the simulated one or Anthropic's — asks :class:`skillbench.judge._client.JudgeClient` (the real ``anthropic``
SDK with the client's limiter and retries; a reply that does not validate is re-asked once) for ``near_misses``
generated should-not queries (:mod:`skillbench.quality._near_miss`; simulated by :mod:`skillbench.sim._near_miss`;
none when 0), builds the trigger set with them, creates ``OUT_DIR/<family>-<UTC stamp>/`` (never inside the
suite's skills tree), runs the loop (:func:`skillbench.quality._optimizer.optimize`: the trigger runs are generate
passes, each starting its endpoint as ``skillbench generate`` does; the near-miss call's cost counts toward
``--max-total-usd``), asks the same client for the rewrites (:mod:`skillbench.sim._rewrite` on the sim) and writes
the files (:mod:`skillbench.quality._optimize_report`).
"""

from __future__ import annotations

import functools
import itertools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skillbench.quality import (
    LoopBudget,
    OptimizeResult,
    RunSpec,
    build_trigger_set,
    check_splittable,
    near_miss_payload,
    near_miss_request,
    optimize,
    parse_description,
    parse_near_misses,
    rewrite_request,
    write_outputs,
)
from skillbench.suite import Suite
from skillbench.vocab import WITH_SKILL
from skillbench.wire import ATTEMPT_HEADER, RUN_ID_HEADER

if TYPE_CHECKING:
    from skillbench.judge import JudgeClient

T = TypeVar("T")

RUNS_DIR = "_runs"  # the trigger suites and the generate passes of each candidate, under the result folder
DEFAULT_REWRITER_MODEL = "claude-opus-5-5"


class OptimizeError(ValueError):
    """An --out-dir that would write into the suite's skills tree (a usage error)."""


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def check_out_dir(suite: Suite, out_dir: Path) -> Path:
    """``out_dir`` resolved, when it is outside the suite's skills tree (nothing is created).

    Raises:
        OptimizeError: ``out_dir`` is inside the suite's skills tree.
    """
    out_dir = out_dir.resolve()
    skills = suite.skills_root.resolve()
    if out_dir == skills or skills in out_dir.parents:
        raise OptimizeError(f"--out-dir {out_dir}: inside the suite's skills tree {skills} — choose a folder "
                            "outside it (default: reports/optimize/)")
    return out_dir


def result_folder(suite: Suite, family: str, out_dir: Path) -> Path:
    """``OUT_DIR/<family>-<UTC stamp>/``, created new (a second one in the same second gets ``-2``).

    Raises:
        OptimizeError: ``out_dir`` is inside the suite's skills tree.
    """
    out_dir = check_out_dir(suite, out_dir)
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


def _ask(client: JudgeClient, request: dict, run_id: str, parse: Callable[[Any], T]) -> tuple[T, float]:
    """One validated call (re-asked once) and what its attempts cost, the invalid ones included."""
    from skillbench.judge import ask_validated

    spent = [0.0]

    def observe(_attempt: int, result: Any, _error: str) -> None:
        spent[0] += result.cost_usd if result is not None else 0.0

    value = ask_validated(client, lambda attempt: (request, {RUN_ID_HEADER: run_id, ATTEMPT_HEADER: str(attempt)}),
                          parse, next_attempt=itertools.count(1).__next__, observe=observe)
    return value, spent[0]


def trigger_runs(suite: Suite, out_dir: Path, *, spec: RunSpec, max_total_usd: float | None,
                 log: Callable[[str], None]) -> None:
    """The trigger runs of a measured description (:class:`skillbench.quality._trigger_runs.TriggerRuns`): a generate
    pass of the trigger suite, in the with-skill arm, through the endpoint ``spec`` names."""
    from skillbench.generation import GenerateOptions
    from skillbench.weekly._stages import StageRuntime, run_generation

    opts = GenerateOptions(run_key="trigger", out_dir=out_dir, models=[spec.model], reps=spec.k,
                           conditions=[WITH_SKILL], jobs=spec.jobs, sandbox=spec.sandbox or None, seed=spec.seed,
                           timeout_s=spec.timeout_s, max_total_usd=max_total_usd)
    runtime = StageRuntime(backend=spec.backend, endpoint=spec.endpoint, log=log)
    run_generation(suite, opts, runtime.context(seed=spec.seed, suite=suite))


@dataclass(frozen=True)
class OptimizeOptions:
    """What ``skillbench optimize-description`` was asked to do (besides the trigger runs' :class:`RunSpec`)."""

    iterations: int
    near_misses: int
    rewriter_model: str = DEFAULT_REWRITER_MODEL
    max_total_usd: float | None = None
    trigger_set: Path | None = None  # a fixed trigger set (None: built from the suite and the near-misses)


def run_optimize(suite: Suite, family: str, out_dir: Path, options: OptimizeOptions, *, spec: RunSpec,
                 log: Callable[[str], None] = _stderr) -> tuple[OptimizeResult, dict[str, Path]]:
    """The whole command: near-misses, trigger set, loop, files. Returns the result and the files written.

    Raises:
        TriggerSetError: the family cannot be split 4/4 (nothing written, no model call).
        OptimizeError: ``out_dir`` inside the skills tree (nothing written, no model call).
        BackendError: the endpoint cannot be used.
        SlotFailed: the near-miss generator or the rewriter failed twice.
    """
    from skillbench.judge import JudgeClient
    from skillbench.weekly._endpoint import model_endpoint

    rewriter_model, trigger_set, near_misses = options.rewriter_model, options.trigger_set, options.near_misses
    check_splittable(suite, family, spec.seed, trigger_set, near_misses)
    check_out_dir(suite, out_dir)
    with model_endpoint(spec.backend, endpoint=spec.endpoint or None, seed=spec.seed) as ep:
        client = JudgeClient(ep.base_url, ep.api_key, rewriter_model)
        try:
            generated, near_miss_usd = [], 0.0
            if near_misses:
                payload = near_miss_payload(suite, family, near_misses)
                generated, near_miss_usd = _ask(
                    client, near_miss_request(payload), f"optimize-{family}-near-misses",
                    lambda message: parse_near_misses(message, near_misses, int(payload["max_chars"])))
                log(f"optimize-description: {len(generated)} generated near-misses (${near_miss_usd:.4f})")
            tset = build_trigger_set(suite, family, spec.seed, trigger_set, generated, near_misses)
            folder = result_folder(suite, family, out_dir)
            calls = itertools.count(1)

            def rewriter(payload: dict) -> tuple[str, float]:
                return _ask(client, rewrite_request(payload), f"optimize-{family}-{next(calls)}",
                            lambda message: parse_description(message, int(payload["max_chars"])))

            budget = LoopBudget(options.iterations, options.max_total_usd, spent_usd=near_miss_usd)
            result = optimize(suite, tset, folder / RUNS_DIR, budget=budget, spec=spec, rewriter=rewriter,
                              runs=functools.partial(trigger_runs, log=log), log=log)
        finally:
            client.close()
    result.rewriter_model = rewriter_model
    return result, write_outputs(result, suite, folder)


__all__ = ["OptimizeError", "check_out_dir", "result_folder", "run_optimize", "trigger_runs"]
