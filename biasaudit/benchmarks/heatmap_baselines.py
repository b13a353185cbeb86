"""Bench contenders for the τ heatmap that no claim uses: scipy's ``solve_ivp`` once per α.

The j† heatmap's methods are :func:`biasaudit.numerics.heatmap.dominant_index_heatmap`; ``sam.l2_heatmap``
(:mod:`biasaudit.benchmarks.sam`) times them against this baseline, and against the plain-numpy RK4
(:func:`biasaudit.numerics.heatmap_rk4.rk4_heatmap_reference`, kept in numerics as the kernel's reference).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["solve_ivp_heatmap", "IVP_SPACES"]

LN2 = math.log(2.0)

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


def solve_ivp_heatmap(alphas, mu, c: float, times, *, rtol: float = 1e-10, atol: float = 1e-12,
                      method: str = "DOP853", space: str = "log"):
    """:func:`_solve_ivp_one` for every row of ``alphas`` (n, d): ``(jd, loss, logS, status)`` on ``times``, as
    :func:`biasaudit.numerics.heatmap.dominant_index_heatmap` returns them. ``space``: ``"log"`` (u = ln w)
    or ``"w"`` (the flow as the RK4 kernel steps it); ``method``: any of ``solve_ivp``'s."""
    from biasaudit.plumbing import choice

    choice("space", space, IVP_SPACES)
    alphas = np.ascontiguousarray(alphas, dtype=float)
    times = np.asarray(times, dtype=float)
    n_a, n_t = alphas.shape[0], times.size
    jd = np.zeros((n_a, n_t), dtype=np.int64)
    loss = np.zeros((n_a, n_t))
    logS = np.zeros((n_a, n_t))
    status = np.zeros(n_a, dtype=np.int64)
    for b in range(n_a):
        jd[b], loss[b], logS[b], status[b] = _solve_ivp_one(alphas[b], mu, c, times, rtol, atol, method, space)
    return jd, loss, logS, status
