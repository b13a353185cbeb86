r"""The central flow of the shared-weight model: gradient flow held at the edge of stability S = 2/η.

Cohen, Damian et al. ("Understanding Optimization in Deep Learning with Central Flows", ICLR 2025) model GD's
time-averaged path at step η by a flow. In the one-eigenvalue case it is gradient flow while the sharpness
S(w) = λ_max(∇²L(w)) (the top *algebraic* eigenvalue) is below 2/η; once S reaches 2/η and the gradient would push
it higher, the flow moves along the level set S = 2/η:

.. math::

    \dot w = -\nabla L + \mu\,\nabla S,\qquad \mu = \frac{\langle\nabla S, \nabla L\rangle}{\|\nabla S\|^2}
    \quad\text{if } S(w) = 2/\eta \text{ and } \langle\nabla S, -\nabla L\rangle > 0,\qquad
    \dot w = -\nabla L \text{ otherwise.}

(Their form :math:`\dot w = -\nabla L - \tfrac{\eta}{2}\sigma^2\nabla S` with :math:`\sigma^2 = -2\mu/\eta \ge 0`
the variance of GD's oscillation along the top eigenvector.) On the edge, :math:`\dot S = \langle\nabla S,
\dot w\rangle = 0` exactly.

**∇S.** With v the unit top eigenvector of :data:`~biasaudit.theory.eos_model.HESSIAN`
:math:`H = 2c(4gg^\top + 2r\,\mathrm{diag}(x))` (g = x⊙w), held fixed, :math:`\nabla S = \nabla_w(v^\top H v)`
(Hellmann–Feynman; the top eigenvalue is simple when g has no zero entry). Contracting the Hessian entry with
:math:`v_jv_k` gives, with :math:`p = \langle g, v\rangle` and :math:`m = \sum_j x_jv_j^2`,

.. math:: v^\top H v = 8c\,p^2 + 4c\,r\,m,\qquad
          \partial_{w_k}(v^\top Hv) = 16c\,p\,x_kv_k + 8c\,m\,x_kw_k ,

(∂p/∂w_k = x_kv_k, ∂r/∂w_k = 2x_kw_k), and :math:`\partial_{w_k}L = 4c\,r\,x_kw_k`.

**Where it goes.** On the edge the residual obeys :math:`\dot r = -8c\,r\,g^\top P_\perp g` (P⊥ removes ∇S),
so r keeps its sign and decays: the flow ends on the solution manifold at a point with S = 2/η, when one
exists, i.e. when η ≤ 1/(4cyx_min) (:func:`~biasaudit.theory.eos_minimizers.stable_eta_max`). For larger η
it stalls at a point of the level set where ∇L ∥ ∇S, with r ≠ 0. Below η_c = 2/s_GF it never meets the edge
and is gradient flow (its limit is β_GF). From a small init, v_k has the sign of w_k (v ∝ (λ − 4crx)⁻¹⊙g), so
the flow is multiplicative, :math:`\dot w_k = w_k\,a_k`, and stays in w₀'s orthant.

Symbols (beside those of :mod:`biasaudit.theory.eos_model`): ``v_k`` the top eigenvector's entry, ``p_sym`` =
⟨g, v⟩, ``m_sym`` = Σ x_j v_j², ``gradL_k`` and ``gradS_k`` the entries of ∇L and ∇S, ``inner_sym`` =
⟨∇S, ∇L⟩, ``norm2_sym`` = ‖∇S‖², ``wdot_k`` the flow's velocity, ``beta_cf`` its endpoint (a function of η).

Formulas: :data:`EDGE_QUADRATIC` (vᵀHv, contracted from :data:`~biasaudit.theory.eos_model.HESSIAN`),
:data:`SHARPNESS_GRADIENT` (its w-gradient), :data:`LOSS_GRADIENT` and :data:`CENTRAL_VELOCITY`. The endpoint
itself has no closed form: it is the end of an integration.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.theory.eos_model import HESSIAN, c_sym, delta_jk, g_j, g_k, r_sym, residual, w_k, x_j, x_k
from biasaudit.theory.formula import Formula

__all__ = ["v_k", "p_sym", "m_sym", "gradL_k", "gradS_k", "inner_sym", "norm2_sym", "wdot_k", "beta_cf",
           "EDGE_QUADRATIC", "SHARPNESS_GRADIENT", "LOSS_GRADIENT", "CENTRAL_VELOCITY", "top_eigenpair",
           "sharpness_gradient", "loss_gradient", "central_velocity", "edge_multiplier"]

v_k = sp.Symbol("v_k", real=True)  # entry of the unit top eigenvector of H
p_sym = sp.Symbol("p", real=True)  # <g, v>
m_sym = sp.Symbol("m", nonnegative=True)  # sum_j x_j v_j^2
gradL_k, gradS_k = sp.symbols("gradL_k gradS_k", real=True)
inner_sym = sp.Symbol("<gradS,gradL>", real=True)
norm2_sym = sp.Symbol("|gradS|^2", positive=True)
wdot_k = sp.Symbol("wdot_k", real=True)
beta_cf = sp.Function("beta_CF", nonnegative=True)  # the central flow's endpoint at step eta


def _contracted_quadratic() -> sp.Expr:
    """vᵀHv from the Hessian entry: Σ_jk v_j v_k g_j g_k = p² and Σ_jk v_j v_k x_j δ_jk = m."""
    entry = sp.expand(HESSIAN.expr)
    rank_one = entry.coeff(g_j * g_k)
    diagonal = entry.coeff(delta_jk)
    rest = sp.simplify(entry - rank_one * g_j * g_k - diagonal * delta_jk)
    if rest != 0 or diagonal.has(g_j, g_k):
        raise ValueError(f"the Hessian entry is not a·g_j g_k + b·δ_jk: remainder {rest}")
    return rank_one * p_sym**2 + sp.simplify(diagonal / x_j) * m_sym


#: :math:`v^\top Hv = 8c\,p^2 + 4c\,r\,m` (p = ⟨g, v⟩, m = Σ x_j v_j²): S when v is the unit top eigenvector.
EDGE_QUADRATIC = Formula("edge_quadratic", _contracted_quadratic(), (p_sym, m_sym, r_sym, c_sym))
#: :math:`\partial_{w_k}(v^\top Hv)` with v held fixed (chain rule through p and r): the entry k of ∇S.
SHARPNESS_GRADIENT = Formula(
    "sharpness_gradient",
    sp.expand(sp.diff(EDGE_QUADRATIC.expr, p_sym) * x_k * v_k + sp.diff(EDGE_QUADRATIC.expr, r_sym) * 2 * x_k * w_k),
    (p_sym, m_sym, x_k, v_k, w_k, c_sym))
#: :math:`\partial_{w_k}L = \partial_r(c\,r^2)\cdot 2x_kw_k = 4c\,r\,x_kw_k`.
LOSS_GRADIENT = Formula("loss_gradient", sp.diff(c_sym * r_sym**2, r_sym) * 2 * x_k * w_k, (r_sym, x_k, w_k, c_sym))
#: On the edge, :math:`\dot w_k = -\partial_kL + \frac{\langle\nabla S,\nabla L\rangle}{\|\nabla S\|^2}\partial_kS`.
CENTRAL_VELOCITY = Formula("central_velocity", -gradL_k + inner_sym / norm2_sym * gradS_k,
                           (gradL_k, gradS_k, inner_sym, norm2_sym))


def top_eigenpair(x: np.ndarray, y: float, w: np.ndarray, c: float = 0.5) -> tuple[float, np.ndarray]:
    r""":math:`\lambda_{max}` of :data:`~biasaudit.theory.eos_model.HESSIAN` at w and its unit eigenvector (numpy
    ``eigh``).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w : numpy.ndarray
        The weights, shape (d,).
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    tuple of (float, numpy.ndarray)
        S = :math:`\lambda_{max}(H(w))` and v, shape (d,), :math:`\|v\| = 1` (its sign as ``eigh`` returns it).

    Examples
    --------
    >>> import numpy as np
    >>> S, v = top_eigenpair(np.array([1.0, 2.0]), 1.0, np.array([0.6, 0.5]))
    >>> round(S, 9), round(float(v @ v), 12)
    (4.956990779, 1.0)
    """
    from biasaudit.theory.eos_model import hessian

    lam, vecs = np.linalg.eigh(hessian(x, y, w, c))
    return float(lam[-1]), vecs[:, -1]


def sharpness_gradient(x, y, w, c=0.5) -> tuple[float, np.ndarray]:
    r"""(S, ∇S) at w: :data:`SHARPNESS_GRADIENT`, :math:`\partial_{w_k}S = 16c\,p\,x_kv_k + 8c\,m\,x_kw_k`, with v
    the numerical top eigenvector, :math:`p = \langle g, v\rangle` and :math:`m = \sum_j x_jv_j^2`.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w : numpy.ndarray
        The weights, shape (d,).
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    tuple of (float, numpy.ndarray)
        S and ∇S, shape (d,) (exact where the top eigenvalue is simple).

    Examples
    --------
    >>> import numpy as np
    >>> x, w = np.array([1.0, 2.0]), np.array([0.6, 0.5])
    >>> S, grad_s = sharpness_gradient(x, 1.0, w)
    >>> h = 1e-6                                  # against a central difference of λ_max
    >>> fd = (top_eigenpair(x, 1.0, w + [h, 0])[0] - top_eigenpair(x, 1.0, w - [h, 0])[0]) / (2 * h)
    >>> bool(abs(fd - grad_s[0]) < 1e-6)
    True
    """
    S, v = top_eigenpair(x, y, w, c)
    g = x * w
    return S, SHARPNESS_GRADIENT(float(g @ v), float(x @ (v * v)), x, v, w, c)


def loss_gradient(x, y, w, c=0.5) -> np.ndarray:
    r"""∇L (:data:`LOSS_GRADIENT`): :math:`\partial_{w_k}L = 4c\,r\,x_kw_k`.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w : numpy.ndarray
        The weights, shape (d,).
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    numpy.ndarray
        ∇L, shape (d,).

    Examples
    --------
    >>> import numpy as np
    >>> np.round(loss_gradient(np.array([1.0, 2.0]), 1.0, np.array([0.6, 0.5])), 12).tolist()
    [-0.168, -0.28]
    """
    return LOSS_GRADIENT(float(residual(x, y, w)), x, w, c)


def edge_multiplier(grad_s: np.ndarray, grad_l: np.ndarray) -> float:
    """μ = ⟨∇S, ∇L⟩/‖∇S‖² (negative while the gradient pushes S up: the flow then stays on the edge).

    Parameters
    ----------
    grad_s : numpy.ndarray
        ∇S, shape (d,), not zero.
    grad_l : numpy.ndarray
        ∇L, shape (d,).

    Returns
    -------
    float
        μ.

    Examples
    --------
    >>> import numpy as np
    >>> edge_multiplier(np.array([3.0, 4.0]), np.array([-1.0, 0.0]))
    -0.12
    """
    return float(grad_s @ grad_l) / float(grad_s @ grad_s)


def central_velocity(x, y, w, c=0.5) -> np.ndarray:
    r"""The velocity on the edge, :math:`-\nabla L + \mu\nabla S` (:data:`CENTRAL_VELOCITY`); it leaves S unchanged.

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w : numpy.ndarray
        The weights, shape (d,).
    c : float
        The loss factor c of :math:`L = c r^2` (default 1/2).

    Returns
    -------
    numpy.ndarray
        :math:`\dot w`, shape (d,), with :math:`\langle\nabla S, \dot w\rangle = 0`.

    Examples
    --------
    >>> import numpy as np
    >>> x, w = np.array([1.0, 2.0]), np.array([0.6, 0.5])
    >>> _, grad_s = sharpness_gradient(x, 1.0, w)
    >>> abs(float(grad_s @ central_velocity(x, 1.0, w))) < 1e-12
    True
    """
    _, grad_s = sharpness_gradient(x, y, w, c)
    grad_l = loss_gradient(x, y, w, c)
    return CENTRAL_VELOCITY(grad_l, grad_s, float(grad_s @ grad_l), float(grad_s @ grad_s))
