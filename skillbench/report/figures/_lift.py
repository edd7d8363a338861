"""Lift figures: per model with its uncertainty, per prompt, against cost, week over week, and prompt moves.

The lift is the week's pair, treatment − control (``pair``); a comparison's axes name its labels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.report.figures._base import (
    Z95,
    _empty,
    _figure,
    _palette,
    outside_legend,
)
from skillbench.scorecard import arm_names, between_band, threshold, within_noise


def lift_forest(lift: pd.DataFrame, uncertainty: pd.DataFrame | None = None, pair: ArmPair = DEFAULT_PAIR,
                ) -> Figure:
    """Forest plot of the paired must-coverage lift per model (the headline, the centre of its intervals) with its
    95 % t interval (and bootstrap CI).

    Args:
        lift: the scorecard's ``lift`` frame (``model, paired_lift, ci_low, ci_high, n_pairs``).
        uncertainty: the ``uncertainty`` frame (``model, boot_low, boot_high``), drawn as a thinner band.
        pair: the week's arms (the axis names the lift's direction).
    """
    rows = lift.dropna(subset=["paired_lift"]) if not lift.empty else lift
    if rows.empty:
        return _empty("Lift per model", "No model has prompts graded in both arms.")
    models = list(rows["model"])
    fig, axes = _figure(7.5, 0.65 * len(models) + 1.3)
    ax = axes[0, 0]
    y = np.arange(len(models))[::-1]
    colors = _palette(models)
    for yi, rec in zip(y, rows.itertuples(index=False), strict=True):
        lo, hi = max(rec.ci_low, -1.0), min(rec.ci_high, 1.0)  # a lift cannot leave [-1, 1]; clip the t interval
        ax.plot([lo, hi], [yi, yi], color=colors[rec.model], lw=2.2, solid_capstyle="butt")
        for edge, clipped in ((lo, rec.ci_low < -1.0), (hi, rec.ci_high > 1.0)):
            if clipped:
                ax.annotate("", xy=(edge, yi), xytext=(edge - 0.08 * np.sign(edge), yi),
                            arrowprops={"arrowstyle": "->", "color": colors[rec.model]})
        ax.plot(rec.paired_lift, yi, "D", color=colors[rec.model], ms=8, zorder=3)
        ax.annotate(f"{rec.paired_lift:+.3f}  (n={int(rec.n_pairs)})", (rec.paired_lift, yi), xytext=(0, 9),
                    textcoords="offset points", ha="center", fontsize=9)
    if uncertainty is not None and not uncertainty.empty:
        boot = uncertainty.set_index("model")
        for yi, m in zip(y, models, strict=True):
            if m in boot.index and np.isfinite(boot.loc[m, "boot_low"]):
                ax.plot([boot.loc[m, "boot_low"], boot.loc[m, "boot_high"]], [yi - 0.18] * 2, color=colors[m],
                        lw=5, alpha=0.35, solid_capstyle="butt")
    ax.axvline(0, color="#444", lw=1, ls="--")
    ax.set_yticks(y, models)
    ax.set_xlim(-1.05, 1.05)
    ax.set_ylim(y.min() - 0.6, y.max() + 0.6)
    ax.set_xlabel(f"must-coverage lift ({arm_names(pair).lift})")
    ax.set_title("Lift per model — line: 95 % t interval (clipped to ±1), band: bootstrap CI", loc="left",
                 fontsize=11)
    return fig


def prompt_lift_dots(paired: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> Figure:
    """Per-prompt lift ``d`` (with-skill − no-skill must coverage), one dot per model, prompts sorted by mean lift.

    Args:
        paired: the scorecard's ``paired`` frame (``model, prompt, d``).
        pair: the week's arms (a comparison's title names its treatment).
    """
    names = arm_names(pair)
    helped = "the skill helped" if names.is_default else f"{names.treatment} did better"
    if paired.empty:
        return _empty("Per-prompt lift", "No prompt was graded in both arms.")
    order = paired.groupby("prompt")["d"].mean().sort_values(ascending=False).index.tolist()
    models = sorted(paired["model"].unique())
    fig, axes = _figure(8, 0.3 * len(order) + 1.6)
    ax = axes[0, 0]
    sns.stripplot(data=paired, x="d", y="prompt", hue="model", order=order, hue_order=models, dodge=True, jitter=0,
                  size=7, palette=_palette(models), ax=ax)
    ax.axvline(0, color="#444", lw=1, ls="--")
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("must-coverage lift per prompt")
    ax.set_ylabel("")
    ax.set_title(f"Per-prompt lift (right of the line: {helped})", loc="left", fontsize=11)
    outside_legend(ax, title="model")
    return fig


def cost_vs_lift(paired: pd.DataFrame, cost_deltas: pd.DataFrame, lift: pd.DataFrame | None = None,
                 pair: ArmPair = DEFAULT_PAIR) -> Figure:
    """Cost against lift: each prompt's Δcost and lift per model, with the model's overall point.

    Args:
        paired: the scorecard's ``paired`` frame (``model, prompt, d``).
        cost_deltas: the scorecard's ``prompt_cost_deltas`` frame (``model, prompt, cost_delta``; the scorecard's
            cost rule, :func:`skillbench.scorecard.cost_eligible`).
        lift: the ``lift`` frame (``model, must_lift, cost_delta``) for the per-model marker.
        pair: the week's arms (the axis names the difference).
    """
    points = paired.merge(cost_deltas, on=["model", "prompt"], how="inner") \
        if not paired.empty and not cost_deltas.empty else pd.DataFrame()
    if points.empty:
        return _empty("Cost vs lift", "No prompt has clean runs with a cost in both arms.")
    models = sorted(points["model"].unique())
    colors = _palette(models)
    fig, axes = _figure(7.5, 5)
    ax = axes[0, 0]
    sns.scatterplot(data=points, x="cost_delta", y="d", hue="model", hue_order=models, palette=colors, s=45,
                    alpha=0.75, ax=ax)
    if lift is not None and not lift.empty:
        for rec in lift.dropna(subset=["must_lift", "cost_delta"]).itertuples(index=False):
            if rec.model in colors:
                ax.scatter(rec.cost_delta, rec.must_lift, marker="X", s=220, color=colors[rec.model],
                           edgecolor="black", zorder=4)
                ax.annotate(f"{rec.model} overall", (rec.cost_delta, rec.must_lift), xytext=(8, -14),
                            textcoords="offset points", fontsize=9)
    ax.axhline(0, color="#444", lw=1, ls="--")
    ax.axvline(0, color="#444", lw=1, ls="--")
    ax.set_xlabel(f"Δ cost per run, {arm_names(pair).lift} ($)")
    ax.set_ylabel("must-coverage lift")
    ax.set_title("Cost vs lift — up is better answers, left is cheaper (X: model overall)", loc="left", fontsize=11)
    return fig


def trend_bands(history: pd.DataFrame, endpoint: str | None = None) -> pd.DataFrame:
    """Per model and week, the lift and the don't-act band around the previous week's lift.

    The band applies the week-over-week rule's unpaired form (:mod:`skillbench.scorecard._noise`) at every week:
    half-width = max(z·√(SE_now² + SE_prev²), z·σ·√2 with σ the ddof = 1 SD of the earlier weeks' lifts (needs
    two)). It uses the normal quantile (``df = ∞``) because the history does not keep each week's number of
    prompts; the scorecard's exact rule uses t (and pairs the prompts when it can), and its band replaces the
    latest week's in :func:`lift_trend`.

    Args:
        history: the numeric history (``scorecard_frames(...)["history"]``).
        endpoint: keep weeks of this endpoint kind only (default: the latest row's kind).
    """
    columns = ["model", "run_key", "window_end", "must_lift", "must_lift_se", "band_low", "band_high"]
    if history.empty:
        return pd.DataFrame(columns=columns)
    kind = endpoint or history.sort_values("window_end")["endpoint"].iloc[-1]
    h = history[history["endpoint"] == kind].dropna(subset=["must_lift"])
    rows = []
    for model, g in h.sort_values(["window_end", "run_key"]).groupby("model", sort=False):
        lifts, ses = g["must_lift"].to_numpy(), g["must_lift_se"].to_numpy()
        for i, rec in enumerate(g.itertuples(index=False)):
            low = high = np.nan
            if i >= 1:
                half = threshold(within_noise(ses[i], ses[i - 1], np.inf), between_band(lifts[:i], np.inf))
                low, high = lifts[i - 1] - half, lifts[i - 1] + half
            rows.append({"model": model, "run_key": rec.run_key, "window_end": rec.window_end,
                         "must_lift": rec.must_lift, "must_lift_se": rec.must_lift_se, "band_low": low,
                         "band_high": high})
    return pd.DataFrame(rows, columns=columns)


def lift_trend(history: pd.DataFrame, wow: pd.DataFrame | None = None, endpoint: str | None = None) -> Figure:
    """Week-over-week must lift per model (± 1.96·SE) with the don't-act band around the previous week.

    A week whose point falls inside the grey band moved by less than the noise: do not act on it. With the
    scorecard's ``week_over_week`` table (ready after four weeks) the latest band uses its exact threshold.

    Args:
        history: the numeric history (``scorecard_frames(...)["history"]``).
        wow: the ``week_over_week`` frame (``model, prev_lift, threshold``), optional.
        endpoint: endpoint kind to plot (default: the latest row's).
    """
    bands = trend_bands(history, endpoint)
    if bands.empty:
        return _empty("Week-over-week lift", "No week in the history yet.")
    models = list(dict.fromkeys(bands["model"]))
    fig, axes = _figure(4.6 * len(models) + 0.5, 4.2, ncols=len(models), sharey=True)
    colors = _palette(models)
    exact = wow.set_index("model") if wow is not None and not wow.empty else None
    for ax, model in zip(axes[0], models, strict=True):
        b = bands[bands["model"] == model].reset_index(drop=True)
        x = np.arange(len(b))
        if exact is not None and model in exact.index and len(b) >= 2:
            rec = exact.loc[model]
            if np.isfinite(rec["threshold"]):
                b.loc[len(b) - 1, ["band_low", "band_high"]] = [rec["prev_lift"] - rec["threshold"],
                                                                rec["prev_lift"] + rec["threshold"]]
        for xi, row in b.iterrows():
            if np.isfinite(row["band_low"]):
                ax.fill_between([xi - 0.32, xi + 0.32], row["band_low"], row["band_high"], color="#c9ced4",
                                alpha=0.6, lw=0, label="don't act" if xi == 1 else None)
        ax.errorbar(x, b["must_lift"], yerr=Z95 * b["must_lift_se"].fillna(0), fmt="-o", color=colors[model],
                    capsize=3, lw=1.6, label="must lift ± 1.96·SE")
        ax.axhline(0, color="#444", lw=0.8, ls="--")
        ax.set_xticks(x, b["run_key"], rotation=30, ha="right", fontsize=8)
        ax.set_title(model, loc="left", fontsize=11)
        ax.set_ylim(-1.05, 1.05)
    outside_legend(axes[0, -1])  # one legend beside the last panel: the marks mean the same in every panel
    axes[0, 0].set_ylabel("must-coverage lift")
    fig.suptitle("Week-over-week lift — inside the grey band: within noise, don't act", x=0.01, ha="left",
                 fontsize=11)
    return fig


def prompt_moves(movers: pd.DataFrame, top: int = 15) -> Figure:
    """Dumbbells of the prompts whose lift moved most between two weeks; red when moved (beyond noise, after the
    Benjamini–Hochberg correction across the week's moves).

    Args:
        movers: :func:`skillbench.weekly.prompt_movers` output.
        top: how many rows to draw.
    """
    if movers.empty:
        return _empty("Prompt moves", "Fewer than two weeks with paired prompts.")
    m = movers.head(top).iloc[::-1]
    labels = [f"{p} · {mo}" for p, mo in zip(m["prompt"], m["model"], strict=True)]
    fig, axes = _figure(8, 0.36 * len(m) + 1.6)
    ax = axes[0, 0]
    y = np.arange(len(m))
    for yi, rec in zip(y, m.itertuples(index=False), strict=True):
        color = "#c8553d" if rec.moved == "yes" else "#8a94a0"
        ax.plot([rec.prev_lift, rec.now_lift], [yi, yi], color=color, lw=2)
        ax.plot(rec.prev_lift, yi, "o", color="white", mec=color, ms=6)
        ax.plot(rec.now_lift, yi, "o", color=color, ms=6)
    ax.set_yticks(y, labels, fontsize=8)
    ax.axvline(0, color="#444", lw=0.8, ls="--")
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("per-prompt lift: previous week (hollow) → this week (filled)")
    ax.set_title("Largest per-prompt moves — red: beyond noise (Benjamini–Hochberg)", loc="left", fontsize=11)
    return fig
