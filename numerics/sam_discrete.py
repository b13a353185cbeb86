r"""Discrete GD, l_inf-SAM, l2-SAM and unnormalized SAM on the logistic loss of a depth-L diagonal linear network.

Model: W = (w^(1), ..., w^(L)) in R^{L x d}, beta = w^(1) ⊙ ... ⊙ w^(L), margins m_i = y_i <beta, x_i> for data
X (n x d), labels y_i in {-1, +1}, loss  L(W) = (1/n) sum_i l(m_i),  l(m) = log(1 + e^{-m}).

One step (pseudo-code, optax style)::

    g     = grad L(W)                               # (L, d)
    eps   = 0                                       # gd
          = rho * sign(g)                           # linf, sign(0) = 0
          = rho * g / ||g||_F           (joint)      # l2, norm over all L*d entries; eps = 0 if g = 0
          = rho * g_l / ||g_l||_2 per layer (layer)  # l2, per-layer; eps_l = 0 if g_l = 0
          = rho * g                     (none)       # l2, unnormalized SAM (USAM, Andriushchenko & Flammarion)
    W    <- W - eta * grad L(W + eps)
    tau  <- tau + eta * (1/n) sum_i sigma(-m~_i)    # m~ = margins at W + eps

``tau`` is the cumulative rescaled time: the sum over steps of eta times the mean over points of
-l'(m~_i) = sigma(-m~_i).  For one point it is sum_k eta sigma(-z~_k), the time in which one discrete step is
explicit Euler on the reduced field with h_k = eta sigma(-z~_k) (:mod:`biasaudit.theory.sam_fields`).

Stable forms: sigma(-m) = e^{-m}/(1 + e^{-m}) for m >= 0 and 1/(1 + e^{m}) otherwise;
l(m) = log1p(e^{-m}) for m >= 0 and -m + log1p(e^{m}) otherwise.  The gradient uses prefix/suffix products
of the layers (no division, exact when an entry is 0).  A step whose state is not finite or exceeds
``W_MAX`` in absolute value stops the run with status ``"diverged"``; the outputs end at the last finite
state (never NaN).

Symbols: ``eta`` step, ``rho`` radius, ``L`` depth, ``d`` dimension, ``n`` points, ``m`` margins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from biasaudit.plumbing import InputError, as_finite_vector, choice, positive_int, positive_scalar

__all__ = ["SamTrajectory", "run_sam", "run_sam_reference", "W_MAX"]

ALGORITHM_CODES = {"gd": 0, "linf": 1, "l2": 2}
NORMALIZATION_CODES = {"joint": 0, "layer": 1}
NORMALIZATION_CODES["none"] = 2  # unnormalized SAM (USAM), eps = rho * g; l2 only
W_MAX = 1e150  # beyond this |W|^L overflows float64 for L >= 3: classify as diverged


@dataclass(frozen=True)
class SamTrajectory:
    """Recorded states: ``steps`` (m,), ``W`` (m, L, d), ``beta`` (m, d), ``loss`` (m,), ``tau`` (m,).

    Parameters
    ----------
    steps : numpy.ndarray
        The recorded iterations, shape (m,).
    W : numpy.ndarray
        The weights at each, shape (m, L, d).
    beta : numpy.ndarray
        β = w^(1) ⊙ … ⊙ w^(L), shape (m, d).
    loss : numpy.ndarray
        The mean logistic loss, shape (m,).
    tau : numpy.ndarray
        The cumulative rescaled time, shape (m,).
    status : str
        ``"ok"`` or ``"diverged"`` (``|W|`` beyond :data:`W_MAX`; the records end at the last finite state).
    """

    steps: np.ndarray
    W: np.ndarray
    beta: np.ndarray
    loss: np.ndarray
    tau: np.ndarray
    status: str


# ----------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _sigma_neg(m):
    """sigma(-m) = -l'(m), stable for both signs."""
    if m >= 0.0:
        e = math.exp(-m)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(m))


@njit(cache=True)
def _logistic(m):
    if m >= 0.0:
        return math.log1p(math.exp(-m))
    return -m + math.log1p(math.exp(m))


