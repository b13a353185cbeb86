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

Symbols (beside those of :mod:`biasaudit.theory.eos_model` and :mod:`biasaudit.theory.eos_flow`): ``beta_bar_i``
the optimum, ``s_star`` the teacher's sharpness :math:`S(\beta^*)`, ``eta_best`` the η of the smallest risk,
``u_shaped`` "R(η) is U-shaped", ``bayes_risk_of`` the function E R, ``beta_sym``, ``v_j`` and ``beta_bar`` its
arguments (a point of P, a vertex, the optimum).

Formulas: :data:`BAYES_RISK` (one summand of E R), :data:`BAYES_OPT` (the optimum's coordinate),
:data:`OPTIMUM_SHARPNESS` (its sharpness), :data:`U_SHAPE` (the condition for a U) and :data:`U_ARGMIN` (where
its minimum sits).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.theory.eos_flow import s_gf_sym
from biasaudit.theory.eos_model import beta_i, c_sym, d_sym, on_manifold_sharpness, x_i, x_min, y_sym
from biasaudit.theory.formula import Formula

__all__ = ["beta_bar_i", "beta_bar", "beta_sym", "v_j", "s_star", "x_bar", "eta_best", "u_shaped", "bayes_risk_of",
           "BAYES_RISK", "BAYES_OPT", "OPTIMUM_SHARPNESS", "U_SHAPE", "U_ARGMIN", "BAYES_RISK_TERM", "BAYES_OPTIMUM",
           "bayes_risk", "bayes_optimal_beta", "bayes_optimal_risk", "d2_vertex_risk_ratio", "u_shape_condition",
           "fixed_teacher_risk_curve"]

# ---- symbols (the rest in eos_model and eos_flow) ------------------------------------------------------------
beta_bar_i, beta_bar, beta_sym, v_j = sp.symbols("betabar_i betabar beta v_j", positive=True)
s_star = sp.Symbol("S^*", positive=True)  # S(β*), the teacher's sharpness
x_bar = sp.Symbol("xbar", positive=True)  # mean(x)
eta_best = sp.Symbol("eta_best", positive=True)
u_shaped = sp.Symbol("U_shaped")  # R(η) is U-shaped
bayes_risk_of = sp.Function("ER", positive=True)  # E R(β)
# Older names, kept for the symbolic tests.
_x, _b = x_i, beta_i

# ---- formulas ------------------------------------------------------------------------------------------------
#: One summand of E R(β).
BAYES_RISK = Formula("bayes_risk_term",
                     beta_i**2 - 2 * y_sym / d_sym * beta_i / x_i + 2 * y_sym**2 / (d_sym * (d_sym + 1)) / x_i**2,
                     (x_i, beta_i, y_sym, d_sym))
BAYES_RISK_TERM = BAYES_RISK.expr
#: Its minimizer in β (per coordinate).
BAYES_OPT = Formula("bayes_optimal_beta", sp.solve(sp.diff(BAYES_RISK_TERM, beta_i), beta_i)[0], (x_i, y_sym, d_sym))
BAYES_OPTIMUM = BAYES_OPT.expr
#: The optimum's sharpness, 8c Σ x_i² y/(d x_i) = 8 c y mean(x).
OPTIMUM_SHARPNESS = Formula("bayes_optimum_sharpness", 8 * c_sym * y_sym * x_bar, (x_bar, y_sym, c_sym))
#: d = 2, fixed teacher: R(η) is U-shaped iff 8 c y x_min < S(β*) < S_GF ...
U_SHAPE = Formula("u_shape_condition", sp.And(sp.Lt(8 * c_sym * y_sym * x_min, s_star, evaluate=False),
                                              sp.Lt(s_star, s_gf_sym, evaluate=False)),
                  (x_min, y_sym, c_sym, s_star, s_gf_sym))
#: ... with its minimum near η = 2/S(β*).
U_ARGMIN = Formula("u_shape_argmin", 2 / s_star, (s_star,), "math")


def bayes_risk(x, y, beta) -> np.ndarray:
    r"""E R(β) under the uniform-simplex teacher (batched over leading axes of β).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    beta : array_like
        β, shape (..., d).

    Returns
    -------
    numpy.ndarray or float
        :math:`\sum_i\beta_i^2 - \frac{2y}{d}\sum_i\frac{\beta_i}{x_i} + \frac{2y^2}{d(d+1)}\sum_i\frac1{x_i^2}`,
        shape (...).

    Examples
    --------
    >>> round(float(bayes_risk([1.0, 2.0], 1.0, [0.5, 0.25])), 12)
    0.104166666667
    """
    x = np.asarray(x, float)
    return np.sum(BAYES_RISK(x, np.asarray(beta, float), y, x.size), axis=-1)


def bayes_optimal_beta(x, y) -> np.ndarray:
    r""":math:`\bar\beta_i = y/(d x_i)`, the minimizer of E R (:data:`BAYES_OPT`).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.

    Returns
    -------
    numpy.ndarray
        :math:`\bar\beta`, shape (d,).

    Examples
    --------
    >>> bayes_optimal_beta([1.0, 2.0], 1.0).tolist()
    [0.5, 0.25]
    """
    x = np.asarray(x, float)
    return BAYES_OPT(x, y, x.size) * np.ones_like(x)


def bayes_optimal_risk(x, y) -> float:
    r"""E R at the optimum :math:`\bar\beta`, :math:`y^2\frac{d-1}{d^2(d+1)}\sum_i x_i^{-2}`: the smallest Bayesian risk
    of any β.

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.

    Returns
    -------
    float
        :math:`E R(\bar\beta)`.

    Examples
    --------
    >>> round(bayes_optimal_risk([1.0, 2.0], 1.0), 12), round(1 / 12 * (1 + 1 / 4), 12)
    (0.104166666667, 0.104166666667)
    """
    return float(bayes_risk(x, y, bayes_optimal_beta(x, y)))


def d2_vertex_risk_ratio(x, y) -> tuple[float, float]:
    r"""E R at each vertex :math:`v_j = (y/x_j)e_j` divided by the optimal risk (both exactly 4 at d = 2).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.

    Returns
    -------
    tuple of float
        :math:`E R(v_j)/E R(\bar\beta)` for j = 1, …, d.

    Examples
    --------
    >>> [round(r, 12) for r in d2_vertex_risk_ratio([1.0, 2.0], 1.0)]
    [4.0, 4.0]
    """
    x = np.asarray(x, float)
    opt = bayes_optimal_risk(x, y)
    return tuple(float(bayes_risk(x, y, np.eye(x.size)[j] * y / x[j]) / opt) for j in range(x.size))


def u_shape_condition(x, y, beta_star, s_gf, c=0.5) -> bool:
    r"""d = 2: R(η) is U-shaped iff :math:`8cyx_{min} < S(\beta^*) < S_{GF}` (:data:`U_SHAPE`).

    Parameters
    ----------
    x : array_like
        The data point, shape (2,), entries > 0.
    y : float
        The label, > 0.
    beta_star : array_like
        The teacher :math:`\beta^*`, shape (2,).
    s_gf : float
        :math:`S_{GF}`, the sharpness of the gradient flow's limit.
    c : float
        The loss factor (default 1/2).

    Returns
    -------
    bool
        Whether the condition holds.

    Examples
    --------
    >>> u_shape_condition([1.0, 2.0], 1.0, [0.5, 0.25], s_gf=7.0), u_shape_condition([1.0, 2.0], 1.0, [0.5, 0.25], 5.0)
    (True, False)
    """
    x = np.asarray(x, float)
    return bool(U_SHAPE(x.min(), y, c, float(on_manifold_sharpness(x, np.asarray(beta_star, float), c)), s_gf))


def fixed_teacher_risk_curve(x, y, beta_star, s_gf, eta, c=0.5) -> np.ndarray:
    r"""The approximation :math:`R(\eta)\approx\|\beta(\min(2/\eta, S_{GF})) - \beta^*\|^2` at d = 2 (vectorized in η).

    Parameters
    ----------
    x : array_like
        The data point, shape (2,), entries > 0.
    y : float
        The label, > 0.
    beta_star : array_like
        The teacher :math:`\beta^*`, shape (2,).
    s_gf : float
        :math:`S_{GF}`.
    eta : array_like
        Steps η > 0, any shape.
    c : float
        The loss factor (default 1/2).

    Returns
    -------
    numpy.ndarray
        R(η), the shape of ``eta``.

    Examples
    --------
    >>> fixed_teacher_risk_curve([1.0, 2.0], 1.0, [0.5, 0.25], 6.0, [0.1, 1 / 3, 1.0]).tolist()
    [0.0, 0.0, 1.25]
    """
    from biasaudit.theory.eos_minimizers import d2_beta_of_sharpness

    x = np.asarray(x, float)
    S = np.minimum(2.0 / np.asarray(eta, float), s_gf)
    return np.sum((d2_beta_of_sharpness(x, y, S, c) - np.asarray(beta_star, float)) ** 2, axis=-1)
