"""Fabricated identifiers: the names an answer uses in the languages its suite declares, resolved against the real
API surface of each declared library at the version the suite targets (read statically, cached per version).

A judge cannot know what exists in a library; a program can. An identifier is ``resolved`` (the surface has it),
``unresolved`` (the surface is known and lacks it: a fabrication candidate) or ``unchecked`` (a language or a library
the suite did not declare, or a name the surface cannot decide, such as a DataFrame column read as an attribute).
Precision comes first: a real identifier flagged as fabricated is the expensive error.
"""

import lazy_loader

# The public names are declared once, in __init__.pyi, and imported on first use (SPEC 1).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
