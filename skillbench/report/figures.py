"""The report's figures: seaborn on matplotlib, one function per figure, tidy DataFrames in, a Figure out.

Each function takes the frames skillbench already computes (:func:`skillbench.scorecard.scorecard_frames`,
:func:`skillbench.ledgers.load_week`, :func:`skillbench.weekly.calibration_tables`, …) and returns a
:class:`matplotlib.figure.Figure` built without pyplot, so a notebook shows it once (as the cell's value) and
nothing accumulates in pyplot's registry. An empty input gives a small figure that says there is nothing to
plot, never an exception: a stage must not fail because a week had no pairs.

Colours are fixed per meaning (arms, activation routes, pairwise outcomes), so the same thing looks the
same in every figure and every week.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from skillbench.scorecard import noise
from skillbench.vocab import CONDITIONS, ITEM_TYPES, LOSS, NO_SKILL, PLUGIN, SKILLED_ARMS, TIE, WIN, WITH_SKILL

ROUTES = ("skill_tool", "file_read", "web_fetch", "none")
ROUTE_COLORS = {"skill_tool": "#2a9d5c", "file_read": "#3f7fbf", "web_fetch": "#e39b2d", "none": "#b9bec4",
                "(empty)": "#e5e7ea"}
OUTCOME_COLORS = {WIN: "#2a9d5c", TIE: "#b9bec4", LOSS: "#c8553d"}
ARM_COLORS = {NO_SKILL: "#8a94a0", WITH_SKILL: "#2a9d5c", PLUGIN: "#7a5cb8"}
Z95 = float(noise.t_quantile(np.inf))  # error bars: ± z·SE


def _figure(width: float, height: float, ncols: int = 1, nrows: int = 1, **kw) -> tuple[Figure, np.ndarray]:
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig, axes


def _empty(title: str, message: str) -> Figure:
    fig, axes = _figure(6, 1.6)
    ax = axes[0, 0]
    ax.axis("off")
    ax.set_title(title, loc="left")
    ax.text(0.0, 0.4, message, transform=ax.transAxes, color="#69737d")
    return fig


def _palette(models: Sequence[str]) -> dict[str, tuple]:
    """One colour per model, the same in every figure: by family name (sonnet, haiku, opus), else in order."""
    deep = sns.color_palette("deep", 10)
    fixed = {"sonnet": deep[0], "haiku": deep[1], "opus": deep[4]}
    out, spare = {}, iter(c for i, c in enumerate(deep) if i not in (0, 1, 4))
    for m in models:
        family = next((k for k in fixed if k in str(m).lower()), None)
        out[m] = fixed[family] if family else next(spare, deep[7])
    return out


# --- lift ---------------------------------------------------------------------------------------------------


def lift_forest(lift: pd.DataFrame, uncertainty: pd.DataFrame | None = None) -> Figure:
    """Forest plot of the must-coverage lift per model with its 95 % t interval (and bootstrap CI).

    Args:
        lift: the scorecard's ``lift`` frame (``model, must_lift, ci_low, ci_high, n_pairs``).
        uncertainty: the ``uncertainty`` frame (``model, boot_low, boot_high``), drawn as a thinner band.
    """
    rows = lift.dropna(subset=["must_lift"]) if not lift.empty else lift
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
        ax.plot(rec.must_lift, yi, "D", color=colors[rec.model], ms=8, zorder=3)
        ax.annotate(f"{rec.must_lift:+.3f}  (n={int(rec.n_pairs)})", (rec.must_lift, yi), xytext=(0, 9),
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
    ax.set_xlabel("must-coverage lift (with-skill − no-skill)")
    ax.set_title("Lift per model — line: 95 % t interval (clipped to ±1), band: bootstrap CI", loc="left",
                 fontsize=11)
    return fig


def prompt_lift_dots(paired: pd.DataFrame) -> Figure:
    """Per-prompt lift ``d`` (with-skill − no-skill must coverage), one dot per model, prompts sorted by mean lift.

    Args:
        paired: the scorecard's ``paired`` frame (``model, prompt, d``).
    """
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
    ax.set_title("Per-prompt lift (right of the line: the skill helped)", loc="left", fontsize=11)
    ax.legend(title="model", loc="lower right", fontsize=8)
    return fig


def cost_vs_lift(paired: pd.DataFrame, cost_deltas: pd.DataFrame, lift: pd.DataFrame | None = None) -> Figure:
    """Cost against lift: each prompt's Δcost and lift per model, with the model's overall point.

    Args:
        paired: the scorecard's ``paired`` frame (``model, prompt, d``).
        cost_deltas: the scorecard's ``prompt_cost_deltas`` frame (``model, prompt, cost_delta``; the scorecard's
            cost rule, :func:`skillbench.scorecard.cost_eligible`).
        lift: the ``lift`` frame (``model, must_lift, cost_delta``) for the per-model marker.
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
    ax.set_xlabel("Δ cost per run, with-skill − no-skill ($)")
    ax.set_ylabel("must-coverage lift")
    ax.set_title("Cost vs lift — up is better answers, left is cheaper (X: model overall)", loc="left", fontsize=11)
    return fig


