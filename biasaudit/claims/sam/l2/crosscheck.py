r"""Implementation cross-checks of the l2-SAM heatmaps and certificates at L = 2:

* ``sam.l2.heatmap_rk4_matches_reference``: the numba RK4 heatmap kernel (:func:`rk4_heatmap`) against its
  plain-numpy reference (:func:`rk4_heatmap_reference`): j†, loss, ln S and status;
* ``sam.l2.classify_matches_reference``: the numba certificate classifier (:func:`classify_l2_trajectory`) against
  its plain reference: which certificate fires, when, and A there;
* ``sam.l2.heatmap_methods_agree``: the heatmap's τ methods compute one flow: the RK4 on w, the adaptive and the
  fixed-step integration of the exact reduction A(τ) agree on ln S and the loss, and at c = 0 the RK4 is gradient
  flow, ln w_j = ln α_j + μ_j τ (the ``gd`` method's closed form).
"""

from __future__ import annotations

import numpy as np

from biasaudit.claims.crosscheck import crosscheck_claim, precision_tolerance
from biasaudit.claims.sam._common import PAPER, _mu_domain
from biasaudit.domain import Domain, Fixed, Integer, Real, Vector

__all__ = ["CLAIMS"]

_N_ALPHA, _N_OUT, _STRIDE = 5, 11, 25  # a small grid: 5 alpha from 0.05 c to 2 c, 11 outputs 25 RK4 steps apart


def _grid(p, stride=_STRIDE):
    from biasaudit.theory.sam_l2 import c_L

    mu = np.asarray(p["mu"], dtype=float)
    c = c_L(p["rho"], 2, "joint")
    alphas = np.repeat(c * np.geomspace(0.05, 2.0, _N_ALPHA)[:, None], mu.size, axis=1)
    dt = p["tau_end"] / ((_N_OUT - 1) * stride)
    return np.ascontiguousarray(alphas), mu, c, dt


def _heatmap_record(out):
    jd, loss, logS, status = out
    return np.concatenate([np.ravel(jd), np.ravel(loss), np.ravel(logS), np.ravel(status)])


def _rk4_kernel(p):
    from biasaudit.numerics.heatmap_rk4 import rk4_heatmap

    alphas, mu, c, dt = _grid(p)
    return _heatmap_record(rk4_heatmap(alphas, mu, c, dt, _STRIDE, _N_OUT))


def _rk4_reference(p):
    from biasaudit.numerics.heatmap_rk4 import rk4_heatmap_reference

    alphas, mu, c, dt = _grid(p)
    return _heatmap_record(rk4_heatmap_reference(alphas, mu, c, dt, _STRIDE, _N_OUT))


_HEATMAP_DOMAIN = Domain({"d": Integer(2, 4), "mu": _mu_domain(), "rho": Real(0.05, 0.5, log=True),
                          "tau_end": Real(2.0, 20.0)})

HEATMAP_RK4 = crosscheck_claim(
    id="sam.l2.heatmap_rk4_matches_reference", paper=PAPER,
    title="implementation cross-check: the numba RK4 heatmap kernel equals its plain-numpy reference (j†, loss, "
          "ln S and the certificate status on a 5 x 11 grid)",
    kernel="numerics.heatmap_rk4.rk4_heatmap", reference="numerics.heatmap_rk4.rk4_heatmap_reference",
    run_kernel=_rk4_kernel, run_reference=_rk4_reference, floor=0.1,
    tolerance=precision_tolerance("heatmap_kernel_vs_numpy", 1e-13, "worst gap 8.2e-15 measured (j† and the status "
                                  "exactly equal)"),
    domain=_HEATMAP_DOMAIN,
    notes="The heatmap figures and `biasaudit regimes` read the numba kernel (fast reciprocal square root, "
          "renormalised blocks); this claim vouches that it steps the reference's RK4.",
)


def _classify_args(p):
    from biasaudit.theory.sam_l2 import c_L

    mu = np.asarray(p["mu"], dtype=float)
    return mu, p["alpha_over_c"] * c_L(p["rho"], 2, "joint"), c_L(p["rho"], 2, "joint")


