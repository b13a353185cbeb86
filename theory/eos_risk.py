r"""Generalization risk of the solutions of the shared-weight model (paper 2).

Test inputs :math:`x'\sim N(0, I)`, so the risk of β against a teacher β* is
:math:`R(\beta) = E(\langle\beta-\beta^*, x'\rangle)^2 = \|\beta-\beta^*\|^2`.

* **Bayesian risk.** The teacher is uniform on the simplex in the coordinates :math:`p_i = x_i\beta^*_i/y`,
  i.e. p ~ Dirichlet(1,…,1), with :math:`E p_i = 1/d`, :math:`E p_i^2 = 2/(d(d+1))`, hence

  .. math:: E R(\beta) = \sum_i\beta_i^2 - \frac{2y}{d}\sum_i\frac{\beta_i}{x_i} + \frac{2y^2}{d(d+1)}\sum_i\frac1{x_i^2}.

  Its minimizer :math:`\bar\beta_i = y/(d x_i)` lies on P (⟨x, β̄⟩ = y), with S = 8c·y·mean(x); its risk is
  :math:`y^2\frac{d-1}{d^2(d+1)}\sum_i x_i^{-2}`. At d = 2 both vertices have exactly 4 times that risk.
* **Fixed teacher, d = 2.** GD's endpoint is ≈ β(min(2/η, S_GF)) with β(S) affine, so
  :math:`R(\eta)\approx\|\beta(\min(2/\eta, S_{GF}))-\beta^*\|^2` is constant for η < 2/S_GF, then a parabola
  in S = 2/η with its minimum at S(β*): it is U-shaped in η (on η ≤ 1/(4cyx_min)) iff
  :math:`S(\beta^*)\in(8c\,y\,x_{min}, S_{GF})`, with the minimum near η = 2/S(β*).

Symbols: ``beta`` a solution, ``beta_star`` the teacher, ``d`` dimension, the rest as in
:mod:`biasaudit.theory.eos_model`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.theory.eos_model import y_sym

__all__ = ["BAYES_RISK_TERM", "bayes_risk", "bayes_optimal_beta", "bayes_optimal_risk", "d2_vertex_risk_ratio",
           "u_shape_condition", "fixed_teacher_risk_curve"]

_x, _b = sp.symbols("x beta", positive=True)
d_sym = sp.Symbol("d", integer=True, positive=True)

#: One summand of E R(β).
BAYES_RISK_TERM = _b**2 - 2 * y_sym / d_sym * _b / _x + 2 * y_sym**2 / (d_sym * (d_sym + 1)) / _x**2
#: Its minimizer in β (per coordinate).
BAYES_OPTIMUM = sp.solve(sp.diff(BAYES_RISK_TERM, _b), _b)[0]

_risk_term = sp.lambdify((_x, _b, y_sym, d_sym), BAYES_RISK_TERM, "numpy")
_optimum = sp.lambdify((_x, y_sym, d_sym), BAYES_OPTIMUM, "numpy")


def bayes_risk(x, y, beta) -> np.ndarray:
    """E R(β) under the uniform-simplex teacher (batched over leading axes of β)."""
    x = np.asarray(x, float)
    return np.sum(_risk_term(x, np.asarray(beta, float), y, x.size), axis=-1)


def bayes_optimal_beta(x, y) -> np.ndarray:
    """:math:`\\bar\\beta_i = y/(d x_i)`."""
    x = np.asarray(x, float)
    return _optimum(x, y, x.size) * np.ones_like(x)


def bayes_optimal_risk(x, y) -> float:
    return float(bayes_risk(x, y, bayes_optimal_beta(x, y)))


def d2_vertex_risk_ratio(x, y) -> tuple[float, float]:
    """E R at each vertex divided by the optimal risk (both exactly 4 at d = 2)."""
    x = np.asarray(x, float)
    opt = bayes_optimal_risk(x, y)
    return tuple(float(bayes_risk(x, y, np.eye(x.size)[j] * y / x[j]) / opt) for j in range(x.size))


def u_shape_condition(x, y, beta_star, s_gf, c=0.5) -> bool:
    """d = 2: R(η) is U-shaped iff :math:`8cyx_{min} < S(\\beta^*) < S_{GF}`."""
    x = np.asarray(x, float)
    s_star = float(np.sum(8 * c * x**2 * np.asarray(beta_star, float)))
    return bool(8 * c * y * x.min() < s_star < s_gf)


def fixed_teacher_risk_curve(x, y, beta_star, s_gf, eta, c=0.5) -> np.ndarray:
    """The approximation :math:`\\|\\beta(\\min(2/\\eta, S_{GF})) - \\beta^*\\|^2` at d = 2 (vectorized in η)."""
    from biasaudit.theory.eos_minimizers import d2_beta_of_sharpness

    x = np.asarray(x, float)
    S = np.minimum(2.0 / np.asarray(eta, float), s_gf)
    return np.sum((d2_beta_of_sharpness(x, y, S, c) - np.asarray(beta_star, float)) ** 2, axis=-1)
