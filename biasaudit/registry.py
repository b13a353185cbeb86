"""The registry of every claim, by id (e.g. ``sam.l2.regime3``).

Each module (or package) in :data:`CLAIM_MODULES` defines ``CLAIMS: tuple[Claim, ...]``. Modules are imported
on first use, so ``import biasaudit.registry`` stays cheap and never imports torch.
"""

from __future__ import annotations

import fnmatch
from functools import cache

from biasaudit.ledger import Claim
from biasaudit.plumbing import InputError

__all__ = ["CLAIM_MODULES", "all_claims", "get_claim", "select_claims"]

CLAIM_MODULES: tuple[str, ...] = (
    "biasaudit.claims.sam",
    "biasaudit.claims.validation_sam",
    "biasaudit.claims.sam_torch_regimes",
    "biasaudit.claims.eos",
    "biasaudit.claims.sam_l2",
    "biasaudit.claims.validation_eos",
)


@cache
def all_claims() -> tuple[Claim, ...]:
    import importlib

    claims: list[Claim] = []
    for name in CLAIM_MODULES:
        claims.extend(importlib.import_module(name).CLAIMS)
    ids = [c.id for c in claims]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise RuntimeError(f"duplicate claim ids: {duplicates}")
    return tuple(claims)


def get_claim(claim_id: str) -> Claim:
    for claim in all_claims():
        if claim.id == claim_id:
            return claim
    raise InputError("claim", "must be a registered claim id (see `biasaudit check --list`)", claim_id)


def select_claims(pattern: str | None = None, paper: str | None = None, kind: str | None = None) -> list[Claim]:
    """Claims whose id matches a glob (``sam.l2.*``) or comma-separated globs; error if none match."""
    claims = list(all_claims())
    if paper is not None:
        claims = [c for c in claims if c.paper == paper]
    if kind is not None:
        claims = [c for c in claims if c.kind == kind]
    if pattern:
        globs = [g.strip() for g in pattern.split(",") if g.strip()]
        claims = [c for c in claims if any(fnmatch.fnmatchcase(c.id, g) or c.id == g for g in globs)]
        if not claims:
            known = ", ".join(c.id for c in all_claims())
            raise InputError("claims", f"matches no registered claim; known ids: {known}", pattern)
    return claims