def _classification(result):
    return np.array([result.code, result.tau, result.A])


def _classify_kernel(p):
    from biasaudit.numerics.l2_reduction import classify_l2_trajectory

    mu, alpha, c = _classify_args(p)
    return _classification(classify_l2_trajectory(mu, alpha, c, dt=0.01 / mu[-1], tau_max=p["tau_max"]))


def _classify_reference(p):
    from biasaudit.numerics.l2_reduction import classify_l2_trajectory_reference

    mu, alpha, c = _classify_args(p)
    return _classification(classify_l2_trajectory_reference(mu, alpha, c, dt=0.01 / mu[-1], tau_max=p["tau_max"]))


CLASSIFY = crosscheck_claim(
    id="sam.l2.classify_matches_reference", paper=PAPER,
    title="implementation cross-check: the numba collapse/escape classifier equals its plain reference (the "
          "certificate that fires, its time and A there)",
    kernel="numerics.l2_reduction.classify_l2_trajectory",
    reference="numerics.l2_reduction.classify_l2_trajectory_reference",
    run_kernel=_classify_kernel, run_reference=_classify_reference, floor=0.1,
    tolerance=precision_tolerance("classifier_vs_numpy", 1e-13, "worst gap 1.0e-15 measured (the certificate "
                                  "exactly equal)"),
    domain=Domain({"d": Integer(2, 4), "mu": _mu_domain(), "rho": Real(0.05, 0.5, log=True),
                   "alpha_over_c": Real(0.05, 3.0, log=True), "tau_max": Real(5.0, 30.0)}),
    notes="sam.l2.certificates and the alpha_c bisections read the numba classifier.",
)


_METHOD_STRIDE = 100  # RK4 steps per output in the methods' comparison (dt <= 0.02 / mu_d)


def _tau_grid(p):
    return np.linspace(0.0, p["tau_end"], _N_OUT)


def _after_start(*arrays):
    """Each (n_alpha, n_out) array from its second output on, flattened: at tau = 0 an alpha already certified to
    collapse is recorded as collapsed by the RK4 and the adaptive reduction, and by its initial state by the
    fixed-step reduction (a convention of the record, not of the flow)."""
    return np.concatenate([np.asarray(a)[:, 1:].ravel() for a in arrays])


def _sequences(heatmap):
    """Each alpha row's j† sequence (:meth:`Heatmap.sequences`), rows ended by 0."""
    return np.array([j for row in heatmap.sequences() for j in row + [0]], dtype=float)


def _methods_prediction(p):
    """ln S, the loss and j† of the adaptive reduction at c (twice: once for each other method), ln S and the loss of
    gradient flow's closed form (c = 0), and the reduction's j† sequences (twice)."""
    from biasaudit.numerics.heatmap import dominant_index_heatmap

    alphas, mu, _, _ = _grid(p)
    times = _tau_grid(p)
    red = dominant_index_heatmap(mu, p["rho"], alphas, times, method="reduction")
    gd = dominant_index_heatmap(mu, p["rho"], alphas, times, method="gd")
    return np.concatenate([_after_start(red.log_S, red.loss, red.j_dagger, red.log_S, red.loss, red.j_dagger,
                                        gd.log_S, gd.loss), _sequences(red), _sequences(red)])


def _methods_observation(p):
    """The same from the RK4 on w and the fixed-step reduction at c, and the RK4 on w at c = 0."""
    from biasaudit.numerics.heatmap import dominant_index_heatmap
    from biasaudit.numerics.heatmap_rk4 import rk4_heatmap

    alphas, mu, _, dt = _grid(p, _METHOD_STRIDE)
    times = _tau_grid(p)
    rk4 = dominant_index_heatmap(mu, p["rho"], alphas, times, method="rk4", steps_per_output=_METHOD_STRIDE)
    fixed = dominant_index_heatmap(mu, p["rho"], alphas, times, method="reduction-fixed",
                                   steps_per_output=_METHOD_STRIDE)
    _, loss0, logS0, _ = rk4_heatmap(alphas, mu, 0.0, dt, _METHOD_STRIDE, _N_OUT)
    return np.concatenate([_after_start(rk4.log_S, rk4.loss, rk4.j_dagger, fixed.log_S, fixed.loss,
                                        fixed.j_dagger, logS0, loss0), _sequences(rk4), _sequences(fixed)])


