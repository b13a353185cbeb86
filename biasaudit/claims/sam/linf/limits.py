r"""l_inf-SAM's limit rules (claim B): the limit at L = 2, the winning coordinate at L >= 3 (a minor feature
can win), and the parity of L for alpha_j < rho.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.sam._common import PAPER
from biasaudit.claims.sam.linf.closed_forms import _LINF_CLASS_DOMAIN, _alpha_from_classes
from biasaudit.domain import Choice, Domain, Integer, Real
from biasaudit.ledger import (AT_10X_EXACT, AT_10X_PRECISION, Claim, Observation, Reference, Tolerance,
                              broken_hypothesis, one_side, shifted_prediction, two_sided)
from biasaudit.theory import sam_linf as theory

SYM = theory.SYMBOLS  # the symbols the statements are written in

_a, _L, _mu, _r = SYM["alpha"], SYM["L"], SYM["mu"], SYM["rho"]

__all__ = ["CLAIMS"]


# ============================================================================================ l_inf limit rules
def _limit_value(limit):
    """The limit as ``biasaudit regimes sam`` reports it (:meth:`LinfLimit.to_json`)."""
    shown = limit.to_json()
    return {"kind": shown["limit"], "index": shown["index"],
            "beta_limit": None if shown["beta_limit"] is None else tuple(shown["beta_limit"])}


def _limit_predict(p):
    from biasaudit.theory.sam_linf import linf_sam_limit

    return _limit_value(linf_sam_limit(p["mu"], p["alpha"], p["rho"], p["depth"]))


def _classify_flow(p, tau_end):
    """Observed limit from the adaptive flow: basis (blow-up or share -> 1), fixed (converged), zero."""
    from biasaudit.numerics.flows import integrate_reduced_flow

    res = integrate_reduced_flow("linf", p["mu"], p["alpha"], p["rho"], p["depth"], tau_end, method="adaptive",
                                 rtol=1e-10, atol=1e-14, n_out=3)
    w = res.w[-1]
    beta = res.beta[-1] if np.max(np.abs(w)) < 1e30 else None  # w^L
    rho = float(p["rho"])
    if res.status == "collapsed" or np.all(w == 0):
        return {"kind": "zero", "index": None, "beta_limit": tuple(0.0 * w)}, res
    share = (np.abs(w) / np.max(np.abs(w))) ** p["depth"]
    share /= share.sum()
    k = int(np.argmax(share))
    if res.status == "blowup" or (np.max(np.abs(w)) > 1e6 * rho and share[k] > 1 - 1e-4):
        return {"kind": "basis", "index": k + 1, "beta_limit": None}, res
    if res.status == "ok" and np.allclose(res.w[-1], res.w[-2], rtol=1e-9, atol=1e-12 * rho):
        return {"kind": "fixed", "index": None, "beta_limit": tuple(beta)}, res
    return {"kind": "undecided", "index": None, "beta_limit": None}, res


def _limit_error(predicted, observed):
    if observed["kind"] != predicted["kind"] or observed["index"] != predicted["index"]:
        return 1.0
    if predicted["beta_limit"] is None:
        return 0.0
    a, b = np.asarray(predicted["beta_limit"]), np.asarray(observed["beta_limit"])
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300)) if np.any(a) else float(np.max(np.abs(b)))


def _limit_evaluate_l2(p, predicted):
    observed, res = _classify_flow(p, 40.0)
    if observed["kind"] == "undecided":
        return Observation(observed, math.nan, f"flow status {res.status}: limit not reached by tau = 40",
                           decided=False)
    err = _limit_error(predicted, observed)
    return Observation(observed, err, f"flow to tau = 40 ({res.status}): {observed['kind']} "
                                      f"{observed['index'] or ''}; predicted {predicted['kind']} "
                                      f"{predicted['index'] or ''}")


ALPHA_MOVE = 0.01  # controls move one alpha_j to rho (1 -/+ 1 %): across the class boundary alpha_j = rho


def _winner_below(p, predicted, signed_size):
    """'-': the winning coordinate's alpha moved to rho(1 − 1 %) (it leaves G); the prediction is kept."""
    if predicted["kind"] != "basis":
        return p, predicted  # no winner to move: this case cannot refute the control
    alpha = list(p["alpha"])
    alpha[predicted["index"] - 1] = float(p["rho"]) * (1 + signed_size)
    return {**p, "alpha": tuple(alpha)}, predicted


def _new_winner_above(p, predicted, signed_size):
    """'+': the last coordinate outside G, above the winner, moved to rho(1 + 1 %) (it joins G and wins)."""
    alpha, rho = list(p["alpha"]), float(p["rho"])
    start = predicted["index"] if predicted["kind"] == "basis" else 0
    outside = [j for j in range(start, len(alpha)) if alpha[j] <= rho]
    if not outside:
        return p, predicted
    alpha[outside[-1]] = rho * (1 + signed_size)
    return {**p, "alpha": tuple(alpha)}, predicted


