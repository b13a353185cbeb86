"""Content-addressed keys for cached experiment runs, and a count of runs computed versus reused.

A run's key is the SHA-256 of three things, so that no hand-kept version constant decides when a cached
result is stale:

* its **config** (a JSON-able mapping, keys sorted);
* the **source of the code it executes**: every ``.py`` file of the named modules or packages (for the
  experiments: ``biasaudit.validation``, ``biasaudit.numerics`` and the claim module), path and bytes;
* the **versions of the libraries that matter** (``torch``, ``numpy``).

Editing any of those files, or upgrading torch, changes the key, so the next audit recomputes the run
instead of silently reusing a result the current code would not produce. A comment edit also changes it:
recomputing is the safe side of that trade.

Fingerprints are computed once per process (the code of a running process does not change under it);
:func:`clear_fingerprints` forgets them (tests that edit a source file).

:func:`count_run` is called by every cached run (``computed=True`` when it trained, ``False`` when it read
the cache); the audit resets the count before a unit and puts it into the unit's record, so the report can
say how many runs were computed and how many reused.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import platform
import importlib.util
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["code_fingerprint", "library_versions", "run_key", "clear_fingerprints", "count_run", "run_counts",
           "reset_run_counts", "AUDIT_STARTED_VARIABLE"]

LIBRARIES = ("torch", "numpy")


def _module_files(name: str) -> list[tuple[str, Path]]:
    """``(relative path, path)`` of the ``.py`` files of module or package ``name`` (a package: every file
    below its folder, relative to it)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"code_fingerprint: no module named {name!r}")
    if not spec.submodule_search_locations:
        return [(Path(spec.origin).name, Path(spec.origin))]
    files = []
    for folder in map(Path, spec.submodule_search_locations):
        files += [(p.relative_to(folder).as_posix(), p) for p in folder.rglob("*.py") if "__pycache__" not in p.parts]
    return sorted(files)


@functools.lru_cache(maxsize=None)
def code_fingerprint(modules: tuple[str, ...]) -> str:
    """SHA-256 over the (module-relative path, bytes) of every source file of ``modules``."""
    digest = hashlib.sha256()
    for name in sorted(set(modules)):
        for relative, path in _module_files(name):
            digest.update(f"{name}:{relative}\0".encode())
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


def clear_fingerprints() -> None:
    """Forget the memoized :func:`code_fingerprint` values, so the next key rereads the sources (tests that edit a
    source file in the same process)."""
    code_fingerprint.cache_clear()


@functools.lru_cache(maxsize=None)
def library_versions(names: tuple[str, ...] = LIBRARIES) -> dict[str, str | None]:
    """``{"python": version, name: version, ...}`` of the interpreter and the installed distributions ``names``
    (``None`` where one is not installed): the one place that reads versions (run keys, evidence records)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_key(config: Mapping, code: Iterable[str], *, libraries: tuple[str, ...] = LIBRARIES,
            length: int = 20) -> str:
    """The content address of a run: hex SHA-256 (first ``length`` digits) of config, code and libraries."""
    payload = {"config": config, "code": code_fingerprint(tuple(code)), "libraries": library_versions(libraries)}
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


# ------------------------------------------------------------------------------------------- run counts
_COUNTS = {"computed": 0, "reused": 0, "repeated": 0}
AUDIT_STARTED_VARIABLE = "BIASAUDIT_AUDIT_STARTED"  # the running audit's start (Unix time), set by the audit


def count_run(*, computed: bool, written_at: float | None = None) -> None:
    """Count one experiment run in this process: ``computed=True`` when it was trained; else it was read from the
    run cache, and ``written_at`` (the cache file's modification time) tells a run computed before the running
    audit (``reused``) from one this audit computed earlier (``repeated``: a second claim reading it)."""
    if computed:
        _COUNTS["computed"] += 1
        return
    try:
        started = float(os.environ.get(AUDIT_STARTED_VARIABLE, "inf"))
    except ValueError:
        started = float("inf")
    _COUNTS["repeated" if written_at is not None and written_at >= started else "reused"] += 1


def run_counts() -> dict[str, int]:
    """A copy of this process's run counts since the last :func:`reset_run_counts`: ``{"computed": n, "reused": m,
    "repeated": k}``."""
    return dict(_COUNTS)


def reset_run_counts() -> None:
    """Set the run counts to zero (the audit does so before each unit, then stores :func:`run_counts` in the unit's
    record)."""
    _COUNTS.update(computed=0, reused=0, repeated=0)
