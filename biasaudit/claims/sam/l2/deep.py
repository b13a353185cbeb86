r"""l2-SAM at L > 2: even L collapses like L = 2, odd L never collapses, α_c for even L ≥ 4 by certificate
bisection, and the j† sequences at L = 3 (scipy on the depth-L field).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.sam.l2._common import PAPER, _arr, _base, _c, _sequence
from biasaudit.domain import Choice, Domain, Fixed, Integer, Real
from biasaudit.ledger import (AT_10X_EXACT, AT_10X_PRECISION, Claim, Observation, Reference, Tolerance,
                              broken_hypothesis, shifted_prediction, two_sided)
from biasaudit.theory import sam_l2 as theory

SYM = theory.SYMBOLS  # the symbols the statements are written in

_L, _c_s = SYM["L"], SYM["c"]

__all__ = ["CLAIMS"]


# ========================================================================== L > 2
def _deep_run(mu, alpha, c, depth, tau_end, stop_high):
    from scipy.integrate import solve_ivp

    from biasaudit.theory.sam_l2 import rescaled_field_deep

    def low(t, w):
        return np.max(w) - 1e-6 * alpha

    def high(t, w):
        return np.max(w) - stop_high

    low.terminal = True
    high.terminal = True
    return solve_ivp(lambda t, w: rescaled_field_deep(np.maximum(w, 0.0), mu, c, depth), (0, tau_end),
                     np.full(mu.size, alpha), method="DOP853", rtol=1e-10, atol=1e-14 * alpha, events=(low, high),
                     dense_output=True)


def _deep_predict(p):
    from biasaudit.theory.sam_l2 import deep_small_alpha_field

    field = deep_small_alpha_field(_arr(p), _c(p), int(p["depth"]))
    return int(np.sign(field[0]))  # −1: all shrink (collapse), +1: all grow


def _deep_evaluate(p, predicted):
    from biasaudit.numerics.l2_boundaries import l2_sam_regime_boundaries
    from biasaudit.theory.sam_l2 import rescaled_field_deep

    mu, c, L = _arr(p), _c(p), int(p["depth"])
    alpha = p["frac"] * l2_sam_regime_boundaries(mu, p["rho"], depth=L, normalization=p["normalization"]).alpha_shrink_all
    speed = float(np.min(np.abs(rescaled_field_deep(np.full(mu.size, alpha), mu, c, L))))
    horizon = 20.0 * alpha / speed  # long enough for every coordinate to move by ~its own size
    sol = _deep_run(mu, alpha, c, L, horizon, 10 * c)
    ts = np.linspace(0, sol.t[-1], 400)
    W = sol.sol(ts)
    inc = bool(np.all(np.diff(W, axis=1) >= -1e-12 * np.max(W)))
    dec = bool(np.all(np.diff(W, axis=1) <= 1e-12 * np.max(W)))
    if sol.status == 1 and sol.t_events[0].size and dec:
        observed, what = -1, f"all coordinates decreased to 1e-6 alpha at tau = {sol.t[-1]:.4g} (collapse)"
    elif sol.status == 1 and sol.t_events[1].size and inc:
        observed, what = 1, f"all coordinates nondecreasing, max w reached 10c at tau = {sol.t[-1]:.4g}"
    elif sol.status == 0 and inc and np.max(W[:, -1]) > alpha:
        observed, what = 1, f"all coordinates nondecreasing up to tau = {sol.t[-1]:.4g} (no collapse; stalls)"
    else:
        return Observation(None, math.nan, f"L={L}: no clear trend by tau = {sol.t[-1]:.3g}", decided=False)
    return Observation(observed, float(observed != predicted), f"L={L}, alpha={alpha:.3g}: {what}")


EXACT_SIGN = Tolerance("exact_sign", 0.0, "collapse vs growth is a yes/no fact", at_10x=AT_10X_EXACT)
# both parity claims predict a sign at small alpha; their control flips it
SIGN_FLIPPED = broken_hypothesis(
    "sign of the small-alpha field", lambda p, pred: (p, -pred),
    reason="a sign at small alpha: the class boundary in alpha is alpha_c, where the trajectory is not monotone, "
           "so a 1 % move across it gives no clear trend rather than the other class")

DEEP_EVEN = Claim(
    id="sam.l2.deep_even_collapse", paper=PAPER, source="l2-SAM at L > 2",
    title="even L: the small-alpha field −c_L^{L−1} mu^L/‖mu‖^{L−1} < 0, so small alpha collapses like L = 2",
    hypotheses=(sp.Eq(sp.Mod(_L, 2), 0),),
    statement=theory.DEEP_SMALL_ALPHA_FIELD.eq(SYM["w_j'"]),
    formulas=(theory.DEEP_SMALL_ALPHA_FIELD,),
    predict=_deep_predict, evaluate=_deep_evaluate,
    tolerance=EXACT_SIGN,
    domain=Domain(_base(depth=Choice((2, 4, 6)), frac=Real(0.05, 0.9))),
    negative_control=SIGN_FLIPPED,
    samples={"ci": 4, "thorough": 32},
)

DEEP_ODD = Claim(
    id="sam.l2.deep_odd_no_collapse", paper=PAPER, source="l2-SAM at L > 2",
    title="odd L: the small-alpha field is +c_L^{L−1} mu^L/‖mu‖^{L−1} > 0 (w' = mu w~^{L−1} ≥ 0): never collapses",
    hypotheses=(sp.Eq(sp.Mod(_L, 2), 1),),
    statement=theory.DEEP_SMALL_ALPHA_FIELD.eq(SYM["w_j'"]),
    formulas=(theory.DEEP_SMALL_ALPHA_FIELD,),
    predict=_deep_predict, evaluate=_deep_evaluate,
    tolerance=EXACT_SIGN,
    domain=Domain(_base(depth=Choice((3, 5)), frac=Real(0.05, 0.9))),
    negative_control=SIGN_FLIPPED,
    samples={"ci": 4, "thorough": 32},
)


def _deep_ac_predict(p):
    from biasaudit.numerics.l2_boundaries import alpha_collapse

    return alpha_collapse(_arr(p), p["rho"], depth=int(p["depth"]), normalization=p["normalization"]) / _c(p)


def _deep_ac_evaluate(p, predicted):
    """Independent integrator (scipy DOP853, rtol 1e-13, terminal events on the certificates) on both sides."""
    from biasaudit.numerics.l2_deep import (
        COLLAPSE,
        ESCAPE,
        UNDECIDED,
        classify_deep_trajectory_reference,
    )

    mu, L, a = _arr(p), int(p["depth"]), float(predicted)
    rel = DEEP_AC_BRACKET
    below = classify_deep_trajectory_reference(mu, a * (1 - rel), L, rtol=1e-13, horizon=1e200)
    above = classify_deep_trajectory_reference(mu, a * (1 + rel), L, rtol=1e-13, horizon=1e200)
    what = (f"L={L}: DOP853 alpha_c(1−{rel:g}) → {below.name} (sigma {below.sigma:.3g}), "
            f"alpha_c(1+{rel:g}) → {above.name} (sigma {above.sigma:.3g})")
    if below.code == COLLAPSE and above.code == ESCAPE:
        return Observation(f"certified within {rel:g}", rel, what)
    if UNDECIDED in (below.code, above.code):
        return Observation(None, math.nan, what, decided=False)
    return Observation("outside the bracket", math.inf, what)


DEEP_AC_BRACKET = 2e-10  # α_c(1 ± this) must fall on the two sides: the bisection promises half-width ≤ 1e-10

DEEP_ALPHA_COLLAPSE = Claim(
    id="sam.l2.deep_even_alpha_collapse", paper=PAPER, source="l2-SAM at L > 2 (even L: collapse like L = 2)",
    title="even L ≥ 4: alpha_c exists and the certificate bisection (every w~_j ≤ 0 / escape) finds it to 10 digits",
    hypotheses=(sp.Eq(sp.Mod(_L, 2), 0), sp.Ge(_L, 4)),
    statement=sp.Eq(SYM["alpha_c"] / _c_s, SYM["bisect"](theory.FORMULAS["certificate_collapse_deep"],
                                                         theory.FORMULAS["certificate_escape"])),
    no_closed_form="alpha_c has no closed form: a certificate-driven bisection (every w~_j <= 0: collapse; "
                   "max_j w_j > c_L or every w~_j >= 0: escape) on the integrated depth-L flow (numerics.l2_deep)",
    predict=_deep_ac_predict, evaluate=_deep_ac_evaluate,
    tolerance=Tolerance("bracket_rel", 1e-9, "10 significant digits (the precision the tool promises for alpha_collapse): "
                        "alpha_c(1 ± 2e-10) must fall on the two sides", at_10x=AT_10X_PRECISION),
    domain=Domain(_base(d=Integer(2, 3), depth=Choice((4, 6)))),
    negative_control=shifted_prediction(0.01),
    samples={"ci": 2, "thorough": 16},
)


def _L3_sequence(p, method):
    from scipy.integrate import solve_ivp

    from biasaudit.theory.sam_l2 import rescaled_field_deep

    mu, c, L = _arr(p), _c(p), int(p["depth"])
    alpha = p["alpha_over_rho"] * p["rho"]

    def high(t, w):
        return np.max(w) - 1e3 * max(alpha, c)

    high.terminal = True
    sol = solve_ivp(lambda t, w: rescaled_field_deep(w, mu, c, L), (0, 1e4 / mu[0]), np.full(mu.size, alpha),
                    method=method, rtol=1e-10, atol=1e-14, events=high, dense_output=True)
    if sol.status != 1:
        return None
    ts = np.concatenate([np.geomspace(1e-7, 1e-2, 100) * sol.t[-1], np.linspace(1e-2, 1, 4000) * sol.t[-1]])
    return _sequence(np.argmax(sol.sol(ts), axis=0) + 1)


L3_REL_STEP = 1e-3  # each discrete step moves max_j |w_j| by at most 0.1 %: ~7e3-1e4 steps to the blow-up
L3_MAX_STEPS = 200_000


def _L3_discrete_sequence(p):
    """j† sequence of discrete l2-SAM (joint normalisation) on all L·d parameters W of the depth-L diagonal
    network, on the linear loss −<Π_l W_l, mu> (whose SAM flow is the rescaled field exactly:
    ``sam.flow.linear_loss``), from W = alpha·1 until max |w| reaches 1e3 max(alpha, c_L) as the flow's does.
    The step is eta_k = 1e-3 max|W| / max|∇L(W + eps)|: explicit, full-parameter, no reduction and no ODE solver.
    """
    mu, L, rho = _arr(p), int(p["depth"]), float(p["rho"])
    alpha = p["alpha_over_rho"] * rho
    W = np.full((L, mu.size), alpha)
    stop = 1e3 * max(alpha, _c(p))

    def grad(V):
        return np.stack([-mu * np.prod(np.delete(V, l, axis=0), axis=0) for l in range(L)])

    jd, steps = [], 0
    while np.max(np.abs(W)) < stop:
        if steps >= L3_MAX_STEPS:
            return None
        g = grad(W)
        g_sam = grad(W + rho * g / np.linalg.norm(g))  # joint l2 normalisation over all L·d entries
        W = W - L3_REL_STEP * np.max(np.abs(W)) / np.max(np.abs(g_sam)) * g_sam
        steps += 1
        jd.append(int(np.argmax(np.prod(W, axis=0))) + 1)
    return _sequence(jd)


def _L3_evaluate(p, predicted):
    obs = _L3_discrete_sequence(p)
    if obs is None:
        return Observation(None, math.nan, f"no blow-up within {L3_MAX_STEPS} discrete steps", decided=False)
    return Observation(obs, float(obs != tuple(predicted)), f"discrete full-parameter SAM (linear loss) sequence "
                                                            f"{obs}; flow (DOP853) {tuple(predicted)}")


def _L3_boundary(p, predicted, direction):
    """The nearest alpha/rho above (direction +1) or below (−1) where the flow's j† sequence changes, to
    1e−4 relative (bracketed by factors of 1.25, then bisected)."""
    base = p["alpha_over_rho"]
    inside, outside = base, None
    for k in range(1, 12):
        trial = base * 1.25 ** (direction * k)
        if _L3_sequence({**p, "alpha_over_rho": trial}, "DOP853") != tuple(predicted):
            outside = trial
            break
        inside = trial
    if outside is None:
        return None
    while abs(outside / inside - 1) > 1e-4:
        mid = math.sqrt(inside * outside)
        if _L3_sequence({**p, "alpha_over_rho": mid}, "DOP853") == tuple(predicted):
            inside = mid
        else:
            outside = mid
    return math.sqrt(inside * outside)


def _L3_across(p, predicted, signed_size):
    """Move alpha/rho 1 % past the nearest boundary of the predicted sequence (above for '+', below for '−');
    keep the prediction, which the discrete run must then refute."""
    edge = _L3_boundary(p, predicted, 1 if signed_size > 0 else -1)
    if edge is None:
        return p, predicted  # no boundary within a factor 1.25^11: this case cannot refute the control
    return {**p, "alpha_over_rho": edge * (1 + signed_size)}, predicted


DEEP_L3 = Claim(
    id="sam.l2.deep_L3_sequences", paper=PAPER, source="l2-SAM at L > 2 (sequences at L = 3)",
    title="L = 3, mu = (1..5): alpha/rho = 0.3 gives j† = 1,2,5; 0.5 gives 2,3,4,5 (joint normalisation)",
    hypotheses=(sp.Eq(_L, 3),),
    statement=sp.Eq(SYM["w_j'"], theory.FORMULAS["field_deep"].subs(_L, 3)),
    no_closed_form="a j† sequence read off the depth-3 flow, integrated by DOP853 (scipy) until max_j w_j blows "
                   "up: no closed form",
    predict=lambda p: _L3_sequence(p, "DOP853"), evaluate=_L3_evaluate,
    tolerance=Tolerance("exact_sequence", 0.0, "a j† sequence matches or not", at_10x=AT_10X_EXACT),
    domain=Domain({"d": Fixed(5), "mu": Fixed((1.0, 2.0, 3.0, 4.0, 5.0)), "rho": Real(0.1, 2.0, log=True),
                   "normalization": Fixed("joint"), "depth": Fixed(3), "alpha_over_rho": Real(0.05, 1.0, log=True)}),
    negative_control=two_sided("alpha/rho across the nearest sequence boundary", 0.01, _L3_across),
    references=(
        Reference({"d": 5, "mu": (1.0, 2.0, 3.0, 4.0, 5.0), "rho": 1.0, "normalization": "joint", "depth": 3,
                   "alpha_over_rho": 0.3}, (1, 2, 5), 0.0, "L=3, alpha/rho = 0.3", origin="derived"),
        Reference({"d": 5, "mu": (1.0, 2.0, 3.0, 4.0, 5.0), "rho": 1.0, "normalization": "joint", "depth": 3,
                   "alpha_over_rho": 0.5}, (2, 3, 4, 5), 0.0, "L=3, alpha/rho = 0.5", origin="derived"),
    ),
    samples={"ci": 6, "thorough": 16},
    notes="predict: the rescaled flow (DOP853); evaluate: discrete full-parameter SAM on the linear loss (no "
          "reduction, no ODE solver). Controls: alpha/rho moved 1 % past the nearest boundary where the flow's "
          "sequence changes (found by bisection to 1e-4), the unmoved prediction kept; cases with no boundary "
          "within a factor 1.25^11 on that side cannot refute and the next case is tried.",
)


CLAIMS = (
    DEEP_EVEN, DEEP_ODD, DEEP_ALPHA_COLLAPSE, DEEP_L3,
)
