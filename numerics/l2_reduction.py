r"""The exact log-linear reduction of balanced l2-SAM at depth L = 2, integrated in log space.

With balanced initialisation w^(1) = w^(2) = w(0) = α (per coordinate), the rescaled l2-SAM flow on one
example (μ, +1) is

.. math::

    w_j' = μ_j w_j \,(1 - c μ_j / S),\qquad S = \|μ ⊙ w\|_2 ,

and dividing by w_j gives (ln w_j)' = μ_j − c μ_j²/S. Integrating,

.. math::

    \ln\frac{w_j(τ)}{α_j} = μ_j τ - c μ_j^2 A(τ),\qquad A' = 1/S,\quad A(0) = 0,

so the whole d-dimensional trajectory is one scalar ODE for A. ``ln S`` is evaluated as a log-sum-exp of
``2(ln μ_j α_j + μ_j τ − c μ_j² A)``, so nothing overflows (e^{μτ} overflows float64 near τ ≈ 700/μ_d).

Certificates (exact for the flow, used to classify a trajectory):

* **collapse**: S ≤ c μ₁ ⇒ every rate μ_j(1 − cμ_j/S) ≤ 0, so S keeps decreasing: shrink forever
  (β → 0 in finite τ);
* **escape**: max_j w_j > c ⇒ S ≥ μ_k w_k > c μ_k, so w_k grows, and keeps doing so: no collapse.

Symbols
=======
=========  =====================================================================
``mu``     μ, the data point (0 < μ₁ < … < μ_d)
``alpha``  α, the balanced initialisation (one value per coordinate)
``c``      c = ρ/√2 (joint normalisation) or ρ (per-layer normalisation)
``tau``    τ, rescaled time (dτ = −ℓ'(z̃) dt)
``A``      A(τ) = ∫₀^τ ds / S(s)
``S``      S = ‖μ ⊙ w‖₂
=========  =====================================================================

Kernels are ``@njit(cache=True)`` and only loop; the public wrappers validate and allocate. The plain
numpy functions ``*_reference`` beside them are the readable versions used in tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from biasaudit.numerics.flows import dp_step_factor
from biasaudit.numerics.tableau import DOPRI5, RK4, explicit_rk_step
from biasaudit.plumbing import (InputError, as_finite_vector, matching_length, positive_increasing, positive_scalar,
                                positive_vector)

__all__ = [
    "COLLAPSE",
    "ESCAPE",
    "UNDECIDED",
    "Classification",
    "ReducedTrajectory",
    "classify_l2_trajectory",
    "classify_l2_trajectory_reference",
    "l2_reduction_trajectory",
    "l2_reduction_trajectory_reference",
    "log_weights_from_A",
    "default_step",
]

COLLAPSE, UNDECIDED, ESCAPE = -1, 0, 1  # certificate outcome of a trajectory (also numerics.l2_deep)
_NAMES = {COLLAPSE: "collapse", UNDECIDED: "undecided", ESCAPE: "escape"}

# RK4 step in units of the fastest time scale 1/μ_d: the A-ODE is smooth (A' = 1/S ≤ 1/(cμ₁) before
# the collapse certificate fires); the global RK4 error at this step shifts α_c by < 1e-12 relative
# (measured against the mpmath reference, see notes/sam-l2.md).
DEFAULT_STEP_MU_D = 2e-3


# The tableaus as module-level constants (numba freezes them into the kernels). The kernels below are unrolled
# (a scalar ODE: no stage arrays) and read every coefficient from here.
_RK4_SUB, _RK4_B, _RK4_C = RK4.a_subdiagonal, RK4.b, RK4.c
_DP_A, _DP_B, _DP_C, _DP_E = DOPRI5.a, DOPRI5.b, DOPRI5.c, DOPRI5.b_error
if not (DOPRI5.fsal and _DP_B[1] == 0.0 and _DP_E[1] == 0.0):  # what the unrolled _dopri_A leaves out
    raise ImportError("l2_reduction._dopri_A assumes DOPRI5 is FSAL with b_2 = b̂_2 = 0")


def default_step(mu: np.ndarray) -> float:
    """The default RK4 step: ``DEFAULT_STEP_MU_D / μ_d``.

    Parameters
    ----------
    mu : numpy.ndarray
        The data point μ, increasing.

    Returns
    -------
    float
        The step.

    Examples
    --------
    >>> import numpy as np
    >>> default_step(np.array([1.0, 2.0])) == DEFAULT_STEP_MU_D / 2
    True
    """
    return DEFAULT_STEP_MU_D / float(mu[-1])


# ----------------------------------------------------------------------------------------------------------
# kernels
# ----------------------------------------------------------------------------------------------------------
@njit(cache=True)
def _log_mu_alpha(mu, log_alpha):
    """ln(μ_j α_j), the τ = 0, A = 0 value of ln(μ_j w_j)."""
    out = np.empty(mu.shape[0])
    for j in range(mu.shape[0]):
        out[j] = math.log(mu[j]) + log_alpha[j]
    return out


@njit(cache=True)
def _log_S(tau, A, log_mu_alpha, mu, c):
    """ln S at (τ, A): 0.5·logsumexp_j 2(ln μ_jα_j + μ_jτ − cμ_j²A)."""
    d = mu.shape[0]
    m = -np.inf
    for j in range(d):
        x = log_mu_alpha[j] + mu[j] * tau - c * mu[j] * mu[j] * A
        if x > m:
            m = x
    s = 0.0
    for j in range(d):
        x = log_mu_alpha[j] + mu[j] * tau - c * mu[j] * mu[j] * A
        s += math.exp(2.0 * (x - m))
    return m + 0.5 * math.log(s)


@njit(cache=True)
def _A_rhs(tau, A, log_mu_alpha, mu, c):
    """A' = 1/S = exp(−ln S)."""
    return math.exp(-_log_S(tau, A, log_mu_alpha, mu, c))


