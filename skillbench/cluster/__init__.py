"""Where the work runs: this process's threads (``--executor local``) or a dask.distributed cluster (``dask``).

The contract (:mod:`skillbench.cluster.executor`): a Dask task is **one sandbox run** of generation (or **one HTTP
request** of a judge call) on a worker, and returns what it produced to the client; the client writes every file
with the same atomic writes, resume, retries and reconciliation as the local executor, so a worker that dies loses
at most its in-flight runs and a rerun finishes them. Dask never re-runs a task behind skillbench's back (the
scheduler's ``allowed-failures`` must be 0); a lost worker goes through skillbench's retry-once rule
(``worker_lost``, recorded in ``retries.json``). The simulated endpoint is loopback-only, so with the sim every
worker must be on this machine; a multi-host cluster uses the Anthropic backend.

Modules: ``executor`` (``open_executor``: the client's lifetime for a pass, the local and Dask executors, the
refusals), ``sandbox`` (``DaskSandbox``: the ``Sandbox`` protocol over the cluster), ``transport``
(``DaskTransport``: an ``httpx2`` transport for the judge's SDK client), ``worker`` (what runs on a worker), ``checks``
(``skillbench worker check``: Docker, the runner image's tag and socat on every worker).
"""
