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
to its workers).

**Claims from a file or folder, without packaging.** ``--claims`` of ``list``, ``check`` and ``audit`` also takes
paths: an entry that ends in ``.py``, contains a ``/`` or names an existing folder is a claim module file, or a folder whose ``*.py`` files
(not ``_*.py`` or ``test_*.py``) are claim modules; their claims are selected (``biasaudit check --claims
myclaims/gd_quadratic.py``, the file :command:`biasaudit new-claim` writes). :func:`claims_option` splits the option;
the files travel as absolute paths among the extra modules and :func:`import_claim_module` loads them. A module from outside this package that fails to import never hides the other claims:
:func:`load` returns it in ``broken`` (``list`` and ``check`` print one line on stderr, ``audit`` records an
``error``). See ``examples/plugin/``.

**Selecting.** ``--claims`` takes comma-separated globs over ids (:func:`fnmatch.fnmatchcase`, so ``sam.l2.*``
or an exact id); :func:`select_claims` is the one place that applies them.
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from functools import cache

from biasaudit.ledger import Claim
from biasaudit.plumbing import InputError

__all__ = ["ENTRY_POINT_GROUP", "EXTRA_MODULES_VARIABLE", "Loaded", "claim_packages", "plugin_modules",
           "extra_modules_from_env", "claim_modules", "load", "all_claims", "get_claim", "select_claims",
           "matches", "ClaimsOption", "claims_option", "is_claim_path", "import_claim_module", "closest_ids",
           "did_you_mean"]

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


def is_claim_path(entry: str) -> bool:
    """Whether a ``--claims`` entry (or an extra module) names a file or folder rather than a glob or module:
    it ends in ``.py`` or contains a path separator."""
    return entry.endswith(".py") or "/" in entry or os.sep in entry


def import_claim_module(name: str):
    """The module ``name``: imported by name, or (an absolute path to a ``.py`` file, see :func:`claims_option`)
    loaded from its file once, as ``biasaudit_claim_file_<stem>_<hash of the path>``."""
    if not is_claim_path(name):
        return importlib.import_module(name)
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    stem = os.path.splitext(os.path.basename(name))[0]
    module_name = f"biasaudit_claim_file_{stem if stem.isidentifier() else 'module'}_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, name)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load a Python module from {name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _claim_files(entry: str) -> tuple[str, ...]:
    """The absolute paths of the claim module files an entry names; InputError ``claims`` if there are none."""
    path = os.path.abspath(os.path.expanduser(entry))
    if os.path.isfile(path) and path.endswith(".py"):
        return (path,)
    if os.path.isdir(path):
        files = tuple(os.path.join(path, f) for f in sorted(os.listdir(path))
                      if f.endswith(".py") and not f.startswith(("_", "test_")))
        if files:
            return files
        raise InputError("claims", "names a folder with no claim module (*.py, not _*.py or test_*.py)", entry)
    raise InputError("claims", "names no claim module file (*.py) or folder that exists", entry)


@dataclass(frozen=True)
class ClaimsOption:
    """A ``--claims`` value split: ``pattern`` (the globs, plus the ids of the files' claims; None: every claim)
    and ``files`` (the claim module files, absolute paths, to load as extra modules)."""

    pattern: str | None
    files: tuple[str, ...]


def claims_option(text: str | None) -> ClaimsOption:
    """Split ``--claims``: globs stay globs; a path (:func:`is_claim_path`) loads its file or folder and selects
    the claims defined there. InputError ``claims`` for a missing path, a file that fails to import or defines
    no ``CLAIMS``."""
    if text is None:
        return ClaimsOption(None, ())
    globs, files = [], []
    for entry in (e.strip() for e in str(text).split(",")):
        if not entry:
            continue
        if not (is_claim_path(entry) or os.path.isdir(entry)):
            globs.append(entry)
            continue
        for path in _claim_files(entry):
            try:
                module = import_claim_module(path)
            except Exception as exc:  # noqa: BLE001 - the user's file: say why, in one line
                raise InputError("claims", f"failed to import: {type(exc).__name__}: {exc}", path) from None
            ids = [c.id for c in getattr(module, "CLAIMS", ())]
            if not ids:
                raise InputError("claims", "defines no claim (a claim module has CLAIMS = (Claim(...), ...))", path)
            files.append(path)
            globs += ids
    return ClaimsOption(",".join(globs) if globs else None, tuple(dict.fromkeys(files)))


def closest_ids(pattern: str, ids, n: int = 3) -> list[str]:
    """The ``n`` ids closest to ``pattern`` (``difflib``), for "did you mean" messages."""
    ids = list(ids)
    return difflib.get_close_matches(pattern, ids, n=n, cutoff=0.0)


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
            module = import_claim_module(name)
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


def did_you_mean(pattern: str, claims) -> str:
    """"closest ids: a, b, c (`biasaudit list` shows every id; a claim file: --claims path/to/claims.py)"."""
    close = closest_ids(pattern, [c.id for c in claims])
    return (f"closest ids: {', '.join(close) or '(none)'} (`biasaudit list` shows every id; "
            "a claim file of your own: --claims path/to/claims.py)")


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
        raise InputError("claims", f"matches no registered claim{why}; {did_you_mean(pattern, all_claims(extra))}",
                         pattern)
    return chosen
