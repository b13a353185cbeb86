"""``biasaudit validate {sam,eos}``: torch experiments that confirm (or refute) the theory on trained networks."""

from __future__ import annotations

import importlib

# Each module registers one sub-subcommand: register(subparsers).
TARGETS = ("validate_sam", "validate_eos")


def register(sub) -> None:
    parser = sub.add_parser("validate", help="torch experiments on trained networks (CPU or GPU)")
    targets = parser.add_subparsers(dest="target", metavar="PAPER", parser_class=type(parser))
    targets.required = True
    for name in TARGETS:
        importlib.import_module(f"biasaudit.commands.{name}").register(targets)
