r"""Gradient flow on the shared-weight model: its limit, s_GF, η_c = 2/s_GF and the regime summary.

Gradient flow :math:`\dot w = -\nabla L = -4c\,r\,x\odot w` integrates to

.. math:: w(t) = w_0\odot e^{-4c\,x\,s(t)},\quad s(t)=\int_0^t r,\qquad \beta(t) = \beta_0\odot e^{-4x\tau(t)},\ \tau = 2c\,s,

and :math:`\dot r = -2c\|\nabla r\|^2 r` with :math:`\|\nabla r\|^2 = 4\sum x_i^2\beta_i`, so r keeps its sign.
The limit is :math:`\beta_{GF} = \beta_0\odot e^{-4x\tau}` with τ the unique root of

.. math:: \sum_i x_i\beta_{0,i}e^{-4x_i\tau} = y

(the left side is strictly decreasing in τ). Equivalently :math:`\beta_{GF}` minimizes the KL-type potential
:math:`\Phi(\beta) = \sum_i[\beta_i\log(\beta_i/\beta_{0,i}) - \beta_i]` over P (stationarity:
:math:`\log(\beta_i/\beta_{0,i}) = \mu x_i`, μ = −4τ). The limit does not depend on c (time rescaling).

s_GF is the largest top eigenvalue :math:`\lambda_{max}(H)` along the flow path, :math:`\eta_c = 2/s_{GF}`.

* Small init (r₀ < 0): β grows in every coordinate and the sharpness rises monotonically, so
  :math:`s_{GF} = S(\beta_{GF}) = 8c\sum x_i^2\beta_{GF,i}`.
* As α → 0 with w₀ = α·1: :math:`S_{GF}\to 8c\,y\,x_{max}` from below, at the rate
  :math:`O(\alpha^{2(1-x_{(d-1)}/x_{max})})` (x_(d−1) the largest entry strictly below x_max). Derivation:
  with :math:`u = e^{-4\tau}\to\infty`, :math:`\beta_i=\alpha^2u^{x_i}`, the constraint gives
  :math:`u\approx(y/(x_{max}\alpha^2))^{1/x_{max}}` and :math:`S - 8cyx_{max} = -8c\sum_i x_i(x_{max}-x_i)\beta_i`,
  whose largest term is :math:`\propto\alpha^2 u^{x_{(d-1)}}\propto\alpha^{2(1-x_{(d-1)}/x_{max})}`.
* Large init (r₀ > 0): the sharpness is largest at the start, :math:`s_{GF} = \lambda_{max}(H(w_0))`; GD with
  η a little above 2/s_GF catapults instead of tracking 2/η, so the 2/s_GF prediction fails there (the claim
  ``eos.s_gf.large_init`` records it).

Symbols: ``tau`` flow time in β-units (τ = 2c∫r), ``alpha`` init scale, ``eta`` step, the rest as in
:mod:`biasaudit.theory.eos_model`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import sympy as sp
from scipy.optimize import brentq, minimize_scalar

from biasaudit.plumbing import InputError
from biasaudit.theory.eos_minimizers import (min_l2_beta, min_norm_face, min_norm_stable_eta_max, min_sharpness_face,
                                             minimizers_disjoint, pareto_breakpoints, stable_eta_max)
from biasaudit.theory.eos_model import EosProblem, eos_problem, hessian_eigenvalues, on_manifold_sharpness

__all__ = [
    "GF_ROOT_TERM", "KL_TERM", "ALPHA_RATE_EXPONENT", "gf_tau", "gradient_flow_limit", "kl_potential",
    "gf_path", "gf_max_sharpness", "s_gf", "small_alpha_exponent", "EosRegimes", "eos_regimes",
]

_x, _b0, _b, tau_sym = sp.symbols("x beta_0 beta tau", positive=True)
x_next, x_max, alpha = sp.symbols("x_next x_max alpha", positive=True)

#: One summand of the root equation Σ x_i β0_i exp(-4 x_i τ) = y.
GF_ROOT_TERM = _x * _b0 * sp.exp(-4 * _x * tau_sym)
#: β_GF coordinate.
GF_BETA = _b0 * sp.exp(-4 * _x * tau_sym)
#: One summand of the KL potential Φ(β) = Σ β log(β/β0) − β.
KL_TERM = _b * sp.log(_b / _b0) - _b
#: Rate exponent of S_GF → 8 c y x_max as α → 0.
ALPHA_RATE_EXPONENT = 2 * (1 - x_next / x_max)

_gf_beta = sp.lambdify((_x, _b0, tau_sym), GF_BETA, "numpy")
_kl_term = sp.lambdify((_b, _b0), KL_TERM, "numpy")
_alpha_exponent = sp.lambdify((x_next, x_max), ALPHA_RATE_EXPONENT, "math")


def gf_tau(x: np.ndarray, y: float, beta0: np.ndarray) -> float:
    """The root τ of :math:`\\sum x_i\\beta_{0,i}e^{-4x_i\\tau} = y` (log-sum-exp form, brentq)."""
    logc = np.log(x * beta0)
    logy = math.log(y)

    def h(t: float) -> float:  # strictly decreasing, log of the left side minus log y
        z = logc - 4 * x * t
        m = z.max()
        return float(m + math.log(np.exp(z - m).sum()) - logy)

    lo, hi = -1.0, 1.0
    while h(lo) < 0:
        lo *= 2
    while h(hi) > 0:
        hi *= 2
    return float(brentq(h, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500))


def gradient_flow_limit(x, y, w0) -> np.ndarray:
    """:math:`\\beta_{GF} = \\beta_0\\odot e^{-4x\\tau}` (validated inputs)."""
    p = eos_problem(x, y, w0)
    return _gf_beta(p.x, p.beta0, gf_tau(p.x, p.y, p.beta0))


def kl_potential(beta, beta0) -> float:
    """:math:`\\Phi(\\beta) = \\sum_i[\\beta_i\\log(\\beta_i/\\beta_{0,i}) - \\beta_i]` (0 log 0 = 0)."""
    beta = np.asarray(beta, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(beta > 0, _kl_term(np.where(beta > 0, beta, 1.0), beta0), 0.0)
    return float(np.sum(terms))


def gf_path(p: EosProblem, t: np.ndarray) -> np.ndarray:
    """w along the flow at β-times t (rows): :math:`w_0 e^{-2xt}`."""
    return p.w0 * np.exp(-2 * np.outer(t, p.x))


def gf_max_sharpness(p: EosProblem, n_grid: int = 2001) -> tuple[float, float]:
    """max over the path of λ_max(H) and the β-time where it occurs (grid, then a bounded refinement)."""
    tau = gf_tau(p.x, p.y, p.beta0)
    t = np.linspace(0.0, tau, n_grid)
    lam = hessian_eigenvalues(p.x, p.y, gf_path(p, t), p.c)[:, -1]
    k = int(np.argmax(lam))
    if k in (0, n_grid - 1):
        return float(lam[k]), float(t[k])
    a, b = sorted((t[k - 1], t[k + 1]))
    res = minimize_scalar(lambda s: -hessian_eigenvalues(p.x, p.y, gf_path(p, np.array([s])), p.c)[0, -1],
                          bounds=(a, b), method="bounded", options={"xatol": 1e-14})
    return max(float(-res.fun), float(lam[k])), float(res.x)


def s_gf(p: EosProblem) -> float:
    """s_GF: S(β_GF) for small init (r₀ <= 0), λ_max(H(w₀)) for large init (r₀ > 0)."""
    if p.r0 <= 0:
        tau = gf_tau(p.x, p.y, p.beta0)
        return float(on_manifold_sharpness(p.x, _gf_beta(p.x, p.beta0, tau), p.c))
    return float(hessian_eigenvalues(p.x, p.y, p.w0, p.c)[-1])


def small_alpha_exponent(x) -> float:
    """:math:`2(1 - x_{(d-1)}/x_{max})` with x_(d−1) the largest entry strictly below x_max."""
    xu = np.unique(np.asarray(x, float))
    if xu.size < 2:
        raise InputError("x", "needs two distinct entries for the small-alpha rate", x)
    return float(_alpha_exponent(xu[-2], xu[-1]))


@dataclass(frozen=True)
class EosRegimes:
    """Everything ``biasaudit regimes eos`` reports (vertex indices are 1-based)."""

    x: tuple
    y: float
    w0: tuple
    loss_factor: float
    r0: float
    init_regime: str  # "small" (r0 <= 0: sharpness rises along the flow) or "large" (r0 > 0: catapults)
    tau: float
    beta_gf: tuple
    beta_gf_l1: float
    sharpness_gf: float  # S(beta_GF) = 8c sum x^2 beta_GF, the on-manifold sharpness at the flow's limit
    lambda_max_init: float
    s_gf: float  # max of lambda_max(H) along the flow
    eta_c: float  # 2 / s_gf
    eta_stable_max: float  # 1/(4 c y x_min): largest eta with a linearly stable minimum
    eta_min_norm_stable_max: float  # 1/(4 c y x_max)
    min_norm_vertex: int
    min_norm_face: tuple
    min_norm_beta_l1: float
    min_sharpness_vertex: int
    min_sharpness_face: tuple
    min_sharpness: float
    min_l2_beta: tuple
    minimizers_disjoint: bool
    pareto_front: tuple  # breakpoints (s, N*) of the front, sorted by s
    small_alpha_exponent: float | None

    def to_json(self) -> dict:
        from biasaudit.plumbing import jsonable

        return jsonable(asdict(self))


def eos_regimes(x, y, w0, *, loss_factor: float = 0.5) -> EosRegimes:
    """The regime summary of the toy model at ``(x, y, w0)``; raises :class:`InputError` on bad input."""
    p = eos_problem(x, y, w0, loss_factor=loss_factor)
    tau = gf_tau(p.x, p.y, p.beta0)
    beta = _gf_beta(p.x, p.beta0, tau)
    sgf = s_gf(p)
    xu = np.unique(p.x)
    return EosRegimes(
        x=tuple(p.x.tolist()), y=p.y, w0=tuple(p.w0.tolist()), loss_factor=p.c, r0=p.r0,
        init_regime="small" if p.r0 <= 0 else "large", tau=tau, beta_gf=tuple(beta.tolist()),
        beta_gf_l1=float(beta.sum()), sharpness_gf=float(on_manifold_sharpness(p.x, beta, p.c)),
        lambda_max_init=float(hessian_eigenvalues(p.x, p.y, p.w0, p.c)[-1]), s_gf=sgf, eta_c=2.0 / sgf,
        eta_stable_max=stable_eta_max(p.x, p.y, p.c), eta_min_norm_stable_max=min_norm_stable_eta_max(p.x, p.y, p.c),
        min_norm_vertex=min_norm_face(p.x)[0], min_norm_face=min_norm_face(p.x),
        min_norm_beta_l1=float(p.y / p.x.max()), min_sharpness_vertex=min_sharpness_face(p.x)[0],
        min_sharpness_face=min_sharpness_face(p.x), min_sharpness=float(8 * p.c * p.y * p.x.min()),
        min_l2_beta=tuple(min_l2_beta(p.x, p.y).tolist()), minimizers_disjoint=minimizers_disjoint(p.x),
        pareto_front=tuple(tuple(row) for row in pareto_breakpoints(p.x, p.y, p.c).tolist()),
        small_alpha_exponent=small_alpha_exponent(p.x) if xu.size > 1 else None,
    )
