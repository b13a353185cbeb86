r"""Method ``"rk4"`` of the j† heatmap: fixed-step RK4 on the full flow, a batch of α at once.

The flow, per α (w = e^m v, κ = c e^{−m}; see :mod:`biasaudit.numerics.heatmap`)

    v_j' = μ_j v_j (1 − κ μ_j / S(v)),   S(v) = ‖μ ⊙ v‖₂,

is stepped by classical RK4 (:data:`biasaudit.numerics.tableau.RK4`) with a fixed step h. α are taken in
blocks of :data:`BLOCK` (the last one padded with dead columns). A block's state is one flat array, rows of
length BLOCK (α innermost): v₁ … v_d, κ, S², max_j v_j, live, watch; so every loop over the batch is
contiguous and LLVM vectorises it across α.

The step kernel (:func:`_steps`, any d): each RK4 stage is one fused pass over (j, b) that computes k_j,
accumulates Σ b_i k_i, writes the next stage's input and its S²; stage inputs live in separate scratch rows,
so no pass reads and writes the same buffer (aliasing blocks vectorisation). RK4 is low-storage here because
every stage reads only the one before: the kernel takes a_{i,i−1} and b_i from the tableau
(:attr:`~biasaudit.numerics.tableau.ButcherTableau.a_subdiagonal`), unrolled over the four stages.

κ/S is κ·:func:`biasaudit.numerics.rsqrt.rsqrt` (Newton, no sqrt or division: the divider was the
bottleneck) and the kernel asks for 512-bit vectors (:mod:`biasaudit.numerics.simd`). It runs up to ``n``
steps and stops after the first step on which an *event* fires for a live α: the collapse certificate
S ≤ cμ₁ (i.e. S(v) ≤ κμ₁), the escape certificate max_j w_j > c on an α not yet escaped, or
max_j v_j > 2^{400} (renormalisation). :func:`_handle_events` then applies it as a per-α loop would.

:func:`rk4_heatmap_reference` is the same update vectorised in plain numpy over the batch (the readable
reference, used in tests and as the bench's numpy contender). Kernel and reference agree to ≤ 1e−10 in ln S
after 20,000 steps (rounding only: fastmath reassociation and the few-ulp 1/√; the RK4 truncation error at
that step is ~2e−9).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from biasaudit.numerics.heatmap_common import _LOG_RENORM, _RENORM, _TINY, _record, _renormalise
from biasaudit.numerics.rsqrt import rsqrt
from biasaudit.numerics.simd import prefer_wide_vectors
from biasaudit.numerics.tableau import RK4, explicit_rk_step

__all__ = ["rk4_heatmap", "rk4_heatmap_reference", "BLOCK"]

# RK4 as module-level constants (numba freezes them): a_{i,i−1} (the only nonzero a) and the weights b
_SUB = tuple(float(x) for x in RK4.a_subdiagonal)
_B = tuple(float(x) for x in RK4.b)
BLOCK = 64  # α per block (padded with dead columns): the block's working set stays in L1
N_STATE_ROWS = 5  # rows after the d rows of v: κ, S², max v, live, watch
_SQRT_FLOOR = 1e-300  # S² floor: a zero column (zero gradient) gives a finite r and the field 0


# ----------------------------------------------------------------------------------------------------------
# block state: one flat array, row-major (d + 5) × BLOCK — v_1..v_d, κ, S², max_j v_j, live, watch
# ----------------------------------------------------------------------------------------------------------
@njit(cache=True)
def _rows(X, d, B):
    """Views of the block state X: (V (d, B), κ, S², max v, live, watch)."""
    V = X[:d * B].reshape((d, B))
    return (V, X[d * B:(d + 1) * B], X[(d + 1) * B:(d + 2) * B], X[(d + 2) * B:(d + 3) * B],
            X[(d + 3) * B:(d + 4) * B], X[(d + 4) * B:(d + 5) * B])


@njit(cache=True)
def _column_norms(V, b, mu, s, vmx):
    """S² and max_j v_j of column b into s[b], vmx[b]."""
    s[b] = 0.0
    vmx[b] = 0.0
    for j in range(V.shape[0]):
        s[b] += (mu[j] * V[j, b]) ** 2
        vmx[b] = max(vmx[b], V[j, b])


@njit(cache=True)
def _block_start(alphas, mu, c, status, B):
    """The state of a block of ``alphas`` (n_b ≤ B rows of α), its log scales m and the generic scratch.

    Every α starts live and undecided (status 0); the driver's first :func:`_handle_events` applies the
    certificates at τ = 0. Columns n_b … B−1 are padding: v = 1 and dead (live = 0), so they never move and
    raise no event."""
    n_b, d = alphas.shape
    X = np.empty((d + N_STATE_ROWS) * B)
    V, kappa, s, vmx, live, watch = _rows(X, d, B)
    for b in range(B):
        kappa[b] = c
        real = b < n_b
        for j in range(d):
            V[j, b] = alphas[b, j] if real else 1.0
        if real:
            status[b] = 0
        live[b] = 1.0 if real else 0.0
        watch[b] = live[b]  # 1 while the escape certificate has not fired
        _column_norms(V, b, mu, s, vmx)
    return X, np.zeros(B), np.empty((4 * d + 2) * B)


@njit(cache=True)
def _handle_events(X, d, B, mu, c, m, status):
    """Apply the certificates and renormalisation to every live α (S², max v as left by the last step).

    Returns the number of α still live."""
    V, kappa, s, vmx, live, watch = _rows(X, d, B)
    n_live = 0
    for b in range(status.shape[0]):
        if live[b] == 0.0:
            continue
        if s[b] <= (kappa[b] * mu[0]) ** 2:  # collapse certificate S ≤ cμ₁
            status[b] = -1
            live[b] = 0.0
        elif vmx[b] > kappa[b]:  # escape certificate max_j w_j > c
            status[b] = 1
            watch[b] = 0.0
        if vmx[b] > _RENORM:  # w = e^m v: divide v by 2^400 (exact) and raise m
            m[b] = _renormalise(V[:, b], m[b])
            kappa[b] = c * math.exp(-m[b])
            _column_norms(V, b, mu, s, vmx)
        if live[b] != 0.0:
            n_live += 1
    return n_live


@njit(cache=True)
def _record_block(X, d, B, m, mu, c, status, k, jd, loss, logS):
    V = _rows(X, d, B)[0]
    col = np.empty(d)
    for b in range(status.shape[0]):
        for j in range(d):
            col[j] = V[j, b]
        _record(col, m[b], mu, c, status[b] == -1, k, jd[b], loss[b], logS[b])


# ----------------------------------------------------------------------------------------------------------
# the step kernel (any d) and its driver
# ----------------------------------------------------------------------------------------------------------
@njit(cache=True, fastmath=True, inline="always")
def _stage(X, V, mu, kappa, s_in, w, first, a, T, s_out, acc, r):
    """One RK4 stage over the block: r = κ/√s_in; k = μX(1 − rμ); acc (+)= w k; T = V + a k; s_out = ‖μT‖²
    (``s_out`` may be ``s_in``)."""
    d, B = X.shape
    for b in range(B):
        r[b] = kappa[b] * rsqrt(max(s_in[b], _SQRT_FLOOR))
    for b in range(B):
        s_out[b] = 0.0
    for j in range(d):
        mj = mu[j]
        for b in range(B):
            k = mj * X[j, b] * (1.0 - r[b] * mj)
            if first:
                acc[j, b] = w * k
            else:
                acc[j, b] += w * k
            t = V[j, b] + a * k
            T[j, b] = t
            s_out[b] += (mj * t) * (mj * t)


@njit(cache=True, fastmath=True)
def _steps(X, mu, h, n, scratch):
    """Up to ``n`` RK4 steps of the block; returns the steps taken (it stops after a step with an event)."""
    prefer_wide_vectors()
    d = mu.shape[0]
    B = X.shape[0] // (d + N_STATE_ROWS)
    V, kappa, s, vmx, live, watch = _rows(X, d, B)
    acc = scratch[0:d * B].reshape((d, B))
    T1 = scratch[d * B:2 * d * B].reshape((d, B))
    T2 = scratch[2 * d * B:3 * d * B].reshape((d, B))
    T3 = scratch[3 * d * B:4 * d * B].reshape((d, B))
    q = scratch[4 * d * B:(4 * d + 1) * B]
    r = scratch[(4 * d + 1) * B:(4 * d + 2) * B]
    a1, a2, a3 = _SUB[0] * h, _SUB[1] * h, _SUB[2] * h
    for i in range(n):
        _stage(V, V, mu, kappa, s, _B[0], True, a1, T1, q, acc, r)
        _stage(T1, V, mu, kappa, q, _B[1], False, a2, T2, q, acc, r)
        _stage(T2, V, mu, kappa, q, _B[2], False, a3, T3, q, acc, r)
        for b in range(B):
            r[b] = kappa[b] * rsqrt(max(q[b], _SQRT_FLOOR))
        for b in range(B):
            s[b] = 0.0
            vmx[b] = 0.0
        for j in range(d):
            mj = mu[j]
            for b in range(B):
                k = mj * T3[j, b] * (1.0 - r[b] * mj)
                v = V[j, b] + live[b] * h * (acc[j, b] + _B[3] * k)
                V[j, b] = v
                s[b] += (mj * v) * (mj * v)
                vmx[b] = max(vmx[b], v)
        events = 0
        for b in range(B):
            th = kappa[b] * mu[0]
            events += (live[b] > 0.0) & ((s[b] <= th * th) | ((watch[b] > 0.0) & (vmx[b] > kappa[b]))
                                         | (vmx[b] > _RENORM))
        if events > 0:
            return i + 1
    return n


@njit(cache=True)
def _rk4_block(alphas, mu, c, dt, stride, jd, loss, logS, status):
    d = alphas.shape[1]
    X, m, scratch = _block_start(alphas, mu, c, status, BLOCK)
    n_live = _handle_events(X, d, BLOCK, mu, c, m, status)
    for k in range(jd.shape[1]):
        left = stride if k > 0 else 0
        while left > 0 and n_live > 0:
            left -= _steps(X, mu, dt, left, scratch)
            n_live = _handle_events(X, d, BLOCK, mu, c, m, status)
        _record_block(X, d, BLOCK, m, mu, c, status, k, jd, loss, logS)


@njit(cache=True, parallel=True)
def _rk4_batch(alphas, mu, c, dt, stride, jd, loss, logS, status):
    n = alphas.shape[0]
    n_blocks = (n + BLOCK - 1) // BLOCK
    for i in prange(n_blocks):
        lo = i * BLOCK
        hi = min(n, lo + BLOCK)
        _rk4_block(alphas[lo:hi], mu, c, dt, stride, jd[lo:hi], loss[lo:hi], logS[lo:hi], status[lo:hi])


def _outputs(n_a: int, n_out: int):
    return (np.zeros((n_a, n_out), dtype=np.int64), np.zeros((n_a, n_out)), np.zeros((n_a, n_out)),
            np.zeros(n_a, dtype=np.int64))


def rk4_heatmap(alphas, mu, c: float, dt: float, stride: int, n_out: int):
    r"""RK4 on every row of ``alphas`` (n, d, contiguous float64): j†, loss and ln S every ``stride`` steps of
    ``dt`` at ``n_out`` outputs, and the final certificate status (−1 collapse, +1 escape, 0 neither).

    numba, parallel over the rows; inputs are validated by :func:`biasaudit.numerics.heatmap.dominant_index_heatmap`.

    Parameters
    ----------
    alphas : numpy.ndarray
        The initial weights, shape (n, d), contiguous float64, > 0.
    mu : numpy.ndarray
        The data point, shape (d,).
    c : float
        :math:`c_L` (0 for gradient flow).
    dt : float
        The RK4 step.
    stride : int
        RK4 steps between outputs.
    n_out : int
        The number of outputs (the first at τ = 0).

    Returns
    -------
    tuple of numpy.ndarray
        ``jd`` (n, n_out) 1-based :math:`\arg\max_j\beta_j` (0 once collapsed), ``loss`` and ``logS`` (n, n_out),
        and ``status`` (n,): −1 collapse, +1 escape, 0 neither.
    """
    jd, loss, logS, status = _outputs(alphas.shape[0], n_out)
    _rk4_batch(alphas, mu, c, dt, stride, jd, loss, logS, status)
    return jd, loss, logS, status


# ----------------------------------------------------------------------------------------------------------
# the plain-numpy reference
# ----------------------------------------------------------------------------------------------------------
def rk4_heatmap_reference(alphas, mu, c: float, dt: float, stride: int, n_out: int):
    r"""The same RK4 update as :func:`rk4_heatmap`, vectorized in plain numpy over the batch (the readable
    reference, and the bench's numpy contender): one :func:`biasaudit.numerics.tableau.explicit_rk_step` per
    step on the whole batch, then the same renormalisation and certificates.

    Parameters
    ----------
    alphas : numpy.ndarray
        The initial weights, shape (n, d), contiguous float64, > 0.
    mu : numpy.ndarray
        The data point, shape (d,).
    c : float
        :math:`c_L` (0 for gradient flow).
    dt : float
        The RK4 step.
    stride : int
        RK4 steps between outputs.
    n_out : int
        The number of outputs (the first at τ = 0).

    Returns
    -------
    tuple of numpy.ndarray
        ``jd`` (n, n_out) 1-based :math:`\arg\max_j\beta_j` (0 once collapsed), ``loss`` and ``logS`` (n, n_out),
        and ``status`` (n,): −1 collapse, +1 escape, 0 neither.

    Examples
    --------
    >>> import numpy as np
    >>> jd, loss, log_S, status = rk4_heatmap_reference(np.array([[0.01, 0.01], [0.9, 0.9]]), np.array([1.0, 2.0]),
    ...                                                 1.0, 0.01, 10, 3)
    >>> status.tolist()                          # alpha = 0.01 c collapses; 0.9 c is still deciding
    [-1, 0]
    """
    v = np.array(alphas, dtype=float)
    m = np.zeros(v.shape[0])
    jd, loss, logS, status = _outputs(v.shape[0], n_out)

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
            loss[:, k] = np.where(live, np.log1p(np.exp(-np.exp(np.minimum(log_z, 700.0)))), math.log(2.0))

    status[:] = certify()
    record(0)
    for k in range(1, n_out):
        for _ in range(stride):
            live = status != -1
            if not live.any():
                break
            kappa = c * np.exp(-m)
            stepped = explicit_rk_step(lambda t, x: field(x, kappa), 0.0, v, dt, RK4)[0]
            v = np.where(live[:, None], stepped, v)
            big = v.max(axis=1) > _RENORM
            if big.any():
                v[big] /= _RENORM
                v[big] = np.where(v[big] < _TINY, 0.0, v[big])
                m[big] += _LOG_RENORM
            cert = certify()
            status[:] = np.where(live & (cert == -1), -1, np.where(live & (cert == 1), 1, status))
        record(k)
    return jd, loss, logS, status
