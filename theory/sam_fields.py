r"""Reduced balanced per-coordinate fields of GD, l_inf-SAM and l2-SAM on a depth-L diagonal network.

Setting (paper 1, "Setting"): W = (w^(1), ..., w^(L)) in R^{L x d}, beta = w^(1) ⊙ ... ⊙ w^(L), one example
(mu, +1), margin z = <beta, mu>, logistic loss l(z) = log(1 + e^{-z}).  With a balanced state
w^(l) = w for every layer, the rescaled flow (d tau = -l'(z~) dt, z~ the perturbed margin) reduces to one
field per coordinate:

===========  ==================================================================================
algorithm    reduced field  w' = F(w)
===========  ==================================================================================
gd           mu * w^{L-1}
linf         mu * (w - rho * sign(w^{L-1}))^{L-1}            (= mu (w - rho)^{L-1} for w > 0)
l2           mu * (w - c_L mu w^{L-1} / T)^{L-1},  T = ||mu ⊙ w^{L-1}||_2
===========  ==================================================================================

``c_L = rho / sqrt(L)`` for the joint l2 normalisation (the norm over all L*d parameters) and ``c_L = rho``
for the per-layer normalisation.  Conventions: ``sign(0) = 0`` and, for l2, the zero-gradient case
``T = 0`` has ``eps = 0`` (so F = mu w^{L-1}).

Exact facts encoded here and checked symbolically in ``tests/test_sam_fields.py``:

1. the rescaled field is the SAM flow on the *linear* loss ``-<beta, mu>``
   (:func:`sam_flow_on_linear_loss` builds it on the full L x d parameter and it restricts to the reduced
   field on balanced states);
2. one discrete SAM step on the logistic loss is explicit Euler on that field with
   ``h_k = eta * sigma(-z~_k)`` (:func:`discrete_step` builds the step).

Symbols of paper 1
------------------
=========  ===========================================
``w``      one coordinate of the balanced layer weight
``mu``     the matching data coordinate (mu_j > 0)
``rho``    SAM radius
``T``      ||mu ⊙ w^{L-1}||_2 (l2 only)
``c_L``    effective l2 radius per layer
``L``      depth
``h``      the Euler step of one discrete step, ``eta sigma(-z~)``
=========  ===========================================

Each field is a :class:`~biasaudit.theory.formula.Formula` lambdified once per algorithm, depth and normalisation;
:data:`SYMBOLS` holds the symbols the claims about the setting are stated in.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Callable

import numpy as np
import sympy as sp

from biasaudit.plumbing import choice, positive_int
from biasaudit.theory.formula import Formula

__all__ = [
    "ALGORITHMS",
    "NORMALIZATIONS",
    "ReducedField",
    "reduced_field",
    "effective_radius",
    "sam_flow_on_linear_loss",
    "discrete_step",
    "w",
    "mu",
    "rho",
    "T",
    "tau",
    "L",
    "h",
    "F",
    "EULER_STEP",
    "SYMBOLS",
]

ALGORITHMS = ("gd", "linf", "l2")
NORMALIZATIONS = ("joint", "layer")

w = sp.Symbol("w", real=True)
mu = sp.Symbol("mu", positive=True)
rho = sp.Symbol("rho", positive=True)
T = sp.Symbol("T", nonnegative=True)
tau = sp.Symbol("tau", nonnegative=True)
L = sp.Symbol("L", integer=True, positive=True)
h = sp.Symbol("h", positive=True)  # the Euler step of one discrete step, eta sigma(-z~)
F = sp.Function("F")(w)  # the reduced field at w

#: One discrete SAM step is explicit Euler on the reduced field (``sam.flow.euler_step``).
EULER_STEP = Formula("euler_step", w + h * F, (w, h, F))

#: The symbols of the statements about the setting: the reduced fields, the flows and the discrete algorithms.
SYMBOLS = {
    "w": w, "mu": mu, "rho": rho, "T": T, "tau": tau, "L": L, "h": h, "F(w)": F,
    "alpha": sp.Symbol("alpha", positive=True),
    "eta": sp.Symbol("eta", positive=True),                       # step size
    "z~": sp.Symbol("z~"),                                        # the perturbed margin
    "epsilon": sp.Symbol("epsilon"),                              # SAM's perturbation
    "L_lin": sp.Function("L_lin"),                                # the linear loss -<beta, mu>
    "w_{k+1}": sp.Symbol("w_{k+1}"),                              # the next iterate
    "w^(l)(0)": sp.Symbol("w^(l)(0)"), "w^(l)(t)": sp.Symbol("w^(l)(t)"), "w^(1)(t)": sp.Symbol("w^(1)(t)"),
    "w_j^(l)(0)": sp.Symbol("w_j^(l)(0)"), "w_j^(l)(t)": sp.Symbol("w_j^(l)(t)"),
    "gap(eta)": sp.Symbol("gap(eta)"), "gap(eta/2)": sp.Symbol("gap(eta/2)"),  # distance to the flow
}


def effective_radius(rho_value, depth: int, normalization: str = "joint"):
    """``c_L``: ``rho/sqrt(L)`` (joint l2 norm over all L*d parameters) or ``rho`` (per-layer).

    The one definition of c_L: :func:`biasaudit.theory.sam_l2.c_L` (validated), the sympy statement
    ``sam_l2.FORMULAS["c_joint"]``, the numerics and the claims all call this function. ``rho_value`` and
    ``depth`` may be sympy expressions.

    Parameters
    ----------
    rho_value : float or sympy.Expr
        The SAM radius ρ.
    depth : int or sympy.Expr
        The depth L.
    normalization : str
        ``"joint"`` (the default) or ``"layer"``.

    Returns
    -------
    float or sympy.Expr
        :math:`c_L`.

    Raises
    ------
    InputError
        If ``normalization`` is neither ``"joint"`` nor ``"layer"``.

    Examples
    --------
    >>> float(effective_radius(0.5, 4)), effective_radius(0.5, 4, "layer"), effective_radius(rho, L)
    (0.25, 0.5, rho/sqrt(L))
    """
    choice("normalization", normalization, NORMALIZATIONS)
    if normalization == "layer":
        return rho_value
    if isinstance(rho_value, sp.Basic):
        return rho_value / sp.sqrt(depth)
    return rho_value / np.sqrt(depth)


@dataclass(frozen=True)
class ReducedField:
    r"""The per-coordinate field ``expr`` (sympy, in ``w, mu, rho`` and ``T`` for l2) and its numpy version.

    ``numpy(w, mu, rho)`` evaluates the field for a whole vector ``w`` (it computes ``T`` itself) by calling
    ``formula``, the field lambdified once for this algorithm, depth and normalisation. Calling the field,
    ``field(w, mu, rho)``, is ``numpy`` on float arrays: one value per coordinate.

    Parameters
    ----------
    algorithm : str
        ``"gd"``, ``"linf"`` or ``"l2"``.
    depth : int
        The depth L.
    normalization : str
        ``"joint"`` or ``"layer"`` (l2-SAM's norm).
    expr : sympy.Expr
        F(w), the field of one coordinate.
    numpy : callable
        ``(w, mu, rho) -> F(w)`` on arrays of shape (d,).
    formula : Formula or None
        ``expr`` lambdified (over ``w, mu, rho`` and, for l2, :math:`T = \|\mu\odot w^{L-1}\|`).
    """

    algorithm: str
    depth: int
    normalization: str
    expr: sp.Expr
    numpy: Callable[[np.ndarray, np.ndarray, float], np.ndarray]
    formula: Formula | None = None

    def __call__(self, w_value, mu_value, rho_value):
        """The field at ``w`` for the data point ``mu`` and the radius ``rho``: ``numpy`` on float arrays, one value per
        coordinate."""
        return self.numpy(np.asarray(w_value, dtype=float), np.asarray(mu_value, dtype=float), float(rho_value))


def _field_expr(algorithm: str, depth: int, normalization: str) -> sp.Expr:
    L = depth
    if algorithm == "gd":
        return mu * w ** (L - 1)
    if algorithm == "linf":
        return mu * (w - rho * sp.sign(w ** (L - 1))) ** (L - 1)
    c = effective_radius(rho, L, normalization)
    return mu * (w - c * mu * w ** (L - 1) / T) ** (L - 1)


@cache
def reduced_field(algorithm: str, depth: int, normalization: str = "joint") -> ReducedField:
    """The reduced balanced field of ``algorithm`` at ``depth`` (cached: lambdified once per key).

    Parameters
    ----------
    algorithm : str
        ``"gd"``, ``"linf"`` or ``"l2"``.
    depth : int
        The depth L, >= 1.
    normalization : str
        l2-SAM's norm: ``"joint"`` (over all L·d parameters, the default) or ``"layer"`` (per layer); ignored by the
        others.

    Returns
    -------
    ReducedField
        The field's sympy expression and its numpy evaluation.

    Raises
    ------
    InputError
        If ``algorithm`` or ``normalization`` is not one of the names above, or ``depth`` < 1.

    Examples
    --------
    >>> field = reduced_field("linf", 2)
    >>> field.expr
    mu*(-rho*sign(w) + w)
    >>> field([1.0, 2.0], [1.0, 1.0], 0.5).tolist()
    [0.5, 1.5]
    """
    choice("algorithm", algorithm, ALGORITHMS)
    positive_int("depth", depth, minimum=1)
    choice("normalization", normalization, NORMALIZATIONS)
    expr = _field_expr(algorithm, depth, normalization)
    L = depth
    if algorithm == "l2":
        raw = Formula(f"reduced_field_l2_L{depth}_{normalization}", expr, (w, mu, rho, T))

        def evaluate(wv, muv, rhov):
            t = float(np.sqrt(np.sum((muv * wv ** (L - 1)) ** 2)))
            if t == 0.0:  # zero gradient: eps = 0, the GD field
                return muv * wv ** (L - 1)
            return np.broadcast_to(raw(wv, muv, rhov, t), np.broadcast(wv, muv).shape).astype(float)

    else:
        raw = Formula(f"reduced_field_{algorithm}_L{depth}", expr, (w, mu, rho))

        def evaluate(wv, muv, rhov):
            return np.broadcast_to(raw(wv, muv, rhov), np.broadcast(wv, muv).shape).astype(float)

    return ReducedField(algorithm, depth, normalization, expr, evaluate, raw)


def _layer_symbols(depth: int, d: int) -> sp.Matrix:
    return sp.Matrix(depth, d, lambda l, j: sp.Symbol(f"w{l + 1}_{j + 1}", real=True))


def _perturbation(grad: sp.Matrix, algorithm: str, normalization: str) -> sp.Matrix:
    """SAM's ``eps`` for a symbolic gradient (generic nonzero gradient; sign(0) = 0 for l_inf)."""
    depth, d = grad.shape
    if algorithm == "gd":
        return sp.zeros(depth, d)
    if algorithm == "linf":
        return grad.applyfunc(lambda g: rho * sp.sign(g))
    if normalization == "joint":
        return rho * grad / sp.sqrt(sum(g**2 for g in grad))
    return sp.Matrix(depth, d, lambda l, j: rho * grad[l, j] / sp.sqrt(sum(grad[l, k] ** 2 for k in range(d))))


def sam_flow_on_linear_loss(algorithm: str, depth: int, d: int, normalization: str = "joint"):
    """The SAM flow ``theta' = -grad L_lin(theta + eps)`` on the linear loss ``L_lin = -<beta, mu>``.

    ``eps`` is the algorithm's perturbation of ``grad L_lin`` (``sign`` with sign(0) = 0; l2 joint over all
    entries or per layer).

    Parameters
    ----------
    algorithm : str
        ``"gd"``, ``"linf"`` or ``"l2"``.
    depth : int
        The depth L, >= 1.
    d : int
        The number of coordinates.
    normalization : str
        l2-SAM's norm: ``"joint"`` (over all L·d parameters, the default) or ``"layer"`` (per layer); ignored by the
        others.

    Returns
    -------
    tuple of (sympy.Matrix, sympy.Matrix, sympy.Matrix)
        ``(Wsym, musym, field)``: the L x d parameter symbols, the data symbols (d x 1) and the L x d matrix of the
        field on the *full* (unbalanced) parameter.

    Raises
    ------
    InputError
        If ``algorithm`` or ``normalization`` is not one of the names above.

    Examples
    --------
    >>> W, m, field = sam_flow_on_linear_loss("gd", 2, 1)
    >>> field.T
    Matrix([[mu_1*w2_1, mu_1*w1_1]])
    """
    choice("algorithm", algorithm, ALGORITHMS)
    choice("normalization", normalization, NORMALIZATIONS)
    Wsym = _layer_symbols(depth, d)
    musym = sp.Matrix([sp.Symbol(f"mu_{j + 1}", positive=True) for j in range(d)])

    def beta_of(Wm):
        return [sp.prod([Wm[l, j] for l in range(depth)]) for j in range(d)]

    def loss(Wm):
        return -sum(b * m for b, m in zip(beta_of(Wm), musym))

    grad = sp.Matrix(depth, d, lambda l, j: sp.diff(loss(Wsym), Wsym[l, j]))
    eps = _perturbation(grad, algorithm, normalization)
    perturbed = Wsym + eps
    subs = {Wsym[l, j]: perturbed[l, j] for l in range(depth) for j in range(d)}
    field = grad.applyfunc(lambda g: -g.xreplace(subs))
    return Wsym, musym, field


def discrete_step(algorithm: str, depth: int, d: int, normalization: str = "joint"):
    """One SAM step on the logistic loss: ``theta - eta * grad l(z(theta + eps))``, symbolically.

    The perturbation direction of the logistic loss equals that of the linear loss, because l'(z) < 0 is a scalar
    factor.

    Parameters
    ----------
    algorithm : str
        ``"gd"``, ``"linf"`` or ``"l2"``.
    depth : int
        The depth L, >= 1.
    d : int
        The number of coordinates.
    normalization : str
        l2-SAM's norm: ``"joint"`` (over all L·d parameters, the default) or ``"layer"`` (per layer); ignored by the
        others.

    Returns
    -------
    tuple
        ``(Wsym, musym, eta, step, z_tilde)`` with ``step`` the L x d update ``theta_new - theta`` (sympy.Matrix)
        and ``z_tilde`` the perturbed margin.

    Raises
    ------
    InputError
        If ``algorithm`` or ``normalization`` is not one of the names above.

    Examples
    --------
    >>> W, m, eta, step, z_tilde = discrete_step("gd", 1, 1)
    >>> step[0, 0], z_tilde
    (eta*mu_1*exp(-mu_1*w1_1)/(1 + exp(-mu_1*w1_1)), mu_1*w1_1)
    """
    Wsym, musym, _ = sam_flow_on_linear_loss(algorithm, depth, d, normalization)
    eta = sp.Symbol("eta", positive=True)
    z = sp.Symbol("z", real=True)
    ell = sp.log(1 + sp.exp(-z))

    def margin(Wm):
        return sum(sp.prod([Wm[l, j] for l in range(depth)]) * musym[j] for j in range(d))

    zW = margin(Wsym)
    grad = sp.Matrix(depth, d, lambda l, j: sp.diff(ell, z).subs(z, zW) * sp.diff(zW, Wsym[l, j]))
    eps = _perturbation(grad, algorithm, normalization)
    perturbed = Wsym + eps
    subs = {Wsym[l, j]: perturbed[l, j] for l in range(depth) for j in range(d)}
    step = grad.applyfunc(lambda g: -eta * g.xreplace(subs))
    return Wsym, musym, eta, step, margin(perturbed)

