"""Progress of an audit on stderr: one bar for the run, one bar per running claim.

On a terminal: a tqdm bar for the whole run (units finished / total) and, below it, a bar per running
unit that counts its cases (references, samples, negative controls) when the executor sends case events
(inline and local pool; on Dask a unit's bar only appears when it finishes). Each finished unit also
prints one line ``[k/N] id  verdict  time``. Status lines of a running unit (a training run starting, a
wait for another process's lock) replace the unit bar's status field instead of printing between bars. When stderr is not a terminal (logs, CI) the bars are
off: those lines are printed, and every minute a line names the units still running.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["AuditProgress", "HEARTBEAT_S"]

HEARTBEAT_S = 60.0  # without bars, name the running units this often

_VERDICT_MARK = {"confirmed": "ok", "refuted": "REFUTED", "undecided": "UNDECIDED", "error": "ERROR",
                 "out-of-scope": "out-of-scope"}


class AuditProgress:
    """The progress of an audit of ``total`` units, written to ``stream`` (default: stderr).

    ``bars``: tqdm bars (default: when the stream is a terminal); otherwise one line per finished unit and a heartbeat.
    ``quiet`` prints nothing.
    """

    def __init__(self, total: int, stream: TextIO | None = None, bars: bool | None = None,
                 quiet: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.quiet = quiet
        isatty = getattr(self.stream, "isatty", lambda: False)()
        self.bars = (isatty if bars is None else bars) and not quiet
        self._unit_bars: dict[str, object] = {}
        self._started: dict[str, tuple[str, float]] = {}
        self._last_heartbeat = time.monotonic()
        self._overall = None
        if self.bars:
            from tqdm import tqdm

            self._tqdm = tqdm
            self._overall = tqdm(total=total, desc="audit", unit="unit", file=self.stream, position=0,
                                 dynamic_ncols=True, leave=True)

    def event(self, event: tuple) -> None:
        """Handle one event from an executor (see :mod:`biasaudit.audit.units`): ``("start", key, label, cases)``,
        ``("case", key)``, ``("end", key)``, ``("status", key, text)``, or ``("tick", "")`` from a waiting pool."""
        kind, key = event[0], event[1]
        if kind == "start":
            self._started[key] = (event[2], time.monotonic())
        elif kind == "end":
            self._started.pop(key, None)
        if kind == "status":
            self.status(key, event[2])
            return
        if not self.bars:
            self._heartbeat()
            return
        if kind == "start":
            label, total = event[2], event[3]
            self._close_bar(key)
            self._unit_bars[key] = self._tqdm(total=total, desc=f"  {label}", unit="case", file=self.stream,
                                              position=len(self._unit_bars) + 1, leave=False,
                                              dynamic_ncols=True)
        elif kind == "case" and key in self._unit_bars:
            bar = self._unit_bars[key]
            if bar.total is not None and bar.n >= bar.total:
                bar.total = bar.n + 1
            bar.update(1)
        elif kind == "end":
            self._close_bar(key)

    def status(self, key: str, text: str) -> None:
        """A running unit's status (a run starting, a wait for another process's lock): with bars, the
        unit bar's one status field (replaced, never printed between the bars); without, one line."""
        text = " ".join(str(text).split())
        if self.quiet:
            return
        bar = self._unit_bars.get(key)
        if bar is not None:
            bar.set_postfix_str(text[:80], refresh=True)
        elif not self.bars:
            label = self._started.get(key, (key, 0.0))[0]
            print(f"      {label}: {text}", file=self.stream, flush=True)

    def _heartbeat(self) -> None:
        """Without bars: every ``HEARTBEAT_S`` name the units still running (long experiments)."""
        now = time.monotonic()
        if self.quiet or not self._started or now - self._last_heartbeat < HEARTBEAT_S:
            return
        self._last_heartbeat = now
        running = ", ".join(f"{label} ({now - t0:.0f}s)" for label, t0 in self._started.values())
        self.note(f"      running: {running}")

    def _close_bar(self, key: str) -> None:
        bar = self._unit_bars.pop(key, None)
        if bar is not None:
            bar.close()

    def skipped(self, label: str, outcome: str) -> None:
        """Count a unit kept from the evidence by ``--resume`` and print its line."""
        self._line(f"{label}  {_VERDICT_MARK.get(outcome, outcome)}  (kept from evidence, --resume)")

    def finished(self, label: str, outcome: str, elapsed_s: float | None) -> None:
        """Count a finished unit and print its line, ``[k/N] label  verdict  time``."""
        took = f"{elapsed_s:.2f}s" if isinstance(elapsed_s, (int, float)) else "-"
        self._line(f"{label}  {_VERDICT_MARK.get(outcome, outcome)}  {took}")

    def note(self, text: str) -> None:
        """Print one line (above the bars, when they are shown); nothing when ``quiet``."""
        if self.quiet:
            return
        if self._overall is not None:
            self._overall.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def _line(self, text: str) -> None:
        self.done += 1
        self.note(f"[{self.done}/{self.total}] {text}")
        if self._overall is not None:
            self._overall.update(1)

    def close(self) -> None:
        """Close every bar: the units' and then the overall one."""
        for key in list(self._unit_bars):
            self._close_bar(key)
        if self._overall is not None:
            self._overall.close()
            self._overall = None
