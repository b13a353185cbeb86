r"""The exact log-linear reduction at L = 2 (``sam.l2.log_linear_reduction``), the dominant index j†
(``sam.l2.jdagger_formula``) and the fixed points c e_k (``sam.l2.fixed_points``), against the independent full
flow, finite-difference Jacobians and the exact symbolic Jacobian.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from biasaudit.claims.sam.l2._common import PAPER, _arr, _base, _c, _flow, _reduction, _sequence
from biasaudit.domain import Domain, Integer, Vector
from biasaudit.ledger import (AT_10X_EXACT, AT_10X_PRECISION, Claim, Observation, Tolerance, broken_hypothesis,
                              shifted_prediction, two_sided)
from biasaudit.theory import sam_l2 as theory

SYM = theory.SYMBOLS  # the symbols the statements are written in

_L, _alpha, _alpha_j, _mu_j = SYM["L"], SYM["alpha"], SYM["alpha_j"], SYM["mu_j"]

__all__ = ["CLAIMS"]


# ========================================================================== log-linear reduction
def _loglin_predict(p):
    mu, c = _arr(p), _c(p)
    alpha = c * _arr(p, "alpha_over_c")
    grid = np.linspace(0.0, 12.0 / mu[0], 61)
    tr = _reduction(mu, alpha, c, grid)
    return {"tau": grid, "log_w": tr.log_w, "c": c}


def _loglin_evaluate(p, predicted):
    mu = _arr(p)
    alpha = _c(p) * _arr(p, "alpha_over_c")
    ref = _flow(mu, alpha, _c(p), predicted["tau"])
    pred = np.asarray(predicted["log_w"])
    both = np.isfinite(pred[:, 0]) & np.isfinite(ref.log_w[:, 0])
    if both.sum() < 2:
        return Observation(None, math.nan, "collapsed at once: nothing to compare", decided=False)
    err = float(np.max(np.abs(pred[both] - ref.log_w[both]) / (1.0 + np.abs(ref.log_w[both]))))
    return Observation(err, err, f"max |ln w_reduction − ln w_fullflow|/(1+|ln w|) over {both.sum()} times, "
                                  "d={mu.size}")


def _loglin_control(p, predicted, signed_size):
    # the formula with c → (1 ± 1 %) c in ln w_j = ln α_j + μ_j τ − c μ_j² A (same A)
    mu, c = _arr(p), predicted["c"]
    tau = np.asarray(predicted["tau"])
    log_w = np.asarray(predicted["log_w"])
    A = (np.log(c * _arr(p, "alpha_over_c"))[0] + mu[0] * tau - log_w[:, 0]) / (c * mu[0] ** 2)
    wrong = np.log(c * _arr(p, "alpha_over_c")) + mu * tau[:, None] - (1 + signed_size) * c * mu**2 * A[:, None]
    return p, {"tau": tau, "log_w": wrong, "c": c}


LOG_LINEAR = Claim(
    id="sam.l2.log_linear_reduction", paper=PAPER, source="C (exact log-linear reduction)",
    title="ln(w_j/alpha_j) = mu_j tau − c mu_j^2 A(tau), A' = 1/S: the whole L=2 trajectory is one scalar ODE",
    hypotheses=(sp.Eq(_L, 2), sp.Gt(_mu_j, 0, evaluate=False), sp.Gt(_alpha_j, 0, evaluate=False),
                sp.Eq(SYM["A'"], theory.FORMULAS["A_prime"])),
    statement=sp.Eq(sp.log(SYM["w_j"] / _alpha_j), theory.LOG_LINEAR.expr - sp.log(_alpha_j)),
    no_closed_form="A(tau) = ∫ dtau/S has no closed form: the reduction integrates the scalar ODE A' = 1/S (RK4, "
                   "numerics.l2_reduction) and reads ln w_j off it",
    predict=_loglin_predict, evaluate=_loglin_evaluate,
    tolerance=Tolerance("rk4_vs_dop853", 1e-9,
                        "RK4 (dt = 2e-3/mu_d, global error ~1e-12) against DOP853 at rtol 1e-12 on the full "
                        "flow, amplified by at most ~1e3 along trajectories that pass near the saddle c e_1 (worst "
                        "3.4e-11 "
                        "measured); the tolerance is the power of ten at least 10x the worst error measured over the "
                        "thorough profile",
                        at_10x=AT_10X_PRECISION),
    domain=Domain(_base(alpha_over_c=Vector("d", 0.3, 3.0, log=True)),
                  where=lambda p: float(np.linalg.norm(_arr(p) * _arr(p, "alpha_over_c"))) > 1.05 * p["mu"][0],
                  description="S(0) > 1.05 c mu_1: not collapsed at tau = 0"),
    negative_control=two_sided("c in the formula", 0.01, _loglin_control),
)


# ========================================================================== j† formula
def _jd_predict(p, c_factor=1.0):
    """j† on a τ grid from the formula; ``c_factor`` ≠ 1 only in the negative controls (c moved in the score,
    A from the true flow)."""
    from biasaudit.theory.sam_l2 import jdagger_general

    mu, c = _arr(p), _c(p)
    alpha = c * _arr(p, "alpha_over_c")
    grid = np.linspace(0.0, 15.0 / mu[0], 3001)[1:]  # dense: a 1 % move of a switch time spans grid points
    tr = _reduction(mu, alpha, c, grid)
    live = np.isfinite(tr.A)
    jd = np.zeros(grid.size, dtype=int)
    jd[live] = jdagger_general(mu, alpha, c * c_factor, grid[live], tr.A[live])
    return {"tau": grid, "j_dagger": jd}


def _jd_evaluate(p, predicted):
    mu, c = _arr(p), _c(p)
    alpha = c * _arr(p, "alpha_over_c")
    ref = _flow(mu, alpha, c, predicted["tau"])
    live = np.isfinite(ref.log_w[:, 0])
    srt = np.sort(ref.log_w[live], axis=1)
    clear = srt[:, -1] - srt[:, -2] > 1e-7  # ignore exact near-ties (switch instants)
    obs = np.argmax(ref.log_w[live], axis=1) + 1
    pred = np.asarray(predicted["j_dagger"])[live]
    if clear.sum() == 0:
        return Observation(None, math.nan, "no decided time", decided=False)
    wrong = float(np.mean(obs[clear] != pred[clear]))
    return Observation(_sequence(obs), wrong, f"fraction of times where j† differs (full flow: {_sequence(obs)})")


JDAGGER = Claim(
    id="sam.l2.jdagger_formula", paper=PAPER, source="C (dominant index)",
    title="j†(tau) = argmax_j [ln alpha_j + mu_j tau − c mu_j^2 A] (uniform alpha: argmax mu_j − c mu_j^2/H)",
    hypotheses=(sp.Eq(_L, 2), sp.Gt(_alpha_j, 0, evaluate=False)),
    statement=sp.Eq(SYM["j_dagger"], SYM["argmax"](theory.LOG_LINEAR.expr)),
    formulas=(theory.LOG_LINEAR,),
    predict=_jd_predict, evaluate=_jd_evaluate,
    tolerance=Tolerance("exact_index", 0.0, "an index either matches or not (near-ties < 1e-7 excluded)",
                        at_10x=AT_10X_EXACT),
    domain=Domain(_base(alpha_over_c=Vector("d", 0.5, 2.0, log=True))),
    negative_control=(*two_sided("c in the score", 0.01, lambda p, pred, s: (p, _jd_predict(p, c_factor=1 + s))),
                      # hypothesis broken: GD's index (ρ = 0 ⇒ j† = argmax ln α_j + μ_j τ)
                      broken_hypothesis("rho > 0", lambda p, pred: (p, {"tau": pred["tau"], "j_dagger": np.argmax(
                          np.log(_arr(p, "alpha_over_c")) + _arr(p) * np.asarray(pred["tau"])[:, None], axis=1) + 1}))),
    samples={"ci": 6, "thorough": 48},
)


# ========================================================================== fixed points
def _fp_predict(p):
    from biasaudit.theory.sam_l2 import jacobian_spectrum

    return np.sort(jacobian_spectrum(_arr(p), int(p["k"]) - 1))


def _fp_evaluate(p, predicted):
    from biasaudit.theory.sam_l2 import rescaled_field_l2

    mu, c = _arr(p), _c(p)
    k = int(p["k"]) - 1
    w0 = np.zeros(mu.size)
    w0[k] = c
    h = 1e-6 * c  # central differences: error h² f''' ~ 1e-12, roundoff eps·|f|/h ~ 1e-10
    J = np.empty((mu.size, mu.size))
    for i in range(mu.size):
        e = np.zeros(mu.size)
        e[i] = h
        J[:, i] = (rescaled_field_l2(w0 + e, mu, c) - rescaled_field_l2(w0 - e, mu, c)) / (2 * h)
    eig = np.sort(np.linalg.eigvals(J).real)
    resid = float(np.max(np.abs(rescaled_field_l2(w0, mu, c))))
    err_fd = float(np.max(np.abs(eig - np.asarray(predicted)) / np.max(np.abs(mu)))) + resid / (c * mu[-1])
    # second observation: the eigenvalues of sympy's exact Jacobian of the field at c e_k
    exact = np.sort(np.linalg.eigvals(_exact_jacobian(mu.size, k)(*mu)).real)
    err_exact = float(np.max(np.abs(exact - np.asarray(predicted)) / np.max(np.abs(mu))))
    return Observation(eig, max(err_fd, err_exact), f"|field(c e_k)| = {resid:.1e}; FD eigenvalues vs predicted: "
                                                    f"{err_fd:.1e}; eigenvalues of the exact Jacobian vs predicted: "
                                                    f"{err_exact:.1e}")


@functools.lru_cache(maxsize=32)
def _exact_jacobian(d: int, k: int):
    """The exact Jacobian of the L = 2 field at c e_k (:func:`biasaudit.theory.sam_l2.jacobian_at_fixed_point`,
    sympy), as a function of mu_1..mu_d returning a float array."""
    from biasaudit.theory.sam_l2 import jacobian_at_fixed_point

    J, mus = jacobian_at_fixed_point(d, k)
    f = sp.lambdify(mus, J, "numpy")
    return lambda *mu: np.asarray(f(*mu), dtype=float)


FIXED_POINTS = Claim(
    id="sam.l2.fixed_points", paper=PAPER, source="C (fixed points)",
    title="c e_k are fixed points with Jacobian eigenvalues {mu_k} ∪ {mu_j(1 − mu_j/mu_k)}",
    hypotheses=(sp.Eq(_L, 2),),
    statement=sp.And(sp.Eq(SYM["lambda_k"], theory.FORMULAS["jacobian_own"]),
                     theory.JACOBIAN_OTHER.eq(SYM["lambda_j"])),
    formulas=(theory.JACOBIAN_OTHER,),
    predict=_fp_predict, evaluate=_fp_evaluate,
    tolerance=Tolerance("central_difference", 1e-8,
                        "central differences at h = 1e-6 c: truncation ~h², roundoff ~eps/h·|f| ≈ 1e-10 (worst "
                        "1.8e-10 measured); the tolerance is the power of ten at least 10x the worst error measured "
                        "over the thorough profile",
                        at_10x=AT_10X_PRECISION),
    domain=Domain(_base(k=Integer(1, 5)), where=lambda p: p["k"] <= p["d"]),
    negative_control=shifted_prediction(0.01),
)


CLAIMS = (
    LOG_LINEAR, JDAGGER, FIXED_POINTS,
)
