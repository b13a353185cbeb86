"""Per-α state helpers shared by the heatmap kernels: certificates, recording and renormalisation.

The state of one α is w = e^m v (a log scale m and a vector v, see :mod:`biasaudit.numerics.heatmap`)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_RENORM = 2.0**400  # renormalise v above this (a power of 2: exact)
_LOG_RENORM = 400 * math.log(2.0)
_TINY = 1e-290  # entries of v below this are flushed to 0 (avoids denormal slowdowns; they never matter)


@njit(cache=True)
def _record(v, m, mu, c, collapsed, k, jd, loss, logS):
    """Write j† = argmax_j v_j (1-based), ln S and the loss ln(1 + e^{−z}), z = e^{2m} Σ μ_j v_j², at index k;
    a collapsed α records (0, ln 2, −inf)."""
    d = v.shape[0]
    if collapsed:
        jd[k] = 0
        loss[k] = math.log(2.0)
        logS[k] = -np.inf
        return
    best = 0
    s = 0.0
    z = 0.0
    for j in range(d):
        if v[j] > v[best]:
            best = j
        s += (mu[j] * v[j]) ** 2
        z += mu[j] * v[j] * v[j]
    jd[k] = best + 1
    logS[k] = m + 0.5 * math.log(s)
    if m == 0.0:  # z = ⟨β, μ⟩ itself; e^{−z} underflows to 0 beyond 746
        loss[k] = math.log1p(math.exp(-z)) if z < 746.0 else 0.0
    else:
        log_z = 2.0 * m + math.log(z)
        loss[k] = math.log1p(math.exp(-math.exp(log_z))) if log_z < 700.0 else 0.0


@njit(cache=True)
def _certify(v, m, mu, c):
    """−1 if S ≤ cμ₁, +1 if max w > c, else 0 (w = e^m v)."""
    d = v.shape[0]
    s = 0.0
    vmax = 0.0
    for j in range(d):
        s += (mu[j] * v[j]) ** 2
        if v[j] > vmax:
            vmax = v[j]
    kappa = c * math.exp(-m)
    if math.sqrt(s) <= kappa * mu[0]:
        return -1
    if vmax > kappa:
        return 1
    return 0


@njit(cache=True)
def _renormalise(v, m):
    d = v.shape[0]
    vmax = 0.0
    for j in range(d):
        if v[j] > vmax:
            vmax = v[j]
    if vmax > _RENORM:
        for j in range(d):
            v[j] = v[j] / _RENORM
            if v[j] < _TINY:
                v[j] = 0.0
        return m + _LOG_RENORM
    return m
