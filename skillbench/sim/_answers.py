"""The prose of a simulated answer: one plain line per covered item or committed violation, and filler, then
(for a suite that declares a Python API surface the simulation has code for) a short code block.

Lines are markdown bullets so every claim is one line a reader (or the simulated judge) can quote.
Filler is neutral advice that states no rubric item. The code block uses real identifiers of the declared
libraries (:data:`REAL_CODE`); with the profile's ``fabricate`` probability one of its lines is swapped for one
that uses an identifier the library lacks (:data:`FABRICATED_CODE`: removed, renamed or invented names and
keywords), which the identifiers pass must flag (``tests/identifiers/test_week.py`` holds both pools to the
detector).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from skillbench.judge import normalize_quote
from skillbench.sim._claims import claim, line_matches, line_violates, violation

OPENINGS = (
    "Here is how I would approach this.",
    "Short version first, then the details.",
    "This comes up often; here is what I would do.",
    "A few concrete points, in the order I would apply them.",
    "Here is a practical plan for this.",
)
CLOSINGS = (
    "Adjust the details to the size and shape of your data.",
    "If any step behaves differently on your data, share a small sample and the exact output.",
    "That should cover the main cases; the edge cases depend on your data.",
    "Start with the first point and re-measure before moving on.",
)
FILLER = (
    "Work on a small, representative sample first so each attempt takes seconds, not minutes.",
    "Write the intermediate results down so you can compare runs.",
    "Keep the original data untouched and derive new columns or tables from it.",
    "Name intermediate variables after what they hold, not after the step that made them.",
    "Check the shape of the result after each step; silent row changes are the usual surprise.",
    "Pin the library versions in the project so results can be reproduced later.",
    "Put the steps in a function once they work, so the notebook stays readable.",
    "Leave a short comment where a choice was made for a reason that is not obvious.",
    "Re-run the whole pipeline from a clean start before trusting the numbers.",
    "Plot the data once before modelling; it catches problems no summary shows.",
)
GENERIC = (
    "I do not have specific guidance for this question, so here are general steps.",
    "Break the problem into small steps and check each one on a sample.",
    "Compare the result against a case you can compute by hand.",
)


@dataclass(frozen=True)
class LibraryCode:
    """What the simulated agent writes for one library: its import, lines with real identifiers of it, and
    lines with one identifier it lacks each."""

    imports: str
    real: tuple[str, ...]
    fabricated: tuple[str, ...]


# Keyed by the distribution name a suite declares in [[api]] (the bundled suite's libraries). Real: in the library at
# the version the bundled suite targets; fabricated: a function or method it lacks (invented, or a near-miss of a real
# one), each a name the detector resolves and flags (a method on an untyped frame or a keyword would read unchecked).
LIBRARY_CODE: dict[str, LibraryCode] = {
    "pandas": LibraryCode("import pandas as pd", (
        'df = pd.read_csv("sales.csv", parse_dates=["date"])',
        'dates = pd.to_datetime(df["date"], format="%Y-%m-%d")',
        'means = df.groupby("store")["sales"].transform("mean")',
        'rolled = df["sales"].rolling(7, min_periods=1).mean()',
        'merged = pd.merge_asof(left, right, on="date", direction="backward")',
    ), (
        'merged = pd.merge_nearest(left, right, on="date")',
        'merged = pd.merge_within(left, right, on="date", tolerance=7)',
        'daily = pd.resample_daily(df, on="date")',
        'sheet = pd.read_sheet("sales.xlsx")',
    )),
    "scipy": LibraryCode("from scipy import stats", (
        "res = stats.ttest_rel(before, after)",
        'res = stats.mannwhitneyu(a, b, alternative="two-sided")',
        "rho = stats.spearmanr(x, y)",
    ), (
        "res = stats.ttest_paired(before, after)",
        "res = stats.wilcoxon_paired(a, b)",
        "ci = stats.bootstrap_ci(sample)",
    )),
    "statsmodels": LibraryCode("import statsmodels.api as sm", (
        'fit = sm.OLS(y, sm.add_constant(X)).fit(cov_type="HC3")',
        "fit = sm.GLM(y, X, family=sm.families.Poisson()).fit()",
    ), (
        "fit = sm.RobustOLS(y, X).fit()",
        "fit = sm.OLS(y, X).fit_robust()",
        "fit = sm.auto_arima(y)",
    )),
}


def code_block(libraries: Sequence[str], fabricate: bool, rnd: random.Random,
               items: Sequence[tuple[str, str]] = ()) -> str:
    """A short Python block using the declared ``libraries`` the simulation has code for ("" when none), with one
    fabricated line when ``fabricate``. A line that reads as a rubric item's claim is never used (the judge would
    credit code for prose)."""
    libs = [LIBRARY_CODE[name] for name in sorted(set(libraries)) if name in LIBRARY_CODE]
    if not libs:
        return ""

    def neutral(line: str) -> bool:
        return not any(line_matches(line, text) or line_violates(line, text) for _, text in items)

    chosen = rnd.sample(libs, min(2, len(libs)))
    lines = [lib.imports for lib in chosen]
    calls = [line for lib in chosen for line in rnd.sample(lib.real, min(2, len(lib.real))) if neutral(line)]
    if fabricate:
        fake = [line for lib in chosen for line in lib.fabricated if neutral(line)]
        if fake:
            at = rnd.randrange(len(calls) + 1)
            calls[at:at + 1] = [rnd.choice(fake)]
    return "```python\n" + "\n".join(lines + calls) + "\n```"


def _strip_bullet(line: str) -> str:
    text = line.strip()
    for prefix in ("- ", "* ", "• "):
        if text.startswith(prefix):
            return text[len(prefix):].strip()
    return text


def answer_lines(answer: str) -> list[str]:
    """The quotable lines of an answer (bullets stripped, blank lines dropped)."""
    return [t for t in (_strip_bullet(line) for line in answer.splitlines()) if t]


def compose(
    items: Sequence[tuple[str, str]],
    stated: Sequence[int],
    rnd: random.Random,
    verbosity: float,
    absence: Collection[int] = (),
    code: str = "",
) -> str:
    """An answer that states exactly the items at the ``stated`` indexes, with neutral filler.

    Args:
        items: ``(type, text)`` per rubric item, in file order.
        stated: indexes of covered must/bonus items and committed avoid items.
        rnd: the run's private random source (order and filler choice).
        verbosity: filler scale (0 means no filler).
        absence: indexes of the musts graded by absence: covered means nothing is said, not covered means the
            answer commits the violation (:func:`skillbench.sim._claims.violation`), as the judge hunts for it.
        code: a code block (:func:`code_block`) placed before the closing line ("": none).
    """
    keys = [(violation(text) if i in absence else claim(text)).key for i, (_, text) in enumerate(items)]
    covered = set(stated)
    lines = [claim(items[i][1]).sentence for i in stated if i not in absence]
    lines += [violation(items[i][1]).sentence for i in sorted(absence) if i not in covered]
    safe_filler = [f for f in FILLER if not any(k and k in normalize_quote(f) for k in keys)]
    n_filler = min(len(safe_filler), round(verbosity * rnd.uniform(1.0, 3.0)))
    lines += rnd.sample(safe_filler, n_filler)
    rnd.shuffle(lines)
    if not lines:
        lines = [rnd.choice(GENERIC[1:])]
    body = "\n".join(f"- {line}" for line in lines)
    opening, closing = rnd.choice(OPENINGS), rnd.choice(CLOSINGS)
    return f"{opening}\n\n{body}\n\n{code}\n\n{closing}" if code else f"{opening}\n\n{body}\n\n{closing}"


def generic_answer(rnd: random.Random, verbosity: float) -> str:
    """An answer to a prompt the endpoint has no rubric for."""
    n = max(1, min(len(FILLER), round(verbosity * 2)))
    body = "\n".join(f"- {line}" for line in [*GENERIC[1:], *rnd.sample(FILLER, n)])
    return f"{GENERIC[0]}\n\n{body}\n\n{rnd.choice(CLOSINGS)}"
