r"""``eos.certified.*``: proven enclosures of s_GF, η_c = 2/s_GF and the stable-minima thresholds of the toy model.

The prediction is the library's float s_GF (:func:`biasaudit.theory.eos_flow.eos_regimes`: brentq's root τ, then
S(β_GF); λ_max(H(w₀)) by ``eigvalsh`` from a large init). The observation is a proven enclosure
(:mod:`biasaudit.numerics.certified_boundaries`): τ isolated by a Krawczyk step on
:math:`\sum_i x_i\beta_{0,i}e^{-4x_i\tau} = y` (the theory's ``GF_ROOT_TERM``), S(β_GF) in balls on it,
λ_max(H(w₀)) from Arb's eigenvalue enclosure of the theory's ``HESSIAN``; cross-checked by interval Newton in
mpmath's ``iv`` context (small init) or mpmath's ``eigsy`` at 30 digits (large init). What is *not* proved: that
the largest λ_max along the flow's path is attained at its end (small init) or start (large init) — the model's
theorem, checked against ``solve_ivp`` paths by ``eos.s_gf.*`` — and anything on the central flow, an ODE
integration.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.claims.enclosure import FLOAT_ROUNDING, enclosure_observation
from biasaudit.claims.eos._common import TOY, _arr, _problem
from biasaudit.domain import Choice, Domain, Integer, Real, Vector
from biasaudit.ledger import Claim, Reference, shifted_prediction
from biasaudit.theory import eos_flow as flow
from biasaudit.theory import eos_minimizers as mins
from biasaudit.theory.eos_model import beta_i, eta_sym

__all__ = ["CLAIMS"]

SLACK_REASON = ("the float prediction usually lands inside its enclosure (error exactly 0); the tolerance is the "
                "float rounding of the worst quantity measured (1.3e-14, the root tau near 0), not a scale this "
                "claim's errors set")


def _regimes(params):
    p = _problem(params)
    return flow.eos_regimes(p.x, p.y, p.w0, loss_factor=p.c)


def _sgf_predict(params):
    reg = _regimes(params)
    return {"s_gf": reg.s_gf, "eta_c": reg.eta_c}


def _large_init_reference(reg) -> dict:
    """λ_max(H(w₀)) by mpmath's ``eigsy`` at 30 digits on the theory's ``HESSIAN`` (lambdified to mpmath), as an
    interval of relative half-width 1e-25 (far above eigsy's error at 30 digits, far below the enclosure's width)."""
    import mpmath

    from biasaudit.theory.eos_model import HESSIAN

    entry = sp.lambdify(HESSIAN.args, HESSIAN.expr, "mpmath")
    with mpmath.workdps(30):
        x, w = [mpmath.mpf(v) for v in reg.x], [mpmath.mpf(v) for v in reg.w0]
        r = sum(xi * wi * wi for xi, wi in zip(x, w)) - mpmath.mpf(reg.y)
        g = [xi * wi for xi, wi in zip(x, w)]
        d = len(x)
        H = mpmath.matrix(d, d)
        for j in range(d):
            for k in range(d):
                H[j, k] = entry(g[j], g[k], r, x[j], int(j == k), mpmath.mpf(reg.loss_factor))
        top = max(mpmath.eigsy(H, eigvals_only=True))
        half = abs(top) * mpmath.mpf("1e-25")
        return {"s_gf": (float(top - half), float(top + half))}


def _sgf_evaluate(params, predicted):
    from biasaudit.numerics.certified_boundaries import certify_eos, reference_eos

    reg = _regimes(params)
    reference = reference_eos(reg) if reg.init_regime == "small" else _large_init_reference(reg)
    return enclosure_observation(predicted, certify_eos(reg), reference)


SGF = Claim(
    id="eos.certified.s_gf", paper="eos",
    source="derived from paper 2, theory (s_GF and eta_c = 2/s_GF): tau a root, S(beta_GF) and lambda_max closed on it",
    title="Proven enclosures of s_GF (S(β_GF) from a small init, λ_max(H(w₀)) from a large one) and η_c = 2/s_GF "
          "contain the float values",
    hypotheses=(sp.Gt(flow.s_gf_sym, 0, evaluate=False),),
    statement=sp.And(flow.ETA_C.eq(flow.eta_c_sym), flow.GF_LIMIT.eq(beta_i)),
    formulas=(flow.ETA_C, flow.GF_LIMIT),
    predict=_sgf_predict, evaluate=_sgf_evaluate, tolerance=FLOAT_ROUNDING,
    domain=Domain({"d": Integer(2, 4), "x": Vector("d", 0.2, 3.0, log=True), "y": Real(0.2, 3.0, log=True),
                   "w0": Vector("d", 0.01, 2.0, log=True), "c": Choice((0.5, 1.0))},
                  description="x in (0.2, 3)^d, y in (0.2, 3), w0 in (0.01, 2)^d (small and large inits)"),
    negative_control=shifted_prediction(0.01), slack_reason=SLACK_REASON,
    references=(Reference(TOY, {"s_gf": 7.726980566038303}, 1e-14, "toy: s_GF = 7.72698056603830 (brentq, float)",
                          origin="derived"),),
    compare_reference=lambda p, e: abs(p["s_gf"] / e["s_gf"] - 1),
    notes="Not proved here: that the largest lambda_max along the path is at the flow's end (small init) or start "
          "(large init); that is the model's theorem, checked against solve_ivp paths by eos.s_gf.*.",
)


def _stable_predict(params):
    x, y, c = _arr(params), params["y"], params.get("c", 0.5)
    return {"eta_stable_max": mins.stable_eta_max(x, y, c), "eta_min_norm_stable_max": mins.min_norm_stable_eta_max(x, y, c)}


def _stable_evaluate(params, predicted):
    from biasaudit.numerics.certified_boundaries import certify_eos

    reg = _regimes({**params, "w0": tuple(np.full(len(params["x"]), 0.1))})
    return enclosure_observation(predicted, certify_eos(reg), {})


STABLE = Claim(
    id="eos.certified.stable_thresholds", paper="eos",
    source="derived from paper 2, theory (linearly stable minima: eta_j = 1/(4 c y x_j))",
    title="Proven enclosures of the stable-minima thresholds 1/(4cyx_min) and 1/(4cyx_max) contain the float values",
    hypotheses=(sp.Gt(eta_sym, 0, evaluate=False),),
    statement=mins.STABLE_ETA.eq(sp.Symbol("eta_j")), formulas=(mins.STABLE_ETA,),
    predict=_stable_predict, evaluate=_stable_evaluate, tolerance=FLOAT_ROUNDING,
    domain=Domain({"d": Integer(2, 5), "x": Vector("d", 0.2, 2.0, increasing=(0.1, 1.5)), "y": Real(0.2, 5.0, log=True),
                   "c": Choice((0.5, 1.0))}, description="x strictly increasing, y in (0.2, 5)"),
    negative_control=shifted_prediction(0.01), slack_reason=SLACK_REASON,
    notes="No mpmath reference: a closed form in balls is its own proof (the cross-checked roots are in "
          "eos.certified.s_gf).",
)

CLAIMS = (SGF, STABLE)
