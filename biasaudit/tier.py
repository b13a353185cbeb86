"""The experiment tier (quick | full) that torch experiment claims run at.

``biasaudit audit --tier full`` runs theory claims at profile ``thorough`` and experiments at their full
size; the audit sets :data:`TIER_VARIABLE` around each claim run from the unit's profile, so the choice
travels with the unit to any worker (process pool or Dask). The variable can also be set by hand.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from biasaudit.plumbing import choice

__all__ = ["experiment_tier", "tier_of_profile", "TIER_VARIABLE", "TIERS", "PROFILE_OF_TIER", "QUICK_AUDIT_MINUTES"]

TIER_VARIABLE = "BIASAUDIT_EXPERIMENT_TIER"
TIERS = ("quick", "full")
PROFILE_OF_TIER = {"quick": "ci", "full": "thorough"}
# The one stated run-time of `biasaudit audit` at the quick tier, in minutes on 2 cores with cold caches
# (README, `audit --help`; tests/test_docs.py checks the README says the same). Measured: 9 min 26 s from a
# fresh clone on 2026-12-03 (notes/status.md).
QUICK_AUDIT_MINUTES = 10


def experiment_tier(default: str = "quick") -> str:
    """``$BIASAUDIT_EXPERIMENT_TIER`` if set, else ``default``."""
    return choice(TIER_VARIABLE, os.environ.get(TIER_VARIABLE) or default, TIERS)


@contextlib.contextmanager
def tier_of_profile(profile: str) -> Iterator[str]:
    """Set :data:`TIER_VARIABLE` to the tier of ``profile`` (ci → quick, thorough → full) for a block."""
    tier = "full" if profile == "thorough" else "quick"
    old = os.environ.get(TIER_VARIABLE)
    os.environ[TIER_VARIABLE] = tier
    try:
        yield tier
    finally:
        if old is None:
            os.environ.pop(TIER_VARIABLE, None)
        else:
            os.environ[TIER_VARIABLE] = old
