"""The three-way decision of experiment claims, their data controls, and the contract that declares them."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from biasaudit.contract import DataControl, ExperimentContract, contract_observation
from biasaudit.domain import Domain, Fixed
from biasaudit.ledger import Claim, Observation, Tolerance, Verdict, run_claim, verdict_inconsistency
from biasaudit.plumbing import InputError
from biasaudit.validation.decision import equivalence_control, gated_verdict, seed_interval, three_way


def _values(mean, sd, n, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(n)
    return mean + sd * (z - z.mean()) / z.std(ddof=1)  # exactly this mean and sd


@pytest.mark.parametrize("values,direction,expected,rule", [
    (_values(0.5, 0.1, 12), 1, "confirmed", "predicted side"),
    (_values(-0.5, 0.1, 12), -1, "confirmed", "predicted side"),
    (_values(-0.5, 0.1, 12), 1, "refuted", "opposite"),
    (_values(0.001, 0.01, 12), 1, "refuted", "equivalent"),
    (_values(0.05, 0.3, 12), 1, "undecided", "straddles"),
    (_values(0.5, 0.1, 2), 1, "undecided", "too few seeds"),
])
def test_three_way_decides_each_case(values, direction, expected, rule):
    d = three_way(values, direction=direction, delta=0.05)
    assert (d.verdict, d.rule) == (expected, rule)
    assert (d.error == 0) == (expected == "confirmed") or expected == "undecided"


def test_equivalence_needs_the_tost_interval_inside_the_margin():
    values = _values(0.02, 0.02, 12)
    assert three_way(values, direction=1, delta=0.01).verdict == "confirmed"  # tight, positive, above the margin
    trivial = three_way(values, direction=1, delta=0.05)  # significant, but smaller than the effect that matters
    assert (trivial.verdict, trivial.rule) == ("refuted", "trivial") and trivial.interval[0] > 0
    small = _values(0.0, 0.03, 12)
    assert three_way(small, direction=1, delta=0.05).rule == "equivalent"
    assert three_way(small, direction=1, delta=0.01).rule == "straddles"  # a narrower margin: not shown absent


def test_holm_adjusted_level_widens_the_decision_interval_only():
    values = _values(0.1, 0.15, 12)
    plain, adjusted = three_way(values, direction=1, delta=0.02), three_way(values, direction=1, delta=0.02,
                                                                             adjusted_level=0.01)
    assert adjusted.interval[0] < plain.interval[0] and adjusted.tost_interval == plain.tost_interval


def test_seed_interval_covers_the_mean_and_is_nan_below_two_values():
    lo, hi = seed_interval([1.0, 2.0, 3.0], 0.95)
    assert lo < 2.0 < hi
    assert all(math.isnan(x) for x in seed_interval([1.0], 0.95))


def test_equivalence_control_passes_and_fails():
    assert equivalence_control("aa", _values(0.0, 0.02, 12), margin=0.05).equivalent
    assert not equivalence_control("aa", _values(0.2, 0.02, 12), margin=0.05).equivalent
    assert not equivalence_control("aa", _values(0.0, 0.02, 2), margin=0.05).equivalent  # too few seeds


def test_a_failed_positive_control_or_data_control_leaves_the_claim_undecided():
    strong = three_way(_values(0.5, 0.1, 12), direction=1, delta=0.05)
    ok = [equivalence_control("aa", _values(0.0, 0.01, 12), margin=0.05)]
    bad = ok + [equivalence_control("randsam", _values(0.3, 0.01, 12), margin=0.05)]
    assert gated_verdict(strong, ok, "confirmed") == ("confirmed", "predicted side")
    assert gated_verdict(strong, ok, "refuted")[0] == "undecided"
    assert gated_verdict(strong, ok, "undecided")[0] == "undecided"
    verdict, why = gated_verdict(strong, bad, "confirmed")
    assert verdict == "undecided" and "randsam" in why
    assert gated_verdict(strong, ok, None)[0] == "confirmed"  # a positive control itself


@pytest.mark.parametrize("kw,param", [({"delta": 0}, "delta"), ({"delta": math.nan}, "delta"),
                                      ({"level": 0.6}, "level"), ({"direction": 0}, "direction")])
def test_bad_decision_inputs_name_the_parameter(kw, param):
    args = {"direction": 1, "delta": 0.05, **kw}
    with pytest.raises(InputError) as info:
        three_way([1.0, 2.0, 3.0], **args)
    assert info.value.name == param


def _contract(**kw):
    base = dict(role="effect", statistic="m:f", positive_control="x.pc", primary_arms=("sam", "gd"),
                data_controls=(DataControl("aa", ("gd", "gd@other"), "GD against GD"),), delta=0.05,
                delta_reason="from the positive control")
    return ExperimentContract(**{**base, **kw})


@pytest.mark.parametrize("kw,message", [
    ({"positive_control": None}, "positive control"),
    ({"role": "positive_control"}, "positive control"),
    ({"delta": 0.0}, "margin"),
    ({"delta_reason": ""}, "margin"),
    ({"statistic": "nofunction"}, "statistic"),
    ({"data_controls": (DataControl("flip", ("sam", "gd"), "the claim itself"),)}, "own comparison"),
    ({"role": "maybe"}, "role"),
])
def test_a_contract_refuses_what_cannot_be_a_study(kw, message):
    with pytest.raises(ValueError, match=message):
        _contract(**kw)


def _toy_claim(effect_mean: float, control_mean: float, pc_verdict: str):
    """A contract claim on synthetic seed values: the ledger runs it like any experiment claim."""
    def evaluate(params, predicted):
        decision = three_way(_values(effect_mean, 0.05, 12), direction=predicted, delta=0.05)
        controls = [equivalence_control("aa", _values(control_mean, 0.02, 12), margin=0.05)]
        verdict, why = gated_verdict(decision, controls, pc_verdict)
        observed = contract_observation(statistic={"name": "toy"}, positive_control={"verdict": pc_verdict},
                                        data_controls=controls, decision=decision, n_seeds=12)
        error = decision.error if verdict == decision.verdict else math.nan
        return Observation(observed, error, why, decided=verdict != "undecided")

    return Claim(id="toy.contract", paper="toy", source="derived", title="toy", hypotheses=(),
                 statement=sp.Symbol("D") > 0, predict=lambda p: 1, evaluate=evaluate,
                 tolerance=Tolerance("ci_side", 0.0, "interval on the predicted side"), domain=Domain({"t": Fixed(0)}),
                 negative_control=(), kind="experiment", samples={"ci": 1, "thorough": 1},
                 contract=_contract())


def test_contract_claims_run_through_the_ledger_with_their_gates():
    good = run_claim(_toy_claim(0.5, 0.0, "confirmed"))
    assert good.verdict == Verdict.CONFIRMED and verdict_inconsistency(good.to_json()) == ""
    assert run_claim(_toy_claim(-0.5, 0.0, "confirmed")).verdict == Verdict.REFUTED
    forced = run_claim(_toy_claim(0.5, 0.0, "refuted"))  # the positive control forced to fail
    assert forced.verdict == Verdict.UNDECIDED
    assert run_claim(_toy_claim(-0.5, 0.0, "undecided")).verdict == Verdict.UNDECIDED  # nor refuted
    assert run_claim(_toy_claim(0.5, 0.3, "confirmed")).verdict == Verdict.UNDECIDED  # a failing data control


def test_a_confirmed_record_whose_gate_failed_is_inconsistent():
    record = run_claim(_toy_claim(0.5, 0.0, "confirmed")).to_json()
    record["observed"]["positive_control"]["verdict"] = "undecided"
    assert "positive control" in verdict_inconsistency(record)
    record = run_claim(_toy_claim(0.5, 0.0, "confirmed")).to_json()
    record["observed"]["data_controls"][0]["equivalent"] = False
    assert "data controls" in verdict_inconsistency(record)


def test_contract_claims_carry_no_negative_control_that_restates_their_rule():
    with pytest.raises(ValueError, match="replace negative controls"):
        import dataclasses

        from biasaudit.ledger import shifted_prediction
        dataclasses.replace(_toy_claim(0.5, 0.0, "confirmed"), negative_control=shifted_prediction(0.01))


@pytest.mark.parametrize("values,target,expected,rule", [
    (_values(0.01, 0.01, 8), 0.0, "confirmed", "equivalent"),
    (_values(1.02, 0.01, 8), 1.0, "confirmed", "equivalent"),
    (_values(0.20, 0.02, 8), 0.0, "refuted", "outside the margin"),
    (_values(-0.20, 0.02, 8), 0.0, "refuted", "outside the margin"),
    (_values(0.05, 0.05, 8), 0.0, "undecided", "straddles the margin"),
    (_values(0.0, 0.01, 2), 0.0, "undecided", "too few seeds"),
])
def test_equivalence_decision_decides_each_case(values, target, expected, rule):
    from biasaudit.validation.decision import equivalence_decision

    d = equivalence_decision(values, delta=0.05, target=target)
    assert (d.verdict, d.rule) == (expected, rule)
    assert d.direction == 0 and math.isclose(d.mean, float(np.mean(values)), rel_tol=1e-12)


def test_equivalence_decision_has_power_at_the_margin():
    """The same seed values are confirmed inside the margin and refuted when the target moves by twice it."""
    from biasaudit.validation.decision import equivalence_decision

    values = _values(0.0, 0.005, 8)
    assert equivalence_decision(values, delta=0.05).verdict == "confirmed"
    assert equivalence_decision(values, delta=0.05, target=0.1).verdict == "refuted"
    assert equivalence_decision(values, delta=0.05, target=-0.1).verdict == "refuted"
    with pytest.raises(InputError, match="delta"):
        equivalence_decision(values, delta=0.0)
