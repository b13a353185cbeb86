"""One-line status messages from long work (a training run starting, a wait for another process's lock).

Lower layers call :func:`status`; whoever drives the work decides where it goes with :func:`set_status_sink`.
The audit installs a sink that turns each message into a ``("status", unit, text)`` progress event, shown as
the running unit's one status line (not as text printed through the progress bars). Without a sink the
message goes to stderr, one line each.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

__all__ = ["status", "set_status_sink"]

_sink: Callable[[str], None] | None = None


def set_status_sink(sink: Callable[[str], None] | None) -> None:
    """Install (or remove, with ``None``) where :func:`status` messages go in this process."""
    global _sink
    _sink = sink


def status(text: str) -> None:
    """Send one status line to the installed sink, or to stderr when there is none; a sink that raises is ignored (a
    status line must never break the work)."""
    if _sink is None:
        print(text, file=sys.stderr, flush=True)
        return
    try:
        _sink(text)
    except Exception:  # noqa: BLE001 - a status line must never break the work
        pass
