"""The Messages endpoint of a pass: the real API, a running endpoint, or a simulation started for the pass.

Every model-calling stage opens its endpoint here::

    with model_endpoint(backend, endpoint=endpoint, suite_dir=suite) as ep:
        ...  # ep.base_url, ep.api_key, ep.kind, ep.site_base; ep.fetch_truth(run_ids) for a simulation

A running endpoint is found (and probed) by :func:`skillbench.generation.existing_endpoint`; only when the pass
asked for the simulation without ``--endpoint`` is one started, here, above both: the passes below take the
endpoint they are handed and never import the simulator (ARCHITECTURE.md, the layers).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbench.generation import PROBE_TIMEOUT, Endpoint, existing_endpoint, sim_api_key

if TYPE_CHECKING:
    from skillbench.suite import Suite


@contextmanager
def model_endpoint(
    backend: str | None,
    *,
    endpoint: str | None = None,
    suite_dir: str | Path | Suite | None = None,
    seed: int = 0,
    profiles: Any = None,
    truth: str | Path | None = None,
    faults: Sequence[Any] | None = None,
    probe_timeout: float = PROBE_TIMEOUT,
) -> Iterator[Endpoint]:
    """The endpoint for a pass, started and stopped around the ``with`` block when it is ours.

    Args:
        backend: ``sim``, ``anthropic``, or None for the default (see :func:`skillbench.generation.resolve_backend`).
        endpoint: a running endpoint's base URL; with ``sim`` it must answer ``/skillbench/info``.
        suite_dir: the suite the simulation answers for (sim without ``endpoint``): a folder, or the loaded
            :class:`~skillbench.suite.Suite` itself, so the simulation answers exactly the prompts being run.
        seed: the simulation's seed.
        profiles: the simulation's profile file (None: the shipped one).
        truth: also write the simulation's truth rows to this file (read them back with ``Endpoint.fetch_truth``).
        faults: faults to inject (sim without ``endpoint``).
        probe_timeout: seconds the probe of a given endpoint may take.

    Raises:
        BackendError: see :func:`skillbench.generation.existing_endpoint`.
    """
    found = existing_endpoint(backend, endpoint=endpoint, probe_timeout=probe_timeout)
    if found is not None:
        yield found
        return
    from skillbench.sim import Serving, SimServer

    # the simulation requires its key (SKILLBENCH_SIM_KEY, else the default) as the API requires one, so another
    # command given only its URL (--endpoint) finds it by the same rule; a run's sandbox never holds it either way
    key = sim_api_key()
    with SimServer(suite_dir, seed=seed, profiles=profiles, truth=truth, faults=faults,
                   serving=Serving(api_key=key)) as server:
        yield Endpoint(base_url=server.base_url, api_key=key, kind="simulated",
                       site_base=server.site_base, truth=server.truth.default)
