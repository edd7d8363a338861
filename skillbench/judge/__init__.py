"""The judges: a blind rubric judge with verified evidence and a position-swapped pairwise judge.

Both speak :mod:`skillbench.judge._protocol` (shared byte for byte with the simulated judge) through the real
``anthropic`` SDK (:class:`JudgeClient`), retry a failed slot once, and append resumable ledgers.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
