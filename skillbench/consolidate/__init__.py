"""Consolidation: the legs of a CI matrix (``generate``/``judge --shard i/N``) merged into one run directory,
failing closed unless every declared leg reported, each planned run came from exactly one leg and all legs ran the
same thing.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
