"""Skills written with Anthropic's skill-creator: ``<skill>/evals/evals.json`` and trigger eval sets, loaded into
the one :class:`~skillbench.suite._format.Suite` (see :mod:`skillbench.suite.skill_creator._layout`).
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
