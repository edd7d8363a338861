"""The run directory's contract: every file name (:mod:`~skillbench.ledgers._files`), every column list
(:mod:`~skillbench.ledgers._columns`), a reader for every file (the week's ledgers and records, and a run folder's:
:mod:`~skillbench.ledgers._run_folder`), the append-only ledger, atomic writes, run keys and the
reconciliation rule, and the shards of a CI matrix (the slice each leg owns, its summary, a consolidation's status).
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
