"""Helpers for the simulated-endpoint tests: a small suite, a loopback-only network namespace, and a
runner for the real Claude Code CLI against the endpoint."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import pytest
import yaml

from skillbench.generation import CliCall, ToolMissing, claude_path, cli_args, cli_env
from skillbench.suite import RunSettings
from skillbench.wire import SIM_API_KEY

T = TypeVar("T")
CLONE_NEWNET = 0x40000000

SITE = "https://skills.example.test"
CHAIN_HUB = """\
---
name: chain-care
description: Use when cleaning, lubricating, waxing or replacing a bicycle chain, or when a chain squeaks or skips.
---
# Chain care

Pick the guide that fits the question:

- [Waxing a chain](waxing/SKILL.md): immersion waxing from a new chain.
- Cleaning with a degreaser: see the general steps below.

Always measure wear before spending time on an old chain.
"""
CHAIN_WAX = """\
---
name: chain-waxing
description: Use when someone wants to wax a bicycle chain by immersion.
---
# Waxing a chain

1. Strip the factory grease with a solvent bath before the first waxing.
2. Let the chain dry completely; wax will not bond to a wet chain.
3. Keep a second waxed chain so you can swap instead of re-waxing on the spot.
Never put wet lube on top of wax.
"""
TYRE = """\
---
name: tyre-repair
description: Use when a bicycle tyre keeps going flat, to find the puncture and patch or replace the tube.
---
# Tyre repair

