r"""Single GD runs on the shared-weight model in mpmath (60 significant digits by default): the reference.

The same update as :mod:`biasaudit.numerics.eos_gd`, :math:`w_{k+1} = w_k\odot(1 - 4c\,\eta\,r_k\,x)`, in
``mpmath.mpf`` arithmetic with ``dps`` digits, and the same outcome rules (converged at |r| < ``tol``,
diverged above ``bound``; after ``max_steps`` period-2, bounded-chaotic when r oscillates with a stationary
envelope over the last half, else unsettled: :func:`~biasaudit.numerics.eos_gd.stationary_oscillation`).
Inputs are converted from their float64 values exactly (``mpf(float)`` is exact), so float64 and mpmath runs
start from the same point.

What to expect (``notes/eos.md``): convergent runs agree with float64 to about 7 significant digits in β,
right up to the transition; in chaotic windows the float64 orbit decorrelates after a few dozen steps and
only the outcome class agrees.

Symbols: ``x`` data, ``y`` label, ``w`` weights, ``r`` residual, ``eta`` step, ``c`` loss factor.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np

from biasaudit.numerics.eos_gd import (CHAOTIC, CONVERGED, DIVERGED, ENVELOPE_RTOL, MIN_CHAOS_STEPS,
                                        P2_RTOL, PERIOD2, UNSETTLED, bounded_steps, chaos_windows, default_bound,
                                        stationary_oscillation)
from biasaudit.plumbing import positive_int, positive_scalar
from biasaudit.theory.eos_model import eos_problem

__all__ = ["MpRun", "gd_run_mpmath"]


@dataclass(frozen=True)
class MpRun:
    """One GD run in mpmath (:func:`gd_run_mpmath`).

    Parameters
    ----------
    eta : float
        The step η.
    outcome : int
        A code indexing :data:`~biasaudit.numerics.eos_gd.OUTCOMES`.
    steps : int
        The steps taken.
    w : tuple of mpmath.mpf
        The final weights.
    r_tail : tuple of mpmath.mpf
        The last residuals (up to 4), oldest first.
    dps : int
        The working precision in decimal digits.
    """

    eta: float
    outcome: int
    steps: int
    w: tuple  # mpf entries
    r_tail: tuple  # last residuals (mpf), oldest first
    dps: int

    @property
    def beta(self) -> np.ndarray:
        """β = w⊙w of the final iterate, rounded to float64, shape (d,)."""
        return np.array([float(v * v) for v in self.w])


def gd_run_mpmath(x, y, w0, eta, *, loss_factor=0.5, max_steps=100_000, tol=None, bound=None,
                  dps: int = 60) -> MpRun:
    """One GD run at ``dps`` digits (a few µs per coordinate-step; keep ``max_steps`` modest). ``tol`` on ``|r|``
    defaults to 1e-30·y (relative to y, like :func:`~biasaudit.numerics.eos_gd.default_tol`).

    The outcome classes are those of :func:`~biasaudit.numerics.eos_gd.gd_sweep`, with the same thresholds.

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
    loss_factor : float
        c in :math:`L = c r^2`, > 0 (default 1/2).
    max_steps : int
        The step limit (see :func:`~biasaudit.numerics.eos_gd.bounded_steps`).
    tol : float, optional
        The convergence threshold on ``|r|``.
    bound : float, optional
        The divergence threshold on ``|r|`` (default :func:`~biasaudit.numerics.eos_gd.default_bound`).
    dps : int
        The working precision in decimal digits, >= 16 (default 60).

    Returns
    -------
    MpRun
        The outcome, the final weights and the last residuals, in mpmath.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.theory.eos_model.eos_problem`, ``eta``, ``tol`` or ``bound``
        is <= 0, ``max_steps`` breaks :func:`~biasaudit.numerics.eos_gd.bounded_steps`, or ``dps`` < 16.

    Examples
    --------
    >>> run = gd_run_mpmath([1, 2], 1, [0.1, 0.1], 0.1, max_steps=200, dps=30)
    >>> run.outcome == CONVERGED, run.steps, abs(float(run.r_tail[-1])) < 1e-30
    (True, 54, True)
    """
    p = eos_problem(x, y, w0, loss_factor=loss_factor)
    eta = positive_scalar("eta", eta)
    max_steps = bounded_steps("max_steps", max_steps, 1, p.d)
    tol = 1e-30 * p.y if tol is None else positive_scalar("tol", tol)
    dps = positive_int("dps", dps, minimum=16)
    bound = default_bound(p.y, p.r0) if bound is None else positive_scalar("bound", bound)
    with mpmath.workdps(dps):
        xs = [mpmath.mpf(float(v)) for v in p.x]
        w = [mpmath.mpf(float(v)) for v in p.w0]
        yv, a0 = mpmath.mpf(p.y), 4 * mpmath.mpf(p.c) * mpmath.mpf(eta)
        tail: list = []
        outcome, k = None, 0
        half, quart = chaos_windows(max_steps)
        env = [mpmath.mpf(0)] * 4  # max(0, r), max(0, -r) over [half, quart), then over [quart, max_steps]
        while True:
            r = mpmath.fsum(xi * wi * wi for xi, wi in zip(xs, w)) - yv
            if k >= half:
                j = 0 if k < quart else 2
                env[j], env[j + 1] = max(env[j], r), max(env[j + 1], -r)
            tail = (tail + [r])[-4:]
            if not mpmath.isfinite(r) or abs(r) > bound:
                outcome = DIVERGED
                break
            if abs(r) < tol:
                outcome = CONVERGED
                break
            if k == max_steps:
                break
            a = a0 * r
            w = [wi * (1 - a * xi) for xi, wi in zip(xs, w)]
            k += 1
        if outcome is None:
            chaotic = stationary_oscillation.py_func(*env, max_steps, MIN_CHAOS_STEPS, ENVELOPE_RTOL)
            outcome = CHAOTIC if chaotic else UNSETTLED
            if len(tail) == 4:
                r0, r1, r2, r3 = tail
                if (abs(r0 - r2) <= P2_RTOL * abs(r0) and abs(r1 - r3) <= P2_RTOL * abs(r1)
                        and r0 * r1 < 0 and r2 * r3 < 0):
                    outcome = PERIOD2
        return MpRun(eta, outcome, k, tuple(w), tuple(tail), dps)
