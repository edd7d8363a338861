"""``skillbench run-pages``: a week's run pages, written for a run directory that already exists."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run-pages",
        help="write REPORT/runs/: one page per prompt × model of a week, and link the report's pages to them",
        description="Write the week's run pages (the prompt, each rep's answers per arm side by side with every "
        "rubric verdict and its evidence marked, the pairwise judgement, the checks, activation, cost, turns and "
        "the transcripts) into REPORT/runs/, without rerunning anything, and link the names in the report's pages "
        "(scorecard.html, the stage pages) to them. The weekly chain does this at its end. "
        "Exit 0 written, 2 usage or ledger error.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a week's folder (holds manifest.csv and the run folders)")
    p.add_argument("--report", metavar="DIR",
                   help="the week's report folder (default: reports/<run_key>/ of this checkout)")
    p.add_argument("--prompts", nargs="+", metavar="NAME",
                   help="write only these prompts' pages (beside the pages already there; for a week over the "
                   "page limit, which gets pages only for what the scorecard points at)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skillbench.commands import UsageError
    from skillbench.ledgers import MANIFEST_FILE, RUN_PAGES_DIR, LedgerError, week_run_key
    from skillbench.paths import REPORTS_DIR
    from skillbench.report import link_run_pages, write_run_pages

    run_dir = Path(args.run_dir)
    if not (run_dir / MANIFEST_FILE).is_file():
        raise UsageError(f"{run_dir}: no {MANIFEST_FILE} (RUN_DIR is a week's folder; run `skillbench signals "
                         f"{run_dir}` first)")
    prompts = [p for text in args.prompts or [] for p in text.split(",") if p]
    try:
        report = Path(args.report) if args.report else REPORTS_DIR / week_run_key(run_dir)
        known = set()
        if prompts:
            from skillbench.ledgers import read_manifest

            known = set(read_manifest(run_dir / MANIFEST_FILE)["prompt"].astype(str))
        unknown = [p for p in prompts if p not in known]
        if unknown:
            raise UsageError(f"--prompts: {unknown[0]!r} is not a prompt of {run_dir / MANIFEST_FILE}")
        links = write_run_pages(run_dir, report, prompts=prompts)
        linked = sum(link_run_pages(page, links) for page in sorted(report.glob("*.html")))
    except (LedgerError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    print(f"{report / RUN_PAGES_DIR / 'index.html'} ({len(links.pages)} pages; {linked} links added to the "
          "report's pages)")
    return 0
