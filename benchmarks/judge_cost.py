"""Benchmark: the judge's dollars for a week — synchronous, prompt-cached, batched (Message Batches), and batched with
calibration on a stratified sample — as ratios of today's synchronous pass, with the outcomes they decide.
Aims: batched ≤ 0.5; the rubric judge + calibration batched on a sample ≤ 0.3, with the same calibration outcome
(PASS / NOT SHOWN / FAIL, and the decision block's calibration flag) and the same verdicts as the synchronous pass.

The week's judging is the weekly chain's: the rubric judge (1 sample), the pairwise judge (both orders) and
calibration (``--repeat 3``, the chain's default), each design on a fresh copy of one simulated week (``--week``:
e.g. a copy of a 448-run bundled week; default the bundled demo's first week, else a week generated into a temp
dir) and a fresh simulated endpoint with seed 0, so every design asks the same questions. A full design calibrates
every gradeable run; a sampled one re-grades the stratified sample of ``skillbench.calibration._sample`` (≥ 150
musts, grown while the must interval straddles the bar), drawn with the fixed nonce ``--nonce`` so the figure
reproduces; ``--draws K`` then recalibrates the sampled design's judged week with K other nonces and prints each
draw's outcome (how stable the sampled decision is). Dollars come from the usage the endpoint reported, priced by
``skillbench.prices`` (the batch price for batched replies). Verdicts and flags come from the scorecard computed on
each design's week (``scorecard_week``, nothing written). Measured once, nothing timed.

    .venv/bin/python benchmarks/judge_cost.py [--week RUN_DIR] [--repeat 3] [--jobs 4] [--draws 4]
    .venv/bin/python benchmarks/judge_cost.py --operating 1048   # the growing sample's operating figures
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillbench.calibration import CalibrationOptions, calibrate  # noqa: E402
from skillbench.judge import (  # noqa: E402
    JudgeOptions,
    judge_pairs,  # noqa: E402
    judge_run_dir,
)
from skillbench.runtime import PassContext  # noqa: E402
from skillbench.scorecard import week_decision  # noqa: E402
from skillbench.vocab import CALIBRATION_MUST_FLOOR  # noqa: E402
from skillbench.weekly import model_endpoint, scorecard_week  # noqa: E402

DEMO_WEEK = ROOT / "reports" / "demo-history" / "suite" / "weekly" / "demo-w01"
SYNCHRONOUS = "synchronous"  # today's design: the baseline of every ratio
SAMPLED = "batched + sample"  # the design the aim is about


@dataclass(frozen=True)
class Design:
    batch: bool
    cache: bool
    sample: bool  # calibration on the stratified sample (else every gradeable run)


DESIGNS = {
    SYNCHRONOUS: Design(False, False, False),
    "synchronous + cache": Design(False, True, False),
    "batched": Design(True, False, False),
    "batched + cache": Design(True, True, False),
    SAMPLED: Design(True, False, True),
    "batched + cache + sample": Design(True, True, True),
}
LEDGERS = ("scores.csv", "judge-skips.csv", "judge.json", "pairs.csv", "judge-batches.json", "calibration.csv",
           "calibration-grades.csv", "calibration.md", "calibration-sample.json", "pairwise-bias.csv",
           "sentinel-grades.csv", "sentinel.json", "decision.json", "scorecard.md", "scorecard-comment.md")


def source_week(week: str, tmp: Path) -> Path:
    if week:
        return Path(week)
    if DEMO_WEEK.is_dir():
        return DEMO_WEEK
    out = tmp / "generated" / "bench-w01"
    subprocess.run([sys.executable, "-m", "skillbench.cli", "generate", str(ROOT / "evals"), "--run-key", "bench-w01",
                    "--out-dir", str(out), "--backend", "sim", "--reps", "1", "--jobs", "2"], check=True, cwd=ROOT)
    return out


def fresh_copy(week: Path, dest: Path) -> Path:
    """The week without any judging (its runs, manifest and plan only)."""
    shutil.copytree(week, dest, ignore=shutil.ignore_patterns("judge.json", "judge_cost.txt", "judge_cost.json"))
    for name in LEDGERS:
        (dest / name).unlink(missing_ok=True)
    return dest


def calibration_options(design: Design, repeat: int, jobs: int, nonce: str) -> CalibrationOptions:
    return CalibrationOptions(repeat=repeat, jobs=jobs, batch=design.batch, cache=design.cache,
                              min_musts=CALIBRATION_MUST_FLOOR if design.sample else None, sample_nonce=nonce)


def outcome(week: Path, cal: Any) -> dict[str, Any]:
    """What the week decides: the must bar's state, the decision block's calibration flag, every family's verdict."""
    dec = week_decision(scorecard_week(week).data)
    must = cal.self_agreement.set_index("item_type").loc["must"]
    flag = next((f"{f.key} ({f.level})" for f in dec.flags if f.key.startswith("calibration")), "none")
    return {"bar": str(must["bar_state"]), "flag": flag, "musts": int(must["n_items"]),
            "interval": (float(must["unanimity_low"]), float(must["unanimity_high"])),
            "verdicts": sorted((f.skill_family, f.model, f.label, f.state) for f in dec.families)}