def _compare_limit(predicted, expected):
    return 0.0 if (predicted["kind"], predicted["index"]) == (expected["kind"], expected["index"]) else math.inf


LINF_LIMIT_L2 = Claim(
    id="sam.linf.limit_rule_L2", paper=PAPER, source="B (limit rule at L = 2)",
    title="l_inf-SAM at L = 2: G = {alpha_j > rho} non-empty -> e_max G; else E = {alpha_j = rho} -> rho^2 1_E; "
          "else 0",
    hypotheses=(sp.Eq(_L, 2),),
    statement=sp.Eq(SYM["beta_limit"], sp.Piecewise(
        (SYM["e_max_G"], sp.Gt(SYM["|G|"], 0)),
        (_r**2 * SYM["1_E"], sp.Gt(SYM["|E|"], 0)),
        (0, True))),
    no_closed_form="a case rule, not a formula: the limit is read off which of G = {alpha_j > rho} and "
                   "E = {alpha_j = rho} is empty (theory.sam_linf.linf_sam_limit), and observed by integrating the "
                   "flow",
    predict=_limit_predict, evaluate=_limit_evaluate_l2,
    tolerance=Tolerance("exact_classification", 1e-9, "kind and index must match; a fixed limit within 1e-9 "
                                                      "relative (the flow converges like e^{-mu tau})",
                        at_10x=AT_10X_PRECISION),
    domain=Domain({**_LINF_CLASS_DOMAIN, "d": Integer(2, 4), "depth": Choice((2,))}, derive=_alpha_from_classes),
    slack_reason=("a class and index decision (error 0 or 1); on alpha_j = rho the field vanishes exactly, so the fixed"
                  " limit rho^2 1_E is reproduced to the bit; 1e-9 only allows for the flow's e^{-mu tau} approach, "
                  "which no sampled case needs"),
    negative_control=(one_side("-", "alpha_winner across rho", ALPHA_MOVE, _winner_below),
                      one_side("+", "alpha_j (j > winner) across rho", ALPHA_MOVE, _new_winner_above)),
    compare_reference=_compare_limit,
    samples={"ci": 12, "thorough": 64},
    notes="negative controls: the winner's alpha moved 1 % below rho, or the last coordinate above it that is "
          "outside G moved 1 % above rho; each keeps the unmoved prediction, which the flow must refute",
)


def _deep_where(p):
    rho, L = float(p["rho"]), int(p["depth"])
    a, mu = np.asarray(p["alpha"]), np.asarray(p["mu"])
    if (a > rho).sum() < 2:
        return False
    from biasaudit.theory.sam_linf import linf_deep_scores

    score = np.sort(linf_deep_scores(mu, a, rho, L))
    return bool(score[-2] < 0.95 * score[-1])


def _limit_evaluate_deep(p, predicted):
    from biasaudit.theory.sam_linf import linf_blowup_times

    t_first = float(np.min(linf_blowup_times(p["mu"], p["alpha"], p["rho"], p["depth"])))
    observed, res = _classify_flow(p, 1.5 * t_first)
    if res.status == "ok":  # the rule predicts a blow-up at t_first: none by 1.5 t_first refutes it
        return Observation(observed, math.inf, "no blow-up by 1.5x the first predicted blow-up time")
    if res.status != "blowup":
        return Observation(observed, math.nan, f"flow status {res.status}", decided=False)
    err = _limit_error(predicted, observed)
    return Observation(observed, err, f"first coordinate to blow up in the adaptive flow: e_{observed['index']} "
                                      f"at tau = {res.tau_stop:.6g} (predicted e_{predicted['index']}, first "
                                      f"blow-up tau = {t_first:.6g})")


def _cross_runner_up(p, predicted, signed_size):
    """Move one alpha so the score mu_j (alpha_j − rho)^(L−2) of the runner-up m crosses the winner k's by 1 %:
    '+' raises alpha_m to score_m = 1.01 score_k, '−' lowers alpha_k to score_k = 0.99 score_m. The prediction
    (e_k) is kept."""
    from biasaudit.theory.sam_linf import linf_deep_scores

    rho, L = float(p["rho"]), int(p["depth"])
    a, mu = np.asarray(p["alpha"], float), np.asarray(p["mu"], float)
    score = linf_deep_scores(mu, a, rho, L)
    k, m = int(np.argsort(score)[-1]), int(np.argsort(score)[-2])
    if not np.isfinite(score[m]):
        return p, predicted
    moved, target = (m, score[k] * (1 + signed_size)) if signed_size > 0 else (k, score[m] * (1 + signed_size))
    a = a.copy()
    a[moved] = rho + (target / mu[moved]) ** (1.0 / (L - 2))
    return {**p, "alpha": tuple(a.tolist())}, predicted


