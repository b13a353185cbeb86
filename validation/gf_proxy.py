"""s_GF, the largest sharpness along the gradient-flow path up to the loss threshold eps, and η_c = 2/s_GF.

Gradient flow θ' = −∇L(θ) is followed by a proxy from the same fixed initialisation as the sweep:

* ``method="gd"`` (default, the quick tier): GD with the adaptive step h = c · 2/S, S re-measured
  every ``every`` steps (c = 0.5: half the stability step). GD with h·S ≤ 1 is monotone and stays close to
  the flow; the error in S along the path is O(h).
* ``method="rk4"``: classical RK4 (:data:`biasaudit.numerics.tableau.RK4`) with the same adaptive step
  (4 gradients per step; more faithful, slower).
* ``method="exp"``: exponential Euler on the top of the spectrum. With the k algebraically largest eigenpairs
  (λ_i, v_i) of H = ∇²L (``deflate`` = k, default the number of classes: MSE and CE Hessians of a C-class
  network have about C outlier eigenvalues above a bulk) and P = Σ v_i v_iᵀ,

      θ⁺ = θ − Σ_i (1 − e^{−hλ_i})/λ_i · v_i v_iᵀ ∇L − h (I − P) ∇L,   h = c · 2/λ_{k+1},

  exact flow along the top directions for a locally quadratic L, explicit Euler on the rest. The step is
  capped by the bulk edge λ_{k+1} instead of S = λ_1, so on a sharpening path (S ≫ λ_{k+1}) it takes
  S/λ_{k+1} times fewer steps. The block is refreshed (LOBPCG, warm-started) at every sharpness measurement;
  a stale block shows up as a loss rise, which the guard below undoes.
* ``method="rkc"``: second-order Runge–Kutta–Chebyshev (:mod:`biasaudit.validation.rkc`), explicit with s
  stages and a stability interval ≈ 0.65 s², so its step h is set by accuracy (embedded error estimate,
  ‖est‖ ≤ ``rtol``·‖θ‖) and not by 2/S; s follows from a bound ρ = ``RHO_SAFETY``·λ̂_1 re-estimated at every
  step by one warm-started finite-difference power iteration (one gradient). On a sharpening path the flow then costs
  ~ T·√(S/h) gradients instead of ~ T·S. Near each threshold of ``eps_levels`` the step is shortened so
  that L lands at most ``LANDING`` below it (the first-order prediction L − h‖∇L‖² is aimed there), so S is
  not read at a point far past the threshold. Because the power estimates follow S at every step, a peak of
  S between two eigsh measurements (cross-entropy) is caught: when the estimate has fallen ``PEAK_DROP``
  below its running maximum, eigsh measures S at the point of that maximum. "Half the step" for this
  method is ``rtol``/8 (the local error is O(h³)).

s_GF = max over the measured points of S = max|λ(∇²L)| (eigsh, warm-started). The sharpness is measured at
least every ``every`` steps, whenever the loss first falls below each level of ``eps_levels`` (for the
sensitivity report) and at the end, so a peak between two measurements can be missed: with
cross-entropy (sharpness peaks at moderate loss) use a small ``every``. A step that raises the loss is
undone and retried with a re-measured S (and at least half the step): the sharpness can grow several-fold
between two measurements early in training, and an unguarded proxy would then catapult instead of flowing.
Likewise a measurement that finds h·S > 2 (:data:`STABLE_HS`) for the step h in force shows that the segment since
the last measurement crossed GD's stability edge while the loss still fell: the segment is redone from the last
measured point with the step the new S allows, and that S (marked ``overshoot`` in the path) is not a flow value.

Sensitivity to eps: the report gives s_GF(ε') for ε' ∈ {4ε, 2ε, ε} (the running max up to the first time
L < ε'), and the relative change of η_c between 2ε and ε.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from biasaudit.numerics.tableau import RK4, explicit_rk_step
from biasaudit.plumbing import InputError, choice, positive_int, positive_scalar
from biasaudit.validation.gd_trainer import Problem
from biasaudit.validation.sharpness import top_eigenpairs, top_eigenvalue

__all__ = ["GFResult", "gradient_flow_sharpness", "exp_euler_step", "eps_levels", "eps_sensitivity"]

METHODS = ("gd", "rk4", "exp", "rkc")
MAX_REJECTIONS = 1000  # undone steps before the proxy gives up (reached_eps is then False)
# A segment whose step h met a sharpness S with h·S above this left gradient flow: GD is unstable along the top
# direction there (h·S > 2), and its S is a catapult's, not the flow's (on the theory model, re-measuring every
# 5 steps read s_GF 23 % high on 2 of 3 seeds: h·S = 2.37 at the overshoot). The segment is redone.
STABLE_HS = 2.0
RKC_RTOL = 5e-3  # rkc: local error ≤ 0.5 % of ‖θ‖ per step (at 1e-2 the 28x28 CNN missed its half-step check: 2.06 %)
RHO_SAFETY = 1.3  # rkc: ρ = 1.3 λ̂_1; on the 28x28 CNN S grew by up to 30 % within one accepted step
LANDING = 5e-3  # rkc: aim each loss threshold's crossing at most 0.5 % below it (S moves ~0.7x as fast as L there)
WARM_NCV = 6  # rkc: Lanczos basis of eigsh started from the power iterate
PEAK_DROP = 0.02  # rkc: an estimate 2 % under its running max marks a passed peak of S (measured by eigsh)


@dataclass
class GFResult:
    """The gradient-flow proxy of one sweep (:func:`gradient_flow_sharpness`).

    ``s_gf`` the largest sharpness measured along the path and ``eta_c`` = 2/s_gf; ``eps`` the loss threshold and
    ``reached_eps`` whether the loss fell below it, after ``steps`` steps; ``path`` the measurements; ``sensitivity``
    s_gf and η_c at each level of :func:`eps_levels`; ``all_converged`` whether every eigensolve converged; ``method``,
    ``fraction`` (the step as a fraction of 2/S) and ``seconds``; then the counters (rejected steps, deflated
    eigenpairs, ``rtol``, gradients, HVPs).
    """

    s_gf: float
    eta_c: float
    eps: float
    reached_eps: bool
    steps: int
    path: list  # [{"step", "t", "loss", "S", "converged", "l1"}]
    sensitivity: dict  # eps' -> {"s_gf", "eta_c"}
    all_converged: bool
    method: str
    fraction: float
    seconds: float
    rejected: int = 0  # steps undone because the loss rose (see gradient_flow_sharpness)
    deflate: int = 0  # exp: the number k of top eigenpairs integrated exactly (0 for gd and rk4)
    rtol: float = 0.0  # rkc: the local error tolerance relative to ‖θ‖ (0 for the fixed-fraction methods)
    n_grad: int = 0  # gradient evaluations
    n_hvp: int = 0  # Hessian-vector products (sharpness measurements and, for exp, the eigenpair block)

    def to_json(self) -> dict:
        """Every field, as a dict."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: dict) -> "GFResult":
        """The result stored by :meth:`to_json`."""
        return cls(**data)