@njit(cache=True)
def _rk4_A_step(tau, A, dt, log_mu_alpha, mu, c):
    return _rk4_A_step_k1(tau, A, dt, _A_rhs(tau, A, log_mu_alpha, mu, c), log_mu_alpha, mu, c)


@njit(cache=True)
def _rk4_A_step_k1(tau, A, dt, k1, log_mu_alpha, mu, c):
    """One RK4 step (:data:`biasaudit.numerics.tableau.RK4`) given the first stage k1 = A'(τ, A) (already
    computed for the certificate test)."""
    k2 = _A_rhs(tau + _RK4_C[1] * dt, A + _RK4_SUB[0] * dt * k1, log_mu_alpha, mu, c)
    k3 = _A_rhs(tau + _RK4_C[2] * dt, A + _RK4_SUB[1] * dt * k2, log_mu_alpha, mu, c)
    k4 = _A_rhs(tau + _RK4_C[3] * dt, A + _RK4_SUB[2] * dt * k3, log_mu_alpha, mu, c)
    return A + dt * (_RK4_B[0] * k1 + _RK4_B[1] * k2 + _RK4_B[2] * k3 + _RK4_B[3] * k4)


@njit(cache=True)
def _max_log_w(tau, A, log_alpha, mu, c):
    m = -np.inf
    for j in range(mu.shape[0]):
        x = log_alpha[j] + mu[j] * tau - c * mu[j] * mu[j] * A
        if x > m:
            m = x
    return m


@njit(cache=True)
def _classify(log_alpha, mu, c, dt, tau_max, out):
    """Integrate A until a certificate fires. out = [code, τ, A] (code −1 collapse, +1 escape, 0 none)."""
    log_mu_alpha = _log_mu_alpha(mu, log_alpha)
    log_c_mu1 = math.log(c * mu[0])
    log_c = math.log(c)
    tau = 0.0
    A = 0.0
    code = 0
    while True:
        lS = _log_S(tau, A, log_mu_alpha, mu, c)
        if lS <= log_c_mu1:
            code = -1
            break
        if _max_log_w(tau, A, log_alpha, mu, c) > log_c:
            code = 1
            break
        if tau >= tau_max:
            break
        A = _rk4_A_step_k1(tau, A, dt, math.exp(-lS), log_mu_alpha, mu, c)
        tau += dt
    out[0] = code
    out[1] = tau
    out[2] = A


