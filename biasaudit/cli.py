"""The ``biasaudit`` command line.

Each subcommand lives in ``biasaudit/commands/<name>.py`` and exposes ``register(subparsers)``; the
module must not import numba or torch at import time (only inside its ``run``). Bad input raises
``ValueError`` (usually :class:`biasaudit.inputs.InputError`); it is printed as one line on stderr with
exit code 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
import sys

from biasaudit import __version__

__all__ = ["build_parser", "main", "COMMANDS"]

COMMANDS = ("regimes", "check", "list", "sweep", "bench", "audit", "validate", "new_claim")


class _Parser(argparse.ArgumentParser):
    argv: list[str] = []  # the command line being parsed (set by main), for the mistyped-option hint

    def error(self, message):  # argparse's own usage errors: exit 2, one clear line (`-h` shows usage)
        hint = ""
        if "did you mean" not in message:
            unknown = [a for a in self.argv if a.startswith("--") and a.split("=", 1)[0] not in
                       self._option_string_actions]
            hint = _choice_hint(message) or _option_hint(unknown, self)
        self.exit(2, f"biasaudit: error: {message}{hint} (see `{self.prog} -h`)\n")


def _choice_hint(message: str) -> str:
    """"; did you mean 'check'?" for argparse's "invalid choice: 'chek' (choose from ...)" (Python 3.11 has no
    ``suggest_on_error``)."""
    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not found:
        return ""
    close = difflib.get_close_matches(found.group(1), re.findall(r"'([^']*)'", found.group(2)), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _option_hint(extras: list[str], parser: argparse.ArgumentParser) -> str:
    """" (did you mean --norm?)" for a mistyped option among ``extras``, from ``parser``'s own options."""
    options = [o for o in parser._option_string_actions if o.startswith("--")]
    hints = []
    for typed in (e.split("=", 1)[0] for e in extras if e.startswith("--")):
        close = difflib.get_close_matches(typed, options, n=1, cutoff=0.6)
        if close:
            hints.append((typed, close[0]))
    if len(hints) == 1:
        return f" (did you mean {hints[0][1]}?)"
    return f" (did you mean {', '.join(f'{c} for {t}' for t, c in hints)}?)" if hints else ""


def _chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost subcommand's parser that ``args`` chose (``biasaudit sweep eos`` -> the ``eos`` parser)."""
    while True:
        action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        name = getattr(args, action.dest, None) if action else None
        if name not in (action.choices if action else {}):
            return parser
        parser = action.choices[name]


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
    _Parser.argv = list(sys.argv[1:] if argv is None else map(str, argv))
    args, extras = parser.parse_known_args(argv)
    if extras:  # as parse_args, with a suggestion for a mistyped option
        chosen = _chosen_parser(parser, args)
        chosen.error(f"unrecognized arguments: {' '.join(extras)}{_option_hint(extras, chosen)}")
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
