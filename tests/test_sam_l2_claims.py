"""The sam.l2.* claims: verdicts through run_claim (parts 2 and 4), property tests over each domain
(part 3, hypothesis), and the reference values (derived here, see notes/sam-l2.md). Part 1 (symbolic) is in
test_sam_l2_theory.py."""

import math

import numpy as np
import pytest
from hypothesis import given, settings

from biasaudit.claims.sam import l2 as sam_l2
from biasaudit.claims.sam.l2 import deep, dynamics, reduction, regimes, separatrix, training_speed
from biasaudit.ledger import Verdict, run_claim
from biasaudit.registry import select_claims

BY_ID = {claim.id: claim for claim in sam_l2.CLAIMS}
HEAVY = {"sam.l2.alpha_collapse", "sam.l2.nonmonotone_in_tau", "sam.l2.discrete_vs_flow"}


def test_sam_l2_claims_are_registered():
    ids = {c.id for c in select_claims("sam.l2.*")}
    assert ids == set(BY_ID) and len(ids) == 31


REFUTED = {"sam.l2.discrete_trajectory_tracking",  # findings: the numerics contradict the statement
           "sam.l2.slowdown_near_alpha_c_only"}


@pytest.mark.parametrize("claim_id", sorted(set(BY_ID) - HEAVY - REFUTED))
def test_sam_l2_claim_verdict_is_confirmed_and_controls_fail(claim_id):
    ev = run_claim(BY_ID[claim_id])
    assert ev.verdict is Verdict.CONFIRMED, ev.detail
    assert ev.negative_control["all_failed"], ev.negative_control


@pytest.mark.parametrize("claim_id", sorted(REFUTED))
def test_sam_l2_refuted_claim_has_a_sampled_counterexample(claim_id):
    ev = run_claim(BY_ID[claim_id], references=False)
    assert ev.verdict is Verdict.REFUTED and "counterexample (sample" in ev.detail, ev.detail
    assert ev.error > BY_ID[claim_id].tolerance.value


@pytest.mark.slow
@pytest.mark.parametrize("claim_id", sorted(HEAVY))
def test_sam_l2_heavy_claim_verdict_is_confirmed(claim_id):
    ev = run_claim(BY_ID[claim_id])
    assert ev.verdict is Verdict.CONFIRMED, ev.detail
    assert ev.negative_control["all_failed"]


def test_alpha_collapse_spec_table_reproduces():
    for mu, value in separatrix.REFERENCE_TABLE:
        params = {"d": len(mu), "mu": mu, "rho": 1.0, "normalization": "joint"}
        assert abs(separatrix.ALPHA_COLLAPSE.predict(params) - value) <= 5e-6, mu


def test_alpha_collapse_mpmath_certifies_one_case_and_rejects_the_control():
    params = {"d": 2, "mu": (1.0, 2.0), "rho": 0.3, "normalization": "layer"}
    predicted = separatrix.ALPHA_COLLAPSE.predict(params)
    assert separatrix.ALPHA_COLLAPSE.evaluate(params, predicted).error <= separatrix.ALPHA_COLLAPSE.tolerance.value
    assert separatrix.ALPHA_COLLAPSE.controls_refuted_by(params, predicted) == [True, True]


def test_nonmonotone_in_tau_reference_sequence():
    ref = dynamics.NONMONOTONE_TAU.references[0]
    assert dynamics.NONMONOTONE_TAU.predict(ref.params) == ref.expected


def test_switch_times_reference_values():
    ref = dynamics.SWITCH_TIMES.references[0]
    got = np.array(dynamics.SWITCH_TIMES.predict(ref.params))
    assert np.max(np.abs(got - np.array(ref.expected))) <= 0.05


def _holds(claim, params):
    predicted = claim.predict(params)
    obs = claim.evaluate(params, predicted)
    assert obs.decided, obs.detail
    assert obs.error <= claim.tolerance.value, obs.detail


@settings(max_examples=6)
@given(reduction.LOG_LINEAR.domain.strategy())
def test_log_linear_reduction_property(params):
    _holds(reduction.LOG_LINEAR, params)