# --- activation ---------------------------------------------------------------------------------------------


def activation_breakdown(manifest: pd.DataFrame) -> Figure:
    """How each skill family was reached: share of runs by activation route, per arm.

    Panels: the with-skill and plugin arms on the family's own prompts (``none`` is a trigger miss), and the
    family's dormancy prompts (anything but ``none`` is a false trigger).
    """
    if manifest.empty:
        return _empty("Activation per skill", "No runs.")
    m = manifest.assign(route=manifest["skill_activation"].fillna("").replace("", "(empty)"))
    panels = [("with-skill, own prompts", m[m["condition"].eq(WITH_SKILL) & ~m["dormancy"]]),
              ("plugin, own prompts", m[m["condition"].eq(PLUGIN) & ~m["dormancy"]]),
              ("dormancy prompts (should stay none)", m[m["dormancy"] & m["condition"].isin(SKILLED_ARMS)])]
    panels = [(t, d) for t, d in panels if not d.empty]
    if not panels:
        return _empty("Activation per skill", "No with-skill, plugin or dormancy runs.")
    families = sorted(m["skill_family"].dropna().unique())
    routes = [r for r in (*ROUTES, "(empty)") if r in set(m["route"])] + \
        sorted(set(m["route"]) - set(ROUTES) - {"(empty)"})
    fig, axes = _figure(4.2 * len(panels) + 1.5, 0.45 * len(families) + 1.8, ncols=len(panels), sharey=True)
    for ax, (title, d) in zip(axes[0], panels, strict=True):
        share = pd.crosstab(d["skill_family"], d["route"], normalize="index").reindex(index=families,
                                                                                      columns=routes).fillna(0)
        counts = d.groupby("skill_family").size().reindex(families).fillna(0).astype(int)
        left = np.zeros(len(families))
        for route in routes:
            ax.barh(families, share[route], left=left, color=ROUTE_COLORS.get(route, "#999"), label=route)
            left += share[route].to_numpy()
        for i, n in enumerate(counts):
            ax.text(1.01, i, f"n={n}", va="center", fontsize=8, color="#555")
        ax.set_xlim(0, 1.12)
        ax.set_title(title, loc="left", fontsize=10)
        ax.set_xlabel("share of runs")
        ax.invert_yaxis()
    fig.legend(handles=[Patch(color=ROUTE_COLORS.get(r, "#999"), label=r) for r in routes], loc="outside lower center",
               ncols=len(routes), fontsize=9, title="activation route")
    return fig


def activation_by_week_heatmap(table: pd.DataFrame) -> Figure:
    """Activation rate per skill family × week (with-skill arm, own prompts); 0 means it never triggered.

    Args:
        table: :func:`skillbench.weekly.activation_by_week` output.
    """
    if table.empty:
        return _empty("Activation by week", "No with-skill runs.")
    keys = list(dict.fromkeys(table["run_key"]))
    grid = table.pivot(index="skill_family", columns="run_key", values="rate").reindex(columns=keys)
    fig, axes = _figure(1.1 * len(keys) + 3.5, 0.45 * len(grid) + 1.6)
    sns.heatmap(grid, annot=True, fmt=".2f", vmin=0, vmax=1, cmap="YlGn", cbar_kws={"label": "activation rate"},
                linewidths=0.5, ax=axes[0, 0])
    axes[0, 0].set_xlabel("week")
    axes[0, 0].set_ylabel("")
    axes[0, 0].set_title("Skill activation rate by week (with-skill arm)", loc="left", fontsize=11)
    return fig


# --- week over week -----------------------------------------------------------------------------------------


