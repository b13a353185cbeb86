"""Second-order Runge–Kutta–Chebyshev steps (RKC2) for gradient flow θ' = −∇L(θ).

Gradient flow on a network is stiff: the top Hessian eigenvalue S = λ_1 caps an explicit Euler step at
h < 2/S, while the loss decreases on the time scale of the bulk, so following the flow to a small loss
takes ~ T·S gradients. An s-stage Chebyshev method is explicit too, but its stability interval on the
negative real axis grows like s² (Verwer, Hundsdorfer & Sommeijer 1990; Sommeijer, Shampine & Verwer 1997),
so a step of length h needs only s ≈ √(hS/0.65) gradients, and the flow costs ~ T·√(S/(0.65 h)) gradients
with h set by accuracy, not by stability. The Hessian of L is symmetric, so the spectrum of the linearised
flow lies on the real axis: the case these methods are built for.

Scheme (damping ε = 2/13; Tⱼ the Chebyshev polynomials, w₀ = 1 + ε/s², w₁ = T′ₛ(w₀)/T″ₛ(w₀),
bⱼ = T″ⱼ(w₀)/T′ⱼ(w₀)² for j ≥ 2, b₀ = b₁ = b₂, aⱼ = 1 − bⱼTⱼ(w₀)), with F = −∇L and F₀ = F(Y₀):

    Y₀ = θₙ,  Y₁ = Y₀ + μ̃₁ h F₀,  μ̃₁ = b₁ w₁,
    Yⱼ = (1 − μⱼ − νⱼ) Y₀ + μⱼ Yⱼ₋₁ + νⱼ Yⱼ₋₂ + μ̃ⱼ h F(Yⱼ₋₁) + γ̃ⱼ h F₀,   j = 2 … s,
    μⱼ = 2bⱼw₀/bⱼ₋₁,  νⱼ = −bⱼ/bⱼ₋₂,  μ̃ⱼ = 2bⱼw₁/bⱼ₋₁,  γ̃ⱼ = −aⱼ₋₁ μ̃ⱼ,   θₙ₊₁ = Yₛ.

Its stability polynomial is Rₛ(z) = aₛ + bₛ Tₛ(w₀ + w₁z) = 1 + z + z²/2 + O(z³), with |Rₛ(z)| ≤ 1 on
[−βₛ, 0], βₛ = (1 + w₀)/w₁ ≈ 0.65 s². Local error estimate (Sommeijer et al. 1998):
est = ⅘(θₙ − θₙ₊₁) + ⅖h(Fₙ + Fₙ₊₁), O(h³) like the error itself.

The method needs a bound ρ ≥ λ_1 along the step; :func:`power_estimate` gives one per step for two
gradients (power iteration on finite-difference Hessian-vector products, warm-started), which the caller
inflates by a safety factor (the sharpness grows during a step on a sharpening path).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from biasaudit.plumbing import InputError, positive_int

__all__ = ["DAMPING", "MAX_STAGES", "RKC2", "rkc2_coefficients", "rkc2_stages", "rkc2_step", "rkc2_error",
           "stability_polynomial", "power_estimate"]

DAMPING = 2.0 / 13.0  # ε of Sommeijer et al.: keeps |Rₛ| ≤ 1 − O(ε) inside [−βₛ, −δ], so stiff modes are damped
MAX_STAGES = 2000  # βₛ ≈ 0.65 s²: 2000 stages cover hρ ≤ 2.6e6; beyond that the step is shortened instead


@dataclass(frozen=True)
class RKC2:
    """The coefficients of the s-stage RKC2 step (see the module docstring for the formulas)."""

    stages: int
    mu_tilde_1: float
    mu: tuple  # μⱼ, j = 2 … s
    nu: tuple  # νⱼ
    mu_tilde: tuple  # μ̃ⱼ
    gamma_tilde: tuple  # γ̃ⱼ
    a_s: float
    b_s: float
    w0: float
    w1: float
    beta: float  # stability interval [−β, 0]


@functools.lru_cache(maxsize=None)
def rkc2_coefficients(s: int) -> RKC2:
    """The RKC2 coefficients for ``s`` ≥ 2 stages (cached: they depend on s only)."""
    s = positive_int("stages", s)
    if s < 2 or s > MAX_STAGES:
        raise InputError("stages", f"must be in [2, {MAX_STAGES}]", s)
    w0 = 1.0 + DAMPING / s**2
    T, dT, ddT = [1.0, w0], [0.0, 1.0], [0.0, 0.0]
    for j in range(2, s + 1):
        T.append(2 * w0 * T[j - 1] - T[j - 2])
        dT.append(2 * T[j - 1] + 2 * w0 * dT[j - 1] - dT[j - 2])
        ddT.append(4 * dT[j - 1] + 2 * w0 * ddT[j - 1] - ddT[j - 2])
    w1 = dT[s] / ddT[s]
    b = [0.0, 0.0] + [ddT[j] / dT[j] ** 2 for j in range(2, s + 1)]
    b[0] = b[1] = b[2]
    a = [1.0 - b[j] * T[j] for j in range(s + 1)]
    mu = tuple(2 * b[j] * w0 / b[j - 1] for j in range(2, s + 1))
    nu = tuple(-b[j] / b[j - 2] for j in range(2, s + 1))
    mu_tilde = tuple(2 * b[j] * w1 / b[j - 1] for j in range(2, s + 1))
    gamma_tilde = tuple(-a[j - 1] * m for j, m in zip(range(2, s + 1), mu_tilde))
    return RKC2(stages=s, mu_tilde_1=b[1] * w1, mu=mu, nu=nu, mu_tilde=mu_tilde, gamma_tilde=gamma_tilde,
                a_s=a[s], b_s=b[s], w0=w0, w1=w1, beta=(1.0 + w0) / w1)


def rkc2_stages(h_rho: float) -> int:
    """The fewest stages s ≥ 2 whose stability interval βₛ covers hρ (``h_rho`` = h·ρ ≥ 0)."""
    h_rho = float(h_rho)
    if not h_rho >= 0 or not math.isfinite(h_rho):
        raise InputError("h_rho", "must be a finite number >= 0", h_rho)
    s = max(2, math.ceil(math.sqrt(1.0 + 1.54 * h_rho)))  # βₛ ≈ 0.65 s² (Sommeijer et al.'s starting guess)
    s = min(s, MAX_STAGES + 1)
    while s <= MAX_STAGES and rkc2_coefficients(s).beta < h_rho:
        s += 1
    while 2 < s <= MAX_STAGES and rkc2_coefficients(s - 1).beta >= h_rho:  # the guess is a little generous
        s -= 1
    if s > MAX_STAGES:
        raise InputError("h_rho", f"needs more than {MAX_STAGES} stages; shorten the step", h_rho)
    return s


def stability_polynomial(s: int, z):
    """Rₛ(z) = aₛ + bₛ Tₛ(w₀ + w₁z), the factor one step multiplies y' = λy by (z = hλ); array-valued z."""
    c = rkc2_coefficients(s)
    x = c.w0 + c.w1 * np.asarray(z, dtype=np.float64)
    return c.a_s + c.b_s * np.polynomial.chebyshev.chebval(x, [0.0] * s + [1.0])


