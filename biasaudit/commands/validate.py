"""``biasaudit validate {sam,ladder,eos}``: torch experiments that confirm (or refute) the theory on trained networks."""

from biasaudit.commands import register_dispatcher

__all__ = ["register", "register_dispatcher"]

TARGETS = ("validate_sam", "validate_ladder", "validate_eos")


def register(sub) -> None:
    """Add ``biasaudit validate`` with its targets ``sam``, ``ladder`` and ``eos`` (:data:`TARGETS`) to ``sub``."""
    register_dispatcher(sub, "validate", "torch experiments on trained networks (CPU or GPU)", TARGETS)
