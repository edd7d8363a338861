"""Judge calibration: agreement statistics, the calibration run, human labels, the pairwise judge's bias, judge
studies (several judges, intervals, a recommendation) and the weekly drift sentinel on a frozen gold set.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
