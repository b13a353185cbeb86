"""``biasaudit regimes {sam,eos}``: predicted regime boundaries and limits, with their formulas."""

from __future__ import annotations

import importlib

# Each module registers one sub-subcommand: register(subparsers).
TARGETS = ("regimes_sam", "regimes_eos")


def register(sub) -> None:
    parser = sub.add_parser("regimes", help="predicted regime boundaries / limits with their formulas")
    targets = parser.add_subparsers(dest="target", metavar="PAPER", parser_class=type(parser))
    targets.required = True
    for name in TARGETS:
        importlib.import_module(f"biasaudit.commands.{name}").register(targets)
