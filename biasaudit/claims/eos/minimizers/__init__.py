r"""``eos.minimizers.*``: the minimal-norm and minimal-sharpness points of P differ (where the x_j are
distinct): norm and sharpness conflict.

Prediction from :mod:`biasaudit.theory.eos_minimizers`; observation from ``scipy.optimize.linprog`` (HiGHS).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.eos._common import TIES, TOY, _arr, _lp
from biasaudit.ledger import AT_10X_EXACT, Claim, Observation, Reference, Tolerance, two_sided
from biasaudit.theory import eos_minimizers as mins
from biasaudit.theory.eos_minimizers import disjoint
from biasaudit.theory.eos_model import x_i

__all__ = ["CLAIMS"]


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
    id="eos.minimizers.disjoint", paper="eos", source="paper 2, theory (Minimizers)",
    title="The min-norm and min-sharpness solution sets are disjoint iff x_max > x_min (faces with ties)",
    hypotheses=(sp.Gt(x_i, 0, evaluate=False),),
    statement=sp.Equivalent(disjoint, mins.DISJOINT.expr), formulas=(mins.DISJOINT,),
    predict=lambda p: mins.minimizers_disjoint(_arr(p)), evaluate=_disjoint_eval,
    tolerance=Tolerance("exact_decision", 0.0, "a yes/no answer; the LP decides it with a 1e-9 margin",
                        at_10x=AT_10X_EXACT),
    domain=TIES, negative_control=two_sided("x_1 of a constant x", 0.01, _tie_broken),
    references=(Reference(TOY, True, 0.0, "toy: disjoint", origin="derived"),),
)


CLAIMS = (DISJOINT,)