def eps_levels(eps: float) -> list[float]:
    """The loss thresholds 4ε, 2ε, ε at which the running max of S is kept for the sensitivity report."""
    return [4 * eps, 2 * eps, eps]


def _result(*, crossed: dict, running_max: float, eps: float, lv: float, t0: float, **fields) -> GFResult:
    """A finished proxy's :class:`GFResult`: s_GF = the running max, η_c = 2/s_GF, and s_GF(ε') for ε' in
    :func:`eps_levels` (the running max when L first fell below ε')."""
    s_gf = running_max if math.isfinite(running_max) else math.nan
    sens = {repr(e): {"s_gf": crossed.get(e, math.nan),
                      "eta_c": 2.0 / crossed[e] if e in crossed else math.nan} for e in eps_levels(eps)}
    return GFResult(s_gf=s_gf, eta_c=2.0 / s_gf if s_gf and math.isfinite(s_gf) else math.nan, eps=eps,
                    reached_eps=lv < eps, sensitivity=sens, seconds=time.perf_counter() - t0, **fields)


def exp_euler_step(theta, grad, V, lam, h: float):
    """One exponential-Euler step of θ' = −∇L with the top block (V, λ) stepped exactly:

        θ⁺ = θ − V diag((1 − e^{−hλ_i})/λ_i) Vᵀ g − h (g − V Vᵀ g),

    the exact flow of a quadratic along the columns of V (orthonormal, p × k) and explicit Euler on the rest.
    (1 − e^{−hλ})/λ → h as hλ → 0 (and grows like e^{h|λ|}/|λ| for negative λ, as the flow does).
    """
    import torch

    lam = np.asarray(lam, dtype=np.float64)
    x = h * lam
    small = np.abs(x) <= 1e-8
    factors = np.where(small, h, -np.expm1(-x) / np.where(small, 1.0, lam))
    coeffs = V.T @ grad
    factors = torch.as_tensor(factors, dtype=theta.dtype, device=theta.device)
    return theta - V @ (factors * coeffs) - h * (grad - V @ coeffs)