def trend_bands(history: pd.DataFrame, endpoint: str | None = None) -> pd.DataFrame:
    """Per model and week, the lift and the don't-act band around the previous week's lift.

    The band applies the week-over-week rule (:mod:`skillbench.scorecard.noise`) at every week: half-width =
    max(z·√(SE_now² + SE_prev²), population SD of the earlier weeks' lifts (needs two)). It uses the normal
    quantile (``df = ∞``) because the history does not keep each week's number of prompts; the scorecard's
    exact rule uses t.

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
                half = noise.threshold(noise.within_noise(ses[i], ses[i - 1], np.inf), noise.between_noise(lifts[:i]))
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
        ax.legend(fontsize=8, loc="lower left")
    axes[0, 0].set_ylabel("must-coverage lift")
    fig.suptitle("Week-over-week lift — inside the grey band: within noise, don't act", x=0.01, ha="left",
                 fontsize=11)
    return fig


# --- judge --------------------------------------------------------------------------------------------------


def verdict_breakdown(scores: pd.DataFrame) -> Figure:
    """Share of verdicts per item type and arm (rubric judge), per model."""
    if scores.empty:
        return _empty("Verdicts", "Nothing graded yet.")
    counts = scores.groupby(["model", "condition", "item_type", "verdict"]).size().rename("n").reset_index()
    counts["share"] = counts["n"] / counts.groupby(["model", "condition", "item_type"])["n"].transform("sum")
    types = [t for t in ITEM_TYPES if t in set(counts["item_type"])]
    models = sorted(counts["model"].unique())
    fig, axes = _figure(4.2 * len(types) + 0.5, 0.5 * len(models) * 2 + 1.8, ncols=len(types), sharey=True)
    palette = {"met": "#2a9d5c", "missing": "#c8553d", "absent": "#b9bec4", "violated": "#c8553d",
               "clean": "#2a9d5c", "ungraded": "#e39b2d"}
    for ax, t in zip(axes[0], types, strict=True):
        sub = counts[counts["item_type"] == t]
        wide = sub.pivot_table(index=["model", "condition"], columns="verdict", values="share", fill_value=0)
        labels = [f"{m} · {c}" for m, c in wide.index]
        left = np.zeros(len(wide))
        for verdict in wide.columns:
            ax.barh(labels, wide[verdict], left=left, color=palette.get(verdict, "#999"), label=verdict)
            left += wide[verdict].to_numpy()
        ax.set_title(f"{t} items", loc="left", fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of items")
        ax.invert_yaxis()
        ax.legend(fontsize=8, loc="lower right")
    return fig


def pair_outcomes(outcomes: pd.DataFrame) -> Figure:
    """Pairwise judge: with-skill wins, ties and losses per skill family × model (both orders agreeing).

    Args:
        outcomes: ``skill_family, model, W, T, L`` (:func:`skillbench.weekly.judge_tables` ``pair_outcomes``).
    """
    if outcomes.empty:
        return _empty("Pairwise outcomes", "No pairs judged.")
    labels = [f"{f} · {m}" for f, m in zip(outcomes["skill_family"], outcomes["model"], strict=True)]
    fig, axes = _figure(7, 0.4 * len(labels) + 1.6)
    ax = axes[0, 0]
    left = np.zeros(len(labels))
    for k in ("W", "T", "L"):
        ax.barh(labels, outcomes[k], left=left, color=OUTCOME_COLORS[k], label={"W": "with-skill wins", "T": "tie",
                                                                                "L": "with-skill loses"}[k])
        left += outcomes[k].to_numpy()
    ax.invert_yaxis()
    ax.set_xlabel("pairs (prompt × rep)")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("Pairwise judge — with-skill vs no-skill, a win only when both orders agree", loc="left",
                 fontsize=11)
    return fig


def calibration_heatmap(agreement: pd.DataFrame) -> Figure:
    """Judge calibration: agreement (κ) per comparison × item type, and the confusion matrix of verdicts.

    Args:
        agreement: ``calibration.csv`` without its self-agreement rows
            (:func:`skillbench.weekly.calibration_tables` ``agreement``).
    """
    if agreement.empty:
        return _empty("Judge calibration", "No calibration comparison in this week.")
    a = agreement.copy()
    two = a["rater_b"].astype(str) != ""
    a["kappa"] = a["cohen_kappa"].where(two, a["fleiss_kappa"])
    a["pair"] = [_pair_label(c, ra, rb) for c, ra, rb in zip(a["comparison"], a["rater_a"], a["rater_b"].astype(str),
                                                             strict=True)]
    types = [t for t in (*ITEM_TYPES, "all") if t in set(a["item_type"])]
    grid = a.pivot_table(index="pair", columns="item_type", values="kappa", aggfunc="first").reindex(columns=types)
    pairs = a[(a["rater_b"].astype(str) != "") & a["item_type"].eq("all")]
    fig, axes = _figure(10, 0.45 * len(grid) + 2.6, ncols=2, width_ratios=[2.2, 1])
    sns.heatmap(grid, annot=True, fmt=".2f", vmin=-0.2, vmax=1, cmap="RdYlGn", linewidths=0.5,
                cbar_kws={"label": "κ (Cohen; Fleiss for 3+ raters)"}, ax=axes[0, 0])
    axes[0, 0].set_ylabel("")
    axes[0, 0].set_xlabel("item type")
    axes[0, 0].set_title("Agreement (Landis–Koch: > 0.80 almost perfect, > 0.60 substantial)", loc="left",
                         fontsize=10)
    ax = axes[0, 1]
    if pairs.empty:
        ax.axis("off")
        ax.text(0, 0.5, "No two-rater comparison.", color="#69737d")
        return fig
    first = pairs.iloc[0]
    cm = pd.DataFrame([[first["true_positive"], first["false_negative"]],
                       [first["false_positive"], first["true_negative"]]],
                      index=["A +", "A −"], columns=["B +", "B −"])
    sns.heatmap(cm.astype(float), annot=True, fmt=".0f", cmap="Blues", cbar=False, linewidths=0.5, ax=ax)
    ax.set_title(f"Confusion, all items\n{_pair_label(first['comparison'], first['rater_a'], first['rater_b'])}",
                 fontsize=9)
    ax.set_xlabel("+ met/violated. B+ with A−: a false +,\nthe costly error (inflates coverage)", fontsize=8)
    return fig


def _pair_label(comparison: str, rater_a: str, rater_b: str) -> str:
    """``samples: opus #1 vs #2`` rather than two long model names that differ only in the sample number."""
    if not rater_b:
        return f"{comparison} ({rater_a.count('+') + 1} raters)"
    base_a, _, sample_a = rater_a.partition("#")
    base_b, _, sample_b = rater_b.partition("#")
    if base_a == base_b and sample_a and sample_b:
        return f"{comparison}: #{sample_a} vs #{sample_b}"
    return f"{comparison}: {rater_a} vs {rater_b}"