@njit(cache=True)
def _trajectory(log_alpha, mu, c, dt, tau_out, A_out, status_out):
    """RK4 for A on a fixed step; A at the (increasing) τ_out by a final partial step.

    status_out[i] = −1 once the collapse certificate has fired (A is then left at +inf: β → 0 in finite τ),
    +1 once the escape certificate has fired, 0 before either.
    """
    log_mu_alpha = _log_mu_alpha(mu, log_alpha)
    log_c_mu1 = math.log(c * mu[0])
    log_c = math.log(c)
    tau = 0.0
    A = 0.0
    state = 0
    i = 0
    n = tau_out.shape[0]
    while i < n:
        lS = _log_S(tau, A, log_mu_alpha, mu, c)
        if state == 0:
            if lS <= log_c_mu1:
                state = -1
            elif _max_log_w(tau, A, log_alpha, mu, c) > log_c:
                state = 1
        if state == -1:
            A_out[i] = np.inf
            status_out[i] = -1
            i += 1
            continue
        if tau_out[i] <= tau + dt:
            h = tau_out[i] - tau
            A_out[i] = _rk4_A_step(tau, A, h, log_mu_alpha, mu, c) if h > 0.0 else A
            status_out[i] = state
            i += 1
            continue
        A = _rk4_A_step_k1(tau, A, dt, math.exp(-lS), log_mu_alpha, mu, c)
        tau += dt


