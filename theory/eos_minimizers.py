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

  (c = 1/2 gives the spec's s/(4 x_(j) x_(j+1)).) For s ≥ 8cyx_max, N* = y/x_max; for s < 8cyx_min, +inf.
* d = 2: β is affine in S, :math:`\beta_1 = (x_2y - S/8c)/(x_1(x_2-x_1))`,
  :math:`\beta_2 = (S/8c - x_1y)/(x_2(x_2-x_1))`.
* Linearly stable minima for step η: :math:`\{\beta\in P: S(\beta)\le 2/\eta\}`; non-empty iff
  :math:`\eta\le 1/(4c\,y\,x_{min})`, contains the minimal-norm vertex iff :math:`\eta\le 1/(4c\,y\,x_{max})`
  (1/(2 y x_min) and 1/(2 y x_max) at c = 1/2).
* Deep shared weights β = w^L (L ≥ 3): :math:`S = 2cL^2\sum_i x_i^2\beta_i^{2-2/L}`, strictly convex on P,
  minimized at the interior point :math:`\beta_i \propto x_i^{-L/(L-2)}`.

Symbols: ``x`` data point, ``y`` label, ``c`` loss factor, ``s``/``S`` sharpness, ``N`` ‖β‖₁, ``eta`` step,
``L`` depth. Vertex indices returned to users are 1-based.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.plumbing import InputError, positive_int, positive_scalar
from biasaudit.theory.eos_model import c_sym, y_sym

__all__ = [
    "PARETO_SEGMENT", "D2_BETA", "STABLE_ETA_MAX", "MIN_NORM_STABLE_ETA_MAX", "DEEP_SHARPNESS_TERM",
    "min_norm_face", "min_sharpness_face", "min_norm_vertex", "min_sharpness_vertex", "min_norm_solution",
    "min_sharpness_solution", "min_l2_beta", "minimizers_disjoint", "pareto_breakpoints", "pareto_front",
    "d2_beta_of_sharpness", "stable_eta_max", "min_norm_stable_eta_max", "deep_sharpness",
    "deep_min_sharpness_beta",
]

xj, xk, s_sym, S_sym, eta_sym = sp.symbols("x_j x_k s S eta", positive=True)
x1, x2 = sp.symbols("x1 x2", positive=True)
L_sym = sp.Symbol("L", integer=True, positive=True)
_x, _b = sp.symbols("x beta", positive=True)

#: N*(s) on the segment between sorted x_(j) = x_j and x_(j+1) = x_k.
PARETO_SEGMENT = y_sym * (xj + xk) / (xj * xk) - s_sym / (8 * c_sym * xj * xk)
#: d = 2: β(S) on P.
D2_BETA = ((x2 * y_sym - S_sym / (8 * c_sym)) / (x1 * (x2 - x1)), (S_sym / (8 * c_sym) - x1 * y_sym) / (x2 * (x2 - x1)))
#: Largest η with a linearly stable minimum (min S = 8 c y x_min ≤ 2/η), and the min-norm vertex's.
STABLE_ETA_MAX = 1 / (4 * c_sym * y_sym * _x)  # evaluated at x_min
MIN_NORM_STABLE_ETA_MAX = STABLE_ETA_MAX  # evaluated at x_max
#: One summand of the deep sharpness, 2 c L^2 x^2 beta^(2 - 2/L).
DEEP_SHARPNESS_TERM = 2 * c_sym * L_sym**2 * _x**2 * _b ** (2 - 2 / L_sym)

_pareto_segment = sp.lambdify((xj, xk, y_sym, c_sym, s_sym), PARETO_SEGMENT, "numpy")
_d2_beta = sp.lambdify((x1, x2, y_sym, c_sym, S_sym), D2_BETA, "numpy")
_stable_eta = sp.lambdify((_x, y_sym, c_sym), STABLE_ETA_MAX, "numpy")
_deep_term = sp.lambdify((_x, _b, c_sym, L_sym), DEEP_SHARPNESS_TERM, "numpy")


def _face(values: np.ndarray, target: float) -> tuple[int, ...]:
    """1-based indices j with values[j] == target (exact ties: the minimizer is the face they span)."""
    return tuple(int(j) + 1 for j in np.flatnonzero(values == target))


def min_norm_face(x: np.ndarray) -> tuple[int, ...]:
    """1-based indices of the vertices minimizing ‖β‖₁ (and ‖w‖₁): those with x_j = x_max."""
    return _face(x, x.max())


def min_sharpness_face(x: np.ndarray) -> tuple[int, ...]:
    """1-based indices of the vertices minimizing S: those with x_j = x_min."""
    return _face(x, x.min())


def min_norm_vertex(x: np.ndarray) -> int:
    return min_norm_face(x)[0]


def min_sharpness_vertex(x: np.ndarray) -> int:
    return min_sharpness_face(x)[0]


def min_norm_solution(x, y, c=0.5) -> dict:
    """The minimal-‖β‖₁ vertex and its values (‖β‖₁ = y/x_max, ‖w‖₁ = √(y/x_max), S = 8 c y x_max)."""
    j = min_norm_vertex(x) - 1
    beta = np.zeros_like(x)
    beta[j] = y / x[j]
    return {"vertex": j + 1, "beta": beta, "beta_l1": y / x[j], "w_l1": float(np.sqrt(y / x[j])),
            "sharpness": 8 * c * y * x[j]}


def min_sharpness_solution(x, y, c=0.5) -> dict:
    j = min_sharpness_vertex(x) - 1
    beta = np.zeros_like(x)
    beta[j] = y / x[j]
    return {"vertex": j + 1, "beta": beta, "beta_l1": y / x[j], "sharpness": 8 * c * y * x[j]}


def min_l2_beta(x, y) -> np.ndarray:
    """argmin ‖β‖₂ on P: :math:`y x/\\|x\\|^2` (interior, as x > 0)."""
    return y * x / (x @ x)


def minimizers_disjoint(x) -> bool:
    """The min-norm and min-sharpness solution sets are disjoint iff x_max > x_min."""
    return bool(x.max() > x.min())


def pareto_breakpoints(x, y, c=0.5) -> np.ndarray:
    """Rows (s, N*) at the distinct vertices, sorted by s: the breakpoints of the piecewise-linear front."""
    xu = np.unique(x)
    return np.column_stack([8 * c * y * xu, y / xu])


def pareto_front(x, y, s, c=0.5) -> np.ndarray:
    """:math:`N^*(s)` (vectorized in s): inf below 8cyx_min, y/x_max above 8cyx_max."""
    s = np.asarray(s, dtype=float)
    xu = np.unique(x)
    out = np.full(s.shape, np.inf)
    out[s >= 8 * c * y * xu[-1]] = y / xu[-1]
    if xu.size == 1:
        return out
    edges = 8 * c * y * xu
    j = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, xu.size - 2)
    inside = (s >= edges[0]) & (s < edges[-1])
    out[inside] = _pareto_segment(xu[j[inside]], xu[j[inside] + 1], y, c, s[inside])
    return out


