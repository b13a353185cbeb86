r"""l_inf-SAM at L = 2 (claim B): the closed form with sliding at 0, the zero-hit time, the unstable
equilibrium alpha_j = rho, the chatter of the discrete iterates, and growth from an unbalanced init.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.sam._common import PAPER, _arr, _mu_domain, _sigma_neg
from biasaudit.domain import Choice, Domain, Integer, Real, Vector
from biasaudit.ledger import (AT_10X_EXACT, AT_10X_PRECISION, Claim, Observation, Tolerance, one_side,
                              shifted_prediction, two_sided)
from biasaudit.theory import sam_linf as theory

SYM = theory.SYMBOLS  # the symbols the statements are written in

_a, _L, _mu, _r, _w = SYM["alpha"], SYM["L"], SYM["mu"], SYM["rho"], SYM["w"]

__all__ = ["CLAIMS"]


# ============================================================================================ l_inf, L = 2
def _alpha_from_classes(p):
    """alpha_j = rho (1 - mag_j) / rho / rho (1 + mag_j) for class 0 / 1 / 2 (class = floor(cls_j))."""
    rho = float(p["rho"])
    out = []
    for c, m in zip(p["cls"], p["mag"]):
        k = min(int(c), 2)
        out.append(rho * (1 - m) if k == 0 else (rho if k == 1 else rho * (1 + m)))
    return {"alpha": tuple(out)}


def _linf_l2_times(p):
    return p["tau_end"] * 2.0 ** -np.arange(8, -1, -1)  # geometric: early times see every coordinate move


def _linf_l2_predict(p):
    from biasaudit.theory.sam_linf import linf_l2_weights

    grid = _linf_l2_times(p)
    return tuple(map(tuple, np.reshape(linf_l2_weights(p["mu"], p["alpha"], p["rho"], grid), (grid.size, -1))))


def _linf_l2_evaluate(p, predicted):
    from biasaudit.numerics.flows import integrate_reduced_flow

    rows = []
    for t in _linf_l2_times(p):
        res = integrate_reduced_flow("linf", p["mu"], p["alpha"], p["rho"], 2, t, method="adaptive", rtol=1e-11,
                                     atol=1e-14, n_out=2)
        if res.status not in ("ok", "collapsed"):
            return Observation(None, math.nan, f"flow status {res.status}", decided=False)
        rows.append(res.w[-1])
    w, pred = np.array(rows), np.asarray(predicted, dtype=float)
    err = float(np.max(np.abs(w - pred) / np.maximum(np.abs(pred), p["rho"])))
    return Observation(tuple(w[-1]), err, f"adaptive flow (Filippov sliding at 0) vs closed form at tau_end 2^-k, "
                                          f"k = 0..8, tau_end = {p['tau_end']:.3g}: max rel. error {err:.2e}")


_LINF_CLASS_DOMAIN = {"d": Integer(1, 4), "mu": _mu_domain(), "rho": Real(0.05, 1.0, log=True),
                      "cls": Vector("d", 0.0, 2.999), "mag": Vector("d", 0.1, 0.9)}

LINF_L2 = Claim(
    id="sam.linf.l2_closed_form", paper=PAPER, source="B (L = 2)",
    title="l_inf-SAM at L = 2: w_j = rho + (alpha_j - rho) e^{mu_j tau}, sliding at 0 after it hits 0",
    hypotheses=(sp.Eq(_L, 2), sp.Gt(_a, 0, evaluate=False), sp.Gt(_r, 0, evaluate=False)),
    statement=sp.Eq(SYM["w(tau)"], sp.Max(theory.LINF_L2.expr, 0)),
    formulas=(theory.LINF_L2,),
    predict=_linf_l2_predict, evaluate=_linf_l2_evaluate,
    tolerance=Tolerance("dp54_global", 1e-9, "DP5(4) at rtol = 1e-11 over <= 15 e-folds; the snap to 0 at the "
                                            "crossing step is exact (the exact solution slides at 0; worst 5.0e-11 "
                                            "measured); the tolerance is the power of ten at least 10x the worst "
                                            "error measured over the thorough profile",
                        at_10x=AT_10X_PRECISION),
    domain=Domain({**_LINF_CLASS_DOMAIN, "tau_end": Real(0.2, 3.0)}, derive=_alpha_from_classes),
    negative_control=shifted_prediction(0.01),
)


def _zero_hit_predict(p):
    from biasaudit.theory.sam_linf import linf_zero_hit_time

    return float(linf_zero_hit_time([p["mu"]], [p["alpha_over_rho"] * p["rho"]], p["rho"], p["depth"])[0])


def _zero_hit_evaluate(p, predicted):
    from scipy.integrate import solve_ivp

    mu, rho, L = p["mu"], p["rho"], p["depth"]
    alpha = p["alpha_over_rho"] * rho

    def hit(t, w):
        return w[0]

    hit.terminal, hit.direction = True, -1
    sol = solve_ivp(lambda t, w: [mu * (w[0] - rho) ** (L - 1)], (0.0, 10.0 * predicted), [alpha], method="DOP853",
                    rtol=1e-13, atol=1e-15, events=hit)
    if not sol.t_events[0].size:
        return Observation(None, math.inf, "solve_ivp found no zero crossing before 10x the prediction")
    t0 = float(sol.t_events[0][0])
    err = abs(t0 - predicted) / predicted
    return Observation(t0, err, f"solve_ivp (DOP853, event w = 0) on w' = mu (w - rho)^(L-1): tau_0 = {t0:.12g}")


LINF_ZERO_HIT = Claim(
    id="sam.linf.zero_hit_time", paper=PAPER, source="B (L = 2; even L >= 4 generalised)",
    title="l_inf-SAM, alpha_j < rho: w_j hits 0 at tau_0 = ln(rho/(rho - alpha_j))/mu_j (L = 2), "
          "((rho - alpha)^{2-L} - rho^{2-L})/((L-2) mu) for even L",
    hypotheses=(sp.Lt(_a, _r, evaluate=False), sp.Eq(sp.Mod(_L, 2), 0)),
    statement=theory.LINF_ZERO_HIT_TIME.eq(SYM["tau_0"]),
    formulas=(theory.LINF_ZERO_HIT_TIME,),
    predict=_zero_hit_predict, evaluate=_zero_hit_evaluate,
    tolerance=Tolerance("event_location", 1e-11, "DOP853 at rtol = 1e-13 with event root-finding (worst 3.9e-13 "
                                               "measured); the tolerance is the power of ten at least 10x the worst "
                                               "error measured over the thorough profile",
                        at_10x=AT_10X_PRECISION),
    domain=Domain({"mu": Real(0.3, 5.0, log=True), "alpha_over_rho": Real(0.05, 0.95), "rho": Real(0.01, 2.0, log=True),
                   "depth": Choice((2, 2, 4, 6))}),
    negative_control=shifted_prediction(0.01),
)


def _chatter_evaluate(p, predicted):
    from biasaudit.numerics.sam_discrete import run_sam
    from biasaudit.theory.sam_linf import linf_zero_hit_time

    mu, rho = float(p["mu"]), float(p["rho"])
    alpha = p["alpha_over_rho"] * rho
    eta = p["eta_mu"] / mu
    t0 = float(linf_zero_hit_time([mu], [alpha], rho)[0])
    steps = int(math.ceil((t0 + 5.0 / mu) / (eta * _sigma_neg(mu * rho**2 * 4)))) + 400
    tr = run_sam(np.full((2, 1), alpha), [[mu]], [1.0], algorithm="linf", rho=rho, eta=eta, steps=steps)
    w = tr.W[:, 0, 0]
    crossed = np.flatnonzero(w <= 0)
    if not crossed.size:
        return Observation(None, math.nan, "the iterates never reached 0", decided=False)
    k0 = crossed[0]
    chatter = w[k0:]
    h = np.diff(tr.tau)[k0 - 1:]
    if chatter.size < 200:
        return Observation(None, math.nan, "too few chatter steps", decided=False)
    ratio = float(np.max(np.abs(chatter)) / (np.max(h) * mu * rho))
    bound = float(predicted)
    err = max(0.0, ratio - bound) / bound
    return Observation(ratio, err, f"sup |w_j| / (h mu_j rho) over {chatter.size} chatter steps = {ratio:.4f} "
                                   f"(h = max eta sigma(-z~_k) = {np.max(h):.3g}); bound constant {bound}")


# sup |w_j| / (h mu_j rho): the invariant interval of the chatter map is [-h mu rho, h mu rho]
CHATTER_SHARP_CONSTANT = 1.0


def _chatter_bound_moved(p, predicted, signed_size):
    return p, predicted * (1 + signed_size)


LINF_CHATTER = Claim(
    id="sam.linf.chatter_bound", paper=PAPER, source="B (L = 2, Filippov point); sharp constant derived",
    title="discrete l_inf-SAM iterates chatter at 0 with |w_j| <= h mu_j rho (sharp; the bound first stated, "
          "2 h mu_j rho, holds with a factor 2 to spare)",
    hypotheses=(sp.Eq(_L, 2), sp.Lt(_a, _r, evaluate=False), sp.Le(SYM["h"] * _mu, 1, evaluate=False)),
    statement=sp.Le(sp.Abs(_w), theory.CHATTER_SHARP, evaluate=False),
    no_closed_form="the prediction is the sharp constant 1 of sup |w_j| / (h mu_j rho) (derived in "
                   "notes/sam-gd-linf.md), compared with the sup over a discrete run whose step h is read off the run; "
                   "no formula of the parameters is evaluated",
    predict=lambda p: CHATTER_SHARP_CONSTANT, evaluate=_chatter_evaluate,
    tolerance=Tolerance("exact_inequality", 1e-12, "an inequality; 1e-12 absorbs float roundoff only",
                        at_10x="an inequality checked to roundoff: sup |w|/(h mu rho) is 0.86-0.9999 in the sampled "
                               "runs, 1e-11 above the bound changes nothing; the tight control (bound 1 % lower) is "
                               "refuted by a 1 % margin, 1e10 times the tolerance"),
    domain=Domain({"mu": Real(0.5, 3.0), "alpha_over_rho": Real(0.2, 0.9), "rho": Real(0.05, 0.5),
                   "eta_mu": Real(0.02, 0.5)}),
    slack_reason=("the error is the excess of sup |w_j|/(h mu_j rho) over the bound, clipped at 0: exactly 0 whenever "
                  "the bound holds (every sampled case); 1e-12 only absorbs roundoff where the bound is attained"),
    negative_control=(one_side("-", "the constant", 0.01, _chatter_bound_moved),),
    inequality="an upper bound: only a tighter constant can be refuted (the sharp constant 1 moved down 1 %)",
    notes="Each step maps w to w(1 + h mu) - h mu rho sign(w), so [-h mu rho, h mu rho] is invariant once entered "
          "and the sup is approached just after a sign change from 0+. Measured sup/(h mu rho): 0.86-0.9999 over "
          "40 draws (median 0.986-0.9996): the sup is not always attained (some orbits settle in cycles), so the "
          "constant is sharp as a bound, not as an equality. The control moves the constant 1 % down (0.99): the "
          "cases with sup > 0.99 h mu rho refute it.",
)


def _equilibrium_predict(p):
    # w - rho = (alpha - rho) e^{mu tau}: departure rate mu_j on both sides
    return tuple(theory.LINF_DEPARTURE_RATE(_arr(p, "mu")))


def _equilibrium_evaluate(p, predicted):
    from biasaudit.numerics.flows import integrate_reduced_flow

    mu, rho, delta, T = _arr(p, "mu"), float(p["rho"]), float(p["delta"]), float(p["tau_end"])
    at = integrate_reduced_flow("linf", mu, rho, rho, 2, T, method="adaptive", n_out=3)
    if not np.all(at.w == rho):
        return Observation(None, 1.0, f"alpha = rho moved: max |w - rho| = {np.max(np.abs(at.w - rho)):.2e}")
    rates = []
    for sign in (1.0, -1.0):
        res = integrate_reduced_flow("linf", mu, rho * (1 + sign * delta), rho, 2, T, method="adaptive",
                                     rtol=1e-12, atol=1e-16 * rho, n_out=2)
        rates.append(np.log(np.abs(res.w[-1] - rho) / (rho * delta)) / T)
    rates = np.array(rates)
    err = float(np.max(np.abs(rates - np.asarray(predicted)[None, :]) / np.asarray(predicted)[None, :]))
    return Observation(tuple(rates[0]), err, f"alpha = rho stays exactly at rho; from rho (1 +- {delta:.0e}) "
                                             f"|w - rho| grows at rates {np.round(rates, 10).tolist()} (predicted mu)")


LINF_EQUILIBRIUM = Claim(
    id="sam.linf.unstable_equilibrium", paper=PAPER, source="B (L = 2, alpha_j = rho)",
    title="l_inf-SAM at L = 2: alpha_j = rho is an equilibrium, unstable with departure rate mu_j on both sides",
    hypotheses=(sp.Eq(_L, 2), sp.Eq(_a, _r)),
    statement=theory.LINF_DEPARTURE_RATE.eq(sp.Derivative(theory.LINF_FIELD_L2, _w)),
    formulas=(theory.LINF_DEPARTURE_RATE,),
    predict=_equilibrium_predict, evaluate=_equilibrium_evaluate,
    tolerance=Tolerance("dp54_rate", 1e-8, "w - rho is computed with absolute error ~ rtol rho = 1e-12 rho, i.e. "
                                          "relative error <= 1e-8 for delta >= 1e-4; divided by "
                                          "tau = ln(1/delta)/(2 mu_d) "
                                          "(the lower branch stays above 0; worst 6.4e-10 measured); the tolerance "
                                          "is the power of ten at least 10x the worst error measured over the "
                                          "thorough profile", at_10x=AT_10X_PRECISION),
    domain=Domain({"d": Integer(1, 4), "mu": _mu_domain(), "rho": Real(0.05, 1.0, log=True),
                   "delta": Real(1e-4, 1e-2, log=True)},
                  derive=lambda p: {"tau_end": math.log(1 / p["delta"]) / (2 * max(p["mu"]))}),
    negative_control=shifted_prediction(0.01),
)


def _unbalanced_derive(p):
    rho = float(p["rho"])
    u, v = [], []
    for j, (delta, sgn, frac) in enumerate(zip(p["delta"], p["sign"], p["frac"])):
        dlt = 0.005 if j == 0 else delta  # coordinate 1 sits 0.5 % from the threshold
        total = 2 * rho * (1 + (dlt if sgn >= 0 else -dlt))
        u.append(total * frac)
        v.append(total * (1 - frac))
    return {"u0": tuple(u), "v0": tuple(v)}


def _unbalanced_predict(p, threshold_factor=1.0):
    from biasaudit.theory.sam_linf import linf_grows_unbalanced

    return tuple(bool(b) for b in linf_grows_unbalanced(p["mu"], p["u0"], p["v0"], p["rho"] * threshold_factor))


def _unbalanced_evaluate(p, predicted):
    from scipy.integrate import solve_ivp

    rho = float(p["rho"])
    observed = []
    for mu, u0, v0 in zip(p["mu"], p["u0"], p["v0"]):
        def field(t, x, mu=mu):  # the two-layer l_inf flow on one coordinate, sign(0) = 0
            u, v = x
            return [mu * (v - rho * np.sign(v)), mu * (u - rho * np.sign(u))]

        def grown(t, x):
            return x[0] + x[1] - 4 * rho

        def shrunk(t, x):
            return min(x[0], x[1]) - 1e-9 * rho

        grown.terminal = shrunk.terminal = True
        sol = solve_ivp(field, (0.0, 200.0 / mu), [u0, v0], method="DOP853", rtol=1e-12, atol=1e-15,
                        events=(grown, shrunk))
        if sol.t_events[0].size:
            observed.append(True)
        elif sol.t_events[1].size:
            observed.append(False)
        else:
            return Observation(None, math.nan, "neither grew to u+v = 4 rho nor reached 0", decided=False)
    mism = sum(a != b for a, b in zip(observed, predicted))
    return Observation(tuple(observed), mism / len(observed),
                       f"two-layer flow (solve_ivp): grows = {observed}; u+v-2rho of coordinate 1 = "
                       f"{p['u0'][0] + p['v0'][0] - 2 * rho:+.3g}")


LINF_UNBALANCED = Claim(
    id="sam.linf.unbalanced_growth", paper=PAPER, source="B (L = 2, unbalanced init)",
    title="l_inf-SAM at L = 2 from positive (u, v): coordinate j grows iff u_j(0) + v_j(0) > 2 rho",
    hypotheses=(sp.Eq(_L, 2), sp.Gt(SYM["u_0"], 0, evaluate=False), sp.Gt(SYM["v_0"], 0, evaluate=False)),
    statement=sp.Equivalent(SYM["grows"],
                            sp.Gt(SYM["u_0"] + SYM["v_0"], theory.UNBALANCED_THRESHOLD.expr, evaluate=False)),
    formulas=(theory.UNBALANCED_THRESHOLD,),
    predict=_unbalanced_predict, evaluate=_unbalanced_evaluate,
    tolerance=Tolerance("exact_classification", 0.0, "a yes/no per coordinate; every one must match",
                        at_10x=AT_10X_EXACT),
    domain=Domain({"d": Integer(1, 4), "mu": _mu_domain(), "rho": Real(0.05, 1.0, log=True),
                   "delta": Vector("d", 0.02, 0.5), "sign": Vector("d", -1.0, 1.0),
                   "frac": Vector("d", 0.2, 0.8)}, derive=_unbalanced_derive),
    negative_control=two_sided("threshold 2 rho", 0.01, lambda p, pred, s: (p, _unbalanced_predict(p, 1.0 + s))),
    notes="coordinate 1 is always 0.5 % from the threshold, so a threshold moved 1 % towards it (control) "
          "misclassifies it; the sampled signs put that coordinate on either side",
)


CLAIMS = (
    LINF_L2, LINF_ZERO_HIT, LINF_EQUILIBRIUM, LINF_CHATTER, LINF_UNBALANCED,
)
