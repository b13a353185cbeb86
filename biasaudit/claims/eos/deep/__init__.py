r"""``eos.deep.*``: shared weights at depth L: the minimal-sharpness point of P is interior.

Prediction from :mod:`biasaudit.theory.eos_minimizers`; observation from SLSQP.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy.optimize import minimize

from biasaudit.claims.eos._common import _arr, _rel_scaled
from biasaudit.domain import Choice, Domain, Integer, Real, Vector
from biasaudit.ledger import AT_10X_PRECISION, Claim, Observation, Tolerance, two_sided
from biasaudit.theory import eos_minimizers as mins
from biasaudit.theory.eos_minimizers import DEEP_MIN_WEIGHT, L_sym, kappa
from biasaudit.theory.eos_model import beta_i, d_sym, i_sym, x_i, y_sym

__all__ = ["CLAIMS"]


DEEP_DOMAIN = Domain(
    {"d": Integer(2, 5), "x": Vector("d", 0.3, 3.0, log=True), "y": Real(0.3, 3.0, log=True), "L": Integer(3, 6),
     "c": Choice((0.5, 1.0))},
    description="depth L = 3..6",
)


def _deep_eval(params, predicted):
    x, y, L, c = _arr(params), params["y"], params["L"], params.get("c", 0.5)
    start = np.full_like(x, y / x.sum())
    scale = float(mins.deep_sharpness(x, start, L, c))
    res = minimize(lambda b: float(mins.deep_sharpness(x, np.maximum(b, 0), L, c)) / scale, start,
                   jac=lambda b: 2 * c * L**2 * x**2 * (2 - 2 / L) * np.maximum(b, 1e-300) ** (1 - 2 / L) / scale,
                   method="SLSQP", bounds=[(0, None)] * x.size,
                   constraints=[{"type": "eq", "fun": lambda b: x @ b / y - 1, "jac": lambda b: x / y}],
                   options={"ftol": 1e-15, "maxiter": 1000})  # 1e-16 is below roundoff: SLSQP may never stop
    if not res.success:
        return Observation(None, math.nan, f"SLSQP failed: {res.message}", decided=False)
    return Observation(res.x.tolist(), _rel_scaled(predicted, res.x),
                       f"SLSQP argmin of L^2 sum x^2 beta^(2-2/L) on P (L = {L})")


def _deep_power(params, power):
    """The interior minimizer raised to ``power`` and put back on P (the negative controls)."""
    x, y = _arr(params), params["y"]
    beta = mins.deep_min_sharpness_beta(x, y, params["L"]) ** power
    return beta * (y / (x @ beta))


DEEP = Claim(
    id="eos.deep.min_sharpness_interior", paper="eos", source="paper 2, theory (Deep shared weights)",
    title="β = w^L (L ≥ 3): S = 2cL²Σx_i²β_i^{2−2/L} is minimized on P at the interior β_i ∝ x_i^{−L/(L−2)}",
    # κ puts the point on P
    hypotheses=(sp.Ge(L_sym, 3, evaluate=False), sp.Eq(sp.Sum(x_i * beta_i, (i_sym, 1, d_sym)), y_sym)),
    statement=sp.Eq(beta_i, kappa * DEEP_MIN_WEIGHT.expr), formulas=(DEEP_MIN_WEIGHT,),
    predict=lambda p: mins.deep_min_sharpness_beta(_arr(p), p["y"], p["L"]), evaluate=_deep_eval,
    tolerance=Tolerance("slsqp_convex", 1e-6, "SLSQP on a strictly convex objective, ftol 1e-15 (flat to second "
                        "order: ~sqrt(ftol)·cond; worst 4.0e-8 measured); the tolerance is the power of ten at least "
                        "10x the worst error measured over the thorough profile", at_10x=AT_10X_PRECISION),
    domain=DEEP_DOMAIN,
    negative_control=two_sided("exponent of the interior point", 0.01, lambda p, v, s: (p, _deep_power(p, 1 + s))),
)


CLAIMS = (DEEP,)
