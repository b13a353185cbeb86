r"""``eos.pareto.*``: the Pareto front of ‖β‖₁ against sharpness on P, and its affine form at d = 2.

Predictions from :mod:`biasaudit.theory.eos_minimizers`; observations from ``scipy.optimize.linprog`` (HiGHS).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.eos._common import GENERAL, LP_TOL, TOY, _arr, _lp, _rel, _rel_scaled
from biasaudit.domain import Choice, Domain, Real, Vector
from biasaudit.ledger import AT_10X_PRECISION, Claim, Observation, Reference, Tolerance, shifted_prediction
from biasaudit.theory import eos_minimizers as mins
from biasaudit.theory.eos_minimizers import D2_BETA_1, D2_BETA_2, VERTEX_SHARPNESS, N_star, s_sym, x1, x2
from biasaudit.theory.eos_model import betas, x_j, x_k

__all__ = ["CLAIMS"]


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
    id="eos.pareto.front", paper="eos", source="paper 2, theory (Pareto front)",
    title="N*(s) = min{‖β‖₁: S ≤ s} is the lower convex hull of (8cyx_i, y/x_i): piecewise linear",
    hypotheses=(sp.Gt(x_k, x_j, evaluate=False), sp.Le(VERTEX_SHARPNESS.expr, s_sym, evaluate=False),
                sp.Le(s_sym, VERTEX_SHARPNESS.expr.subs(x_j, x_k), evaluate=False)),
    statement=mins.PARETO.eq(N_star), formulas=(mins.PARETO,),
    predict=lambda p: mins.pareto_front(_arr(p), p["y"], _pareto_s(p), p.get("c", 0.5)),
    evaluate=_pareto_eval, tolerance=LP_TOL, domain=GENERAL, negative_control=shifted_prediction(0.01),
    slack_reason=("the sampled x are far from ties (worst 1.7e-14), but the domain holds near-tied x, where the LP "
                  "may return the other vertex, off by the tie's gap (a hypothesis case: 5e-12); the tolerance "
                  "bounds the solver's feasibility over the whole domain"),
    references=(Reference({**TOY, "x": (1.0, 2.0)}, [1.0, 11 / 12, 5 / 6, 0.75, 2 / 3, 7 / 12, 0.5, 0.5], 1e-12,
                          "toy: N* = 1.5 - s/8 on [4, 8], 0.5 above", origin="derived"),),
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
    id="eos.pareto.d2_affine", paper="eos", source="paper 2, theory (Pareto front, d = 2)",
    title="d = 2: every point of P is Pareto-optimal and β is affine in S",
    hypotheses=(sp.Gt(x2, x1, evaluate=False),),
    statement=sp.And(D2_BETA_1.eq(betas(2)[0]), D2_BETA_2.eq(betas(2)[1])), formulas=(D2_BETA_1, D2_BETA_2),
    predict=lambda p: mins.d2_beta_of_sharpness(_arr(p), p["y"], _d2_S(p), p.get("c", 0.5)),
    evaluate=_d2_eval,
    tolerance=Tolerance("linear_solve", 1e-13, "2x2 solve with condition number <= ~1e3 here (x2 - x1 >= 0.1): "
                        "1e3·eps ~ 2e-13 at most, relative to max β (worst 3.6e-15 measured); the tolerance is the "
                        "power of ten at least 10x the worst error measured over the thorough profile",
                        at_10x=AT_10X_PRECISION),
    domain=D2, negative_control=shifted_prediction(0.01),
)


CLAIMS = (PARETO, PARETO_D2)
