"""Pairwise-judge bias: does the pairwise judge prefer a position, or the longer answer?

Every pair in ``pairs.csv`` was judged in both orders: in order ``ab`` the treatment's answer is ``A``, in
``ba`` it is ``B``; ``winner_ab`` / ``winner_ba`` are the position labels the judge picked (``A``, ``B``,
``tie``). Three measures, each per judge model, with a bootstrap interval over pairs:

* ``order_flip_rate`` — the share of pairs whose preferred *answer* (treatment, control or tie) differs between
  the two orders. A position-blind, deterministic judge never flips.
* ``position_bias`` — ``(#A − #B) / #verdicts`` over both orders. For a judge that picks ``A`` with probability
  ``p`` whatever the content and otherwise reads the content, this estimates ``p`` without bias: the honest
  picks are symmetric across the two orders (the answer it finds better is ``A`` in one order and ``B`` in the
  other, a tie is a tie in both), so they add as many ``A`` as ``B``; only the position picks are left, ``p``
  of the verdicts, all ``A``. A judge that favours ``B`` gets a negative figure.
* ``length_bias`` — among pairs the rubric judge scored equal (the same count of satisfied items in
  ``scores.csv``: met for must and bonus items, clean for avoid items), ``(#verdicts for the longer answer −
  #for the shorter) / #verdicts``, length in characters of the final answer; pairs whose answers are equally
  long are left out. Position picks favour the longer answer in one order and the shorter in the other, so
  they cancel: for the simulated judge this estimates ``(1 − position_bias) · length_bias``.

Errored pairs (empty ``outcome`` or a non-empty ``error``) are left out and counted in the row's note. The
interval is :func:`scipy.stats.bootstrap` **over prompts** with a fixed seed: the reps of a prompt (and its
pairs under each model) share the prompt's answers' character, so they are not independent pairs, and the claim
— this judge prefers a position or a length — is about prompts in general; each measure is a ratio of sums, so a
prompt enters a resample with all its pairs (the note says how many prompts were resampled). BCa, or the
percentile interval (said in the note) where BCa is undefined, e.g. when every prompt gives the same value.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from skillbench.ledgers import PAIRS_FILE, SCORES_FILE, read_cells

BIAS_COLUMNS: tuple[str, ...] = ("judge_model", "measure", "n", "estimate", "ci_low", "ci_high", "reading", "note")
MEASURES: tuple[str, ...] = ("order_flip_rate", "position_bias", "length_bias")
KEY = ["prompt", "model", "rep"]
_NEEDED = ("prompt", "model", "rep", "winner_ab", "winner_ba", "outcome", "judge_model", "error")
_LABELS = ("A", "B", "tie")
# Which answer each position label names, per order (ab: the treatment is A).
_ANSWER = {"ab": {"A": "treatment", "B": "control", "tie": "tie"},
           "ba": {"A": "control", "B": "treatment", "tie": "tie"}}


def empty_bias() -> pd.DataFrame:
    """The bias table with its columns and no rows."""
    return pd.DataFrame({c: pd.Series(dtype=float if c in ("estimate", "ci_low", "ci_high") else
                                      int if c == "n" else str) for c in BIAS_COLUMNS})


def by_cluster(num: np.ndarray, den: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``num`` and ``den`` summed per cluster (first-seen order): a ratio of sums is the same over the sums, and
    resampling their rows resamples whole clusters."""
    keys = pd.Series(np.asarray(clusters)).astype(str)
    frame = pd.DataFrame({"num": np.asarray(num, float), "den": np.asarray(den, float), "key": keys})
    summed = frame.groupby("key", sort=False)[["num", "den"]].sum()
    return summed["num"].to_numpy(), summed["den"].to_numpy()


