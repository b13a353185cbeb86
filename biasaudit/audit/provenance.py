"""Provenance stamped on every evidence record: the code's git commit and the library versions.

The commit is looked up once per audit (in the submitting process) with ``git rev-parse HEAD`` in the
directory that holds the ``biasaudit`` package. Where there is no git (an installed wheel, a worker
without the checkout) it is recorded as ``None``, never guessed.
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path

__all__ = ["code_version", "record_versions"]

# Libraries whose versions can change a number in a record (the ledger records the core ones already).
_EXTRA_LIBRARIES = ("torch", "matplotlib", "dask", "distributed")


@cache
def code_version() -> dict:
    """``{"biasaudit": version, "git_commit": sha or None, "git_dirty": bool or None}``."""
    import biasaudit

    root = Path(biasaudit.__file__).resolve().parent.parent
    commit = dirty = None
    try:
        run = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5, check=False)
        if run.returncode == 0:
            commit = run.stdout.strip() or None
            status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=5, check=False)
            dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        pass
    return {"biasaudit": biasaudit.__version__, "git_commit": commit, "git_dirty": dirty}


def record_versions() -> dict:
    """The versions every audit record carries: the ledger's (python, numpy, numba, sympy, mpmath, scipy) plus
    torch, matplotlib and dask (:func:`biasaudit.plumbing.runcache.library_versions`)."""
    from biasaudit.ledger import EVIDENCE_LIBRARIES
    from biasaudit.plumbing.runcache import library_versions as versions

    return versions(EVIDENCE_LIBRARIES + _EXTRA_LIBRARIES)
