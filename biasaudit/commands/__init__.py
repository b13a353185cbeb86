"""One module per CLI subcommand; see :mod:`biasaudit.cli`."""

from __future__ import annotations

import importlib

__all__ = ["register_dispatcher"]


def register_dispatcher(sub, name: str, help: str, targets: tuple[str, ...]) -> None:
    """A subcommand whose sub-subcommands (``sam``, ``eos``) each live in ``biasaudit/commands/<target>.py``."""
    parser = sub.add_parser(name, help=help)
    choices = parser.add_subparsers(dest="target", metavar="PAPER", parser_class=type(parser))
    choices.required = True
    for target in targets:
        importlib.import_module(f"biasaudit.commands.{target}").register(choices)
