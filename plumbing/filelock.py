"""An exclusive inter-process file lock (POSIX ``flock``), behind the cached-JSON helper
(:mod:`biasaudit.plumbing.jsoncache`).

Audit workers that start two claims needing the same training run wait for the first one and then read
its cached result, instead of training it twice on the same cores.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["exclusive"]


@contextlib.contextmanager
def exclusive(lock_path: Path, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold ``lock_path`` exclusively; call ``on_wait`` once if another process holds it."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: no lock, at worst duplicate work
        yield
        return
    with open(lock_path, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            if on_wait is not None:
                on_wait(f"waiting for another process holding {lock_path} ...")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
