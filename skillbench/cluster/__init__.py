"""Where the work runs: this process's threads, or a dask.distributed cluster (one task per sandbox run or per judge
HTTP request, Dask's re-runs off), what runs on a worker, and the worker check.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
