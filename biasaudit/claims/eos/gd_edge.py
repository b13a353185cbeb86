r"""GD around η_c = 2/s_GF, with the numba GD kernel (:mod:`biasaudit.numerics.eos_gd`) and
:mod:`biasaudit.numerics.eos_sweep`: ``eos.s_gf.large_init`` (and its failing side ``eos.s_gf.large_init_continuous``),
``eos.gd.tracking_gap``, ``eos.gd.flow_aligned_linear``,
``eos.gd.stability_edge_at_flow_limit``, ``eos.gd.kink_location`` and ``eos.gd.kink_fixed_point``.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.eos._common import (GD_SMALL, SMALL_INIT, TOY, _arr, _b1, _b2, _eta, _regimes, _rel, _w0, _x1,
                                          _x2, _y)
from biasaudit.domain import Domain, Fixed, Integer, Real, Vector
from biasaudit.ledger import (AT_10X_EXACT, Claim, Observation, OutOfScope, Reference, Tolerance, broken_hypothesis,
                              shifted_prediction)

__all__ = ["CLAIMS"]


# ---- 4. GD claims (numba kernel) ------------------------------------------------------------------------------
TRACK_BAND = (0.0, 0.035)
TRACK_FRACTION = 0.95


def _tracking_predict(params):
    reg = _regimes(params)
    if reg.init_regime != "small":
        raise OutOfScope("large init: see eos.s_gf.large_init")
    return {"eta_c": reg.eta_c, "eta_lo": 1.05 * reg.eta_c, "eta_hi": reg.eta_stable_max}


def _tracking_eval(params, predicted, n=1000):
    from biasaudit.numerics.eos_gd import gd_sweep

    eta = np.linspace(predicted["eta_lo"], predicted["eta_hi"], n)
    s = gd_sweep(params["x"], params["y"], _w0(params), eta, loss_factor=params.get("c", 0.5))
    ok = s.converged
    if ok.sum() < 10:
        return Observation(None, math.nan, f"only {ok.sum()} converged runs", decided=False)
    gap = 1 - eta[ok] * s.lambda_max[ok] / 2
    inside = float(np.mean((gap >= TRACK_BAND[0]) & (gap <= TRACK_BAND[1])))
    return Observation({"fraction_in_band": inside, "median_gap": float(np.median(gap)), "max_gap": float(gap.max())},
                       1 - inside,
                       f"{ok.sum()} converged of {n} eta in [{eta[0]:.4g}, {eta[-1]:.4g}]: {inside:.3%} have "
                       f"1 - eta S/2 in [0, 0.035]; median gap {np.median(gap):.4f}, max {gap.max():.4f}")


TRACK_TOL = Tolerance("eos_tracking_fraction", 1 - TRACK_FRACTION,
                      "at least 95% of converged runs have 0 <= 1 - eta S/2 <= 0.035 "
                      "(error = fraction outside the band)")

TRACKING = Claim(
    id="eos.gd.tracking_gap", paper="eos", source="paper 2, E1 on the toy model (spec: reference numbers)",
    title="Above 1.05·η_c GD's final sharpness tracks 2/η: 0 ≤ 1 − ηS/2 ≤ 0.035 for ≥ 95% of converged η",
    hypotheses=(sp.Gt(_eta, sp.Rational(105, 100) * sp.Symbol("eta_c"), evaluate=False),),
    statement=sp.And(sp.Ge(1 - _eta * sp.Symbol("S") / 2, 0, evaluate=False), sp.Le(1 - _eta * sp.Symbol("S") / 2, sp.Rational(35, 1000), evaluate=False)),
    predict=_tracking_predict, evaluate=_tracking_eval, tolerance=TRACK_TOL, domain=GD_SMALL,
    negative_control=broken_hypothesis("eta > 1.05 eta_c", lambda p, v: (
        p, {**v, "eta_lo": 0.3 * v["eta_c"], "eta_hi": 0.9 * v["eta_c"]})),
    samples={"ci": 32, "thorough": 256},
    references=(Reference(TOY, {"eta_c": 0.2588}, 2e-4, "toy: 2/s_GF = 0.2588"),),
    compare_reference=lambda p, e: _rel(p["eta_c"], e["eta_c"]),
    notes="Expected verdict: refuted. Over the domain (100 draws) the fraction in the band is 57-100%, below 95% "
          "on a third of the draws, while the median gap stays in [0.0067, 0.032]. On the toy the fraction is "
          "marginal (94.4% on 240 eta, 95.1% on 1000, 95.5% on 4000). 32 draws (0.03 s each) miss every failing "
          "draw with probability 0.67^32 < 1e-5, so the verdict does not depend on the seed. Control: the same "
          "rule on the flow-aligned side (eta < eta_c).",
)


# Large init is r0 = <x, β0> − y > 0, i.e. q = α² Σx / y > 1 at w0 = α·1. The claim is judged on a fixed q grid
# that starts 1 % above the boundary (item 2 of issue 13: sample near the boundary, on the claim's side).
LARGE_INIT_Q = (1.01, 1.1, 1.5, 2.0, 3.0)
LARGE_DATA = Domain(
    {"d": Integer(2, 3), "x": Vector("d", 0.5, 1.2, increasing=(0.4, 1.0)), "y": Real(0.6, 1.5), "c": Fixed(0.5)},
    description="data (x, y); the init w0 = alpha·1 is set by q = alpha² Σx / y on a grid",
)


def _at_q(params, q):
    """``params`` with w0 = α·1 at q = α² Σx / y (r0 = (q − 1) y)."""
    data = {k: v for k, v in params.items() if k not in ("w0", "alpha")}
    return {**data, "alpha": math.sqrt(q * params["y"] / float(np.sum(params["x"])))}


def _large_point_predict(params):
    reg = _regimes(params)
    if reg.init_regime != "large":
        raise OutOfScope("small init")
    return {"eta_c": reg.eta_c, "eta_lo": 1.05 * reg.eta_c, "eta_hi": 2.0 * reg.eta_c}


def _large_predict(params):
    """One point where the params fix the init (the spec's reference), else the q grid of LARGE_INIT_Q."""
    if "w0" in params or "alpha" in params:
        points = [(params, _large_point_predict(params))]
    else:
        inits = [_at_q(params, q) for q in LARGE_INIT_Q]
        points = [(init, _large_point_predict(init)) for init in inits]
    return {"eta_c": points[0][1]["eta_c"], "points": points}


def _median_gap(params, predicted):
    obs = _tracking_eval(params, predicted)
    return obs.observed["median_gap"] if obs.decided else math.nan


def _not_tracking_eval(params, predicted):
    """The failing side of tracking at large init: at each init the median gap 1 − ηS/2 above 1.05 η_c must
    exceed the band's top, 0.035 (error = how far the worst init stays inside the band, relative to 0.035)."""
    gaps = [(_q_of(p), _median_gap(p, pred)) for p, pred in predicted["points"]]
    if any(math.isnan(g) for _, g in gaps):
        return Observation(gaps, math.nan, f"fewer than 10 converged runs at some init: {gaps}", decided=False)
    err = max(max(0.0, TRACK_BAND[1] - g) / TRACK_BAND[1] for _, g in gaps)
    return Observation({"median_gap_by_q": gaps}, err,
                       "median gap 1 − eta S/2 over eta in [1.05, 2] eta_c, by q = alpha² Σx/y: "
                       + ", ".join(f"q = {q:.3g}: {g:.4f}" for q, g in gaps) + " (tracking keeps it <= 0.035)")


def _q_of(params):
    return float(np.dot(_arr(params), _w0(params) ** 2)) / params["y"] if "w0" in params else \
        params["alpha"] ** 2 * float(np.sum(params["x"])) / params["y"]


def _small_init_instead(params, predicted):
    """Broken hypothesis: the same data at a small init (α = 0.05, r0 < 0), where GD does track 2/η."""
    small = {**{k: v for k, v in params.items() if k not in ("w0", "alpha")}, "alpha": 0.05}
    return params, {**predicted, "points": [(small, _tracking_predict(small))]}


LARGE_INIT = Claim(
    id="eos.s_gf.large_init", paper="eos", source="paper 2, theory (spec: s_GF, large init) — boundary of E2",
    title="Large init (r0 > 0), s_GF = λ_max(H(w0)): above 2/s_GF GD does not track 2/η (catapults to flatter "
          "minima): the median gap 1 − ηS/2 exceeds 0.035",
    hypotheses=(sp.Gt(_x1 * _b1 + _x2 * _b2 - _y, 0, evaluate=False),),
    statement=sp.Gt(sp.Symbol("median(1 - eta S/2)"), sp.Rational(35, 1000), evaluate=False),
    predict=_large_predict, evaluate=_not_tracking_eval,
    tolerance=Tolerance("outside_the_band", 0.0, "the median gap must lie above the tracking band's top",
                        at_10x=AT_10X_EXACT),
    domain=LARGE_DATA,
    negative_control=broken_hypothesis("r0 > 0 (large init)", _small_init_instead,
                                       reason="the class boundary r0 = 0 is not where GD's behaviour changes "
                                              "(see eos.s_gf.large_init_continuous): a 1 % move across it "
                                              "changes nothing"),
    samples={"ci": 2, "thorough": 8},
    references=(Reference({"x": (1.0, 2.0), "y": 1.0, "w0": (1.0, 1.0), "c": 0.5},
                          {"eta_c": 2 / (16 + 8 * math.sqrt(2))}, 1e-12, "x=(1,2), w0=(1,1): s_GF = 16 + 8√2"),),
    compare_reference=lambda p, e: _rel(p["eta_c"], e["eta_c"]),
    notes="Expected verdict: refuted. Judged at q = alpha² Σx/y in (1.01, 1.1, 1.5, 2, 3) on each data draw. Just "
          "above r0 = 0 GD still tracks 2/eta as at small init (median gap 0.017-0.036 at q = 1.01-1.25, 8 draws); "
          "the failure the spec states sets in between q = 1.25 and 1.5 (median gap 0.18-0.25 at 1.5, 0.47-0.56 "
          "at 2, 0.72-0.78 at 3). The failing side is eos.s_gf.large_init_continuous.",
)


# ---- the failing side: GD's outcome is continuous across r0 = 0 --------------------------------------------
CONTINUITY_EPS = 0.01  # q = 1 ∓ 1 %: the two inits sit 1 % of y on either side of r0 = 0
CONTINUITY_FAR_Q = 1.5  # the control's init: well inside large init, where the spec's failure is seen


def _continuity_predict(params):
    """The prediction is the small-init side's median gap at q = 1 − ε (where the 2/s_GF rule applies)."""
    below = _at_q(params, 1 - CONTINUITY_EPS)
    return {"median_gap": _median_gap(below, _tracking_predict(below)), "q": 1 + CONTINUITY_EPS}


def _continuity_eval(params, predicted):
    above = _at_q(params, predicted["q"])
    gap = _median_gap(above, _large_point_predict(above))
    if math.isnan(gap) or math.isnan(predicted["median_gap"]):
        return Observation(None, math.nan, "fewer than 10 converged runs on one side", decided=False)
    return Observation(gap, abs(gap - predicted["median_gap"]),
                       f"median gap 1 − eta S/2: {predicted['median_gap']:.4f} at q = {1 - CONTINUITY_EPS} (small "
                       f"init), {gap:.4f} at q = {predicted['q']:.3g} (large init)")


LARGE_INIT_CONTINUOUS = Claim(
    id="eos.s_gf.large_init_continuous", paper="eos",
    source="derived (the failing side of eos.s_gf.large_init: GD's dynamics are continuous in w0)",
    title="Across r0 = 0 GD's tracking of 2/η is continuous: 1 % of y above r0 = 0 (large init) the median gap "
          "1 − ηS/2 equals the one 1 % below (small init) to the η grid's noise, 0.005",
    hypotheses=(sp.Eq(sp.Symbol("q"), 1 + sp.Rational(1, 100)),),
    statement=sp.Eq(sp.Symbol("median_gap(q=1.01)"), sp.Symbol("median_gap(q=0.99)")),
    predict=_continuity_predict, evaluate=_continuity_eval,
    tolerance=Tolerance("median_gap_noise", 0.005,
                        "absolute: the median over 1000 eta of a gap that scatters by ~0.01 between neighbouring "
                        "eta; at q = 1 ∓ 1e-3 (where continuity leaves no room for a real change) the two medians "
                        "differ by up to 1.7e-3 (8 draws), at 1 ∓ 1e-2 by up to 3.2e-3",
                        at_10x="10x (0.05) would still refute the control (the gap at q = 1.5 is 0.18-0.25, "
                               "> 0.13 away) and still confirm the claim"),
    domain=LARGE_DATA,
    negative_control=broken_hypothesis(
        "q = 1.5 instead of 1.01 (well inside large init)",
        lambda p, v: (p, {**v, "q": CONTINUITY_FAR_Q}),
        reason="a continuity statement has no boundary to move across: the control evaluates the large side where "
               "the spec's failure is measured"),
    samples={"ci": 3, "thorough": 12},
)


def _flow_linear_predict(params):
    reg = _regimes(params)
    return {"eta_c": reg.eta_c, "s_gf": reg.s_gf, "ratio": 2.0}


FLOW_ETAS = (0.1, 0.05)  # in units of eta_c: gap(0.1 eta_c) / gap(0.05 eta_c)


def _flow_linear_eval(params, predicted):
    from biasaudit.numerics.eos_sweep import flow_aligned_deviation

    eta = np.array(FLOW_ETAS) * predicted["eta_c"]
    dev = flow_aligned_deviation(params["x"], params["y"], _w0(params), eta, predicted["s_gf"],
                                 loss_factor=params.get("c", 0.5))
    if not np.all(np.isfinite(dev)) or np.any(dev <= 0):
        return Observation(dev.tolist(), math.nan, "GD did not converge below S_GF", decided=False)
    ratio = float(dev[0] / dev[1])
    return Observation(ratio, abs(ratio / predicted["ratio"] - 1),
                       f"S_GF - S_GD at eta = 0.1, 0.05 eta_c: {dev[0]:.4e}, {dev[1]:.4e}; ratio {ratio:.5f}")


FLOW_LINEAR = Claim(
    id="eos.gd.flow_aligned_linear", paper="eos", source="paper 2, E1 flow-aligned side (spec: reference numbers)",
    title="Below η_c, S_GF − S_GD(η) ≈ C·η: halving η halves the gap",
    hypotheses=(sp.Lt(_eta, sp.Symbol("eta_c"), evaluate=False),),
    statement=sp.Eq(sp.Symbol("S_GF") - sp.Symbol("S_GD"), sp.Symbol("C") * _eta),
    predict=_flow_linear_predict, evaluate=_flow_linear_eval,
    tolerance=Tolerance("second_order_in_eta", 0.03, "gap = C eta + O(eta²): the ratio moves by O(eta); toy: "
                        "1.991 at 0.1 eta_c (0.5%), thorough draws up to ~1.5%; 3% relative (at 0.2 eta_c some "
                        "draws reached 3.2%)"),
    domain=GD_SMALL, negative_control=shifted_prediction(0.04, key="ratio", reason="the claim's resolution: the "
                                                       "O(eta^2) term moves the ratio by up to 3%"),
    samples={"ci": 3, "thorough": 24},
)


EDGE_DELTA = 2e-3  # probe eta_c at (1 -/+ 0.2 %): inside the 1 % controls, far outside roundoff
EDGE_STEPS = 2500  # |1 - eta lambda| = 1 -/+ 2 delta per step: the residual moves by e^{-/+ 10} over the run
EDGE_KICK = 1e-9  # relative size of the kick along the top eigenvector: stays linear (e^10 · 1e-9 << 1)


def _edge_predict(params):
    reg = _regimes(params)
    if reg.init_regime != "small":
        raise OutOfScope("large init: s_GF is lambda_max(H(w0)), not the sharpness at the flow's limit")
    return reg.eta_c


def _edge_eval(params, predicted):
    """GD from the flow's limit w_GF (solve_ivp), kicked by ``EDGE_KICK`` along the top eigenvector of H(w_GF) (on the
    manifold H = 8c ggᵀ, g = x⊙w), at eta = eta_c(1 ∓ ``EDGE_DELTA``): the residual must shrink below eta_c
    and grow above. Error: the number of wrong decisions."""
    from biasaudit.numerics.eos_flow_ode import flow_ode
    from biasaudit.numerics.eos_gd import gd_path

    x, y, c = _arr(params), float(params["y"]), params.get("c", 0.5)
    w0 = _w0(params)
    _, beta_gf, _ = flow_ode(x, y, w0, loss_factor=c)  # the flow's limit from solve_ivp, not the closed form
    w_gf = np.sqrt(np.asarray(beta_gf, float)) * np.sign(w0)
    g = x * w_gf
    kicked = w_gf + EDGE_KICK * np.linalg.norm(w_gf) * g / np.linalg.norm(g)
    r_start = abs(float(x @ kicked**2) - y)
    wrong, growth = [], {}
    for side, factor, expect_growth in (("below", 1 - EDGE_DELTA, False), ("above", 1 + EDGE_DELTA, True)):
        path = gd_path(x, y, kicked, predicted * factor, EDGE_STEPS, loss_factor=c)
        r_end = abs(float(x @ path[-1] ** 2) - y)
        ratio = r_end / r_start if math.isfinite(r_end) else math.inf
        growth[side] = ratio
        if (ratio > 1.0) != expect_growth:
            wrong.append(f"{side} (eta = {predicted * factor:.8g}): residual ×{ratio:.3g} over {EDGE_STEPS} steps")
    return Observation(growth, float(len(wrong)), "; ".join(wrong) or
                       f"residual ×{growth['below']:.3g} at eta_c(1 - {EDGE_DELTA:g}), ×{growth['above']:.3g} at "
                       f"eta_c(1 + {EDGE_DELTA:g}) over {EDGE_STEPS} steps")


EDGE = Claim(
    id="eos.gd.stability_edge_at_flow_limit", paper="eos",
    source="derived (paper 2's eta_c = 2/s_GF as the linear-stability edge of GD at the flow's limit)",
    title="Small init: GD started at the flow's limit w_GF (kicked along the top eigenvector) stays there iff "
          "η < η_c = 2/s_GF: the residual shrinks at η_c(1 − 0.2%) and grows at η_c(1 + 0.2%)",
    hypotheses=(sp.Lt(_x1 * _b1 + _x2 * _b2 - _y, 0, evaluate=False),),
    statement=sp.Eq(sp.Symbol("eta_edge"), 2 / sp.Symbol("s_GF")),
    predict=_edge_predict, evaluate=_edge_eval,
    tolerance=Tolerance("exact_decision", 0.0, f"both probes at relative distance {EDGE_DELTA:g} from eta_c must "
                        f"be decided correctly: over {EDGE_STEPS} steps the kick moves by about e^(±10)",
                        at_10x=AT_10X_EXACT),
    domain=SMALL_INIT, negative_control=shifted_prediction(0.01),
    notes="Pins eta_c = 2/s_GF to 0.2 % with the numba GD kernel, independently of the sweep claims: the kink of "
          "S_final(eta) (eos.gd.kink_location) lies 0.5-2.2 % above eta_c because GD from w0 lands at a flatter "
          "point than the flow, so it cannot pin eta_c to 1 %.",
)


def _kink_measure(params, eta_c, n=301):
    from biasaudit.numerics.eos_gd import gd_sweep
    from biasaudit.numerics.eos_sweep import kink_location

    eta = np.linspace(0.9 * eta_c, 1.1 * eta_c, n)
    s = gd_sweep(params["x"], params["y"], _w0(params), eta, loss_factor=params.get("c", 0.5))
    ok = s.converged
    if ok.sum() < 0.9 * n:
        return None
    return kink_location(eta[ok], s.lambda_max[ok])


def _kink_predict(params):
    reg = _regimes(params)
    if reg.init_regime != "small":
        raise OutOfScope("large init: see eos.s_gf.large_init")
    return reg.eta_c


def _kink_eval(params, predicted):
    kink = _kink_measure(params, _regimes(params).eta_c)
    if kink is None:
        return Observation(None, math.nan, "too few converged runs near eta_c", decided=False)
    return Observation(kink, abs(kink / predicted - 1),
                       f"kink of S_final(eta) at {kink:.5g} (line/hyperbola breakpoint, 301 eta in ±10%): "
                       f"{kink / predicted - 1:+.3%} from the prediction")


KINK = Claim(
    id="eos.gd.kink_location", paper="eos", source="paper 2, E2 (phase transition at eta_c = 2/s_GF)",
    title="The kink of S_final(η) sits at η_c = 2/s_GF, to 1%",
    hypotheses=(sp.Lt(sp.Symbol("r0"), 0, evaluate=False),),
    statement=sp.Eq(sp.Symbol("eta_kink"), 2 / sp.Symbol("s_GF")),
    predict=_kink_predict, evaluate=_kink_eval,
    tolerance=Tolerance("one_percent_power", 0.01, "the power rule: a check of eta_c must tell a 1% error apart, so "
                        "the kink must sit within 1% of 2/s_GF (kink grid step 0.07%, estimator agrees with a "
                        "1201-point grid to 0.07%)"),
    domain=GD_SMALL, negative_control=shifted_prediction(0.01), samples={"ci": 16, "thorough": 128},
    references=(Reference(TOY, 0.2588, 2e-4, "toy: 2/s_GF = 0.2588"),),
    notes="Expected verdict: refuted. GD's sharpness lags the flow's by C·eta at eta_c, so the kink sits "
          "0.5–2.2% above 2/s_GF over the domain (100 draws; spec: 1–2% on the toy): 2/s_GF locates the "
          "transition to about 2%, not 1%. eos.gd.kink_fixed_point is the sharper predictor.",
)


def _fixed_point_predict(params):
    from biasaudit.numerics.eos_sweep import flow_fixed_point

    reg = _regimes(params)
    if reg.init_regime != "small":
        raise OutOfScope("large init")
    return flow_fixed_point(params["x"], params["y"], _w0(params), reg.eta_c, loss_factor=params.get("c", 0.5))


KINK_FP = Claim(
    id="eos.gd.kink_fixed_point", paper="eos", source="spec: 'a better predictor is the fixed point of eta = 2/S_GD(eta)'",
    title="The fixed point of η = 2/S_GD(η) (flow-side fit) predicts the kink to within 0.5%",
    hypotheses=(sp.Lt(sp.Symbol("r0"), 0, evaluate=False),),
    statement=sp.Eq(_eta * sp.Symbol("S_GD"), 2),
    predict=_fixed_point_predict, evaluate=_kink_eval,
    tolerance=Tolerance("kink_resolution", 0.005, "kink grid step 0.07% of eta_c plus the fit's bias; "
                        "measured |kink/fp - 1| < 0.3% on the toy"),
    domain=GD_SMALL, negative_control=shifted_prediction(0.01), samples={"ci": 256, "thorough": 1024},
    references=(Reference(TOY, 0.262, 0.005, "toy: kink at about 0.262"),),
    notes="Measured over 100 draws: kink/fixed point − 1 in [−0.70%, +0.27%], beyond 0.5% on 3% of the "
          "domain; 256 draws (0.12 s each) find such a case with probability 1 − 0.97^256 > 0.999, so the "
          "verdict does not depend on the seed.",
)


CLAIMS = (
    LARGE_INIT, LARGE_INIT_CONTINUOUS, TRACKING, FLOW_LINEAR, EDGE, KINK, KINK_FP,
)