def _interval(num: np.ndarray, den: np.ndarray, n_resamples: int, seed: int,
              confidence: float) -> tuple[float, float, float, str]:
    """``(estimate, low, high, note)`` of ``sum(num) / sum(den)``, bootstrapped over rows (one row per cluster)."""
    if len(num) == 0:
        return np.nan, np.nan, np.nan, ""
    estimate = float(num.sum() / den.sum())
    if len(num) < 2:
        return estimate, np.nan, np.nan, "one prompt: no interval"

    def ratio(x: np.ndarray, d: np.ndarray, axis: int = -1) -> np.ndarray:
        return x.sum(axis=axis) / d.sum(axis=axis)

    def run(method: str) -> tuple[float, float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a degenerate statistic warns; the NaN it returns is handled below
            ci = stats.bootstrap((num, den), ratio, paired=True, vectorized=True, n_resamples=n_resamples,
                                 confidence_level=confidence, method=method,
                                 random_state=np.random.default_rng(seed)).confidence_interval
        return float(ci.low), float(ci.high)

    low, high = run("BCa")
    if np.isfinite(low) and np.isfinite(high):
        return estimate, low, high, ""
    low, high = run("percentile")
    if not (np.isfinite(low) and np.isfinite(high)):  # every resample the same value: the interval is that value
        low = high = estimate
    same = np.allclose(num / den, num[0] / den[0])
    return estimate, low, high, ("percentile interval (BCa undefined: every prompt gives the same value)" if same
                                 else "percentile interval (BCa undefined for these prompts)")


def _reading(measure: str, n: int, estimate: float, low: float, high: float) -> str:
    if n == 0:
        return {"length_bias": "no pair the rubric judge scored equal with answers of different lengths"}.get(
            measure, "no judged pair")
    span = f"({min(low, high):.2f}–{max(low, high):.2f})" if np.isfinite(low) else "(no interval)"
    if measure == "order_flip_rate":
        if estimate == 0:
            return "the preferred answer never changed with the order"
        span = f"({low:.0%}–{high:.0%})" if np.isfinite(low) else "(no interval)"
        return f"the preferred answer changes with the order in {estimate:.0%} of pairs {span}"
    credible = np.isfinite(low) and (low > 0 or high < 0)
    if measure == "position_bias":
        if not credible:
            return "no detectable position preference"
        side, mag = ("A", estimate) if estimate > 0 else ("B", -estimate)
        span = f"({abs(low):.2f}–{abs(high):.2f})" if estimate > 0 else f"({abs(high):.2f}–{abs(low):.2f})"
        return f"prefers position {side} by {mag:.2f} {span}"
    if not credible:
        return "no detectable length preference"
    side = "longer" if estimate > 0 else "shorter"
    span = f"({abs(low):.2f}–{abs(high):.2f})" if estimate > 0 else f"({abs(high):.2f}–{abs(low):.2f})"
    return f"prefers the {side} answer by {abs(estimate):.2f} {span}"


def _check(pairs: pd.DataFrame, where: str) -> pd.DataFrame:
    missing = [c for c in _NEEDED if c not in pairs.columns]
    if missing:
        raise ValueError(f"{where}: missing column(s) {', '.join(missing)} — pass pairs.csv rows "
                         "(skillbench.ledgers._columns.PAIRS_COLUMNS)")
    frame = pairs.copy()
    for column in _NEEDED:
        frame[column] = frame[column].fillna("").astype(str)
    ok = frame[frame["outcome"].ne("") & frame["error"].eq("")]
    for column in ("winner_ab", "winner_ba"):
        bad = ok[~ok[column].isin(_LABELS)]
        if not bad.empty:
            row = int(bad.index[0])
            raise ValueError(f"{where}: row {row + 2}: {column} {bad[column].iloc[0]!r} is not A, B or tie — "
                             "fix the row or rejudge the pair (judge-pairs --fresh)")
    return frame


def pairwise_bias(pairs: pd.DataFrame, *, lengths: pd.DataFrame | None = None, equal: pd.DataFrame | None = None,
                  n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95,
                  where: str = "pairs") -> pd.DataFrame:
    """Order flip rate, position bias and length bias of each judge model, with bootstrap intervals.

    Args:
        pairs: ``pairs.csv`` rows (:data:`skillbench.ledgers._columns.PAIRS_COLUMNS`); errored rows are left out.
        lengths: ``prompt, model, rep, treatment_chars, control_chars`` — the final answers' lengths per pair;
            None: no length bias (its row says so).
        equal: the pairs the rubric judge scored equal, one row per ``prompt, model, rep`` (a boolean ``equal``
            column, when present, keeps only its true rows); None: no length bias.
        n_resamples: bootstrap resamples.
        seed: the bootstrap's seed.
        confidence: the intervals' level.
        where: what ``pairs`` is, for error messages (a file name).

    Returns:
        One row per judge model and measure (:data:`BIAS_COLUMNS`; ``n`` counts pairs; the unit resampled is the
        prompt, and the note says how many).

    Raises:
        ValueError: a column is missing, or a judged pair's winner is not ``A``, ``B`` or ``tie``.
    """
    frame = _check(pairs, where)
    if frame.empty:
        return empty_bias()
    frame = frame.assign(rep=frame["rep"].astype(str))
    if lengths is not None and equal is not None:
        eq = equal.assign(rep=equal["rep"].astype(str))
        if "equal" in eq.columns:
            eq = eq[eq["equal"].astype(bool)]
        sizes = lengths.assign(rep=lengths["rep"].astype(str))[[*KEY, "treatment_chars", "control_chars"]]
        frame = frame.merge(sizes.drop_duplicates(KEY), on=KEY, how="left")
        frame["equal"] = pd.MultiIndex.from_frame(frame[KEY]).isin(pd.MultiIndex.from_frame(eq[KEY]))
    rows = []
    for judge, group in frame.groupby("judge_model", sort=True):
        errored = group["outcome"].eq("") | group["error"].ne("")
        ok = group[~errored]
        note = f"{int(errored.sum())} errored pair(s) left out" if errored.any() else ""
        picks = {o: ok[f"winner_{o}"].map(_ANSWER[o]) for o in ("ab", "ba")}
        flips = (picks["ab"] != picks["ba"]).to_numpy(float)
        a = ok["winner_ab"].eq("A").astype(int) + ok["winner_ba"].eq("A").astype(int)
        b = ok["winner_ab"].eq("B").astype(int) + ok["winner_ba"].eq("B").astype(int)
        data = {"order_flip_rate": (flips, np.ones(len(ok))),
                "position_bias": ((a - b).to_numpy(float), np.full(len(ok), 2.0))}
        length_note = "not measured: needs the answers' lengths and the rubric scores"
        if "equal" in ok.columns:
            t_len, c_len = ok["treatment_chars"], ok["control_chars"]
            use = ok["equal"] & t_len.notna() & c_len.notna() & t_len.ne(c_len)
            longer = np.where(t_len > c_len, "treatment", "control")[use.to_numpy()]
            shorter = np.where(longer == "treatment", "control", "treatment")
            votes = sum((picks[o][use].to_numpy() == longer).astype(float)
                        - (picks[o][use].to_numpy() == shorter).astype(float) for o in ("ab", "ba"))
            data["length_bias"] = (np.asarray(votes, float).reshape(-1), np.full(int(use.sum()), 2.0))
            length_note = ""
        prompts = {"order_flip_rate": ok["prompt"].to_numpy(), "position_bias": ok["prompt"].to_numpy(),
                   "length_bias": ok["prompt"].to_numpy()[use.to_numpy()] if "equal" in ok.columns else None}
        for measure in MEASURES:
            num, den = data.get(measure, (np.array([]), np.array([])))
            c_num, c_den = by_cluster(num, den, prompts[measure]) if len(num) else (num, den)
            est, low, high, how = _interval(c_num, c_den, n_resamples, seed, confidence)
            resampled = f"resampled by prompt ({len(c_num)} prompts)" if len(c_num) else ""
            unmeasured = measure == "length_bias" and length_note
            reading = length_note if unmeasured else _reading(measure, len(num), est, low, high)
            rows.append({"judge_model": judge, "measure": measure, "n": len(num), "estimate": est, "ci_low": low,
                         "ci_high": high, "reading": reading,
                         "note": "; ".join(n for n in (note, resampled, how) if n)})
    return pd.DataFrame(rows, columns=list(BIAS_COLUMNS)).astype({"n": int})


def _satisfied(scores: pd.DataFrame) -> pd.Series:
    """Satisfied items per run (met must/bonus, clean avoid); runs with an ungraded item are left out."""
    from skillbench.vocab import GRADED_VERDICTS

    good = np.where(scores["item_type"].eq("avoid"), scores["verdict"].eq("clean"), scores["verdict"].eq("met"))
    frame = scores.assign(good=good.astype(int), graded=scores["verdict"].isin(GRADED_VERDICTS))
    per_run = frame.groupby("run_id").agg(good=("good", "sum"), graded=("graded", "all"))
    return per_run.loc[per_run["graded"], "good"]


def week_pairwise_bias(run_dir: str | Path, **options: object) -> pd.DataFrame:
    """:func:`pairwise_bias` of a week: ``pairs.csv``, the final answers and ``scores.csv``.

    Returns the empty table (:func:`empty_bias`) when the week has no ``pairs.csv``; without ``scores.csv``
    the length bias row says it needs the rubric scores. ``options`` go to :func:`pairwise_bias`.
    """
    from skillbench.judge import pairs_frame

    run_dir = Path(run_dir)
    if not (run_dir / PAIRS_FILE).is_file():
        return empty_bias()
    pairs = pairs_frame(run_dir)
    lengths, equal = pair_facts(run_dir) if not pairs.empty else (None, None)
    return pairwise_bias(pairs, lengths=lengths, equal=equal, where=str(run_dir / PAIRS_FILE),
                         **options)  # type: ignore[arg-type]


def pair_facts(run_dir: str | Path) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """``(lengths, equal)`` of a week's pairs for :func:`pairwise_bias`; ``(None, None)`` without ``scores.csv``.

    ``lengths``: the final answers' lengths in characters per (prompt, model, rep) (and the two run ids);
    ``equal``: the pairs whose two runs the rubric judge scored equal (both fully graded).
    """
    from skillbench.judge import find_pairs

    run_dir = Path(run_dir)
    if not (run_dir / SCORES_FILE).is_file():
        return None, None
    lengths = pd.DataFrame([{"prompt": p.key[0], "model": p.key[1], "rep": str(p.key[2]),
                             "treatment_chars": len(p.treatment.answer), "control_chars": len(p.control.answer),
                             "treatment_run": p.treatment.run_id, "control_run": p.control.run_id}
                            for p in find_pairs(run_dir)],
                           columns=[*KEY, "treatment_chars", "control_chars", "treatment_run", "control_run"])
    got = _satisfied(read_cells(run_dir / SCORES_FILE))
    t, c = lengths["treatment_run"].map(got), lengths["control_run"].map(got)
    return lengths, lengths.loc[t.notna() & c.notna() & t.eq(c), KEY]