@njit(cache=True)
def _dopri_A(log_alpha, mu, c, tau_out, rtol, atol, A_out, status_out, counts):
    """Adaptive Dormand–Prince 5(4) for A' = 1/S, landing exactly on every τ_out (steps are clipped to the
    next output time). Error norm |A₅ − A₄| / (atol + rtol·max(|A|, |A_new|)) ≤ 1; step factor
    0.9·err^{−1/5} clipped to [0.2, 10] (≤ 1 right after a rejection).

    Certificates at every accepted step point (hence at every output): collapse S ≤ cμ₁ (A = +inf and
    status −1 from then on), escape max_j w_j > c (status +1). Saturation as in the fixed-step kernels:
    once S > 2cμ_d and 2/(μ_d S) ≤ 1e−17·A, A = A_∞ to float64 and later outputs are exact.
    counts = [accepted, rejected] steps. Returns the final status.
    """
    d = mu.shape[0]
    lma = _log_mu_alpha(mu, log_alpha)
    log_c_mu1 = math.log(c * mu[0])
    log_c = math.log(c)
    mu_d = mu[d - 1]
    n = tau_out.shape[0]
    tau = 0.0
    A = 0.0
    lS = _log_S(tau, A, lma, mu, c)
    k1 = math.exp(-lS)
    state = 0
    frozen = False
    h = min(rtol ** 0.2, 0.1) / mu_d
    n_acc = 0
    n_rej = 0
    i = 0
    while i < n:
        # certificates at the current (accepted) point
        if state != -1:
            if lS <= log_c_mu1:
                state = -1
            elif state == 0 and _max_log_w(tau, A, log_alpha, mu, c) > log_c:
                state = 1
            if state != -1 and not frozen and A > 0.0 and lS > math.log(2.0 * c * mu_d) \
                    and 2.0 * k1 / mu_d <= 1e-17 * A:
                frozen = True
                state = 1
        if state == -1 or frozen or tau >= tau_out[i]:
            A_out[i] = np.inf if state == -1 else A
            status_out[i] = state
            i += 1
            continue
        rejected = False
        while True:
            hh = h
            last = False
            if tau + hh >= tau_out[i]:
                hh = tau_out[i] - tau
                last = True
            # the DOPRI5 stages, unrolled; b_2 = b_7 = 0 and the 7th stage is f at the new point (FSAL)
            k2 = math.exp(-_log_S(tau + _DP_C[1] * hh, A + hh * (_DP_A[1, 0] * k1), lma, mu, c))
            k3 = math.exp(-_log_S(tau + _DP_C[2] * hh, A + hh * (_DP_A[2, 0] * k1 + _DP_A[2, 1] * k2), lma, mu, c))
            k4 = math.exp(-_log_S(tau + _DP_C[3] * hh, A + hh * (_DP_A[3, 0] * k1 + _DP_A[3, 1] * k2
                                                                 + _DP_A[3, 2] * k3), lma, mu, c))
            k5 = math.exp(-_log_S(tau + _DP_C[4] * hh, A + hh * (_DP_A[4, 0] * k1 + _DP_A[4, 1] * k2
                                                                 + _DP_A[4, 2] * k3 + _DP_A[4, 3] * k4),
                                  lma, mu, c))
            k6 = math.exp(-_log_S(tau + _DP_C[5] * hh, A + hh * (_DP_A[5, 0] * k1 + _DP_A[5, 1] * k2
                                                                 + _DP_A[5, 2] * k3 + _DP_A[5, 3] * k4
                                                                 + _DP_A[5, 4] * k5), lma, mu, c))
            A_new = A + hh * (_DP_B[0] * k1 + _DP_B[2] * k3 + _DP_B[3] * k4 + _DP_B[4] * k5 + _DP_B[5] * k6)
            lS_new = _log_S(tau + hh, A_new, lma, mu, c)
            k7 = math.exp(-lS_new)
            e = hh * (_DP_E[0] * k1 + _DP_E[2] * k3 + _DP_E[3] * k4 + _DP_E[4] * k5 + _DP_E[5] * k6
                      + _DP_E[6] * k7)
            err = abs(e) / (atol + rtol * max(abs(A), abs(A_new)))
            if err <= 1.0 and A_new == A_new:
                fac = dp_step_factor(err)
                if rejected:
                    fac = min(fac, 1.0)
                if not last:
                    h = hh * fac
                elif fac < 1.0:  # a clipped step only ever shrinks the unclipped proposal
                    h = min(h, hh * fac)
                tau = tau_out[i] if last else tau + hh
                A = A_new
                lS = lS_new
                k1 = k7
                n_acc += 1
                break
            n_rej += 1
            rejected = True
            h = hh * dp_step_factor(err)
    counts[0] += n_acc
    counts[1] += n_rej
    return state


# ----------------------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------------------
def _check(mu, alpha, c):
    mu = positive_increasing("mu", mu)
    alpha_arr = positive_vector("alpha", alpha)
    if alpha_arr.size == 1 and mu.size > 1:
        alpha_arr = np.full(mu.size, alpha_arr[0])
    matching_length("alpha", alpha_arr, mu.size, "mu")
    c = positive_scalar("c", c)
    return mu, alpha_arr, c


@dataclass(frozen=True)
class Classification:
    """Which certificate fired first, when, and the value of A there.

    Parameters
    ----------
    code : int
        :data:`COLLAPSE`, :data:`ESCAPE` or :data:`UNDECIDED` (``kind`` names it).
    tau : float
        The rescaled time of the decision.
    A : float
        A(τ) there.
    tau_max : float
        The horizon.
    """

    code: int
    tau: float
    A: float
    tau_max: float

    @property
    def kind(self) -> str:
        """``"collapse"``, ``"escape"`` or ``"undecided"``."""
        return _NAMES[self.code]


def default_horizon(mu: np.ndarray) -> float:
    """τ horizon: the plateau exit takes (1/μ₁)ln(1/δ) + O(1); δ ≥ 1e-16 needs ln(1/δ) ≤ 37."""
    return 60.0 / float(mu[0]) + 60.0 / float(mu[-1])


