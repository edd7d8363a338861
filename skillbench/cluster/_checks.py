"""Is every worker ready? The readiness of each worker of a cluster, one line each (``skillbench worker check``).

A worker is ready when its Docker engine answers, the runner image with the client's expected **tag** (the hash of
the image's inputs, :func:`skillbench.generation._provenance.image_tag`) is present, and — for sealed runs against
the simulated endpoint — socat is in it. A worker that is not ready is named with how to fix it (usually
``skillbench image build`` on it). Generation with ``--executor dask`` runs the same check before its first run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillbench.cluster._worker import worker_readiness


@dataclass(frozen=True)
class WorkerStatus:
    """One worker's readiness; ``problem`` is "" when it is ready."""

    address: str
    host: str = ""
    engine: str = ""
    image: str = ""
    image_id: str = ""
    problem: str = ""

    @property
    def ready(self) -> bool:
        return not self.problem

    def line(self) -> str:
        """``ADDRESS (host): ready — docker V, TAG (id)`` or ``ADDRESS (host): NOT READY — why, and the fix``."""
        where = f"{self.address} ({self.host})" if self.host else self.address
        if self.ready:
            return f"{where}: ready — docker {self.engine}, {self.image} ({self.image_id.removeprefix('sha256:')[:12]})"
        return f"{where}: NOT READY — {self.problem}"


def check_workers(client: Any, image: str, *, socat: bool = True) -> list[WorkerStatus]:
    """Every worker's readiness for runs with the runner image ``image`` (``socat``: sealed runs), by address.

    A worker where the check itself raised is not ready, with the error as its problem.
    """
    answers = client.run(worker_readiness, image, socat=socat, on_error="return")
    out = []
    for address, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            out.append(WorkerStatus(address, image=image, problem=f"the check failed there ({type(answer).__name__}: "
                                                                  f"{str(answer).splitlines()[0][:160]})"))
            continue
        out.append(WorkerStatus(address, host=answer.get("host", ""), engine=answer.get("engine", ""), image=image,
                                image_id=answer.get("image_id", ""), problem=answer.get("problem", "")))
    return out
