"""What ``skillbench generate`` was asked to do: :class:`GenerateOptions` (re-exported by
:mod:`skillbench.generation.run`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from skillbench.arms import ArmPair
from skillbench.ledgers.shards import Shard
from skillbench.suite.versions import SkillsVersion


@dataclass
class GenerateOptions:
    """What ``skillbench generate`` was asked to do (defaults come from the suite config)."""

    run_key: str
    out_dir: Path
    models: list[str]
    conditions: list[str]
    reps: int
    jobs: int = 1  # runs at once, at most; 0: the executor's width (1 locally, the cluster's worker threads on Dask)
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
    wait: bool = False  # another pass holds the run directory: wait for it instead of refusing
    allow_dirty: bool = False  # ``@HEAD`` may run a working tree that differs from HEAD (its diff hash recorded)
    arms: ArmPair | None = None  # the pair the week compares, recorded in run.json (None: with-skill vs no-skill)
    versions: dict[str, SkillsVersion] = field(default_factory=dict)  # conditions resolved by the caller
    adaptive: bool = True  # --jobs is the ceiling of an AIMD limiter fed by the CLI's rate-limit retries
    shard: Shard | None = None  # --shard i/N: run only the runs this leg of a CI matrix owns (ledgers.shards)
    executor: str = "local"  # --executor: local (this process's threads) or dask (--scheduler's workers)
    scheduler: str | None = None  # --scheduler: the dask.distributed scheduler's address (executor dask)
