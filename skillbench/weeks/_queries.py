"""The ready queries ``explore_weeks`` shows, as SQL text an analyst can copy, and the functions that run them.

Each query takes ``$families``, ``$models`` and ``$run_keys`` (lists; empty = all) and reads only the views of
:func:`skillbench.weeks.connect`. A run's must coverage is the share of its graded must items met (``credit`` is
NULL for an ungraded item), joined to its run by qdrant's run key (``prompt, model, condition, rep``: a qdrant scores
ledger has no ``run_id``); dormancy prompts are left out, as the scorecard leaves them out of every score. A run's
skill activated when ``skill_activation`` is neither ``none`` nor empty, counted over the runs whose transcript
parsed (``signals_ok = 1``), as trigger health counts it.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from skillbench.signals import NONE

# the runs of the asked families and models, each with its must coverage (a CTE the queries below start from)
_RUNS_SQL = f"""\
WITH run_must AS (
    SELECT suite, run_key, prompt, model, condition, rep, avg(credit) AS must_coverage
    FROM scores
    WHERE item_type = 'must' AND credit IS NOT NULL
    GROUP BY ALL
), chosen AS (
    SELECT r.*, m.must_coverage,
           coalesce(r.skill_activation, '') NOT IN ('{NONE}', '') AS activated
    FROM runs AS r
    LEFT JOIN run_must AS m USING (suite, run_key, prompt, model, condition, rep)
    WHERE NOT r.dormancy
      AND (len($families) = 0 OR list_contains($families, r.skill_family))
      AND (len($models) = 0 OR list_contains($models, r.model))
      AND (len($run_keys) = 0 OR list_contains($run_keys, r.run_key))
)"""

# Per week × model × skill family × arm: runs, mean must coverage over its graded runs, activation rate.
FAMILY_ARM_SQL = _RUNS_SQL + """
SELECT c.run_key, c.model, c.skill_family, c.condition AS arm,
       count(*) AS runs,
       avg(c.must_coverage) AS must_coverage,
       avg(c.activated::INTEGER) FILTER (WHERE c.signals_ok = 1) AS activation_rate
FROM chosen AS c
JOIN weeks AS w USING (suite, run_key)
GROUP BY ALL
ORDER BY min(w.window_end), c.model, c.skill_family, arm"""

# The two weeks side by side, per model × skill family × arm: must coverage then and now, and the change.
TWO_WEEKS_SQL = _RUNS_SQL + """
SELECT model, skill_family, condition AS arm,
       avg(must_coverage) FILTER (WHERE run_key = $previous) AS previous_must,
       avg(must_coverage) FILTER (WHERE run_key = $run_key) AS now_must,
       now_must - previous_must AS change,
       count(*) FILTER (WHERE run_key = $previous) AS previous_runs,
       count(*) FILTER (WHERE run_key = $run_key) AS now_runs
FROM chosen
WHERE run_key IN ($previous, $run_key)
GROUP BY ALL
ORDER BY model, skill_family, arm"""


def _params(families: Sequence[str], models: Sequence[str], run_keys: Sequence[str] = ()) -> dict[str, object]:
    def strings(values: Sequence[str]) -> list[str]:
        return [str(v) for v in values]

    return {"families": strings(families), "models": strings(models), "run_keys": strings(run_keys)}


def family_arm_summary(con: duckdb.DuckDBPyConnection, families: Sequence[str] = (), models: Sequence[str] = (),
                       run_keys: Sequence[str] = ()) -> pd.DataFrame:
    """:data:`FAMILY_ARM_SQL` on ``con``: ``run_key, model, skill_family, arm, runs, must_coverage,
    activation_rate``, the weeks in time order (``families``/``models``/``run_keys`` empty: all)."""
    return con.execute(FAMILY_ARM_SQL, _params(families, models, run_keys)).df()


def two_weeks(con: duckdb.DuckDBPyConnection, run_key: str, previous: str, families: Sequence[str] = (),
              models: Sequence[str] = ()) -> pd.DataFrame:
    """:data:`TWO_WEEKS_SQL` on ``con``: ``model, skill_family, arm, previous_must, now_must, change,
    previous_runs, now_runs`` (a family or arm only one week ran reads NULL on the other side)."""
    return con.execute(TWO_WEEKS_SQL, {**_params(families, models), "run_key": run_key, "previous": previous}).df()


__all__ = ["FAMILY_ARM_SQL", "TWO_WEEKS_SQL", "family_arm_summary", "two_weeks"]
