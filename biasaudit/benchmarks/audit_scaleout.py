"""Scale-out of the audit's experiments: the quick-tier experiment claims on 1 and 2 workers.

``audit.scaleout``
    The experiment claims (``eos.torch.e*``, ``eos.torch.ce_tracking`` and the trained-CNN ``sam.torch.*``;
    ``--quick``: ``eos.torch.e1_phase_transition`` alone, one sweep) audited three times, side by side, each
    with a fresh private run cache so every run is computed: the local executor with 1 worker (inline), with
    2 worker processes, and a Dask ``LocalCluster`` of 2 worker processes. The experiments' runs are run units
    (a sweep's η runs, a grid's seeds), so 2 workers can train two at once. Reported: the wall times, the
    speed-ups 1 → 2 workers (2 cores here: at most 2×), and that the three gave the same verdicts.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from biasaudit.benchmarks import BenchCase, BenchResult, Target, timed_audit

__all__ = ["CASES"]

FULL = "eos.torch.e1_phase_transition,eos.torch.ce_tracking,eos.torch.e2_*,eos.torch.e3_*,eos.torch.e4_*," \
       "eos.torch.e5_*,sam.torch.minor_mass_*,sam.torch.synthetic_*"
QUICK = "eos.torch.e1_phase_transition"
MIN_SPEEDUP = 1.2  # 2 workers on 2 cores: a real gain, below the ideal 2× (torch already uses both cores inline)


def _run(quick: bool) -> BenchResult:
    from distributed import LocalCluster

    pattern = QUICK if quick else FULL
    out = BenchResult()
    with tempfile.TemporaryDirectory(prefix="biasaudit-scaleout-") as tmp:
        workdir = Path(tmp)
        one_s, one = timed_audit(pattern, workdir, "local-1", workers=1)
        two_s, two = timed_audit(pattern, workdir, "local-2", workers=2)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, protocol="tcp", host="127.0.0.1",
                          dashboard_address=None) as cluster:
            dask_s, dask = timed_audit(pattern, workdir, "dask-2", executor="dask",
                                       scheduler=cluster.scheduler_address)
    out.timings["local, 1 worker"] = one_s
    out.timings["local, 2 workers"] = two_s
    out.timings["dask LocalCluster, 2 workers"] = dask_s
    out.targets.append(Target("speed-up 1 -> 2 local workers", one_s / two_s, MIN_SPEEDUP))
    out.targets.append(Target("speed-up 1 -> 2 Dask workers", one_s / dask_s, MIN_SPEEDUP))
    verdicts = [{r["claim_id"]: r["verdict"] for r in res.records} for res in (one, two, dask)]
    out.targets.append(Target("executors with the 1-worker verdicts (of 2)",
                              sum(v == verdicts[0] for v in verdicts[1:]), 2, ">=", "count"))
    out.notes.append(f"{len(one.records)} experiment claims, {one.run_units} run units; runs computed "
                     f"{one.runs_computed}/{two.runs_computed}/{dask.runs_computed} (1 worker / 2 / dask)")
    out.notes.append("verdicts (1 worker): " + ", ".join(f"{k} {v}" for k, v in verdicts[0].items()))
    return out


CASES = (BenchCase("audit.scaleout", "quick-tier experiment claims as run units on 1 and 2 workers (local, Dask)",
                   _run),)
