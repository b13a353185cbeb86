r"""The GD closed forms: w_j = alpha_j e^{mu_j tau} at L = 2 and the blow-up times at L >= 3, against the
adaptive integrator of :mod:`biasaudit.numerics.flows`.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.sam._common import PAPER, _mu_domain
from biasaudit.domain import Domain, Integer, Real, Vector
from biasaudit.ledger import AT_10X_EXACT, AT_10X_PRECISION, Claim, Observation, Tolerance, shifted_prediction, two_sided
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


DEEP_FRACTION = (0.2, 0.9)  # the closed form is read at this fraction of the first blow-up time


def _deep_tau_end(p):
    from biasaudit.theory.sam_gd import gd_blowup_times

    return float(p["fraction"] * np.min(gd_blowup_times(p["mu"], p["alpha"], p["depth"])))


def _gd_deep_predict(p):
    from biasaudit.theory.sam_gd import gd_deep_weights

    return tuple(np.atleast_1d(gd_deep_weights(p["mu"], p["alpha"], [_deep_tau_end(p)], p["depth"])))


GD_DEEP = Claim(
    id="sam.gd.deep_closed_form", paper=PAPER, source="GD closed forms (L >= 3)",
    title="GD at L >= 3 before the first blow-up: w_j(tau) = (alpha_j^{2-L} - (L-2) mu_j tau)^{1/(2-L)}",
    hypotheses=(sp.Ge(_L, 3, evaluate=False), sp.Gt(_a, 0, evaluate=False),
                sp.Lt(SYM["tau"], SYM["tau_j"], evaluate=False)),
    statement=theory.GD_DEEP.eq(SYM["w(tau)"]),
    formulas=(theory.GD_DEEP,),
    predict=_gd_deep_predict,
    evaluate=lambda p, pred: _flow_rel_error("gd", {**p, "tau_end": _deep_tau_end(p)}, pred, p["depth"], rho=0.0),
    tolerance=Tolerance("dp54_global_deep", 1e-9, "DP5(4) at rtol = 1e-11 up to 0.9 of the first blow-up time, "
                                                 "where w grows by up to 10^(1/(L-2)) (worst 1.7e-11 measured); the "
                                                 "tolerance is the power of ten at least 10x the worst error measured "
                                                 "over the thorough profile", at_10x=AT_10X_PRECISION),
    domain=Domain({"d": Integer(1, 3), "mu": _mu_domain(), "alpha": Vector("d", 0.2, 2.0, log=True),
                   "depth": Integer(3, 6), "fraction": Real(*DEEP_FRACTION)}),
    negative_control=shifted_prediction(0.01),
    notes="tau is a fraction (0.2-0.9) of the first blow-up time min_j tau_j, so every coordinate is still finite",
)


SCORE_MOVE = 0.01  # controls move one alpha so that the top two scores mu_j alpha_j^{L-2} cross by 1 %
SCORE_GAP = 0.95  # the domain keeps the runner-up's score below 95 % of the winner's: the unmoved case is decided


def _gd_scores(p):
    return np.asarray(p["mu"], float) * np.asarray(p["alpha"], float) ** (int(p["depth"]) - 2)


def _limit_where(p):
    score = np.sort(_gd_scores(p))
    return bool(score[-2] < SCORE_GAP * score[-1])


def _limit_index_predict(p):
    from biasaudit.theory.sam_gd import gd_limit_index

    return gd_limit_index(p["mu"], p["alpha"], p["depth"])


def _limit_index_evaluate(p, predicted):
    from biasaudit.numerics.flows import integrate_reduced_flow
    from biasaudit.theory.sam_gd import gd_blowup_times

    t_first = float(np.min(gd_blowup_times(p["mu"], p["alpha"], p["depth"])))
    res = integrate_reduced_flow("gd", p["mu"], p["alpha"], 0.0, p["depth"], 1.5 * t_first, method="adaptive",
                                 rtol=1e-10, atol=1e-14, n_out=3)
    if res.status == "ok":  # a blow-up is predicted at t_first: none by 1.5 t_first refutes the statement
        return Observation(None, math.inf, "no blow-up by 1.5x the first predicted blow-up time")
    if res.status != "blowup":
        return Observation(None, math.nan, f"flow status {res.status}", decided=False)
    share = (np.abs(res.w[-1]) / np.max(np.abs(res.w[-1]))) ** p["depth"]
    share /= share.sum()
    k = int(np.argmax(share)) + 1
    return Observation(k, float(k != predicted), f"first coordinate to blow up in the adaptive flow: e_{k} at tau = "
                                                 f"{res.tau_stop:.6g} (share of beta {share[k - 1]:.6f}); predicted "
                                                 f"e_{predicted}, first blow-up tau = {t_first:.6g}")


def _cross_scores(p, predicted, signed_size):
    """Move one alpha so the runner-up m's score crosses the winner k's by 1 %: '+' raises alpha_m to score_m =
    1.01 score_k, '-' lowers alpha_k to score_k = 0.99 score_m. The prediction (e_k) is kept."""
    score, L = _gd_scores(p), int(p["depth"])
    order = np.argsort(score)
    k, m = int(order[-1]), int(order[-2])
    moved, target = (m, score[k] * (1 + signed_size)) if signed_size > 0 else (k, score[m] * (1 + signed_size))
    alpha = np.asarray(p["alpha"], float).copy()
    alpha[moved] = (target / float(p["mu"][moved])) ** (1.0 / (L - 2))
    return {**p, "alpha": tuple(alpha.tolist())}, predicted


GD_LIMIT_INDEX = Claim(
    id="sam.gd.limit_index", paper=PAPER, source="GD closed forms (L >= 3)",
    title="GD at L >= 3 tends to e_k, k = argmax_j mu_j alpha_j^{L-2}: the coordinate with the first blow-up time",
    hypotheses=(sp.Ge(_L, 3, evaluate=False), sp.Gt(_a, 0, evaluate=False)),
    statement=sp.Eq(SYM["k"], SYM["argmin"](theory.GD_BLOWUP_TIME.expr)),
    formulas=(theory.GD_BLOWUP_TIME,),
    predict=_limit_index_predict, evaluate=_limit_index_evaluate,
    tolerance=Tolerance("exact_classification", 0.0, "the blowing-up index must match", at_10x=AT_10X_EXACT),
    domain=Domain({"d": Integer(2, 4), "mu": _mu_domain(), "alpha": Vector("d", 0.2, 2.0, log=True),
                   "depth": Integer(3, 6)}, where=_limit_where),
    negative_control=two_sided("score of the runner-up vs the winner", SCORE_MOVE, _cross_scores),
    notes="negative controls: the runner-up's score mu_j alpha_j^{L-2} raised to 1.01x the winner's, or the "
          "winner's lowered to 0.99x the runner-up's (one alpha moved); the kept prediction must be refuted (the "
          "domain keeps a 5 % gap between the top two scores so that the unmoved case is decided)",
)


CLAIMS = (
    GD_L2, GD_BLOWUP, GD_DEEP, GD_LIMIT_INDEX,
)