def gradient_flow_sharpness(problem: Problem, eps: float = 1e-2, *, method: str = "gd", fraction: float = 0.5,
                            every: int = 200, max_steps: int = 100_000, seed: int = 0,
                            deflate: int | None = None, block_iters: int = 3, rtol: float | None = None,
                            progress: Callable[[str], None] | None = None) -> GFResult:
    """Follow the gradient-flow proxy from ``problem``'s init until L < eps and return s_GF and η_c = 2/s_GF.

    ``fraction`` (gd, rk4, exp): the step as a fraction of the stability step 2/S. ``rtol`` (rkc only,
    default ``RKC_RTOL``): the local error tolerance; ``every`` counts accepted steps for rkc. ``progress``
    receives one line per sharpness measurement (and, for rkc, per accepted step). ``deflate``
    (``method="exp"`` only): the number k of top eigenpairs stepped exactly; None takes the number of
    classes. ``block_iters``: LOBPCG iterations per refresh of the warm-started block (k+1 HVPs
    each; the block is refreshed often, so a few suffice, and a stale block is caught by the loss-rise guard).
    """
    eps = positive_scalar("eps", eps)
    choice("method", method, METHODS)
    if method == "exp":
        deflate = positive_int("deflate", problem.num_classes if deflate is None else deflate)
        if deflate + 1 >= problem.train_loss.p:
            raise InputError("deflate", f"must be < p - 1 = {problem.train_loss.p - 1}", deflate)
    elif deflate is not None:
        raise InputError("deflate", "is used by method='exp' only", deflate)
    else:
        deflate = 0
    if method == "rkc":
        rtol = positive_scalar("rtol", RKC_RTOL if rtol is None else rtol)
    elif rtol is not None:
        raise InputError("rtol", "is used by method='rkc' only", rtol)
    block_iters = positive_int("block_iters", block_iters)
    fraction = positive_scalar("fraction", fraction)
    if fraction >= 1:
        raise InputError("fraction", "must be < 1 (a fraction of the stability step 2/S)", fraction)
    every = positive_int("every", every)
    max_steps = positive_int("max_steps", max_steps)
    say = progress or (lambda msg: None)
    if method == "rkc":
        return _follow_rkc(problem, eps, rtol=rtol, every=every, max_steps=max_steps, seed=seed, say=say)
    t0 = time.perf_counter()
    f = problem.train_loss
    theta = problem.theta_init.clone()
    levels = eps_levels(eps)
    crossed: dict[float, float] = {}
    path: list[dict] = []
    v0, h, t, running_max = None, None, 0.0, -math.inf
    all_ok = True
    lv, k = math.inf, 0
    block = None  # exp: the (p, k+1) eigenvector block of the last refresh
    V = lam_top = None  # exp: the top-k eigenvectors (torch, p × k) and eigenvalues
    hvp0, n_grad = f.n_hvp, 0

    def refresh_block():
        """exp: the top k+1 eigenpairs at θ; the step is capped by the bulk edge λ_{k+1}."""
        nonlocal block, V, lam_top
        import torch

        pairs = top_eigenpairs(f, theta, deflate + 1, block=block, seed=seed, maxiter=block_iters)
        block = pairs.vectors
        lam_top = pairs.values[:deflate]
        V = torch.as_tensor(block[:, :deflate], dtype=theta.dtype, device=theta.device)
        return fraction * 2.0 / max(abs(float(pairs.values[deflate])), 1e-12)

    def record(step, loss_value, check: bool = False):
        """Measure S at θ; with ``check``, a step in force beyond GD's stability edge (h·S > STABLE_HS) marks the
        segment since the last measurement as off the flow (``overshoot``): S is kept out of s_GF."""
        nonlocal v0, h, running_max, all_ok, overshoot, h_cap
        est = top_eigenvalue(f, theta, "LM", v0=v0 if block is None else block[:, 0], seed=seed)
        v0 = est.vector
        all_ok = all_ok and est.converged
        s = abs(est.value)
        off = bool(check and method != "exp" and h is not None and math.isfinite(s) and h * s > STABLE_HS)
        path.append({"step": step, "t": t, "loss": loss_value, "S": s, "converged": est.converged,
                     "residual": est.residual, "l1": float(theta.abs().sum()), **({"overshoot": True} if off else {})})
        say(f"gradient flow ({method}): step {step}, t {t:.4g}, loss {loss_value:.4g}, S {s:.4g}"
            + (" (past the stability edge: segment redone)" if off else ""))
        if off:  # the step the overshoot's S allows holds until the redone segment has passed a measurement
            overshoot, h = True, fraction * 2.0 / s
            h_cap = h if h_cap is None else min(h_cap, h)
            return s
        if math.isfinite(s):
            running_max = max(running_max, s)
            h = refresh_block() if method == "exp" else fraction * 2.0 / s
            if h_cap is not None:
                h = min(h, h_cap)
        return s

    theta_prev, lv_prev, rejected = None, math.inf, 0
    overshoot, mark, h_cap = False, None, None  # mark: (θ, t) at the last measurement on the flow
    rise_tol = 16 * float(np.finfo(np.float32 if theta.dtype.itemsize == 4 else np.float64).eps)
    for k in range(max_steps + 1):
        value, g = f.value_and_grad(theta)
        n_grad += 1
        lv = float(value)
        if theta_prev is not None and not (lv <= lv_prev * (1 + rise_tol)):
            # The loss rose: the step was too long for the curvature met since S was last measured (the
            # sharpness can grow several-fold within a few steps early on). Undo it, re-measure S at the
            # restored point and retry with h = fraction·2/S (at least halved), so the proxy never catapults.
            theta, theta_prev, h_old, rejected, t = theta_prev, None, h, rejected + 1, t - h
            record(k, lv_prev, check=mark is not None)  # the restored point was reached with h_old
            if overshoot:
                (theta, t), overshoot = mark, False
            else:
                h = min(h, 0.5 * h_old)
            if rejected > MAX_REJECTIONS:
                lv = lv_prev
                break
            continue
        if not math.isfinite(lv):
            break
        newly = [e for e in levels if lv < e and e not in crossed]
        if k % every == 0 or newly or lv < eps or h is None or k == max_steps:  # the path ends where it stopped
            record(k, lv, check=mark is not None)
            if overshoot:
                # The sharpness grew past 2/h within the segment: GD left the flow there. Return to the last
                # point measured on the flow and redo the segment with the step the new S allows.
                (theta, t), theta_prev, overshoot, rejected = mark, None, False, rejected + 1
                if rejected > MAX_REJECTIONS:
                    break
                continue
            if mark is not None and theta is not mark[0]:
                h_cap = None  # the redone segment passed: the step follows S again
            mark = (theta, t)
        for e in newly:
            crossed[e] = running_max
        if lv < eps or k == max_steps or h is None:
            break
        theta_prev, lv_prev = theta, lv
        if method == "gd":
            theta = theta - h * g
        elif method == "exp":
            theta = exp_euler_step(theta, g, V, lam_top, h)
        else:
            # classical RK4 on θ' = −∇L(θ), its first stage the gradient already in hand
            theta = explicit_rk_step(lambda _t, x: -f.grad(x), t, theta, h, RK4, k1=-g)[0]
        t += h
    return _result(crossed=crossed, running_max=running_max, eps=eps, lv=lv, t0=t0, steps=k, path=path,
                   all_converged=all_ok, method=method, fraction=fraction, rejected=rejected, deflate=deflate,
                   n_grad=n_grad, n_hvp=f.n_hvp - hvp0)


