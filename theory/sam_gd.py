r"""Gradient-descent closed forms on the reduced balanced field, and depth 1 (paper 1: "GD closed forms", A).

The GD reduced field (rescaled time tau) is ``w_j' = mu_j w_j^{L-1}``, ``w_j(0) = alpha_j > 0``:

* L = 1: ``w_j = alpha_j + mu_j tau`` for every algorithm (GD, l_inf-SAM and l2-SAM all have field mu at
  depth 1), so ``w/||w|| -> mu/||mu||``, the l2 max-margin direction of one point.
* L = 2: ``w_j = alpha_j e^{mu_j tau}``, so ``beta/||beta|| -> e_d`` (the largest mu_j wins).
* L >= 3: ``w_j^{2-L} = alpha_j^{2-L} - (L-2) mu_j tau``, a blow-up at
  ``tau_j = alpha_j^{2-L} / ((L-2) mu_j)``; the first coordinate to blow up,
  ``argmax_j mu_j alpha_j^{L-2}``, wins (``e_d`` for uniform alpha).

Symbols: ``alpha`` initial weight, ``mu`` data coordinate, ``tau`` rescaled time, ``L`` depth.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.plumbing import InputError, as_finite_vector, matching_length, positive_int, positive_vector

__all__ = [
    "alpha", "mu", "tau", "L",
    "GD_DEPTH1", "GD_L2", "GD_DEEP", "GD_BLOWUP_TIME",
    "depth1_weights", "gd_l2_weights", "gd_deep_weights", "gd_blowup_times", "gd_limit_index",
]

alpha = sp.Symbol("alpha", positive=True)
mu = sp.Symbol("mu", positive=True)
tau = sp.Symbol("tau", nonnegative=True)
L = sp.Symbol("L", integer=True, positive=True)

GD_DEPTH1 = alpha + mu * tau
GD_L2 = alpha * sp.exp(mu * tau)
GD_DEEP = (alpha ** (2 - L) - (L - 2) * mu * tau) ** (1 / (2 - L))
GD_BLOWUP_TIME = alpha ** (2 - L) / ((L - 2) * mu)

_depth1 = sp.lambdify((mu, alpha, tau), GD_DEPTH1, modules="numpy")
_l2 = sp.lambdify((mu, alpha, tau), GD_L2, modules="numpy")
_deep = sp.lambdify((mu, alpha, tau, L), GD_DEEP, modules="numpy")
_blowup = sp.lambdify((mu, alpha, L), GD_BLOWUP_TIME, modules="numpy")


def _mu_alpha(mu_value, alpha_value):
    m = positive_vector("mu", mu_value)
    a = positive_vector("alpha", alpha_value)
    if a.size == 1:
        a = np.full(m.size, a[0])
    return m, matching_length("alpha", a, m.size, "mu")


def depth1_weights(mu_value, alpha_value, tau_value) -> np.ndarray:
    """``alpha + mu tau`` (every algorithm at depth 1, one point); shape (d,) or (len(tau), d)."""
    m, a = _mu_alpha(mu_value, alpha_value)
    t = as_finite_vector("tau", tau_value)
    return np.squeeze(_depth1(m[None, :], a[None, :], t[:, None]))


def gd_l2_weights(mu_value, alpha_value, tau_value) -> np.ndarray:
    """``alpha e^{mu tau}`` (GD, L = 2)."""
    m, a = _mu_alpha(mu_value, alpha_value)
    t = as_finite_vector("tau", tau_value)
    return np.squeeze(_l2(m[None, :], a[None, :], t[:, None]))


def gd_deep_weights(mu_value, alpha_value, tau_value, depth: int) -> np.ndarray:
    """``(alpha^{2-L} - (L-2) mu tau)^{1/(2-L)}`` (GD, L >= 3), valid before the blow-up times."""
    m, a = _mu_alpha(mu_value, alpha_value)
    depth = positive_int("depth", depth, minimum=3)
    t = as_finite_vector("tau", tau_value)
    if np.any(t[:, None] >= gd_blowup_times(m, a, depth)[None, :]):
        raise InputError("tau", "must be below every blow-up time alpha^(2-L)/((L-2) mu)", tau_value)
    return np.squeeze(_deep(m[None, :], a[None, :], t[:, None], depth))


def gd_blowup_times(mu_value, alpha_value, depth: int) -> np.ndarray:
    """``tau_j = alpha_j^{2-L} / ((L-2) mu_j)`` for L >= 3."""
    m, a = _mu_alpha(mu_value, alpha_value)
    depth = positive_int("depth", depth, minimum=3)
    return np.asarray(_blowup(m, a, depth), dtype=float)


def gd_limit_index(mu_value, alpha_value, depth: int) -> int:
    """1-based index k of GD's limit direction e_k at depth >= 2 (d at L = 2; first blow-up at L >= 3)."""
    m, a = _mu_alpha(mu_value, alpha_value)
    depth = positive_int("depth", depth, minimum=2)
    if depth == 2:
        return int(m.size)
    return int(np.argmin(gd_blowup_times(m, a, depth))) + 1