def classify_l2_trajectory(mu, alpha, c, *, dt: float | None = None, tau_max: float | None = None
                           ) -> Classification:
    """Collapse (S ≤ cμ₁), escape (max_j w_j > c) or undecided within ``tau_max``, for the L = 2 flow
    (numba RK4 on A; :func:`classify_l2_trajectory_reference` is the plain reference).

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing, shape (d,).
    alpha : float or array_like
        The initial weights α > 0: one for every coordinate, or shape (d,).
    c : float
        :math:`c_L` > 0.
    dt : float, optional
        The RK4 step (default :func:`default_step`).
    tau_max : float, optional
        The horizon (default :func:`default_horizon`).

    Returns
    -------
    Classification
        The certificate that fired, and when.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing, an α is <= 0, the lengths differ, ``c`` <= 0, or ``dt``
        or ``tau_max`` is <= 0.
    """
    mu, alpha, c = _check(mu, alpha, c)
    dt = default_step(mu) if dt is None else positive_scalar("dt", dt)
    tau_max = default_horizon(mu) if tau_max is None else positive_scalar("tau_max", tau_max)
    out = np.zeros(3)
    _classify(np.log(alpha), mu, c, dt, tau_max, out)
    return Classification(int(out[0]), float(out[1]), float(out[2]), tau_max)


def classify_l2_trajectory_reference(mu, alpha, c, *, dt=None, tau_max=None) -> Classification:
    """Plain-numpy version of :func:`classify_l2_trajectory` (same RK4, same certificates).

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing, shape (d,).
    alpha : float or array_like
        The initial weights α > 0: one for every coordinate, or shape (d,).
    c : float
        :math:`c_L` > 0.
    dt : float, optional
        The RK4 step (default :func:`default_step`).
    tau_max : float, optional
        The horizon (default :func:`default_horizon`).

    Returns
    -------
    Classification
        The certificate that fired, and when.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing, an α is <= 0, the lengths differ, or ``c`` <= 0.

    Examples
    --------
    >>> mu = [1.0, 2.0]
    >>> classify_l2_trajectory_reference(mu, 0.01, 1.0).kind, classify_l2_trajectory_reference(mu, 2.0, 1.0).kind
    ('collapse', 'escape')
    """
    mu, alpha, c = _check(mu, alpha, c)
    dt = default_step(mu) if dt is None else dt
    tau_max = default_horizon(mu) if tau_max is None else tau_max
    log_mu_alpha = np.log(mu * alpha)

    def log_S(tau, A):
        x = 2.0 * (log_mu_alpha + mu * tau - c * mu**2 * A)
        return 0.5 * np.logaddexp.reduce(x)

    def rhs(tau, A):
        return np.exp(-log_S(tau, A))

    tau, A = 0.0, 0.0
    while True:
        if log_S(tau, A) <= np.log(c * mu[0]):
            return Classification(COLLAPSE, tau, A, tau_max)
        if np.max(np.log(alpha) + mu * tau - c * mu**2 * A) > np.log(c):
            return Classification(ESCAPE, tau, A, tau_max)
        if tau >= tau_max:
            return Classification(UNDECIDED, tau, A, tau_max)
        A = explicit_rk_step(rhs, tau, A, dt, RK4)[0]
        tau += dt


@dataclass(frozen=True)
class ReducedTrajectory:
    r"""A(τ) on a grid, and everything that follows from it by the exact formula.

    Parameters
    ----------
    tau : numpy.ndarray
        The grid, shape (n,).
    A : numpy.ndarray
        A(τ), shape (n,) (+inf once collapsed).
    log_w : numpy.ndarray
        :math:`\ln w_j = \ln\alpha_j + \mu_j\tau - c\mu_j^2 A`, shape (n, d).
    status : numpy.ndarray
        −1 collapsed (certificate S ≤ cμ₁ fired; β → 0 in finite τ, A = +inf, ln w = −inf), +1 escaped
        (max w_j > c), 0 neither yet; shape (n,).
    mu, alpha : numpy.ndarray
        The data point and the initial weights, shape (d,).
    c : float
        :math:`c_L`.
    """

    tau: np.ndarray
    A: np.ndarray
    log_w: np.ndarray  # (n, d)
    status: np.ndarray
    mu: np.ndarray
    alpha: np.ndarray
    c: float

    @property
    def beta(self) -> np.ndarray:
        """β_j = w_j² (balanced, L = 2); may overflow to inf for very long horizons: use log_w."""
        with np.errstate(over="ignore"):
            return np.exp(2.0 * self.log_w)

    @property
    def j_dagger(self) -> np.ndarray:
        """1-based argmax_j β_j; 0 where the trajectory has collapsed."""
        out = np.argmax(self.log_w, axis=1) + 1
        return np.where(self.status == COLLAPSE, 0, out)

    @property
    def log_S(self) -> np.ndarray:
        """ln S(τ) = ½ ln Σ_j μ_j² w_j² on the grid, shape (n,) (−inf once collapsed)."""
        with np.errstate(divide="ignore"):
            x = 2.0 * (np.log(self.mu) + self.log_w)
            return 0.5 * np.logaddexp.reduce(x, axis=1)


