"""Subcommands of the ``skillbench`` CLI: each module exposes ``register(subparsers)``.

The argument shapes several commands share live here, declared once: counts, amounts and timeouts that must be
positive, run keys (:func:`skillbench.ledgers.check_run_key`), model names and condition names, and the suite
flags every command that reads a suite takes (:func:`add_suite_args`, read back by :func:`suite_overrides`). A bad
value is refused by argparse before anything runs: one line, exit 2, nothing written.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillbench.suite import SuiteOverrides


class UsageError(Exception):
    """Bad arguments that argparse cannot see (a missing folder, an unknown model); the CLI exits 2 with its line."""


MODEL_ALIASES = ("opus", "sonnet", "haiku")  # what the pinned CLI resolves to its current claude-*-5-5 models
_CLAUDE_MODEL = re.compile(r"^claude-[a-z0-9][a-z0-9.-]*(\[1m\])?$")  # e.g. claude-sonnet-4-5, …-4-5[1m]
_ALIAS = re.compile(rf"^({'|'.join(MODEL_ALIASES)})(\[1m\])?$")


def _whole_number(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (use {minimum} or more)") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{text}: must be {minimum} or more")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number of 1 or more."""
    return _whole_number(text, 1)


def nonnegative_int(text: str) -> int:
    """An argparse type: a whole number of 0 or more."""
    return _whole_number(text, 0)


def positive_float(text: str) -> float:
    """An argparse type: a finite number above 0 (seconds, dollars)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (use a number above 0)") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text}: must be a number above 0")
    return value


def run_key(text: str) -> str:
    """An argparse type: a run key (:func:`skillbench.ledgers.check_run_key`, the one rule every command uses)."""
    from skillbench.ledgers import RunKeyError, check_run_key

    try:
        return check_run_key(text)
    except RunKeyError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@lru_cache(maxsize=1)
def simulated_model_names() -> frozenset[str]:
    """Model names the shipped simulation profiles know (their agent and judge profiles)."""
    from skillbench.sim import load_profiles

    profiles = load_profiles()
    return frozenset(k for k in (*profiles.models, *profiles.judges) if k != "default")


def known_model(name: str) -> bool:
    """A model name skillbench runs: an alias (opus, sonnet, haiku), a ``claude-…`` model id, or a simulated model.

    The pinned CLI itself sends any ``--model`` through unchanged (an unknown name is priced like opus and the API
    refuses it run after run), so the check is here, before the first run.
    """
    return bool(_ALIAS.match(name) or _CLAUDE_MODEL.match(name)) or name in simulated_model_names()


def model_names(text: str) -> str:
    """An argparse type: one model name, or several separated by commas (see :func:`known_model`)."""
    for name in (part.strip() for part in text.split(",")):
        if name and not known_model(name):
            raise argparse.ArgumentTypeError(f"unknown model {name!r}: use an alias ({', '.join(MODEL_ALIASES)}) or "
                                             "a Claude model id such as claude-sonnet-4-5")
    return text


def condition_names(text: str) -> str:
    """An argparse type: one condition (an arm, optionally ``@REF``), or several separated by commas."""
    from skillbench.arms import ConditionError, check_condition

    for name in (part.strip() for part in text.split(",")):
        try:
            if name:
                check_condition(name)
        except ConditionError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


def week_folder(text: str) -> Path:
    """A RUN_DIR argument: an existing folder, else one usage line saying what RUN_DIR is."""
    path = Path(text)
    if not path.is_dir():
        raise UsageError(f"{text}: not a folder (RUN_DIR is a week's output folder from skillbench generate)")
    return path


def listed(values: list[str] | None) -> list[str] | None:
    """``--models sonnet haiku`` and ``--models sonnet,haiku`` both give ``["sonnet", "haiku"]``."""
    if not values:
        return None
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def add_backend_args(p: argparse.ArgumentParser, *, endpoint: bool = True) -> None:
    """``--backend`` (and ``--endpoint``) and ``--seed``, shared by every model-calling command."""
    p.add_argument("--backend", choices=["sim", "anthropic"],
                   help="sim = the simulated endpoint on 127.0.0.1; default anthropic when ANTHROPIC_API_KEY is set")
    if endpoint:
        p.add_argument("--endpoint", metavar="URL",
                       help="use an endpoint that is already running (e.g. `skillbench sim serve`)")
    p.add_argument("--seed", type=int, default=0, help="seed of the plan order and of the simulated endpoint")


def add_judge_call_args(p: argparse.ArgumentParser) -> None:
    """``--jobs``, ``--max-retries`` and ``--timeout``, for every command that calls a judge."""
    p.add_argument("--jobs", type=positive_int, default=2, metavar="N",
                   help="judge calls at once, at most (the ceiling of the adaptive limiter; default 2)")
    p.add_argument("--max-retries", type=nonnegative_int, default=4, metavar="N",
                   help="retries per call (429/5xx/529, honouring retry-after; default 4)")
    p.add_argument("--timeout", type=positive_float, default=120.0, metavar="S",
                   help="seconds per request (default 120)")


def shard_spec(text: str):
    """An argparse type: ``i/N`` (1 ≤ i ≤ N), a leg of a CI matrix (:class:`skillbench.ledgers._shards.Shard`)."""
    from skillbench.ledgers import ShardError, parse_shard

    try:
        return parse_shard(text)
    except ShardError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_shard_arg(p: argparse.ArgumentParser, *, what: str) -> None:
    """``--shard i/N``: this leg of a CI matrix takes a stable slice of the week (a hash of each run id)."""
    p.add_argument("--shard", type=shard_spec, metavar="i/N",
                   help=f"{what} only the runs leg i of N owns (a hash of the run id: stable when other legs fail) "
                        "and write shard-i-of-N.json; `skillbench consolidate` merges the legs")


EXECUTORS = ("local", "dask")


def add_executor_args(p: argparse.ArgumentParser) -> None:
    """``--executor`` and ``--scheduler``: where the work runs (this process's threads, or a Dask cluster)."""
    p.add_argument("--executor", choices=EXECUTORS, default="local",
                   help="local = threads of this process (default); dask = the workers of --scheduler's "
                        "dask.distributed cluster, one task per run or judge request (each worker needs Docker and "
                        "the runner image: `skillbench worker check`); generate's --jobs then defaults to the "
                        "cluster's worker threads. With --backend sim every worker must be on this machine")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --executor dask: the scheduler's address, e.g. tcp://127.0.0.1:8786 (started with "
                        "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0, so Dask never re-runs a run); without it, "
                        "a local cluster of this machine's cores for the pass")


