r"""Methods ``"reduction"`` and ``"reduction-fixed"`` of the j† heatmap: the exact log-linear reduction.

Along the balanced depth-2 flow ln w_j = ln α_j + μ_j τ − cμ_j² A(τ) with A' = 1/S (see
:mod:`biasaudit.numerics.l2_reduction`), so each α needs one scalar ODE for A; j†, the loss and ln S then
follow in log space (:func:`_reduction_record`: nothing overflows).

* ``"reduction"``: adaptive Dormand–Prince 5(4) for A (:func:`biasaudit.numerics.l2_reduction._dopri_A`),
  one α per ``prange`` iteration, landing on every output τ; ``rtol``/``atol`` (default 1e−12/1e−14: max
  |ln S| error ≈ 1e−9, that of the default fixed step).
* ``"reduction-fixed"``: fixed-step RK4 (:data:`biasaudit.numerics.tableau.RK4`) for A, ``steps_per_output``
  steps between outputs; :func:`_A_block` steps 16 α at once (τ shared, the stages vectorised over α),
  :func:`_A_one` is the one-α kernel beside it (the readable version, checked against the block kernel).

Both stop an α at the collapse certificate S ≤ cμ₁ (A = +inf from then on), mark the escape certificate
max_j w_j > c, and freeze A once it has converged to float64 ("saturation").
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from biasaudit.numerics.l2_reduction import _dopri_A
from biasaudit.numerics.tableau import RK4

__all__ = ["reduction_heatmap"]

# RK4 as module-level constants (numba freezes them): a_{i,i−1} (the only nonzero a), b and c
_SUB = tuple(float(x) for x in RK4.a_subdiagonal)
_B = tuple(float(x) for x in RK4.b)
_C = tuple(float(x) for x in RK4.c)


@njit(cache=True, inline="always")
def _exp_neg_small(x):
    """e^{−x}: degree-9 Taylor for 0 ≤ x ≤ 0.05 (relative error < 0.05^10/10! ≈ 3e-20), else math.exp."""
    if x > 0.05:
        return math.exp(-x)
    y = -x  # Horner in y with coefficients 1/n! (multiplications only)
    return 1.0 + y * (1.0 + y * (0.5 + y * (1.0 / 6.0 + y * (1.0 / 24.0 + y * (1.0 / 120.0 + y * (
        1.0 / 720.0 + y * (1.0 / 5040.0 + y * (1.0 / 40320.0 + y * (1.0 / 362880.0)))))))))


_RESYNC = 64  # exact log-space re-evaluation of P_j every this many steps (bounds multiplicative drift)


@njit(cache=True)
def _A_one(log_alpha, mu, c, dt, stride, A_out, status_out):
    """RK4 (:data:`biasaudit.numerics.tableau.RK4`) on the scalar A' = 1/S, recording every ``stride`` steps;
    A = inf after collapse.

    State: A and P_j = (μ_j w_j)² e^{−2·top} (a common scale ``top``), so S = e^{top} √ΣP_j and
    μ_j w_j = e^{top} √P_j. A step multiplies P_j by e^{2μ_j dt} (precomputed) and e^{−2cμ_j² ΔA}
    (:func:`_exp_neg_small`); stage i evaluates the same product at Δτ = c_i dt, ΔA = a_{i,i−1} dt k_{i−1}
    (RK4's stages read only the stage before), with e^{2μ_j c_i dt} precomputed. So a step needs no
    transcendental call; every ``_RESYNC`` steps (or when ΣP_j leaves [1e−100, 1e100]) P_j and ``top`` are
    recomputed exactly from ln w_j = ln α_j + μ_j τ − cμ_j² A (log space: nothing overflows).
    Saturation: once S ≥ 2cμ_d, w_d grows at rate ≥ μ_d/2, so the rest of ∫dτ/S is ≤ 2/(μ_d S); when that is
    below 1e−17·A, A = A_∞ to float64 and the remaining outputs are exact (status escape).
    """
    d = mu.shape[0]
    lma = np.empty(d)
    two_c_mu2 = np.empty(d)
    g2 = np.empty(d)
    g3 = np.empty(d)
    g4 = np.empty(d)
    g_full = np.empty(d)
    inv_mu = np.empty(d)
    for j in range(d):
        lma[j] = math.log(mu[j]) + log_alpha[j]
        two_c_mu2[j] = 2.0 * c * mu[j] * mu[j]
        g2[j] = math.exp(2.0 * _C[1] * mu[j] * dt)   # e^{2μ_j c_i dt}: P_j at the stage's τ + c_i dt
        g3[j] = math.exp(2.0 * _C[2] * mu[j] * dt)
        g4[j] = math.exp(2.0 * _C[3] * mu[j] * dt)
        g_full[j] = math.exp(2.0 * mu[j] * dt)       # e^{2μ_j·dt}: the step's end
        inv_mu[j] = 1.0 / mu[j]
    P = np.empty(d)
    tau = 0.0
    A = 0.0
    status = 0
    frozen = False
    top = 0.0
    inv_top = 1.0
    since = _RESYNC  # force an exact evaluation first
    for k in range(A_out.shape[0]):
        if k > 0 and status != -1 and not frozen:
            for _ in range(stride):
                s0 = 0.0
                if since >= _RESYNC:
                    top = -np.inf
                    for j in range(d):
                        P[j] = lma[j] + mu[j] * tau - c * mu[j] * mu[j] * A
                        if P[j] > top:
                            top = P[j]
                    for j in range(d):
                        P[j] = math.exp(2.0 * (P[j] - top))
                        s0 += P[j]
                    inv_top = math.exp(-top)
                    since = 0
                else:
                    for j in range(d):
                        s0 += P[j]
                since += 1
                root = math.sqrt(s0)
                if root <= c * mu[0] * inv_top:  # collapse certificate S ≤ cμ₁
                    status = -1
                    break
                pmax = 0.0
                for j in range(d):
                    q = P[j] * inv_mu[j] * inv_mu[j]
                    if q > pmax:
                        pmax = q
                if math.sqrt(pmax) > c * inv_top:  # escape certificate max_j w_j > c
                    status = 1
                k1 = inv_top / root
                if root > 2.0 * c * mu[d - 1] * inv_top and A > 0.0 and 2.0 * k1 / mu[d - 1] <= 1e-17 * A:
                    frozen = True  # A has converged: the rest of the trajectory is the exact formula
                    status = 1
                    break
                s = 0.0
                dA = _SUB[0] * dt * k1
                for j in range(d):
                    s += P[j] * g2[j] * _exp_neg_small(two_c_mu2[j] * dA)
                k2 = inv_top / math.sqrt(s)
                s = 0.0
                dA = _SUB[1] * dt * k2
                for j in range(d):
                    s += P[j] * g3[j] * _exp_neg_small(two_c_mu2[j] * dA)
                k3 = inv_top / math.sqrt(s)
                s = 0.0
                dA = _SUB[2] * dt * k3
                for j in range(d):
                    s += P[j] * g4[j] * _exp_neg_small(two_c_mu2[j] * dA)
                k4 = inv_top / math.sqrt(s)
                step = dt * (_B[0] * k1 + _B[1] * k2 + _B[2] * k3 + _B[3] * k4)
                A += step
                tau += dt
                s = 0.0
                for j in range(d):
                    P[j] *= g_full[j] * _exp_neg_small(two_c_mu2[j] * step)
                    s += P[j]
                if not (1e-100 < s < 1e100):
                    since = _RESYNC
        A_out[k] = np.inf if status == -1 else A
        status_out[k] = status
    return status


@njit(cache=True, fastmath=True)
def _stage_sum(P, g, two_c_mu2, dA, out):
    """out_b = Σ_j P[j, b] g_j e^{−2cμ_j² dA_b} (structure of arrays; polynomial e^{−x} when x ≤ 0.05)."""
    d, B = P.shape
    xmax = 0.0
    for b in range(B):
        out[b] = 0.0
        xmax = max(xmax, two_c_mu2[d - 1] * dA[b])
    if xmax <= 0.05:
        for j in range(d):
            for b in range(B):
                y = -two_c_mu2[j] * dA[b]
                e = 1.0 + y * (1.0 + y * (0.5 + y * (1.0 / 6.0 + y * (1.0 / 24.0 + y * (1.0 / 120.0 + y * (
                    1.0 / 720.0 + y * (1.0 / 5040.0 + y * (1.0 / 40320.0 + y * (1.0 / 362880.0)))))))))
                out[b] += P[j, b] * g[j] * e
    else:
        for j in range(d):
            for b in range(B):
                out[b] += P[j, b] * g[j] * math.exp(-two_c_mu2[j] * dA[b])


@njit(cache=True)
def _A_block(LA, mu, c, dt, stride, A_out, status_out, status):
    """:func:`_A_one` for a block of α at once (LA = ln α as (d, B), α innermost): τ is shared by the block,
    so the RK4 stages vectorize over α. Same state, resync, certificates and saturation rule."""
    d, B = LA.shape
    two_c_mu2 = 2.0 * c * mu * mu
    g2 = np.exp(2.0 * _C[1] * mu * dt)  # e^{2μ_j c_i dt}, the stage factors
    g3 = np.exp(2.0 * _C[2] * mu * dt)
    g4 = np.exp(2.0 * _C[3] * mu * dt)
    g_full = np.exp(2.0 * mu * dt)
    inv_mu2 = 1.0 / (mu * mu)
    P = np.empty((d, B))
    A = np.zeros(B)
    top = np.zeros(B)
    inv_top = np.ones(B)
    live = np.ones(B)
    s = np.empty(B)
    dA = np.empty(B)
    k1 = np.empty(B)
    k2 = np.empty(B)
    k3 = np.empty(B)
    k4 = np.empty(B)
    tau = 0.0
    since = _RESYNC
    for b in range(B):
        status[b] = 0
    for k in range(A_out.shape[1]):
        if k > 0:
            for _ in range(stride):
                if since >= _RESYNC:
                    for b in range(B):
                        t = -np.inf
                        for j in range(d):
                            P[j, b] = math.log(mu[j]) + LA[j, b] + mu[j] * tau - c * mu[j] * mu[j] * A[b]
                            t = max(t, P[j, b])
                        for j in range(d):
                            P[j, b] = math.exp(2.0 * (P[j, b] - t))
                        top[b] = t
                        inv_top[b] = math.exp(-t)
                    since = 0
                since += 1
                for b in range(B):
                    s[b] = 0.0
                for j in range(d):
                    for b in range(B):
                        s[b] += P[j, b]
                any_live = False
                for b in range(B):
                    if live[b] == 0.0:
                        k1[b] = 0.0
                        continue
                    root = math.sqrt(s[b])
                    if root <= c * mu[0] * inv_top[b]:  # collapse certificate S ≤ cμ₁
                        status[b] = -1
                        live[b] = 0.0
                        A[b] = np.inf
                        k1[b] = 0.0
                        continue
                    pmax = 0.0
                    for j in range(d):
                        pmax = max(pmax, P[j, b] * inv_mu2[j])
                    if math.sqrt(pmax) > c * inv_top[b]:  # escape certificate max_j w_j > c
                        status[b] = 1
                    k1[b] = inv_top[b] / root
                    if root > 2.0 * c * mu[d - 1] * inv_top[b] and A[b] > 0.0 \
                            and 2.0 * k1[b] / mu[d - 1] <= 1e-17 * A[b]:
                        status[b] = 1  # saturated: A = A_∞ to float64
                        live[b] = 0.0
                        k1[b] = 0.0
                        continue
                    any_live = True
                if not any_live:
                    break
                for b in range(B):
                    dA[b] = _SUB[0] * dt * k1[b]
                _stage_sum(P, g2, two_c_mu2, dA, s)
                for b in range(B):
                    k2[b] = live[b] * inv_top[b] / math.sqrt(s[b])
                    dA[b] = _SUB[1] * dt * k2[b]
                _stage_sum(P, g3, two_c_mu2, dA, s)
                for b in range(B):
                    k3[b] = live[b] * inv_top[b] / math.sqrt(s[b])
                    dA[b] = _SUB[2] * dt * k3[b]
                _stage_sum(P, g4, two_c_mu2, dA, s)
                for b in range(B):
                    k4[b] = live[b] * inv_top[b] / math.sqrt(s[b])
                    dA[b] = dt * (_B[0] * k1[b] + _B[1] * k2[b] + _B[2] * k3[b] + _B[3] * k4[b])
                    if live[b] != 0.0:
                        A[b] += dA[b]
                tau += dt
                resync = False
                for j in range(d):
                    for b in range(B):
                        if live[b] != 0.0:
                            P[j, b] *= g_full[j] * _exp_neg_small(two_c_mu2[j] * dA[b])
                for b in range(B):
                    if live[b] != 0.0:
                        tot = 0.0
                        for j in range(d):
                            tot += P[j, b]
                        if not (1e-100 < tot < 1e100):
                            resync = True
                if resync:
                    since = _RESYNC
        for b in range(B):
            A_out[b, k] = A[b]
            status_out[b, k] = status[b]


_A_BLOCK = 16  # smaller blocks than RK4: α that collapse or saturate early leave their block idle


@njit(cache=True, parallel=True)
def _A_batch(log_alphas, mu, c, dt, stride, A_out, status_rows, status):
    n = log_alphas.shape[0]
    n_blocks = (n + _A_BLOCK - 1) // _A_BLOCK
    for i in prange(n_blocks):
        lo = i * _A_BLOCK
        hi = min(n, lo + _A_BLOCK)
        LA = np.ascontiguousarray(log_alphas[lo:hi].T)
        _A_block(LA, mu, c, dt, stride, A_out[lo:hi], status_rows[lo:hi], status[lo:hi])


@njit(cache=True, parallel=True)
def _A_batch_scalar(log_alphas, mu, c, dt, stride, A_out, status_rows, status):
    """One α at a time (:func:`_A_one`): the readable reference of :func:`_A_batch`, used in tests."""
    for b in prange(log_alphas.shape[0]):
        status[b] = _A_one(log_alphas[b], mu, c, dt, stride, A_out[b], status_rows[b])


@njit(cache=True, parallel=True)
def _A_batch_adaptive(log_alphas, mu, c, times, rtol, atol, A_out, status_rows, status, counts):
    """Adaptive Dormand–Prince 5(4) for A, one α per ``prange`` iteration (each α takes its own steps):
    :func:`biasaudit.numerics.l2_reduction._dopri_A`. counts[b] = [accepted, rejected] steps of α b."""
    for b in prange(log_alphas.shape[0]):
        status[b] = _dopri_A(log_alphas[b], mu, c, times, rtol, atol, A_out[b], status_rows[b], counts[b])


@njit(cache=True, parallel=True)
def _reduction_record(log_alphas, mu, c, times, A, jd, loss, logS):
    """j†, loss and ln S from A by ln w_j = ln α_j + μ_jτ − cμ_j²A (log space); collapsed (A = inf): j† = 0,
    loss ln 2, ln S = −inf."""
    n, d = log_alphas.shape
    log_mu = np.log(mu)
    for b in prange(n):
        for k in range(times.shape[0]):
            a = A[b, k]
            if not math.isfinite(a):
                jd[b, k] = 0
                loss[b, k] = math.log(2.0)
                logS[b, k] = -np.inf
                continue
            best = 0
            wmax = -np.inf
            ms = -np.inf
            mz = -np.inf
            for j in range(d):
                lw = log_alphas[b, j] + mu[j] * times[k] - c * mu[j] * mu[j] * a
                if lw > wmax:
                    wmax = lw
                    best = j
                ms = max(ms, log_mu[j] + lw)
                mz = max(mz, log_mu[j] + 2.0 * lw)
            ss = 0.0
            sz = 0.0
            for j in range(d):
                lw = log_alphas[b, j] + mu[j] * times[k] - c * mu[j] * mu[j] * a
                ss += math.exp(2.0 * (log_mu[j] + lw - ms))
                sz += math.exp(log_mu[j] + 2.0 * lw - mz)
            jd[b, k] = best + 1
            logS[b, k] = ms + 0.5 * math.log(ss)
            log_z = mz + math.log(sz)
            loss[b, k] = math.log1p(math.exp(-math.exp(min(log_z, 700.0))))


def reduction_heatmap(log_alphas, mu, c: float, times, *, adaptive: bool, stride: int = 1, rtol: float = 1e-12,
                      atol: float = 1e-14):
    """j†, loss and ln S on ``times`` for every row of ``log_alphas`` (n, d) = ln α, and the per-α status;
    ``adaptive``: Dormand–Prince 5(4) at ``rtol``/``atol``, else RK4 with ``stride`` steps per output
    interval (numba kernels on the reduced A-ODE). Inputs are validated by
    :func:`biasaudit.numerics.heatmap.dominant_index_heatmap`.

    Parameters
    ----------
    log_alphas : numpy.ndarray
        ln α, shape (n, d).
    mu : numpy.ndarray
        The data point, shape (d,).
    c : float
        :math:`c_L`.
    times : numpy.ndarray
        The output times τ, shape (m,), a uniform grid from 0.
    adaptive : bool
        Dormand–Prince 5(4) (True) or fixed-step RK4.
    stride : int
        RK4 steps per output interval.
    rtol, atol : float
        The adaptive method's tolerances.

    Returns
    -------
    tuple
        ``(jd, loss, logS, status, steps)``: ``jd``, ``loss`` and ``logS`` (n, m), ``status`` (n,), and ``steps``
        (n, 2) accepted/rejected steps for the adaptive method, None for the fixed one.
    """
    n_a, n_t = log_alphas.shape[0], times.size
    A = np.zeros((n_a, n_t))
    rows = np.zeros((n_a, n_t), dtype=np.int64)
    status = np.zeros(n_a, dtype=np.int64)
    steps = None
    if adaptive:
        steps = np.zeros((n_a, 2), dtype=np.int64)
        _A_batch_adaptive(log_alphas, mu, c, times, rtol, atol, A, rows, status, steps)
    else:
        dt = (times[1] - times[0]) / stride if n_t > 1 else 0.0
        _A_batch(log_alphas, mu, c, dt, stride, A, rows, status)
    jd = np.zeros((n_a, n_t), dtype=np.int64)
    loss = np.zeros((n_a, n_t))
    logS = np.zeros((n_a, n_t))
    _reduction_record(log_alphas, mu, c, times, A, jd, loss, logS)
    return jd, loss, logS, status, steps