def log_weights_from_A(mu, alpha, c, tau, A) -> np.ndarray:
    r""":math:`\ln w_j = \ln\alpha_j + \mu_j\tau - c\mu_j^2 A` (broadcast over τ, A of equal shape); −inf where
    A = +inf.

    Parameters
    ----------
    mu, alpha : numpy.ndarray
        The data point and the initial weights, shape (d,).
    c : float
        :math:`c_L`.
    tau, A : array_like
        Times and A at each, equal shapes.

    Returns
    -------
    numpy.ndarray
        Shape ``tau.shape + (d,)``.

    Examples
    --------
    >>> import numpy as np
    >>> log_w = log_weights_from_A(np.array([1.0, 2.0]), np.array([1.0, 1.0]), 1.0, [0.0, 1.0], [0.0, 0.5])
    >>> log_w.tolist()
    [[0.0, 0.0], [0.5, 0.0]]
    """
    tau = np.asarray(tau, dtype=float)[..., None]
    A = np.asarray(A, dtype=float)[..., None]
    with np.errstate(invalid="ignore"):
        out = np.log(alpha) + mu * tau - c * mu**2 * A
    return np.where(np.isinf(A), -np.inf, out)


def l2_reduction_trajectory(mu, alpha, c, tau_grid, *, dt: float | None = None, rtol: float | None = None,
                            atol: float = 1e-13) -> ReducedTrajectory:
    """Integrate A(τ) and return the trajectory on ``tau_grid`` (increasing, ≥ 0): fixed-step RK4 (step
    ``dt``) by default, adaptive Dormand–Prince 5(4) (:func:`_dopri_A`) when ``rtol`` is given (numba kernels;
    :func:`l2_reduction_trajectory_reference` is the independent reference).

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing, shape (d,).
    alpha : float or array_like
        The initial weights α > 0: one for every coordinate, or shape (d,).
    c : float
        :math:`c_L` > 0.
    tau_grid : array_like
        The output times, nondecreasing and >= 0.
    dt : float, optional
        The RK4 step (default :func:`default_step`).
    rtol : float, optional
        The adaptive method's relative tolerance (then no ``dt``).
    atol : float
        Its absolute tolerance.

    Returns
    -------
    ReducedTrajectory
        A, ln w and the status on ``tau_grid``.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing, an α is <= 0, the lengths differ, ``c`` <= 0,
        ``tau_grid`` is not nondecreasing and >= 0, both ``dt`` and ``rtol`` are given, or a step or
        tolerance is <= 0.
    """
    mu, alpha, c = _check(mu, alpha, c)
    tau_grid = as_finite_vector("tau_grid", tau_grid)
    if np.any(tau_grid < 0) or np.any(np.diff(tau_grid) < 0):
        raise InputError("tau_grid", "must be nondecreasing and >= 0", tau_grid)
    A = np.empty(tau_grid.size)
    status = np.empty(tau_grid.size, dtype=np.int64)
    if rtol is not None:
        if dt is not None:
            raise InputError("dt", "give either dt (fixed-step RK4) or rtol (adaptive), not both", dt)
        _dopri_A(np.log(alpha), mu, c, tau_grid, positive_scalar("rtol", rtol), positive_scalar("atol", atol),
                 A, status, np.zeros(2, dtype=np.int64))
    else:
        dt = default_step(mu) if dt is None else positive_scalar("dt", dt)
        _trajectory(np.log(alpha), mu, c, dt, tau_grid, A, status)
    return ReducedTrajectory(tau_grid, A, log_weights_from_A(mu, alpha, c, tau_grid, A), status, mu, alpha, c)


