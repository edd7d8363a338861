"""The simulated Anthropic Messages endpoint: the offline default backend of every model-calling command.

The real Claude Code CLI and the real ``anthropic`` SDK talk to it over HTTP on 127.0.0.1. It simulates
agent models (profiles per model family, working in a task's workspace when the prompt is a task, and the
true effect of each listed version of a skill), a judge, a published skills site and faults, and keeps the
ground truth of what each simulated run decided (rubric items and checks), which a harness reads back over
``GET /skillbench/truth``. The headers, routes and key it speaks are :mod:`skillbench.wire`'s; the truth rows'
format is :mod:`skillbench.ledgers._truth`'s.

Use :func:`simulated_endpoint` (a context manager yielding the base URL) or :class:`SimServer`. Names are
imported on first use (PEP 562), so reading the profiles does not start loading the server.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1), so a command
# pays only for the modules it touches.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