@njit(cache=True)
def _loss_grad(W, X, y, beta, gbeta, prefix, grad):
    """Write grad L(W) into grad; return (loss, mean sigma(-m)). Uses beta, gbeta, prefix as scratch."""
    L, d = W.shape
    n = X.shape[0]
    for j in range(d):
        b = 1.0
        for l in range(L):
            b *= W[l, j]
        beta[j] = b
        gbeta[j] = 0.0
    loss = 0.0
    mean_sig = 0.0
    for i in range(n):
        m = 0.0
        for j in range(d):
            m += beta[j] * X[i, j]
        m *= y[i]
        sg = _sigma_neg(m)
        loss += _logistic(m)
        mean_sig += sg
        for j in range(d):
            gbeta[j] -= sg * y[i] * X[i, j]
    for j in range(d):
        gbeta[j] /= n
        p = 1.0  # prefix product of layers < l, then multiply by suffix
        for l in range(L):
            prefix[l] = p
            p *= W[l, j]
        s = 1.0
        for l in range(L - 1, -1, -1):
            grad[l, j] = gbeta[j] * prefix[l] * s
            s *= W[l, j]
    return loss / n, mean_sig / n


@njit(cache=True)
def _perturb(code, norm, rho, g, eps):
    L, d = g.shape
    if code == 0:
        eps[:, :] = 0.0
    elif code == 1:
        for l in range(L):
            for j in range(d):
                v = g[l, j]
                eps[l, j] = rho if v > 0.0 else (-rho if v < 0.0 else 0.0)
    elif norm == 2:
        for l in range(L):
            for j in range(d):
                eps[l, j] = rho * g[l, j]
    elif norm == 0:
        total = 0.0
        for l in range(L):
            for j in range(d):
                total += g[l, j] * g[l, j]
        nrm = math.sqrt(total)
        for l in range(L):
            for j in range(d):
                eps[l, j] = 0.0 if nrm == 0.0 else rho * g[l, j] / nrm
    else:
        for l in range(L):
            total = 0.0
            for j in range(d):
                total += g[l, j] * g[l, j]
            nrm = math.sqrt(total)
            for j in range(d):
                eps[l, j] = 0.0 if nrm == 0.0 else rho * g[l, j] / nrm


@njit(cache=True)
def _run_sam(W0, X, y, code, norm, rho, eta, steps, record_every, w_max,
             out_steps, out_W, out_beta, out_loss, out_tau):
    """Iterate; write records; return (number of rows, status 0 ok / 1 diverged)."""
    L, d = W0.shape
    W = W0.copy()
    Wp = np.empty((L, d))
    g = np.empty((L, d))
    eps = np.empty((L, d))
    beta = np.empty(d)
    gbeta = np.empty(d)
    prefix = np.empty(L)
    tau = 0.0
    row = 0
    loss, _ = _loss_grad(W, X, y, beta, gbeta, prefix, g)
    out_steps[0] = 0
    out_W[0] = W
    out_beta[0] = beta
    out_loss[0] = loss
    out_tau[0] = 0.0
    row = 1
    for k in range(1, steps + 1):
        _perturb(code, norm, rho, g, eps)
        for l in range(L):
            for j in range(d):
                Wp[l, j] = W[l, j] + eps[l, j]
        _, mean_sig = _loss_grad(Wp, X, y, beta, gbeta, prefix, g)
        ok = True
        for l in range(L):
            for j in range(d):
                v = W[l, j] - eta * g[l, j]
                if not (abs(v) <= w_max):
                    ok = False
                Wp[l, j] = v
        if not ok:
            if out_steps[row - 1] != k - 1:  # end on the last finite state
                _loss_grad(W, X, y, beta, gbeta, prefix, g)
                out_steps[row] = k - 1
                out_W[row] = W
                out_beta[row] = beta
                out_loss[row] = loss
                out_tau[row] = tau
                row += 1
            return row, 1
        W[:, :] = Wp
        tau += eta * mean_sig
        loss, _ = _loss_grad(W, X, y, beta, gbeta, prefix, g)
        if k % record_every == 0 or k == steps:
            out_steps[row] = k
            out_W[row] = W
            out_beta[row] = beta
            out_loss[row] = loss
            out_tau[row] = tau
            row += 1
    return row, 0


