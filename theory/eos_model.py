r"""The shared-weight diagonal model of "Conflicting Biases at the Edge of Stability" (paper 2).

Model, one data point :math:`(x, y)`:

.. math::

    f_w(x) = \langle w \odot w, x\rangle = \langle \beta, x\rangle,\quad \beta = w\odot w \ge 0,\qquad
    r = \langle x, \beta\rangle - y,\qquad L(w) = c\, r^2 .

The default is :math:`c = 1/2` (``loss_factor``; the convention of docs/specification/eos.md); with :math:`c = 1`
every sharpness doubles and :math:`\eta_c` halves. Every formula below carries :math:`c`.

* Gradient :math:`\nabla L = 4c\, r\, g` with :math:`g = x\odot w` (so :math:`\nabla r = 2g`).
* Hessian :math:`\nabla^2 L = 2c\,(4 g g^\top + 2 r\,\mathrm{diag}(x))`.
* On the solution manifold :math:`M = \{w: \sum_i x_i w_i^2 = y\}` (:math:`r = 0`) the Hessian has rank 1
  and :math:`S = 8c\sum_i x_i^2\beta_i` (:math:`= 4\sum_i x_i^2 \beta_i` at :math:`c = 1/2`), linear in β.
* In β-space the solution set is the simplex :math:`P = \{\beta\ge 0: \langle x,\beta\rangle = y\}` with
  vertices :math:`v_j = (y/x_j) e_j`.

Conventions (see ``notes/eos.md``): x must be strictly positive and y > 0. Mixed-sign x makes M unbounded
(a hyperboloid) and zeros leave a coordinate free, so both are rejected with an :class:`InputError`; y <= 0
with x > 0 has no solution (y < 0) or only w = 0 (y = 0). Sharpness is reported both as the top algebraic
eigenvalue :math:`\lambda_{max}` (the definition of s_GF in docs/specification/eos.md) and as the operator norm
:math:`\max|\lambda|`; on M they coincide.

Symbols of paper 2
------------------
One set for paper 2: theory's formulas and the claims' statements are built over these (and those of
:mod:`biasaudit.theory.eos_flow`, :mod:`biasaudit.theory.eos_minimizers` and :mod:`biasaudit.theory.eos_risk`).

==================================  =============================================================
``x_i``, ``x_j``, ``x_k``           entries of the data point, :math:`x\in\mathbb R^d_{>0}`
``x_min``, ``x_max``                its smallest and largest entries
``y_sym``                           label, :math:`y > 0`
``w_i``, ``w_j``, ``w_k``           weights; ``beta_i`` :math:`= w_i^2`
``r_sym``                           residual :math:`\langle x,\beta\rangle - y`
``c_sym``                           loss factor (:math:`L = c r^2`, default 1/2)
``g_j``, ``g_k``                    entries of :math:`g = x\odot w`
``S_sym``                           sharpness (top Hessian eigenvalue; on M, :math:`S(\beta)`)
``eta_sym``                         GD's step η
``H_jk``, ``delta_jk``              Hessian entry, Kronecker delta (1 if j = k, else 0)
``i_sym``, ``j_sym``, ``k_sym``     coordinate indices, :math:`1\le i\le d` (``d_sym``)
==================================  =============================================================

Formulas (:class:`~biasaudit.theory.formula.Formula`): :data:`HESSIAN` (one entry of the Hessian) and
:data:`SHARPNESS` (one summand of the on-manifold sharpness).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from biasaudit.plumbing import InputError, as_finite_vector, finite_scalar, matching_length, positive_scalar
from biasaudit.theory.formula import Formula

__all__ = [
    "xs", "betas", "ws", "y_sym", "c_sym", "d_sym", "i_sym", "j_sym", "k_sym", "x_i", "x_j", "x_k", "x_min", "x_max",
    "beta_i", "w_i", "w_j", "w_k", "g_j", "g_k", "r_sym", "S_sym", "eta_sym", "H_jk", "delta_jk",
    "HESSIAN", "SHARPNESS", "SHARPNESS_TERM",
    "EosProblem", "eos_problem", "loss_expr", "hessian_expr", "on_manifold_sharpness_expr",
    "residual", "loss", "gradient", "hessian", "hessian_eigenvalues", "on_manifold_sharpness",
    "sharpness_term", "vertices", "project_to_manifold",
]

# ---- symbols ---------------------------------------------------------------------------------------------
y_sym = sp.Symbol("y", positive=True)
c_sym = sp.Symbol("c", positive=True)
d_sym = sp.Symbol("d", integer=True, positive=True)
i_sym, j_sym, k_sym = sp.symbols("i j k", integer=True, positive=True)
x_i, x_j, x_k, x_min, x_max = sp.symbols("x_i x_j x_k x_min x_max", positive=True)
beta_i = sp.Symbol("beta_i", positive=True)
w_i, w_j, w_k, g_j, g_k = sp.symbols("w_i w_j w_k g_j g_k", real=True)
r_sym = sp.Symbol("r", real=True)
S_sym = sp.Symbol("S", positive=True)
eta_sym = sp.Symbol("eta", positive=True)
H_jk = sp.Symbol("H_jk", real=True)
delta_jk = sp.Symbol("delta_jk", nonnegative=True)


def xs(d: int):
    """The sympy symbols x1, …, x_d (positive): the data point at an explicit dimension ``d``.

    Parameters
    ----------
    d : int
        The dimension.

    Returns
    -------
    tuple of sympy.Symbol
        ``(x1, …, xd)``.

    Examples
    --------
    >>> xs(3)
    (x1, x2, x3)
    """
    return sp.symbols(f"x1:{d + 1}", positive=True)


def betas(d: int):
    """The sympy symbols beta1, …, beta_d (nonnegative): β = w⊙w at an explicit dimension ``d``.

    Parameters
    ----------
    d : int
        The dimension.

    Returns
    -------
    tuple of sympy.Symbol
        ``(beta1, …, betad)``.

    Examples
    --------
    >>> betas(2)
    (beta1, beta2)
    """
    return sp.symbols(f"beta1:{d + 1}", nonnegative=True)


def ws(d: int):
    """The sympy symbols w1, …, w_d (real): the weights at an explicit dimension ``d``.

    Parameters
    ----------
    d : int
        The dimension.

    Returns
    -------
    tuple of sympy.Symbol
        ``(w1, …, wd)``.

    Examples
    --------
    >>> ws(2)
    (w1, w2)
    """
    return sp.symbols(f"w1:{d + 1}", real=True)


# ---- formulas --------------------------------------------------------------------------------------------
#: One entry of the Hessian of L = c r², :math:`H_{jk} = 2c(4g_jg_k + 2r\,x_j\delta_{jk})` (g = x⊙w): the matrix
#: 2c(4ggᵀ + 2r diag(x)), evaluated with broadcasting over (j, k) by :func:`hessian`.
HESSIAN = Formula("hessian_entry", 2 * c_sym * (4 * g_j * g_k + 2 * r_sym * x_j * delta_jk),
                  (g_j, g_k, r_sym, x_j, delta_jk, c_sym))
#: One summand of the on-manifold sharpness, S = Σ_i 8 c x_i² β_i (elementwise).
SHARPNESS = Formula("on_manifold_sharpness_term", 8 * c_sym * x_i**2 * beta_i, (x_i, beta_i, c_sym))
SHARPNESS_TERM = SHARPNESS.expr


def loss_expr(d: int):
    r""":math:`L = c(\sum_i x_i w_i^2 - y)^2` for explicit dimension ``d`` (symbolic tests).

    Parameters
    ----------
    d : int
        The dimension.

    Returns
    -------
    sympy.Expr
        L over :func:`xs`, :func:`ws`, ``y_sym`` and ``c_sym``.

    Examples
    --------
    >>> loss_expr(2)
    c*(w1**2*x1 + w2**2*x2 - y)**2
    """
    x, w = xs(d), ws(d)
    r = sum(xi * wi**2 for xi, wi in zip(x, w)) - y_sym
    return c_sym * r**2


def hessian_expr(d: int) -> sp.Matrix:
    r""":data:`HESSIAN` at explicit dimension ``d``: the matrix :math:`2c(4gg^\top + 2r\,\mathrm{diag}(x))` (to be
    compared with ``sp.hessian``).

    Parameters
    ----------
    d : int
        The dimension.

    Returns
    -------
    sympy.Matrix
        The d×d Hessian of L over :func:`xs` and :func:`ws`.

    Examples
    --------
    >>> import sympy as sp
    >>> sp.simplify(hessian_expr(2) - sp.hessian(loss_expr(2), ws(2)))
    Matrix([
    [0, 0],
    [0, 0]])
    """
    x, w = xs(d), ws(d)
    r = sum(xi * wi**2 for xi, wi in zip(x, w)) - y_sym
    return sp.Matrix(d, d, lambda a, b: HESSIAN.expr.subs({g_j: x[a] * w[a], g_k: x[b] * w[b], r_sym: r, x_j: x[a],
                                                           delta_jk: int(a == b)}))


def on_manifold_sharpness_expr(d: int):
    r""":data:`SHARPNESS` summed at an explicit dimension ``d``: :math:`S(\beta) = 8c\sum_i x_i^2\beta_i` over
    :func:`xs` and :func:`betas`.

    Parameters
    ----------
    d : int
        The dimension.

    Returns
    -------
    sympy.Expr
        S(β).

    Examples
    --------
    >>> on_manifold_sharpness_expr(2)
    8*beta1*c*x1**2 + 8*beta2*c*x2**2
    """
    x, b = xs(d), betas(d)
    return sum(SHARPNESS_TERM.subs({x_i: xi, beta_i: bi}) for xi, bi in zip(x, b))


# ---- validated problem -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class EosProblem:
    """Validated inputs of the shared-weight model (build it with :func:`eos_problem`).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), every entry > 0.
    y : float
        The label, > 0.
    w0 : numpy.ndarray or None
        The initial weights :math:`w(0)`, shape (d,), non-zero entries; ``None`` where none is needed.
    c : float
        The loss factor c of :math:`L = c r^2`, > 0.
    """

    x: np.ndarray
    y: float
    w0: np.ndarray | None
    c: float

    @property
    def d(self) -> int:
        """The dimension d (the length of ``x``)."""
        return self.x.size

    @property
    def beta0(self) -> np.ndarray:
        """β(0) = w0⊙w0 (needs ``w0``)."""
        return self.w0 * self.w0

    @property
    def r0(self) -> float:
        """The initial residual r(0) = ⟨x, β(0)⟩ − y: > 0 is a large init, <= 0 a small one (needs ``w0``)."""
        return float(self.x @ self.beta0 - self.y)


def eos_problem(x, y, w0=None, *, loss_factor: float = 0.5) -> EosProblem:
    r"""Validate ``(x, y, w0, loss_factor)``; every bad input raises :class:`InputError` naming it.

    Parameters
    ----------
    x : array_like
        The data point :math:`x\in\mathbb R^d`, every entry finite and > 0.
    y : float
        The label, finite and > 0.
    w0 : array_like, optional
        The initial weights :math:`w(0)`, length d, finite and non-zero.
    loss_factor : float
        c in :math:`L = c r^2`, > 0 (default 1/2).

    Returns
    -------
    EosProblem
        The validated inputs as float arrays and floats.

    Raises
    ------
    InputError
        If ``x`` has an entry <= 0 (or not finite), ``y`` <= 0, ``w0``'s length differs from ``x``'s or it has a zero
        entry, or ``loss_factor`` <= 0.

    Examples
    --------
    >>> p = eos_problem([1, 2], 1, w0=[0.5, 0.5])
    >>> p.d, p.beta0.tolist(), p.r0
    (2, [0.25, 0.25], -0.25)
    >>> eos_problem([1, 0], 1)
    Traceback (most recent call last):
    ...
    biasaudit.plumbing.inputs.InputError: x: must be strictly positive (a zero entry leaves its coordinate ...
    """
    xv = as_finite_vector("x", x)
    if np.any(xv <= 0):
        if np.any(xv < 0) and np.any(xv > 0):
            rule = "must be strictly positive (mixed signs make the solution manifold unbounded; not supported)"
        elif np.any(xv == 0):
            rule = "must be strictly positive (a zero entry leaves its coordinate unconstrained)"
        else:
            rule = "must be strictly positive (flip the signs of x and y for an all-negative x)"
        raise InputError("x", rule, x)
    yv = finite_scalar("y", y)
    if yv <= 0:
        raise InputError("y", "must be > 0 (with x > 0 there is no solution of <x, w*w> = y for y < 0, "
                              "and only w = 0 for y = 0)", y)
    c = positive_scalar("loss_factor", loss_factor)
    wv = None
    if w0 is not None:
        wv = matching_length("w0", as_finite_vector("w0", w0), xv.size, "x")
        if np.any(wv == 0):
            raise InputError("w0", "entries must be non-zero (a zero coordinate never moves under GF or GD)", w0)
    return EosProblem(xv, yv, wv, c)


# ---- numeric versions of the closed forms -------------------------------------------------------------
def residual(x: np.ndarray, y: float, w: np.ndarray) -> np.ndarray:
    r""":math:`r = \langle x, w\odot w\rangle - y` (``w`` may be batched on leading axes).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,).
    y : float
        The label.
    w : numpy.ndarray
        Weights, shape (..., d).

    Returns
    -------
    numpy.ndarray or float
        r, shape (...).

    Examples
    --------
    >>> import numpy as np
    >>> float(residual(np.array([1.0, 2.0]), 1.0, np.array([0.5, 0.5])))
    -0.25
    """
    return np.sum(x * w * w, axis=-1) - y


def loss(x, y, w, c=0.5):
    """:math:`L = c r^2`, one value per row of ``w`` (batched over its leading axes).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,).
    y : float
        The label.
    w : numpy.ndarray
        Weights, shape (..., d).
    c : float
        The loss factor (default 1/2).

    Returns
    -------
    numpy.ndarray or float
        L, shape (...).

    Examples
    --------
    >>> import numpy as np
    >>> float(loss(np.array([1.0, 2.0]), 1.0, np.array([0.5, 0.5])))
    0.03125
    """
    return c * residual(x, y, w) ** 2


def gradient(x, y, w, c=0.5):
    r""":math:`\nabla L = 4c\,r\,(x\odot w)`, the shape of ``w`` (batched over its leading axes).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,).
    y : float
        The label.
    w : numpy.ndarray
        Weights, shape (..., d).
    c : float
        The loss factor (default 1/2).

    Returns
    -------
    numpy.ndarray
        ∇L, shape (..., d).

    Examples
    --------
    >>> import numpy as np
    >>> gradient(np.array([1.0, 2.0]), 1.0, np.array([0.5, 0.5])).tolist()
    [-0.25, -0.5]
    """
    return 4 * c * residual(x, y, w)[..., None] * x * w


def hessian(x: np.ndarray, y: float, w: np.ndarray, c: float = 0.5) -> np.ndarray:
    r""":math:`2c(4gg^\top + 2r\,\mathrm{diag}(x))` (:data:`HESSIAN` over every (j, k)), batched over leading axes of
    ``w``.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,).
    y : float
        The label.
    w : array_like
        Weights, shape (..., d).
    c : float
        The loss factor (default 1/2).

    Returns
    -------
    numpy.ndarray
        :math:`\nabla^2 L`, shape (..., d, d).

    Examples
    --------
    >>> import numpy as np
    >>> hessian(np.array([1.0, 2.0]), 1.0, np.array([0.5, 0.5])).tolist()
    [[0.5, 2.0], [2.0, 3.0]]
    """
    w = np.asarray(w, dtype=float)
    g = x * w
    r = residual(x, y, w)
    return HESSIAN(g[..., :, None], g[..., None, :], np.asarray(r)[..., None, None], x[:, None], np.eye(x.size), c)


def hessian_eigenvalues(x, y, w, c=0.5) -> np.ndarray:
    r"""Ascending eigenvalues of the Hessian (batched): ``[..., -1]`` is :math:`\lambda_{max}`, ``[..., 0]`` is
    :math:`\lambda_{min}`.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,).
    y : float
        The label.
    w : array_like
        Weights, shape (..., d).
    c : float
        The loss factor (default 1/2).

    Returns
    -------
    numpy.ndarray
        The eigenvalues, shape (..., d), ascending.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([1.0, 2.0])
    >>> w = np.sqrt([0.5, 0.25])                # on M: <x, w⊙w> = 1
    >>> np.round(hessian_eigenvalues(x, 1.0, w), 12).tolist()
    [0.0, 6.0]
    """
    return np.linalg.eigvalsh(hessian(x, y, w, c))


def sharpness_term(x, beta, c=0.5):
    r"""Elementwise :math:`8c x_i^2 \beta_i` (:data:`SHARPNESS`; sum it over i for the on-manifold sharpness).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,).
    beta : array_like
        β = w⊙w, shape (..., d).
    c : float
        The loss factor (default 1/2).

    Returns
    -------
    numpy.ndarray
        The summands, shape (..., d).

    Examples
    --------
    >>> sharpness_term([1.0, 2.0], [0.5, 0.25]).tolist()
    [2.0, 4.0]
    """
    return SHARPNESS(np.asarray(x, float), np.asarray(beta, float), c)


def on_manifold_sharpness(x, beta, c=0.5) -> np.ndarray:
    r""":math:`S(\beta) = 8c\sum_i x_i^2\beta_i` (exact on M; the linear part of :math:`\lambda_{max}` off it).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,).
    beta : array_like
        β = w⊙w, shape (..., d).
    c : float
        The loss factor (default 1/2).

    Returns
    -------
    numpy.ndarray or float
        S(β), shape (...).

    Examples
    --------
    >>> float(on_manifold_sharpness([1.0, 2.0], [0.5, 0.25]))
    6.0
    """
    return np.sum(sharpness_term(x, beta, c), axis=-1)


def vertices(x: np.ndarray, y: float) -> np.ndarray:
    """The simplex vertices :math:`v_j = (y/x_j) e_j` as rows.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,).
    y : float
        The label.

    Returns
    -------
    numpy.ndarray
        Shape (d, d); row j is :math:`v_j`.

    Examples
    --------
    >>> import numpy as np
    >>> vertices(np.array([1.0, 2.0]), 1.0).tolist()
    [[1.0, 0.0], [0.0, 0.5]]
    """
    return np.diag(y / x)


def project_to_manifold(x, y, w):
    r"""Radial projection :math:`w\sqrt{y/\langle x, w\odot w\rangle}` onto M (a point of M, not the flow's).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,).
    y : float
        The label.
    w : array_like
        Weights, shape (..., d), not all zero.

    Returns
    -------
    numpy.ndarray
        The projected weights, shape (..., d).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([1.0, 2.0])
    >>> w = project_to_manifold(x, 1.0, [0.5, 0.5])
    >>> round(float(residual(x, 1.0, w)), 12)
    0.0
    """
    w = np.asarray(w, float)
    return w * np.sqrt(y / np.sum(x * w * w, axis=-1))[..., None]
