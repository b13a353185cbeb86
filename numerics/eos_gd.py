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
bounded-chaotic(2) after ``max_steps`` = N, not period-2, and the orbit oscillates with a stationary
                   envelope: over each window :math:`k \in [N/2, 3N/4)` and :math:`[3N/4, N]` (integer
                   halves and quarters) r takes both signs (so it changed sign twice or more, never
                   true of a run that barely moves or creeps monotonically), and with :math:`M_1, M_2`
                   the largest |r_k| in the two windows, :math:`|M_2 - M_1| \le`
                   ``ENVELOPE_RTOL``·:math:`M_1` (3e-3); needs N >= ``MIN_CHAOS_STEPS`` (16)
unsettled (4)      after ``max_steps``: none of the above. The run ran out of steps while still settling
                   (its envelope still shrinks or grows, or it barely moves): more steps decide
=================  ============================================================================

Why the envelope: on a chaotic (or higher-period) orbit the largest ``|r|`` over a long window is a property of
the attractor, nearly the same in two consecutive windows, while a run that still converges, or still
approaches its cycle, shrinks (or grows) it by a factor :math:`e^{\mp\lambda N/4}`. Measured
:math:`|M_2 - M_1|/M_1` on chaotic orbits (x = (1, 2), (1, 3), (0.5, 1, 2), d = 4; 4 realizations of each of
~80 chaotic η): at most 2.4e-2 (N = 500), 6.3e-3 (N = 1000), 1.6e-3 (N = 2000), 1.8e-4 (N = 5000), 1.5e-5
(N = 2e4); on runs that converge or lock into period-2 later (x = (1, 2), w0 = (1, 1), N = 2000): at least 2.1e-2.
``ENVELOPE_RTOL`` = 3e-3 sits between the two at N >= 2000 (shorter runs may call a chaotic orbit unsettled:
more steps decide); it calls a settling run chaotic only if it contracts by less than 1.2e-2/N per step, i.e.
it would need > 2500·N more steps to converge. A chaotic transient that ends in convergence much later looks
chaotic within N steps, under any rule. One rule, :func:`stationary_oscillation`, for the kernel and both
references (the kernel takes the window maxima branch-free, to an ulp). Codes are stable: ``unsettled`` was
appended as code 4 (before it, such runs were reported as bounded-chaotic).

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

__all__ = ["CONVERGED", "PERIOD2", "CHAOTIC", "DIVERGED", "UNSETTLED", "OUTCOMES", "GdSweep", "gd_sweep",
           "gd_sweep_numpy", "gd_path", "default_tol", "default_bound", "chaos_windows", "stationary_oscillation",
           "bounded_steps", "MAX_STEPS", "MAX_WORK", "ENVELOPE_RTOL", "MIN_CHAOS_STEPS"]

CONVERGED, PERIOD2, CHAOTIC, DIVERGED, UNSETTLED = 0, 1, 2, 3, 4
OUTCOMES = ("converged", "period-2", "bounded-chaotic", "diverged", "unsettled")
TAIL = 4  # residuals kept for the period-2 test
LANES = 64  # step sizes advanced together by one thread (SIMD over eta; a lane that stops idles)
P2_RTOL = 1e-6  # |r_k - r_{k+2}| / |r_k| below this on the last 4 residuals: a period-2 orbit
# bounded-chaotic needs a stationary envelope: |max|r| over [3N/4, N] - max|r| over [N/2, 3N/4)| <= this times
# the latter, and both signs of r in each window (see the module docstring for the measurements behind 3e-3).
ENVELOPE_RTOL = 3e-3
MIN_CHAOS_STEPS = 16  # fewer steps than this: windows too short to judge, an out-of-steps run is unsettled
MAX_STEPS = 10**8  # max_steps above this is refused (1e8 steps of one run take ~1 s of one core)
# n·max_steps·(d + 2) above this is refused: the kernel costs 0.3–0.6 ns per (η, step, coordinate + 2) on the
# shared 2-core box (eos.gd_sweep bench: 3.7–6.7 ns per (η, step) at d = 10), so 6e12 is 30–60 minutes.
MAX_WORK = 6e12


