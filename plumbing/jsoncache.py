"""One cached-JSON helper: take a file lock, read the JSON if it holds the wanted key, else compute it and
write it atomically. Behind every cached experiment run (the EoS sweeps' pieces, the SAM training runs).

:func:`cached_json` is the whole protocol::

    with exclusive(".<name>.lock"):                 # one process per file; a second one waits, then reads
        data = read(path)                           # missing, unreadable or damaged: None
        if data["key"] == key: count reused, return data
        text = json.dumps(encode({"key": key, **compute()}))
        atomic write of text                        # temp file + rename: never a partial file
        count computed, return json.loads(text)    # as a later read would see it

Every call is counted as one run computed or reused (:func:`biasaudit.plumbing.runcache.count_run`), so
the audit can say how many runs it trained and how many it found in the cache.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from biasaudit.plumbing.atomicio import atomic_write_text
from biasaudit.plumbing.filelock import exclusive
from biasaudit.plumbing.runcache import count_run
from biasaudit.plumbing.status import status

__all__ = ["cached_json", "read_json", "lock_path"]


def lock_path(path: Path) -> Path:
    """The lock file of ``path``: ``.<name>.lock`` beside it (hidden, so a glob of ``*.json`` skips it)."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def read_json(path: Path) -> Any:
    """The JSON value in ``path``, or None when the file is missing, unreadable or not valid JSON."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None


def cached_json(path: Path, compute: Callable[[], dict], *, key: str,
                encode: Callable[[dict], Any] | None = None,
                on_wait: Callable[[str], None] | None = None) -> dict:
    """The JSON object at ``path`` if its ``"key"`` field equals ``key``, else ``{"key": key, **compute()}``,
    written there atomically and returned.

    One process at a time per file (:func:`biasaudit.plumbing.filelock.exclusive` on :func:`lock_path`): a
    second caller waits (``on_wait`` is told once; default :func:`biasaudit.plumbing.status.status`), then
    reads what the first one wrote. A file holding another key, or damaged, is recomputed and replaced.
    ``encode`` turns the record into what ``json.dumps`` writes (e.g. :func:`~biasaudit.plumbing.jsonable`);
    the record is returned as written (its JSON round trip: lists, not tuples; ``'nan'`` where ``encode`` writes
    it so), so a run computed in this process reads exactly like the same run read from the cache. A write that
    fails (a read-only cache) costs only resumability: the record is returned and a status line says so. Counted: reused or computed
    (:func:`~biasaudit.plumbing.runcache.count_run`). If ``compute`` raises, nothing is written.
    """
    path = Path(path)
    with exclusive(lock_path(path), status if on_wait is None else on_wait):
        data = read_json(path)
        if isinstance(data, dict) and data.get("key") == key:
            count_run(computed=False, written_at=_mtime(path))
            return data
        data = {"key": key, **compute()}
        text = json.dumps(data if encode is None else encode(data))
        data = json.loads(text)
        try:
            atomic_write_text(path, text)
        except OSError as exc:
            status(f"could not store {path} ({exc.strerror or exc}); the run will be recomputed next time")
        count_run(computed=True)
        return data
