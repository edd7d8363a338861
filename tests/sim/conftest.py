"""Fixtures of the simulated endpoint's tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import anthropic
import pytest

from skillbench.sim import SimServer
from skillbench.wire import SIM_API_KEY


@pytest.fixture
def endpoint() -> Iterator[Callable[..., anthropic.Anthropic]]:
    """``make(**judge)`` → an SDK client on a fresh endpoint (seed 3) whose default judge has that profile."""
    servers: list[SimServer] = []

    def make(**judge: float) -> anthropic.Anthropic:
        server = SimServer(None, seed=3, profiles={"judges": {"default": judge}}).start()
        servers.append(server)
        return anthropic.Anthropic(base_url=server.base_url, api_key=SIM_API_KEY, max_retries=0)

    yield make
    for server in servers:
        server.stop()