def default_tol(y: float) -> float:
    r"""Convergence threshold on ``|r|``: 1e3 ulps of y. At a solution every term :math:`x_iw_i^2` is positive and
    at most y, so the rounding of r is ~ d·eps·y: the threshold is relative to y (an absolute floor would call
    any run with y << 1 converged at once).

    Parameters
    ----------
    y : float
        The label.

    Returns
    -------
    float
        :math:`10^3\,\varepsilon\,y`.

    Examples
    --------
    >>> import numpy as np
    >>> bool(default_tol(2.0) == 2e3 * np.finfo(float).eps)
    True
    """
    return 1e3 * np.finfo(float).eps * y


def chaos_windows(max_steps: int) -> tuple[int, int]:
    """(N/2, 3N/4) for N = ``max_steps``: the envelope windows are [N/2, 3N/4) and [3N/4, N].

    Parameters
    ----------
    max_steps : int
        N.

    Returns
    -------
    tuple of int
        The first step of each window.

    Examples
    --------
    >>> chaos_windows(1000)
    (500, 750)
    """
    return max_steps // 2, (3 * max_steps) // 4


def default_bound(y: float, r0: float) -> float:
    """Divergence threshold on ``|r|``: :math:`10^6(y + |r_0|)` (catapults we saw peak below :math:`10^2(y + |r_0|)`).

    Parameters
    ----------
    y : float
        The label.
    r0 : float
        The initial residual :math:`r_0`.

    Returns
    -------
    float
        The bound.

    Examples
    --------
    >>> default_bound(1.0, -0.5)
    1500000.0
    """
    return 1e6 * (y + abs(r0))


@njit(cache=True)
def stationary_oscillation(p1, q1, p2, q2, max_steps, min_chaos_steps, env_rtol):
    """The bounded-chaotic test on the signed envelopes p = max(0, r), q = max(0, -r) of the windows [N/2, 3N/4)
    (p1, q1) and [3N/4, N] (p2, q2): r takes both signs in each window, and ``max|r|`` changed by at most
    ``env_rtol``. Plain Python semantics: also used by the numpy and mpmath references.

    Parameters
    ----------
    p1, q1 : float
        max(0, r) and max(0, −r) over the first window.
    p2, q2 : float
        The same over the second window.
    max_steps : int
        N, the run's step limit.
    min_chaos_steps : int
        Below this N the windows are too short to judge (the test fails).
    env_rtol : float
        The largest relative change of ``max|r|`` between the windows.

    Returns
    -------
    bool
        Whether the oscillation is stationary (bounded-chaotic).

    Examples
    --------
    >>> stationary_oscillation.py_func(0.5, 0.4, 0.5, 0.4, 1000, MIN_CHAOS_STEPS, ENVELOPE_RTOL)   # the kernel's Python
    True
    >>> stationary_oscillation.py_func(0.5, 0.0, 0.5, 0.4, 1000, MIN_CHAOS_STEPS, ENVELOPE_RTOL)   # one sign only
    False
    """
    m1, m2 = max(p1, q1), max(p2, q2)
    return (max_steps >= min_chaos_steps and p1 > 0 and q1 > 0 and p2 > 0 and q2 > 0
            and abs(m2 - m1) <= env_rtol * m1)


@njit(cache=True, parallel=True, fastmath={"reassoc", "contract"})
def _gd_batch(x, y, w0, etas, c, max_steps, tol, bound, p2_rtol, env_rtol, min_chaos_steps, lanes, w_out,
              w_prev_out, r_tail, steps_out, outcome):
    # `lanes` consecutive step sizes per block, SIMD across the lanes: W[i, lane] is contiguous in lane.
    d = x.size
    n = etas.size
    half = max_steps // 2  # envelope windows [half, quart) and [quart, max_steps] (chaos_windows)
    quart = (3 * max_steps) // 4
    nblocks = (n + lanes - 1) // lanes
    for blk in prange(nblocks):
        W = np.empty((d, lanes))
        WP = np.empty((d, lanes))
        a = np.zeros(lanes)
        ap = np.zeros(lanes)  # the previous step's a, to rebuild w_{k-1} from w_k at a stop
        r = np.empty(lanes)
        tail = np.zeros((4, lanes))
        p1 = np.zeros(lanes)  # max(0, r) over [half, quart)
        q1 = np.zeros(lanes)  # max(0, -r) over [half, quart)
        p2 = np.zeros(lanes)  # the same over [quart, max_steps]
        q2 = np.zeros(lanes)
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
            if k >= half:  # the signed envelope of the last half (uniform branch on k: lanes stay branch-free)
                # max(p, r) as ((p + r) + |p - r|)/2: exact to an ulp; a compare-and-select compiles to masked
                # stores that made the kernel 12 % slower (AMD EPYC), this costs ~7 %
                # two literal loops, not one loop over a selected alias: the alias measured 2.5-2.9 ns per (eta,
                # step) against 2.0-2.6 here (eos.gd_sweep bench, same session)
                if k < quart:
                    for b in range(lanes):
                        rb = r[b]
                        pb = p1[b]
                        p1[b] = 0.5 * ((pb + rb) + abs(pb - rb))
                        qb = q1[b]
                        q1[b] = 0.5 * ((qb - rb) + abs(qb + rb))
                else:
                    for b in range(lanes):
                        rb = r[b]
                        pb = p2[b]
                        p2[b] = 0.5 * ((pb + rb) + abs(pb - rb))
                        qb = q2[b]
                        q2[b] = 0.5 * ((qb - rb) + abs(qb + rb))
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
                        elif stationary_oscillation(p1[b], q1[b], p2[b], q2[b], max_steps, min_chaos_steps,
                                                     env_rtol):
                            cls = 2
                        else:
                            cls = 4
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


