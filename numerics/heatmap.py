r"""The dominant-index heatmap j†(time, α) of balanced l2-SAM at depth 2, with GD as the baseline.

For each initial scale α (uniform α·1, or one row per coordinate) the balanced depth-2 trajectory is
followed and j† = argmax_j β_j = argmax_j w_j is recorded on a time grid, together with the loss
ℓ(⟨β, μ⟩) = ln(1 + e^{−⟨β, μ⟩}) (the plateau) and ln S. Time is either

* ``time="tau"``: the rescaled time τ of the flow w_j' = μ_j w_j (1 − cμ_j/S), or
* ``time="iterations"``: iterations k of discrete logistic l2-SAM with step η. One step is exactly
  explicit Euler on the rescaled field with step h_k = η σ(−z̃_k), z̃ the perturbed margin, so
  dτ/dk ≈ η e^{−margin} late in training; the τ reached at each recorded iteration is returned too.

Contenders for the τ heatmap (the bench compares them at matched accuracy):

``method="rk4"``          numba RK4 over the batch (:mod:`biasaudit.numerics.heatmap_rk4`: blocks of α vectorised
                          across α, one block per ``prange`` iteration), fixed step
``method="numpy"``        the same RK4 update, vectorized in numpy over the batch (bench baseline)
``method="solve_ivp"``    scipy ``solve_ivp`` once per α (bench baseline)
``method="reduction"``    the exact log-linear reduction: one scalar ODE for A(τ) per α, integrated by
                          adaptive Dormand–Prince 5(4) (``rtol``/``atol``), then
                          ln w_j = ln α_j + μ_j τ − cμ_j² A for every coordinate
``method="reduction-fixed"``  the same reduction with fixed-step RK4 (``steps_per_output``)
``method="gd"``           gradient flow (ρ = 0) closed form ln w_j = ln α_j + μ_j τ — the baseline heatmap

Overflow: e^{μτ} overflows float64 near τ ≈ 700/μ_d, so the full-flow kernels carry w = e^m v with a
per-α log scale m, renormalising v by a power of two whenever max v > 2^{400} (exact, no rounding); the
reduction works in log space.

Collapse: once the certificate S ≤ cμ₁ fires, β → 0 in finite τ: later entries get j† = 0, the loss its
limit ln 2, ln S = −inf and ``status`` −1. Status +1: the escape certificate max_j w_j > c fired; 0:
neither by the end of the grid (undecided).

Symbols
=======
=========  =====================================================================
``mu``     μ (data point, increasing)
``alpha``  α, balanced initialisation
``c``      ρ/√2 joint, ρ per layer
``eta``    η, step of discrete SAM
``m``      log scale of the state, w = e^m v
``kappa``  κ = c e^{−m}, the SAM radius seen by v
=========  =====================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from biasaudit.numerics.heatmap_common import _LOG_RENORM, _RENORM, _TINY, _certify, _record, _renormalise
from biasaudit.numerics.heatmap_rk4 import rk4_batch
from biasaudit.numerics.l2_reduction import _dopri_A
from biasaudit.plumbing import (InputError, as_finite_vector, choice, matching_length, positive_increasing,
                                positive_int, positive_scalar)

__all__ = ["Heatmap", "dominant_index_heatmap", "discrete_alpha_collapse", "METHODS", "TIMES", "LN2"]

METHODS = ("reduction", "reduction-fixed", "rk4", "numpy", "solve_ivp", "gd")
TIMES = ("tau", "iterations")
LN2 = math.log(2.0)


@dataclass(frozen=True)
class Heatmap:
    """j†(α, time) (1-based; 0 = collapsed), the loss and ln S on the same grid, and per-α status."""

    alphas: np.ndarray          # (n_alpha,) or (n_alpha, d)
    times: np.ndarray           # (n_t,) τ values, or iteration counts
    time: str                   # "tau" or "iterations"
    j_dagger: np.ndarray        # (n_alpha, n_t) int
    loss: np.ndarray            # (n_alpha, n_t)
    log_S: np.ndarray           # (n_alpha, n_t); −inf after collapse
    status: np.ndarray          # (n_alpha,) −1 collapse, +1 escape, 0 undecided at the end
    tau: np.ndarray | None      # (n_alpha, n_t) τ reached at each iteration (time="iterations")
    method: str
    c: float
    mu: np.ndarray
    steps: np.ndarray | None = None  # (n_alpha, 2) accepted/rejected steps (method="reduction" only)

    def sequences(self) -> list[list[int]]:
        """The j† sequence of each α row, runs collapsed, ignoring the tie at τ = 0."""
        out = []
        for row in self.j_dagger:
            row = row[1:] if self.times[0] == 0 else row
            seq = [int(row[0])]
            for x in row[1:]:
                if x != seq[-1]:
                    seq.append(int(x))
            out.append(seq)
        return out


# ----------------------------------------------------------------------------------------------------------
# numba kernels (only loop, write into outputs)
# ----------------------------------------------------------------------------------------------------------
@njit(cache=True)
def _field(v, mu, kappa, out):
    """out_j = μ_j v_j (1 − κμ_j/‖μ⊙v‖); zero gradient (v = 0) gives 0."""
    d = v.shape[0]
    s = 0.0
    for j in range(d):
        s += (mu[j] * v[j]) ** 2
    if s == 0.0:
        for j in range(d):
            out[j] = 0.0
        return
    r = kappa / math.sqrt(s)
    for j in range(d):
        out[j] = mu[j] * v[j] * (1.0 - r * mu[j])


@njit(cache=True)
def _discrete_one(alpha, mu, c, eta, stride, jd, loss, logS, tau, logistic=True, stop_at_escape=False):
    """Discrete l2-SAM on the balanced state: w ← w + h μ w (1 − cμ/S), h = η σ(−z̃) (logistic loss) or
    h = η (``logistic=False``: fixed-step explicit Euler on the rescaled field)."""
    d = mu.shape[0]
    v = alpha.copy()
    m = 0.0
    f = np.empty(d)
    status = 0
    t = 0.0
    n_out = jd.shape[0]
    for k in range(n_out):
        if k > 0 and status != -1:
            for _ in range(stride):
                kappa = c * math.exp(-m)
                s = 0.0
                for j in range(d):
                    s += (mu[j] * v[j]) ** 2
                s = math.sqrt(s)
                z = 0.0  # perturbed margin z̃ = Σ μ_j w̃_j², w̃ = w(1 − cμ/S)
                for j in range(d):
                    wt = v[j] * (1.0 - kappa * mu[j] / s) if s > 0.0 else v[j]
                    z += mu[j] * wt * wt
                log_z = 2.0 * m + math.log(z) if z > 0.0 else -np.inf
                zz = math.exp(log_z) if log_z < 700.0 else np.inf
                sig = 1.0 / (1.0 + math.exp(zz)) if zz < 700.0 else 0.0  # σ(−z̃)
                h = eta * sig if logistic else eta
                _field(v, mu, kappa, f)
                for j in range(d):
                    v[j] += h * f[j]
                    if v[j] < 0.0:  # an overshoot through 0 flips the sign of both layers: β = w² ≥ 0
                        v[j] = -v[j]
                t += h
                m = _renormalise(v, m)
                cert = _certify(v, m, mu, c)
                if cert == -1:
                    status = -1
                    break
                if cert == 1:
                    status = 1
                    if stop_at_escape:
                        break
        elif k == 0:
            cert = _certify(v, m, mu, c)
            if cert != 0:
                status = cert
        _record(v, m, mu, c, status == -1, k, jd, loss, logS)
        tau[k] = t
        if stop_at_escape and status == 1:
            break
    return status


@njit(cache=True, parallel=True)
def _discrete_batch(alphas, mu, c, eta, stride, jd, loss, logS, tau, status, logistic, stop_at_escape=False):
    for b in prange(alphas.shape[0]):
        status[b] = _discrete_one(alphas[b], mu, c, eta, stride, jd[b], loss[b], logS[b], tau[b], logistic,
                                  stop_at_escape)


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
    """RK4 on the scalar A' = 1/S, recording every ``stride`` steps; A = inf after collapse.

    State: A and P_j = (μ_j w_j)² e^{−2·top} (a common scale ``top``), so S = e^{top} √ΣP_j and
    μ_j w_j = e^{top} √P_j. A step multiplies P_j by e^{2μ_j dt} (precomputed) and e^{−2cμ_j² ΔA}
    (:func:`_exp_neg_small`); the RK4 stages reuse the same factors at Δτ = dt/2, dt. So a step needs no
    transcendental call; every ``_RESYNC`` steps (or when ΣP_j leaves [1e−100, 1e100]) P_j and ``top`` are
    recomputed exactly from ln w_j = ln α_j + μ_j τ − cμ_j² A (log space: nothing overflows).
    Saturation: once S ≥ 2cμ_d, w_d grows at rate ≥ μ_d/2, so the rest of ∫dτ/S is ≤ 2/(μ_d S); when that is
    below 1e−17·A, A = A_∞ to float64 and the remaining outputs are exact (status escape).
    """
    d = mu.shape[0]
    lma = np.empty(d)
    two_c_mu2 = np.empty(d)
    g_half = np.empty(d)
    g_full = np.empty(d)
    inv_mu = np.empty(d)
    for j in range(d):
        lma[j] = math.log(mu[j]) + log_alpha[j]
        two_c_mu2[j] = 2.0 * c * mu[j] * mu[j]
        g_half[j] = math.exp(mu[j] * dt)         # e^{2μ_j·dt/2}
        g_full[j] = math.exp(2.0 * mu[j] * dt)   # e^{2μ_j·dt}
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
                dA = 0.5 * dt * k1
                for j in range(d):
                    s += P[j] * g_half[j] * _exp_neg_small(two_c_mu2[j] * dA)
                k2 = inv_top / math.sqrt(s)
                s = 0.0
                dA = 0.5 * dt * k2
                for j in range(d):
                    s += P[j] * g_half[j] * _exp_neg_small(two_c_mu2[j] * dA)
                k3 = inv_top / math.sqrt(s)
                s = 0.0
                dA = dt * k3
                for j in range(d):
                    s += P[j] * g_full[j] * _exp_neg_small(two_c_mu2[j] * dA)
                k4 = inv_top / math.sqrt(s)
                step = dt * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
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
    g_half = np.exp(mu * dt)
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
                    dA[b] = 0.5 * dt * k1[b]
                _stage_sum(P, g_half, two_c_mu2, dA, s)
                for b in range(B):
                    k2[b] = live[b] * inv_top[b] / math.sqrt(s[b])
                    dA[b] = 0.5 * dt * k2[b]
                _stage_sum(P, g_half, two_c_mu2, dA, s)
                for b in range(B):
                    k3[b] = live[b] * inv_top[b] / math.sqrt(s[b])
                    dA[b] = dt * k3[b]
                _stage_sum(P, g_full, two_c_mu2, dA, s)
                for b in range(B):
                    k4[b] = live[b] * inv_top[b] / math.sqrt(s[b])
                    dA[b] = dt * (k1[b] + 2.0 * k2[b] + 2.0 * k3[b] + k4[b]) / 6.0
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


# ----------------------------------------------------------------------------------------------------------
# plain-numpy contenders and references
# ----------------------------------------------------------------------------------------------------------
def _rk4_numpy(alphas, mu, c, dt, stride, n_out):
    """The same update as :func:`biasaudit.numerics.heatmap_rk4.rk4_batch`, vectorized in numpy over the batch (the bench baseline)."""
    v = alphas.copy()
    m = np.zeros(v.shape[0])
    status = np.zeros(v.shape[0], dtype=np.int64)
    jd = np.zeros((v.shape[0], n_out), dtype=np.int64)
    loss = np.zeros((v.shape[0], n_out))
    logS = np.zeros((v.shape[0], n_out))

    def field(x, kappa):
        s = np.sqrt(np.sum((mu * x) ** 2, axis=1, keepdims=True))
        with np.errstate(divide="ignore", invalid="ignore"):
            out = mu * x * (1.0 - kappa[:, None] * mu / s)
        return np.where(s > 0, out, 0.0)

    def certify():
        s = np.sqrt(np.sum((mu * v) ** 2, axis=1))
        kappa = c * np.exp(-m)
        return np.where(s <= kappa * mu[0], -1, np.where(v.max(axis=1) > kappa, 1, 0))

    def record(k):
        live = status != -1
        jd[:, k] = np.where(live, np.argmax(v, axis=1) + 1, 0)
        with np.errstate(divide="ignore"):
            logS[:, k] = np.where(live, m + 0.5 * np.log(np.sum((mu * v) ** 2, axis=1)), -np.inf)
            log_z = 2 * m + np.log(np.sum(mu * v * v, axis=1))
        with np.errstate(over="ignore"):
            loss[:, k] = np.where(live, np.log1p(np.exp(-np.exp(np.minimum(log_z, 700.0)))), LN2)

    cert = certify()
    status[:] = cert
    record(0)
    for k in range(1, n_out):
        for _ in range(stride):
            live = status != -1
            if not live.any():
                break
            kappa = c * np.exp(-m)
            k1 = field(v, kappa)
            k2 = field(v + 0.5 * dt * k1, kappa)
            k3 = field(v + 0.5 * dt * k2, kappa)
            k4 = field(v + dt * k3, kappa)
            v = np.where(live[:, None], v + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6.0, v)
            big = v.max(axis=1) > _RENORM
            if big.any():
                v[big] /= _RENORM
                v[big] = np.where(v[big] < _TINY, 0.0, v[big])
                m[big] += _LOG_RENORM
            cert = certify()
            status = np.where(live & (cert == -1), -1, np.where(live & (cert == 1), 1, status))
        record(k)
    return jd, loss, logS, status


IVP_SPACES = ("log", "w")


def _solve_ivp_one(alpha, mu, c, t_grid, rtol, atol, method="DOP853", space="log"):
    """scipy's ``solve_ivp`` on the full flow of one α; stops at the collapse certificate S = cμ₁.

    ``space="w"``: the flow itself, w' = μ w (1 − cμ/S) — the ODE the RK4 kernels integrate. ``space="log"``:
    u = ln w, u' = μ − cμ²/S — a change of variables that makes the solution nearly linear in τ, so an
    adaptive method takes ~25× fewer steps at equal accuracy (and nothing overflows)."""
    from scipy.integrate import solve_ivp

    log_mu = np.log(mu)
    log_c_mu1 = math.log(c * mu[0])
    c_mu = c * mu
    c_mu2 = c * mu**2

    def log_S(u):
        return 0.5 * np.logaddexp.reduce(2.0 * (log_mu + u))

    if space == "log":
        def rhs(t, u):
            return mu - c_mu2 * np.exp(-log_S(u))

        def collapse(t, u):
            return log_S(u) - log_c_mu1

        y0 = np.log(alpha)
    else:
        def rhs(t, w):
            mw = mu * w
            return mw * (1.0 - c_mu / math.sqrt(mw @ mw))

        def collapse(t, w):
            mw = mu * w
            return math.sqrt(mw @ mw) - c * mu[0]

        y0 = np.array(alpha, dtype=float)

    collapse.terminal = True
    collapse.direction = -1
    n = t_grid.size
    jd = np.zeros(n, dtype=np.int64)
    loss = np.full(n, LN2)
    logS = np.full(n, -np.inf)
    if log_S(np.log(alpha)) <= log_c_mu1:
        return jd, loss, logS, -1
    sol = solve_ivp(rhs, (0.0, float(t_grid[-1])), y0, method=method, rtol=rtol, atol=atol, t_eval=t_grid,
                    events=collapse)
    u = sol.y.T if space == "log" else np.log(np.maximum(sol.y.T, np.finfo(float).tiny))
    k = u.shape[0]
    jd[:k] = np.argmax(u, axis=1) + 1
    logS[:k] = 0.5 * np.logaddexp.reduce(2.0 * (log_mu + u), axis=1)
    log_z = np.logaddexp.reduce(log_mu + 2.0 * u, axis=1)
    loss[:k] = np.log1p(np.exp(-np.exp(np.minimum(log_z, 700.0))))
    status = -1 if sol.status == 1 else (1 if np.max(u) > math.log(c) else 0)
    return jd, loss, logS, status


# ----------------------------------------------------------------------------------------------------------
# public wrapper
# ----------------------------------------------------------------------------------------------------------
def _check_grid(times, time):
    times = as_finite_vector("times", times)
    if times[0] != 0 or np.any(np.diff(times) <= 0):
        raise InputError("times", "must start at 0 and be strictly increasing", times)
    spacing = np.diff(times)
    if not np.allclose(spacing, spacing[0], rtol=1e-9, atol=0):
        raise InputError("times", "must be uniformly spaced (e.g. np.linspace(0, T, n))", times)
    if time == "iterations" and not np.all(times == np.round(times)):
        raise InputError("times", "must be whole iteration counts for time='iterations'", times)
    return times


def dominant_index_heatmap(mu, rho, alphas, times, *, method: str = "reduction", time: str = "tau",
                           eta: float = 0.01, steps_per_output: int | None = None,
                           normalization: str = "joint", rtol: float | None = None, atol: float | None = None,
                           ivp_method: str = "DOP853", ivp_space: str = "log",
                           rk4_variant: str | None = None) -> Heatmap:
    """The j†(α, time) heatmap with loss curves, for uniform (1-d ``alphas``) or per-coordinate (2-d) α.

    ``times``: a uniform grid starting at 0 (τ values, or iteration counts for ``time="iterations"``).
    ``steps_per_output``: RK4 steps between outputs (default: dt ≤ 2e−3/μ_d for ``rk4``/``numpy``/
    ``reduction-fixed``). ``rtol``/``atol`` are for ``method="solve_ivp"`` (default 1e−10/1e−12) and the
    adaptive ``method="reduction"`` (default 1e−12/1e−14: max |ln S| error ≈ 1e−9, that of the default RK4
    step); ``ivp_method`` and ``ivp_space`` (``"log"``: u = ln w, or ``"w"``: the flow as the RK4 kernels
    integrate it) for ``solve_ivp`` only; ``rk4_variant`` (``"generic"`` or ``"unrolled-d{d}"``, default
    by d) picks the ``rk4`` step kernel (:func:`biasaudit.numerics.heatmap_rk4.kernel_variant`). With ``time="iterations"`` only
    ``method="rk4"`` (discrete SAM in numba) and ``"gd"`` (discrete GD) apply.
    """
    from biasaudit.theory.sam_l2 import c_L

    mu = positive_increasing("mu", mu)
    choice("method", method, METHODS)
    choice("time", time, TIMES)
    choice("ivp_space", ivp_space, IVP_SPACES)
    rho = positive_scalar("rho", rho)
    c = c_L(rho, 2, normalization) if method != "gd" else 0.0
    alphas_in = np.asarray(alphas, dtype=float)
    alphas = as_finite_vector("alphas", alphas_in, ndim=alphas_in.ndim if alphas_in.ndim in (1, 2) else 1)
    if np.any(alphas <= 0):
        raise InputError("alphas", "must be strictly positive", alphas)
    batch = np.repeat(alphas[:, None], mu.size, axis=1) if alphas.ndim == 1 else alphas
    if alphas.ndim == 2:
        matching_length("alphas", alphas, mu.size, "mu")
    batch = np.ascontiguousarray(batch, dtype=float)
    times = _check_grid(times, time)
    n_a, n_t = batch.shape[0], times.size
    jd = np.zeros((n_a, n_t), dtype=np.int64)
    loss = np.zeros((n_a, n_t))
    logS = np.zeros((n_a, n_t))
    status = np.zeros(n_a, dtype=np.int64)
    tau_out = None

    if time == "iterations":
        if method not in ("rk4", "gd"):
            raise InputError("method", "time='iterations' supports method 'rk4' (discrete SAM) or 'gd'", method)
        eta = positive_scalar("eta", eta)
        stride = int(round(times[1] - times[0])) if n_t > 1 else 1
        tau_out = np.zeros((n_a, n_t))
        _discrete_batch(batch, mu, c, eta, stride, jd, loss, logS, tau_out, status, True)
        return Heatmap(alphas, times, time, jd, loss, logS, status, tau_out, method, c, mu)

    spacing = times[1] - times[0] if n_t > 1 else 0.0
    if steps_per_output is None:
        steps_per_output = max(1, int(math.ceil(spacing / (2e-3 / mu[-1])))) if n_t > 1 else 1
    stride = positive_int("steps_per_output", steps_per_output)
    dt = spacing / stride if n_t > 1 else 0.0
    if method == "gd":
        log_w = np.log(batch)[:, None, :] + mu * times[None, :, None]
        jd[:] = np.argmax(log_w, axis=2) + 1
        logS[:] = np.logaddexp.reduce(2 * (np.log(mu) + log_w), axis=2) / 2
        log_z = np.logaddexp.reduce(np.log(mu) + 2 * log_w, axis=2)
        loss[:] = np.log1p(np.exp(-np.exp(np.minimum(log_z, 700.0))))
        status[:] = 1
    elif method == "rk4":
        rk4_batch(batch, mu, c, dt, stride, jd, loss, logS, status, variant=rk4_variant)
    elif method == "numpy":
        jd, loss, logS, status = _rk4_numpy(batch, mu, c, dt, stride, n_t)
    elif method == "solve_ivp":
        for b in range(n_a):
            jd[b], loss[b], logS[b], status[b] = _solve_ivp_one(batch[b], mu, c, times,
                                                                 1e-10 if rtol is None else rtol,
                                                                 1e-12 if atol is None else atol, ivp_method,
                                                                 ivp_space)
    else:  # reduction (adaptive) or reduction-fixed (RK4)
        A = np.zeros((n_a, n_t))
        rows = np.zeros((n_a, n_t), dtype=np.int64)
        if method == "reduction":
            counts = np.zeros((n_a, 2), dtype=np.int64)
            _A_batch_adaptive(np.log(batch), mu, c, times, positive_scalar("rtol", 1e-12 if rtol is None else rtol),
                              positive_scalar("atol", 1e-14 if atol is None else atol), A, rows, status, counts)
        else:
            _A_batch(np.log(batch), mu, c, dt, stride, A, rows, status)
        _reduction_record(np.log(batch), mu, c, times, A, jd, loss, logS)
        if method == "reduction":
            return Heatmap(alphas, times, time, jd, loss, logS, status, tau_out, method, c, mu, counts)
    return Heatmap(alphas, times, time, jd, loss, logS, status, tau_out, method, c, mu)


def discrete_alpha_collapse(mu, rho, eta, *, step: str = "euler", normalization: str = "joint",
                            rel_tol: float = 1e-10, max_iterations: int | None = None) -> float:
    """The collapse threshold α_c(η) of *discrete* balanced l2-SAM (uniform α), by bisection.

    ``step="euler"``: fixed-step explicit Euler on the rescaled field (h = η); ``"logistic"``: the real
    discrete SAM on the logistic loss (h_k = η σ(−z̃_k)). Each α is classified by the flow certificates
    applied to the iterates (S ≤ cμ₁: collapse; max w > c: escape) — for the discrete map these are
    heuristics that become exact as η → 0; an α that neither collapses nor escapes within
    ``max_iterations`` raises RuntimeError.
    """
    from biasaudit.theory.sam_l2 import c_L

    mu = positive_increasing("mu", mu)
    eta = positive_scalar("eta", eta)
    choice("step", step, ("euler", "logistic"))
    c = c_L(rho, 2, normalization)
    norm = float(np.linalg.norm(mu))
    lo, hi = 0.5 * c * mu[0] / norm, 1.5 * c * mu[-1] / norm
    n = int(max_iterations or 200.0 / (eta * mu[0]))
    jd = np.zeros((1, 2), dtype=np.int64)
    loss = np.zeros((1, 2))
    logS = np.zeros((1, 2))
    tau = np.zeros((1, 2))
    status = np.zeros(1, dtype=np.int64)
    while hi - lo > rel_tol * hi:
        mid = 0.5 * (lo + hi)
        _discrete_batch(np.full((1, mu.size), mid), mu, c, eta, n, jd, loss, logS, tau, status, step == "logistic",
                        True)
        if status[0] == 1:
            hi = mid
        elif status[0] == -1:
            lo = mid
        else:
            raise RuntimeError(f"discrete_alpha_collapse: undecided at alpha={mid!r} after {n} steps")
    return 0.5 * (lo + hi)
