"""Generation: the plan, the real Claude Code CLI call, the sandbox it runs in, the endpoint, reconciliation.

:func:`generate` runs every planned run of a week in a fresh sandbox (one Docker container per run, or the
local sandbox), resumably, and ends with ``manifest.csv`` and ``reconciliation.json``. A task prompt's run gets
its workspace and setup first and its checks graded after, in the same container (``checks.csv``).
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