def l2_reduction_trajectory_reference(mu, alpha, c, tau_grid, *, rtol=1e-12, atol=1e-14) -> ReducedTrajectory:
    r"""Independent path: scipy's DOP853 on the *full d-dimensional* flow in log space (no reduction).

    :math:`u_j = \ln w_j`, :math:`u_j' = \mu_j - c\mu_j^2/S`. Stops at the collapse certificate like the kernel; A
    is recovered from :math:`u_1` by the reduction identity only for comparison
    (:math:`A = (\ln\alpha_1 + \mu_1\tau - u_1)/(c\mu_1^2)`).

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing, shape (d,).
    alpha : float or array_like
        The initial weights α > 0: one for every coordinate, or shape (d,).
    c : float
        :math:`c_L` > 0.
    tau_grid : array_like
        The output times, increasing, >= 0.
    rtol, atol : float
        DOP853's tolerances.

    Returns
    -------
    ReducedTrajectory
        A, ln w and the status on ``tau_grid``.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing, an α is <= 0, the lengths differ, or ``c`` <= 0.

    Examples
    --------
    >>> trajectory = l2_reduction_trajectory_reference([1.0, 2.0], 0.5, 0.1, [0.0, 1.0, 2.0])
    >>> trajectory.j_dagger.tolist(), trajectory.status.tolist()
    ([1, 2, 2], [1, 1, 1])
    """
    from scipy.integrate import solve_ivp

    mu, alpha, c = _check(mu, alpha, c)
    tau_grid = np.asarray(tau_grid, dtype=float)
    log_mu = np.log(mu)

    def log_S(u):
        return 0.5 * np.logaddexp.reduce(2.0 * (log_mu + u))

    def rhs(t, u):
        return mu - c * mu**2 * np.exp(-log_S(u))

    def collapse(t, u):
        return log_S(u) - np.log(c * mu[0])

    collapse.terminal = True
    collapse.direction = -1
    if collapse(0.0, np.log(alpha)) <= 0.0:  # the certificate holds at τ = 0
        log_w = np.full((tau_grid.size, mu.size), -np.inf)
        log_w[tau_grid == 0] = np.log(alpha)
        A = np.where(tau_grid == 0, 0.0, np.inf)
        return ReducedTrajectory(tau_grid, A, log_w, np.full(tau_grid.size, COLLAPSE), mu, alpha, c)
    sol = solve_ivp(rhs, (0.0, float(tau_grid[-1]) if tau_grid[-1] > 0 else 1e-12), np.log(alpha),
                    method="DOP853", rtol=rtol, atol=atol, dense_output=True, events=collapse)
    t_end = sol.t[-1] if sol.status == 1 else np.inf
    log_w = np.full((tau_grid.size, mu.size), -np.inf)
    ok = tau_grid <= t_end
    log_w[ok] = sol.sol(tau_grid[ok]).T
    A = np.where(ok, (np.log(alpha[0]) + mu[0] * tau_grid - log_w[:, 0]) / (c * mu[0] ** 2), np.inf)
    status = np.where(ok, np.where(np.max(log_w, axis=1) > np.log(c), ESCAPE, UNDECIDED), COLLAPSE)
    # once escaped, stays escaped (certificate); make status monotone as in the kernel
    if np.any(status == ESCAPE):
        first = int(np.argmax(status == ESCAPE))
        status[first:][status[first:] != COLLAPSE] = ESCAPE
    return ReducedTrajectory(tau_grid, A, log_w, status, mu, alpha, c)
