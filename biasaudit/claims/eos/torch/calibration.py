r"""The network seed studies' decisions, calibrated on placebo data: ``eos.torch.decision_calibration.vs_placebo``.

Paper 2's network claims (and their positive controls) are decided by :func:`~biasaudit.validation.decision.three_way`
(a signed effect) or :func:`~biasaudit.validation.decision.equivalence_decision` (a value within ±δ), with seeds
added in looks (:mod:`biasaudit.validation.sequential`: 3, then 5 seeds at the quick tier, α spent over them).
This claim runs those decisions, with those looks, on simulated seed values where the answer is known
(:mod:`biasaudit.validation.placebo`): at the edge of the null (a signed claim's true mean 0, an equivalence
claim's exactly δ) a confirmation is an error, at the edge of the effect (δ, and 0) a refutation is. Each rate
must stay at or below α; the simulation resolves a rate to about ±0.025 (300 studies), so the claim is decided on
the rates' Wilson 95 % intervals: confirmed when every upper end lies below α + :data:`RESOLUTION`, refuted when
some lower end lies above α. Its control replaces the decisions by the mean alone (no seed interval), which
refutes an effect at its edge half the time.
"""

from __future__ import annotations

import math

import sympy as sp

from biasaudit.contract import ExperimentContract
from biasaudit.domain import Domain, Fixed
from biasaudit.ledger import Claim, Observation, Tolerance, broken_hypothesis
from biasaudit.validation.sequential import LOOKS

__all__ = ["CLAIMS", "LEVEL", "RESOLUTION"]

LEVEL = 0.05  # the studies' alpha (biasaudit.claims.eos.torch._study.LEVEL)
RESOLUTION = 0.03  # a rate at alpha over 300 studies has the Wilson 95 % interval [0.031, 0.081]: 0.03 above alpha
CALIBRATED = Tolerance(
    "placebo_rate", 0.0,
    "0 when every error rate's Wilson 95 % upper end lies below alpha + 0.03 (the resolution of 300 simulated "
    "studies); otherwise how far the largest upper end reaches above it, relative to alpha")


def _predict(params) -> dict:
    return {"level": LEVEL, "rule": "contract"}


def _evaluate(params, predicted) -> Observation:
    from biasaudit.validation.placebo import PLACEBOS, error_rates

    level = predicted["level"]
    rows = [error_rates(p, level=level, rule=predicted["rule"]) for p in PLACEBOS]
    upper = max(r["error_interval"][1] for r in rows)
    lower = max(r["error_interval"][0] for r in rows)
    worst = max(rows, key=lambda r: r["error_rate"])
    decided = upper <= level + RESOLUTION or lower > level
    error = max(0.0, upper - level - RESOLUTION) / level if decided else math.nan
    table = "; ".join(
        f"{r['placebo']['decision']} {r['placebo']['truth']} {r['placebo']['law']}: wrong "
        f"{r['error_rate']:.3f} [{r['error_interval'][0]:.3f}, {r['error_interval'][1]:.3f}], mean seeds "
        f"{r['mean_seeds']:.1f}" for r in rows)
    detail = (f"decisions by '{predicted['rule']}' over the looks {PLACEBOS[0].looks} at alpha {level:g}, "
              f"{PLACEBOS[0].n_studies} studies each: {table}; worst "
              f"{worst['placebo']['decision']} {worst['placebo']['truth']} {worst['placebo']['law']} at "
              f"{worst['error_rate']:.3f}")
    return Observation({"rows": rows, "level": level, "resolution": RESOLUTION}, error, detail, decided=decided)


_alpha, _p_confirm, _p_refute = sp.symbols("alpha P_false_confirm P_false_refute", positive=True)

CLAIMS = (
    Claim(
        id="eos.torch.decision_calibration.vs_placebo", paper="eos", kind="experiment",
        source="measured here (notes/validation-eos.md, 'Decisions that decide'): the network seed studies' "
               "decisions with their looks, on simulated seed values",
        title="the network seed studies' decisions, with seeds added in looks (3, then 5) and alpha = 0.05 spent over "
              "them, confirm a false claim and refute a true one at most at the rate alpha (to within the 0.03 "
              "resolution of 300 simulated studies), on normal and heavy-tailed (t with 3 degrees of freedom) seeds",
        hypotheses=(sp.Gt(_alpha, 0, evaluate=False),),
        statement=sp.And(sp.Le(_p_confirm, _alpha), sp.Le(_p_refute, _alpha)),
        no_closed_form="error rates of a decision rule, counted over simulated studies",
        predict=_predict, evaluate=_evaluate, tolerance=CALIBRATED,
        domain=Domain({"looks": Fixed(LOOKS["quick"])}, description="the quick tier's looks; seed values of spread "
                      "delta"),
        negative_control=broken_hypothesis(
            "the decision's seed interval", lambda p, v: (p, {**v, "rule": "point"}),
            reason="the mean alone decides (no interval): an effect at its edge is refuted about half the time"),
        contract=ExperimentContract(role="cross_check"), samples={"ci": 1, "thorough": 1}, controls=1,
        notes="the placebos: biasaudit.validation.placebo.PLACEBOS; the looks and spending: "
              "biasaudit.validation.sequential"),
)
