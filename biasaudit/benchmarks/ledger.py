"""Benchmarks of the audit machinery: ledger + executor overhead, and 1 → 2 worker speed-up.

``audit.overhead``
    The cost the audit adds to a unit of work (record building, provenance, checksum, the atomic rewrite
    of ``evidence.jsonl`` with fsync, progress, the report) measured on no-op claims, whose check costs
    microseconds: overhead = audit wall time − the checks' own time, modelled as a start-up per audit plus
    a cost per unit (fitted from audits of 20 and 40 no-op claims), for the inline executor, a 2-process
    local pool (its start-up included) and a Dask ``LocalCluster`` (threads, excluding the cluster's
    start-up). Target: start-up + per-unit × units < 5 % of the quick tier's run time, taken
    from the quick-tier evidence in ``$BIASAUDIT_REPORT_DIR`` (default ``./biasaudit-report``) when there
    is some (the sum of its units' times), otherwise measured on the registered theory claims at ``ci``.

``audit.speedup``
    Wall time of the quick tier's theory claims (the sweeps of ``biasaudit check``) with 1 and 2 local
    workers, and the ratio. One repeat each (a run is minutes long); experiments are left out (each is a
    multi-minute training run that would dominate). ``--quick`` uses the first 6 claims.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import sympy as sp

from biasaudit.benchmarks import BenchCase, BenchResult, Target
from biasaudit.domain import Domain, Real
from biasaudit.ledger import Claim, Observation, Tolerance

__all__ = ["CASES", "CLAIMS"]

_MODULE = __name__
_N_NOOP = 40
_REPEATS = 3  # medians: one audit of no-op claims is 0.05–1.5 s and noisy on a shared machine
_x = sp.Symbol("x", positive=True)


def _noop_evaluate(params, predicted):
    return Observation(params["x"], abs(predicted - params["x"]), "identity")


def _noop_claim(i: int) -> Claim:
    return Claim(id=f"bench.noop.{i}", paper="sam", source="bench", title="a no-op claim",
                 hypotheses=(sp.Gt(_x, 0, evaluate=False),), statement=sp.Eq(_x, _x), predict=lambda p: p["x"],
                 evaluate=_noop_evaluate, tolerance=Tolerance("exact", 0.0, "identity"),
                 domain=Domain({"x": Real(0.1, 1.0)}), negative_control=lambda p, v: v * 1.01,
                 samples={"ci": 2, "thorough": 2}, controls=1)


# Not registered anywhere: the benchmark passes this module as an extra claim module.
CLAIMS = tuple(_noop_claim(i) for i in range(_N_NOOP))


def _cpu_seconds() -> float:
    """CPU time of this process and its reaped children (the pool's workers, once shut down)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _audit(out: Path, pattern: str, extra: tuple[str, ...] = (), cpu: list | None = None, **kw):
    from biasaudit.audit import AuditConfig, execute_audit

    config = AuditConfig(out=out, claims=pattern, figures=False, extra_modules=extra, **kw)
    start, start_cpu = time.perf_counter(), _cpu_seconds()
    result = execute_audit(config, quiet=True)
    if cpu is not None:
        cpu.append(_cpu_seconds() - start_cpu)
    return time.perf_counter() - start, result


def _checks_time(result) -> float:
    return sum(float(r.get("elapsed_s") or 0.0) for r in result.records)


def _quick_tier_time() -> tuple[float, int, str]:
    """(seconds of the quick tier's units, units, where the number came from)."""
    path = Path(os.environ.get("BIASAUDIT_REPORT_DIR", "biasaudit-report")) / "evidence.jsonl"
    if path.is_file():
        records = []
        for line in path.read_text().splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        records = [r for r in records if r.get("profile") == "ci"]
        if records:
            total = sum(float(r.get("elapsed_s") or 0.0) for r in records)
            return total, len(records), f"sum of unit times in {path} ({len(records)} quick-tier records)"
    from biasaudit.registry import all_claims

    theory = [c.id for c in all_claims() if c.kind == "theory"]
    if not theory:
        return float("nan"), 0, "no registered claims and no quick-tier evidence"
    with tempfile.TemporaryDirectory() as tmp:
        _, result = _audit(Path(tmp), ",".join(theory), workers=1)
    return _checks_time(result), len(theory), f"measured: {len(theory)} theory claims at profile ci, inline"


def _overhead_model(runs: list[tuple[int, float]]) -> tuple[float, float]:
    """(fixed seconds per audit, marginal seconds per unit) from (units, overhead) at two sizes."""
    (n1, o1), (n2, o2) = runs
    marginal = max(0.0, (o2 - o1) / (n2 - n1))
    return max(0.0, o2 - marginal * n2), marginal


def _overhead(quick: bool) -> BenchResult:
    res = BenchResult()
    extra = (_MODULE,)
    sizes = (_N_NOOP // 2, _N_NOOP)
    patterns = {n: ",".join(f"bench.noop.{i}" for i in range(n)) for n in sizes}
    models = {}
    with tempfile.TemporaryDirectory() as tmp:
        _audit(Path(tmp) / "warm", "bench.noop.*", extra, workers=1)  # imports, first write
        executors = [("inline", {"workers": 1}), ("pool2", {"workers": 2})]
        cluster = None
        if not quick:
            from distributed import LocalCluster

            cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                                   host="127.0.0.1", dashboard_address=None)
            executors.append(("dask", {"executor": "dask", "scheduler": cluster.scheduler_address}))
        try:
            for label, kw in executors:
                runs = []
                for n in sizes:
                    walls, overheads = [], []
                    for rep in range(_REPEATS):
                        wall, result = _audit(Path(tmp) / f"{label}-{n}-{rep}", patterns[n], extra, **kw)
                        walls.append(wall)
                        overheads.append(wall - _checks_time(result))
                    runs.append((n, float(np.median(overheads))))
                    res.timings[f"audit of {n} no-op claims, {label}"] = float(np.median(walls))
                models[label] = _overhead_model(runs)
        finally:
            if cluster is not None:
                cluster.close()
    total, n_units, source = _quick_tier_time()
    res.notes.append(f"quick-tier run time {total:.1f} s over {n_units} units ({source})")
    for label, (fixed, marginal) in models.items():
        res.timings[f"overhead per unit, {label}"] = marginal
        res.timings[f"overhead per audit (start-up), {label}"] = fixed
        if n_units and total == total and total > 0:
            fraction = 100.0 * (fixed + marginal * n_units) / total
            res.targets.append(Target(f"overhead/quick tier, {label}", fraction, 5.0, "<=", "%"))
    res.notes.append("overhead(N units) = start-up + N x per-unit, fitted from audits of "
                     f"{sizes[0]} and {sizes[1]} no-op claims (the pool pays its start-up once per audit)"
                     + ("; dask excludes the LocalCluster's own start-up" if not quick else ""))
    return res


def _speedup(quick: bool) -> BenchResult:
    from biasaudit.registry import all_claims

    res = BenchResult()
    theory = [c.id for c in all_claims() if c.kind == "theory"]
    if quick:
        theory = theory[:6]
    if not theory:
        res.notes.append("no registered theory claims: nothing to time")
        return res
    pattern = ",".join(theory)
    with tempfile.TemporaryDirectory() as tmp:
        _audit(Path(tmp) / "warm", theory[0], workers=1)  # numba caches, imports
        cpu: list[float] = []
        one, _ = _audit(Path(tmp) / "one", pattern, cpu=cpu, workers=1)
        two, _ = _audit(Path(tmp) / "two", pattern, cpu=cpu, workers=2)
    res.timings[f"{len(theory)} theory claims, 1 worker"] = one
    res.timings[f"{len(theory)} theory claims, 2 workers"] = two
    res.timings[f"{len(theory)} theory claims, 1 worker, CPU"] = cpu[0]
    res.timings[f"{len(theory)} theory claims, 2 workers, CPU"] = cpu[1]
    res.targets.append(Target("speed-up 1 -> 2 local workers", one / two, 1.5, ">=", "x"))
    res.targets.append(Target("cores used by the 2-worker run (CPU/wall)", cpu[1] / two, 1.5, ">=", "x"))
    res.notes.append("one repeat each; the 2-worker time includes starting 2 spawned processes. When the "
                     "second target is not met either, the other core was busy (a shared machine): the "
                     "speed-up is then bounded by the cores the system gave, not by the executor")
    return res


CASES = (
    BenchCase("audit.overhead", "ledger + executor overhead per unit vs the quick tier's run time", _overhead),
    BenchCase("audit.speedup", "quick tier theory claims: 1 vs 2 local workers", _speedup),
)
