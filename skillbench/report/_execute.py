"""Executing a notebook of the report: one papermill call with the kernel set-up every page shares.

The weekly stages, the comparison page, the judge study and the demo's explore page all run through
:func:`execute_notebook`, so each gets the same quiet kernel (:func:`kernel_config`) and the same papermill options.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skillbench.paths import NOTEBOOKS_DIR


def kernel_config() -> Any:
    """The kernel's transport: ipykernel warns on every start that a TCP kernel without CurveZMQ keys talks in plain
    text. The skillbench kernelspec declares curve support, so jupyter_client provisions keys ("auto") and the
    warning's cause is gone; the kernel's log level stays as it is, so any other warning still shows. A pyzmq built
    without curve cannot encrypt (jupyter_client refuses "auto" then): the kernel starts as before."""
    import zmq
    from traitlets.config import Config

    return Config({"KernelManager": {"transport_encryption": "auto"}} if zmq.has("curve") else {})


def execute_notebook(source: str | Path, out: str | Path, *, parameters: Mapping[str, Any], kernel_name: str,
                     cwd: str | Path = NOTEBOOKS_DIR, **papermill_options: Any) -> None:
    """Run ``source`` into ``out`` with papermill on ``kernel_name`` (no progress bar, no echoed output).

    Raises:
        papermill.PapermillExecutionError: a cell failed (``out`` keeps the executed notebook, failing cell marked).
    """
    import papermill as pm

    pm.execute_notebook(str(source), str(out), parameters=dict(parameters), kernel_name=kernel_name, cwd=str(cwd),
                        progress_bar=False, log_output=False, config=kernel_config(), **papermill_options)
