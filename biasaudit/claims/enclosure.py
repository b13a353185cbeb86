r"""Certified claims: a float prediction checked against a proven enclosure of the exact value.

Such a claim predicts a boundary in floats, from the theory's formula (lambdified once), and observes a proven
enclosure :math:`[l, h]` of the exact value (Arb ball arithmetic on the same sympy expression, or on the root of a
theory function, :mod:`biasaudit.numerics.certified_boundaries`), beside an independent interval from mpmath's
``iv`` context. The error of one boundary is how far its prediction p lies outside the enclosure, relative:

.. math:: e = \max(l - p,\ p - h,\ 0)/|p|.

The case is decided only when every enclosure was proved and is at most :data:`WIDTH_TARGET` wide (relative); an
mpmath interval that misses the ball is a contradiction between two proofs and refutes (e = 1).
"""

from __future__ import annotations

import math

from biasaudit.ledger import Observation, Tolerance
from biasaudit.numerics.certified import relative_width
from biasaudit.numerics.certified_boundaries import FLOAT_SLACK_REL, float_gap

__all__ = ["WIDTH_TARGET", "FLOAT_ROUNDING", "enclosure_observation"]

WIDTH_TARGET = 1e-12  # an enclosure wider than this (relative) does not decide: it would certify little

FLOAT_ROUNDING = Tolerance(
    "float_rounding", FLOAT_SLACK_REL,
    "relative: the float prediction's own rounding (a few ulp for a closed form, up to 1.3e-14 measured for the "
    "root tau near 0), 10x below the width target 1e-12 and 1e11 below the 1 % controls",
    at_10x="10x (1e-12) still sits 1e10 below the 1 % the controls move the prediction, so no verdict turns")


def enclosure_observation(predicted: dict, certificates, reference: dict) -> Observation:
    """The observation of a certified claim: each predicted float against its tight enclosure, with the mpmath
    ``reference`` intervals (field -> (lo, hi)) required to meet the enclosures.

    Parameters
    ----------
    predicted : dict
        Field -> the float prediction.
    certificates : Certificates
        From :mod:`biasaudit.numerics.certified_boundaries` (``tight`` enclosures, ``not_certified`` reasons).
    reference : dict
        Field -> the mpmath ``iv`` interval as floats (fields without one are not cross-checked).

    Returns
    -------
    Observation
        ``observed``: field -> ``{"certified": [lo, hi]}`` (the tight enclosure; the report shows it marked); ``error``: the largest relative gap (1.0 where a reference
        misses its enclosure); undecided where a field was not proved or is wider than :data:`WIDTH_TARGET`.
    """
    tight = certificates.tight
    missing = [k for k in predicted if k not in tight]
    if missing:
        reasons = "; ".join(f"{k}: {certificates.not_certified.get(k, 'not enclosed')}" for k in missing)
        return Observation(None, math.nan, f"no proven enclosure of {missing}: {reasons}", decided=False)
    widths = {k: relative_width(tight[k].lo, tight[k].hi) for k in predicted}
    wide = {k: w for k, w in widths.items() if w > WIDTH_TARGET}
    observed = {k: {"certified": tight[k].to_json()} for k in predicted}  # the report marks these "certified"
    if wide:
        return Observation(observed, math.nan, f"enclosures wider than {WIDTH_TARGET:g}: {wide}", decided=False)
    clash = [k for k, (lo, hi) in reference.items() if k in tight and (hi < tight[k].lo or lo > tight[k].hi)]
    if clash:
        return Observation(observed, 1.0, f"the independent mpmath interval misses the Arb enclosure of {clash}: "
                                          "the enclosure or its reference is wrong")
    gaps = {k: float_gap(tight[k], float(v)) for k, v in predicted.items()}
    worst = max(gaps, key=gaps.get)
    return Observation(observed, gaps[worst],
                       f"{len(gaps)} enclosures (widest {max(widths.values()):.2e} relative), mpmath meets "
                       f"{sorted(k for k in reference if k in tight)}; largest float gap outside: {worst} "
                       f"{gaps[worst]:.2e}")
