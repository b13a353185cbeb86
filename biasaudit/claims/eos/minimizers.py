r"""The Hessian and the minimizers on P = {β ≥ 0: ⟨x, β⟩ = y}: ``eos.hessian.*``, ``eos.min_norm.*``,
``eos.min_sharpness.*``, ``eos.minimizers.*``, ``eos.pareto.*`` and ``eos.stable_minima.*``.

Predictions from :mod:`biasaudit.theory.eos_model` and :mod:`biasaudit.theory.eos_minimizers`; observations from
finite-difference Hessians, ``scipy.optimize.linprog`` (HiGHS), SLSQP and the finite-difference Jacobian of the
GD map.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy.optimize import linprog, minimize

from biasaudit.claims.eos._common import (DISTINCT, GENERAL, OFF_MANIFOLD, TIES, TOY, _arr, _b1, _b2, _c, _eta, _rel,
                                          _rel_scaled, _x1, _x2, _y)
from biasaudit.domain import Choice, Domain, Real, Vector
from biasaudit.ledger import (AT_10X_EXACT, AT_10X_PRECISION, Claim, Observation, Reference, Tolerance,
                              broken_hypothesis, shifted_prediction, two_sided)
from biasaudit.theory import eos_minimizers as mins
from biasaudit.theory import eos_model as model

__all__ = ["CLAIMS"]


# ---- 1. Hessian ------------------------------------------------------------------------------------------
def _fd_hessian(x, y, w, c, h):
    """Central second differences of the loss (independent of the closed-form Hessian)."""
    d = w.size
    f = lambda v: float(model.loss(x, y, v, c))  # noqa: E731
    H = np.empty((d, d))
    for i in range(d):
        for j in range(i, d):
            ei, ej = np.eye(d)[i] * h, np.eye(d)[j] * h
            H[i, j] = H[j, i] = (f(w + ei + ej) - f(w + ei - ej) - f(w - ei + ej) + f(w - ei - ej)) / (4 * h * h)
    return H


FD_TOL = Tolerance(
    "central_difference", 1e-6,
    "4-point second differences of a quartic at h = 1e-4·scale: truncation h²/6·|L''''| ~ 1e-8·scale, "
    "round-off eps·|L|/h² ~ 1e-8; 1e-6 relative to max(1, |λ|max) leaves a margin of 100",
    at_10x=AT_10X_PRECISION,
)


def _hessian_eval(params, predicted):
    x, y, c = _arr(params), params["y"], params.get("c", 0.5)
    w = _arr(params, "w") if "w" in params else _on_manifold_w(params)
    h = 1e-4 * max(1.0, float(np.max(np.abs(w))))
    # A quartic's central second difference is exact up to a*h^2: one Richardson step removes it.
    lam = np.linalg.eigvalsh((4 * _fd_hessian(x, y, w, c, h / 2) - _fd_hessian(x, y, w, c, h)) / 3)
    scale = max(1.0, float(np.max(np.abs(lam))))
    err = float(np.max(np.abs(np.sort(np.asarray(predicted, float)) - lam)) / scale)
    return Observation(lam.tolist(), err, f"finite-difference eigenvalues {np.round(lam, 6).tolist()}")


def _on_manifold_w(params):
    x, y = _arr(params), params["y"]
    return model.project_to_manifold(x, y, _arr(params, "w0"))


HESSIAN_FORMULA = Claim(
    id="eos.hessian.formula", paper="eos", source="paper 2, theory model (spec: Hessian)",
    title="Hessian of L = c r² is 2c(4ggᵀ + 2r diag(x)), g = x⊙w, on and off the manifold",
    hypotheses=(sp.Gt(_x1, 0, evaluate=False), sp.Gt(_x2, 0, evaluate=False), sp.Gt(_c, 0, evaluate=False)),
    statement=sp.Eq(sp.hessian(model.loss_expr(2), model.ws(2)), model.hessian_expr(2)),
    predict=lambda p: np.linalg.eigvalsh(model.hessian(_arr(p), p["y"], _arr(p, "w"), p.get("c", 0.5))),
    evaluate=_hessian_eval, tolerance=FD_TOL, domain=OFF_MANIFOLD, negative_control=shifted_prediction(0.01),
)


def _rank1_predict(params):
    x, c = _arr(params), params.get("c", 0.5)
    beta = _on_manifold_w(params) ** 2
    return np.concatenate([np.zeros(x.size - 1), [float(model.on_manifold_sharpness(x, beta, c))]])


HESSIAN_RANK1 = Claim(
    id="eos.hessian.on_manifold_rank1", paper="eos", source="paper 2, theory model (spec: Hessian on M)",
    title="On M the Hessian has rank 1 with S = 8cΣx_i²β_i (4Σx_i²β_i at c = 1/2)",
    hypotheses=(sp.Eq(_x1 * _b1 + _x2 * _b2, _y),),
    statement=sp.Eq(sp.Symbol("S"), model.on_manifold_sharpness_expr(2)),
    predict=_rank1_predict, evaluate=_hessian_eval, tolerance=FD_TOL, domain=GENERAL,
    negative_control=shifted_prediction(0.01),
    references=(Reference({**TOY, "w0": (math.sqrt(1 / 3), math.sqrt(1 / 3))}, [0.0, 4 * (1 / 3 + 4 / 3)], 1e-12,
                          "β = (1/3, 1/3) on the toy manifold: S = 4(1/3 + 4/3)"),),
)


# ---- 2. minimizers -----------------------------------------------------------------------------------------
LP_TOL = Tolerance("highs_lp", 1e-8, "HiGHS primal/dual feasibility 1e-7 absolute on O(1) data; 1e-8 relative "
                   "on the optimal value is what it reaches on these small LPs (measured ~1e-15)",
                   at_10x=AT_10X_PRECISION)


def _lp(cost, x, y, A_ub=None, b_ub=None):
    res = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=x[None, :], b_eq=[y], bounds=(0, None), method="highs")
    return res


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
    id="eos.min_norm.vertex", paper="eos", source="paper 2, theory (spec: Minimizers, minimal norm)",
    title="min ‖β‖₁ = ‖w‖₂² and min ‖w‖₁ on M are at the vertex argmax x: y/x_max and √(y/x_max)",
    hypotheses=(sp.Gt(_x2, _x1, evaluate=False),),
    statement=sp.Eq(sp.Symbol("N_min"), _y / sp.Max(_x1, _x2)),
    predict=_min_norm_predict, evaluate=_min_norm_eval,
    tolerance=Tolerance("slsqp_lp", 1e-8, "HiGHS LP optimum (~1e-15) and SLSQP at ftol 1e-15 on the concave "
                        "‖w‖₁ (~1e-10 measured); 1e-8 relative", at_10x=AT_10X_PRECISION),
    domain=DISTINCT, negative_control=shifted_prediction(0.01),
    references=(Reference(TOY, {"beta_l1": 0.5, "w_l1": math.sqrt(0.5), "vertex": 2}, 1e-12, "toy: v_2"),),
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
    id="eos.min_norm.l2_interior", paper="eos", source="paper 2, theory (spec: Minimizers)",
    title="min ‖β‖₂ on P is the interior point y x/‖x‖²",
    hypotheses=(sp.Gt(_x1, 0, evaluate=False), sp.Gt(_x2, 0, evaluate=False)),
    statement=sp.Eq(sp.Matrix([_b1, _b2]), _y * sp.Matrix([_x1, _x2]) / (_x1**2 + _x2**2)),
    predict=lambda p: mins.min_l2_beta(_arr(p), p["y"]), evaluate=_l2_eval,
    tolerance=Tolerance("slsqp_qp", 1e-7, "SLSQP on a strictly convex QP at ftol 1e-15: KKT residual ~1e-9; "
                        "1e-7 relative to max β", at_10x=AT_10X_PRECISION),
    domain=GENERAL, negative_control=shifted_prediction(0.01),
    references=(Reference(TOY, [0.2, 0.4], 1e-12, "toy: (1, 2)/5"),),
)


def _min_sharp_eval(params, predicted):
    x, y, c = _arr(params), params["y"], params.get("c", 0.5)
    lp = _lp(8 * c * x**2, x, y)
    if not lp.success:
        return Observation(None, math.nan, f"linprog failed: {lp.message}", decided=False)
    vertex = int(np.argmax(lp.x)) + 1
    err = max(_rel(predicted["sharpness"], lp.fun), 0.0 if vertex == predicted["vertex"] else math.inf)
    return Observation({"sharpness": lp.fun, "vertex": vertex}, err, f"LP min S = {lp.fun:.12g} at vertex {vertex}")


MIN_SHARP = Claim(
    id="eos.min_sharpness.vertex", paper="eos", source="paper 2, theory (spec: Minimizers, minimal sharpness)",
    title="min S on P is at the vertex argmin x, S_min = 8c y x_min (4 y x_min at c = 1/2)",
    hypotheses=(sp.Gt(_x2, _x1, evaluate=False),),
    statement=sp.Eq(sp.Symbol("S_min"), 8 * _c * _y * sp.Min(_x1, _x2)),
    predict=lambda p: {k: v for k, v in mins.min_sharpness_solution(_arr(p), p["y"], p.get("c", 0.5)).items()
                       if k in ("sharpness", "vertex")},
    evaluate=_min_sharp_eval, tolerance=LP_TOL, domain=DISTINCT, negative_control=shifted_prediction(0.01),
    references=(Reference(TOY, {"sharpness": 4.0, "vertex": 1}, 1e-12, "toy: S_min = 4 at v_1"),),
    compare_reference=lambda p, e: max(_rel(p["sharpness"], e["sharpness"]),
                                       0.0 if p["vertex"] == e["vertex"] else math.inf),
)


def _disjoint_eval(params, predicted):
    x, y = _arr(params), params["y"]
    n = _lp(np.ones_like(x), x, y)
    s = _lp(x**2, x, y)
    # Among the min-norm solutions, the least sharpness: equal to S_min iff the two solution sets meet.
    joint = _lp(x**2, x, y, A_ub=np.ones((1, x.size)), b_ub=[n.fun * (1 + 1e-12)])
    if not (n.success and s.success and joint.success):
        return Observation(None, math.nan, "linprog failed", decided=False)
    disjoint = bool(joint.fun > s.fun * (1 + 1e-9))
    return Observation(disjoint, 0.0 if disjoint == predicted else 1.0,
                       f"min S over min-norm set {joint.fun:.12g} vs S_min {s.fun:.12g}: disjoint={disjoint}")


def _tie_broken(params, predicted, signed_size):
    """From a case with all x equal (not disjoint): x_1 moved by ±1 %, the prediction 'not disjoint' kept."""
    x = list(_arr(params))
    if max(x) > min(x):
        return params, predicted  # not at the boundary (every x equal): this case cannot refute the control
    x[0] *= 1 + signed_size
    return {**params, "x": tuple(x)}, predicted


DISJOINT = Claim(
    id="eos.minimizers.disjoint", paper="eos", source="paper 2, theory (spec: Minimizers)",
    title="The min-norm and min-sharpness solution sets are disjoint iff x_max > x_min (faces with ties)",
    hypotheses=(sp.Gt(_x1, 0, evaluate=False), sp.Gt(_x2, 0, evaluate=False)),
    statement=sp.Equivalent(sp.Symbol("disjoint"), sp.Gt(sp.Max(_x1, _x2), sp.Min(_x1, _x2), evaluate=False)),
    predict=lambda p: mins.minimizers_disjoint(_arr(p)), evaluate=_disjoint_eval,
    tolerance=Tolerance("exact_decision", 0.0, "a yes/no answer; the LP decides it with a 1e-9 margin",
                        at_10x=AT_10X_EXACT),
    domain=TIES, negative_control=two_sided("x_1 of a constant x", 0.01, _tie_broken),
    references=(Reference(TOY, True, 0.0, "toy: disjoint"),),
)


def _pareto_s(params):
    x, y, c = _arr(params), params["y"], params.get("c", 0.5)
    lo, hi = 8 * c * y * x.min(), 8 * c * y * x.max()
    return np.concatenate([np.linspace(lo, hi, 7), [hi * 1.2]])


def _pareto_eval(params, predicted):
    x, y, c = _arr(params), params["y"], params.get("c", 0.5)
    vals = []
    for s in _pareto_s(params):
        res = _lp(np.ones_like(x), x, y, A_ub=(8 * c * x**2)[None, :], b_ub=[s])
        if not res.success:
            return Observation(None, math.nan, f"linprog failed at s={s}: {res.message}", decided=False)
        vals.append(res.fun)
    return Observation(vals, _rel(predicted, vals), "LP min ||beta||_1 s.t. S <= s at 8 values of s")


PARETO = Claim(
    id="eos.pareto.front", paper="eos", source="paper 2, theory (spec: Pareto front)",
    title="N*(s) = min{‖β‖₁: S ≤ s} is the lower convex hull of (8cyx_i, y/x_i): piecewise linear",
    hypotheses=(sp.Gt(mins.xk, mins.xj, evaluate=False), sp.Le(8 * _c * _y * mins.xj, mins.s_sym, evaluate=False),
                sp.Le(mins.s_sym, 8 * _c * _y * mins.xk, evaluate=False)),
    statement=sp.Eq(sp.Symbol("N_star"), mins.PARETO_SEGMENT),
    predict=lambda p: mins.pareto_front(_arr(p), p["y"], _pareto_s(p), p.get("c", 0.5)),
    evaluate=_pareto_eval, tolerance=LP_TOL, domain=GENERAL, negative_control=shifted_prediction(0.01),
    references=(Reference({**TOY, "x": (1.0, 2.0)}, [1.0, 11 / 12, 5 / 6, 0.75, 2 / 3, 7 / 12, 0.5, 0.5], 1e-12,
                          "toy: N* = 1.5 - s/8 on [4, 8], 0.5 above"),),
)

D2 = Domain({"x": Vector(2, 0.2, 2.0, increasing=(0.1, 2.0)), "y": Real(0.2, 5.0, log=True),
             "c": Choice((0.5, 1.0))}, description="d = 2, x1 < x2")


def _d2_S(params):
    x, y, c = _arr(params), params["y"], params.get("c", 0.5)
    return np.linspace(8 * c * y * x[0], 8 * c * y * x[1], 5)


def _d2_eval(params, predicted):
    x, y, c = _arr(params), params["y"], params.get("c", 0.5)
    A = np.array([x, 8 * c * x**2])
    sol = np.array([np.linalg.solve(A, [y, S]) for S in _d2_S(params)])
    return Observation(sol.tolist(), _rel_scaled(predicted, sol), "numpy solve of <x,b> = y, S(b) = S")


PARETO_D2 = Claim(
    id="eos.pareto.d2_affine", paper="eos", source="paper 2, theory (spec: Pareto front, d = 2)",
    title="d = 2: every point of P is Pareto-optimal and β is affine in S",
    hypotheses=(sp.Gt(mins.x2, mins.x1, evaluate=False),),
    statement=sp.Eq(sp.Matrix(sp.symbols("beta_1 beta_2")), sp.Matrix(mins.D2_BETA)),
    predict=lambda p: mins.d2_beta_of_sharpness(_arr(p), p["y"], _d2_S(p), p.get("c", 0.5)),
    evaluate=_d2_eval,
    tolerance=Tolerance("linear_solve", 1e-10, "2x2 solve with condition number <= ~1e3 here (x2 - x1 >= 0.1): "
                        "1e3·eps ~ 2e-13; 1e-10 relative to max β", at_10x=AT_10X_PRECISION),
    domain=D2, negative_control=shifted_prediction(0.01),
)


def _stable_predict(params):
    x, y, c = _arr(params), params["y"], params.get("c", 0.5)
    return {"eta_stable_max": mins.stable_eta_max(x, y, c), "eta_min_norm_stable_max": mins.min_norm_stable_eta_max(x, y, c)}


STABLE_DELTA = 1e-3  # probe each threshold at (1 -/+ 1e-3)


def _gd_map_radius(x, y, w, eta, c):
    """Spectral radius of the finite-difference Jacobian of the GD map at w."""
    def step(v):
        r = x @ (v * v) - y
        return v * (1 - 4 * c * eta * r * x)

    h = 1e-7 * max(1.0, float(np.max(np.abs(w))))
    J = np.column_stack([(step(w + h * e) - step(w - h * e)) / (2 * h) for e in np.eye(w.size)])
    return float(np.max(np.abs(np.linalg.eigvals(J))))


def _stable_eval(params, predicted):
    x, y, c = _arr(params), params["y"], params.get("c", 0.5)
    wrong = []
    e1 = predicted["eta_stable_max"]
    for eta, expect in ((e1 * (1 - STABLE_DELTA), True), (e1 * (1 + STABLE_DELTA), False)):
        res = _lp(np.zeros_like(x), x, y, A_ub=(8 * c * x**2)[None, :], b_ub=[2 / eta])
        if (res.status == 0) != expect:
            wrong.append(f"LP feasibility at eta={eta:.6g}: {res.status == 0}")
    j = int(np.argmax(x))
    w_vertex = np.zeros_like(x)
    w_vertex[j] = math.sqrt(y / x[j])
    e2 = predicted["eta_min_norm_stable_max"]
    radii = []
    for eta, expect in ((e2 * (1 - STABLE_DELTA), True), (e2 * (1 + STABLE_DELTA), False)):
        rho = _gd_map_radius(x, y, w_vertex, eta, c)
        radii.append(rho)
        if (rho <= 1.0) != expect:
            wrong.append(f"GD-map spectral radius at the min-norm vertex, eta={eta:.6g}: {rho:.9f}")
    return Observation({"wrong": wrong, "radii": radii}, float(len(wrong)),
                       "; ".join(wrong) or f"both thresholds separate at ±{STABLE_DELTA:g}; radii {radii}")


STABLE = Claim(
    id="eos.stable_minima.thresholds", paper="eos", source="paper 2, theory (spec: linearly stable minima)",
    title="Stable minima {β∈P: S(β) ≤ 2/η} exist iff η ≤ 1/(4cyx_min); the min-norm vertex is stable iff η ≤ 1/(4cyx_max)",
    hypotheses=(sp.Gt(_eta, 0, evaluate=False),),
    statement=sp.Eq(sp.Symbol("eta_max"), mins.STABLE_ETA_MAX),
    predict=_stable_predict, evaluate=_stable_eval,
    tolerance=Tolerance("exact_decision", 0.0, f"both sides of each threshold at relative distance {STABLE_DELTA:g} "
                        "must be decided correctly (LP feasibility; finite-difference Jacobian, h = 1e-7)",
                        at_10x=AT_10X_EXACT),
    domain=DISTINCT, negative_control=shifted_prediction(0.01),
    references=(Reference(TOY, {"eta_stable_max": 0.5, "eta_min_norm_stable_max": 0.25}, 1e-12,
                          "toy: stable minima up to eta 0.5"),),
    compare_reference=lambda p, e: max(_rel(p["eta_stable_max"], e["eta_stable_max"]),
                                       _rel(p["eta_min_norm_stable_max"], e["eta_min_norm_stable_max"])),
)


CLAIMS = (
    HESSIAN_FORMULA, HESSIAN_RANK1, MIN_NORM, MIN_L2, MIN_SHARP, DISJOINT, PARETO, PARETO_D2, STABLE,
)
