"""Helpers the tests share (no tests here): paths and skips (:mod:`.shared`), the simulated endpoint and the
real CLI (:mod:`.sim`), the judge's generated week (:mod:`.judge`) and the weekly chain (:mod:`.weekly`).

Fixtures built from them are in ``tests/conftest.py``.
"""
