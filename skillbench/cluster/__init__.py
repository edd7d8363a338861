"""Where the work runs: this process's threads, or a dask.distributed cluster (one task per sandbox run or per judge
HTTP request, Dask's re-runs off), what runs on a worker, and the worker check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "open_executor", "executor_opener", "ExecutorError", "check_executor_args", "DaskExecutor",
        "remote_workers", "refuse_remote_workers"
    ), "executor"),
    **dict.fromkeys(("DaskSandbox", "WORKER_LOST_EXIT"), "sandbox"),
    **dict.fromkeys(("DaskTransport",), "transport"),
    **dict.fromkeys(("check_workers", "WorkerStatus"), "checks"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.cluster.checks import (
        WorkerStatus,
        check_workers,
    )
    from skillbench.cluster.executor import (
        DaskExecutor,
        ExecutorError,
        check_executor_args,
        executor_opener,
        open_executor,
        refuse_remote_workers,
        remote_workers,
    )
    from skillbench.cluster.sandbox import (
        WORKER_LOST_EXIT,
        DaskSandbox,
    )
    from skillbench.cluster.transport import (
        DaskTransport,
    )
