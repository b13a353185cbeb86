r"""GD around η_c = 2/s_GF, with the numba GD kernel (:mod:`biasaudit.numerics.eos_gd`) and
:mod:`biasaudit.numerics.eos_sweep`: ``eos.gd.tracking_gap``, ``eos.gd.flow_aligned_linear``,
``eos.gd.stability_edge_at_flow_limit``, ``eos.gd.kink_location``, ``eos.gd.kink_above_eta_c`` and
``eos.gd.kink_fixed_point``.

The kink claims estimate a quantity from an η grid, so each case shows the estimate at the claim's resolution
(301 η in η_c(1 ± 10 %)), at 2× and 4× it, and with the window halved (±5 % at the 4× spacing); the error is
read from the finest estimate, and a case whose verdict is not the same at all four is undecided.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.eos._common import (GD_SMALL, SMALL_INIT, TOY, _arr, _regimes, _rel, _tracking_eval,
                                          _tracking_predict, _w0)
from biasaudit.ledger import (AT_10X_EXACT, Claim, Observation, OutOfScope, Reference, Tolerance, broken_hypothesis,
                              one_side, shifted_prediction)
from biasaudit.theory.eos_flow import (ETA_C, GF_LIMIT, C_sym, S_gd, beta0_i, eta_c_sym, eta_edge, eta_kink, r_0,
                                       s_gf_sym)
from biasaudit.theory.eos_model import SHARPNESS, S_sym, beta_i, d_sym, eta_sym, i_sym, x_i, y_sym

# small init, r_0 = Σ x_i β_0i − y < 0
_SMALL_INIT = sp.Lt(sp.Sum(x_i * beta0_i, (i_sym, 1, d_sym)) - y_sym, 0, evaluate=False)

__all__ = ["CLAIMS"]


TRACK_FRACTION = 0.95


TRACK_TOL = Tolerance("eos_tracking_fraction", 1 - TRACK_FRACTION,
                      "at least 95% of converged runs have 0 <= 1 - eta S/2 <= 0.035 "
                      "(error = fraction outside the band)")


TRACKING = Claim(
    id="eos.gd.tracking_gap", paper="eos", source="paper 2, E1 on the toy model (reference numbers)",
    title="Above 1.05·η_c GD's final sharpness tracks 2/η: 0 ≤ 1 − ηS/2 ≤ 0.035 for ≥ 95% of converged η",
    hypotheses=(sp.Gt(eta_sym, sp.Rational(105, 100) * eta_c_sym, evaluate=False),),
    statement=sp.And(ETA_C.eq(eta_c_sym), sp.Ge(1 - eta_sym * S_sym / 2, 0, evaluate=False),
                     sp.Le(1 - eta_sym * S_sym / 2, sp.Rational(35, 1000), evaluate=False)),
    formulas=(ETA_C,),
    predict=_tracking_predict, evaluate=_tracking_eval, tolerance=TRACK_TOL, domain=GD_SMALL,
    negative_control=broken_hypothesis("eta > 1.05 eta_c", lambda p, v: (
        p, {**v, "eta_lo": 0.3 * v["eta_c"], "eta_hi": 0.9 * v["eta_c"]})),
    samples={"ci": 32, "thorough": 256},
    references=(Reference(TOY, {"eta_c": 0.2588}, 2e-4, "toy: 2/s_GF = 0.2588", origin="derived"),),
    compare_reference=lambda p, e: _rel(p["eta_c"], e["eta_c"]),
    notes="Expected verdict: refuted. Over the domain (100 draws) the fraction in the band is 57-100%, below 95% "
          "on a third of the draws, while the median gap stays in [0.0067, 0.032]. On the toy the fraction is "
          "marginal (94.4% on 240 eta, 95.1% on 1000, 95.5% on 4000). 32 draws (0.03 s each) miss every failing "
          "draw with probability 0.67^32 < 1e-5, so the verdict does not depend on the seed. Control: the same "
          "rule on the flow-aligned side (eta < eta_c).",
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
    id="eos.gd.flow_aligned_linear", paper="eos", source="paper 2, E1 flow-aligned side (reference numbers)",
    title="Below η_c, S_GF − S_GD(η) ≈ C·η: halving η halves the gap",
    hypotheses=(sp.Lt(eta_sym, eta_c_sym, evaluate=False),),
    # s_GF = S(β_GF) (small init, eos.s_gf.small_init): the level GD's final sharpness falls short of by C·η
    statement=sp.And(sp.Eq(s_gf_sym - S_gd(eta_sym), C_sym * eta_sym),
                     sp.Eq(s_gf_sym, sp.Sum(SHARPNESS.expr, (i_sym, 1, d_sym))), GF_LIMIT.eq(beta_i)),
    formulas=(SHARPNESS, GF_LIMIT),
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
    hypotheses=(_SMALL_INIT,),
    statement=ETA_C.eq(eta_edge), formulas=(ETA_C,),
    predict=_edge_predict, evaluate=_edge_eval,
    tolerance=Tolerance("exact_decision", 0.0, f"both probes at relative distance {EDGE_DELTA:g} from eta_c must "
                        f"be decided correctly: over {EDGE_STEPS} steps the kick moves by about e^(±10)",
                        at_10x=AT_10X_EXACT),
    domain=SMALL_INIT, negative_control=shifted_prediction(0.01),
    notes="Pins eta_c = 2/s_GF to 0.2 % with the numba GD kernel, independently of the sweep claims: the kink of "
          "S_final(eta) (eos.gd.kink_location) lies 0.5-2.2 % above eta_c because GD from w0 lands at a flatter "
          "point than the flow, so it cannot pin eta_c to 1 %.",
)


def _kink_estimates(params, eta_c) -> dict | None:
    """The kink at each resolution of one sweep (:func:`biasaudit.numerics.eos_sweep.kink_estimates`, the one
    estimator); None when fewer than 90 % of the runs converge."""
    from biasaudit.numerics.eos_sweep import kink_estimates

    return kink_estimates(params["x"], params["y"], _w0(params), eta_c, loss_factor=params.get("c", 0.5))


def _kink_predict(params):
    reg = _regimes(params)
    if reg.init_regime != "small":
        raise OutOfScope("large init: see eos.s_gf.large_init")
    return reg.eta_c


def _kink_offset(kink, predicted):
    return abs(kink / predicted - 1)


def _kink_below(kink, predicted):
    return max(0.0, 1 - kink / predicted)


def _resolved_kink_eval(error_of):
    """evaluate(params, predicted): ``error_of(kink, predicted)`` at the finest estimate, and at each resolution
    (``Observation.resolutions``: the ledger calls a case undecided when they fall on both sides of the
    tolerance)."""
    def evaluate(params, predicted):
        kinks = _kink_estimates(params, _regimes(params).eta_c)
        if kinks is None:
            return Observation(None, math.nan, "too few converged runs near eta_c", decided=False)
        shown = ", ".join(f"{label}: {kink / predicted - 1:+.3%}" for label, kink in kinks.items())
        from biasaudit.numerics.eos_sweep import KINK_FINEST

        finest = kinks[KINK_FINEST]
        return Observation({"kink": finest, "by_resolution": kinks}, error_of(finest, predicted),
                           f"kink of S_final(eta) at {finest:.5g} (1201 eta in ±10%), {finest / predicted - 1:+.3%} "
                           f"from the prediction; by eta points: {shown}",
                           resolutions={label: error_of(kink, predicted) for label, kink in kinks.items()})
    return evaluate


KINK_TOL = Tolerance(
    "kink_within_measured", 0.025,
    "the paper writes eta_c ≈ 2/s_GF: the claim states how close, measured over the domain (128 draws, "
    "thorough, seed 0, 1201 eta: the kink sits 0.28-2.07 % above 2/s_GF, median 1.13 %), rounded up to 2.5 %; "
    "the resolution moves the estimate by at most 0.05 %")
KINK_FP_TOL = Tolerance("kink_resolution", 0.005, "kink grid step 0.07% of eta_c (0.02 % at 1201 eta) plus the "
                        "fit's bias; measured |kink/fp - 1| < 0.3% on the toy",
                        at_10x="at profile ci the verdict is undecided at 0.5 % (a case's verdict moves with the "
                               "resolution) and at 5 % (the ±1 % controls fall inside it); the tolerance decides at "
                               "profile thorough, where one case is beyond 0.5 % at every resolution")


KINK = Claim(
    id="eos.gd.kink_location", paper="eos", source="paper 2, E2 (phase transition at eta_c = 2/s_GF)",
    title="The kink of S_final(η) sits within 2.5% of η_c = 2/s_GF (the paper's ≈, measured over the domain)",
    hypotheses=(sp.Lt(r_0, 0, evaluate=False),),
    statement=ETA_C.eq(eta_kink), formulas=(ETA_C,),
    predict=_kink_predict, evaluate=_resolved_kink_eval(_kink_offset),
    tolerance=KINK_TOL,
    domain=GD_SMALL,
    negative_control=shifted_prediction(2 * KINK_TOL.value, reason="an approximate statement: the prediction moved "
                                                                    "by twice its stated closeness (±5 %)"),
    samples={"ci": 16, "thorough": 128},
    references=(Reference(TOY, 0.2588, 2e-4, "toy: 2/s_GF = 0.2588", origin="derived"),),
    notes="GD's sharpness lags the flow's by C·eta at eta_c, so the kink sits 0.3–2.1% above 2/s_GF over the "
          "domain (128 draws, 1201 eta; 1–2% on the toy, notes/eos.md): 2/s_GF locates the transition to 2.5%, "
          "not to the 1% the power rule asks of an exact statement (read at 1%, 63% of the draws refute it). "
          "The deviation is systematic: eos.gd.kink_above_eta_c. eos.gd.kink_fixed_point is the sharper predictor.",
)


KINK_ABOVE = Claim(
    id="eos.gd.kink_above_eta_c", paper="eos",
    source="measured here (notes/integrity.md: the kink sits above 2/s_GF at every sampled case)",
    title="The kink of S_final(η) sits above η_c = 2/s_GF (a systematic deviation of the paper's ≈)",
    hypotheses=(sp.Lt(r_0, 0, evaluate=False),),
    statement=sp.Gt(eta_kink, ETA_C.expr, evaluate=False), formulas=(ETA_C,),
    predict=_kink_predict, evaluate=_resolved_kink_eval(_kink_below),
    tolerance=Tolerance("kink_above", 0.0, "error = how far the kink sits below 2/s_GF (relative), 0 when above",
                        at_10x="a side decision: 10 x 0 = 0, and a kink below eta_c is off by its own distance"),
    domain=GD_SMALL,
    negative_control=(one_side("+", "prediction", 0.01, lambda p, v, s: (p, v * (1 + s))),),
    inequality="a lower bound on the kink: only a higher bound can be refuted (2/s_GF moved up 1 %, refuted where "
               "the kink sits less than 1 % above it)",
    samples={"ci": 16, "thorough": 128},
    notes="Measured over 128 draws (thorough, seed 0, 1201 eta in ±10%): the kink sits 0.28–2.07% above 2/s_GF, "
          "never below; GD lands at a flatter point than the flow, so its sharpness reaches 2/eta later.",
)


def _fixed_point_predict(params):
    from biasaudit.numerics.eos_sweep import flow_fixed_point

    reg = _regimes(params)
    if reg.init_regime != "small":
        raise OutOfScope("large init")
    return flow_fixed_point(params["x"], params["y"], _w0(params), reg.eta_c, loss_factor=params.get("c", 0.5))


KINK_FP = Claim(
    id="eos.gd.kink_fixed_point", paper="eos",
    source="measured here (notes/eos.md: 'a better predictor is the fixed point of eta = 2/S_GD(eta)')",
    title="The fixed point of η = 2/S_GD(η) (flow-side fit) predicts the kink to within 0.5%",
    hypotheses=(sp.Lt(r_0, 0, evaluate=False),),
    statement=sp.Eq(eta_sym * S_gd(eta_sym), 2),
    no_closed_form="the fixed point of η = 2/S_GD(η), with S_GD a straight line fitted to GD's final sharpness on "
                   "the flow side (η in [0.5, 0.95] η_c): a root of a fit to simulations",
    predict=_fixed_point_predict, evaluate=_resolved_kink_eval(_kink_offset),
    tolerance=KINK_FP_TOL,
    domain=GD_SMALL, negative_control=shifted_prediction(0.01), samples={"ci": 256, "thorough": 1024},
    references=(Reference(TOY, 0.262, 0.005, "toy: kink at about 0.262", origin="measured"),
                Reference({"d": 3, "x": [0.7644970397420141, 1.6436542693849814, 2.3986427218285353],
                           "y": 0.6355267803834802, "alpha": 0.13689424051287927, "c": 0.5}, 0.3727067170193847,
                           1e-6, "the counterexample the thorough profile found (case 294 of 1025, seed 0): the kink "
                           "is 0.77-0.78 % below the fixed point at 301, 601 and 1201 eta and 0.57 % with the "
                           "window halved", origin="measured")),
    notes="Expected verdict: refuted. Measured over 100 draws: kink/fixed point − 1 in [−0.70%, +0.27%], beyond 0.5% "
          "on 3% of the domain, but at 301-1201 eta and with the window halved only rarely beyond it at every "
          "resolution (none of the ci profile's 256 draws; one of the thorough profile's 1024). That case is a "
          "reference, so the verdict does not depend on the profile or the seed.",
)


CLAIMS = (TRACKING, FLOW_LINEAR, EDGE, KINK, KINK_ABOVE, KINK_FP)
