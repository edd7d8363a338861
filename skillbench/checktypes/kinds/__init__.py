"""One module per check type (or family of types); each registers its records at import.

:mod:`skillbench.checktypes` imports every module here, so a new check type is one new module.
"""
