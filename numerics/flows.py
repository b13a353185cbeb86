r"""Integrators for the reduced balanced fields ``w' = F(w; mu, rho, c_L, L)`` of GD, l_inf-SAM and l2-SAM.

The fields (see :mod:`biasaudit.theory.sam_fields`), per coordinate j, in rescaled time tau:

===========  =====================================================================
algorithm    F_j(w)
===========  =====================================================================
gd           mu_j w_j^{L-1}
linf         mu_j (w_j - rho s_j)^{L-1},   s_j = sign(w_j^{L-1}),  sign(0) = 0
l2           mu_j (w_j - c_L mu_j w_j^{L-1} / T)^{L-1},  T = ||mu ⊙ w^{L-1}||_2  (T = 0: eps = 0)
===========  =====================================================================

Two methods, each a small ``@njit(cache=True)`` kernel behind :func:`integrate_reduced_flow` (which validates
and allocates), plus :func:`integrate_reduced_flow_reference`, a plain-numpy RK4 used in the tests. Both
methods read their coefficients from :mod:`biasaudit.numerics.tableau` (``RK4`` unrolled, ``DOPRI5`` as a loop
over stages); the reference steps with :func:`biasaudit.numerics.tableau.explicit_rk_step`:

* ``method="rk4"``: classical fixed-step Runge-Kutta 4 (order 4); each output interval is split into equal
  steps no longer than ``dt``.
* ``method="adaptive"``: Dormand-Prince 5(4) with local extrapolation, RMS error norm
  ``|e_i| / (atol + rtol max(|y_i|, |y_new_i|))``, step factor ``0.9 err^{-1/5}`` clipped to [0.2, 10], and
  a minimum step of 16 float spacings of tau.

Events, never NaN:

* **l_inf Filippov sliding at 0.**  For even L the l_inf field jumps at w_j = 0 from ``-mu_j rho^{L-1}``
  (w_j > 0) to ``+mu_j rho^{L-1}`` (w_j < 0): 0 is an attracting sliding point whose Filippov velocity is 0
  (the same as the discrete algorithm's sign(0) = 0).  Each step freezes ``s_j`` at the step's start, so the
  stages see a smooth field; a coordinate that ends the step on the other side of 0 (or on 0) is set to
  exactly 0 and stays there.  Because the exact solution has hit 0 inside that step and slides at 0 after,
  the snapped value is exact.  For odd L the field is >= 0 on both sides of 0: nothing slides.
* **Blow-up** (GD and l_inf at L >= 3 blow up at finite tau): when ``max|w| > w_max``, a state is not
  finite, or the adaptive step underflows while ``max|w|`` has grown past its start, integration stops with
  status ``"blowup"``; ``tau``/``w`` are then truncated after the last finite state (row ``-1`` is that state,
  at ``tau_stop``).
* **Collapse** (L >= 2): when ``max|w| <= w_floor`` the state is at the equilibrium w = 0 (every field
  vanishes there, with the zero-gradient convention); the remaining rows are 0 and status is ``"collapsed"``.
  For l2 at even L a coordinate can reach 0 only when T -> 0 (F_j has the factor w_j^{L-1} while T > 0), and
  near T = 0 the field is discontinuous (it points to 0 from both sides, a Filippov collapse): a step that
  changes the sign of any coordinate sets the whole state to 0.  The collapse time is then known to one step
  (O(h) for rk4; the adaptive step shrinks to ~100 atol / F first).

Symbols: ``mu`` data, ``rho`` SAM radius, ``c`` = c_L (rho/sqrt(L) joint, rho per-layer), ``L`` depth,
``h`` step in tau, ``s`` frozen signs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from biasaudit.numerics.tableau import DOPRI5, RK4, explicit_rk_step
from biasaudit.plumbing import (InputError, as_finite_vector, choice, matching_length, nonnegative_scalar, positive_int,
                                positive_scalar, positive_vector)

__all__ = ["FlowResult", "integrate_reduced_flow", "integrate_reduced_flow_reference", "STATUSES",
           "W_MAX_DEFAULT"]

ALGORITHM_CODES = {"gd": 0, "linf": 1, "l2": 2}
STATUSES = ("ok", "blowup", "collapsed", "step_underflow", "max_steps")
W_MAX_DEFAULT = 1e100  # far below float overflow even for w^{L-1} products at moderate L; e^{mu tau} at ~230/mu
_EPS = np.finfo(float).eps

# the tableaus (biasaudit.numerics.tableau) as module-level arrays: numba freezes them into the kernels
_RK4_SUB = tuple(float(x) for x in RK4.a_subdiagonal)  # a_{i,i−1}: RK4 is unrolled (each stage reads the last)
_RK4_B = tuple(float(x) for x in RK4.b)
_DP_A, _DP_B, _DP_E = DOPRI5.a, DOPRI5.b, DOPRI5.b_error


@dataclass(frozen=True)
class FlowResult:
    """``tau`` (m,), ``w`` (m, d), ``status`` in :data:`STATUSES`; m = n_out unless stopped by a blow-up.

    Parameters
    ----------
    tau : numpy.ndarray
        The output times, shape (m,).
    w : numpy.ndarray
        The balanced weights at each, shape (m, d).
    status : str
        One of :data:`STATUSES` (``ok``, ``blowup``, ``collapsed``, ``step_underflow``, ``max_steps``).
    tau_stop : float
        The time the integration stopped.
    n_steps : int
        The integrator's steps.
    algorithm : str
        ``"gd"``, ``"linf"`` or ``"l2"``.
    depth : int
        The depth L.
    c : float
        :math:`c_L` of ρ, L and the normalization (:func:`~biasaudit.theory.sam_fields.effective_radius`).
    """

    tau: np.ndarray
    w: np.ndarray
    status: str
    tau_stop: float
    n_steps: int
    algorithm: str
    depth: int
    c: float

    @property
    def beta(self) -> np.ndarray:
        """β = w^L on the grid (w raised to the depth elementwise), shape (m, d)."""
        return self.w ** self.depth


# ----------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _signs(code, L, w, s):
    """Frozen s_j = sign(w_j^{L-1}) (only used by l_inf)."""
    for j in range(w.shape[0]):
        if code != 1 or L == 1:
            s[j] = 1.0
        elif w[j] == 0.0:
            s[j] = 0.0
        elif (L - 1) % 2 == 0 or w[j] > 0.0:
            s[j] = 1.0
        else:
            s[j] = -1.0


@njit(cache=True)
def _field(code, w, mu, rho, c, L, s, out):
    d = w.shape[0]
    if code == 0:
        for j in range(d):
            out[j] = mu[j] * w[j] ** (L - 1)
    elif code == 1:
        for j in range(d):
            out[j] = mu[j] * (w[j] - rho * s[j]) ** (L - 1)
    else:
        T2 = 0.0
        for j in range(d):
            g = mu[j] * w[j] ** (L - 1)
            T2 += g * g
        T = math.sqrt(T2)
        for j in range(d):
            g = mu[j] * w[j] ** (L - 1)
            if T == 0.0:
                out[j] = g
            else:
                out[j] = mu[j] * (w[j] - c * g / T) ** (L - 1)


@njit(cache=True)
def _snap(code, L, w_old, w_new):
    """Events at w_j = 0 for even L (odd L fields never move a positive w_j through 0).

    l_inf: a coordinate that reached or crossed 0 slides at 0 (Filippov).  l2: a coordinate can only reach
    0 when T -> 0 (F_j carries a factor w_j^{L-1} while T > 0), so a sign change means the state collapsed
    inside the step: every coordinate is set to the equilibrium 0.
    """
    if L % 2 != 0 or code == 0:
        return
    if code == 1:
        for j in range(w_new.shape[0]):
            if w_old[j] == 0.0 or w_old[j] * w_new[j] <= 0.0:
                w_new[j] = 0.0
        return
    for j in range(w_new.shape[0]):
        if w_old[j] != 0.0 and w_old[j] * w_new[j] <= 0.0:
            w_new[:] = 0.0
            return


@njit(cache=True)
def _state_flag(w, w_max, w_floor, L):
    """0 fine, 1 blow-up (non-finite or > w_max), 2 collapsed (L >= 2 and max|w| <= w_floor)."""
    big = 0.0
    for j in range(w.shape[0]):
        a = abs(w[j])
        if not (a <= w_max):  # NaN-safe
            return 1
        if a > big:
            big = a
    if L >= 2 and big <= w_floor:
        return 2
    return 0


@njit(cache=True)
def _rk4_step(code, w, mu, rho, c, L, h, s, K, tmp, out):
    """One classical RK4 step (:data:`biasaudit.numerics.tableau.RK4`), unrolled: every stage reads only the
    one before (a_{i,i−1} = ``_RK4_SUB``), weights ``_RK4_B``; K is (4, d) scratch."""
    d = w.shape[0]
    _field(code, w, mu, rho, c, L, s, K[0])
    for st in range(1, 4):
        for j in range(d):
            tmp[j] = w[j] + _RK4_SUB[st - 1] * h * K[st - 1, j]
        _field(code, tmp, mu, rho, c, L, s, K[st])
    for j in range(d):
        out[j] = w[j] + h * (_RK4_B[0] * K[0, j] + _RK4_B[1] * K[1, j] + _RK4_B[2] * K[2, j] + _RK4_B[3] * K[3, j])


@njit(cache=True)
def _rk4_flow(code, w0, mu, rho, c, L, dt, w_max, w_floor, tau_out, w_out):
    """Fixed-step RK4 through the grid tau_out; writes w_out rows. Returns (rows, status, tau_stop, steps)."""
    d = w0.shape[0]
    w = w0.copy()
    wn = np.empty(d)
    s = np.empty(d)
    K = np.empty((4, d))
    tmp = np.empty(d)
    w_out[0, :] = w
    steps = 0
    flag = _state_flag(w, w_max, w_floor, L)
    if flag == 2:
        w_out[:, :] = 0.0
        return tau_out.shape[0], 2, tau_out[0], 0
    for i in range(1, tau_out.shape[0]):
        span = tau_out[i] - tau_out[i - 1]
        n = max(1, int(math.ceil(span / dt * (1.0 - 4.0 * 2.220446049250313e-16))))
        h = span / n
        for k in range(n):
            _signs(code, L, w, s)
            _rk4_step(code, w, mu, rho, c, L, h, s, K, tmp, wn)
            _snap(code, L, w, wn)
            steps += 1
            flag = _state_flag(wn, w_max, w_floor, L)
            if flag == 1:
                w_out[i, :] = w
                tau_out[i] = tau_out[i - 1] + k * h
                return i + 1, 1, tau_out[i], steps
            w[:] = wn
            if flag == 2:
                w_out[i:, :] = 0.0
                return tau_out.shape[0], 2, tau_out[i - 1] + (k + 1) * h, steps
        w_out[i, :] = w
    return tau_out.shape[0], 0, tau_out[tau_out.shape[0] - 1], steps


@njit(cache=True)
def _rms_error(err, y, yn, rtol, atol):
    total = 0.0
    for j in range(y.shape[0]):
        sc = atol + rtol * max(abs(y[j]), abs(yn[j]))
        total += (err[j] / sc) ** 2
    return math.sqrt(total / y.shape[0])


@njit(cache=True)
def _dp_step(code, w, mu, rho, c, L, h, s, K, tmp, out, err):
    """One Dormand–Prince 5(4) step (:data:`biasaudit.numerics.tableau.DOPRI5`), a loop over its stages: the
    5th-order solution into ``out`` and the error estimate h Σ_i (b_i − b̂_i) K[i] into ``err``; K is
    (7, d) scratch."""
    d = w.shape[0]
    for st in range(_DP_A.shape[0]):
        for j in range(d):
            acc = w[j]
            for m in range(st):
                acc += h * _DP_A[st, m] * K[m, j]
            tmp[j] = acc
        _field(code, tmp, mu, rho, c, L, s, K[st])
    for j in range(d):
        acc = w[j]
        e = 0.0
        for m in range(_DP_B.shape[0]):
            if _DP_B[m] != 0.0:  # b_7 = 0 (FSAL): the last stage only enters the error estimate
                acc += h * _DP_B[m] * K[m, j]
            e += _DP_E[m] * K[m, j]
        out[j] = acc
        err[j] = h * e


DP_SAFETY, DP_MIN_FACTOR, DP_MAX_FACTOR = 0.9, 0.2, 10.0
_DP_EXPONENT = -1.0 / (DOPRI5.error_order + 1)  # err ~ h^{p̂+1}, p̂ = 4 the embedded order


@njit(cache=True)
def dp_step_factor(err):
    """Step-size factor of the Dormand–Prince 5(4) controllers here: 0.9·err^{−1/5} clipped to [0.2, 10]
    (err = 0: 10; NaN or inf: 0.2). err is the scaled error norm; a step is accepted when err ≤ 1."""
    if err != err:
        return DP_MIN_FACTOR
    if err == 0.0:
        return DP_MAX_FACTOR
    return min(DP_MAX_FACTOR, max(DP_MIN_FACTOR, DP_SAFETY * err ** _DP_EXPONENT))


@njit(cache=True)
def _dp_flow(code, w0, mu, rho, c, L, rtol, atol, w_max, w_floor, max_steps, tau_out, w_out):
    """Adaptive Dormand-Prince 5(4) through the grid tau_out. Returns (rows, status, tau_stop, steps)."""
    d = w0.shape[0]
    w = w0.copy()
    wn = np.empty(d)
    s = np.empty(d)
    K = np.empty((_DP_B.shape[0], d))
    tmp = np.empty(d)
    err = np.empty(d)
    w_out[0, :] = w
    start_scale = 0.0
    for j in range(d):
        start_scale = max(start_scale, abs(w0[j]))
    flag = _state_flag(w, w_max, w_floor, L)
    if flag == 2:
        w_out[:, :] = 0.0
        return tau_out.shape[0], 2, tau_out[0], 0
    # initial step (Hairer-Wanner II.4): h0 = 0.01 * ||y|| / ||f||, in the error norm
    _signs(code, L, w, s)
    _field(code, w, mu, rho, c, L, s, tmp)
    d0 = _rms_error(w, w, w, rtol, atol)
    d1 = _rms_error(tmp, w, w, rtol, atol)
    span = tau_out[tau_out.shape[0] - 1] - tau_out[0]
    h = 1e-6 * span if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    h = min(h, span)
    t = tau_out[0]
    steps = 0
    for i in range(1, tau_out.shape[0]):
        t_next = tau_out[i]
        while t < t_next:
            if steps >= max_steps:
                w_out[i, :] = w
                tau_out[i] = t
                return i + 1, 4, t, steps
            h_min = 16.0 * 2.220446049250313e-16 * max(abs(t), abs(t_next))
            last = False
            if t + h >= t_next - h_min:
                h = t_next - t
                last = True
            _signs(code, L, w, s)
            _dp_step(code, w, mu, rho, c, L, h, s, K, tmp, wn, err)
            steps += 1
            e = _rms_error(err, w, wn, rtol, atol)
            finite = e == e and e < 1e300
            if finite and e <= 1.0:
                _snap(code, L, w, wn)
                flag = _state_flag(wn, w_max, w_floor, L)
                if flag == 1:
                    w_out[i, :] = w
                    tau_out[i] = t
                    return i + 1, 1, t, steps
                t = t_next if last else t + h
                w[:] = wn
                if flag == 2:
                    w_out[i:, :] = 0.0
                    return tau_out.shape[0], 2, t, steps
                h = h * dp_step_factor(e)
            else:
                h = h * dp_step_factor(e)
                if h < h_min:
                    big = 0.0
                    for j in range(d):
                        big = max(big, abs(w[j]))
                    w_out[i, :] = w
                    tau_out[i] = t
                    if big > max(1.0, start_scale):
                        return i + 1, 1, t, steps
                    return i + 1, 3, t, steps
        w_out[i, :] = w
    return tau_out.shape[0], 0, tau_out[tau_out.shape[0] - 1], steps


# ----------------------------------------------------------------------------------------------- wrappers
def _validate(algorithm, mu, alpha, rho, depth, tau_end, normalization, n_out):
    choice("algorithm", algorithm, tuple(ALGORITHM_CODES))
    choice("normalization", normalization, ("joint", "layer"))
    mu_arr = positive_vector("mu", mu)
    alpha_arr = as_finite_vector("alpha", alpha)
    if alpha_arr.size == 1:
        alpha_arr = np.full(mu_arr.size, alpha_arr[0])
    matching_length("alpha", alpha_arr, mu_arr.size, "mu")
    rho_f = nonnegative_scalar("rho", rho) if algorithm == "gd" else positive_scalar("rho", rho)
    L = positive_int("depth", depth, minimum=1)
    tau_end = positive_scalar("tau_end", tau_end)
    n_out = positive_int("n_out", n_out, minimum=2)
    c = field_c(rho_f, L, normalization)
    return mu_arr, alpha_arr, rho_f, L, tau_end, n_out, c


def integrate_reduced_flow(algorithm: str, mu, alpha, rho: float, depth: int, tau_end: float, *,
                           normalization: str = "joint", method: str = "rk4", dt: float | None = None,
                           rtol: float = 1e-10, atol: float = 1e-12, n_out: int = 201,
                           w_max: float = W_MAX_DEFAULT, w_floor: float | None = None,
                           max_steps: int = 10_000_000) -> FlowResult:
    """Integrate the reduced balanced field of ``algorithm`` from ``w(0) = alpha`` to ``tau_end``.

    numba-compiled fixed-step RK4 (``method="rk4"``) or adaptive Dormand–Prince 5(4) (``"adaptive"``);
    :func:`integrate_reduced_flow_reference` is the plain reference. See the module docstring for ``status``.

    Parameters
    ----------
    algorithm : str
        ``"gd"``, ``"linf"`` or ``"l2"``.
    mu : array_like
        The data point μ, shape (d,), entries > 0.
    alpha : float or array_like
        The initial weights w(0): one for every coordinate, or shape (d,), finite.
    rho : float
        The SAM radius ρ > 0 (>= 0 for gd).
    depth : int
        The depth L >= 1.
    tau_end : float
        The end of the rescaled time, > 0.
    normalization : str
        l2-SAM's norm, ``"joint"`` (the default) or ``"layer"``.
    method : str
        ``"rk4"`` (the default) or ``"adaptive"``.
    dt : float, optional
        RK4's step (default ``0.01 / max(mu)``).
    rtol, atol : float
        The adaptive method's tolerances (``rtol`` >= 100 float64 eps).
    n_out : int
        The number of output times (default 201).
    w_max : float
        ``max|w|`` above this is a blow-up (default :data:`W_MAX_DEFAULT`).
    w_floor : float, optional
        ``max|w|`` at or below this is a collapse (default ``1e-13 max|alpha|``).
    max_steps : int
        The adaptive method's step limit.

    Returns
    -------
    FlowResult
        w on ``n_out`` equally spaced times in [0, tau_end] (fewer after a blow-up), and the status.

    Raises
    ------
    InputError
        If an input breaks its rule above (an unknown algorithm, normalization or method, μ <= 0, ρ < 0, L < 1,
        a non-finite α, ``tau_end`` <= 0, ``dt``, ``w_max``, ``atol`` <= 0, ``rtol`` too small).
    """
    mu_arr, alpha_arr, rho_f, L, tau_end, n_out, c = _validate(algorithm, mu, alpha, rho, depth, tau_end,
                                                                normalization, n_out)
    choice("method", method, ("rk4", "adaptive"))
    w_max = positive_scalar("w_max", w_max)
    w_floor = 1e-13 * float(np.max(np.abs(alpha_arr))) if w_floor is None else nonnegative_scalar("w_floor",
                                                                                                   w_floor)
    code = ALGORITHM_CODES[algorithm]
    tau = np.linspace(0.0, tau_end, n_out)
    w_out = np.empty((n_out, mu_arr.size))
    if method == "rk4":
        dt = 0.01 / float(np.max(mu_arr)) if dt is None else positive_scalar("dt", dt)
        rows, status, tau_stop, steps = _rk4_flow(code, alpha_arr, mu_arr, rho_f, c, L, dt, w_max, w_floor,
                                                  tau, w_out)
    else:
        rtol = positive_scalar("rtol", rtol)
        atol = positive_scalar("atol", atol)
        if rtol < 100 * _EPS:
            raise InputError("rtol", f"must be >= 100 float64 eps ({100 * _EPS:.1e})", rtol)
        max_steps = positive_int("max_steps", max_steps)
        rows, status, tau_stop, steps = _dp_flow(code, alpha_arr, mu_arr, rho_f, c, L, rtol, atol, w_max,
                                                 w_floor, max_steps, tau, w_out)
    return FlowResult(tau[:rows].copy(), w_out[:rows].copy(), STATUSES[status], float(tau_stop), int(steps),
                      algorithm, L, float(c))


def integrate_reduced_flow_reference(algorithm: str, mu, alpha, rho: float, depth: int, tau_end: float, *,
                                     normalization: str = "joint", dt: float = 1e-3,
                                     n_out: int = 201) -> FlowResult:
    """Plain-numpy fixed-step RK4 on the sympy-lambdified field of :mod:`biasaudit.theory.sam_fields` (for tests).

    Same grid, snapping and stop rules as the numba RK4 (but evaluates the field with the signs of each
    stage, not frozen ones). Slow; small problems only.

    Parameters
    ----------
    algorithm : str
        ``"gd"``, ``"linf"`` or ``"l2"``.
    mu : array_like
        The data point μ, shape (d,), entries > 0.
    alpha : float or array_like
        The initial weights w(0): one for every coordinate, or shape (d,), finite.
    rho : float
        The SAM radius ρ > 0 (>= 0 for gd).
    depth : int
        The depth L >= 1.
    tau_end : float
        The end of the rescaled time, > 0.
    normalization : str
        l2-SAM's norm, ``"joint"`` (the default) or ``"layer"``.
    dt : float
        The RK4 step (default 1e-3).
    n_out : int
        The number of output times (default 201).

    Returns
    -------
    FlowResult
        w on ``n_out`` equally spaced times in [0, tau_end] (fewer after a blow-up), and the status.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`integrate_reduced_flow`.

    Examples
    --------
    >>> flow = integrate_reduced_flow_reference("gd", [1.0, 2.0], 0.1, 0.0, 2, 1.0, dt=0.01, n_out=3)
    >>> flow.status, bool(np.allclose(flow.w[-1], 0.1 * np.exp([1.0, 2.0]), rtol=1e-8))   # w = α e^(μτ) at L = 2
    ('ok', True)
    """
    from biasaudit.theory.sam_fields import reduced_field

    mu_arr, alpha_arr, rho_f, L, tau_end, n_out, _ = _validate(algorithm, mu, alpha, rho, depth, tau_end,
                                                               normalization, n_out)
    sym_field = reduced_field(algorithm, L, normalization)
    tau = np.linspace(0.0, tau_end, n_out)
    out = np.zeros((n_out, mu_arr.size))
    wv = alpha_arr.copy()
    out[0] = wv
    floor = 1e-13 * np.max(np.abs(alpha_arr))
    steps = 0
    for i in range(1, n_out):
        n = max(1, math.ceil((tau[i] - tau[i - 1]) / dt * (1 - 4 * _EPS)))
        h = (tau[i] - tau[i - 1]) / n
        for k in range(n):
            if algorithm == "linf":  # signs frozen at the step's start, as in the kernel
                s = np.sign(wv ** (L - 1))

                def field(x, m, r, s=s):
                    return m * (x - r * s) ** (L - 1)
            else:
                field = sym_field
            new = explicit_rk_step(lambda t, x, field=field: field(x, mu_arr, rho_f), 0.0, wv, h, RK4)[0]
            if algorithm == "linf" and L % 2 == 0:
                new = np.where((wv == 0) | (wv * new <= 0), 0.0, new)
            if algorithm == "l2" and L % 2 == 0 and np.any((wv != 0) & (wv * new <= 0)):
                new = np.zeros_like(new)
            steps += 1
            if not np.all(np.abs(new) <= W_MAX_DEFAULT):
                out[i] = wv
                tau[i] = tau[i - 1] + k * h
                return FlowResult(tau[: i + 1], out[: i + 1], "blowup", float(tau[i]), steps, algorithm, L,
                                  field_c(rho_f, L, normalization))
            wv = new
            if L >= 2 and np.max(np.abs(wv)) <= floor:
                return FlowResult(tau, out, "collapsed", float(tau[i - 1] + (k + 1) * h), steps, algorithm, L,
                                  field_c(rho_f, L, normalization))
        out[i] = wv
    return FlowResult(tau, out, "ok", float(tau_end), steps, algorithm, L, field_c(rho_f, L, normalization))


def field_c(rho: float, depth: int, normalization: str) -> float:
    """c_L for the l2 field (:func:`biasaudit.theory.sam_fields.effective_radius`; rho = 0 allowed for GD)."""
    from biasaudit.theory.sam_fields import effective_radius

    return float(effective_radius(rho, depth, normalization))
