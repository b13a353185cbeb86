"""Benchmarks of paper 2's toy model: the GD sweep (the numba kernel against the same GD vectorized over η in
numpy) and the central flow (the numba kernel against the solve_ivp reference).

Case ``eos.gd_sweep``: d = 10, x = linspace(0.5, 2, 10), y = 1, w0 = 0.05·1, 1000 step sizes in
[0.2, 1.5]·η_c (flow-aligned and EoS runs), 1e5 steps each: the convergence test is disabled (tol = 1e-300)
so that every run does the full count and the timing measures the per-step throughput, not how soon
runs stop (``--quick``: 200 step sizes, 2e4 steps). The numpy reference is timed on the first 2000 steps of the
same sweep (``--quick``: 500) and both are compared per executed (η, step) pair: a run that stops early
costs nothing in either. One step needs 6d + 2 = 62 flops (r: d multiply-multiply-add; update: d
multiply-subtract-multiply; a = 4cηr) plus the finiteness/convergence tests.
"""

from __future__ import annotations

import os

import numpy as np

from biasaudit.benchmarks import BenchCase, BenchResult, Target, median_time

__all__ = ["CASES"]

D = 10
TOL = 1e-300  # never 'converged': every run does max_steps steps (throughput measurement)


def _problem(quick: bool):
    from biasaudit.theory.eos_flow import eos_regimes

    x = np.linspace(0.5, 2.0, D)
    y, w0 = 1.0, np.full(D, 0.05)
    reg = eos_regimes(x, y, w0)
    n = 200 if quick else 1000
    eta = np.linspace(0.2 * reg.eta_c, 1.5 * reg.eta_c, n)
    return x, y, w0, eta


def run_gd_sweep(quick: bool) -> BenchResult:
    from biasaudit.numerics.eos_gd import gd_sweep, gd_sweep_numpy

    x, y, w0, eta = _problem(quick)
    max_steps = 20_000 if quick else 100_000
    np_steps = 500 if quick else 2000
    out = {}

    def numba_run():
        out["numba"] = gd_sweep(x, y, w0, eta, max_steps=max_steps, tol=TOL)

    def numpy_run():
        out["numpy"] = gd_sweep_numpy(x, y, w0, eta, max_steps=np_steps, tol=TOL)

    t_numba = median_time(numba_run, repeats=3)
    t_numpy = median_time(numpy_run, repeats=5, warmup=1)
    pairs_numba = int(out["numba"].steps.sum() + eta.size)
    pairs_numpy = int(out["numpy"].steps.sum() + eta.size)
    ns_numba = t_numba / pairs_numba * 1e9
    ns_numpy = t_numpy / pairs_numpy * 1e9
    flops = 6 * D + 2
    counts = out["numba"].counts()
    res = BenchResult(
        timings={f"numba gd_sweep ({eta.size} eta, <= {max_steps} steps)": t_numba,
                 f"numpy gd_sweep_numpy ({eta.size} eta, <= {np_steps} steps)": t_numpy},
        targets=[Target("numba speed-up per (eta, step) over numpy", ns_numpy / ns_numba, 20.0, ">=", "x")],
        notes=[
            f"numba: {pairs_numba:.3g} (eta, step) pairs, {ns_numba:.2f} ns each = "
            f"{flops / ns_numba:.2f} GFLOP/s for the {flops} flops of one step (d = {D}); "
            f"threads: {os.environ.get('NUMBA_NUM_THREADS', 'default')}",
            f"numpy: {pairs_numpy:.3g} pairs on the first {np_steps} steps, {ns_numpy:.1f} ns each",
            f"outcomes of the numba sweep: {counts}",
        ],
    )
    return res


CF_PILOT = ((0.7, 1.3, 2.1), 1.5, (0.05, 0.05, 0.05))  # the toy of the central-flow claims, eta_c = 0.16381


def run_central_flow(quick: bool) -> BenchResult:
    """Case ``eos.central_flow``: the pilot toy, one eta = 1.25 eta_c (after compilation; target <= 50 ms) and the
    200-eta curve on (eta_c, 2 eta_c] (target <= 5 s), against the solve_ivp reference at the same eta (ratio;
    ``--quick``: the reference on 10 of the 200 eta, scaled)."""
    from biasaudit.numerics.eos_central_flow import central_flow, central_flow_curve
    from biasaudit.numerics.eos_central_flow_ivp import central_flow_ivp
    from biasaudit.theory.eos_flow import eos_regimes

    x, y, w0 = CF_PILOT
    eta_c = eos_regimes(x, y, w0).eta_c
    etas = np.linspace(1.0, 2.0, 201)[1:] * eta_c
    central_flow(x, y, w0, 1.25 * eta_c)  # compile (cached on disk after the first run)
    t_one = median_time(lambda: central_flow(x, y, w0, 1.25 * eta_c), repeats=7)
    t_curve = median_time(lambda: central_flow_curve(x, y, w0, etas), repeats=3)
    ref_etas = etas[:: 20] if quick else etas
    t_ref_part = median_time(lambda: [central_flow_ivp(x, y, w0, e) for e in ref_etas], repeats=1, warmup=0)
    t_ref = t_ref_part * etas.size / ref_etas.size
    t_ref_one = median_time(lambda: central_flow_ivp(x, y, w0, 1.25 * eta_c), repeats=3, warmup=0)
    flows = central_flow_curve(x, y, w0, ref_etas)
    worst = max(float(np.linalg.norm(f.beta - central_flow_ivp(x, y, w0, f.eta).beta) / np.linalg.norm(f.beta))
                for f in flows[:5])
    return BenchResult(
        timings={"numba central_flow, one eta": t_one, "numba central_flow_curve, 200 eta": t_curve,
                 "solve_ivp reference, one eta": t_ref_one,
                 f"solve_ivp reference, 200 eta{' (10 timed, scaled)' if quick else ''}": t_ref},
        targets=[Target("one eta after compilation", t_one * 1e3, 50.0, "<=", "ms"),
                 Target("200-eta curve", t_curve, 5.0, "<=", "s"),
                 Target("speed-up of the kernel over the solve_ivp reference (200 eta)", t_ref / t_curve, 1.0, ">=",
                        "x")],
        notes=[f"eta_c = {eta_c:.6g}; kernel vs reference endpoint, worst relative difference on 5 eta: {worst:.2e}"],
    )


CASES = (BenchCase("eos.gd_sweep", "GD on the toy model, 1000 eta x 1e5 steps, d = 10: numba vs numpy",
                   run_gd_sweep),
         BenchCase("eos.central_flow", "central flow of the toy model: one eta, the 200-eta curve, and the "
                   "solve_ivp reference", run_central_flow))
