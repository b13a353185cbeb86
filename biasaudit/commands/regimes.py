"""``biasaudit regimes {sam,eos}``: predicted regime boundaries and limits, with their formulas."""

from biasaudit.commands import register_dispatcher

__all__ = ["register", "register_dispatcher"]

TARGETS = ("regimes_sam", "regimes_eos")


def register(sub) -> None:
    register_dispatcher(sub, "regimes", "predicted regime boundaries / limits with their formulas", TARGETS)
