"""The suite: its format (prompts, rubrics, skills), its config file, and preflight.

A suite directory holds ``test-prompts/`` and the skills under test (:mod:`skillbench.suite._qdrant`) — or is a
dotnet/skills tree (``tests/`` and ``plugins/``: :mod:`skillbench.suite.dotnet`) or a skill-creator skill folder
(:mod:`skillbench.suite.skill_creator`); each format is a :class:`Layout` of the registry
(:mod:`skillbench.suite._layouts`), and :func:`detect_layout` says which one a folder is. :func:`load_suite` reads
it for a run and :func:`preflight` reports every defect without writing anything.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
