r"""``eos.gd.sweep_matches_reference``: the numba GD sweep (:func:`gd_sweep`) against its plain-numpy reference
(:func:`gd_sweep_numpy`): each run's outcome class, its step count, the final iterate and the last residuals, on
an η grid through the edge of stability, and the outcome classes beyond the stable range (period-2, chaotic,
diverged, unsettled runs).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.claims.crosscheck import crosscheck_claim, precision_tolerance
from biasaudit.claims.eos._common import GD_SMALL, _regimes, _w0
from biasaudit.theory.eos_model import eta_sym

__all__ = ["CLAIMS"]

_ETA_OVER_ETA_C = np.linspace(0.5, 1.3, 9)  # converged below eta_c, the edge of stability above it
# beyond the stable range (eta_max = 1/(4cy x_min)): period-2, chaotic, slowly settling and diverging runs
_ETA_OVER_STABLE_MAX = np.array([1.0, 1.05, 2.0])
_N_ETA = _ETA_OVER_ETA_C.size + _ETA_OVER_STABLE_MAX.size
_MAX_STEPS = 20_000


def _sweep_record(sweep):
    """Classes, step counts, then one row per eta: the final iterate and the last residuals."""
    return np.concatenate([sweep.outcome, sweep.steps, np.column_stack([sweep.w, sweep.r_tail]).ravel()])


def _sweep(run, p):
    reg = _regimes(p)
    etas = np.concatenate([reg.eta_c * _ETA_OVER_ETA_C, reg.eta_stable_max * _ETA_OVER_STABLE_MAX])
    return _sweep_record(run(p["x"], p["y"], _w0(p), etas, loss_factor=p["c"], max_steps=_MAX_STEPS))


def _compare(kernel, reference):
    """The outcome classes must be equal at every eta; the final iterates and last residuals of the converged runs
    are compared relative to max(|value|, 1) (the residuals sit at the convergence threshold, ~1e-13). A run that
    does not converge is compared by its class alone: a chaotic run's state, and a diverging run's last one,
    carry the roundoff of every step before. The step counts are shown, not compared: a run stops when |r| < tol,
    and near the edge |r| contracts by a factor close to 1 per step at roundoff level, so the two may stop a few
    steps apart at the same iterate."""
    from biasaudit.claims.crosscheck import relative_gap
    from biasaudit.numerics.eos_gd import OUTCOMES

    n = _N_ETA
    if kernel.shape != reference.shape:
        return float("inf"), "different record shapes"
    classes = int(np.sum(kernel[:n] != reference[:n]))
    steps = float(np.max(np.abs(kernel[n:2 * n] - reference[n:2 * n])))
    converged = reference[:n] == OUTCOMES.index("converged")
    rows_k, rows_r = kernel[2 * n:].reshape(n, -1), reference[2 * n:].reshape(n, -1)
    gap = relative_gap(rows_k[converged], rows_r[converged], 1.0)
    seen = ", ".join(sorted({OUTCOMES[int(k)] for k in reference[:n]}))
    error = float("inf") if classes else gap
    return error, (f"outcome classes differ at {classes} of {n} eta ({seen}), steps by at most {steps:g}; final "
                   f"iterates and last residuals of the {int(converged.sum())} converged runs: max gap / "
                   f"max(|reference|, 1) = {gap:.3g}")


def _kernel(p):
    from biasaudit.numerics.eos_gd import gd_sweep

    return _sweep(gd_sweep, p)


def _reference(p):
    from biasaudit.numerics.eos_gd import gd_sweep_numpy

    return _sweep(gd_sweep_numpy, p)


GD_SWEEP = crosscheck_claim(
    id="eos.gd.sweep_matches_reference", paper="eos",
    title="implementation cross-check: the numba GD sweep equals its plain-numpy reference (outcome class, final "
          "iterate and last residuals at 9 η from 0.5 η_c to 1.3 η_c; the outcome class at 1, 1.05 and 2 times "
          "the largest stable η)",
    kernel="numerics.eos_gd.gd_sweep", reference="numerics.eos_gd.gd_sweep_numpy",
    run_kernel=_kernel, run_reference=_reference, floor=1.0, compare=_compare,
    tolerance=precision_tolerance("sweep_kernel_vs_numpy", 1e-11, "worst gap 6.1e-13 measured (the last "
                                  "residuals, at the convergence threshold)"),
    domain=GD_SMALL, hypotheses=(sp.Gt(eta_sym, 0, evaluate=False),),
    notes="Every eos.gd claim that reads a sweep (the kink, the endpoints, the outcome classes) runs the numba "
          "kernel; this claim vouches that it runs the reference's GD, classification and stopping rules.",
)

CLAIMS = (GD_SWEEP,)