def rkc2_step(grad: Callable, theta, g0, h: float, s: int):
    """One s-stage RKC2 step of θ' = −∇L from ``theta`` (``g0`` = ∇L(θ)); ``grad`` evaluates ∇L (s − 1 calls)."""
    c = rkc2_coefficients(s)
    y_prev2, y_prev = theta, theta - (h * c.mu_tilde_1) * g0
    for mu, nu, mu_t, gamma_t in zip(c.mu, c.nu, c.mu_tilde, c.gamma_tilde):
        y = (1.0 - mu - nu) * theta + mu * y_prev + nu * y_prev2 - (mu_t * h) * grad(y_prev) - (gamma_t * h) * g0
        y_prev2, y_prev = y_prev, y
    return y_prev


def rkc2_error(theta, theta_next, g0, g1, h: float):
    """The local error estimate ⅘(θₙ − θₙ₊₁) + ⅖h(Fₙ + Fₙ₊₁), F = −∇L (a vector; the caller takes its norm)."""
    return 0.8 * (theta - theta_next) - (0.4 * h) * (g0 + g1)


def power_estimate(grad: Callable, theta, g0, v, iterations: int = 2) -> tuple[float, object]:
    """λ_1 by ``iterations`` power steps on Hv ≈ (∇L(θ + δv) − ∇L(θ))/δ, warm-started at ``v``.

    δ = √(machine ε)·max(‖θ‖, 1) balances truncation (O(δ) from the third derivative) against round-off
    (O(ε/δ)). Returns the largest Rayleigh quotient seen (a lower bound on λ_1 up to O(δ)) and the last
    iterate, normalised, to warm-start the next call. One gradient per iteration.
    """
    import torch

    iterations = positive_int("iterations", iterations)
    delta = math.sqrt(torch.finfo(theta.dtype).eps) * max(float(theta.norm()), 1.0)
    best = -math.inf
    for _ in range(iterations):
        v = v / v.norm()
        hv = (grad(theta + delta * v) - g0) / delta
        best = max(best, float(v @ hv))
        norm = hv.norm()
        if not torch.isfinite(norm) or norm == 0:
            break
        v = hv
    return best, v / v.norm()
