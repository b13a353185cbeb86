"""The experiment tier (quick | full) that torch experiment claims run at, and the folder of their data.

``biasaudit audit --tier full`` runs theory claims at profile ``thorough`` and experiments at their full
size; the audit sets :data:`TIER_VARIABLE` around each claim run from the unit's profile, so the choice
travels with the unit to any worker (process pool or Dask). The variable can also be set by hand.

``biasaudit audit --data-dir DIR`` sets :data:`DATA_DIR_VARIABLE` for the audit's process and its local
workers: the folder that holds data sets that cannot be bundled (Fashion-MNIST, CIFAR-10, SVHN). Remote Dask
workers read their own environment, so set it there too (the data's location is not part of a run's identity:
a run's cache key leaves it out).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from biasaudit.plumbing import choice

__all__ = ["AuditTier", "experiment_tier", "experiment_data_dir", "DATA_DIR_VARIABLE", "tier_of_profile", "TIER_VARIABLE", "TIERS", "PROFILE_OF_TIER", "QUICK_AUDIT_MINUTES"]

TIER_VARIABLE = "BIASAUDIT_EXPERIMENT_TIER"
DATA_DIR_VARIABLE = "BIASAUDIT_DATA_DIR"
TIERS = ("quick", "full")
PROFILE_OF_TIER = {"quick": "ci", "full": "thorough"}
# The one stated run-time of `biasaudit audit` at the quick tier, in minutes on 2 cores with cold caches
# (README, `audit --help`; tests/test_docs.py checks the README says the same). Measured from a fresh clone
# on 2026-12-08: 38 min 31 s with the install, nothing else running (46 min 33 s on 2026-12-07 with the test
# suite beside it; 20-23 min before the network claims added seeds where undecided; notes/status.md).
QUICK_AUDIT_MINUTES = 40


def experiment_tier(default: str = "quick") -> str:
    """``$BIASAUDIT_EXPERIMENT_TIER`` if set, else ``default``."""
    return choice(TIER_VARIABLE, os.environ.get(TIER_VARIABLE) or default, TIERS)


def experiment_data_dir() -> str | None:
    """``$BIASAUDIT_DATA_DIR`` if set (and not empty), else None."""
    return os.environ.get(DATA_DIR_VARIABLE) or None


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


@dataclass(frozen=True)
class AuditTier:
    """Domain entry of an experiment claim's ``tier`` parameter: the tier that runs, read when a case is drawn.

    A ``Fixed("quick")`` would record "quick" in the evidence of a ``--tier full`` audit; this entry returns
    ``resolve()`` at draw time (default :func:`experiment_tier`; a claim family with its own override
    variable passes its own resolver), so a case's parameters name the tier its experiment ran at.
    """

    resolve: Callable[[], str] = experiment_tier

    def sample(self, rng, params) -> str:
        """The tier in force when the case is drawn, ``resolve()``."""
        return self.resolve()

    def strategy(self, params):
        """The hypothesis strategy that calls ``resolve()`` at draw time."""
        from hypothesis import strategies as st

        return st.builds(self.resolve)
