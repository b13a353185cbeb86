"""One audit per output folder: an exclusive, non-blocking ``flock`` on ``<out>/.audit.lock`` for the whole run.

Two audits writing one ``evidence.jsonl`` would each rewrite it from their own records, and one's records
would be lost. The second audit into a held folder stops before any work with ``out: is held by another
live audit (pid N since T)`` (exit 2). The kernel drops the lock when its holder dies (even ``kill -9``), so
a crashed audit never blocks the next one; ``--resume`` then continues from its evidence.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from biasaudit.plumbing import InputError

__all__ = ["LOCK_NAME", "hold_out_dir"]

LOCK_NAME = ".audit.lock"


@contextlib.contextmanager
def hold_out_dir(out: Path) -> Iterator[None]:
    """Hold ``out`` for this process, or raise :class:`InputError` naming the live holder."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: no lock
        yield
        return
    fh = open(Path(out) / LOCK_NAME, "a+", encoding="utf-8")
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "a process that did not say who it is"
            raise InputError("out", f"is held by another live audit ({holder}); wait for it to finish or choose "
                                    "another --out", str(out)) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} since {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M:%S UTC')}\n")
        fh.flush()
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
    finally:
        fh.close()
