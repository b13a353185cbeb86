"""Benchmarks of sharpness on networks: eigsh HVP budget and accuracy, eigsh vs power iteration,
HVP cost against a gradient.

All on the small CNN of :mod:`biasaudit.validation.models` (``cnn``, width 16, ~20k parameters) with cross-entropy on
MNIST-5k images (256, quick: 96), float32, at its initialisation. The reference top eigenvalue (max|λ|) is
our own Lanczos with full reorthogonalisation (60 steps, quick: 45; the note gives its drift over the last
10 steps). Both at the initialisation and after 60 GD steps (where the top of the spectrum is less
separated, as along the sweeps). "Equal accuracy" is the accuracy eigsh actually reached.
"""

from __future__ import annotations

import math

import numpy as np

from biasaudit.benchmarks import BenchCase, BenchResult, Target, median_time

__all__ = ["CASES"]


def _cnn_problem(n: int):
    import torch

    from biasaudit.validation.device import setup_torch
    from biasaudit.validation.gd_trainer import make_problem

    setup_torch()
    try:
        from biasaudit.validation.data import load_dataset

        data = load_dataset("mnist5k", n_train=n, n_test=16, seed=0)
        X, y, Xt, yt = data.X_train, data.y_train, data.X_test, data.y_test
    except Exception:  # noqa: BLE001 - the benchmark measures cost, synthetic images are fine
        rng = np.random.default_rng(0)
        X, y = rng.random((n, 1, 28, 28)), rng.integers(0, 10, n)
        Xt, yt = X[:16], y[:16]
    problem = make_problem("cnn", "ce", X, y, Xt, yt, num_classes=10, dtype="float32", seed=0)
    return problem, torch


def _reference(f, theta, steps: int) -> tuple[float, float]:
    from biasaudit.validation.sharpness import lanczos_eigenvalues

    ritz = lanczos_eigenvalues(f, theta, steps, seed=7)
    ritz_short = lanczos_eigenvalues(f, theta, steps - 10, seed=7)
    top = lambda r: float(r[np.argmax(np.abs(r))])  # noqa: E731
    return top(ritz), abs(top(ritz) - top(ritz_short)) / abs(top(ritz))


def _eig_targets(f, theta, label: str, quick: bool, result: BenchResult) -> None:
    from biasaudit.validation.sharpness import power_iteration, top_eigenvalue

    ref, ref_drift = _reference(f, theta, 45 if quick else 60)
    est = top_eigenvalue(f, theta, "LM", tol=1e-3, seed=1)
    rel = abs(est.value - ref) / abs(ref)
    cap = 150 if quick else 300
    _, history = power_iteration(f, theta, cap, seed=1)
    goal = max(rel, 1e-12)  # equal accuracy: the accuracy eigsh actually reached
    power_err = np.abs(history - ref) / abs(ref)
    ok = np.nonzero(power_err <= goal)[0]
    power_hvps = int(ok[0]) + 1 if len(ok) else math.inf
    ok3 = np.nonzero(power_err <= 1e-3)[0]
    result.targets += [
        Target(f"{label}: eigsh HVPs to tol 1e-3 (max|lambda|)", float(est.n_hvp), 40, "<=", "HVPs"),
        Target(f"{label}: eigsh relative error vs Lanczos", rel, 1e-3, "<=", ""),
        Target(f"{label}: power HVPs / eigsh HVPs, equal accuracy",
               (power_hvps if math.isfinite(power_hvps) else cap) / est.n_hvp, 1.0, ">=", "x"),
    ]
    result.notes += [
        f"{label}: p={f.p}, reference max|lambda|={ref:.6g} (Lanczos drift over its last 10 steps {ref_drift:.1e}); "
        f"eigsh {est.n_hvp} HVPs -> rel err {rel:.1e}; power iteration needs "
        + (f"{power_hvps}" if math.isfinite(power_hvps) else f"> {cap} (ratio is a lower bound)")
        + f" HVPs for that accuracy, {int(ok3[0]) + 1 if len(ok3) else '> ' + str(cap)} for 1e-3; "
        f"after 30 HVPs it is {power_err[min(29, cap - 1)]:.1e} off"]


