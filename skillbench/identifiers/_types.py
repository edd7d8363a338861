"""The one marker the flattened surface and the extractor share (a module of its own: no griffe at check time)."""

UNKNOWN_TYPE = "?"  # a type the surface cannot follow: a member missing from it stays unchecked
