r"""``eos.min_sharpness.*``: the minimal-sharpness point of P sits at the vertex of the smallest x_j.

Prediction from :mod:`biasaudit.theory.eos_minimizers`; observation from ``scipy.optimize.linprog`` (HiGHS).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.eos._common import DISTINCT, LP_VERTEX_TOL, TOY, _arr, _lp, _rel
from biasaudit.ledger import Claim, Observation, Reference, shifted_prediction
from biasaudit.theory import eos_minimizers as mins
from biasaudit.theory.eos_minimizers import VERTEX_SHARPNESS, S_min
from biasaudit.theory.eos_model import x_j, x_max, x_min

__all__ = ["CLAIMS"]


def _min_sharp_eval(params, predicted):
    x, y, c = _arr(params), params["y"], params.get("c", 0.5)
    lp = _lp(8 * c * x**2, x, y)
    if not lp.success:
        return Observation(None, math.nan, f"linprog failed: {lp.message}", decided=False)
    vertex = int(np.argmax(lp.x)) + 1
    err = max(_rel(predicted["sharpness"], lp.fun), 0.0 if vertex == predicted["vertex"] else math.inf)
    return Observation({"sharpness": lp.fun, "vertex": vertex}, err, f"LP min S = {lp.fun:.12g} at vertex {vertex}")


MIN_SHARP = Claim(
    id="eos.min_sharpness.vertex", paper="eos", source="paper 2, theory (Minimizers, minimal sharpness)",
    title="min S on P is at the vertex argmin x, S_min = 8c y x_min (4 y x_min at c = 1/2)",
    hypotheses=(sp.Eq(x_j, x_min), sp.Gt(x_max, x_min, evaluate=False)),
    statement=VERTEX_SHARPNESS.eq(S_min), formulas=(VERTEX_SHARPNESS,),
    predict=lambda p: {k: v for k, v in mins.min_sharpness_solution(_arr(p), p["y"], p.get("c", 0.5)).items()
                       if k in ("sharpness", "vertex")},
    evaluate=_min_sharp_eval, tolerance=LP_VERTEX_TOL, domain=DISTINCT, negative_control=shifted_prediction(0.01),
    references=(Reference(TOY, {"sharpness": 4.0, "vertex": 1}, 1e-12, "toy: S_min = 4 at v_1", origin="derived"),),
    compare_reference=lambda p, e: max(_rel(p["sharpness"], e["sharpness"]),
                                       0.0 if p["vertex"] == e["vertex"] else math.inf),
)


CLAIMS = (MIN_SHARP,)
