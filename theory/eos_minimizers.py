r"""Minimal-norm and minimal-sharpness solutions, the Pareto front and the linearly stable minima (paper 2).

On the simplex :math:`P = \{\beta \ge 0 : \langle x,\beta\rangle = y\}` (β = w⊙w):

* ‖w‖₂² = ‖β‖₁ is linear on P, so it is smallest at a vertex: :math:`v_{\arg\max x}`, with
  ‖β‖₁ = y/x_max and S = 8c·y·x_max. ‖w‖₁ = Σ√β_i is concave on P, so it too is smallest at a vertex,
  :math:`\sqrt{y/x_j}`, again at argmax x.
* S(β) = 8cΣx_i²β_i is linear on P: smallest at :math:`v_{\arg\min x}`, S_min = 8c·y·x_min, ‖β‖₁ = y/x_min.
* ‖β‖₂ is smallest at the interior point :math:`\beta = y\,x/\|x\|^2`.
* The minimizer sets (faces ``{j : x_j = x_max}`` and ``{j : x_j = x_min}``) are disjoint iff
  x_max > x_min; with x constant every point of P is both.
* Pareto front :math:`N^*(s) = \min\{\|\beta\|_1 : \beta\in P, S(\beta)\le s\}`: the lower convex hull of the
  vertex points :math:`(8c\,y\,x_j,\ y/x_j)`; as :math:`N = 8c y^2/S` is convex every vertex lies on it, so with
  x sorted and :math:`s\in[8cyx_{(j)}, 8cyx_{(j+1)}]`

  .. math:: N^*(s) = y\frac{x_{(j)}+x_{(j+1)}}{x_{(j)}x_{(j+1)}} - \frac{s}{8c\,x_{(j)}x_{(j+1)}} .

  (c = 1/2 gives s/(4 x_(j) x_(j+1)), the form of docs/specification/eos.md.) For s ≥ 8cyx_max, N* = y/x_max; for s < 8cyx_min, +inf.
* d = 2: β is affine in S, :math:`\beta_1 = (x_2y - S/8c)/(x_1(x_2-x_1))`,
  :math:`\beta_2 = (S/8c - x_1y)/(x_2(x_2-x_1))`.
* Linearly stable minima for step η: :math:`\{\beta\in P: S(\beta)\le 2/\eta\}`; non-empty iff
  :math:`\eta\le 1/(4c\,y\,x_{min})`, contains the minimal-norm vertex iff :math:`\eta\le 1/(4c\,y\,x_{max})`
  (1/(2 y x_min) and 1/(2 y x_max) at c = 1/2).
* Deep shared weights β = w^L (L ≥ 3): :math:`S = 2cL^2\sum_i x_i^2\beta_i^{2-2/L}`, strictly convex on P,
  minimized at the interior point :math:`\beta_i \propto x_i^{-L/(L-2)}`.

Symbols (beside those of :mod:`biasaudit.theory.eos_model`): ``s_sym`` a sharpness level, ``N_sym`` ‖β‖₁
(= ‖w‖₂²), ``N_star`` the front N*(s), ``N_min``/``W_min``/``S_min`` the least ‖β‖₁, ‖w‖₁ and S on P,
``x_norm2`` ‖x‖², ``eta_j`` the largest step at which the vertex v_j is linearly stable, ``L_sym`` the depth,
``kappa`` a normalising constant. Vertex indices returned to users are 1-based.

Formulas: :data:`VERTEX_NORM`, :data:`VERTEX_W_L1`, :data:`VERTEX_SHARPNESS` (the vertex v_j's ‖β‖₁, ‖w‖₁ and S),
:data:`MIN_L2`, :data:`DISJOINT`, :data:`PARETO`, :data:`D2_BETA_1`, :data:`D2_BETA_2`, :data:`STABLE_ETA`,
:data:`DEEP_SHARPNESS`, :data:`DEEP_MIN_WEIGHT`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.plumbing import InputError, positive_int, positive_scalar
from biasaudit.theory.eos_model import (S_sym, beta_i, c_sym, eta_sym, x_i, x_j, x_k, x_max, x_min, xs,
                                        y_sym)
from biasaudit.theory.formula import Formula

__all__ = [
    "s_sym", "eta_sym", "N_sym", "N_star", "N_min", "W_min", "S_min", "x_norm2", "eta_j", "L_sym", "kappa", "disjoint",
    "VERTEX_NORM", "VERTEX_W_L1", "VERTEX_SHARPNESS", "MIN_L2", "DISJOINT", "PARETO", "D2_BETA_1", "D2_BETA_2",
    "STABLE_ETA", "DEEP_SHARPNESS", "DEEP_MIN_WEIGHT",
    "PARETO_SEGMENT", "D2_BETA", "STABLE_ETA_MAX", "MIN_NORM_STABLE_ETA_MAX", "DEEP_SHARPNESS_TERM",
    "min_norm_face", "min_sharpness_face", "min_norm_vertex", "min_sharpness_vertex", "min_norm_solution",
    "min_sharpness_solution", "min_l2_beta", "minimizers_disjoint", "pareto_breakpoints", "pareto_front",
    "d2_beta_of_sharpness", "stable_eta_max", "min_norm_stable_eta_max", "deep_sharpness",
    "deep_min_sharpness_beta",
]

# ---- symbols (the rest in eos_model) -------------------------------------------------------------------------
s_sym, N_sym, N_min, W_min, S_min, x_norm2, eta_j, kappa = sp.symbols(
    "s N N_min W_min S_min |x|^2 eta_j kappa", positive=True)
N_star = sp.Symbol("N^*", positive=True)
disjoint = sp.Symbol("disjoint")  # the min-norm and min-sharpness solution sets are disjoint
L_sym = sp.Symbol("L", integer=True, positive=True)
x1, x2 = xs(2)
# Older names, kept for the symbolic tests.
xj, xk, _x, _b = x_j, x_k, x_i, beta_i

# ---- formulas ------------------------------------------------------------------------------------------------
#: The vertex v_j = (y/x_j) e_j of P: its ‖β‖₁ = ‖w‖₂², its ‖w‖₁ and its sharpness.
VERTEX_NORM = Formula("vertex_norm", y_sym / x_j, (x_j, y_sym))
VERTEX_W_L1 = Formula("vertex_w_l1", sp.Pow(y_sym / x_j, sp.S.Half, evaluate=False), (x_j, y_sym))
VERTEX_SHARPNESS = Formula("vertex_sharpness", 8 * c_sym * y_sym * x_j, (x_j, y_sym, c_sym))
#: argmin ‖β‖₂ on P, coordinate i: y x_i/‖x‖².
MIN_L2 = Formula("min_l2_beta", y_sym * x_i / x_norm2, (x_i, y_sym, x_norm2))
#: The min-norm face {x_j = x_max} and the min-sharpness face {x_j = x_min} are disjoint iff x_max > x_min.
DISJOINT = Formula("minimizers_disjoint", sp.Gt(x_max, x_min, evaluate=False), (x_max, x_min))
#: N*(s) on the segment between sorted x_(j) = x_j and x_(j+1) = x_k.
PARETO = Formula("pareto_segment", y_sym * (x_j + x_k) / (x_j * x_k) - s_sym / (8 * c_sym * x_j * x_k),
                 (x_j, x_k, y_sym, c_sym, s_sym))
PARETO_SEGMENT = PARETO.expr
#: d = 2: β(S) on P.
D2_BETA_1 = Formula("d2_beta_1", (x2 * y_sym - S_sym / (8 * c_sym)) / (x1 * (x2 - x1)), (x1, x2, y_sym, c_sym, S_sym))
D2_BETA_2 = Formula("d2_beta_2", (S_sym / (8 * c_sym) - x1 * y_sym) / (x2 * (x2 - x1)), (x1, x2, y_sym, c_sym, S_sym))
D2_BETA = (D2_BETA_1.expr, D2_BETA_2.expr)
#: Largest η at which the vertex v_j is linearly stable (its S = 8 c y x_j ≤ 2/η): at x_min, the largest η with a
#: linearly stable minimum; at x_max, the min-norm vertex's.
STABLE_ETA = Formula("stable_eta_max", 1 / (4 * c_sym * y_sym * x_j), (x_j, y_sym, c_sym))
STABLE_ETA_MAX = STABLE_ETA.expr  # evaluated at x_min
MIN_NORM_STABLE_ETA_MAX = STABLE_ETA_MAX  # evaluated at x_max
#: One summand of the deep sharpness, 2 c L^2 x^2 beta^(2 - 2/L).
DEEP_SHARPNESS = Formula("deep_sharpness_term", 2 * c_sym * L_sym**2 * x_i**2 * beta_i ** (2 - 2 / L_sym),
                         (x_i, beta_i, c_sym, L_sym))
DEEP_SHARPNESS_TERM = DEEP_SHARPNESS.expr
#: The deep minimal-sharpness point is β_i = κ x_i^(−L/(L−2)), κ putting it on P.
DEEP_MIN_WEIGHT = Formula("deep_min_sharpness_weight", x_i ** (-L_sym / (L_sym - 2)), (x_i, L_sym))


def _face(values: np.ndarray, target: float) -> tuple[int, ...]:
    """1-based indices j with values[j] == target (exact ties: the minimizer is the face they span)."""
    return tuple(int(j) + 1 for j in np.flatnonzero(values == target))


def min_norm_face(x: np.ndarray) -> tuple[int, ...]:
    r"""1-based indices of the vertices minimizing :math:`\|\beta\|_1` (and :math:`\|w\|_1`): those with
    :math:`x_j = x_{max}`.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.

    Returns
    -------
    tuple of int
        The indices j, ascending (more than one on a tie: the minimizer is the face they span).

    Examples
    --------
    >>> import numpy as np
    >>> min_norm_face(np.array([1.0, 4.0, 2.0, 4.0]))
    (2, 4)
    """
    return _face(x, x.max())


def min_sharpness_face(x: np.ndarray) -> tuple[int, ...]:
    """1-based indices of the vertices minimizing S: those with :math:`x_j = x_{min}`.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.

    Returns
    -------
    tuple of int
        The indices j, ascending.

    Examples
    --------
    >>> import numpy as np
    >>> min_sharpness_face(np.array([1.0, 1.0, 2.0]))
    (1, 2)
    """
    return _face(x, x.min())


def min_norm_vertex(x: np.ndarray) -> int:
    r"""The 1-based index j of the minimal-:math:`\|\beta\|_1` vertex :math:`v_j`: :math:`x_j = x_{max}` (the first
    such j on a tie).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.

    Returns
    -------
    int
        j.

    Examples
    --------
    >>> import numpy as np
    >>> min_norm_vertex(np.array([1.0, 2.0, 4.0]))
    3
    """
    return min_norm_face(x)[0]


def min_sharpness_vertex(x: np.ndarray) -> int:
    """The 1-based index j of the minimal-sharpness vertex :math:`v_j`: :math:`x_j = x_{min}` (the first such j on a
    tie).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.

    Returns
    -------
    int
        j.

    Examples
    --------
    >>> import numpy as np
    >>> min_sharpness_vertex(np.array([1.0, 2.0, 4.0]))
    1
    """
    return min_sharpness_face(x)[0]


def min_norm_solution(x, y, c=0.5) -> dict:
    r"""The minimal-:math:`\|\beta\|_1` vertex and its values (:math:`\|\beta\|_1 = y/x_{max}`,
    :math:`\|w\|_1 = \sqrt{y/x_{max}}`, :math:`S = 8cyx_{max}`).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    dict
        ``vertex`` (j, 1-based), ``beta`` (:math:`v_j`, shape (d,)), ``beta_l1``, ``w_l1`` and ``sharpness``.

    Examples
    --------
    >>> import numpy as np
    >>> s = min_norm_solution(np.array([1.0, 2.0, 4.0]), 2.0)
    >>> s["vertex"], s["beta"].tolist(), float(s["beta_l1"]), float(s["sharpness"])
    (3, [0.0, 0.0, 0.5], 0.5, 32.0)
    """
    j = min_norm_vertex(x) - 1
    beta = np.zeros_like(x)
    beta[j] = VERTEX_NORM(x[j], y)
    return {"vertex": j + 1, "beta": beta, "beta_l1": VERTEX_NORM(x[j], y), "w_l1": float(VERTEX_W_L1(x[j], y)),
            "sharpness": VERTEX_SHARPNESS(x[j], y, c)}


def min_sharpness_solution(x, y, c=0.5) -> dict:
    """The minimal-sharpness vertex and its values: ``vertex`` j (1-based, :math:`x_j = x_{min}`),
    ``beta`` = :math:`(y/x_{min}) e_j`, ``beta_l1`` = :math:`y/x_{min}` and ``sharpness``
    :math:`S_{min} = 8cyx_{min}`.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    dict
        ``vertex``, ``beta`` (shape (d,)), ``beta_l1`` and ``sharpness``.

    Examples
    --------
    >>> import numpy as np
    >>> s = min_sharpness_solution(np.array([1.0, 2.0, 4.0]), 2.0)
    >>> s["vertex"], s["beta"].tolist(), float(s["beta_l1"]), float(s["sharpness"])
    (1, [2.0, 0.0, 0.0], 2.0, 8.0)
    """
    j = min_sharpness_vertex(x) - 1
    beta = np.zeros_like(x)
    beta[j] = VERTEX_NORM(x[j], y)
    return {"vertex": j + 1, "beta": beta, "beta_l1": VERTEX_NORM(x[j], y), "sharpness": VERTEX_SHARPNESS(x[j], y, c)}


def min_l2_beta(x, y) -> np.ndarray:
    r"""argmin :math:`\|\beta\|_2` on P: :math:`y x/\|x\|^2` (interior, as x > 0).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.

    Returns
    -------
    numpy.ndarray
        β, shape (d,).

    Examples
    --------
    >>> import numpy as np
    >>> (min_l2_beta(np.array([1.0, 2.0, 4.0]), 2.0) * 21).round(12).tolist()
    [2.0, 4.0, 8.0]
    """
    return MIN_L2(x, y, x @ x)


def minimizers_disjoint(x) -> bool:
    """The min-norm and min-sharpness solution sets are disjoint iff :math:`x_{max} > x_{min}` (:data:`DISJOINT`).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.

    Returns
    -------
    bool
        Whether they are disjoint.

    Examples
    --------
    >>> import numpy as np
    >>> minimizers_disjoint(np.array([1.0, 2.0])), minimizers_disjoint(np.array([3.0, 3.0]))
    (True, False)
    """
    return bool(DISJOINT(x.max(), x.min()))


def pareto_breakpoints(x, y, c=0.5) -> np.ndarray:
    """Rows :math:`(s, N^*)` at the distinct vertices, sorted by s: the breakpoints of the piecewise-linear front.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    numpy.ndarray
        Shape (k, 2) with k the number of distinct entries of x: :math:`(8cyx_j, y/x_j)`.

    Examples
    --------
    >>> import numpy as np
    >>> pareto_breakpoints(np.array([1.0, 2.0, 4.0]), 1.0).tolist()
    [[4.0, 1.0], [8.0, 0.5], [16.0, 0.25]]
    """
    xu = np.unique(x)
    return np.column_stack([VERTEX_SHARPNESS(xu, y, c), VERTEX_NORM(xu, y)])


def pareto_front(x, y, s, c=0.5) -> np.ndarray:
    r""":math:`N^*(s) = \min\{\|\beta\|_1: \beta\in P, S(\beta)\le s\}` (vectorized in s): inf below
    :math:`8cyx_{min}`, :math:`y/x_{max}` above :math:`8cyx_{max}`, linear (:data:`PARETO`) in between.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    s : array_like
        Sharpness bounds s, any shape.
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    numpy.ndarray
        :math:`N^*(s)`, the shape of ``s``.

    Examples
    --------
    >>> import numpy as np
    >>> pareto_front(np.array([1.0, 2.0, 4.0]), 1.0, [3.0, 4.0, 6.0, 16.0, 20.0]).tolist()
    [inf, 1.0, 0.75, 0.25, 0.25]
    """
    s = np.asarray(s, dtype=float)
    xu = np.unique(x)
    out = np.full(s.shape, np.inf)
    edges = VERTEX_SHARPNESS(xu, y, c)
    out[s >= edges[-1]] = VERTEX_NORM(xu[-1], y)
    if xu.size == 1:
        return out
    j = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, xu.size - 2)
    inside = (s >= edges[0]) & (s < edges[-1])
    out[inside] = PARETO(xu[j[inside]], xu[j[inside] + 1], y, c, s[inside])
    return out


def d2_beta_of_sharpness(x, y, S, c=0.5) -> np.ndarray:
    r"""d = 2: the point of P with sharpness S (rows :math:`(\beta_1, \beta_2)`, :data:`D2_BETA_1` and
    :data:`D2_BETA_2`); needs :math:`x_1 \ne x_2`.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (2,), two distinct entries > 0.
    y : float
        The label, > 0.
    S : array_like
        Sharpness values, any shape.
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    numpy.ndarray
        β(S), shape ``S.shape + (2,)``.

    Raises
    ------
    InputError
        If ``x`` is not two distinct entries.

    Examples
    --------
    >>> import numpy as np
    >>> d2_beta_of_sharpness(np.array([1.0, 2.0]), 1.0, [4.0, 6.0, 8.0]).tolist()
    [[1.0, 0.0], [0.5, 0.25], [0.0, 0.5]]
    """
    if x.size != 2 or x[0] == x[1]:
        raise InputError("x", "must have two distinct entries for the affine beta(S)", x)
    S = np.asarray(S, float)
    b1, b2 = D2_BETA_1(x[0], x[1], y, c, S), D2_BETA_2(x[0], x[1], y, c, S)
    return np.stack(np.broadcast_arrays(b1, b2), axis=-1)


def stable_eta_max(x, y, c=0.5) -> float:
    """Largest η for which a linearly stable minimum exists: :math:`1/(4cyx_{min})`.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    float
        η.

    Examples
    --------
    >>> import numpy as np
    >>> stable_eta_max(np.array([1.0, 2.0, 4.0]), 1.0)
    0.5
    """
    return float(STABLE_ETA(x.min(), y, c))


def min_norm_stable_eta_max(x, y, c=0.5) -> float:
    """Largest η for which the minimal-norm vertex is linearly stable: :math:`1/(4cyx_{max})`.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    float
        η.

    Examples
    --------
    >>> import numpy as np
    >>> min_norm_stable_eta_max(np.array([1.0, 2.0, 4.0]), 1.0)
    0.125
    """
    return float(STABLE_ETA(x.max(), y, c))


def deep_sharpness(x, beta, L, c=0.5):
    r"""On-manifold sharpness of the depth-L shared model, :math:`2cL^2\sum_i x_i^2\beta_i^{2-2/L}`.

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    beta : array_like
        β, shape (..., d), entries >= 0.
    L : int
        The depth, >= 2 (L = 2 is :math:`S(\beta) = 8c\sum_i x_i^2\beta_i`).
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    numpy.ndarray or float
        The sharpness, shape (...).

    Raises
    ------
    InputError
        If ``L`` is not an integer >= 2.

    Examples
    --------
    >>> float(deep_sharpness([1.0, 2.0], [0.5, 0.25], 2))
    6.0
    """
    L = positive_int("L", L, minimum=2)
    return np.sum(DEEP_SHARPNESS(np.asarray(x, float), np.asarray(beta, float), c, L), axis=-1)


def deep_min_sharpness_beta(x, y, L) -> np.ndarray:
    r"""argmin of the deep sharpness on P (L ≥ 3): :math:`\beta_i\propto x_i^{-L/(L-2)}`, scaled to P.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    L : int
        The depth, >= 3.

    Returns
    -------
    numpy.ndarray
        β, shape (d,), with :math:`\langle x, \beta\rangle = y`.

    Raises
    ------
    InputError
        If ``L`` is not an integer >= 3 or ``y`` <= 0.

    Examples
    --------
    >>> import numpy as np
    >>> (deep_min_sharpness_beta(np.array([1.0, 2.0]), 1.0, 4) * 6).round(12).tolist()
    [4.0, 1.0]
    """
    L = positive_int("L", L, minimum=3)
    positive_scalar("y", y)
    b = DEEP_MIN_WEIGHT(x, L)
    return y * b / (x @ b)