def _run_eig(quick: bool) -> BenchResult:
    from biasaudit.validation.gd_trainer import train_gd

    problem, _ = _cnn_problem(96 if quick else 256)
    f = problem.train_loss
    result = BenchResult()
    _eig_targets(f, problem.theta_init, "at init", quick, result)
    # after 60 full-batch GD steps the spectrum top is less separated: the case the sweeps meet
    trained = train_gd(problem, 0.1, eps=1e-9, max_steps=60, final_measures=False, keep_theta=True).theta
    _eig_targets(f, trained, "after 60 GD steps", quick, result)
    return result


EIGSH_HVPS = 12  # HVPs of one eigsh call at tol 1e-3 on this CNN (11-16 measured): the build is amortised over these


def _run_hvp_cost(quick: bool) -> BenchResult:
    from biasaudit.validation.sharpness import HessianAt, hvp

    problem, torch = _cnn_problem(96 if quick else 256)
    f, theta = problem.train_loss, problem.theta_init
    v = torch.randn_like(theta)
    repeats = 3 if quick else 7
    result = BenchResult()

    def eigsh_like():  # the operator as eigsh uses it: built at theta, then EIGSH_HVPS products
        H = HessianAt(f, theta)
        for _ in range(EIGSH_HVPS):
            H(v)

    result.timings = {
        "gradient (autograd)": median_time(lambda: f.value_and_grad(theta), repeats),
        "HVP fixed-point operator (per HVP, as in eigsh)": median_time(eigsh_like, repeats) / EIGSH_HVPS,
        "HVP forward-over-reverse (torch.func)": median_time(lambda: hvp(f, theta, v), repeats),
        "HVP double backward": median_time(lambda: hvp(f, theta, v, "double-backward"), repeats),
    }
    g = result.timings["gradient (autograd)"]
    result.targets = [
        Target("HVP (fixed-point operator, as used by eigsh) / gradient",
               result.timings["HVP fixed-point operator (per HVP, as in eigsh)"] / g, 3.0, "<=", "x"),
    ]
    result.notes.append(f"per-HVP cost of HessianAt as eigsh/Lanczos/power use it: its one-off gradient-graph build "
                        f"(create_graph) is amortised over {EIGSH_HVPS} HVPs, the HVPs of one eigsh call at tol 1e-3")
    result.notes.append(f"single HVP from scratch: forward-over-reverse "
                        f"{result.timings['HVP forward-over-reverse (torch.func)'] / g:.2f} x a gradient, "
                        f"double backward (the fallback) {result.timings['HVP double backward'] / g:.2f} x")
    result.notes.insert(0, f"p={f.p}, n={problem.X_train.shape[0]} images; torch.func adds a fixed ~5 ms per call, "
                    "which dominates on tiny nets (the FCN of the quick tier) but not on this CNN")
    return result


CASES = (
    BenchCase("eos.sharpness.top_eigenvalue_cnn",
              "small CNN: eigsh max|lambda| to 1e-3 within 40 HVPs; HVPs of power iteration / eigsh at equal accuracy",
              _run_eig),
    BenchCase("eos.sharpness.hvp_vs_gradient",
              "small CNN: one HVP of the eigsh operator (graph build amortised) costs at most 3 gradients",
              _run_hvp_cost),
)


# ---------------------------------------------------------------------------------------- gradient-flow proxy

def _gf_runs(config, contenders) -> tuple[dict, dict]:
    """s_GF and wall time of each (label, method, fraction) contender on ``config``'s problem (one run each:
    a proxy run is minutes, not milliseconds; the ratios are of runs measured side by side)."""
    import time

    from biasaudit.validation.device import setup_torch
    from biasaudit.validation.eos_data import _build_problem
    from biasaudit.validation.gf_proxy import gradient_flow_sharpness

    setup_torch()
    problem = _build_problem(config)
    s_gf, seconds = {}, {}
    for label, method, fraction in contenders:
        t0 = time.perf_counter()
        res = gradient_flow_sharpness(problem, config.eps, method=method, fraction=fraction,
                                      every=20 if method == "exp" else config.gf_every, seed=config.seed)
        seconds[label] = time.perf_counter() - t0
        s_gf[label] = res.s_gf if res.reached_eps else math.nan
    return s_gf, seconds


