"""Skill quality before the runs: static checks of each SKILL.md, an anchored LLM judge of four dimensions,
measured triggering, and a description optimizer tested on held-out triggers."""

from __future__ import annotations
