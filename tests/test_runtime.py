"""The pass context: an open endpoint is lent, an opener is called only when the pass has work, and so is the
executor; the judge model is resolved in one place."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from skillbench.generation import LocalExecutor
from skillbench.judge import DEFAULT_JUDGE_MODEL, resolve_judge_model
from skillbench.runtime import PassContext


@dataclass
class _Endpoint:
    base_url: str = "http://127.0.0.1:1"
    api_key: str = "k"
    kind: str = "simulated"

    @property
    def simulated(self) -> bool:
        return self.kind == "simulated"


class _Executor:
    kind = "fake"

    def sandbox(self, requested, endpoint, out_dir):  # pragma: no cover - not called here
        raise AssertionError

    def width(self, jobs: int) -> int:
        return jobs or 7

    def http_transport(self, *, simulated: bool) -> object:
        return ("transport", simulated)


def test_an_open_endpoint_is_lent_and_an_opener_is_called_per_pass() -> None:
    ep = _Endpoint()
    with PassContext(endpoint=ep).open_endpoint() as got:
        assert got is ep
    opened: list[str] = []

    @contextlib.contextmanager
    def opener() -> Iterator[_Endpoint]:
        opened.append("open")
        yield ep
        opened.append("closed")

    ctx = PassContext(endpoint=opener)
    assert opened == [], "nothing is opened before the pass asks"
    with ctx.open_endpoint() as got:
        assert got is ep and opened == ["open"]
    assert opened == ["open", "closed"]
    with pytest.raises(ValueError, match="needs an endpoint"):
        PassContext().open_endpoint()


def test_the_executor_opens_only_when_the_pass_has_work() -> None:
    opened: list[str] = []

    @contextlib.contextmanager
    def opener() -> Iterator[_Executor]:
        opened.append("open")
        yield _Executor()

    ctx = PassContext(executor=opener)
    with ctx.judge_transport(needed=False, simulated=True) as transport:
        assert transport is None and opened == []  # nothing to grade: no cluster connection
    with ctx.judge_transport(needed=True, simulated=True) as transport:
        assert transport == ("transport", True) and opened == ["open"]
    with PassContext().judge_transport(needed=True, simulated=False) as transport:
        assert transport is None  # this process's threads: the SDK's own transport


def test_this_process_runs_one_run_at_a_time_unless_asked() -> None:
    local = LocalExecutor(log=lambda message: None)
    assert (local.width(0), local.width(3)) == (1, 3)
    assert local.http_transport(simulated=True) is None


@pytest.mark.parametrize(("asked", "recorded", "expected"), [
    ("claude-haiku-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"),
    ("", "claude-sonnet-5-5", "claude-sonnet-5-5"),
    (None, None, DEFAULT_JUDGE_MODEL),
    ("", "", DEFAULT_JUDGE_MODEL),
])
def test_the_judge_model_is_the_asked_one_else_the_ledgers_else_the_default(asked, recorded, expected) -> None:
    assert resolve_judge_model(asked, recorded) == expected