def d2_beta_of_sharpness(x, y, S, c=0.5) -> np.ndarray:
    """d = 2: the point of P with sharpness S (rows (β₁, β₂)); needs x₁ ≠ x₂."""
    if x.size != 2 or x[0] == x[1]:
        raise InputError("x", "must have two distinct entries for the affine beta(S)", x)
    b1, b2 = _d2_beta(x[0], x[1], y, c, np.asarray(S, float))
    return np.stack(np.broadcast_arrays(b1, b2), axis=-1)


def stable_eta_max(x, y, c=0.5) -> float:
    """Largest η for which a linearly stable minimum exists: 1/(4 c y x_min)."""
    return float(_stable_eta(x.min(), y, c))


def min_norm_stable_eta_max(x, y, c=0.5) -> float:
    """Largest η for which the minimal-norm vertex is linearly stable: 1/(4 c y x_max)."""
    return float(_stable_eta(x.max(), y, c))


def deep_sharpness(x, beta, L, c=0.5):
    """On-manifold sharpness of the depth-L shared model, :math:`2cL^2\\sum x_i^2\\beta_i^{2-2/L}`."""
    L = positive_int("L", L, minimum=2)
    return np.sum(_deep_term(np.asarray(x, float), np.asarray(beta, float), c, L), axis=-1)


def deep_min_sharpness_beta(x, y, L) -> np.ndarray:
    """argmin of the deep sharpness on P (L ≥ 3): :math:`\\beta_i\\propto x_i^{-L/(L-2)}`, scaled to P."""
    L = positive_int("L", L, minimum=3)
    positive_scalar("y", y)
    b = x ** (-L / (L - 2))
    return y * b / (x @ b)
