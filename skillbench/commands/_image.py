"""``skillbench image build``: the local runner image for the docker sandbox."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("image", help="build or show the runner image (Debian minbase + the pinned CLI)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = actions.add_parser("build", help="build the image unless one with the same inputs exists")
    build.add_argument("--force", action="store_true", help="rebuild even when it is up to date")
    build.set_defaults(func=run_build)
    show = actions.add_parser("show", help="print the tag the installed CLI needs and whether it exists")
    show.set_defaults(func=run_show)


def run_build(args: argparse.Namespace) -> int:
    from skillbench.generation import ImageBuildError, ToolMissing, build_image

    try:
        build_image(force=args.force)
    except (ImageBuildError, ToolMissing) as exc:
        print(f"skillbench image build: {exc}", file=sys.stderr)
        return 1
    return 0


def run_show(args: argparse.Namespace) -> int:
    from skillbench.generation import current_spec, find_image

    spec = current_spec()
    print(f"{spec.tag} {'present' if find_image(spec) is not None else 'absent'}")
    return 0
