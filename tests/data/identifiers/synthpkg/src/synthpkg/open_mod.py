from synthpkg._compiled_part import *  # noqa: F403 - a compiled module griffe cannot read