# --- suite and runs -----------------------------------------------------------------------------------------


def suite_composition(prompts: pd.DataFrame) -> Figure:
    """Prompts per skill family: lift-scored, dormancy and held-out (from ``Suite.prompts_df()``)."""
    if prompts.empty:
        return _empty("Suite", "No prompts.")
    kind = np.select([prompts["heldout"], prompts["dormancy"]], ["held-out", "dormancy"], "lift-scored")
    table = pd.crosstab(prompts["skill_family"], kind).reindex(columns=["lift-scored", "dormancy", "held-out"],
                                                               fill_value=0)
    fig, axes = _figure(7, 0.45 * len(table) + 1.6)
    ax = axes[0, 0]
    left = np.zeros(len(table))
    for col, color in zip(table.columns, ("#2a9d5c", "#7a5cb8", "#b9bec4"), strict=True):
        ax.barh(table.index, table[col], left=left, color=color, label=col)
        left += table[col].to_numpy()
    ax.axvline(5, color="#c8553d", lw=1, ls=":", label="5 (the paired gate's minimum)")
    ax.invert_yaxis()
    ax.set_xlabel("prompts")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("Prompts per skill family", loc="left", fontsize=11)
    return fig


def run_durations(manifest: pd.DataFrame) -> Figure:
    """Per-run duration and cost by model and arm (one dot per run)."""
    if manifest.empty or manifest["duration_ms"].isna().all():
        return _empty("Runs", "No timed runs.")
    m = manifest.assign(seconds=manifest["duration_ms"] / 1000)
    conditions = [c for c in CONDITIONS if c in set(m["condition"])]
    fig, axes = _figure(11, 3.8, ncols=2)
    for ax, (col, label) in zip(axes[0], (("seconds", "duration (s)"), ("total_cost_usd", "cost ($)")),
                                strict=True):
        sns.stripplot(data=m, x="model", y=col, hue="condition", hue_order=conditions, dodge=True, size=4,
                      palette=ARM_COLORS, ax=ax, alpha=0.8)
        ax.set_ylabel(label)
        ax.set_xlabel("")
        ax.legend(fontsize=8, title=None)
    axes[0, 0].set_title("Per-run duration and cost", loc="left", fontsize=11)
    return fig


def prompt_moves(movers: pd.DataFrame, top: int = 15) -> Figure:
    """Dumbbells of the prompts whose lift moved most between two weeks; red when beyond noise.

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
    ax.set_title("Largest per-prompt moves — red: beyond noise", loc="left", fontsize=11)
    return fig
