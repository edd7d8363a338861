"""The ``skillbench`` console command: one entry point, one subcommand per module of :mod:`skillbench.commands`.

Each module of ``skillbench.commands`` exposes ``register(subparsers)``, which adds its subparser and sets
``func`` to a handler ``(args) -> int``. Exit codes: 0 ok, 1 the work found a failure (a broken suite, an
incomplete run), 2 a usage error — or a run directory another pass holds (nothing was done: rerun later, or
with ``--wait``). Every usage error is one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import shlex
import sys

from skillbench import commands
from skillbench.commands import UsageError


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``skillbench judge: argument --limit: -3: must be 1 or more``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="skillbench",
        description="Measure whether an agent skill makes the model answer better, by how much, and at what cost.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from skillbench.ledgers import RunDirBusy, set_process_command

    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)  # a refused argument: its one line, then SystemExit(2)
    set_process_command(shlex.join(["skillbench", *argv]))  # how a refused second pass names this one
    try:
        return int(args.func(args) or 0)
    except (UsageError, RunDirBusy) as exc:
        print(f"skillbench {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"skillbench {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        # A run directory's file that cannot be read: its one line names the file and the fix. Imported here, not
        # above: the ledgers bring pandas, and `skillbench --help` must stay fast.
        from skillbench.ledgers import LedgerError

        if not isinstance(exc, LedgerError):
            raise
        print(f"skillbench {args.command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
