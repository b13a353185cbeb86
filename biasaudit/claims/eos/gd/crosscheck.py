r"""``eos.gd.sweep_matches_reference``: the numba GD sweep (:func:`gd_sweep`) against its plain-numpy reference
(:func:`gd_sweep_numpy`): each run's outcome class, its step count, the final iterate and the last residuals, on
an η grid through the edge of stability.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.claims.crosscheck import crosscheck_claim, precision_tolerance
from biasaudit.claims.eos._common import GD_SMALL, _regimes, _w0
from biasaudit.theory.eos_model import eta_sym

__all__ = ["CLAIMS"]

_ETA_OVER_ETA_C = np.linspace(0.5, 1.3, 9)  # converged below eta_c, the edge of stability above it
_MAX_STEPS = 20_000


def _sweep_record(sweep):
    return np.concatenate([sweep.outcome, sweep.steps, sweep.w.ravel(), sweep.r_tail.ravel()])


def _sweep(run, p):
    etas = _regimes(p).eta_c * _ETA_OVER_ETA_C
    return _sweep_record(run(p["x"], p["y"], _w0(p), etas, loss_factor=p["c"], max_steps=_MAX_STEPS))


def _compare(kernel, reference):
    """The outcome classes must be equal; the final iterates and last residuals are compared relative to
    max(|value|, 1) (the residuals sit at the convergence threshold, ~1e-13). The step counts are shown, not
    compared: a run stops when |r| < tol, and near the edge |r| contracts by a factor close to 1 per step at
    roundoff level, so the two may stop a few steps apart at the same iterate."""
    from biasaudit.claims.crosscheck import relative_gap

    n = _ETA_OVER_ETA_C.size
    if kernel.shape != reference.shape:
        return float("inf"), "different record shapes"
    classes = int(np.sum(kernel[:n] != reference[:n]))
    steps = float(np.max(np.abs(kernel[n:2 * n] - reference[n:2 * n])))
    gap = relative_gap(kernel[2 * n:], reference[2 * n:], 1.0)
    error = float("inf") if classes else gap
    return error, (f"outcome classes differ at {classes} of {n} eta, steps by at most {steps:g}; final iterates and "
                   f"last residuals: max gap / max(|reference|, 1) = {gap:.3g}")


def _kernel(p):
    from biasaudit.numerics.eos_gd import gd_sweep

    return _sweep(gd_sweep, p)


def _reference(p):
    from biasaudit.numerics.eos_gd import gd_sweep_numpy

    return _sweep(gd_sweep_numpy, p)


GD_SWEEP = crosscheck_claim(
    id="eos.gd.sweep_matches_reference", paper="eos",
    title="implementation cross-check: the numba GD sweep equals its plain-numpy reference (outcome class, final "
          "iterate and last residuals at 9 η from 0.5 η_c to 1.3 η_c)",
    kernel="numerics.eos_gd.gd_sweep", reference="numerics.eos_gd.gd_sweep_numpy",
    run_kernel=_kernel, run_reference=_reference, floor=1.0, compare=_compare,
    tolerance=precision_tolerance("sweep_kernel_vs_numpy", 1e-11, "worst gap 6.1e-13 measured (the last "
                                  "residuals, at the convergence threshold)"),
    domain=GD_SMALL, hypotheses=(sp.Gt(eta_sym, 0, evaluate=False),),
    notes="Every eos.gd claim that reads a sweep (the kink, the endpoints, the outcome classes) runs the numba "
          "kernel; this claim vouches that it runs the reference's GD, classification and stopping rules.",
)

CLAIMS = (GD_SWEEP,)