def measure(week: Path, design: Design, repeat: int, jobs: int, nonce: str) -> dict[str, Any]:
    quiet = lambda _m: None  # noqa: E731
    with model_endpoint("sim") as ep:
        rubric = judge_run_dir(week, JudgeOptions(jobs=jobs, batch=design.batch, cache=design.cache),
                               PassContext(endpoint=ep, log=quiet))
        pairs = judge_pairs(week, JudgeOptions(jobs=jobs, batch=design.batch), PassContext(endpoint=ep, log=quiet))
        cal = calibrate(week, calibration_options(design, repeat, jobs, nonce), PassContext(endpoint=ep, log=quiet))
    last = json.loads((week / "judge.json").read_text())["passes"][-1]
    return {"graded": rubric.graded, "rubric": rubric.cost_usd, "pairs": pairs.cost_usd, "calibration": cal.cost_usd,
            "total": rubric.cost_usd + pairs.cost_usd + cal.cost_usd, "ungraded": rubric.ungraded_items,
            "cache_write": last.get("cache", {}).get("cache_write_tokens", 0),
            "cache_saved": last.get("cache", {}).get("saved_usd", 0.0),
            "sample": cal.drawn, **outcome(week, cal)}


def redraws(judged: Path, tmp: Path, design: Design, repeat: int, jobs: int, draws: int) -> list[dict[str, Any]]:
    """The sampled calibration again on the judged week with other nonces: each draw's outcome and spend."""
    out = []
    for i in range(draws):
        week = tmp / f"redraw-{i}"
        shutil.copytree(judged, week)
        for name in ("calibration.csv", "calibration-grades.csv", "calibration.md", "calibration-sample.json",
                     "judge-batches.json"):
            (week / name).unlink(missing_ok=True)
        with model_endpoint("sim") as ep:
            cal = calibrate(week, calibration_options(design, repeat, jobs, f"{i + 1:04x}"),
                            PassContext(endpoint=ep, log=lambda _m: None))
        out.append({"nonce": f"{i + 1:04x}", "calibration": cal.cost_usd, "sample": cal.drawn, **outcome(week, cal)})
    return out


