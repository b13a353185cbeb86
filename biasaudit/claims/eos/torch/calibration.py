r"""The network seed studies' decisions, calibrated on placebo data: ``eos.torch.decision_calibration.vs_placebo``.

Paper 2's network claims (and their positive controls) are decided by :func:`~biasaudit.validation.decision.three_way`
(a signed effect) or :func:`~biasaudit.validation.decision.equivalence_decision` (a value within ±δ), with seeds
added in looks (:mod:`biasaudit.validation.sequential`: 3, then 5 seeds at the quick tier, α spent over them).
This claim runs those decisions, with those looks, on simulated seed values where the answer is known
(:mod:`biasaudit.validation.placebo`): at the edge of the null (a signed claim's true mean 0, an equivalence
claim's exactly δ) a confirmation is an error, at the edge of the effect (δ, and 0) a refutation is. Each rate
must stay at or below α (decided as :mod:`biasaudit.claims.calibration` says).
"""

from __future__ import annotations

from biasaudit.claims.calibration import calibration_claim
from biasaudit.validation.placebo import PLACEBOS

__all__ = ["CLAIMS", "LEVEL"]

LEVEL = 0.05  # the studies' alpha (biasaudit.claims.eos.torch._study.LEVEL)

CLAIMS = (
    calibration_claim(
        "eos.torch.decision_calibration.vs_placebo", "eos", PLACEBOS, level=LEVEL,
        source="measured here (notes/validation-eos.md, 'Decisions that decide'): the network seed studies' "
               "decisions with their looks, on simulated seed values",
        title="the network seed studies' decisions, with seeds added in looks (3, then 5) and alpha = 0.05 spent over "
              "them, confirm a false claim and refute a true one at most at the rate alpha (to within two binomial "
              "standard errors of 300 simulated studies, 0.025), on normal and heavy-tailed (t with 3 degrees of freedom) seeds",
        domain="the quick tier's looks; seed values of spread delta",
        notes="the placebos: biasaudit.validation.placebo.PLACEBOS; the looks and spending: "
              "biasaudit.validation.sequential"),
)
