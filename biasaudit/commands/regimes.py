"""``biasaudit regimes {sam,eos}``: predicted regime boundaries and limits, with their formulas."""

from biasaudit.commands import register_dispatcher

__all__ = ["register", "register_dispatcher"]

TARGETS = ("regimes_sam", "regimes_eos")


def register(sub) -> None:
    """Add ``biasaudit regimes`` with its targets ``sam`` and ``eos`` (:data:`TARGETS`) to ``sub``."""
    register_dispatcher(sub, "regimes", "predicted regime boundaries / limits with their formulas", TARGETS)
