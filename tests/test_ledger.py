"""The ledger's verdict rules, on toy claims whose truth is known."""

import json
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given

from biasaudit.domain import Domain, Integer, Real, Vector
from biasaudit.ledger import Claim, Evidence, Observation, OutOfScope, Reference, Tolerance, Verdict, run_claim
from biasaudit.plumbing import InputError, parse_float_list, positive_increasing

x = sp.Symbol("x", positive=True)


def make_claim(truth=lambda p: p["x"] ** 2, predict=lambda p: p["x"] ** 2, shift=lambda p, v: v * 1.01,
               references=(), decided=True):
    def evaluate(params, predicted):
        observed = truth(params)
        return Observation(observed, abs(predicted - observed) / abs(observed), decided=decided)

    return Claim(
        id="toy.square", paper="toy", source="§0", title="x squared", hypotheses=(sp.Gt(x, 0, evaluate=False),),
        statement=sp.Eq(sp.Symbol("y"), x**2), predict=predict, evaluate=evaluate,
        tolerance=Tolerance("float64_roundoff", 1e-12, "one multiplication"),
        domain=Domain({"x": Real(0.1, 10.0, log=True)}), negative_control=shift, references=references,
    )


def test_ledger_confirms_a_true_claim():
    ev = run_claim(make_claim())
    assert ev.verdict is Verdict.CONFIRMED
    assert ev.negative_control["all_failed"]
    assert ev.n_cases == 8


def test_ledger_refutes_a_false_claim_with_a_counterexample():
    ev = run_claim(make_claim(predict=lambda p: p["x"] ** 2 * (1 + 1e-6)))
    assert ev.verdict is Verdict.REFUTED
    assert "counterexample" in ev.detail
    assert ev.error > 1e-12


def test_ledger_undecided_when_negative_control_passes():
    ev = run_claim(make_claim(shift=lambda p, v: v))
    assert ev.verdict is Verdict.UNDECIDED
    assert "negative control" in ev.detail


def test_ledger_undecided_when_numerics_cannot_decide():
    assert run_claim(make_claim(decided=False)).verdict is Verdict.UNDECIDED


def test_ledger_out_of_scope():
    def predict(params):
        raise OutOfScope("x must be below 0.01")

    assert run_claim(make_claim(predict=predict)).verdict is Verdict.OUT_OF_SCOPE


def test_ledger_reference_values_are_checked():
    good = make_claim(references=(Reference({"x": 2.0}, 4.0, 1e-12, "x=2", origin="derived"),))
    bad = make_claim(references=(Reference({"x": 2.0}, 4.1, 1e-12, "x=2", origin="derived"),))
    assert run_claim(good).verdict is Verdict.CONFIRMED
    assert run_claim(bad).verdict is Verdict.REFUTED


def test_ledger_nan_error_is_never_a_pass():
    ev = run_claim(make_claim(truth=lambda p: math.nan))
    assert ev.verdict is Verdict.UNDECIDED


def test_evidence_round_trips_through_json():
    ev = run_claim(make_claim())
    data = json.loads(json.dumps(ev.to_json()))
    assert Evidence.from_json(data).to_json() == ev.to_json()


def test_ledger_is_deterministic_per_seed():
    a, b = run_claim(make_claim(), seed=3).to_json(), run_claim(make_claim(), seed=3).to_json()
    a.pop("elapsed_s"), b.pop("elapsed_s")
    assert a == b


domain = Domain({"d": Integer(2, 6), "mu": Vector("d", 0.5, 2.0, increasing=(0.1, 1.0))})


@given(domain.strategy())
def test_domain_strategy_respects_increasing_vectors(params):
    mu = np.array(params["mu"])
    assert len(mu) == params["d"] and np.all(np.diff(mu) > 0) and mu[0] >= 0.5


def test_domain_sampler_respects_increasing_vectors():
    rng = np.random.default_rng(0)
    for _ in range(50):
        params = domain.sample(rng)
        assert np.all(np.diff(params["mu"]) > 0)


@pytest.mark.parametrize("bad", [[2.0, 1.0], [0.0, 1.0], [1.0, 1.0], [1.0, math.nan], [1.0, math.inf]])
def test_positive_increasing_rejects_with_the_parameter_name(bad):
    with pytest.raises(InputError, match="^mu: must be"):
        positive_increasing("mu", bad)


def test_parse_float_list_rejects_text_and_nan():
    with pytest.raises(InputError, match="^mu:"):
        parse_float_list("mu", "1,abc")
    with pytest.raises(InputError, match="finite"):
        parse_float_list("mu", "1,nan")


def test_claim_rejects_a_hypothesis_that_sympy_evaluated_away():
    with pytest.raises(ValueError, match="evaluate=False"):
        Claim(id="toy.bad", paper="toy", source="§0", title="t", hypotheses=(sp.Gt(x, 0),), statement=x,
              predict=lambda p: 0, evaluate=lambda p, v: Observation(0, 0.0),
              tolerance=Tolerance("t", 0.0, "r"), domain=Domain({"x": Real(1, 2)}),
              negative_control=lambda p, v: v)


def test_one_side_moves_by_the_signed_size_and_names_its_side():
    from biasaudit.ledger import one_side

    up = one_side("+", "x", 0.01, lambda p, v, s: (p, v * (1 + s)))
    down = one_side("-", "x", 0.01, lambda p, v, s: (p, v * (1 + s)))
    assert (up.side, up.size, down.side) == ("+", 0.01, "-")
    assert up.make({}, 2.0)[1] == pytest.approx(2.02) and down.make({}, 2.0)[1] == pytest.approx(1.98)
    with pytest.raises(ValueError, match="^side:"):
        one_side("broken", "x", 0.01, lambda p, v, s: (p, v))


def test_an_estimate_whose_verdict_moves_with_the_resolution_is_undecided():
    from biasaudit.domain import Domain, Real
    from biasaudit.ledger import Claim, Observation, Tolerance, run_claim, shifted_prediction

    def claim(coarse_error):
        def evaluate(p, v):
            offset = abs(v - 1.0)
            return Observation(v, offset + 0.002, "", resolutions={"coarse": offset + coarse_error,
                                                                    "fine": offset + 0.002})
        return Claim(id="toy.grid", paper="toy", source="test", title="an estimate from a grid", hypotheses=(),
                     statement=None, predict=lambda p: 1.0, evaluate=evaluate,
                     tolerance=Tolerance("t", 5e-3, "test"), domain=Domain({"x": Real(0.0, 1.0)}),
                     negative_control=shifted_prediction(0.01), samples={"ci": 3, "thorough": 3})

    assert run_claim(claim(0.003)).verdict == "confirmed"  # both resolutions within 5e-3
    moved = run_claim(claim(0.008))  # the coarse grid alone is outside: no verdict
    assert moved.verdict == "undecided" and "moves with the resolution" in moved.detail
