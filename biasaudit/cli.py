"""The ``biasaudit`` command line.

Each subcommand lives in ``biasaudit/commands/<name>.py`` and exposes ``register(subparsers)``; the
module must not import numba or torch at import time (only inside its ``run``). Bad input raises
``ValueError`` (usually :class:`biasaudit.inputs.InputError`); it is printed as one line on stderr with
exit code 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from biasaudit import __version__

__all__ = ["build_parser", "main", "COMMANDS"]

COMMANDS = ("regimes", "check", "list", "sweep", "bench", "audit", "validate", "new_claim")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own usage errors: exit 2, one clear line (`-h` shows usage)
        self.exit(2, f"biasaudit: error: {message} (see `{self.prog} -h`)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``biasaudit`` argument parser, with a subcommand for each module of :data:`COMMANDS` that exists."""
    parser = _Parser(prog="biasaudit", description="Audit theorems about the implicit bias of optimizers "
                     "against simulation: SAM on deep diagonal networks, and norm vs sharpness at the edge of stability.")
    parser.add_argument("--version", action="version", version=f"biasaudit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"biasaudit.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"biasaudit.commands.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return the exit status: the command's own, 2 for
    bad input (one line on stderr), 130 when interrupted."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
        print(f"biasaudit: error: a command is required, one of: {', '.join(commands)} "
              "(biasaudit --help describes them)", file=sys.stderr)
        return 2
    try:
        return int(args.run(args) or 0)
    except ValueError as exc:
        print(f"biasaudit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("biasaudit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `biasaudit check | head`: stop quietly, like other CLI tools
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
