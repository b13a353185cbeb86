r"""Time ``"iterations"`` of the j† heatmap: discrete l2-SAM (method ``"sam"``) and discrete GD (``"gd"``).

One step of discrete logistic l2-SAM on the balanced depth-2 state is exactly explicit Euler on the rescaled
field w_j' = μ_j w_j (1 − cμ_j/S) with step h_k = η σ(−z̃_k), z̃ the perturbed margin Σ μ_j w̃_j²,
w̃ = w(1 − cμ/S); GD is the same map with c = 0. The τ reached, τ_k = Σ h_k, is recorded with j†, the loss
and ln S. :func:`discrete_alpha_collapse` bisects the collapse threshold α_c(η) of the discrete map.

The state is w = e^m v with exact power-of-two renormalisation (:mod:`biasaudit.numerics.heatmap_common`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from biasaudit.numerics.heatmap_common import _certify, _record, _renormalise
from biasaudit.plumbing import choice, positive_increasing, positive_scalar

__all__ = ["discrete_heatmap", "discrete_alpha_collapse"]


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


def discrete_heatmap(alphas, mu, c: float, eta: float, stride: int, n_out: int):
    """Discrete logistic l2-SAM (GD for c = 0) from every row of ``alphas`` (n, d): j†, loss, ln S and τ every
    ``stride`` iterations at ``n_out`` outputs, and the final certificate status (numba). Inputs are validated by
    :func:`biasaudit.numerics.heatmap.dominant_index_heatmap`.

    Parameters
    ----------
    alphas : numpy.ndarray
        The initial weights, shape (n, d).
    mu : numpy.ndarray
        The data point, shape (d,).
    c : float
        :math:`c_L` (0 for GD).
    eta : float
        The step size η.
    stride : int
        Iterations between outputs.
    n_out : int
        The number of outputs.

    Returns
    -------
    tuple of numpy.ndarray
        ``(jd, loss, logS, tau, status)``: (n, n_out) each, and ``status`` (n,).
    """
    n_a = alphas.shape[0]
    jd = np.zeros((n_a, n_out), dtype=np.int64)
    loss = np.zeros((n_a, n_out))
    logS = np.zeros((n_a, n_out))
    tau = np.zeros((n_a, n_out))
    status = np.zeros(n_a, dtype=np.int64)
    _discrete_batch(alphas, mu, c, eta, stride, jd, loss, logS, tau, status, True)
    return jd, loss, logS, tau, status


def discrete_alpha_collapse(mu, rho, eta, *, step: str = "euler", normalization: str = "joint",
                            rel_tol: float = 1e-10, max_iterations: int | None = None) -> float:
    r"""The collapse threshold α_c(η) of *discrete* balanced l2-SAM (uniform α), by bisection.

    ``step="euler"``: fixed-step explicit Euler on the rescaled field (h = η); ``"logistic"``: the real
    discrete SAM on the logistic loss (h_k = η σ(−z̃_k)). Each α is classified by the flow certificates
    applied to the iterates (S ≤ cμ₁: collapse; max w > c: escape) — for the discrete map these are
    heuristics that become exact as η → 0; an α that neither collapses nor escapes within
    ``max_iterations`` raises RuntimeError.

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    rho : float
        The SAM radius ρ > 0.
    eta : float
        The step size η > 0.
    step : str
        ``"euler"`` (the default) or ``"logistic"``.
    normalization : str
        ``"joint"`` (the default) or ``"layer"``.
    rel_tol : float
        Stop once the bracket is narrower than this, relative.
    max_iterations : int, optional
        The iteration limit of one classification.

    Returns
    -------
    float
        :math:`\alpha_c(\eta)`.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing, ``eta`` or ``rho`` is <= 0, or ``step`` or
        ``normalization`` is not one of the names above.
    RuntimeError
        If an α neither collapses nor escapes within ``max_iterations``.
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
