"""s_GF, the largest sharpness along the gradient-flow path up to the loss threshold eps, and η_c = 2/s_GF.

Gradient flow θ' = −∇L(θ) is followed by a proxy from the same fixed initialisation as the sweep:

* ``method="gd"`` (default, the spec's quick tier): GD with the adaptive step h = c · 2/S, S re-measured
  every ``every`` steps (c = 0.5: half the stability step). GD with h·S ≤ 1 is monotone and stays close to
  the flow; the error in S along the path is O(h).
* ``method="rk4"``: classical RK4 with the same adaptive step (4 gradients per step; more faithful, slower).
* ``method="exp"``: exponential Euler on the top of the spectrum. With the k algebraically largest eigenpairs
  (λ_i, v_i) of H = ∇²L (``deflate`` = k, default the number of classes: MSE and CE Hessians of a C-class
  network have about C outlier eigenvalues above a bulk) and P = Σ v_i v_iᵀ,

      θ⁺ = θ − Σ_i (1 − e^{−hλ_i})/λ_i · v_i v_iᵀ ∇L − h (I − P) ∇L,   h = c · 2/λ_{k+1},

  exact flow along the top directions for a locally quadratic L, explicit Euler on the rest. The step is
  capped by the bulk edge λ_{k+1} instead of S = λ_1, so on a sharpening path (S ≫ λ_{k+1}) it takes
  S/λ_{k+1} times fewer steps. The block is refreshed (LOBPCG, warm-started) at every sharpness measurement;
  a stale block shows up as a loss rise, which the guard below undoes.

s_GF = max over the measured points of S = max|λ(∇²L)| (eigsh, warm-started). The sharpness is measured at
least every ``every`` steps, whenever the loss first falls below each level of ``eps_levels`` (for the
sensitivity report) and at the end, so a peak between two measurements can be missed: with
cross-entropy (sharpness peaks at moderate loss) use a small ``every``. A step that raises the loss is
undone and retried with a re-measured S (and at least half the step): the sharpness can grow several-fold
between two measurements early in training, and an unguarded proxy would then catapult instead of flowing.

Sensitivity to eps: the report gives s_GF(ε') for ε' ∈ {4ε, 2ε, ε} (the running max up to the first time
L < ε'), and the relative change of η_c between 2ε and ε.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from biasaudit.plumbing import InputError, choice, positive_int, positive_scalar
from biasaudit.validation.gd_trainer import Problem
from biasaudit.validation.sharpness import top_eigenpairs, top_eigenvalue

__all__ = ["GFResult", "gradient_flow_sharpness", "exp_euler_step", "eps_sensitivity"]

METHODS = ("gd", "rk4", "exp")
MAX_REJECTIONS = 1000  # undone steps before the proxy gives up (reached_eps is then False)


@dataclass
class GFResult:
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
    n_grad: int = 0  # gradient evaluations
    n_hvp: int = 0  # Hessian-vector products (sharpness measurements and, for exp, the eigenpair block)

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: dict) -> "GFResult":
        return cls(**data)


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
                            deflate: int | None = None, block_iters: int = 3) -> GFResult:
    """Follow the gradient-flow proxy from ``problem``'s init until L < eps and return s_GF and η_c = 2/s_GF.

    ``deflate`` (``method="exp"`` only): the number k of top eigenpairs stepped exactly; None takes the
    number of classes. ``block_iters``: LOBPCG iterations per refresh of the warm-started block (k+1 HVPs
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
    block_iters = positive_int("block_iters", block_iters)
    fraction = positive_scalar("fraction", fraction)
    if fraction >= 1:
        raise InputError("fraction", "must be < 1 (a fraction of the stability step 2/S)", fraction)
    every = positive_int("every", every)
    max_steps = positive_int("max_steps", max_steps)
    t0 = time.perf_counter()
    f = problem.train_loss
    theta = problem.theta_init.clone()
    levels = [4 * eps, 2 * eps, eps]
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

    def record(step, loss_value):
        nonlocal v0, h, running_max, all_ok
        est = top_eigenvalue(f, theta, "LM", v0=v0 if block is None else block[:, 0], seed=seed)
        v0 = est.vector
        all_ok = all_ok and est.converged
        s = abs(est.value)
        path.append({"step": step, "t": t, "loss": loss_value, "S": s, "converged": est.converged,
                     "residual": est.residual, "l1": float(theta.abs().sum())})
        if math.isfinite(s):
            running_max = max(running_max, s)
            h = refresh_block() if method == "exp" else fraction * 2.0 / s
        return s

    theta_prev, lv_prev, rejected = None, math.inf, 0
    rise_tol = 16 * float(np.finfo(np.float32 if theta.dtype.itemsize == 4 else np.float64).eps)
    for k in range(max_steps + 1):
        value, g = f.value_and_grad(theta)
        n_grad += 1
        lv = float(value)
        if theta_prev is not None and not (lv <= lv_prev * (1 + rise_tol)):
            # The loss rose: the step was too long for the curvature met since S was last measured (the
            # sharpness can grow several-fold within a few steps early on). Undo it, re-measure S at the
            # restored point and retry with h = fraction·2/S (at least halved), so the proxy never catapults.
            theta, theta_prev, h_old, rejected = theta_prev, None, h, rejected + 1
            record(k, lv_prev)
            h = min(h, 0.5 * h_old)
            if rejected > MAX_REJECTIONS:
                lv = lv_prev
                break
            continue
        if not math.isfinite(lv):
            break
        newly = [e for e in levels if lv < e and e not in crossed]
        if k % every == 0 or newly or lv < eps or h is None:
            record(k, lv)
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
            k1 = g
            k2 = f.grad(theta - 0.5 * h * k1)
            k3 = f.grad(theta - 0.5 * h * k2)
            k4 = f.grad(theta - h * k3)
            theta = theta - (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
        t += h
    s_gf = running_max if math.isfinite(running_max) else math.nan
    sens = {repr(e): {"s_gf": crossed.get(e, math.nan),
                      "eta_c": 2.0 / crossed[e] if e in crossed else math.nan} for e in levels}
    return GFResult(s_gf=s_gf, eta_c=2.0 / s_gf if s_gf and math.isfinite(s_gf) else math.nan, eps=eps,
                    reached_eps=lv < eps, steps=k, path=path, sensitivity=sens, all_converged=all_ok,
                    method=method, fraction=fraction, seconds=time.perf_counter() - t0, rejected=rejected,
                    deflate=deflate, n_grad=n_grad, n_hvp=f.n_hvp - hvp0)


def eps_sensitivity(result: GFResult) -> float:
    """Relative change of η_c between the thresholds 2ε and ε (NaN if either was not reached)."""
    a = result.sensitivity.get(repr(2 * result.eps), {}).get("eta_c", math.nan)
    b = result.sensitivity.get(repr(result.eps), {}).get("eta_c", math.nan)
    return abs(a / b - 1.0) if np.isfinite(a) and np.isfinite(b) else math.nan

