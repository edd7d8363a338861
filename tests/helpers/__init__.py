"""Helpers the tests share (no tests here): paths and skips (:mod:`.shared`), the simulated endpoint and the
real CLI (:mod:`.sim`), the judge's generated week (:mod:`.judge`), the weekly chain (:mod:`.weekly`) and
building an artefact once for every pytest-xdist worker (:mod:`.once`).

Fixtures built from them are in ``tests/conftest.py``.
"""
