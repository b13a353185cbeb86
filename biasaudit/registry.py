"""The registry of every claim and figure, by id (e.g. ``sam.l2.regime3``): the one loader behind ``list``,
``check``, ``audit``, the figures and the report.

**Where claims live.** A claim id names its folder: the first two segments of ``sam.l2.alpha_collapse`` are the
package ``biasaudit.claims.sam.l2`` (folder ``biasaudit/claims/sam/l2/``). Each paper package
(:data:`biasaudit.claims.PAPERS`) lists its folders in reading order in ``FOLDERS``; each folder's package
defines ``CLAIMS: tuple[Claim, ...]`` and optionally ``FIGURES: tuple[FigureJob, ...]``. Modules are imported on
first use, so ``import biasaudit.registry`` stays cheap and never imports torch.

**Claims from elsewhere.** An installed distribution that declares an entry point in the group
``biasaudit.claims`` (value: a module name, whose ``CLAIMS`` and optional ``FIGURES`` are read) is seen by
``biasaudit list``, ``check`` and ``audit`` alike::

    # pyproject.toml of the other package
    [project.entry-points."biasaudit.claims"]
    my_claims = "my_package.claims"

Extra modules can also be named in ``$BIASAUDIT_EXTRA_CLAIM_MODULES`` (comma-separated; the audit passes them
to its workers). A module from outside this package that fails to import never hides the other claims:
:func:`load` returns it in ``broken`` (``list`` and ``check`` print one line on stderr, ``audit`` records an
``error``). See ``examples/plugin/``.

**Selecting.** ``--claims`` takes comma-separated globs over ids (:func:`fnmatch.fnmatchcase`, so ``sam.l2.*``
or an exact id); :func:`select_claims` is the one place that applies them.
"""

from __future__ import annotations

import fnmatch
import importlib
import os
import sys
from dataclasses import dataclass
from functools import cache

from biasaudit.ledger import Claim
from biasaudit.plumbing import InputError

__all__ = ["ENTRY_POINT_GROUP", "EXTRA_MODULES_VARIABLE", "Loaded", "claim_packages", "plugin_modules",
           "extra_modules_from_env", "claim_modules", "load", "all_claims", "get_claim", "select_claims",
           "matches"]

ENTRY_POINT_GROUP = "biasaudit.claims"
EXTRA_MODULES_VARIABLE = "BIASAUDIT_EXTRA_CLAIM_MODULES"


@cache
def claim_packages() -> tuple[str, ...]:
    """This package's claim folders as module names, paper by paper, each paper's ``FOLDERS`` in order."""
    from biasaudit import claims

    return tuple(f"biasaudit.claims.{paper}.{folder}" for paper in claims.PAPERS
                 for folder in importlib.import_module(f"biasaudit.claims.{paper}").FOLDERS)


@cache
def plugin_modules() -> tuple[str, ...]:
    """Module names declared by installed distributions in the entry-point group ``biasaudit.claims``."""
    from importlib.metadata import entry_points

    return tuple(dict.fromkeys(ep.module for ep in entry_points(group=ENTRY_POINT_GROUP)))


def extra_modules_from_env() -> tuple[str, ...]:
    """Extra claim modules (comma-separated module names) from ``$BIASAUDIT_EXTRA_CLAIM_MODULES``."""
    text = os.environ.get(EXTRA_MODULES_VARIABLE, "")
    return tuple(name.strip() for name in text.split(",") if name.strip())


def claim_modules(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """This package's claim folders, then the installed plugins', then ``extra`` (each once)."""
    return tuple(dict.fromkeys((*claim_packages(), *plugin_modules(), *extra)))


@dataclass(frozen=True)
class Loaded:
    """What :func:`load` found: every claim and figure job, and the modules that failed to import
    (``{module: "ExcType: message"}``)."""

    claims: tuple[Claim, ...]
    figures: tuple
    broken: dict


@cache
def load(extra: tuple[str, ...] = ()) -> Loaded:
    """Import every claim module (this package's, the plugins', ``extra``) once and collect their claims and
    figures. A module of this package that fails to import is a bug and raises; any other is in ``broken``.
    Duplicate claim or figure ids raise ``RuntimeError``."""
    from biasaudit.figures import FIGURES as FRONT_FIGURES

    own = set(claim_packages())
    claims: list[Claim] = []
    figures = list(FRONT_FIGURES)
    broken: dict[str, str] = {}
    for name in claim_modules(extra):
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not hide every other claim
            if name in own:
                raise
            broken[name] = f"{type(exc).__name__}: {exc}"
            print(f"biasaudit: claim module {name!r} skipped: {broken[name]}", file=sys.stderr)
            continue
        claims.extend(module.CLAIMS)
        figures.extend(getattr(module, "FIGURES", ()))
    for what, ids in (("claim", [c.id for c in claims]), ("figure", [f.id for f in figures])):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise RuntimeError(f"duplicate {what} ids: {duplicates}")
    return Loaded(tuple(claims), tuple(figures), broken)


def all_claims(extra: tuple[str, ...] = ()) -> tuple[Claim, ...]:
    """Every registered claim, in registry order (see :func:`load`)."""
    return load(tuple(extra)).claims


def get_claim(claim_id: str, extra: tuple[str, ...] = ()) -> Claim:
    """The claim with this id; ``InputError`` (parameter ``claim``) if none is registered."""
    for claim in all_claims(extra):
        if claim.id == claim_id:
            return claim
    broken = load(tuple(extra)).broken
    why = f" (modules that failed to import: {', '.join(broken)})" if broken else ""
    raise InputError("claim", f"must be a registered claim id (see `biasaudit list`){why}", claim_id)


def matches(claim_id: str, pattern: str | None) -> bool:
    """Whether ``claim_id`` matches ``pattern``: comma-separated globs (``fnmatchcase``); None or empty: all."""
    globs = [g.strip() for g in (pattern or "").split(",") if g.strip()]
    return not globs or any(fnmatch.fnmatchcase(claim_id, g) for g in globs)


def select_claims(pattern: str | None = None, paper: str | None = None, kind: str | None = None,
                  extra: tuple[str, ...] = ()) -> list[Claim]:
    """Claims whose id matches ``pattern`` (see :func:`matches`), of ``paper`` and ``kind`` if given.

    Raises ``InputError`` for an unknown paper, or a pattern that matches nothing (naming the known ids)."""
    claims = list(all_claims(extra))
    if paper is not None:
        papers = sorted({c.paper for c in claims})
        if paper not in papers:
            raise InputError("paper", f"must be one of {', '.join(papers)}", paper)
        claims = [c for c in claims if c.paper == paper]
    if kind is not None:
        claims = [c for c in claims if c.kind == kind]
    chosen = [c for c in claims if matches(c.id, pattern)]
    if pattern and not chosen:
        broken = load(tuple(extra)).broken
        why = f" (modules that failed to import: {', '.join(broken)})" if broken else ""
        known = ", ".join(c.id for c in all_claims(extra))
        raise InputError("claims", f"matches no registered claim{why}; known ids: {known}", pattern)
    return chosen
