r"""Classifying balanced l2-SAM trajectories at even depth L ≥ 4 by certificates: the collapse threshold.

With balanced initialisation the depth-L l2-SAM flow (the reduced field) is, per coordinate,

.. math::

    w_j' = μ_j \tilde w_j^{\,L-1},\qquad \tilde w_j = w_j - c_L μ_j w_j^{L-1}/T,\qquad T = \|μ ⊙ w^{L-1}\|_2 .

In units of c_L (w = c_L u) and time σ = c_L^{L−2} τ this is u_j' = μ_j ũ_j^{L−1}, ũ = u − μ ⊙ u^{L−1}/T(u):
α_c/c_L depends on μ/‖μ‖ and L only (as at L = 2).

Certificates at even L (L − 1 odd, so the sign of w_j' is that of w̃_j):

* **collapse**: w̃_j ≤ 0 for every j, i.e. T ≤ c_L min_j μ_j w_j^{L−2}. Every coordinate is then
  nonincreasing, so T is; on the face w̃_j = 0 the gap ln(c_L μ_j w_j^{L−2}) − ln T has derivative
  (L − 2) w_j'/w_j − T'/T = −T'/T ≥ 0, so the set is forward-invariant (Nagumo): the trajectory shrinks
  for ever. At L = 2 this is the familiar S ≤ cμ₁. (With all gaps g_j ≥ 0 the smallest one grows at rate
  ≈ T g^{L−1} > 0, so the state cannot settle on a nonzero equilibrium: β → 0.)
* **escape**: max_j w_j > c_L. Then T ≥ μ_k w_k^{L−1} > c_L μ_k w_k^{L−2}, so w̃_k > 0 and w_k grows, for
  ever: as at L = 2. Sharper: w̃_j ≥ 0 for every j (the set above α_grow at τ = 0). It is forward-invariant
  by the mirror argument (on the face w̃_j = 0 the gap ln T − ln(c_L μ_j w_j^{L−2}) has derivative
  T'/T ≥ 0), every coordinate is nondecreasing, and the smallest gap grows, so the state cannot settle on
  the interior equilibrium: it escapes.

Between them lies the separatrix: the stable set of the interior equilibrium u*_j = μ_j^{−1/(L−2)}/N,
N = ‖μ^{−1/(L−2)}‖₂ (there μ_j u_j*^{L−2} = T* for all j; u* = (√(2/3), √(1/3)) for μ = (1, 2), L = 4), where
both certificate sets meet. The field vanishes there to order L − 1, so
near-threshold trajectories approach and leave it *algebraically* (ũ ~ σ^{−1/(L−2)}), not exponentially as
at L = 2: a trajectory at relative distance δ from α_c is decided only after σ ~ δ^{−(L−2)}-ish, hence the
long default horizon and the adaptive step (Dormand–Prince 5(4), :mod:`biasaudit.numerics.flows`).

Kernel: :func:`_classify_deep` (njit, loops only); wrapper :func:`classify_deep_trajectory` validates;
:func:`classify_deep_trajectory_reference` is the same classification with scipy's DOP853 (tests).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from biasaudit.numerics.flows import _dp_step, _rms_error, dp_step_factor
from biasaudit.numerics.l2_reduction import COLLAPSE, ESCAPE, UNDECIDED
from biasaudit.numerics.tableau import DOPRI5
from biasaudit.plumbing import (InputError, matching_length, positive_increasing, positive_int, positive_scalar,
                                positive_vector)

__all__ = ["COLLAPSE", "ESCAPE", "UNDECIDED", "DeepClassification", "classify_deep_trajectory",
           "classify_deep_trajectory_reference", "deep_certificate", "DEFAULT_RTOL", "DEFAULT_HORIZON"]

_NAMES = {COLLAPSE: "collapse", UNDECIDED: "undecided", ESCAPE: "escape"}
_L2_CODE = 2  # numerics.flows algorithm code of l2
_DP_STAGES = DOPRI5.stages  # a module-level int: numba freezes it into the kernel

# rtol of the adaptive integration. α_c moves by < 2e-11 relative between rtol 1e-12 and 1e-13 (tested) —
# inside the 10-digit target; tighter rtol costs steps without changing 11 digits.
DEFAULT_RTOL = 1e-12
# σ horizon (units 1/μ_d). Decision times grow like a power of 1/|α/α_c − 1| (≈ δ^{−2.6} at L = 4,
# μ = (1, 2)), but the adaptive step grows with them: ~500 steps at δ = 1e−10, σ ≈ 2e9.
DEFAULT_HORIZON = 1e200
# A run that passes within this of the interior equilibrium (min over the run of max_j |ũ_j|, units of c_L)
# is declared undecided: there ũ is a difference of O(1) terms, so its float64 error (~1e−16) is no longer
# small against ũ itself, and the side it leaves on is round-off.
NEAR_EQUILIBRIUM = 1e-7
DEFAULT_MAX_STEPS = 2_000_000


@dataclass(frozen=True)
class DeepClassification:
    r"""The result of :func:`classify_deep_trajectory`.

    Parameters
    ----------
    code : int
        :data:`COLLAPSE`, :data:`ESCAPE` or :data:`UNDECIDED` (``name`` names it).
    sigma : float
        The rescaled time :math:`\sigma = c_L^{L-2}\tau` of the decision.
    steps : int
        The accepted steps (function evaluations for the scipy reference).
    closest : float
        The smallest :math:`\max_j |\tilde u_j|` met along the run (units of :math:`c_L`: how near the interior
        equilibrium it passed; NaN where not tracked).
    """

    code: int        # COLLAPSE, ESCAPE or UNDECIDED
    sigma: float     # rescaled time σ = c_L^{L−2} τ at the decision (units of c_L)
    steps: int
    closest: float = float("nan")  # min over the run of max_j |ũ_j|: how near the interior equilibrium

    @property
    def name(self) -> str:
        """``"collapse"``, ``"escape"`` or ``"undecided"``."""
        return _NAMES[self.code]


@njit(cache=True)
def deep_certificate(u, mu, L):
    r"""−1 if every :math:`\tilde u_j \le 0` (collapse); +1 if max u > 1 or every :math:`\tilde u_j \ge 0` (escape);
    else 0.

    u in units of :math:`c_L`, even L ≥ 4, u > 0. :math:`\tilde u_j \le 0 \iff T \le \mu_j u_j^{L-2}` (for
    :math:`u_j > 0`).

    Parameters
    ----------
    u : numpy.ndarray
        The weights in units of :math:`c_L`, shape (d,), > 0.
    mu : numpy.ndarray
        The data point, shape (d,).
    L : int
        The depth, even and >= 4.

    Returns
    -------
    int
        −1, +1 or 0.

    Examples
    --------
    >>> import numpy as np
    >>> mu = np.array([1.0, 2.0])
    >>> deep_certificate.py_func(np.array([0.05, 0.05]), mu, 4), deep_certificate.py_func(np.array([1.5, 0.5]), mu, 4)
    (-1, 1)
    """
    t2 = 0.0
    umax = 0.0
    for j in range(u.shape[0]):
        g = mu[j] * u[j] ** (L - 1)
        t2 += g * g
        umax = max(umax, u[j])
    if umax > 1.0:
        return 1
    t = math.sqrt(t2)
    if t == 0.0:
        return -1  # β = 0 already
    n_shrink = 0
    n_grow = 0
    for j in range(u.shape[0]):
        level = mu[j] * u[j] ** (L - 2)
        if t <= level:
            n_shrink += 1
        if t >= level:
            n_grow += 1
    if n_shrink == u.shape[0]:
        return -1
    if n_grow == u.shape[0]:
        return 1
    return 0


@njit(cache=True)
def _max_abs_u_tilde(u, mu, L):
    t2 = 0.0
    for j in range(u.shape[0]):
        g = mu[j] * u[j] ** (L - 1)
        t2 += g * g
    t = math.sqrt(t2)
    big = 0.0
    for j in range(u.shape[0]):
        big = max(big, abs(u[j] - mu[j] * u[j] ** (L - 1) / t))
    return big


@njit(cache=True)
def _classify_deep(u0, mu, L, rtol, atol, horizon, max_steps, out):
    """Adaptive DP5(4) on u' = μ ũ^{L−1} (c = 1) until a certificate fires.

    out = (code, σ at the decision, steps, closest approach min max_j |ũ_j|)."""
    d = u0.shape[0]
    u = u0.copy()
    un = np.empty(d)
    s = np.ones(d)  # sign pattern: unused by the l2 field
    K = np.empty((_DP_STAGES, d))
    tmp = np.empty(d)
    err = np.empty(d)
    code = deep_certificate(u, mu, L)
    t = 0.0
    steps = 0
    h = 1e-3 / mu[d - 1]
    closest = _max_abs_u_tilde(u, mu, L)
    while code == 0 and t < horizon and steps < max_steps and closest > NEAR_EQUILIBRIUM:
        _dp_step(_L2_CODE, u, mu, 0.0, 1.0, L, h, s, K, tmp, un, err)
        steps += 1
        e = _rms_error(err, u, un, rtol, atol)
        if e == e and e <= 1.0:
            t += h
            for j in range(d):
                u[j] = un[j]
            code = deep_certificate(u, mu, L)
            closest = min(closest, _max_abs_u_tilde(u, mu, L))
            h *= dp_step_factor(e)
        else:
            h *= dp_step_factor(e)
    out[0] = code if closest > NEAR_EQUILIBRIUM else 0
    out[1] = t
    out[2] = steps
    out[3] = closest


def _validate(mu, alpha, depth):
    mu = positive_increasing("mu", mu)
    alpha = np.atleast_1d(np.asarray(alpha, dtype=float))
    if alpha.size == 1:
        alpha = np.full(mu.size, positive_scalar("alpha", float(alpha[0])))
    else:
        alpha = positive_vector("alpha", alpha)
        matching_length("alpha", alpha, mu.size, "mu")
    depth = positive_int("depth", depth)
    if depth < 4 or depth % 2:
        raise InputError("depth", "must be even and >= 4 (L = 2: numerics.l2_reduction; odd L never collapses)",
                         depth)
    return mu, alpha, depth


def classify_deep_trajectory(mu, alpha_over_c, depth: int, *, rtol: float = DEFAULT_RTOL,
                             horizon: float = DEFAULT_HORIZON, max_steps: int = DEFAULT_MAX_STEPS
                             ) -> DeepClassification:
    """Classify the trajectory from w(0) = α (in units of :math:`c_L`; a scalar for uniform α, or one value per
    coordinate) at even depth ≥ 4 as collapse/escape/undecided (numba, adaptive Dormand–Prince;
    :func:`classify_deep_trajectory_reference` is the scipy reference).

    ``horizon`` in units of 1/μ_d of rescaled time σ; undecided means neither certificate fired by then.

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    alpha_over_c : float or array_like
        w(0) = α in units of :math:`c_L`, > 0: a scalar for uniform α, or one value per coordinate.
    depth : int
        The depth L, even and >= 4.
    rtol : float
        The relative tolerance (default :data:`DEFAULT_RTOL`).
    horizon : float
        The horizon (default :data:`DEFAULT_HORIZON`).
    max_steps : int
        The step limit.

    Returns
    -------
    DeepClassification
        The certificate that fired, when, and how near the interior equilibrium the run passed.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing, an α is <= 0, ``depth`` is not even and >= 4, or
        ``rtol``, ``horizon`` or ``max_steps`` is not positive.
    """
    mu, alpha_over_c, depth = _validate(mu, alpha_over_c, depth)
    rtol = positive_scalar("rtol", rtol)
    horizon = positive_scalar("horizon", horizon)
    max_steps = positive_int("max_steps", max_steps)
    out = np.zeros(4)
    _classify_deep(alpha_over_c, mu, depth, rtol, rtol * 1e-2, horizon / mu[-1], max_steps, out)
    return DeepClassification(int(out[0]), float(out[1]), int(out[2]), float(out[3]))


def classify_deep_trajectory_reference(mu, alpha_over_c, depth: int, *, rtol: float = 1e-12,
                                       horizon: float = 1e16) -> DeepClassification:
    """The same classification with scipy's DOP853 and terminal events (independent integrator).

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    alpha_over_c : float or array_like
        w(0) = α in units of :math:`c_L`, > 0: a scalar for uniform α, or one value per coordinate.
    depth : int
        The depth L, even and >= 4.
    rtol : float
        DOP853's relative tolerance (default 1e-12).
    horizon : float
        The horizon in σ (default 1e16).

    Returns
    -------
    DeepClassification
        The certificate that fired, when, and how near the interior equilibrium the run passed.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing, an α is <= 0, or ``depth`` is not even and >= 4.

    Examples
    --------
    >>> classify_deep_trajectory_reference([1.0, 2.0], 0.9, 4).name
    'escape'
    """
    from scipy.integrate import solve_ivp

    mu, alpha_over_c, depth = _validate(mu, alpha_over_c, depth)
    L = depth

    def field(t, u):
        p = mu * u ** (L - 1)
        return mu * (u - p / math.sqrt(p @ p)) ** (L - 1)

    def escape(t, u):
        return np.max(u) - 1.0

    def collapse(t, u):  # max_j (T − μ_j u_j^{L−2}) ≤ 0 ⟺ every ũ_j ≤ 0
        p = mu * u ** (L - 1)
        return float(np.max(math.sqrt(p @ p) - mu * u ** (L - 2)))

    def grow(t, u):  # max_j (μ_j u_j^{L−2} − T) ≤ 0 ⟺ every ũ_j ≥ 0
        p = mu * u ** (L - 1)
        return float(np.max(mu * u ** (L - 2) - math.sqrt(p @ p)))

    escape.terminal = collapse.terminal = grow.terminal = True
    u0 = alpha_over_c
    start = deep_certificate(u0, mu, L)
    if start != 0:
        return DeepClassification(start, 0.0, 0)
    sol = solve_ivp(field, (0.0, horizon / mu[-1]), u0, method="DOP853", rtol=rtol, atol=rtol * 1e-2,
                    events=(escape, collapse, grow))
    if sol.t_events[0].size or sol.t_events[2].size:
        return DeepClassification(ESCAPE, float(sol.t[-1]), int(sol.nfev))
    if sol.t_events[1].size:
        return DeepClassification(COLLAPSE, float(sol.t_events[1][0]), int(sol.nfev))
    return DeepClassification(UNDECIDED, float(sol.t[-1]), int(sol.nfev))
