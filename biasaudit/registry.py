"""The registry of every claim, by id (e.g. ``sam.l2.regime3``).

Each module (or package) in :data:`CLAIM_MODULES` defines ``CLAIMS: tuple[Claim, ...]``. Modules are imported
on first use, so ``import biasaudit.registry`` stays cheap and never imports torch.

Claims from other packages: an installed distribution that declares an entry point in the group
``biasaudit.claims`` (value: a module name, whose ``CLAIMS`` and optional ``FIGURES`` are read) is seen by
``biasaudit list``, ``check`` and ``audit`` alike::

    # pyproject.toml of the other package
    [project.entry-points."biasaudit.claims"]
    my_claims = "my_package.claims"

A plugin module that fails to import is skipped by ``list`` and ``check`` with one line on stderr, and
recorded as an ``error`` by ``audit``; it never hides the other claims. See ``examples/plugin/``.
"""

from __future__ import annotations

import fnmatch
from functools import cache

from biasaudit.ledger import Claim
from biasaudit.plumbing import InputError

__all__ = ["CLAIM_MODULES", "ENTRY_POINT_GROUP", "plugin_modules", "claim_modules", "all_claims", "get_claim",
           "select_claims"]

CLAIM_MODULES: tuple[str, ...] = (
    "biasaudit.claims.sam",
    "biasaudit.claims.validation_sam",
    "biasaudit.claims.sam_torch_regimes",
    "biasaudit.claims.eos",
    "biasaudit.claims.sam_l2",
    "biasaudit.claims.validation_eos",
    "biasaudit.claims.eos_torch_architectures",
)


ENTRY_POINT_GROUP = "biasaudit.claims"


@cache
def plugin_modules() -> tuple[str, ...]:
    """Module names declared by installed distributions in the entry-point group ``biasaudit.claims``."""
    from importlib.metadata import entry_points

    return tuple(dict.fromkeys(ep.module for ep in entry_points(group=ENTRY_POINT_GROUP)))


def claim_modules() -> tuple[str, ...]:
    """This package's claim modules, then the installed plugins' (each once)."""
    return tuple(dict.fromkeys((*CLAIM_MODULES, *plugin_modules())))


@cache
def all_claims() -> tuple[Claim, ...]:
    import importlib
    import sys

    claims: list[Claim] = []
    for name in claim_modules():
        if name in CLAIM_MODULES:
            claims.extend(importlib.import_module(name).CLAIMS)
            continue
        try:
            claims.extend(importlib.import_module(name).CLAIMS)
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not hide every other claim
            print(f"biasaudit: claim plugin {name!r} skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
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
        papers = sorted({c.paper for c in claims})
        if paper not in papers:
            raise InputError("paper", f"must be one of {', '.join(papers)}", paper)
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