HEATMAP_METHODS = crosscheck_claim(
    id="sam.l2.heatmap_methods_agree", paper=PAPER,
    title="implementation cross-check: the heatmap's τ methods agree: RK4 on w, the adaptive and the fixed-step "
          "reduction A(τ) give one ln S, loss, j† and j† sequence, and at c = 0 the RK4 is gradient flow's closed "
          "form",
    kernel="numerics.heatmap.dominant_index_heatmap (reduction; gd at c = 0)",
    reference="numerics.heatmap.dominant_index_heatmap (rk4, reduction-fixed; rk4 at c = 0)",
    run_kernel=_methods_prediction, run_reference=_methods_observation, floor=1.0,
    tolerance=precision_tolerance("methods_discretisation", 1e-7, "RK4 at 100 steps per output: worst gap 1.1e-8 "
                                  "measured"),
    domain=Domain({"d": Integer(2, 4), "mu": _mu_domain(), "rho": Real(0.05, 0.5, log=True),
                   "tau_end": Real(2.0, 10.0)}),
    notes="The reduction integrates the exact one-dimensional A(τ) of the L = 2 flow (sam.l2.log_linear_reduction), "
          "the RK4 the d-dimensional flow itself: theory says they are one trajectory, so ln S must agree to the "
          "integrators' error; at c = 0 the flow is gradient flow, whose closed form is the gd method.",
)

def _reduction_args(p):
    from biasaudit.theory.sam_l2 import c_L

    c = c_L(p["rho"], 2, "joint")
    mu = np.asarray(p["mu"], dtype=float)
    return mu, p["alpha_over_c"] * c, c, np.array([0.0, 0.25, 0.5, 1.0]) * p["tau_end"]


def _reduction_kernel(p):
    from biasaudit.numerics.l2_reduction import l2_reduction_trajectory

    mu, alpha, c, taus = _reduction_args(p)
    return l2_reduction_trajectory(mu, alpha, c, taus).A[1:]


def _reduction_reference(p):
    from biasaudit.numerics.sam_mpmath import mp_A_at

    mu, alpha, c, taus = _reduction_args(p)
    return [float(A) for A in mp_A_at(mu, alpha, c, taus[1:], dps=25)]


REDUCTION_MPMATH = crosscheck_claim(
    id="sam.l2.reduction_matches_mpmath", paper=PAPER,
    title="implementation cross-check: the numba integration of the exact reduction A(τ) equals its mpmath "
          "reference (Gragg–Bulirsch–Stoer extrapolation at 25 digits)",
    kernel="numerics.l2_reduction.l2_reduction_trajectory", reference="numerics.sam_mpmath.mp_A_at",
    run_kernel=_reduction_kernel, run_reference=_reduction_reference, floor=1e-3,
    tolerance=precision_tolerance("reduction_vs_mpmath", 1e-12, "the default adaptive step (rtol 1e-12) against "
                                  "25 digits: worst gap 5.9e-14 measured"),
    domain=Domain({"d": Integer(2, 4), "mu": _mu_domain(), "rho": Real(0.05, 0.5, log=True),
                   "alpha_over_c": Real(0.8, 3.0), "tau_end": Real(0.5, 3.0)}),
    notes="A(τ) is what every l2-SAM claim at L = 2 reads (ln w_j = ln α_j + μ_j τ − c μ_j² A); alpha from 0.8 c up, "
          "where no trajectory collapses (A stays finite).",
)


_ALPHA_C_REL_TOL = 1e-7  # both bisections stop at this relative bracket


