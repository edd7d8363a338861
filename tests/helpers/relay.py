"""A run's relay plan for sandbox tests that need no endpoint (the relay is served but never asked)."""

from __future__ import annotations

from skillbench.generation import Endpoint, RelayPlan

NOWHERE = "http://127.0.0.1:9"  # the discard port: nothing listens there


def offline_plan(run_id: str = "r") -> RelayPlan:
    """The plan of a run whose sandbox never calls a model (a fake CLI, a refused run)."""
    return RelayPlan.for_run(Endpoint(base_url=NOWHERE, api_key="unused", kind="simulated"), run_id, 1)