# ----------------------------------------------------------------------------------------------- wrappers
def _validate(W0, X, y, algorithm, rho, eta, steps, normalization, record_every):
    choice("algorithm", algorithm, tuple(ALGORITHM_CODES))
    choice("normalization", normalization, tuple(NORMALIZATION_CODES))
    if normalization == "none" and algorithm == "linf":
        raise InputError("normalization", "'none' (unnormalized SAM, eps = rho g) applies to algorithm 'l2' only",
                         normalization)
    W = as_finite_vector("W0", W0, ndim=2) if np.ndim(W0) == 2 else None
    if W is None:
        raise InputError("W0", "must be an L x d array (layers x coordinates)", W0)
    Xa = np.asarray(X, dtype=float)
    if Xa.ndim == 1:
        Xa = Xa.reshape(1, -1)
    Xa = as_finite_vector("X", Xa, ndim=2)
    if Xa.shape[1] != W.shape[1]:
        raise InputError("X", f"must have {W.shape[1]} columns (the width d of W0)", Xa.shape)
    ya = as_finite_vector("y", y)
    if ya.size != Xa.shape[0]:
        raise InputError("y", f"must have length {Xa.shape[0]} (one label per row of X)", ya)
    if not np.all(np.abs(ya) == 1.0):
        raise InputError("y", "must contain only labels -1 and +1", ya)
    rho_f = float(rho) if algorithm == "gd" else positive_scalar("rho", rho)
    if algorithm == "gd":
        rho_f = 0.0
    eta = positive_scalar("eta", eta)
    steps = positive_int("steps", steps, minimum=0)
    record_every = positive_int("record_every", record_every)
    return W, Xa, ya, rho_f, eta, steps, record_every


def run_sam(W0, X, y, *, algorithm: str, rho: float, eta: float, steps: int, normalization: str = "joint",
            record_every: int = 1) -> SamTrajectory:
    """Run ``steps`` iterations of GD / l_inf-SAM / l2-SAM from ``W0`` (L x d) on data ``X`` (n x d), ``y``
    (numba; :func:`run_sam_reference` is the plain reference).

    Records step 0, every ``record_every``-th step and the last step. See the module docstring for the update,
    ``tau`` and ``status``.

    Parameters
    ----------
    W0 : array_like
        The initial weights, shape (L, d).
    X : array_like
        The data, shape (n, d).
    y : array_like
        The labels, shape (n,).
    algorithm : str
        ``"gd"``, ``"linf"`` or ``"l2"``.
    rho : float
        The SAM radius ρ (ignored for gd).
    eta : float
        The step size η > 0.
    steps : int
        The number of iterations.
    normalization : str
        l2 only: ``"joint"`` (the default), ``"layer"``, or ``"none"`` (unnormalized SAM, ε = ρ g).
    record_every : int
        Record every this many steps (besides step 0 and the last).

    Returns
    -------
    SamTrajectory
        The recorded states.

    Raises
    ------
    InputError
        If an input breaks its rule: ``W0`` not L x d, ``X`` without d columns, ``y`` not one label ±1 per row,
        an unknown algorithm or normalization (``"none"`` for l2 only), η <= 0, ρ <= 0 (SAM), steps < 0.
    """
    W, Xa, ya, rho_f, eta, steps, record_every = _validate(W0, X, y, algorithm, rho, eta, steps,
                                                            normalization, record_every)
    m = steps // record_every + 1 + (1 if steps % record_every else 0)
    L, d = W.shape
    out_steps = np.zeros(m, dtype=np.int64)
    out_W = np.zeros((m, L, d))
    out_beta = np.zeros((m, d))
    out_loss = np.zeros(m)
    out_tau = np.zeros(m)
    rows, status = _run_sam(W, Xa, ya, ALGORITHM_CODES[algorithm], NORMALIZATION_CODES[normalization], rho_f,
                            eta, steps, record_every, W_MAX, out_steps, out_W, out_beta, out_loss, out_tau)
    return SamTrajectory(out_steps[:rows].copy(), out_W[:rows].copy(), out_beta[:rows].copy(),
                         out_loss[:rows].copy(), out_tau[:rows].copy(), "ok" if status == 0 else "diverged")


