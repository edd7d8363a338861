"""The forced tools of the model calls skill quality makes, declared once: the client forces them and the simulated
endpoint recognises its role by them (:mod:`skillbench.sim.roles`)."""

from __future__ import annotations

SKILL_QUALITY_TOOL = "record_skill_quality"  # lint-skills --judge: one skill's anchored scores with quoted evidence
DESCRIPTION_TOOL = "propose_description"  # optimize-description: a rewritten description from the train failures
NEAR_MISS_TOOL = "propose_near_misses"  # optimize-description: should-not queries sharing the family's vocabulary
