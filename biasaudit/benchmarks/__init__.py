"""Benchmarks for ``biasaudit bench``: speed targets measured as ratios, side by side, in one run.

A module in :data:`BENCH_MODULES` defines ``CASES: tuple[BenchCase, ...]``. Each case's ``run(quick)``
returns a :class:`BenchResult`: median timings of the contenders and the :class:`Target` ratios the project
asks for. Timings are medians over repeats (the machines are noisy, 2 cores); a target is judged on the
ratio, never on an absolute time, unless the target is stated as an absolute bound.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from dataclasses import dataclass, field

__all__ = ["BenchCase", "BenchResult", "Target", "median_time", "timed_audit", "BENCH_MODULES", "all_cases"]

BENCH_MODULES: tuple[str, ...] = (
    "biasaudit.benchmarks.validation_sam",
    "biasaudit.benchmarks.sam",
    "biasaudit.benchmarks.ledger",
    "biasaudit.benchmarks.validation_eos",
    "biasaudit.benchmarks.eos",
    "biasaudit.benchmarks.mutation",
    "biasaudit.benchmarks.audit_scaleout",
    "biasaudit.benchmarks.certified",
)


@dataclass(frozen=True)
class Target:
    """``value`` must satisfy ``value >= bound`` (op '>=') or ``value <= bound`` (op '<=')."""

    name: str
    value: float
    bound: float
    op: str = ">="
    unit: str = "x"

    @property
    def met(self) -> bool:
        """Whether ``value`` is on the right side of ``bound`` (``op``)."""
        return self.value >= self.bound if self.op == ">=" else self.value <= self.bound

    def to_json(self) -> dict:
        """The target as JSON, with ``met``."""
        return {"name": self.name, "value": self.value, "bound": self.bound, "op": self.op,
                "unit": self.unit, "met": self.met}


@dataclass
class BenchResult:
    """What one case measured: the median ``timings`` (seconds per contender), the ``targets`` judged on them, and
    ``notes``."""

    timings: dict[str, float] = field(default_factory=dict)  # contender -> median seconds
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """The result as JSON (``timings_s``, ``targets``, ``notes``)."""
        return {"timings_s": self.timings, "targets": [t.to_json() for t in self.targets], "notes": self.notes}


@dataclass(frozen=True)
class BenchCase:
    """One benchmark: its ``name`` (matched by ``biasaudit bench --cases``), a ``description``, and ``run(quick)``
    returning a :class:`BenchResult`."""

    name: str
    description: str
    run: Callable[[bool], BenchResult]


def median_time(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs after ``warmup`` untimed runs (JIT compile)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def timed_audit(pattern: str, workdir: Path, name: str, **options) -> tuple[float, object]:
    """Wall time and result of ``execute_audit`` on the claims ``pattern``, with a fresh run cache.

    The cache is ``workdir/cache-<name>`` (``$BIASAUDIT_CACHE_DIR`` is restored afterwards), so every run is
    computed; ``options`` go to :class:`~biasaudit.audit.AuditConfig` (``figures=False`` unless given).
    """
    from biasaudit.audit import AuditConfig, execute_audit

    previous = os.environ.get("BIASAUDIT_CACHE_DIR")
    os.environ["BIASAUDIT_CACHE_DIR"] = str(workdir / f"cache-{name}")
    try:
        start = time.perf_counter()
        result = execute_audit(AuditConfig(out=workdir / name, claims=pattern, **{"figures": False, **options}),
                           quiet=True)
        return time.perf_counter() - start, result
    finally:
        if previous is None:
            os.environ.pop("BIASAUDIT_CACHE_DIR", None)
        else:
            os.environ["BIASAUDIT_CACHE_DIR"] = previous


def all_cases() -> list[BenchCase]:
    """The ``CASES`` of every module of :data:`BENCH_MODULES`, in that order."""
    import importlib

    cases: list[BenchCase] = []
    for name in BENCH_MODULES:
        cases.extend(importlib.import_module(name).CASES)
    return cases
