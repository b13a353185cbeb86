r"""The GD closed forms: w_j = alpha_j e^{mu_j tau} at L = 2 and the blow-up times at L >= 3, against the
adaptive integrator of :mod:`biasaudit.numerics.flows`.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.sam._common import PAPER, _mu_domain
from biasaudit.domain import Domain, Integer, Real, Vector
from biasaudit.ledger import AT_10X_PRECISION, Claim, Observation, Tolerance, shifted_prediction
from biasaudit.theory import sam_gd as theory

SYM = theory.SYMBOLS  # the symbols the statements are written in

_a, _L = SYM["alpha"], SYM["L"]

__all__ = ["CLAIMS"]


# ============================================================================================ GD
def _gd_l2_predict(p):
    from biasaudit.theory.sam_gd import gd_l2_weights

    return tuple(np.atleast_1d(gd_l2_weights(p["mu"], p["alpha"], [p["tau_end"]])))


def _flow_rel_error(algorithm, p, predicted, depth, rho):
    from biasaudit.numerics.flows import integrate_reduced_flow

    res = integrate_reduced_flow(algorithm, p["mu"], p["alpha"], rho, depth, p["tau_end"],
                                 method="adaptive", rtol=1e-11, atol=1e-14, n_out=2)
    if res.status not in ("ok", "collapsed"):
        return Observation(None, math.nan, f"flow status {res.status}", decided=False)
    pred = np.asarray(predicted, dtype=float)
    w = res.w[-1]
    err = float(np.max(np.abs(w - pred) / np.abs(pred)))
    return Observation(tuple(w), err, f"adaptive DP5(4) flow vs closed form at tau = {res.tau[-1]:.4g}: "
                                      f"max rel. error {err:.2e} ({res.n_steps} steps)")


def _gd_l2_evaluate(p, predicted):
    obs = _flow_rel_error("gd", p, predicted, 2, rho=0.0)
    if obs.decided:
        beta = np.asarray(obs.observed) ** 2
        obs = Observation(obs.observed, obs.error, obs.detail + f"; beta_d/||beta||_1 = {beta[-1] / beta.sum():.6f}")
    return obs


GD_L2 = Claim(
    id="sam.gd.l2_closed_form", paper=PAPER, source="GD closed forms (L = 2)",
    title="GD at L = 2: w_j(tau) = alpha_j e^{mu_j tau}, so beta/||beta|| -> e_d",
    hypotheses=(sp.Eq(_L, 2), sp.Gt(_a, 0, evaluate=False)),
    statement=theory.GD_L2.eq(SYM["w(tau)"]),
    formulas=(theory.GD_L2,),
    predict=_gd_l2_predict, evaluate=_gd_l2_evaluate,
    tolerance=Tolerance("dp54_global", 1e-9, "DP5(4) at rtol = 1e-11 over <= 25 e-folds: global relative "
                                            "error ~ steps * rtol (worst 5.9e-11 measured); the tolerance is the "
                                            "power of ten at least 10x the worst error measured over the thorough "
                                            "profile", at_10x=AT_10X_PRECISION),
    domain=Domain({"d": Integer(1, 4), "mu": _mu_domain(), "alpha": Vector("d", 0.05, 2.0, log=True),
                   "tau_end": Real(0.5, 5.0)}),
    negative_control=shifted_prediction(0.01),
)


def _gd_blowup_predict(p):
    from biasaudit.theory.sam_gd import gd_blowup_times

    return tuple(gd_blowup_times(p["mu"], p["alpha"], p["depth"]))


def _blowup_evaluate(algorithm, p, predicted, rho):
    from biasaudit.numerics.flows import integrate_reduced_flow

    pred = np.asarray(predicted, dtype=float)
    stops = []
    for j, t_pred in enumerate(pred):
        if not math.isfinite(t_pred):
            stops.append(math.inf)
            continue
        res = integrate_reduced_flow(algorithm, [p["mu"][j]], [p["alpha"][j]], rho, p["depth"], 2.0 * t_pred,
                                     method="adaptive", rtol=1e-11, atol=1e-14, n_out=2)
        if res.status == "ok":  # integrated past twice the predicted time without blowing up: refuted
            return Observation(None, math.inf, f"coordinate {j + 1}: no blow-up before 2x the predicted time")
        if res.status != "blowup":
            return Observation(None, math.nan, f"coordinate {j + 1}: flow status {res.status}", decided=False)
        stops.append(res.tau_stop)
    stops = np.array(stops)
    fin = np.isfinite(pred)
    err = float(np.max(np.abs(stops[fin] - pred[fin]) / pred[fin])) if fin.any() else 0.0
    return Observation(tuple(stops), err, f"tau where the adaptive flow stopped (|w| > 1e100 or step underflow) "
                                          f"vs predicted blow-up: max rel. error {err:.2e}")


GD_BLOWUP = Claim(
    id="sam.gd.blowup_time", paper=PAPER, source="GD closed forms (L >= 3)",
    title="GD at L >= 3 blows up at tau_j = alpha_j^{2-L} / ((L-2) mu_j)",
    hypotheses=(sp.Ge(_L, 3, evaluate=False), sp.Gt(_a, 0, evaluate=False)),
    statement=theory.GD_BLOWUP_TIME.eq(SYM["tau_j"]),
    formulas=(theory.GD_BLOWUP_TIME,),
    predict=_gd_blowup_predict, evaluate=lambda p, pred: _blowup_evaluate("gd", p, pred, 0.0),
    tolerance=Tolerance("blowup_stop", 1e-10, "the integrator stops when |w| > 1e100 or its step underflows "
                                             "(16 ulp of tau), i.e. within ~1e-12 relative of the singularity; "
                                             "rtol = 1e-11 accumulates (worst 2.2e-12 measured); the tolerance is "
                                             "the power of ten at least 10x the worst error measured over the "
                                             "thorough profile", at_10x=AT_10X_PRECISION),
    domain=Domain({"d": Integer(1, 3), "mu": _mu_domain(), "alpha": Vector("d", 0.2, 2.0, log=True),
                   "depth": Integer(3, 6)}),
    negative_control=shifted_prediction(0.01),
)


CLAIMS = (
    GD_L2, GD_BLOWUP,
)
