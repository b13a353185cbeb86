"""Atomic file replacement, shared by the evidence store, the reports and the experiment caches."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write_text"]


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems do not fsync directories
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` atomically.

    A unique ``.<name>.*.tmp`` in the same directory, fsync, ``os.replace``, then fsync the directory: a reader
    sees the old file or the new one, never a mixture; on failure the old file stays and the temporary is
    removed.

    Parameters
    ----------
    path : Path
        The file (its folder is created if missing).
    text : str
        The new content, written as UTF-8.

    Returns
    -------
    None
        Once the file holds ``text``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from biasaudit.plumbing import atomic_write_text
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     atomic_write_text(pathlib.Path(tmp) / "a.txt", "hello")
    ...     (pathlib.Path(tmp) / "a.txt").read_text()
    'hello'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _fsync_dir(path.parent)