def _alpha_c_kernel(p):
    from biasaudit.numerics.l2_boundaries import alpha_collapse
    from biasaudit.theory.sam_l2 import c_L

    return [alpha_collapse(np.asarray(p["mu"], dtype=float), p["rho"], rel_tol=_ALPHA_C_REL_TOL)
            / c_L(p["rho"], 2, "joint")]


def _alpha_c_reference(p):
    from biasaudit.numerics.sam_mpmath import mp_alpha_collapse

    lo, hi = mp_alpha_collapse(np.asarray(p["mu"], dtype=float), 0.01, 1.01, rel_tol=_ALPHA_C_REL_TOL, dps=20)
    return [float((lo + hi) / 2)]


ALPHA_C_MPMATH = crosscheck_claim(
    id="sam.l2.alpha_collapse_matches_mpmath", paper=PAPER,
    title="implementation cross-check: the numba bisection for α_c/c equals the mpmath bisection (20 digits, the "
          "same certificates) to the bisections' bracket",
    kernel="numerics.l2_boundaries.alpha_collapse", reference="numerics.sam_mpmath.mp_alpha_collapse",
    run_kernel=_alpha_c_kernel, run_reference=_alpha_c_reference, floor=1e-3,
    tolerance=precision_tolerance("alpha_c_brackets", 1e-6, f"two bisections to a relative bracket of "
                                  f"{_ALPHA_C_REL_TOL:g}: worst gap 7.7e-8 measured"),
    domain=Domain({"d": Integer(2, 4), "mu": _mu_domain(), "rho": Real(0.05, 0.5, log=True)}),
    samples={"ci": 2, "thorough": 16},
    notes="alpha_c/c depends on mu only (sam.l2.alpha_collapse_scale_invariance); the mpmath bisection runs from "
          "[0.01 c, 1.01 c], where the certificates decide collapse and escape.",
)

def _switch_kernel(p):
    from biasaudit.claims.sam.l2.dynamics import SWITCH_TIMES

    return SWITCH_TIMES.predict(p)


def _switch_reference(p):
    from biasaudit.claims.sam.l2._common import _alpha_c, _c
    from biasaudit.numerics.sam_mpmath import mp_switch_times

    guesses = np.asarray(_switch_kernel(p), dtype=float)  # the secant starts at the float64 roots
    if np.any(np.isnan(guesses)):
        return guesses  # a switch the float64 prediction does not find is compared as missing
    mu = np.asarray(p["mu"], dtype=float)
    roots = mp_switch_times(mu, _alpha_c(p) * (1 + p["delta"]), _c(p), list(guesses), dps=20)
    return [float(r) for r in roots]


SWITCH_MPMATH = crosscheck_claim(
    id="sam.l2.switch_times_matches_mpmath", paper=PAPER,
    title="implementation cross-check: the switch times predicted in float64 (the reduction's A on a grid, a "
          "spline and Brent's method) equal the roots of τ = c(μ_j + μ_{j+1})A(τ) with A integrated in mpmath",
    kernel="the prediction of sam.l2.switch_times (numerics.l2_reduction, scipy)",
    reference="numerics.sam_mpmath.mp_switch_times",
    run_kernel=_switch_kernel, run_reference=_switch_reference, floor=1.0,
    tolerance=precision_tolerance("switch_times_vs_mpmath", 1e-10, "the spline of A on a 20001-point grid against "
                                  "20 digits: worst gap 4.7e-12 measured"),
    domain=Domain({"d": Integer(2, 3), "mu": Vector("d", 0.5, 2.0, increasing=(0.3, 1.0)),
                   "rho": Real(0.1, 2.0, log=True), "normalization": Fixed("joint"),
                   "delta": Real(1e-4, 1e-2, log=True)}),
    samples={"ci": 1, "thorough": 8},
    notes="The float64 prediction of sam.l2.switch_times against the mpmath root finder of the same equation.",
)

CLAIMS = (HEATMAP_RK4, CLASSIFY, HEATMAP_METHODS, REDUCTION_MPMATH, ALPHA_C_MPMATH, SWITCH_MPMATH)
