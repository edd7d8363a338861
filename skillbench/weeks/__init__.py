"""Every week of a suite in SQL: :func:`connect` opens an in-memory DuckDB connection whose views are the ledgers of
all weeks (:mod:`skillbench.ledgers._views`), and the few ready queries the ``explore_weeks`` notebook shows.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
