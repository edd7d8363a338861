from ._checks import (
    WorkerStatus as WorkerStatus,
    check_workers as check_workers,
)
from ._executor import (
    DaskExecutor as DaskExecutor,
    ExecutorError as ExecutorError,
    check_executor_args as check_executor_args,
    executor_opener as executor_opener,
    open_executor as open_executor,
    refuse_remote_workers as refuse_remote_workers,
    remote_workers as remote_workers,
)
from ._sandbox import (
    WORKER_LOST_EXIT as WORKER_LOST_EXIT,
    DaskSandbox as DaskSandbox,
)
from ._transport import (
    DaskTransport as DaskTransport,
)