def _quiet_overflow():
    """The post-processing of final iterates: a diverged run keeps its last iterate below ``bound``, whose
    β = w², r and Hessian can still overflow to inf/NaN (that row's values mean nothing and are reported as
    such), so numpy's overflow/invalid warnings are silenced here, and only here."""
    return np.errstate(over="ignore", invalid="ignore")


@dataclass(frozen=True)
class GdSweep:
    """Final state of GD at each η (rows), returned by :func:`gd_sweep` and :func:`biasaudit.eos_sweep`.

    Every array is finite. The properties ``r``, ``beta``, ``eigenvalues``, ``lambda_max``, ``sharpness``,
    ``beta_l1``, ``w_l1`` and ``converged`` derive the rest; :meth:`counts` counts the outcome classes.

    Parameters
    ----------
    x, y, w0, loss_factor
        The model: data point, label, initial weights and c in L = c r².
    eta : ndarray, shape (n,)
        The step sizes.
    outcome : ndarray of int, shape (n,)
        Each run's outcome class, an index into :data:`OUTCOMES` (converged, period-2, bounded-chaotic,
        diverged, unsettled).
    steps : ndarray of int, shape (n,)
        Steps each run took.
    w, w_prev : ndarray, shape (n, d)
        The final iterate and the one before it.
    r_tail : ndarray, shape (n, 4)
        The last 4 residuals, oldest first.
    tol, bound, max_steps
        The convergence tolerance, the divergence bound and the step limit used.
    """

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
        """The final residual r = ⟨x, β⟩ − y of each run, shape (n,)."""
        return self.r_tail[:, -1]

    @property
    def beta(self) -> np.ndarray:
        """β = w⊙w at each final iterate, shape (n, d) (inf or NaN where a diverged run overflows)."""
        with _quiet_overflow():
            return self.w * self.w

    @property
    def eigenvalues(self) -> np.ndarray:
        """Ascending Hessian eigenvalues at the final iterate (exact, on or off the manifold)."""
        with _quiet_overflow():
            return hessian_eigenvalues(self.x, self.y, self.w, self.loss_factor)

    @property
    def lambda_max(self) -> np.ndarray:
        """The top algebraic Hessian eigenvalue λ_max at each final iterate, shape (n,)."""
        return self.eigenvalues[:, -1]

    @property
    def sharpness(self) -> np.ndarray:
        """max |λ| (operator norm); equals λ_max on the manifold."""
        ev = self.eigenvalues
        return np.maximum(np.abs(ev[:, 0]), np.abs(ev[:, -1]))

    @property
    def beta_l1(self) -> np.ndarray:
        """‖β‖₁ = ‖w‖₂² of each final iterate, shape (n,)."""
        return self.beta.sum(axis=1)

    @property
    def beta_l2(self) -> np.ndarray:
        """‖β‖₂ of each final iterate, shape (n,)."""
        with _quiet_overflow():
            return np.sqrt((self.beta**2).sum(axis=1))

    @property
    def w_l1(self) -> np.ndarray:
        """‖w‖₁ of each final iterate, shape (n,)."""
        return np.abs(self.w).sum(axis=1)

    @property
    def w_l2(self) -> np.ndarray:
        """‖w‖₂ of each final iterate, shape (n,)."""
        with _quiet_overflow():
            return np.sqrt((self.w**2).sum(axis=1))

    @property
    def converged(self) -> np.ndarray:
        """Boolean mask (n,) of the runs that converged (``|r| < tol``)."""
        return self.outcome == CONVERGED

    def outcome_names(self) -> list[str]:
        """The outcome of each run by name.

        Returns
        -------
        list of str
            One of converged, period-2, bounded-chaotic, diverged or unsettled per run, in the order of ``eta``.
        """
        return [OUTCOMES[k] for k in self.outcome]

    def counts(self) -> dict:
        """The number of runs in each outcome class.

        Returns
        -------
        dict
            ``{name: count}`` over every name in :data:`OUTCOMES`, counts as plain ints.
        """
        return {name: int(np.sum(self.outcome == k)) for k, name in enumerate(OUTCOMES)}