@settings(max_examples=6)
@given(reduction.JDAGGER.domain.strategy())
def test_jdagger_formula_property(params):
    _holds(reduction.JDAGGER, params)


@settings(max_examples=10)
@given(reduction.FIXED_POINTS.domain.strategy())
def test_fixed_points_property(params):
    _holds(reduction.FIXED_POINTS, params)


@settings(max_examples=6)
@given(separatrix.CERTIFICATES.domain.strategy())
def test_certificates_property(params):
    _holds(separatrix.CERTIFICATES, params)


@settings(max_examples=4)
@given(separatrix.SANDWICH.domain.strategy())
def test_sandwich_property(params):
    _holds(separatrix.SANDWICH, params)


@settings(max_examples=4)
@given(separatrix.SCALE_INVARIANCE.domain.strategy())
def test_alpha_collapse_scale_invariance_property(params):
    _holds(separatrix.SCALE_INVARIANCE, params)


@settings(max_examples=3)
@given(regimes.REGIME1.domain.strategy())
def test_regime1_collapse_property(params):
    _holds(regimes.REGIME1, params)


@settings(max_examples=3)
@given(regimes.ALPHA_GROW.domain.strategy())
def test_alpha_grow_property(params):
    _holds(regimes.ALPHA_GROW, params)


@settings(max_examples=3)
@given(regimes.REGIME3.domain.strategy())
def test_regime3_property(params):
    _holds(regimes.REGIME3, params)


@settings(max_examples=3)
@given(regimes.REGIME2.domain.strategy())
def test_regime2_sequential_property(params):
    _holds(regimes.REGIME2, params)


@settings(max_examples=3)
@given(dynamics.ASYMPTOTICS.domain.strategy())
def test_asymptotics_property(params):
    _holds(dynamics.ASYMPTOTICS, params)


@settings(max_examples=3)
@given(deep.DEEP_EVEN.domain.strategy())
def test_deep_even_collapse_property(params):
    _holds(deep.DEEP_EVEN, params)


@settings(max_examples=3)
@given(deep.DEEP_ODD.domain.strategy())
def test_deep_odd_no_collapse_property(params):
    _holds(deep.DEEP_ODD, params)


def test_regime3_negative_control_fails():
    params = {"d": 3, "mu": (1.0, 1.5, 2.5), "rho": 0.5, "normalization": "joint"}
    pred = regimes.REGIME3.predict(params)
    assert regimes.REGIME3.evaluate(params, pred).error == 0
    for shifted in (pred * 1.01, pred * 0.99):
        assert regimes.REGIME3.evaluate(params, shifted).error > 0 or shifted < pred


def test_alpha_grow_negative_control_fails():
    params = {"d": 2, "mu": (1.0, 2.0), "rho": 1.0, "normalization": "joint", "above": 0.1}
    pred = regimes.ALPHA_GROW.predict(params)
    for shifted in (pred * 0.99, pred * 1.01):  # growth below a too-small prediction; no shrink below a too-large one
        assert regimes.ALPHA_GROW.evaluate(params, shifted).error > regimes.ALPHA_GROW.tolerance.value


def test_deep_L3_reference_sequences():
    for ref in deep.DEEP_L3.references:
        assert deep.DEEP_L3.predict(ref.params) == ref.expected


def test_regime1_loss_goes_to_ln2_not_nan():
    params = {"d": 2, "mu": (1.0, 2.0), "rho": 1.0, "normalization": "joint", "below": 0.01}
    obs = regimes.REGIME1.evaluate(params, regimes.REGIME1.predict(params))
    assert obs.decided and obs.observed == pytest.approx(math.log(2), abs=1e-12)


def test_regime1_a_wrong_alpha_c_is_refuted_on_either_side_not_undecided():
    params = {"d": 2, "mu": (1.0, 2.0), "rho": 1.0, "normalization": "joint", "below": 0.005}
    pred = regimes.REGIME1.predict(params)
    for factor in (1.01, 0.99):
        obs = regimes.REGIME1.evaluate(params, {**pred, "alpha_c": pred["alpha_c"] * factor})
        assert obs.decided and obs.error > regimes.REGIME1.tolerance.value, obs.detail