def _follow_rkc(problem: Problem, eps: float, *, rtol: float, every: int, max_steps: int, seed: int,
                say: Callable[[str], None]) -> GFResult:
    """The ``method="rkc"`` proxy (module docstring): RKC2 with error control, a per-step spectral bound
    from power estimates, landing control at each threshold and eigsh at the recorded points."""
    import torch

    from biasaudit.validation.rkc import MAX_STAGES, power_estimate, rkc2_coefficients, rkc2_error, rkc2_stages
    from biasaudit.validation.rkc import rkc2_step

    t0 = time.perf_counter()
    f = problem.train_loss
    grad_calls = 0

    def grad(x):
        nonlocal grad_calls
        grad_calls += 1
        return f.grad(x)

    theta = problem.theta_init.clone()
    levels = eps_levels(eps)
    crossed: dict[float, float] = {}
    path: list[dict] = []
    running_max, all_ok, v0, t = -math.inf, True, None, 0.0
    hvp0 = f.n_hvp

    direction = None  # the power iterate: a fresh start vector for eigsh (fewer HVPs than a stale eigenvector)

    def record(step, loss_value, at=None, time_at=None):
        nonlocal v0, running_max, all_ok
        point = theta if at is None else at
        warm = direction is not None and at is None
        start = direction.double().cpu().numpy() if warm else v0
        # from the fresh power iterate a small Lanczos basis suffices: 7 HVPs instead of 11 on the 28x28 CNN
        est = top_eigenvalue(f, point, "LM", v0=start, seed=seed, ncv=min(f.p, WARM_NCV) if warm else None)
        v0 = est.vector if np.all(np.isfinite(est.vector)) else v0
        all_ok = all_ok and est.converged
        s = abs(est.value)
        path.append({"step": step, "t": t if time_at is None else time_at, "loss": loss_value, "S": s,
                     "converged": est.converged, "residual": est.residual, "l1": float(point.abs().sum())})
        if math.isfinite(s):
            running_max = max(running_max, s)
        return s

    value, g = f.value_and_grad(theta)
    grad_calls += 1
    lv = float(value)
    if not math.isfinite(lv):
        return _result(crossed=crossed, running_max=running_max, eps=eps, lv=lv, t0=t0, steps=0, path=path,
                       all_converged=all_ok, method="rkc", fraction=0.0, n_grad=grad_calls, n_hvp=f.n_hvp - hvp0,
                       rtol=rtol)
    s_now = record(0, lv)
    if not (math.isfinite(s_now) and s_now > 0):
        s_now = 1.0
    direction = torch.as_tensor(v0, dtype=theta.dtype, device=theta.device)
    rho = s_now
    h = 1.0 / (RHO_SAFETY * rho)  # start well inside the explicit Euler range; the controller grows it
    peak = (rho, theta, 0, t, lv)  # (estimate, θ, step, t, loss) at the running max of the power estimates
    peak_measured = True
    rise_tol = 16 * float(np.finfo(np.float32 if theta.dtype.itemsize == 4 else np.float64).eps)
    rejected = accepted = 0
    rkc_beta_max = rkc2_coefficients(MAX_STAGES).beta
    for e in levels:
        if lv < e:
            crossed[e] = running_max
    while lv >= eps and accepted < max_steps and rejected <= MAX_REJECTIONS:
        target = next(e for e in levels if e not in crossed)
        slope = float(g @ g)  # -dL/dt
        h_free = h  # the controller's step; landing shortens this one step only
        if slope > 0:  # land at most LANDING below the next threshold (first-order prediction)
            h = min(h, max((lv - target * (1 - LANDING)) / slope, 1e-12 * h))
        h = min(h, rkc_beta_max / (RHO_SAFETY * rho))
        s = rkc2_stages(h * RHO_SAFETY * rho)
        theta_new = rkc2_step(grad, theta, g, h, s)
        value_new, g_new = f.value_and_grad(theta_new)
        grad_calls += 1
        lv_new = float(value_new)
        err = float(rkc2_error(theta, theta_new, g, g_new, h).norm()) / (rtol * max(float(theta.norm()), 1e-12))
        if not (math.isfinite(lv_new) and math.isfinite(err)) or lv_new > lv * (1 + rise_tol) or err > 1:
            rejected += 1
            if not math.isfinite(err) or err > 4 or not (lv_new <= lv * (1 + rise_tol)):
                # unstable, not just inaccurate: S outgrew ρ during the step
                est, direction = power_estimate(grad, theta, g, direction, 4)
                rho = max(rho, est)
                h *= 0.5
            else:
                h *= max(0.2, 0.8 * err ** (-1 / 3))
            continue
        theta, g, lv, t = theta_new, g_new, lv_new, t + h
        accepted += 1
        est, direction = power_estimate(grad, theta, g, direction, 1)
        rho = est if math.isfinite(est) and est > 0 else rho
        if est >= peak[0]:
            peak, peak_measured = (est, theta, accepted, t, lv), False
        elif not peak_measured and est < (1 - PEAK_DROP) * peak[0]:
            record(peak[2], peak[4], at=peak[1], time_at=peak[3])  # S peaked between two eigsh points
            peak_measured = True
        newly = [e for e in levels if lv < e and e not in crossed]
        if accepted % every == 0 or newly or lv < eps:
            record(accepted, lv)
            if peak[2] == accepted:
                peak_measured = True
        for e in newly:
            crossed[e] = running_max
        h = max(h * (min(4.0, 0.9 * err ** (-1 / 3)) if err > 0 else 4.0), h_free if h < h_free else 0.0)
        say(f"gradient flow (rkc): step {accepted} ({s} stages), t {t:.4g}, loss {lv:.4g}, S ~ {est:.4g}, "
            f"next h {h:.3g}")
    return _result(crossed=crossed, running_max=running_max, eps=eps, lv=lv, t0=t0, steps=accepted, path=path,
                   all_converged=all_ok, method="rkc", fraction=0.0, rejected=rejected, n_grad=grad_calls,
                   n_hvp=f.n_hvp - hvp0, rtol=rtol)


def eps_sensitivity(result) -> float:
    """Relative change of η_c between the thresholds 2ε and ε (NaN if either was not reached); ``result`` is a
    :class:`GFResult` or its stored JSON."""
    if isinstance(result, dict):
        sensitivity, eps = result.get("sensitivity") or {}, float(result.get("eps", math.nan))
    else:
        sensitivity, eps = result.sensitivity, result.eps

    def eta_c_at(level):
        value = (sensitivity.get(repr(level)) or {}).get("eta_c", math.nan)
        try:  # a stored result holds a level never reached as None or the string 'nan'
            return float(value)
        except (TypeError, ValueError):
            return math.nan

    a, b = eta_c_at(2 * eps), eta_c_at(eps)
    return abs(a / b - 1.0) if math.isfinite(a) and math.isfinite(b) else math.nan

