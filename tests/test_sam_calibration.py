"""SAM's network decisions on placebo data (biasaudit.claims.sam.torch.calibration, validation.placebo families)."""

from __future__ import annotations

import pytest

from biasaudit.ledger import Verdict, run_claim
from biasaudit.plumbing import InputError
from biasaudit.validation.placebo import SAM_PLACEBOS, SAM_QUICK_SEEDS, Placebo, error_rates


def test_the_placebos_read_as_many_seeds_as_the_sam_studies():
    from biasaudit.validation.sam_ladder_config import AUDIT_TIERS, ladder_settings
    from biasaudit.validation.sam_regimes import DESIGNS, design_settings

    counts = {len(ladder_settings(m, "quick")["seeds"]) for m in AUDIT_TIERS if "quick" in AUDIT_TIERS[m]}
    counts |= {len(design_settings(d, "quick")["seeds"]) for d in DESIGNS if "quick" in DESIGNS[d]}
    assert counts == {SAM_QUICK_SEEDS}
    assert {p.looks for p in SAM_PLACEBOS} == {(SAM_QUICK_SEEDS,)}


def test_a_holm_pair_is_read_family_wise_and_each_member_alone():
    from biasaudit.claims.calibration import rate_tolerance

    effect = error_rates(Placebo("positive", "effect", "normal", 1.0, (12,), 300, family=2))
    m = effect["member_error_rate"]
    assert abs(m - 0.05) <= rate_tolerance(0.05, 600)  # each member is refuted at its TOST's alpha at the edge
    # two independent members: at least one refuted with probability 1 - (1 - m)^2, about 2 alpha
    assert abs(effect["error_rate"] - (1 - (1 - m) ** 2)) <= 2 * rate_tolerance(0.1, 300)
    null = error_rates(Placebo("positive", "null", "normal", 1.0, (12,), 300, family=2))
    assert null["error_rate"] <= 0.05 + rate_tolerance(0.05, 300)  # Holm: family-wise false confirmation <= alpha
    split = error_rates(Placebo("positive", "effect", "normal", 1.0, (12,), 300, family=2), rule="split")
    assert split["error_rate"] < effect["error_rate"] / 2  # each member at alpha/4: family-wise at most alpha/2


def test_a_family_needs_one_look_and_a_signed_decision():
    with pytest.raises(InputError, match="family"):
        error_rates(Placebo("positive", "null", "normal", 1.0, (3, 5), 5, family=2))
    with pytest.raises(InputError, match="family"):
        error_rates(Placebo("equivalence", "null", "normal", 1.0, (12,), 5, family=2))
    with pytest.raises(InputError, match="family"):
        error_rates(Placebo("positive", "null", "normal", 1.0, (12,), 5, family=0))
    with pytest.raises(InputError, match="law"):
        error_rates(Placebo("positive", "null", "cauchy", 1.0, (12,), 5))


def test_the_sam_calibration_is_confirmed_its_control_fails_and_its_failing_side_holds():
    from biasaudit.claims.sam.torch.calibration import CLAIMS

    calibrated, pair = CLAIMS
    ev = run_claim(calibrated)
    assert ev.verdict is Verdict.CONFIRMED, ev.detail
    assert ev.negative_control["all_failed"], ev.negative_control
    assert len(ev.observed["rows"]) == len(SAM_PLACEBOS) == 18
    assert {r["reads"] for r in ev.observed["rows"] if r["placebo"]["family"] == 2} == {"family", "member"}
    ev = run_claim(pair)
    assert ev.verdict is Verdict.CONFIRMED, ev.detail
    normal = next(r for r in ev.observed["rows"] if r["placebo"]["law"] == "normal")
    assert normal["error_interval"][0] > 0.05 and normal["reading"] == "above"
