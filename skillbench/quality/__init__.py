"""Skill quality before the runs: static checks of each SKILL.md, PluginEval's anchored dimensions judged by a
model (kappa between samples, a weighted composite), measured triggering beside the predicted, and a description
optimizer tested on held-out triggers.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
