r"""Gradient descent on the shared-weight diagonal model, batched over many step sizes η (numba + numpy).

GD on :math:`L = c\,r^2`, :math:`r = \langle x, w\odot w\rangle - y` is multiplicative:

.. math:: w_{k+1} = w_k\odot(1 - 4c\,\eta\,r_k\,x) \qquad(= w_k\odot(1-2\eta r_k x)\ \text{at}\ c=1/2).

Each run stops at the first of

=================  ============================================================================
outcome            rule
=================  ============================================================================
converged (0)      :math:`|r_k| <` ``tol``
diverged (3)       :math:`r_k` non-finite or :math:`|r_k| >` ``bound`` (the last finite iterate is kept)
period-2 (1)       after ``max_steps``: :math:`|r_k - r_{k+2}| \le` ``p2_rtol``·|r_k| on the last
                   4 residuals, and :math:`r_k r_{k+1} < 0`
bounded-chaotic(2) after ``max_steps``: none of the above (this also holds a run still converging
                   very slowly; its ``steps == max_steps`` and ``r_final`` tell it apart)
=================  ============================================================================

A diverging run is an outcome, never an exception: every output array is finite.

The kernel :func:`_gd_batch` only loops and writes into preallocated arrays: ``prange`` over blocks of
``lanes`` (up to 64) consecutive step sizes, advanced together so that the inner loops vectorize across η
(a lane whose run has stopped idles until its block is done; 64 lanes measured 3x faster per step than 8,
whose fully unrolled loops stayed scalar); the public
:func:`gd_sweep` validates, allocates, and computes the final Hessian spectrum (exact ``eigvalsh`` of the
d×d matrix :math:`2c(4gg^\top + 2r\,\mathrm{diag}(x))`, valid on and off the manifold) and the norms.
:func:`gd_sweep_numpy` is the same GD vectorized over η in plain numpy: the readable reference (tests) and
the benchmark baseline.

Symbols: ``x`` data, ``y`` label, ``w`` weights, ``r`` residual, ``eta`` step, ``c`` loss factor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from biasaudit.plumbing import InputError, as_finite_vector, positive_int, positive_scalar
from biasaudit.theory.eos_model import eos_problem, hessian_eigenvalues

__all__ = ["CONVERGED", "PERIOD2", "CHAOTIC", "DIVERGED", "OUTCOMES", "GdSweep", "gd_sweep", "gd_sweep_numpy",
           "gd_path", "default_tol", "default_bound"]

CONVERGED, PERIOD2, CHAOTIC, DIVERGED = 0, 1, 2, 3
OUTCOMES = ("converged", "period-2", "bounded-chaotic", "diverged")
TAIL = 4  # residuals kept for the period-2 test
LANES = 64  # step sizes advanced together by one thread (SIMD over eta; a lane that stops idles)
P2_RTOL = 1e-6  # |r_k - r_{k+2}| / |r_k| below this on the last 4 residuals: a period-2 orbit


def default_tol(y: float) -> float:
    """Convergence threshold on |r|: 1e3 ulps of y (r is a sum of d terms of size ~y, rounding ~ d·eps·y)."""
    return 1e3 * np.finfo(float).eps * max(y, 1.0)


def default_bound(y: float, r0: float) -> float:
    """Divergence threshold on |r|: 1e6·(y + |r0|) (catapults we saw peak below 1e2·(y + |r0|))."""
    return 1e6 * (y + abs(r0))


@njit(cache=True, parallel=True, fastmath={"reassoc", "contract"})
def _gd_batch(x, y, w0, etas, c, max_steps, tol, bound, p2_rtol, lanes, w_out, w_prev_out, r_tail, steps_out,
              outcome):
    # `lanes` consecutive step sizes per block, SIMD across the lanes: W[i, lane] is contiguous in lane.
    d = x.size
    n = etas.size
    nblocks = (n + lanes - 1) // lanes
    for blk in prange(nblocks):
        W = np.empty((d, lanes))
        WP = np.empty((d, lanes))
        a = np.zeros(lanes)
        ap = np.zeros(lanes)  # the previous step's a, to rebuild w_{k-1} from w_k at a stop
        r = np.empty(lanes)
        tail = np.zeros((4, lanes))
        active = np.zeros(lanes, np.bool_)
        eta = np.zeros(lanes)
        n_active = 0
        for b in range(lanes):
            j = blk * lanes + b
            if j < n:
                active[b] = True
                eta[b] = etas[j]
                n_active += 1
            for i in range(d):
                W[i, b] = w0[i]
                WP[i, b] = w0[i]
        act = np.zeros(lanes)  # 1.0 for a running lane, 0.0 once it has stopped
        for b in range(lanes):
            act[b] = 1.0 if active[b] else 0.0
        k = 0
        while n_active > 0:
            for b in range(lanes):
                r[b] = -y
            for i in range(d):
                xi = x[i]
                for b in range(lanes):
                    r[b] += xi * W[i, b] * W[i, b]
            # branch-free test: does any running lane stop here (diverged, NaN, converged, out of steps)?
            flag = 0.0
            for b in range(lanes):
                rb = r[b]
                tail[k & 3, b] = rb
                stop = (abs(rb) > bound) | (abs(rb) < tol) | (rb != rb)
                flag += act[b] * stop
                ap[b] = a[b]
                a[b] = 4.0 * c * eta[b] * rb * act[b]
            if flag > 0.0 or k == max_steps:
                for b in range(lanes):
                    if not active[b]:
                        continue
                    rb = r[b]
                    cls = -1
                    if not np.isfinite(rb) or abs(rb) > bound:
                        cls = 3
                    elif abs(rb) < tol:
                        cls = 0
                    elif k == max_steps:
                        r0 = tail[(k + 1) & 3, b]
                        r1 = tail[(k + 2) & 3, b]
                        r2 = tail[(k + 3) & 3, b]
                        r3 = tail[k & 3, b]
                        if (abs(r0 - r2) <= p2_rtol * abs(r0) and abs(r1 - r3) <= p2_rtol * abs(r1)
                                and r0 * r1 < 0 and r2 * r3 < 0):
                            cls = 1
                        else:
                            cls = 2
                    if cls >= 0:
                        j = blk * lanes + b
                        outcome[j] = cls
                        steps_out[j] = k
                        for m in range(4):
                            r_tail[j, m] = tail[(k + 1 + m) & 3, b]
                        for i in range(d):
                            w_out[j, i] = W[i, b]
                            f = 1.0 - ap[b] * x[i]
                            if k == max_steps or k == 0:
                                w_prev_out[j, i] = WP[i, b]  # exact copy (made one step before the end)
                            elif f != 0.0 and np.isfinite(f):
                                w_prev_out[j, i] = W[i, b] / f  # w_{k-1} = w_k / (1 - a_{k-1} x_i)
                            else:
                                w_prev_out[j, i] = W[i, b]
                        active[b] = False
                        act[b] = 0.0
                        a[b] = 0.0
                        n_active -= 1
                if n_active == 0:
                    break
            if k == max_steps - 1:  # keep w_{k-1} exactly for the runs that will run out of steps
                for i in range(d):
                    for b in range(lanes):
                        WP[i, b] = W[i, b]
            for i in range(d):
                xi = x[i]
                for b in range(lanes):
                    W[i, b] = W[i, b] * (1.0 - a[b] * xi)  # a stopped lane has a = 0 (or NaN once diverged)
            k += 1


@njit(cache=True)
def _gd_path(x, y, w0, eta, c, steps, out):
    d = x.size
    for i in range(d):
        out[0, i] = w0[i]
    for k in range(steps):
        r = -y
        for i in range(d):
            r += x[i] * out[k, i] * out[k, i]
        a = 4.0 * c * eta * r
        for i in range(d):
            out[k + 1, i] = out[k, i] * (1.0 - a * x[i])


@dataclass(frozen=True)
class GdSweep:
    """Final state of GD at each η (rows). Every array is finite; ``outcome`` codes index :data:`OUTCOMES`."""

    x: np.ndarray
    y: float
    w0: np.ndarray
    loss_factor: float
    eta: np.ndarray
    outcome: np.ndarray
    steps: np.ndarray
    w: np.ndarray
    w_prev: np.ndarray  # w_{k-1}: exact for runs that ran out of steps, else w_k / (1 - 4c eta r_{k-1} x)
    r_tail: np.ndarray  # last 4 residuals, oldest first
    tol: float
    bound: float
    max_steps: int

    @property
    def r(self) -> np.ndarray:
        return self.r_tail[:, -1]

    @property
    def beta(self) -> np.ndarray:
        return self.w * self.w

    @property
    def eigenvalues(self) -> np.ndarray:
        """Ascending Hessian eigenvalues at the final iterate (exact, on or off the manifold)."""
        return hessian_eigenvalues(self.x, self.y, self.w, self.loss_factor)

    @property
    def lambda_max(self) -> np.ndarray:
        return self.eigenvalues[:, -1]

    @property
    def sharpness(self) -> np.ndarray:
        """max |λ| (operator norm); equals λ_max on the manifold."""
        ev = self.eigenvalues
        return np.maximum(np.abs(ev[:, 0]), np.abs(ev[:, -1]))

    @property
    def beta_l1(self) -> np.ndarray:
        return self.beta.sum(axis=1)

    @property
    def beta_l2(self) -> np.ndarray:
        return np.sqrt((self.beta**2).sum(axis=1))

    @property
    def w_l1(self) -> np.ndarray:
        return np.abs(self.w).sum(axis=1)

    @property
    def w_l2(self) -> np.ndarray:
        return np.sqrt((self.w**2).sum(axis=1))

    @property
    def converged(self) -> np.ndarray:
        return self.outcome == CONVERGED

    def outcome_names(self) -> list[str]:
        return [OUTCOMES[k] for k in self.outcome]

    def counts(self) -> dict:
        return {name: int(np.sum(self.outcome == k)) for k, name in enumerate(OUTCOMES)}


def _validate(x, y, w0, eta, loss_factor, max_steps, tol, bound):
    p = eos_problem(x, y, w0, loss_factor=loss_factor)
    if p.w0 is None:
        raise InputError("w0", "is required", w0)
    etas = as_finite_vector("eta", eta)
    if np.any(etas <= 0):
        raise InputError("eta", "must be > 0", eta)
    max_steps = positive_int("max_steps", max_steps)
    tol = default_tol(p.y) if tol is None else positive_scalar("tol", tol)
    bound = default_bound(p.y, p.r0) if bound is None else positive_scalar("bound", bound)
    return p, etas, max_steps, tol, bound


def gd_sweep(x, y, w0, eta, *, loss_factor=0.5, max_steps=100_000, tol=None, bound=None) -> GdSweep:
    """Run GD from ``w0`` at every step size in ``eta`` (numba, parallel over η)."""
    p, etas, max_steps, tol, bound = _validate(x, y, w0, eta, loss_factor, max_steps, tol, bound)
    n, d = etas.size, p.d
    w, wp = np.empty((n, d)), np.empty((n, d))
    r_tail = np.empty((n, TAIL))
    steps, outcome = np.empty(n, np.int64), np.empty(n, np.int64)
    lanes = min(LANES, -(-n // 2))  # at least two blocks for the two cores; no idle lanes for tiny n
    _gd_batch(p.x, p.y, p.w0, etas, p.c, max_steps, tol, bound, P2_RTOL, lanes, w, wp, r_tail, steps, outcome)
    return GdSweep(p.x, p.y, p.w0, p.c, etas, outcome, steps, w, wp, r_tail, tol, bound, max_steps)


def gd_sweep_numpy(x, y, w0, eta, *, loss_factor=0.5, max_steps=100_000, tol=None, bound=None) -> GdSweep:
    """The same GD in plain numpy, vectorized over η (active runs compacted each step): reference and baseline."""
    p, etas, max_steps, tol, bound = _validate(x, y, w0, eta, loss_factor, max_steps, tol, bound)
    n = etas.size
    w = np.tile(p.w0, (n, 1))
    wp = w.copy()
    tails = np.zeros((n, TAIL))
    steps = np.full(n, max_steps, np.int64)
    outcome = np.full(n, -1, np.int64)
    active = np.arange(n)
    wa, ea = w.copy(), etas.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(max_steps + 1):
            r = wa * wa @ p.x - p.y
            tails[active, k % TAIL] = r
            div = ~np.isfinite(r) | (np.abs(r) > bound)
            conv = np.abs(r) < tol
            done = div | conv
            if k == max_steps:
                done[:] = True
            if done.any():
                idx = active[done]
                outcome[idx] = np.where(div[done], DIVERGED, np.where(conv[done], CONVERGED, -1))
                steps[idx] = k
                w[idx] = wa[done]
                keep = ~done
                active, wa, ea, r = active[keep], wa[keep], ea[keep], r[keep]
            if active.size == 0:
                break
            wp[active] = wa
            wa = wa * (1.0 - (4.0 * p.c * ea * r)[:, None] * p.x)
    order = [(steps[:, None] + 1 + m) % TAIL for m in range(TAIL)]
    r_tail = np.stack([np.take_along_axis(tails, o, axis=1)[:, 0] for o in order], axis=1)
    left = outcome == -1
    r0, r1, r2, r3 = r_tail.T
    p2 = ((np.abs(r0 - r2) <= P2_RTOL * np.abs(r0)) & (np.abs(r1 - r3) <= P2_RTOL * np.abs(r1))
          & (r0 * r1 < 0) & (r2 * r3 < 0))
    outcome[left] = np.where(p2[left], PERIOD2, CHAOTIC)
    return GdSweep(p.x, p.y, p.w0, p.c, etas, outcome, steps, w, wp, r_tail, tol, bound, max_steps)


def gd_path(x, y, w0, eta, steps, *, loss_factor=0.5) -> np.ndarray:
    """The iterates w_0 … w_steps of one run (rows). Non-finite rows can appear only after divergence."""
    p = eos_problem(x, y, w0, loss_factor=loss_factor)
    eta = positive_scalar("eta", eta)
    steps = positive_int("steps", steps)
    out = np.empty((steps + 1, p.d))
    _gd_path(p.x, p.y, p.w0, eta, p.c, steps, out)
    return out
