"""What the ``sam.torch.*`` claim modules share: the experiment size they run at."""

from __future__ import annotations

import os

__all__ = ["TIER_VARIABLE", "sam_torch_tier"]

TIER_VARIABLE = "BIASAUDIT_SAM_TORCH_TIER"


def sam_torch_tier(default: str = "quick") -> str:
    """The experiment size: ``$BIASAUDIT_SAM_TORCH_TIER`` (quick | full) if set, else the audit's tier
    (``$BIASAUDIT_EXPERIMENT_TIER``, see :mod:`biasaudit.tier`), else ``default``."""
    from biasaudit.plumbing import choice
    from biasaudit.tier import experiment_tier as audit_tier

    if os.environ.get(TIER_VARIABLE):
        return choice(TIER_VARIABLE, os.environ[TIER_VARIABLE], ("quick", "full"))
    return audit_tier(default)