GF_CONTENDERS = (("gd h", "gd", 0.5), ("gd h/2", "gd", 0.25), ("exp h", "exp", 0.25), ("exp h/2", "exp", 0.125))


def _rel(a: float, b: float) -> float:
    return abs(a / b - 1) if math.isfinite(a) and math.isfinite(b) else math.inf


def _run_gf_fcn(quick: bool) -> BenchResult:
    """The FCN of the quick tier: each proxy against today's (gd, h = 0.5·2/S) at half its step."""
    import dataclasses

    from biasaudit.validation.eos_config import tier_config

    config = tier_config("quick", "mse")
    if quick:
        config = dataclasses.replace(config, n_train=100, eps=5e-2)
    s_gf, seconds = _gf_runs(config, GF_CONTENDERS)
    result = BenchResult(timings=seconds)
    ref = s_gf["gd h/2"]
    result.targets = [
        Target("|s_GF(gd, h) / s_GF(gd, h/2) - 1| (today's proxy)", _rel(s_gf["gd h"], ref), 0.01, "<=", ""),
        Target("|s_GF(exp, h) / s_GF(gd, h/2) - 1|", _rel(s_gf["exp h"], ref), 0.01, "<=", ""),
    ]
    result.notes.append("s_GF: " + ", ".join(f"{k} {v:.4g}" for k, v in s_gf.items())
                        + "; h = 0.5*2/S for gd, 0.25*2/lambda_(k+1) for exp (k = 10 classes)")
    return result


def _run_gf_cnn(quick: bool) -> BenchResult:
    """The CNN of the E2 quick tier: s_GF within 3 minutes, and its own half-step check within 2 %."""
    import dataclasses

    from biasaudit.validation.eos_config import arch_config

    config = arch_config("quick", "cnn")
    if quick:
        config = dataclasses.replace(config, eps=5e-2)
    s_gf, seconds = _gf_runs(config, GF_CONTENDERS)
    result = BenchResult(timings=seconds)
    result.targets = [
        Target("gd proxy wall time (s)", seconds["gd h"], 180.0, "<=", "s"),
        Target("|s_GF(gd, h) / s_GF(gd, h/2) - 1|", _rel(s_gf["gd h"], s_gf["gd h/2"]), 0.02, "<=", ""),
        Target("exp proxy wall time (s)", seconds["exp h"], 180.0, "<=", "s"),
        Target("|s_GF(exp, h) / s_GF(exp, h/2) - 1|", _rel(s_gf["exp h"], s_gf["exp h/2"]), 0.02, "<=", ""),
        Target("gd proxy time / exp proxy time", seconds["gd h"] / seconds["exp h"], 1.0, ">=", "x"),
    ]
    result.notes.append("s_GF: " + ", ".join(f"{k} {v:.4g}" for k, v in s_gf.items()))
    return result


