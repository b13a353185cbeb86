r"""Gradient-descent closed forms on the reduced balanced field, and depth 1 (paper 1: "GD closed forms", A).

The GD reduced field (rescaled time tau) is ``w_j' = mu_j w_j^{L-1}``, ``w_j(0) = alpha_j > 0``:

* L = 1: ``w_j = alpha_j + mu_j tau`` for every algorithm (GD, l_inf-SAM and l2-SAM all have field mu at
  depth 1), so ``w/||w|| -> mu/||mu||``, the l2 max-margin direction of one point.
* L = 2: ``w_j = alpha_j e^{mu_j tau}``, so ``beta/||beta|| -> e_d`` (the largest mu_j wins).
* L >= 3: ``w_j^{2-L} = alpha_j^{2-L} - (L-2) mu_j tau``, a blow-up at
  ``tau_j = alpha_j^{2-L} / ((L-2) mu_j)``; the first coordinate to blow up,
  ``argmax_j mu_j alpha_j^{L-2}``, wins (``e_d`` for uniform alpha).

Symbols (:data:`SYMBOLS`, shared with the claims that state these forms): ``alpha`` initial weight, ``mu`` data
coordinate, ``tau`` rescaled time, ``L`` depth; at depth 1 with several points, ``t`` time and ``beta_svm`` the l2
max-margin vector. Each closed form is a :class:`~biasaudit.theory.formula.Formula` (the sympy expression and its
function, lambdified once).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.plumbing import InputError, as_finite_vector, matching_length, positive_int, positive_vector
from biasaudit.theory.formula import Formula

__all__ = [
    "alpha", "mu", "tau", "L", "SYMBOLS",
    "GD_DEPTH1", "DEPTH1_FIELD", "GD_L2", "GD_DEEP", "GD_BLOWUP_TIME",
    "depth1_weights", "gd_l2_weights", "gd_deep_weights", "gd_blowup_times", "gd_limit_index",
]

alpha = sp.Symbol("alpha", positive=True)
mu = sp.Symbol("mu", positive=True)
tau = sp.Symbol("tau", nonnegative=True)
L = sp.Symbol("L", integer=True, positive=True)
t = sp.Symbol("t", positive=True)

#: The symbols of the GD and depth-1 statements (what a claim's statement is written in).
SYMBOLS = {
    "alpha": alpha, "mu": mu, "tau": tau, "L": L, "t": t,
    "w(tau)": sp.Function("w")(tau),                               # one balanced coordinate along the flow
    "tau_j": sp.Symbol("tau_j", positive=True),                    # blow-up time of coordinate j
    "beta(t)": sp.Symbol("beta(t)"),                               # depth 1, several points
    "beta_j(t)": sp.Symbol("beta_j(t)"),                           # depth 1: one coordinate of beta(t)
    "beta_svm": sp.Symbol("beta_svm"),                             # the l2 max-margin (SVM) vector
    "gamma_nonsupport": sp.Symbol("gamma_nonsupport", positive=True),  # margin of the non-support points
    "k": sp.Symbol("k", integer=True, positive=True),              # the index of GD's limit e_k at L >= 3
    "argmin": sp.Function("argmin"),                               # over j: the first blow-up time
}

GD_DEPTH1 = Formula("depth1_weights", alpha + mu * tau, (mu, alpha, tau))
#: The field at depth 1, d/dtau of GD_DEPTH1: mu for GD, l_inf-SAM and l2-SAM alike.
DEPTH1_FIELD = Formula("depth1_field", sp.diff(GD_DEPTH1.expr, tau), (mu,))
GD_L2 = Formula("gd_l2_weights", alpha * sp.exp(mu * tau), (mu, alpha, tau))
GD_DEEP = Formula("gd_deep_weights", (alpha ** (2 - L) - (L - 2) * mu * tau) ** (1 / (2 - L)), (mu, alpha, tau, L))
GD_BLOWUP_TIME = Formula("gd_blowup_time", alpha ** (2 - L) / ((L - 2) * mu), (mu, alpha, L))


def _mu_alpha(mu_value, alpha_value):
    m = positive_vector("mu", mu_value)
    a = positive_vector("alpha", alpha_value)
    if a.size == 1:
        a = np.full(m.size, a[0])
    return m, matching_length("alpha", a, m.size, "mu")


def depth1_weights(mu_value, alpha_value, tau_value) -> np.ndarray:
    r""":math:`w_j = \alpha_j + \mu_j\tau` (every algorithm at depth 1, one point); shape (d,) or (len(tau), d).

    Parameters
    ----------
    mu_value : array_like
        The data coordinates :math:`\mu_j > 0`, shape (d,).
    alpha_value : float or array_like
        The initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    tau_value : float or array_like
        Rescaled times τ, finite.

    Returns
    -------
    numpy.ndarray
        :math:`w_j(\tau)`, shape (len(tau), d), squeezed (shape (d,) for one τ).

    Raises
    ------
    InputError
        If ``mu_value`` or ``alpha_value`` has an entry <= 0, their lengths differ, or ``tau_value`` is not finite.

    Examples
    --------
    >>> depth1_weights([1, 2], 0.1, [0.0, 1.0]).tolist()
    [[0.1, 0.1], [1.1, 2.1]]
    """
    m, a = _mu_alpha(mu_value, alpha_value)
    t = as_finite_vector("tau", tau_value)
    return np.squeeze(GD_DEPTH1(m[None, :], a[None, :], t[:, None]))


def gd_l2_weights(mu_value, alpha_value, tau_value) -> np.ndarray:
    r""":math:`w_j = \alpha_j e^{\mu_j\tau}` (GD, L = 2).

    Parameters
    ----------
    mu_value : array_like
        The data coordinates :math:`\mu_j > 0`, shape (d,).
    alpha_value : float or array_like
        The initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    tau_value : float or array_like
        Rescaled times τ, finite.

    Returns
    -------
    numpy.ndarray
        :math:`w_j(\tau)`, shape (len(tau), d), squeezed (shape (d,) for one τ).

    Raises
    ------
    InputError
        If ``mu_value`` or ``alpha_value`` has an entry <= 0, their lengths differ, or ``tau_value`` is not finite.

    Examples
    --------
    >>> gd_l2_weights([1, 2], 0.1, [0.0, 1.0]).round(6).tolist()
    [[0.1, 0.1], [0.271828, 0.738906]]
    """
    m, a = _mu_alpha(mu_value, alpha_value)
    t = as_finite_vector("tau", tau_value)
    return np.squeeze(GD_L2(m[None, :], a[None, :], t[:, None]))


def gd_deep_weights(mu_value, alpha_value, tau_value, depth: int) -> np.ndarray:
    r""":math:`w_j = (\alpha_j^{2-L} - (L-2)\mu_j\tau)^{1/(2-L)}` (GD, L >= 3), valid before the blow-up times.

    Parameters
    ----------
    mu_value : array_like
        The data coordinates :math:`\mu_j > 0`, shape (d,).
    alpha_value : float or array_like
        The initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    tau_value : float or array_like
        Rescaled times τ, finite.
    depth : int
        The depth L, >= 3.

    Returns
    -------
    numpy.ndarray
        :math:`w_j(\tau)`, shape (len(tau), d), squeezed (shape (d,) for one τ).

    Raises
    ------
    InputError
        If ``mu_value`` or ``alpha_value`` has an entry <= 0, their lengths differ, ``tau_value`` is not finite,
        ``depth`` < 3, or a τ reaches a blow-up time :func:`gd_blowup_times`.

    Examples
    --------
    >>> gd_deep_weights([1, 2], 0.5, [0.0, 0.5], 3).tolist()
    [[0.5, 0.5], [0.6666666666666666, 1.0]]
    """
    m, a = _mu_alpha(mu_value, alpha_value)
    depth = positive_int("depth", depth, minimum=3)
    t = as_finite_vector("tau", tau_value)
    if np.any(t[:, None] >= gd_blowup_times(m, a, depth)[None, :]):
        raise InputError("tau", "must be below every blow-up time alpha^(2-L)/((L-2) mu)", tau_value)
    return np.squeeze(GD_DEEP(m[None, :], a[None, :], t[:, None], depth))


def gd_blowup_times(mu_value, alpha_value, depth: int) -> np.ndarray:
    r""":math:`\tau_j = \alpha_j^{2-L} / ((L-2)\mu_j)` for L >= 3.

    Parameters
    ----------
    mu_value : array_like
        The data coordinates :math:`\mu_j > 0`, shape (d,).
    alpha_value : float or array_like
        The initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    depth : int
        The depth L, >= 3.

    Returns
    -------
    numpy.ndarray
        :math:`\tau_j`, shape (d,).

    Raises
    ------
    InputError
        If ``mu_value`` or ``alpha_value`` has an entry <= 0, their lengths differ, or ``depth`` < 3.

    Examples
    --------
    >>> gd_blowup_times([1, 2], 0.5, 3).tolist()
    [2.0, 1.0]
    """
    m, a = _mu_alpha(mu_value, alpha_value)
    depth = positive_int("depth", depth, minimum=3)
    return np.asarray(GD_BLOWUP_TIME(m, a, depth), dtype=float)


def gd_limit_index(mu_value, alpha_value, depth: int) -> int:
    r"""1-based index k of GD's limit direction :math:`e_k` at depth >= 2 (d at L = 2; the first blow-up,
    :math:`\arg\max_j \mu_j\alpha_j^{L-2}`, at L >= 3).

    Parameters
    ----------
    mu_value : array_like
        The data coordinates :math:`\mu_j > 0`, shape (d,).
    alpha_value : float or array_like
        The initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    depth : int
        The depth L, >= 2.

    Returns
    -------
    int
        k.

    Raises
    ------
    InputError
        If ``mu_value`` or ``alpha_value`` has an entry <= 0, their lengths differ, or ``depth`` < 2.

    Examples
    --------
    >>> gd_limit_index([1, 2], 0.5, 3), gd_limit_index([1, 2], [0.5, 0.1], 3)
    (2, 1)
    """
    m, a = _mu_alpha(mu_value, alpha_value)
    depth = positive_int("depth", depth, minimum=2)
    if depth == 2:
        return int(m.size)
    return int(np.argmin(gd_blowup_times(m, a, depth))) + 1
