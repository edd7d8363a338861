"""dotnet/skills eval specs as a suite: both formats (skill-validator ``scenarios:``, Vally ``stimuli:``), their
tree layout, and dotnet's authoring gate — all loading into the one :class:`~skillbench.suite._format.Suite`.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