def bounded_steps(name: str, steps, n: int, d: int) -> int:
    """``steps`` as an int in [1, MAX_STEPS] whose sweep of ``n`` step sizes in dimension ``d`` stays within
    MAX_WORK (else an InputError naming ``name``).

    Parameters
    ----------
    name : str
        The parameter's name, for the error.
    steps : int
        The step limit of one run.
    n : int
        The number of step sizes.
    d : int
        The dimension.

    Returns
    -------
    int
        ``steps``.

    Raises
    ------
    InputError
        If ``steps`` is not an integer in [1, :data:`MAX_STEPS`] or n·steps·(d + 2) > :data:`MAX_WORK`.

    Examples
    --------
    >>> bounded_steps("max_steps", 1000, 3, 2)
    1000
    >>> bounded_steps("max_steps", 0, 3, 2)
    Traceback (most recent call last):
    ...
    biasaudit.plumbing.inputs.InputError: max_steps: must be an integer >= 1, got 0
    """
    steps = positive_int(name, steps)
    if steps > MAX_STEPS:
        raise InputError(name, f"must be an integer in [1, {MAX_STEPS:,}] (GD steps per run)", steps)
    work = float(n) * steps * (d + 2)
    if work > MAX_WORK:
        raise InputError(name, f"gives n*steps*(d+2) = {n}*{steps}*{d + 2} = {work:.3g} GD work units, more than "
                               f"{MAX_WORK:.0e} (about an hour); lower steps or the number of step sizes", steps)
    return steps


def _validate(x, y, w0, eta, loss_factor, max_steps, tol, bound):
    p = eos_problem(x, y, w0, loss_factor=loss_factor)
    if p.w0 is None:
        raise InputError("w0", "is required", w0)
    etas = as_finite_vector("eta", eta)
    if np.any(etas <= 0):
        raise InputError("eta", "must be > 0", eta)
    max_steps = bounded_steps("max_steps", max_steps, etas.size, p.d)
    tol = default_tol(p.y) if tol is None else positive_scalar("tol", tol)
    bound = default_bound(p.y, p.r0) if bound is None else positive_scalar("bound", bound)
    return p, etas, max_steps, tol, bound


