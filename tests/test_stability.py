"""Verdict stability (`biasaudit check --stability`): the same verdict for seeds 0-4 and both profiles."""

import pytest

from biasaudit.commands.check import parse_seeds
from biasaudit.ledger import Claim, Observation, Tolerance, shifted_prediction
from biasaudit.domain import Domain, Real
from biasaudit.registry import select_claims
from biasaudit.stability import verdict_stability


def _toy(threshold):
    """Refuted only where x > threshold: a rare failing region makes a fragile verdict at few samples."""
    return Claim(id="toy.rare", paper="toy", source="test", title="x never exceeds a threshold",
                 hypotheses=(), statement=None, predict=lambda p: 1.0,
                 evaluate=lambda p, v: Observation(p["x"], abs(v - 1.0) + float(p["x"] > threshold)),
                 tolerance=Tolerance("t", 1e-3, "test"), domain=Domain({"x": Real(0.0, 1.0)}),
                 negative_control=shifted_prediction(0.01), samples={"ci": 2, "thorough": 200})


def test_stability_flags_a_verdict_that_changes_with_the_sample_size():
    (row,) = verdict_stability([_toy(0.97)], seeds=(0, 1, 2, 3, 4))
    assert not row.stable and "refuted" in row.verdicts and "confirmed" in row.verdicts


def test_stability_accepts_a_claim_that_holds_everywhere():
    (row,) = verdict_stability([_toy(2.0)], seeds=(0, 1))
    assert row.stable and row.verdicts == {"confirmed"}


def test_seeds_are_parsed_or_rejected_by_name():
    assert parse_seeds("0,1, 4") == (0, 1, 4)
    with pytest.raises(ValueError, match="^seeds:"):
        parse_seeds("0,-1")


@pytest.mark.slow
def test_every_theory_claim_has_a_stable_verdict():
    rows = verdict_stability(select_claims(None, kind="theory"))
    assert [r.claim_id for r in rows if not r.stable] == []


# -- tolerance sensitivity (`biasaudit check --tolerance-x10`) ----------------------------------------------------
def _scaled_error_claim(at_10x: str):
    """error = 0.002 on every case, controls (±1 %) give 0.01: a tolerance of 5e-3 decides the controls."""
    return Claim(id="toy.tol", paper="toy", source="test", title="a tolerance that decides", hypotheses=(),
                 statement=None, predict=lambda p: 1.0,
                 evaluate=lambda p, v: Observation(v, abs(v - 1.0) + 0.002),
                 tolerance=Tolerance("t", 5e-3, "test", at_10x=at_10x), domain=Domain({"x": Real(0.0, 1.0)}),
                 negative_control=shifted_prediction(0.01), samples={"ci": 2, "thorough": 2})


def test_a_tolerance_that_decides_turns_a_verdict_at_10x():
    from biasaudit.stability import tolerance_sensitivity

    (row,) = tolerance_sensitivity([_scaled_error_claim("")])
    assert (row.verdict, row.loosened_verdict) == ("confirmed", "undecided") and row.consistent
    assert row.worst_case_error == pytest.approx(0.002) and row.weakest_control_error == pytest.approx(0.012)


def test_a_stated_reason_that_is_false_is_caught():
    from biasaudit.stability import tolerance_sensitivity

    (row,) = tolerance_sensitivity([_scaled_error_claim("roundoff only (false here)")])
    assert row.changes and not row.consistent


def test_a_tolerance_that_changes_nothing_must_say_why():
    from biasaudit.stability import tolerance_sensitivity

    silent = _toy(2.0)  # errors exactly 0 and controls at 1e-2 against a tolerance of 1e-3: 10x changes nothing
    (row,) = tolerance_sensitivity([silent])
    assert not row.changes and not row.consistent


@pytest.mark.slow
def test_every_theory_tolerance_decides_a_verdict_or_says_why_not():
    from biasaudit.stability import tolerance_sensitivity

    rows = tolerance_sensitivity(select_claims(None, kind="theory"))
    assert [r.claim_id for r in rows if not r.consistent] == []


def _roundoff_claim(slack_reason: str):
    """error 1e-12 on every case against a tolerance of 1e-8 that states a roundoff reason: slack 1e4."""
    from biasaudit.ledger import AT_10X_PRECISION

    return Claim(id="toy.slack", paper="toy", source="test", title="a tolerance far above its error", hypotheses=(),
                 statement=None, predict=lambda p: 1.0,
                 evaluate=lambda p, v: Observation(v, abs(v - 1.0) + 1e-12),
                 tolerance=Tolerance("t", 1e-8, "test", at_10x=AT_10X_PRECISION),
                 domain=Domain({"x": Real(0.0, 1.0)}), negative_control=shifted_prediction(0.01),
                 samples={"ci": 2, "thorough": 2}, slack_reason=slack_reason)


def test_a_slack_above_100_without_a_reason_fails_the_tolerance_check():
    from biasaudit.stability import tolerance_sensitivity

    (row,) = tolerance_sensitivity([_roundoff_claim("")])
    assert not row.changes and row.slack == pytest.approx(1e4) and row.slack_unexplained and not row.consistent
    (row,) = tolerance_sensitivity([_roundoff_claim("the tolerance is the paper's 8 printed digits")])
    assert row.consistent and not row.slack_unexplained


def test_evidence_records_the_worst_error_and_the_slack():
    from biasaudit.ledger import run_claim

    ev = run_claim(_roundoff_claim(""), profile="thorough")
    assert ev.worst_error == pytest.approx(1e-12) and ev.worst_error_profile == "thorough"
    assert ev.slack == pytest.approx(1e4) and ev.to_json()["slack"] == pytest.approx(1e4)
    silent = run_claim(_toy(2.0))  # every error exactly 0 under a positive tolerance
    assert silent.worst_error == 0 and silent.to_json()["slack"] == "inf"
    refuted = run_claim(_toy(-1.0))  # the counterexample's error counts
    assert refuted.verdict == "refuted" and refuted.worst_error >= 1.0 and refuted.slack < 1e-2
