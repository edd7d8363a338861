"""The weekly chain: parametrized notebooks run by papermill, the stage functions they (and the CLI) call,
notebook helpers, and the analysis across weeks.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
