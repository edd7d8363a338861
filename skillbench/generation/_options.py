"""What ``skillbench generate`` was asked to do: :class:`GenerateOptions` (re-exported by
:mod:`skillbench.generation._run`). Where and how it runs (the endpoint, the executor, the log, the lock) is the
pass's :class:`skillbench.runtime.PassContext`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from skillbench.arms import ArmPair
from skillbench.generation._limits import ContainerLimits
from skillbench.ledgers import WEEKLY_DIR, Shard
from skillbench.suite import SkillsVersion, Suite


@dataclass(frozen=True)
class GenerateOptions:
    """What ``skillbench generate`` was asked to do (an empty matrix part: the suite config's)."""

    run_key: str
    out_dir: Path | None = None  # None: SUITE_DIR/weekly/<run_key>/ (qdrant's layout)
    models: list[str] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    reps: int = 0
    # runs at once, at most; 0: decided by the pass — one per core the runs get here (generation._jobs), the
    # cluster's worker threads on Dask
    jobs: int = 1
    limit: int | None = None
    dry_run: bool = False
    sandbox: str | None = None  # docker | local | None = docker when the engine answers
    max_total_usd: float | None = None
    seed: int = 0
    timeout_s: float = 900.0
    extra_env: dict[str, str] = field(default_factory=dict)  # e.g. CLAUDE_CODE_MAX_RETRIES in tests
    faults: list[str] = field(default_factory=list)  # simulated endpoint only: ``kind[=rate]`` per request
    prompts: list[str] = field(default_factory=list)  # run only these prompts (the rest of the plan is limited)
    families: list[str] = field(default_factory=list)  # run only these skill families
    allow_dirty: bool = False  # ``@HEAD`` may run a working tree that differs from HEAD (its diff hash recorded)
    arms: ArmPair | None = None  # the pair the week compares, recorded in run.json (None: with-skill vs no-skill)
    versions: dict[str, SkillsVersion] = field(default_factory=dict)  # conditions resolved by the caller
    adaptive: bool = True  # --jobs is the ceiling of an AIMD limiter fed by the CLI's rate-limit retries
    paced: bool = True  # each run's relay waits for the endpoint's rate budget (False: a benchmark's baseline)
    shard: Shard | None = None  # --shard i/N: run only the runs this leg of a CI matrix owns (ledgers.shards)
    # each Docker run's memory, processes, CPUs, tmpfs sizes and output caps (recorded in its metadata.json)
    limits: ContainerLimits = field(default_factory=ContainerLimits)

    def for_suite(self, suite: Suite) -> GenerateOptions:
        """These options with the run directory and every empty part of the matrix filled from ``suite``."""
        run = suite.config.run
        return dataclasses.replace(
            self, out_dir=Path(self.out_dir) if self.out_dir else default_out_dir(suite, self.run_key),
            models=list(self.models or run.models), conditions=list(self.conditions or run.conditions),
            reps=int(self.reps or run.reps))


def default_out_dir(suite: Suite, run_key: str) -> Path:
    """``SUITE_DIR/weekly/<run_key>/`` (qdrant's layout)."""
    return suite.suite_dir / WEEKLY_DIR / run_key
