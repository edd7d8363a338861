"""The report: HTML pages and the figures (:mod:`skillbench.report.figures`) that plot the frames the scorecard
computed. The markdown helpers every page shares are :mod:`skillbench.markdown`, below the scorecard.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
