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
