"""Drop numba's on-disk caches of ``numerics/`` when any of its sources changed.

numba keys a cached function on its *own* file's timestamp only. When a kernel calls a function from
another module (``heatmap_reduction._A_batch_adaptive`` → ``l2_reduction._dopri_A``), or freezes another
module's arrays (every Runge–Kutta kernel reads ``tableau``), and only that other file changes, the caller's
cache still holds the old code compiled in: stale results, silently (seen in this project while editing). On import, :func:`guard` hashes every ``numerics/*.py``; if the hash differs from the
stamp left in ``numerics/__pycache__``, it deletes that directory's ``*.nbi``/``*.nbc`` files (everything
recompiles once) and writes the new stamp. Concurrent processes at worst delete each other's fresh cache
files, which only costs a recompile. With ``NUMBA_CACHE_DIR`` set numba keeps its files in
``<root>/numerics_<sha1 of this directory's path>``, and where the package folder is read-only, in numba's
user-wide cache under the same name; those directories are checked too. The package folder is found from
this file, so the guard follows the install: ``numerics/`` in a checkout (editable install),
``site-packages/biasaudit/numerics/`` in a wheel install.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from numba.misc.appdirs import AppDirs

__all__ = ["guard", "sources_digest", "package_digest", "STAMP_NAME"]

STAMP_NAME = "biasaudit-numerics-sources.sha256"
_PACKAGE = Path(__file__).resolve().parent
_LOADED_DIGEST: list = []  # the digest of numerics/ as this process imported it (set once by guard())


def sources_digest(package: Path = _PACKAGE) -> str:
    r"""Hex SHA-256 over the names and bytes of every ``*.py`` in ``package`` (sorted by name): the stamp kept beside
    numba's caches.

    Parameters
    ----------
    package : pathlib.Path
        The folder (default: ``numerics/`` itself).

    Returns
    -------
    str
        64 hex digits.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "kernel.py").write_text("x = 1\n")
    >>> before = sources_digest(folder)
    >>> _ = (folder / "kernel.py").write_text("x = 2\n")
    >>> len(before), before == sources_digest(folder)
    (64, False)
    """
    h = hashlib.sha256()
    for path in sorted(package.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def package_digest() -> str:
    """The digest of ``numerics/*.py`` as imported by this process (hashed once, at ``import numerics``).

    Returns
    -------
    str
        :func:`sources_digest` of ``numerics/`` at its first call in this process.

    Examples
    --------
    >>> package_digest() == package_digest() and len(package_digest()) == 64
    True
    """
    if not _LOADED_DIGEST:
        _LOADED_DIGEST.append(sources_digest())
    return _LOADED_DIGEST[0]


def _cache_dirs(package: Path) -> list[Path]:
    """Where numba may keep ``package``'s caches: beside the sources, under ``$NUMBA_CACHE_DIR``, and — for an
    install whose folder is read-only (a wheel in a system site-packages) — numba's user-wide cache."""
    subpath = f"{package.name}_{hashlib.sha1(str(package).encode()).hexdigest()}"  # numba's locator naming
    dirs = [package / "__pycache__"]
    custom = os.environ.get("NUMBA_CACHE_DIR")
    if custom:
        dirs.append(Path(custom) / subpath)
    user_wide = Path(AppDirs(appname="numba", appauthor=False).user_cache_dir) / subpath
    if user_wide.is_dir():
        dirs.append(user_wide)
    return dirs


def guard(package: Path = _PACKAGE) -> list[Path]:
    r"""Remove stale numba cache files of ``package``; returns the files removed.

    A cache folder whose stamp (:data:`STAMP_NAME`) differs from the digest of the sources loses its ``*.nbi`` and
    ``*.nbc`` files and gets the current stamp; a read-only folder is left alone.

    Parameters
    ----------
    package : pathlib.Path
        The folder of the numba-compiled sources (default: ``numerics/`` itself).

    Returns
    -------
    list of pathlib.Path
        The cache files removed (empty when every stamp matched).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "kernel.py").write_text("x = 1\n")
    >>> (folder / "__pycache__").mkdir()
    >>> _ = (folder / "__pycache__" / "kernel.f-1.py311.nbi").write_text("stale")
    >>> [p.name for p in guard(folder)], guard(folder)
    (['kernel.f-1.py311.nbi'], [])
    """
    try:
        digest = package_digest() if package == _PACKAGE else sources_digest(package)
    except OSError:
        return []
    removed = []
    for cache in _cache_dirs(package):
        stamp = cache / STAMP_NAME
        try:
            if stamp.is_file() and stamp.read_text().strip() == digest:
                continue
            if cache.is_dir():
                for path in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
                    try:
                        path.unlink()
                        removed.append(path)
                    except FileNotFoundError:
                        pass
            cache.mkdir(parents=True, exist_ok=True)
            stamp.write_text(digest + "\n")
        except OSError:  # read-only install: nothing to guard, numba cannot write there either
            continue
    return removed
