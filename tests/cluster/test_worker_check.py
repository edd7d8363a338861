"""``skillbench worker check`` on the package's LocalCluster: every worker ready (exit 0), then, with a tag no
worker has, each named with the fix (exit 1)."""

from __future__ import annotations

import pytest

from skillbench.cli import main
from skillbench.generation import image_tag


def test_every_worker_is_ready(dask_cluster, capsys: pytest.CaptureFixture[str]):
    assert main(["worker", "check", "--scheduler", dask_cluster.scheduler_address]) == 0
    lines = capsys.readouterr().out.splitlines()
    workers = sorted(dask_cluster.scheduler_info["workers"])
    assert [line.split(" ")[0] for line in lines] == workers, "one line per worker"
    assert all(": ready — docker " in line and image_tag() in line for line in lines)


def test_a_missing_image_names_the_worker_and_the_fix(dask_cluster, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]):
    missing = "skillbench-runner:0.0.0-0000000000"
    # the command takes image_tag from the generation front, which caches a name once it has been read
    monkeypatch.setattr("skillbench.generation.image_tag", lambda: missing)
    assert main(["worker", "check", "--scheduler", dask_cluster.scheduler_address, "--backend", "anthropic"]) == 1
    lines = capsys.readouterr().out.splitlines()
    for worker in dask_cluster.scheduler_info["workers"]:
        line = next(line for line in lines if line.startswith(worker))
        assert f"NOT READY — the runner image {missing} is missing — run `skillbench image build` on it" in line