def add_allow_dirty_arg(p: argparse.ArgumentParser) -> None:
    """``--allow-dirty``, for every command that may run a ``with-skill@HEAD`` arm."""
    p.add_argument("--allow-dirty", action="store_true",
                   help="let with-skill@HEAD run a working tree whose skills or prompts differ from HEAD (the "
                        "diff's hash is recorded with every run)")


def add_wait_arg(p: argparse.ArgumentParser) -> None:
    """``--wait``, for every command that writes a week's ledgers under the run directory's lock."""
    p.add_argument("--wait", action="store_true",
                   help="when another pass holds RUN_DIR, wait for it to finish (default: refuse at once, exit 2)")


def add_selection_args(p: argparse.ArgumentParser, *, what: str) -> None:
    """``--prompts`` and ``--families``: run part of a suite (the rest of the plan stays planned, ``limited``)."""
    p.add_argument("--prompts", nargs="+", metavar="NAME",
                   help=f"{what} only these prompts (names, space- or comma-separated); an unknown name exits 2")
    p.add_argument("--families", nargs="+", metavar="F",
                   help=f"{what} only these skill families; an unknown family exits 2")


# -- the suite flags: one group, one help text each, for every command that reads a suite ----------------------
# An error message may suggest one of these flags (--site-base, --skills-root, …): every command that reads a suite
# takes the whole group, so the suggestion is always one the command accepts (tests/test_cli_suggestions.py).
SUITE_FLAGS = ("--format", "--config", "--skills-root", "--site-base", "--heldout-prefix", "--heldout-tag",
               "--skip-missing")


class _Lazy:
    """A help-text value computed when the help is printed."""

    def __init__(self, text: Callable[[], str]):
        self.text = text

    def __str__(self) -> str:
        return self.text()


def add_suite_args(p: argparse.ArgumentParser) -> None:
    """The suite flags (:data:`SUITE_FLAGS`), as one argument group; :func:`suite_overrides` reads them back."""
    from skillbench.suite import FORMATS, detection_summary

    g = p.add_argument_group("suite", "how the suite is read (each flag overrides the suite's skillbench.toml)")
    # The registry's names and detection rules are read only when used (a bad --format, --help): declaring them
    # imports no layout, so building the command line stays fast.
    fmt = g.add_argument("--format", choices=FORMATS, metavar="FORMAT", default=None,
                         help="suite layout, one of %(choices)s (default: detected — %(detection)s)")
    fmt.detection = _Lazy(detection_summary)  # type: ignore[attr-defined] - read by argparse's %(detection)s
    g.add_argument("--config", metavar="FILE",
                   help="a skillbench.toml to read instead of the suite's own (for a repository that commits none)")
    g.add_argument("--skills-root", metavar="DIR",
                   help="the skills tree (overrides [suite].skills_root); for a dotnet tree, another tree's plugins/ "
                        "folder")
    g.add_argument("--site-base", metavar="URL",
                   help="published site base of skill_url, e.g. https://skills.qdrant.tech (overrides "
                        "[suite].site_base)")
    g.add_argument("--heldout-prefix", action="append", metavar="P",
                   help="name prefix of held-out prompts, never scored; repeatable (overrides "
                        "[suite].heldout_prefixes)")
    g.add_argument("--heldout-tag", action="append", metavar="T",
                   help="tag of held-out prompts (a dotnet stimulus's tags; key=value for a mapping), never "
                        "scored; repeatable (overrides [suite].heldout_tags)")
    g.add_argument("--skip-missing", action="store_true",
                   help="a task's workspace file the tree lacks drops it and what uses it (a warning each, recorded "
                        "with each run and listed in the scorecard's coverage), instead of an error")


def suite_overrides(args: argparse.Namespace, *, trigger_set: str | None = None) -> SuiteOverrides:
    """The suite flags of parsed arguments (:func:`add_suite_args`) as the one object a suite is read with.

    Raises:
        UsageError: ``--skills-root`` is not a folder, or ``--config`` is not a file.
    """
    from skillbench.suite import SuiteOverrides

    if args.skills_root and not Path(args.skills_root).is_dir():
        raise UsageError(f"--skills-root {args.skills_root}: not a folder")
    if args.config and not Path(args.config).is_file():
        raise UsageError(f"--config {args.config}: not a file (pass the path of a skillbench.toml)")
    def absolute(path: str | None) -> str | None:  # the weekly chain's kernels run in notebooks/, not here
        return str(Path(path).resolve()) if path else None

    return SuiteOverrides(
        format=args.format, skills_root=absolute(args.skills_root), site_base=args.site_base,
        heldout_prefixes=tuple(args.heldout_prefix) if args.heldout_prefix else None,
        heldout_tags=tuple(args.heldout_tag) if args.heldout_tag else None,
        skip_missing=args.skip_missing, config=absolute(args.config), trigger_set=absolute(trigger_set))
