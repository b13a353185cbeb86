r"""``eos.stable_minima.*``: the minima of P at which GD with step η is linearly stable (η S < 2), and
the thresholds of η between them.

Predictions from :mod:`biasaudit.theory.eos_minimizers`; observations from the finite-difference Jacobian of
the GD map. ``eos.stable_minima.paper_loss_factor``: called without a loss factor, the threshold and s_GF are the
paper's (c = 1/2).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.claims.eos._common import DISTINCT, TOY, _arr, _lp, _rel
from biasaudit.domain import Domain, Integer, Real, Vector
from biasaudit.ledger import AT_10X_EXACT, Claim, Observation, Reference, Tolerance, shifted_prediction
from biasaudit.theory import eos_minimizers as mins
from biasaudit.theory.eos_minimizers import STABLE_ETA, VERTEX_SHARPNESS, eta_j
from biasaudit.theory.eos_model import S_sym, c_sym, eta_sym, vertices

__all__ = ["CLAIMS"]


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
    w_vertex = np.sqrt(vertices(x, y)[j])  # the min-norm vertex v_j = (y/x_j) e_j, x_j = x_max
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
    id="eos.stable_minima.thresholds", paper="eos", source="paper 2, theory (linearly stable minima)",
    title="Stable minima {β∈P: S(β) ≤ 2/η} exist iff η ≤ 1/(4cyx_min); the min-norm vertex is stable iff η ≤ 1/(4cyx_max)",
    hypotheses=(sp.Gt(eta_sym, 0, evaluate=False), sp.Eq(S_sym, VERTEX_SHARPNESS.expr)),
    statement=STABLE_ETA.eq(eta_j), formulas=(STABLE_ETA,),
    predict=_stable_predict, evaluate=_stable_eval,
    tolerance=Tolerance("exact_decision", 0.0, f"both sides of each threshold at relative distance {STABLE_DELTA:g} "
                        "must be decided correctly (LP feasibility; finite-difference Jacobian, h = 1e-7)",
                        at_10x=AT_10X_EXACT),
    domain=DISTINCT, negative_control=shifted_prediction(0.01),
    references=(Reference(TOY, {"eta_stable_max": 0.5, "eta_min_norm_stable_max": 0.25}, 1e-12,
                          "toy: stable minima up to eta 0.5", origin="derived"),),
    compare_reference=lambda p, e: max(_rel(p["eta_stable_max"], e["eta_stable_max"]),
                                       _rel(p["eta_min_norm_stable_max"], e["eta_min_norm_stable_max"])),
    notes="eta_j is the largest step at which the vertex v_j (sharpness S = 8cyx_j) is linearly stable (eta S <= 2); "
          "the prediction evaluates it at x_j = x_min (the flattest minimum: some minimum is stable) and at "
          "x_j = x_max (the min-norm vertex).",
)


PAPER_LOSS_FACTOR = 0.5  # paper 2 writes the loss as L = (1/2) r^2


def _conventions_predict(params):
    x, y = _arr(params), params["y"]
    from biasaudit.theory.eos_flow import s_gf
    from biasaudit.theory.eos_model import eos_problem

    problem = eos_problem(x, y, np.full(x.size, params["alpha"]), loss_factor=PAPER_LOSS_FACTOR)
    return {"eta_stable_max": mins.stable_eta_max(x, y, PAPER_LOSS_FACTOR), "s_gf": s_gf(problem)}


def _conventions_eval(params, predicted):
    """The same quantities called with the library's defaults (no loss factor given)."""
    from biasaudit.theory.eos_flow import s_gf
    from biasaudit.theory.eos_model import eos_problem

    x, y = _arr(params), params["y"]
    seen = {"eta_stable_max": mins.stable_eta_max(x, y), "s_gf": s_gf(eos_problem(x, y, np.full(x.size,
                                                                                                 params["alpha"])))}
    error = max(_rel(seen[key], predicted[key]) for key in seen)
    return Observation(seen, error, f"with the defaults: eta_stable_max = {seen['eta_stable_max']:.6g}, s_GF = "
                                    f"{seen['s_gf']:.6g}; relative gap to c = 1/2: {error:.3g}")


CONVENTIONS = Claim(
    id="eos.stable_minima.paper_loss_factor", paper="eos", source="paper 2, setting (the loss L = (1/2) r^2)",
    title="The toolkit's convention is the paper's: called without a loss factor, the stable-minima threshold "
          "and s_GF are those of c = 1/2 (L = r²/2)",
    hypotheses=(sp.Eq(c_sym, sp.Rational(1, 2)),),
    statement=sp.And(STABLE_ETA.eq(eta_j), sp.Eq(c_sym, sp.Rational(1, 2))),
    formulas=(STABLE_ETA,),
    predict=_conventions_predict, evaluate=_conventions_eval,
    tolerance=Tolerance("same_computation", 0.0, "the default and the explicit c = 1/2 run the same arithmetic: "
                        "any gap is a different loss factor", at_10x=AT_10X_EXACT),
    domain=Domain({"d": Integer(2, 4), "x": Vector("d", 0.2, 2.0, increasing=(0.1, 1.5)),
                   "y": Real(0.2, 5.0, log=True), "alpha": Real(0.01, 0.3, log=True)}),
    negative_control=shifted_prediction(0.01),
    notes="Every other eos claim passes c; the CLI, the API and the figures call with the defaults, so this claim "
          "is where a verdict sees them (a default c = 1 would halve eta_stable_max and double s_GF).",
)

CLAIMS = (STABLE, CONVENTIONS)