def _run_gf_cnn28(quick: bool) -> BenchResult:
    """The 28x28 CNN of the old quick tier (width 16, n = 500, MSE, eps 1e-2, p = 76,778), whose explicit proxy
    did not finish in 15 minutes: the rkc proxy within 3 minutes, its half-step check (rtol/8: the local error
    is O(h³)) within 2 %, and the explicit proxy given a quarter of rkc's gradients, side by side: the ratio of
    the flow time each reaches per gradient is the speed-up in gradients, a lower bound, since gd's steps
    shrink as S grows and its first quarter is its cheapest. Two threads (the target is "on 2 cores"), or
    ``$BIASAUDIT_THREADS``."""
    import os
    import time

    from biasaudit.validation.device import setup_torch
    from biasaudit.validation.eos_config import SweepConfig
    from biasaudit.validation.eos_data import _build_problem
    from biasaudit.validation.gf_proxy import RKC_RTOL, gradient_flow_sharpness

    setup_torch(None if os.environ.get("BIASAUDIT_THREADS") else 2)
    config = SweepConfig(arch="cnn", model_kwargs=(("width", 16),), eps=4e-2 if quick else 1e-2)
    problem = _build_problem(config)
    runs, seconds = {}, {}
    for label, kwargs in (("rkc", {"method": "rkc", "rtol": RKC_RTOL}),
                          ("rkc rtol/8", {"method": "rkc", "rtol": RKC_RTOL / 8})):
        t0 = time.perf_counter()
        runs[label] = gradient_flow_sharpness(problem, config.eps, every=config.gf_every, seed=config.seed, **kwargs)
        seconds[label] = time.perf_counter() - t0
    rkc = runs["rkc"]
    t0 = time.perf_counter()
    gd = gradient_flow_sharpness(problem, config.eps, method="gd", fraction=0.5, every=config.gf_every,
                                 max_steps=max(rkc.n_grad // 4, 1), seed=config.seed)
    seconds["gd, a quarter of rkc's gradients"] = time.perf_counter() - t0
    reached = {k: r.s_gf if r.reached_eps else math.nan for k, r in runs.items()}
    t_gd = gd.path[-1]["t"]
    result = BenchResult(timings=seconds)
    result.targets = [
        Target("rkc proxy wall time (s)", seconds["rkc"], 180.0, "<=", "s"),
        Target("|s_GF(rkc) / s_GF(rkc, rtol/8) - 1|", _rel(reached["rkc"], reached["rkc rtol/8"]), 0.02, "<=", ""),
        Target("flow time per gradient, rkc / gd", (rkc.path[-1]["t"] / rkc.n_grad) / (t_gd / gd.n_grad)
               if t_gd > 0 else math.inf, 1.0, ">=", "x"),
    ]
    result.notes.append(f"p={problem.train_loss.p}; s_GF: rkc {reached['rkc']:.4g} ({rkc.n_grad} gradients, "
                        f"{rkc.n_hvp} HVPs, {rkc.steps} steps, {rkc.rejected} rejected), rtol/8 "
                        f"{reached['rkc rtol/8']:.4g} ({runs['rkc rtol/8'].n_grad} gradients); gd after "
                        f"{gd.n_grad} gradients: flow time {t_gd:.3g} of {rkc.path[-1]['t']:.3g}, loss "
                        f"{gd.path[-1]['loss']:.3g}, S {gd.path[-1]['S']:.4g}")
    return result


CASES = CASES + (
    BenchCase("eos.gf_proxy.cnn28",
              "28x28 CNN (p = 76,778): s_GF by the rkc proxy in <= 3 min on 2 cores, half-step check within 2 %",
              _run_gf_cnn28),
    BenchCase("eos.gf_proxy.fcn",
              "quick FCN: s_GF of each gradient-flow proxy within 1 % of today's proxy (gd) at half its step",
              _run_gf_fcn),
    BenchCase("eos.gf_proxy.cnn",
              "E2's quick CNN: s_GF in <= 3 min on 2 cores, its own half-step check within 2 %; gd against exp",
              _run_gf_cnn),
)


# ------------------------------------------------------------------------------------ the network central flow

def _run_central_flow_fcn(quick: bool) -> BenchResult:
    """The FCN of eos.torch.central_flow.fcn (seed 0, eta = 1.5 eta_c): the central flow over the path of a GD run
    against that GD run (gradients only, no sharpness readings), as a ratio of wall times (target <= 5)."""
    import dataclasses
    import time

    from biasaudit.claims.eos.torch.central_flow import FLOW_SETTINGS
    from biasaudit.validation.central_flow import flow_path
    from biasaudit.validation.device import setup_torch
    from biasaudit.validation.eos_config import CENTRAL_FLOW_FCN
    from biasaudit.validation.eos_data import _build_problem
    from biasaudit.validation.gf_proxy import gradient_flow_sharpness

    setup_torch()
    config = dataclasses.replace(CENTRAL_FLOW_FCN, seed=0)
    problem = _build_problem(config)
    gf = gradient_flow_sharpness(problem, config.eps, every=config.gf_every)
    eta, t_end = 1.5 * gf.eta_c, float(gf.path[-1]["t"])
    if quick:
        t_end /= 2
    f = problem.train_loss
    steps = int(round(t_end / eta))

    def gd():
        theta = problem.theta_init.clone()
        for _ in range(steps):
            theta = theta - eta * f.grad(theta)

    t_gd = median_time(gd, repeats=3)
    flow_path(problem, eta, 5 * eta, **FLOW_SETTINGS["fcn"])  # warm-up: torch's first batched back-propagation
    t0 = time.perf_counter()
    flow = flow_path(problem, eta, t_end, **FLOW_SETTINGS["fcn"])
    t_flow = time.perf_counter() - t0
    return BenchResult(
        timings={f"GD, {steps} steps": t_gd, f"central flow over t = {t_end:.0f}": t_flow},
        targets=[Target("central flow / GD over the same path", t_flow / t_gd, 5.0, "<=", "x")],
        notes=[f"p = {f.p}; eta = 1.5 eta_c = {eta:.4g}; {len(flow.t)} flow steps, {flow.n_hvp} HVPs and "
               f"{flow.n_grad} gradient graphs; settings {FLOW_SETTINGS['fcn']}; up to {int(flow.n_edge.max())} "
               f"eigenvalues at the edge"])


CASES = CASES + (
    BenchCase("eos.central_flow.fcn",
              "the FCN of eos.torch.central_flow.fcn: the central flow over a GD run's path costs <= 5x that run",
              _run_central_flow_fcn),
)


def _run_seed_sweeps_fcn(quick: bool) -> BenchResult:
    """The cost of E2's seed study on the quick FCN: the sweeps of its 3 init seeds (each its own data, init,
    gradient-flow proxy and grid of 9 step sizes) against one seed's sweep, the single-seed design the seed studies
    replaced, for the same verdicts. Fresh run directories, so nothing is read from the cache; ``quick``: n = 200
    and the grid's coarse points only."""
    import dataclasses
    import tempfile
    import time

    from biasaudit.validation.device import setup_torch
    from biasaudit.validation.eos_config import e2_seed_configs
    from biasaudit.validation.eos_runs import run_sweep

    setup_torch()
    configs = e2_seed_configs("quick", "fcn", "mse")
    if quick:
        configs = [dataclasses.replace(c, n_train=200, fine=()) for c in configs]
    seconds = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, config in enumerate(configs):
            t0 = time.perf_counter()
            run_sweep(config, f"{tmp}/seed{i}")
            seconds.append(time.perf_counter() - t0)
    one, all_seeds = seconds[0], sum(seconds)
    return BenchResult(
        timings={"one seed's sweep (seed 0)": one, f"{len(configs)} seeds' sweeps": all_seeds},
        targets=[Target(f"{len(configs)} seeds / one seed", all_seeds / one, 1.5, "<=", "x")],
        notes=[f"per seed {', '.join(f'{s:.1f}' for s in seconds)} s; {len(configs[0].multiples())} step sizes per "
               "seed; nothing is shared between seeds (each has its own proxy and eta_c), so the ratio is about the "
               "number of seeds: a search that placed fewer step sizes per seed would still need the 7 the seed "
               "statistics read (0.75 eta_c for the null control, 0.93-0.97 for the plateau, 1.03-1.07 for the "
               "kink, 1.07-2 for the tracking; E3 and E5 read all of them), which by the per-run times costs about "
               "2.4x one seed's 9, not 1.5x"])


CASES = CASES + (
    BenchCase("eos.seed_sweeps.fcn",
              "E2's FCN seed study: 3 seeds' sweeps cost <= 1.5x one seed's (the single-seed design)",
              _run_seed_sweeps_fcn),
)