LINF_LIMIT_DEEP = Claim(
    id="sam.linf.limit_rule_deep", paper=PAPER, source="B (L >= 3)",
    title="l_inf-SAM at L >= 3: the limit is e_k, k = argmax over {alpha_j > rho} of mu_j (alpha_j - rho)^{L-2} "
          "(a minor feature can win)",
    hypotheses=(sp.Ge(_L, 3, evaluate=False), sp.Gt(_a, _r, evaluate=False)),
    statement=sp.Eq(SYM["k"], SYM["argmax"](theory.LINF_DEEP_LOG_SCORE.expr)),
    formulas=(theory.LINF_DEEP_LOG_SCORE,),
    predict=_limit_predict, evaluate=_limit_evaluate_deep,
    tolerance=Tolerance("exact_classification", 0.0, "the blowing-up index must match", at_10x=AT_10X_EXACT),
    domain=Domain({**_LINF_CLASS_DOMAIN, "d": Integer(2, 4), "depth": Integer(3, 6)}, derive=_alpha_from_classes,
                  where=_deep_where),
    negative_control=two_sided("score of the runner-up vs the winner", ALPHA_MOVE, _cross_runner_up),
    compare_reference=_compare_limit,
    references=(Reference({"mu": (1.0, 2.0, 3.0), "alpha": (0.2, 0.14, 0.13), "rho": 0.1, "depth": 3},
                          {"kind": "basis", "index": 1, "beta_limit": None}, 0.0,
                          "worked example (derived here by the limit rule, see notes/sam-gd-linf.md): alpha = "
                          "(0.2, 0.14, 0.13), mu = (1, 2, 3), rho = 0.1 gives e_1", origin="derived"),),
    notes="negative controls: the runner-up's score raised to 1.01x the winner's, or the winner's lowered to "
          "0.99x the runner-up's (one alpha moved); the kept prediction must be refuted (the domain keeps a 5 % "
          "gap between the top two scores so the unmoved case is decided)",
)


def _parity_times(p):
    rho, a, mu, L = float(p["rho"]), p["alpha_over_rho"] * float(p["rho"]), float(p["mu"]), int(p["depth"])
    t0 = float(theory.LINF_DEEP_ZERO_HIT.subs({_mu: mu, _a: a, _r: rho, _L: L}))  # as if L were even
    return np.array([0.5 * t0, 2.0 * t0])


def _parity_predict(p, flip=False):
    from biasaudit.theory.sam_linf import linf_deep_weights

    L = int(p["depth"]) + (1 if flip else 0)
    a = p["alpha_over_rho"] * p["rho"]
    return tuple(float(linf_deep_weights([p["mu"]], [a], p["rho"], [t], L)[0]) for t in _parity_times(p))


def _parity_evaluate(p, predicted):
    from biasaudit.numerics.flows import integrate_reduced_flow

    times = _parity_times(p)
    res = integrate_reduced_flow("linf", [p["mu"]], [p["alpha_over_rho"] * p["rho"]], p["rho"], p["depth"],
                                 times[-1], method="adaptive", rtol=1e-11, atol=1e-15, n_out=5)
    if res.status not in ("ok", "collapsed"):
        return Observation(None, math.nan, f"flow status {res.status}", decided=False)
    w = res.w[[1, 4], 0]
    err = float(np.max(np.abs(w - np.asarray(predicted))) / p["rho"])
    trend = "-> 0 (slides)" if w[-1] == 0 else f"rises to {w[-1] / p['rho']:.4f} rho"
    return Observation(tuple(w), err, f"L = {p['depth']}: w(tau_0/2), w(2 tau_0) = {w[0]:.6g}, {w[1]:.6g}: "
                                      f"{trend}")


LINF_PARITY = Claim(
    id="sam.linf.parity", paper=PAPER, source="B (parity, L >= 3)",
    title="l_inf-SAM, alpha_j < rho, L >= 3: even L -> w_j hits 0 and slides; odd L -> w_j increases to rho",
    hypotheses=(sp.Ge(_L, 3, evaluate=False), sp.Lt(_a, _r, evaluate=False)),
    statement=theory.LINF_DEEP_BELOW.eq(SYM["w(tau)"]),
    formulas=(theory.LINF_DEEP_BELOW,),
    predict=_parity_predict, evaluate=_parity_evaluate,
    tolerance=Tolerance("dp54_global", 1e-10, "DP5(4) at rtol = 1e-11 on an algebraic solution (worst 1.7e-12 "
                                             "measured); the tolerance is the power of ten at least 10x the worst "
                                             "error measured over the thorough profile",
                        at_10x=AT_10X_PRECISION),
    domain=Domain({"mu": Real(0.5, 3.0), "alpha_over_rho": Real(0.1, 0.9), "rho": Real(0.1, 1.0),
                   "depth": Integer(3, 7)}),
    negative_control=(*shifted_prediction(0.01),
                      broken_hypothesis("parity of L", lambda p, pred: (p, _parity_predict(p, flip=True)))),
    notes="negative controls: the weights moved by ±1 %, and the closed form of the other parity (L + 1)",
)


CLAIMS = (
    LINF_LIMIT_L2, LINF_LIMIT_DEEP, LINF_PARITY,
)
