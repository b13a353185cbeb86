r"""``eos.min_norm.*``: the minimal-norm points of P = {β ≥ 0: ⟨x, β⟩ = y}: the l1 minimizer of ‖w‖²
sits at a vertex, and the l2 minimizer of β is interior.

Predictions from :mod:`biasaudit.theory.eos_minimizers`; observations from ``scipy.optimize.linprog``
(HiGHS) and SLSQP.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy.optimize import minimize

from biasaudit.claims.eos._common import DISTINCT, GENERAL, TOY, _arr, _lp, _rel, _rel_scaled
from biasaudit.ledger import AT_10X_PRECISION, Claim, Observation, Reference, Tolerance, shifted_prediction
from biasaudit.theory import eos_minimizers as mins
from biasaudit.theory.eos_minimizers import VERTEX_NORM, VERTEX_W_L1, N_min, W_min, x_norm2
from biasaudit.theory.eos_model import beta_i, d_sym, i_sym, x_i, x_j, x_max, x_min

__all__ = ["CLAIMS"]


def _min_norm_predict(params):
    x, y = _arr(params), params["y"]
    sol = mins.min_norm_solution(x, y, params.get("c", 0.5))
    return {"beta_l1": sol["beta_l1"], "w_l1": sol["w_l1"], "vertex": sol["vertex"]}


def _min_w_l1(x, y):
    """min Σ w_i s.t. Σ x_i w_i² = y, w >= 0 (concave objective): SLSQP from every axis and the centre."""
    d = x.size
    starts = [np.sqrt(y / x[j]) * (0.9 * np.eye(d)[j] + 0.1 / d) for j in range(d)] + [np.sqrt(y / x.sum()) * np.ones(d)]
    best = np.inf
    for w in starts:
        w = w * np.sqrt(y / (x @ (w * w)))
        res = minimize(lambda v: v.sum(), w, jac=lambda v: np.ones(d), method="SLSQP", bounds=[(0, None)] * d,
                       constraints=[{"type": "eq", "fun": lambda v: x @ (v * v) - y, "jac": lambda v: 2 * x * v}],
                       options={"ftol": 1e-15, "maxiter": 500})
        if res.success and abs(x @ (res.x**2) - y) < 1e-9 * y:
            best = min(best, float(res.x.sum()))
    return best


def _min_norm_eval(params, predicted):
    x, y = _arr(params), params["y"]
    lp = _lp(np.ones_like(x), x, y)
    if not lp.success:
        return Observation(None, math.nan, f"linprog failed: {lp.message}", decided=False)
    w_l1 = _min_w_l1(x, y)
    vertex = int(np.argmax(lp.x)) + 1
    err = max(_rel(predicted["beta_l1"], lp.fun), _rel(predicted["w_l1"], w_l1),
              0.0 if vertex == predicted["vertex"] else math.inf)
    return Observation({"beta_l1": lp.fun, "w_l1": w_l1, "vertex": vertex}, err,
                       f"LP min ||beta||_1 = {lp.fun:.12g} at vertex {vertex}; SLSQP min ||w||_1 = {w_l1:.12g}")


MIN_NORM = Claim(
    id="eos.min_norm.vertex", paper="eos", source="paper 2, theory (Minimizers, minimal norm)",
    title="min ‖β‖₁ = ‖w‖₂² and min ‖w‖₁ on M are at the vertex argmax x: y/x_max and √(y/x_max)",
    hypotheses=(sp.Eq(x_j, x_max), sp.Gt(x_max, x_min, evaluate=False)),
    statement=sp.And(VERTEX_NORM.eq(N_min), VERTEX_W_L1.eq(W_min)), formulas=(VERTEX_NORM, VERTEX_W_L1),
    predict=_min_norm_predict, evaluate=_min_norm_eval,
    tolerance=Tolerance("slsqp_lp", 1e-13, "HiGHS LP optimum (~1e-15) and SLSQP at ftol 1e-15 on the concave "
                        "‖w‖₁, relative (worst 1.2e-15 measured); the tolerance is the power of ten at least 10x the "
                        "worst error measured over the thorough profile", at_10x=AT_10X_PRECISION),
    domain=DISTINCT, negative_control=shifted_prediction(0.01),
    references=(Reference(TOY, {"beta_l1": 0.5, "w_l1": math.sqrt(0.5), "vertex": 2}, 1e-12, "toy: v_2",
                          origin="derived"),),
    compare_reference=lambda p, e: max(_rel(p["beta_l1"], e["beta_l1"]), _rel(p["w_l1"], e["w_l1"]),
                                       0.0 if p["vertex"] == e["vertex"] else math.inf),
)


def _l2_eval(params, predicted):
    x, y = _arr(params), params["y"]
    scale = y * y / (x @ x)  # the optimal value: the objective is O(1) near the optimum
    res = None
    start = np.full_like(x, y / x.sum())
    for _ in range(2):  # a second SLSQP pass from the first one's answer polishes the active set's KKT point
        res = minimize(lambda b: b @ b / scale, start, jac=lambda b: 2 * b / scale, method="SLSQP",
                       bounds=[(0, None)] * x.size,
                       constraints=[{"type": "eq", "fun": lambda b: x @ b / y - 1, "jac": lambda b: x / y}],
                       options={"ftol": 1e-15, "maxiter": 500})  # 1e-16 is below roundoff: SLSQP never stops
        start = res.x
    if not res.success:
        return Observation(None, math.nan, f"SLSQP failed: {res.message}", decided=False)
    return Observation(res.x.tolist(), _rel_scaled(predicted, res.x), "SLSQP min ||beta||_2 on P")


MIN_L2 = Claim(
    id="eos.min_norm.l2_interior", paper="eos", source="paper 2, theory (Minimizers)",
    title="min ‖β‖₂ on P is the interior point y x/‖x‖²",
    hypotheses=(sp.Gt(x_i, 0, evaluate=False), sp.Eq(x_norm2, sp.Sum(x_i**2, (i_sym, 1, d_sym)))),
    statement=mins.MIN_L2.eq(beta_i), formulas=(mins.MIN_L2,),
    predict=lambda p: mins.min_l2_beta(_arr(p), p["y"]), evaluate=_l2_eval,
    tolerance=Tolerance("slsqp_qp", 1e-7, "SLSQP on a strictly convex QP at ftol 1e-15: KKT residual ~1e-9; "
                        "1e-7 relative to max β", at_10x=AT_10X_PRECISION),
    domain=GENERAL, negative_control=shifted_prediction(0.01),
    references=(Reference(TOY, [0.2, 0.4], 1e-12, "toy: (1, 2)/5", origin="derived"),),
)


CLAIMS = (MIN_NORM, MIN_L2)
