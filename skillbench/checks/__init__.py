"""Deterministic checks: grading a run's checks (:mod:`~skillbench.checks._grade`) by their types' records
(:mod:`skillbench.checktypes`), the run's ``checks.json`` / the week's ``checks.csv``
(:mod:`~skillbench.checks._ledger`), and the docs' table of check types (:mod:`~skillbench.checks._table`).
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
