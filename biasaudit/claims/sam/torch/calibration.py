r"""SAM's network seed studies' decisions, calibrated on placebo data: ``sam.torch.decision_calibration.*``.

Paper 1's network claims (the ladder of "minor first, major last", the collapse boundaries, the radius study) read
the quick tier's 12 seeds in one look with :func:`~biasaudit.validation.decision.three_way` (a signed effect); the
ladder's two networks are a Holm family (each read at its Holm level, :func:`biasaudit.validation.sam_stats.
holm_levels`); every data control is a TOST equivalence to 0 within δ. ``vs_placebo`` runs those decisions on
simulated seed values where the answer is known (:data:`biasaudit.validation.placebo.SAM_PLACEBOS`: normal, t3 and
ternary laws, the last a statistic with few distinct values and ties, as the collapse contrast has) and states the rates the design controls: a false
confirmation, family-wise for the Holm pair (Holm's guarantee), and a false refutation per claim (each refutation
as trivial is read alone at α: Holm adjusts the interval that confirms, or refutes on the wrong side, but the
equivalence inside ±δ is read at α). Decided as :mod:`biasaudit.claims.calibration`
says.

The failing side is a claim of its own: read family-wise, the Holm pair's refutations are not controlled. With both
networks true at the effect's edge, at least one of the two is refuted in about 2α of the studies
(``holm_pair_refutes_above_alpha_vs_placebo``).
"""

from __future__ import annotations

import math

import sympy as sp

from biasaudit.claims.calibration import calibration_claim, placebo_rows
from biasaudit.contract import ExperimentContract
from biasaudit.domain import Domain, Fixed
from biasaudit.ledger import Claim, Observation, Tolerance, broken_hypothesis
from biasaudit.validation.placebo import SAM_PLACEBOS, SAM_QUICK_SEEDS

__all__ = ["CLAIMS", "LEVEL"]

LEVEL = 0.05  # the studies' alpha (the ladder's, the collapse designs' and the radius study's LEVEL)


def _controlled(placebo) -> str:
    """The rate the design controls: family-wise for a Holm family's confirmations, per member otherwise."""
    return "family" if placebo.family == 1 or placebo.truth == "null" else "member"


_PAIR_AT_EFFECT = tuple(p for p in SAM_PLACEBOS if p.family > 1 and p.truth == "effect")
_PRIMARY_LAW = "normal"  # the failing side is stated on normal seed values; the other laws are in its record
ABOVE_ALPHA = Tolerance(
    "familywise_refute_rate", 0.0,
    "0 when the Holm pair's family-wise false-refute rate (normal seeds) reads above alpha (its Wilson 95 % lower end "
    "exceeds alpha); refuted when it reads within alpha (biasaudit.claims.calibration.rate_reading); the error is "
    "how far the rate falls short of alpha plus the tolerance, relative to alpha")


def _evaluate_pair(params, predicted) -> Observation:
    level = predicted["level"]
    rows = placebo_rows(_PAIR_AT_EFFECT, level, predicted["rule"], lambda p: "family")
    primary = next(r for r in rows if r["placebo"]["law"] == _PRIMARY_LAW)
    reading, tol = primary["reading"], primary["tolerance"]
    error = {"above": 0.0, "within": (level + tol - primary["read_rate"]) / level}.get(reading, math.nan)
    detail = (f"the ladder's Holm pair decided by '{predicted['rule']}', both networks true at the effect's edge, "
              f"{SAM_QUICK_SEEDS} seeds, {_PAIR_AT_EFFECT[0].n_studies} studies: at least one refuted in "
              + "; ".join(f"{r['placebo']['law']} {r['read_rate']:.3f} [{r['read_interval'][0]:.3f}, "
                          f"{r['read_interval'][1]:.3f}] ({r['reading']}; each alone {r['member_error_rate']:.3f})"
                          for r in rows)
              + f"; alpha {level:g}, within: at most alpha + {tol:.3f}")
    return Observation({"rows": rows, "level": level}, error, detail, decided=reading != "unresolved")


_p_family = sp.Symbol("P_familywise_false_refute", positive=True)
_alpha = sp.Symbol("alpha", positive=True)

CLAIMS = (
    calibration_claim(
        "sam.torch.decision_calibration.vs_placebo", "sam", SAM_PLACEBOS, level=LEVEL, read=_controlled,
        source="measured here (notes/validation-sam.md, 'Calibration'): the network seed studies' decisions on "
               "simulated seed values",
        title="SAM's network seed studies' decisions at 12 seeds (the ladder's two networks Holm-adjusted) confirm a "
              "false claim (family-wise for the Holm pair) and refute a true one (per claim) at most at the rate "
              "alpha = 0.05, to within two binomial standard errors of 300 simulated studies (0.025), on normal, "
              "heavy-tailed (t3) and ternary seeds; their data controls pass a bias of delta at most at the rate alpha",
        domain="the quick tier's 12 seeds in one look; seed values of spread delta",
        notes="the placebos: biasaudit.validation.placebo.SAM_PLACEBOS"),
    Claim(
        id="sam.torch.decision_calibration.holm_pair_refutes_above_alpha_vs_placebo", paper="sam", kind="experiment",
        source="measured here (notes/validation-sam.md, 'Calibration'): the failing side of the ladder's Holm pair",
        title="read family-wise, the ladder's Holm pair refutes at least one of two networks that both show the "
              "effect at its edge more often than alpha = 0.05 (Holm adjusts the interval that confirms; a refutation "
              "as trivial is read at alpha alone), on normal seeds at 12 seeds",
        hypotheses=(sp.Gt(_alpha, 0, evaluate=False),),
        statement=sp.Gt(_p_family, _alpha, evaluate=False),
        no_closed_form="an error rate of a decision rule, counted over simulated studies",
        predict=lambda params: {"level": LEVEL, "rule": "contract"}, evaluate=_evaluate_pair, tolerance=ABOVE_ALPHA,
        domain=Domain({"looks": Fixed((SAM_QUICK_SEEDS,))}, description="the ladder's Holm pair at the quick tier's "
                      "12 seeds; seed values of spread delta"),
        negative_control=broken_hypothesis(
            "the refutations' level", lambda p, v: (p, {**v, "rule": "split"}),
            reason="each member decided at alpha/4 on both sides (Bonferroni at half the level): the family-wise "
                   "refutation rate is then at most alpha/2"),
        contract=ExperimentContract(role="cross_check"), samples={"ci": 1, "thorough": 1}, controls=1,
        notes="the per-claim false-refute rate of each member stays at alpha (sam.torch.decision_calibration."
              "vs_placebo)"),
)