def gd_sweep(x, y, w0, eta, *, loss_factor=0.5, max_steps=100_000, tol=None, bound=None) -> GdSweep:
    r"""Run GD from ``w0`` at every step size in ``eta`` (numba, parallel over η).

    GD is :math:`w_{k+1} = w_k - \eta\nabla L(w_k) = w_k\odot(1 - 4c\eta\,r_k\,x)`; a run stops when
    :math:`|r| <` ``tol`` (converged), :math:`|r| >` ``bound`` (diverged) or after ``max_steps`` steps (then
    period-2, bounded-chaotic or unsettled). :func:`gd_sweep_numpy` is the plain reference (with an example).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.
    eta : float or array_like
        The step sizes η > 0, shape (n,).
    loss_factor : float
        c in :math:`L = c r^2`, > 0 (default 1/2).
    max_steps : int
        The step limit N of each run, in [1, :data:`MAX_STEPS`], with n·N·(d + 2) <= :data:`MAX_WORK`.
    tol : float, optional
        The convergence threshold on ``|r|`` (default :func:`default_tol`).
    bound : float, optional
        The divergence threshold on ``|r|`` (default :func:`default_bound`).

    Returns
    -------
    GdSweep
        The final state and outcome class of the run at each η.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.theory.eos_model.eos_problem`, ``w0`` is missing, an η is
        <= 0, ``max_steps`` breaks :func:`bounded_steps`, or ``tol`` or ``bound`` is <= 0.
    """
    p, etas, max_steps, tol, bound = _validate(x, y, w0, eta, loss_factor, max_steps, tol, bound)
    n, d = etas.size, p.d
    w, wp = np.empty((n, d)), np.empty((n, d))
    r_tail = np.empty((n, TAIL))
    steps, outcome = np.empty(n, np.int64), np.empty(n, np.int64)
    lanes = min(LANES, -(-n // 2))  # at least two blocks for the two cores; no idle lanes for tiny n
    _gd_batch(p.x, p.y, p.w0, etas, p.c, max_steps, tol, bound, P2_RTOL, ENVELOPE_RTOL, MIN_CHAOS_STEPS, lanes,
              w, wp, r_tail, steps, outcome)
    return GdSweep(p.x, p.y, p.w0, p.c, etas, outcome, steps, w, wp, r_tail, tol, bound, max_steps)


def gd_sweep_numpy(x, y, w0, eta, *, loss_factor=0.5, max_steps=100_000, tol=None, bound=None) -> GdSweep:
    """The same GD in plain numpy, vectorized over η (active runs compacted each step): reference and baseline.

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.
    eta : float or array_like
        The step sizes η > 0, shape (n,).
    loss_factor : float
        c in :math:`L = c r^2`, > 0 (default 1/2).
    max_steps : int
        The step limit N of each run, in [1, :data:`MAX_STEPS`], with n·N·(d + 2) <= :data:`MAX_WORK`.
    tol : float, optional
        The convergence threshold on ``|r|`` (default :func:`default_tol`).
    bound : float, optional
        The divergence threshold on ``|r|`` (default :func:`default_bound`).

    Returns
    -------
    GdSweep
        The final state and outcome class of the run at each η.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.theory.eos_model.eos_problem`, ``w0`` is missing, an η is
        <= 0, ``max_steps`` breaks :func:`bounded_steps`, or ``tol`` or ``bound`` is <= 0.

    Examples
    --------
    >>> sweep = gd_sweep_numpy([1, 2], 1, [0.1, 0.1], [0.1, 0.2], max_steps=1000)
    >>> sweep.outcome_names(), sweep.steps.tolist()
    (['converged', 'converged'], [26, 42])
    """
    p, etas, max_steps, tol, bound = _validate(x, y, w0, eta, loss_factor, max_steps, tol, bound)
    n = etas.size
    w = np.tile(p.w0, (n, 1))
    wp = w.copy()
    tails = np.zeros((n, TAIL))
    steps = np.full(n, max_steps, np.int64)
    outcome = np.full(n, -1, np.int64)
    active = np.arange(n)
    wa, ea = w.copy(), etas.copy()
    half, quart = chaos_windows(max_steps)
    env = np.zeros((4, n))  # max(0, r), max(0, -r) over [half, quart), then over [quart, max_steps]
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(max_steps + 1):
            r = wa * wa @ p.x - p.y
            if k >= half:
                j = 0 if k < quart else 2
                env[j, active] = np.maximum(env[j, active], r)
                env[j + 1, active] = np.maximum(env[j + 1, active], -r)
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
    chaotic = np.array([stationary_oscillation.py_func(*e, max_steps, MIN_CHAOS_STEPS, ENVELOPE_RTOL)
                        for e in env.T.tolist()], bool)
    outcome[left] = np.where(p2[left], PERIOD2, np.where(chaotic[left], CHAOTIC, UNSETTLED))
    return GdSweep(p.x, p.y, p.w0, p.c, etas, outcome, steps, w, wp, r_tail, tol, bound, max_steps)


def gd_path(x, y, w0, eta, steps, *, loss_factor=0.5) -> np.ndarray:
    """The iterates :math:`w_0 … w_{steps}` of one run (rows). Non-finite rows can appear only after divergence.

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.
    eta : float
        The step size η > 0.
    steps : int
        The number of steps, >= 1.
    loss_factor : float
        c in :math:`L = c r^2`, > 0 (default 1/2).

    Returns
    -------
    numpy.ndarray
        Shape (steps + 1, d); row k is :math:`w_k`.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.theory.eos_model.eos_problem`, ``eta`` <= 0 or ``steps`` < 1.
    """
    p = eos_problem(x, y, w0, loss_factor=loss_factor)
    eta = positive_scalar("eta", eta)
    steps = positive_int("steps", steps)
    out = np.empty((steps + 1, p.d))
    _gd_path(p.x, p.y, p.w0, eta, p.c, steps, out)
    return out
