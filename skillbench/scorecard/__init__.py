"""The scorecard: qdrant's scoring maths, lift statistics, dotnet's preference gate, the history and its noise band,
the simulation check (a simulated week against its truth) and the placebo / A/A controls. Every verdict, its
precedence and its plain words: :mod:`skillbench.scorecard._verdicts` (:func:`verdicts_table` for the docs).

:func:`write_scorecard` writes ``scorecard.md`` and upserts the history; :func:`scorecard_frames` hands a notebook
the tidy DataFrames behind every table.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