# ----------------------------------------------------------------------------------------------- reference
def _reference_loss_grad(W, X, y):
    from scipy.special import expit

    beta = np.prod(W, axis=0)
    m = y * (X @ beta)
    sig = expit(-m)
    loss = np.mean(np.logaddexp(0.0, -m))
    gbeta = -np.mean((sig * y)[:, None] * X, axis=0)
    L = W.shape[0]
    others = np.stack([np.prod(np.delete(W, l, axis=0), axis=0) for l in range(L)])
    return loss, float(np.mean(sig)), gbeta[None, :] * others


def run_sam_reference(W0, X, y, *, algorithm: str, rho: float, eta: float, steps: int,
                      normalization: str = "joint", record_every: int = 1) -> SamTrajectory:
    """Plain-numpy version of :func:`run_sam` (same records), the readable reference used in tests.

    Parameters
    ----------
    W0 : array_like
        The initial weights, shape (L, d).
    X : array_like
        The data, shape (n, d).
    y : array_like
        The labels, shape (n,).
    algorithm : str
        ``"gd"``, ``"linf"`` or ``"l2"``.
    rho : float
        The SAM radius ρ (ignored for gd).
    eta : float
        The step size η > 0.
    steps : int
        The number of iterations.
    normalization : str
        l2 only: ``"joint"`` (the default), ``"layer"``, or ``"none"`` (unnormalized SAM, ε = ρ g).
    record_every : int
        Record every this many steps (besides step 0 and the last).

    Returns
    -------
    SamTrajectory
        The recorded states.

    Raises
    ------
    InputError
        As :func:`run_sam`.

    Examples
    --------
    >>> import numpy as np
    >>> run = run_sam_reference(np.full((2, 2), 0.1), np.array([[1.0, 2.0]]), np.array([1.0]), algorithm="gd",
    ...                         rho=0.0, eta=0.1, steps=10, record_every=5)
    >>> run.status, run.steps.tolist(), bool(run.beta[-1, 1] > run.beta[-1, 0] > 0.01)
    ('ok', [0, 5, 10], True)
    """
    W, Xa, ya, rho_f, eta, steps, record_every = _validate(W0, X, y, algorithm, rho, eta, steps,
                                                            normalization, record_every)
    recs = {"steps": [0], "W": [W.copy()], "beta": [np.prod(W, axis=0)], "loss": [], "tau": [0.0]}
    loss, _, g = _reference_loss_grad(W, Xa, ya)
    recs["loss"].append(loss)
    tau = 0.0
    status = "ok"
    for k in range(1, steps + 1):
        if algorithm == "gd":
            eps = np.zeros_like(W)
        elif algorithm == "linf":
            eps = rho_f * np.sign(g)
        elif normalization == "none":
            eps = rho_f * g
        elif normalization == "joint":
            nrm = np.linalg.norm(g)
            eps = np.zeros_like(W) if nrm == 0 else rho_f * g / nrm
        else:
            nrm = np.linalg.norm(g, axis=1, keepdims=True)
            eps = np.where(nrm == 0, 0.0, rho_f * g / np.where(nrm == 0, 1.0, nrm))
        _, mean_sig, gp = _reference_loss_grad(W + eps, Xa, ya)
        new = W - eta * gp
        if not np.all(np.abs(new) <= W_MAX):
            status = "diverged"
            if recs["steps"][-1] != k - 1:
                for key, val in (("steps", k - 1), ("W", W.copy()), ("beta", np.prod(W, axis=0)), ("loss", loss),
                                 ("tau", tau)):
                    recs[key].append(val)
            break
        W = new
        tau += eta * mean_sig
        loss, _, g = _reference_loss_grad(W, Xa, ya)
        if k % record_every == 0 or k == steps:
            for key, val in (("steps", k), ("W", W.copy()), ("beta", np.prod(W, axis=0)), ("loss", loss),
                             ("tau", tau)):
                recs[key].append(val)
    return SamTrajectory(np.array(recs["steps"], dtype=np.int64), np.array(recs["W"]), np.array(recs["beta"]),
                         np.array(recs["loss"]), np.array(recs["tau"]), status)
