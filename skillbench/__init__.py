"""skillbench: does this skill make the model answer better, by how much, at what cost, and can we trust it?

The pipeline is one sub-package per stage (see ARCHITECTURE.md): :mod:`skillbench.suite` → :mod:`~skillbench.generation`
→ :mod:`~skillbench.signals` → :mod:`~skillbench.judge` → :mod:`~skillbench.calibration` → :mod:`~skillbench.scorecard`
→ :mod:`~skillbench.report`, run week by week by :mod:`~skillbench.weekly`, with :mod:`~skillbench.ledgers` (the run
directory's files) and :mod:`~skillbench.sim` (the simulated endpoint) beside them. This namespace holds the entry
points a notebook user needs; everything else is reached through its sub-package.

Names are imported on first use (PEP 562), so ``skillbench validate`` does not pay for pandas, scipy and the SDKs.
"""

import lazy_loader

__version__ = "0.1.0"

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
