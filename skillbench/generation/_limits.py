"""What one run's container may use, and how much of its output is kept.

:class:`ContainerLimits` is configured per pass (:class:`~skillbench.generation._options.GenerateOptions`) and
recorded in every run's ``metadata.json`` (``container_limits``). The engine's storage driver has no per-container
size quota, so the root filesystem is read-only and everything a run writes goes to sized tmpfs mounts (the
workspace, the two users' HOMEs, ``/tmp``); tmpfs pages are memory, so the memory limit bounds them together.

Captured output is kept as its first and last half-cap (:class:`Capture`): a command that prints without end
costs the host at most the cap, and the run records how much was cut (``output_cut``).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from dataclasses import dataclass
from typing import Any

MB = 1024 * 1024
CUT_MARK = b"\n[skillbench: %d bytes cut here; the first and last %d bytes are kept]\n"


@dataclass(frozen=True)
class ContainerLimits:
    """One run container's limits (Docker sandbox only; the local sandbox has none).

    The defaults fit a dotnet or Python build with a few test processes: 4 GiB of memory (tmpfs content
    included), 1024 processes or threads, 2 CPUs, a 2 GiB workspace, 512 MiB per HOME and 1 GiB of ``/tmp``.
    ``log_kb`` caps setup output and the CLI's stderr, ``output_mb`` the transcript and each probe's output.
    """

    memory_mb: int = 4096
    pids: int = 1024
    cpus: float = 2.0
    workspace_mb: int = 2048
    home_mb: int = 512
    tmp_mb: int = 1024
    log_kb: int = 1024
    output_mb: int = 64

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e9:
                raise ValueError(f"container limit {f.name}: {value!r} is not a positive number")

    @property
    def log_bytes(self) -> int:
        return int(self.log_kb * 1024)

    @property
    def output_bytes(self) -> int:
        return int(self.output_mb * MB)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class Capture:
    """A stream kept as its first and last ``cap // 2`` bytes; ``cut`` counts what was dropped between."""

    def __init__(self, cap: int):
        self.cap = cap
        self.half = cap // 2
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0

    def add(self, chunk: bytes | None) -> None:
        if not chunk:
            return
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.cap - self.half:
            self.tail_size -= len(self.tail.popleft())  # whole chunks only: the trim below keeps the exact tail

    @property
    def cut(self) -> int:
        return max(0, self.total - self.cap)

    def value(self) -> bytes:
        tail = b"".join(self.tail)
        if not self.cut:
            return bytes(self.head) + tail
        keep = self.cap - self.half
        return bytes(self.head) + CUT_MARK % (self.cut, self.half) + tail[-keep:] if keep else bytes(self.head)


def cut_record(cap: int, cut: int) -> dict[str, int]:
    """What a run records of one stream it cut."""
    return {"cap_bytes": cap, "cut_bytes": cut}


def limits_hit(report: str, limits: ContainerLimits) -> list[str]:
    """The limits a container hit, read from :data:`ACCOUNT_SCRIPT`'s report (one phrase each)."""
    hit = []
    for line in report.splitlines():
        parts = line.split()
        if parts[:1] == ["pids"] and len(parts) == 2 and parts[1].isdigit() and int(parts[1]) > 0:
            hit.append(f"pids ({limits.pids} processes)")
        elif parts[:1] == ["oom"] and len(parts) == 2 and parts[1].isdigit() and int(parts[1]) > 0:
            hit.append(f"memory ({limits.memory_mb} MB)")
        elif parts[:1] == ["disk"] and len(parts) == 4 and parts[2].isdigit() and parts[3].isdigit():
            size, avail = int(parts[2]), int(parts[3])
            if size and avail * 100 < size:  # under 1% left: a filler ran it out (tmpfs has no reserve)
                hit.append(f"disk {parts[1]} ({size // 1024} MB)")
    return hit


# Run as root at the end of a run: how often the pids and memory limits refused something (cgroup v1 or v2
# files, whichever the engine mounts), and each tmpfs mount's size and free space (KiB).
ACCOUNT_SCRIPT = """\
cg=/sys/fs/cgroup
echo pids $(cat $cg/pids/pids.events $cg/pids.events 2>/dev/null | awk '$1=="max"{print $2; exit}')
echo oom $(cat $cg/memory/memory.oom_control $cg/memory.events 2>/dev/null | awk '$1=="oom_kill"{print $2; exit}')
df -P -k "$@" | awk 'NR>1{print "disk", $6, $2, $4}'
"""
