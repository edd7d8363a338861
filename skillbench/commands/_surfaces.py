"""``skillbench surfaces``: fetch and cache the API surfaces a suite declares (``[[api]]`` in skillbench.toml)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "surfaces",
        help="fetch and cache the API surfaces a suite declares, for the fabricated-identifier detector",
        description="Read each [[api]] library of a suite's skillbench.toml at its declared version (the installed "
        "copy when the version matches, else its wheel from PyPI; never imported), with its typed stubs, and cache "
        "the flattened surface. One line per surface. Exit 0 all cached, 1 a surface could not be built, 2 usage.",
    )
    p.add_argument("--suite", default="evals", metavar="SUITE_DIR",
                   help="the folder whose skillbench.toml declares the surfaces (default: evals)")
    p.add_argument("--config", metavar="FILE", help="a skillbench.toml to read instead of the suite's own")
    p.add_argument("--cache", metavar="DIR", help="the surface cache (default: $SKILLBENCH_CACHE/surfaces, else "
                   "~/.cache/skillbench/surfaces)")
    p.add_argument("--rebuild", action="store_true", help="build again even when cached")
    p.add_argument("--jobs", type=int, default=min(3, os.cpu_count() or 1), metavar="N",
                   help="surfaces built at once (one process each; default: up to 3, the cores)")
    p.set_defaults(func=run)


def _build(spec_json: str, cache: str) -> tuple[str, str, float, str]:
    """One surface in its own process (griffe's trees are large; two cores build two at once)."""
    from skillbench.identifiers import SurfaceError, build_surface
    from skillbench.suite import ApiSettings

    spec = ApiSettings.model_validate_json(spec_json)
    start = time.monotonic()
    try:
        path, origin = build_surface(spec, Path(cache))
    except SurfaceError as exc:
        return spec.package, "", time.monotonic() - start, str(exc)
    except Exception as exc:  # griffe on an unusual package: one line, the other surfaces still build
        return spec.package, "", time.monotonic() - start, f"cannot be read ({type(exc).__name__}: {exc})"[:300]
    return spec.package, f"{path} (from the {origin} source)", time.monotonic() - start, ""


def run(args: argparse.Namespace) -> int:
    from concurrent.futures import ProcessPoolExecutor

    from skillbench.commands import UsageError
    from skillbench.identifiers import cache_dir, cache_file
    from skillbench.suite import ConfigError, load_config, read_config

    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give 1 or more")
    if not args.config and not Path(args.suite).is_dir():
        raise UsageError(f"--suite {args.suite}: not a folder (the folder that holds skillbench.toml)")
    try:
        config = read_config(args.config) if args.config else load_config(args.suite)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if not config.api:
        print(f"{args.config or args.suite}: declares no [[api]] surface (see docs/fabrication.md)")
        return 0
    directory = cache_dir(args.cache)
    todo = []
    for spec in config.api:
        path = cache_file(spec, directory)
        label = f"{spec.package}=={spec.version}" + (f" + {spec.stubs}=={spec.stubs_version}" if spec.stubs else "")
        if path.is_file() and not args.rebuild:
            print(f"{label}: cached {path}")
        else:
            todo.append((label, spec.model_dump_json()))
    failed = 0
    if todo:
        with ProcessPoolExecutor(max_workers=min(args.jobs, len(todo))) as pool:
            futures = [(label, pool.submit(_build, spec_json, str(directory))) for label, spec_json in todo]
            for label, future in futures:
                _package, where, seconds, error = future.result()
                if error:
                    failed += 1
                    print(f"{label}: not cached — {error}", file=sys.stderr)
                else:
                    print(f"{label}: built in {seconds:.1f} s, {where}")
    return 1 if failed else 0