Find the hole by inflating the tube and listening, then check the tyre casing for the object that caused it.
"""
PROMPTS = {
    "chain-wax": {
        "skill_url": f"{SITE}/chain-care/waxing/SKILL.md",
        "prompt": "How should I wax my bicycle chain so it stays clean and runs quietly?",
        "rubric": [
            ("must", "Recommends stripping the factory grease with a solvent before the first waxing"),
            ("must", "Explains that the chain must be completely dry before it goes into the wax"),
            ("must", "Mentions measuring chain wear with a chain checker before waxing an old chain"),
            ("bonus", "Suggests keeping a second waxed chain to rotate between rides"),
            ("avoid", "Recommends spraying wet lube on top of a freshly waxed chain"),
        ],
    },
    "tyre-flat": {
        "skill_url": f"{SITE}/tyre-repair/SKILL.md",
        "prompt": "My bicycle tyre keeps going flat every few days. How do I find the puncture and fix it?",
        "rubric": [
            ("must", "Explains that the tube should be inflated and listened to or dunked in water to find the hole"),
            ("must", "Recommends checking the inside of the tyre casing for the thorn or glass that caused it"),
            ("must", "Mentions roughening the tube around the hole before applying a patch"),
            ("bonus", "Suggests carrying a spare tube for repairs on the road"),
            ("avoid", "Recommends riding on the flat tyre to get home quickly"),
        ],
    },
}


def make_suite(root: Path) -> Path:
    """A two-family suite (a hub with a sub-skill, and a single-file skill) in ``root``; returns its dir."""
    skills = root / "skills"
    for rel, text in {"chain-care/SKILL.md": CHAIN_HUB, "chain-care/waxing/SKILL.md": CHAIN_WAX,
                      "tyre-repair/SKILL.md": TYRE}.items():
        (skills / rel).parent.mkdir(parents=True, exist_ok=True)
        (skills / rel).write_text(text, encoding="utf-8")
    (root / "test-prompts").mkdir(parents=True, exist_ok=True)
    for name, spec in PROMPTS.items():
        data = {"name": name, "product_area": "bicycles", "skill_url": spec["skill_url"], "prompt": spec["prompt"],
                "rubric": [{"type": t, "text": x} for t, x in spec["rubric"]]}
        (root / "test-prompts" / f"{name}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    (root / "skillbench.toml").write_text(f'[suite]\nskills_root = "skills"\nsite_base = "{SITE}"\n',
                                          encoding="utf-8")
    return root


def write_profiles(path: Path, models: Mapping[str, Mapping[str, Any]], **rest: Any) -> Path:
    path.write_text(yaml.safe_dump({"models": dict(models), **rest}, sort_keys=False), encoding="utf-8")
    return path


QUIET = {"trigger": 0.0, "file_read": 0.0, "follow_link": 0.0, "self_serve": 0.0, "web_search": 0.0,
         "deny_rate": 0.0, "budget_cross": 0.0}


def forced(**knobs: Any) -> dict[str, Any]:
    """A profile that does nothing optional unless a knob says so (every probability 0 or 1)."""
    return {**QUIET, "item_spread": 0.0, "must": {"without": 1.0, "with": 1.0},
            "bonus": {"without": 0.0, "with": 1.0}, "avoid": {"without": 1.0, "with": 0.0}, **knobs}


# -- the CLI ------------------------------------------------------------------------------------------


def require_cli() -> Path:
    """The pinned CLI; skips outside CI when it is missing, fails in CI (``make setup`` installs it)."""
    try:
        return claude_path()
    except ToolMissing as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have the pinned CLI: {exc}")
        pytest.skip(str(exc))


@dataclass
class CliRun:
    """One finished CLI run."""

    run_id: str
    returncode: int | None
    events: list[dict[str, Any]]
    stderr: str
    seconds: float
    home: Path
    timed_out: bool = False
    strace: str = ""

    @property
    def init(self) -> dict[str, Any]:
        return next(e for e in self.events if e.get("type") == "system" and e.get("subtype") == "init")

    @property
    def result(self) -> dict[str, Any] | None:
        return next((e for e in self.events if e.get("type") == "result"), None)

    def blocks(self, role: str) -> list[dict[str, Any]]:
        out = []
        for e in self.events:
            if e.get("type") == role:
                content = (e.get("message") or {}).get("content")
                out.extend(b for b in content or [] if isinstance(b, dict))
        return out

    def tool_uses(self, name: str | None = None) -> list[dict[str, Any]]:
        return [b for b in self.blocks("assistant") if b.get("type") == "tool_use" and name in (None, b.get("name"))]

    def summary(self) -> str:
        return f"rc={self.returncode} events={[e.get('type') for e in self.events]} stderr={self.stderr[-800:]}"


@dataclass
class CliOptions:
    prompt: str
    model: str = "sonnet"
    run_id: str = "run"
    attempt: int = 1
    families: Sequence[Path] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    budget: float = 2.0
    timeout: float = 90.0
    strace: bool = False


def run_cli(opts: CliOptions, base_url: str, workdir: Path, prefix: Sequence[str] = ()) -> CliRun:
    """Run ``claude -p`` (qdrant's flags) in a fresh HOME, TMPDIR and cwd against ``base_url``."""
    exe = require_cli()
    run_dir = Path(tempfile.mkdtemp(prefix=f"{opts.run_id}-", dir=workdir))
    home, tmp, cwd = run_dir / "home", run_dir / "tmp", run_dir / "work"
    for d in (home, tmp, cwd):
        d.mkdir()
    for fam in opts.families:
        shutil.copytree(fam, home / ".claude" / "skills" / fam.name)
    call = CliCall(prompt=opts.prompt, model=opts.model, run_id=opts.run_id, attempt=opts.attempt)
    settings = RunSettings(max_budget_usd=opts.budget)
    argv = cli_args(call, settings, claude=str(exe))
    env = cli_env(call, base_url=base_url, api_key=SIM_API_KEY, home=str(home), tmpdir=str(tmp),
                  headers=opts.headers, extra=opts.env)
    trace = run_dir / "connect.strace"
    if opts.strace and shutil.which("strace"):
        argv = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace), *argv]
    t0 = time.monotonic()
    proc = subprocess.Popen([*prefix, *argv], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=opts.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
    events = []
    for line in out.splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return CliRun(opts.run_id, None if timed_out else proc.returncode, events, err, time.monotonic() - t0, home,
                  timed_out, trace.read_text() if trace.exists() else "")


# -- a loopback-only network namespace ----------------------------------------------------------------


class LoopbackNet:
    """A network namespace with only ``lo`` up, held by a sleeping process.

    The endpoint's listening socket is created inside it (from a thread that ``setns``-es into it), and
    the CLI runs inside it through ``nsenter``, so nothing the CLI does can reach beyond loopback.
    ``available`` is False when the machine does not allow it (not root); then tests run on the host's
    loopback and the strace check still guards them.
    """

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.available = False

    def __enter__(self) -> LoopbackNet:
        if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter"):
            return self
        try:
            self.proc = subprocess.Popen(["unshare", "-n", "sh", "-c", "ip link set lo up && exec sleep 86400"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except OSError:
            return self
        ns = f"/proc/{self.proc.pid}/ns/net"
        for _ in range(100):
            if self.proc.poll() is not None:
                return self
            if os.readlink(ns) != os.readlink("/proc/self/ns/net") and self._lo_up():
                self.available = True
                return self
            time.sleep(0.02)
        return self

    def _lo_up(self) -> bool:
        out = subprocess.run(["nsenter", f"--net=/proc/{self.proc.pid}/ns/net", "ip", "-o", "link", "show", "lo"],
                             capture_output=True, text=True)
        return "UP" in out.stdout.split(">")[0] if out.returncode == 0 else False

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()

    def interfaces(self) -> list[str]:
        """Names of the network interfaces inside the namespace."""
        out = subprocess.run([*self.prefix, "ip", "-o", "link", "show"], capture_output=True, text=True, check=True)
        return [line.split(":")[1].strip().split("@")[0] for line in out.stdout.splitlines() if ":" in line]

    @property
    def prefix(self) -> list[str]:
        """The command prefix that runs a program inside the namespace."""
        return ["nsenter", f"--net=/proc/{self.proc.pid}/ns/net", "--"] if self.available else []

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in a thread that joined the namespace (sockets it creates live there)."""
        if not self.available:
            return fn()
        box: dict[str, Any] = {}

        def target() -> None:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(f"/proc/{self.proc.pid}/ns/net", os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns failed")
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box["error"] = exc
            finally:
                os.close(fd)

        t = threading.Thread(target=target)
        t.start()
        t.join()
        if "error" in box:
            raise box["error"]
        return box["value"]


def connect_targets(strace_text: str) -> list[str]:
    """The addresses of every ``connect()`` in an strace log (``127.0.0.1:PORT``, ``unix:PATH``, …)."""
    import re

    out = []
    for line in strace_text.splitlines():
        if "connect(" not in line:
            continue
        if m := re.search(r'sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)', line):
            out.append(f"{m.group(2)}:{m.group(1)}")
        elif m := re.search(r'sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"', line):
            out.append(f"[{m.group(2)}]:{m.group(1)}")
        elif "AF_UNIX" in line:
            out.append("unix")
        elif "AF_INET" in line or "AF_NETLINK" in line:
            out.append(line.strip())
    return out


def final_check_truth(run_dir: Path) -> pd.DataFrame:
    """The simulation's decided outcome of every check of each run's final attempt: ``run_id, check_id, decided``."""
    from skillbench.ledgers import METADATA_FILE, TRUTH_FILE
    from skillbench.vocab import CHECK_ITEM

    truth = pd.read_csv(run_dir / TRUTH_FILE, dtype=str, keep_default_na=False)
    final = {}
    for meta in run_dir.glob(f"*/{METADATA_FILE}"):
        data = json.loads(meta.read_text())
        final[data["run_id"]] = str(max(a["attempt"] for a in data["attempts"]))
    truth = truth[(truth["item_type"] == CHECK_ITEM) & (truth["attempt"] == truth["run_id"].map(final))]
    return truth[["run_id", "check_id", "decided"]].reset_index(drop=True)


def checks_against_truth(run_dir: Path) -> pd.DataFrame:
    """checks.csv joined with the truth (outer): rows where the two disagree or one side is missing are problems."""
    from skillbench.ledgers import CHECKS_FILE, read_checks

    checks = read_checks(run_dir / CHECKS_FILE)
    return checks.merge(final_check_truth(run_dir), on=["run_id", "check_id"], how="outer", indicator=True)


def assert_checks_agree_with_truth(run_dir: Path, min_rows: int = 1) -> pd.DataFrame:
    """Every check row of the week equals the simulation's decided outcome, and neither side lacks a row."""
    both = checks_against_truth(run_dir)
    assert len(both) >= min_rows and both["_merge"].eq("both").all(), both[~both["_merge"].eq("both")]
    disagree = both[both["status"] != both["decided"]]
    assert disagree.empty, disagree[["run_id", "check_id", "status", "decided", "detail"]].to_string()
    return both


def generate_sim_week(suite_dir: Path, out: Path, *, run_key: str, conditions: Sequence[str], reps: int = 1,
                      seed: int = 0, skip_missing: bool = False, **options: Any) -> Path:
    """One generate pass of haiku on the simulated endpoint in sealed containers; returns ``out``.

    The simulation answers the suite as loaded (as ``skillbench generate`` does); the CLI's own retries are off so
    a fault shows as the run's state. ``options``: more :class:`GenerateOptions` fields (``families``, ``prompts``).
    """
    from skillbench.generation import GenerateOptions, generate
    from skillbench.runtime import PassContext
    from skillbench.suite import SuiteOverrides, load_suite
    from skillbench.weekly import model_endpoint

    suite = load_suite(suite_dir, SuiteOverrides(skip_missing=skip_missing))
    opts = GenerateOptions(run_key=run_key, out_dir=out, models=["haiku"], conditions=list(conditions), reps=reps,
                           jobs=3, seed=seed, sandbox="docker", extra_env={"CLAUDE_CODE_MAX_RETRIES": "0"}, **options)
    generate(suite, opts, PassContext(endpoint=lambda: model_endpoint("sim", suite_dir=suite), log=lambda m: None))
    return out