def operating(total: int, unanimity: float, draws: int = 4000, seed: int = 0) -> dict[tuple[str, int], float]:
    """Where the growing sample stops and what it decides, over ``draws`` simulated weeks of ``total`` musts whose
    flips are independent with probability 1 − ``unanimity`` (Clopper–Pearson intervals; the looks of
    ``skillbench.calibration._sample.looks``): ``(state, musts at the stop) -> share``. ``FAIL?`` is a FAIL whose
    interval still reaches the bar (the decision block's amber)."""
    import numpy as np

    from skillbench.calibration import bar_state, decided, looks, lower_end
    from skillbench.scorecard import rate_interval

    rng = np.random.default_rng(seed)
    out: dict[tuple[str, int], float] = {}
    for _ in range(draws):
        flips = rng.random(total) < 1 - unanimity
        for target in looks(total):
            n = total if target is None else target
            u = int(n - flips[:n].sum())
            high = rate_interval(u, n, exact=True).high
            state = bar_state(u / n, lower_end(u, n))
            if decided(state, high) or target is None:
                break
        key = ("FAIL?" if state == "FAIL" and high >= 0.95 else state, n)
        out[key] = out.get(key, 0.0) + 1 / draws
    return dict(sorted(out.items()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--week", default="", help="a generated week (default: the bundled demo's first week)")
    ap.add_argument("--repeat", type=int, default=3, help="calibration gradings per answer (default 3)")
    ap.add_argument("--jobs", type=int, default=4, help="synchronous judge calls at once (default 4)")
    ap.add_argument("--nonce", default="00c0ffee", help="the sampled designs' draw nonce (default 00c0ffee)")
    ap.add_argument("--draws", type=int, default=4, help="other nonces the sampled calibration is redrawn with")
    ap.add_argument("--designs", nargs="+", choices=list(DESIGNS), default=list(DESIGNS), metavar="DESIGN",
                    help=f"designs to measure (default all; {SYNCHRONOUS!r} always runs: it is the baseline)")
    ap.add_argument("--operating", type=int, default=0, metavar="MUSTS",
                    help="only simulate the growing sample on a week of MUSTS musts (judges at 95, 99 and 90 %% "
                    "true unanimity, 4,000 draws each) and print where it stops and what it decides")
    args = ap.parse_args()
    if args.operating:
        for unanimity in (0.95, 0.99, 0.90):
            stops = ", ".join(f"{state} at {n}: {share:.1%}" for (state, n), share in
                              operating(args.operating, unanimity).items())
            print(f"{args.operating} musts, true unanimity {unanimity:.0%}: {stops}")
        return 0
    names = [SYNCHRONOUS, *(n for n in args.designs if n != SYNCHRONOUS)]
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        week = source_week(args.week, tmp)
        print(f"week: {week} (judge: rubric 1 sample, pairs both orders, calibration --repeat {args.repeat}; "
              f"sampled designs: ≥ {CALIBRATION_MUST_FLOOR} musts, nonce {args.nonce})")
        rows, folders = {}, {}
        for name in names:
            folders[name] = fresh_copy(week, tmp / name.replace(" ", "_").replace("+", ""))
            rows[name] = measure(folders[name], DESIGNS[name], args.repeat, args.jobs, args.nonce)
        again = (redraws(folders[SAMPLED], tmp, DESIGNS[SAMPLED], args.repeat, args.jobs, args.draws)
                 if SAMPLED in rows and args.draws else [])
    base = rows[SYNCHRONOUS]
    judge_base = base["rubric"] + base["calibration"]
    print(f"{'design':26} {'graded':>6} {'$/graded run':>12} {'rubric':>8} {'pairs':>8} {'calib.':>8} "
          f"{'ratio':>6} {'rubric+calib.':>13} {'calib. runs':>11} {'must bar':>9}  calibration flag")
    for name, r in rows.items():
        per_run = r["total"] / max(r["graded"], 1)
        runs = f"{r['sample'].runs}/{r['sample'].population_runs}" if r["sample"] is not None else "-"
        print(f"{name:26} {r['graded']:6d} {per_run:12.5f} {r['rubric']:8.4f} {r['pairs']:8.4f} "
              f"{r['calibration']:8.4f} {r['total'] / base['total']:6.3f} "
              f"{(r['rubric'] + r['calibration']) / judge_base:13.3f} {runs:>11} {r['bar']:>9}  {r['flag']}")
    for name, r in rows.items():
        if r["cache_write"]:
            print(f"{name}: the rubric pass wrote {r['cache_write']} cache tokens (its own saving "
                  f"${r['cache_saved']:.4f}: writes are repaid only by calibration's first repeat of the same run)")
    same = {n: (r["bar"], r["flag"], r["verdicts"]) == (base["bar"], base["flag"], base["verdicts"])
            for n, r in rows.items()}
    for name, r in rows.items():
        lo, hi = r["interval"]
        print(f"{name}: must bar {r['bar']} on {r['musts']} musts [{lo:.3f}, {hi:.3f}], {len(r['verdicts'])} verdicts"
              f" — {'the same outcome and verdicts as' if same[name] else 'DIFFERS from'} {SYNCHRONOUS}")
    for d in again:
        lo, hi = d["interval"]
        verdicts = "the same verdicts" if d["verdicts"] == base["verdicts"] else "OTHER verdicts"
        print(f"redraw nonce {d['nonce']}: {d['sample'].runs}/{d['sample'].population_runs} runs, {d['musts']} musts "
              f"(looks {d['sample'].looks}), must bar {d['bar']} [{lo:.3f}, {hi:.3f}], {d['flag']}, {verdicts}, "
              f"calibration ${d['calibration']:.4f}")
    ok = True
    if "batched" in rows:
        batched = rows["batched"]["total"] / base["total"]
        ok &= batched <= 0.5 + 1e-9
        print(f"batched / synchronous = {batched:.3f} (aim ≤ 0.5): {'met' if batched <= 0.5 + 1e-9 else 'NOT met'}")
    if SAMPLED in rows:
        r = rows[SAMPLED]
        judge_ratio = (r["rubric"] + r["calibration"]) / judge_base
        stable = same[SAMPLED] and all((d["bar"], d["flag"]) == (base["bar"], base["flag"]) for d in again)
        ok &= judge_ratio <= 0.3 + 1e-9 and stable
        print(f"rubric judge + calibration, {SAMPLED} / {SYNCHRONOUS} = {judge_ratio:.3f} (aim ≤ 0.3; with the "
              f"pairwise judge {r['total'] / base['total']:.3f}): {'met' if judge_ratio <= 0.3 + 1e-9 else 'NOT met'};"
              f" outcome {'the same' if stable else 'NOT the same'} in {1 + len(again)} draw(s) "
              f"(calibration {r['calibration'] / base['calibration']:.3f}× the synchronous one)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