@settings(max_examples=2)
@given(dynamics.PLATEAU.domain.strategy())
def test_plateau_law_property(params):
    _holds(dynamics.PLATEAU, params)


@settings(max_examples=2)
@given(dynamics.MONOTONE_ALPHA.domain.strategy())
def test_monotone_in_alpha_property(params):
    _holds(dynamics.MONOTONE_ALPHA, params)


@settings(max_examples=2)
@given(dynamics.SWITCH_TIMES.domain.strategy())
def test_switch_times_property(params):
    _holds(dynamics.SWITCH_TIMES, params)


@settings(max_examples=2)
@given(deep.DEEP_L3.domain.strategy())
def test_deep_L3_sequences_property(params):
    _holds(deep.DEEP_L3, params)


@pytest.mark.parametrize("depth", [2, 3, 4, 5])
def test_deep_small_alpha_field_matches_the_field_numerically(depth):
    from biasaudit.theory.sam_l2 import deep_small_alpha_field, rescaled_field_deep

    mu, c = np.array([0.5, 1.2, 2.0]), 0.3
    limit = deep_small_alpha_field(mu, c, depth)
    for alpha in (1e-4, 1e-6):
        field = rescaled_field_deep(np.full(3, alpha), mu, c, depth)
        assert np.max(np.abs(field - limit) / np.abs(limit)) < 20 * alpha / c


@settings(max_examples=3)
@given(deep.DEEP_ALPHA_COLLAPSE.domain.strategy())
def test_deep_even_alpha_collapse_property(params):
    _holds(deep.DEEP_ALPHA_COLLAPSE, params)


def test_deep_even_alpha_collapse_negative_control_fails():
    params = {"d": 2, "mu": (1.0, 2.0), "rho": 0.3, "normalization": "joint", "depth": 4}
    pred = deep.DEEP_ALPHA_COLLAPSE.predict(params)
    assert deep.DEEP_ALPHA_COLLAPSE.evaluate(params, pred).error <= deep.DEEP_ALPHA_COLLAPSE.tolerance.value
    assert deep.DEEP_ALPHA_COLLAPSE.controls_refuted_by(params, pred) == [True, True]


def test_loss_halving_times_match_closed_forms():
    mu = np.array([1.0, 2.0])
    z_half = training_speed.loss_halving_margin(0.01)
    assert math.log1p(math.exp(-z_half)) == pytest.approx(0.5 * math.log1p(math.exp(-0.01)), rel=1e-14)
    t = training_speed.gd_halving_time(mu, 0.05)
    assert np.sum(mu * 0.05**2 * np.exp(2 * mu * t)) == pytest.approx(training_speed.loss_halving_margin(3 * 0.05**2),
                                                                      rel=1e-12)
    # with c -> 0 SAM's flow is GD's: the two halving times agree to the grid's interpolation error
    grid = np.linspace(0.0, 5.0, 20001)
    assert training_speed.sam_halving_time(mu, 0.05, 1e-12, grid) == pytest.approx(t, rel=1e-6)


def test_sam_never_halves_its_loss_before_gd_in_tau():
    params = {"d": 3, "mu": (1.0, 1.5, 2.5), "rho": 0.4, "normalization": "joint"}
    r = training_speed._regimes(params)
    c = training_speed._c(params)
    mu = np.array(params["mu"])
    for alpha in np.linspace(r.alpha_collapse * 1.01, 3 * r.alpha_gd_like, 6):
        assert training_speed._halving_ratio(mu, c, alpha) >= 1.0


@settings(max_examples=4)
@given(training_speed.LOSS_HALVING_DELAY.domain.strategy())
def test_loss_halving_delay_property(params):
    claim = training_speed.LOSS_HALVING_DELAY
    obs = claim.evaluate(params, claim.predict(params))
    assert obs.error <= claim.tolerance.value, obs.detail
    assert all(claim.controls_refuted_by(params, claim.predict(params)))
