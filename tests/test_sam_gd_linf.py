"""biasaudit.theory.sam_gd / theory.sam_linf and the sam.depth1/gd/linf claims: symbolic identities, mpmath references,
the limit rule, bad inputs, and every claim's property test, negative control and verdict."""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, example, given
from hypothesis import strategies as st

from biasaudit.claims.sam import depth1
from biasaudit.claims.sam.linf import closed_forms as linf
from biasaudit.claims.sam.linf import limits as linf_limits
from biasaudit.registry import select_claims
from biasaudit.ledger import Verdict, run_claim
from biasaudit.plumbing import InputError
from biasaudit.theory import sam_gd as gd
from biasaudit.theory import sam_linf as lf
from biasaudit.theory.sam_linf import linf_sam_limit

mu, alpha, rho, tau = lf.mu, lf.alpha, lf.rho, lf.tau
L = sp.Symbol("L", integer=True, positive=True)


# ----------------------------------------------------------------------------------------- (1) symbolic
def test_gd_closed_forms_solve_their_odes():
    a, m, t = gd.alpha, gd.mu, gd.tau
    assert sp.simplify(sp.diff(gd.GD_DEPTH1.expr, t) - m) == 0
    assert sp.simplify(sp.diff(gd.GD_L2.expr, t) - m * gd.GD_L2.expr) == 0
    for depth in (3, 4, 5, 7):
        w = gd.GD_DEEP.expr.subs(gd.L, depth)
        assert sp.simplify(sp.diff(w, t) - m * w ** (depth - 1)) == 0
        assert w.subs(t, 0).equals(a)
        # the base of the power vanishes exactly at the blow-up time
        base = (a ** (2 - gd.L) - (gd.L - 2) * m * t).subs(gd.L, depth)
        assert sp.simplify(base.subs(t, gd.GD_BLOWUP_TIME.expr.subs(gd.L, depth))) == 0


def test_linf_l2_closed_form_solves_the_ode_and_hits_zero():
    w = lf.LINF_L2.expr
    assert sp.simplify(sp.diff(w, tau) - mu * (w - rho)) == 0
    assert w.subs(tau, 0) == alpha
    assert sp.simplify(w.subs(tau, lf.LINF_ZERO_HIT)) == 0


def test_linf_deep_closed_forms_solve_their_odes():
    for depth in (3, 4, 5, 6):
        grow = lf.LINF_DEEP_GROW.expr.subs(lf.L, depth)
        assert sp.simplify(sp.diff(grow, tau) - mu * (grow - rho) ** (depth - 1)) == 0
        below = lf.LINF_DEEP_BELOW.expr.subs(lf.L, depth)
        assert below == (lf.LINF_ODD_BELOW if depth % 2 else lf.LINF_EVEN_BELOW).subs(lf.L, depth)
        # below rho: w' = mu (w - rho)^{L-1} with (w - rho)^{L-1} = (-1)^{L-1} (rho - w)^{L-1}
        assert sp.simplify(sp.diff(below, tau) - mu * (-1) ** (depth - 1) * (rho - below) ** (depth - 1)) == 0


def test_linf_even_zero_hit_time_tends_to_the_L2_formula():
    """((rho - alpha)^{2-L} - rho^{2-L}) / ((L-2) mu) -> ln(rho/(rho - alpha))/mu as L -> 2."""
    Lr = sp.Symbol("L", real=True)
    expr = lf.LINF_DEEP_ZERO_HIT.subs(lf.L, Lr)
    limit = sp.limit(expr.subs({alpha: sp.Rational(1, 3), rho: 1, mu: 2}), Lr, 2)
    assert sp.simplify(limit - lf.LINF_ZERO_HIT.subs({alpha: sp.Rational(1, 3), rho: 1, mu: 2})) == 0


def test_linf_unbalanced_sum_solves_its_ode():
    s = lf.UNBALANCED_SUM
    assert sp.simplify(sp.diff(s, tau) - mu * (s - 2 * rho)) == 0


# ----------------------------------------------------------------------------------------- (2) mpmath
@pytest.mark.parametrize("depth", [3, 4, 6])
def test_gd_blowup_time_matches_mpmath_integral(depth):
    """tau* = int_alpha^inf dw / (mu w^{L-1}) at 30 digits against the lambdified closed form, 1e-12."""
    f = sp.lambdify((gd.mu, gd.alpha, gd.L), gd.GD_BLOWUP_TIME.expr, modules="mpmath")
    with mpmath.workdps(30):
        m, a = mpmath.mpf("1.7"), mpmath.mpf("0.37")
        integral = mpmath.quad(lambda w: 1 / (m * w ** (depth - 1)), [a, mpmath.inf])
        assert abs(integral - f(m, a, depth)) <= 1e-12 * abs(integral)


@pytest.mark.parametrize("depth", [2, 4, 6])
def test_linf_zero_hit_time_matches_mpmath_integral(depth):
    """tau_0 = int_0^alpha dw / (mu (rho - w)^{L-1}) (even L) at 30 digits, 1e-12."""
    with mpmath.workdps(30):
        m, a, r = mpmath.mpf("1.3"), mpmath.mpf("0.07"), mpmath.mpf("0.1")
        integral = mpmath.quad(lambda w: 1 / (m * (r - w) ** (depth - 1)), [0, a])
        expr = lf.LINF_ZERO_HIT if depth == 2 else lf.LINF_DEEP_ZERO_HIT.subs(lf.L, depth)
        closed = sp.lambdify((mu, alpha, rho), expr, modules="mpmath")(m, a, r)
        assert abs(integral - closed) <= 1e-12 * abs(integral)


# ----------------------------------------------------------------------------------------- limit rule
def test_linf_limit_worked_example_gives_e1():
    lim = linf_sam_limit([1, 2, 3], [0.2, 0.14, 0.13], 0.1, 3)
    assert (lim.kind, lim.index) == ("basis", 1)
    assert linf_sam_limit([1, 2, 3], [0.2, 0.14, 0.13], 0.1, 2).index == 3  # at L = 2 the major one wins


def test_linf_limit_L2_cases():
    assert linf_sam_limit([1, 2, 3], [0.3, 0.05, 0.05], 0.1, 2).index == 1  # any basis vector needs per-coord alpha
    fixed = linf_sam_limit([1, 2, 3], [0.05, 0.1, 0.1], 0.1, 2)
    assert fixed.kind == "fixed" and np.allclose(fixed.beta_limit, [0, 0.01, 0.01])
    assert linf_sam_limit([1, 2, 3], [0.05, 0.02, 0.09], 0.1, 2).kind == "zero"


def test_linf_limit_parity_when_nothing_grows():
    odd = linf_sam_limit([1, 2], [0.05, 0.05], 0.1, 3)
    assert odd.kind == "fixed" and np.allclose(odd.beta_limit, [1e-3, 1e-3])
    assert linf_sam_limit([1, 2], [0.05, 0.05], 0.1, 4).kind == "zero"


@given(st.integers(1, 5), st.floats(0.01, 1.0), st.floats(0.01, 1.0))
@example(3, 0.1, 0.1)
def test_linf_limit_uniform_alpha_gives_only_ed_zero_or_fixed(d, a, r):
    """At L = 2 a uniform alpha gives only e_d, 0 or rho^2 1."""
    lim = linf_sam_limit(np.arange(1.0, d + 1), a, r, 2)
    if a > r:
        assert (lim.kind, lim.index) == ("basis", d)
    elif a == r:
        assert lim.kind == "fixed" and np.allclose(lim.beta_limit, r**2)
    else:
        assert lim.kind == "zero"


@given(st.integers(3, 7), st.lists(st.floats(0.11, 1.0), min_size=2, max_size=5))
def test_linf_limit_deep_is_the_first_blowup(depth, alphas):
    """At L >= 3 the basis index is the coordinate with the smallest blow-up time."""
    mu_v = np.arange(1.0, len(alphas) + 1)
    try:
        lim = linf_sam_limit(mu_v, alphas, 0.1, depth)
    except InputError:  # an exact tie: no single limit
        return
    assert lim.index == int(np.argmin(lf.linf_blowup_times(mu_v, alphas, 0.1, depth))) + 1


def test_linf_limit_depth1():
    assert linf_sam_limit([2.0], 0.3, 0.1, 1).index == 1
    with pytest.raises(InputError, match="^depth: must be >= 2"):
        linf_sam_limit([1.0, 2.0], 0.3, 0.1, 1)


def test_linf_limit_tie_is_rejected():
    with pytest.raises(InputError, match="^alpha: gives a tie"):
        linf_sam_limit([1.0, 2.0], [0.3, 0.2], 0.1, 3)  # 1 * 0.2 == 2 * 0.1


@pytest.mark.parametrize("args,param", [
    (([2, 1], 0.3, 0.1, 2), "mu"), (([0, 1], 0.3, 0.1, 2), "mu"), (([1, 1], 0.3, 0.1, 2), "mu"),
    (([1, 2], 0.3, 0.0, 2), "rho"), (([1, 2], 0.3, -1, 2), "rho"), (([1, 2], -0.3, 0.1, 2), "alpha"),
    (([1, 2], [0.3, 0.2, 0.1], 0.1, 2), "alpha"), (([1, 2], 0.3, 0.1, 0), "depth"),
    (([1, math.nan], 0.3, 0.1, 2), "mu"), (([1, 2], math.inf, 0.1, 2), "alpha"), (([1, 2], 0.3, math.nan, 2), "rho"),
])
def test_linf_limit_bad_input(args, param):
    with pytest.raises(InputError, match=f"^{param}:"):
        linf_sam_limit(*args)


def test_linf_limit_json_shape():
    out = linf_sam_limit([1, 2, 3], [0.2, 0.14, 0.13], 0.1, 3).to_json()
    assert out["limit"] == "basis" and out["index"] == 1 and isinstance(out["formula"], str)


def test_gd_limit_index():
    assert gd.gd_limit_index([1, 2, 3], 0.4, 2) == 3
    assert gd.gd_limit_index([1, 2, 3], 0.4, 4) == 3
    assert gd.gd_limit_index([1, 2], [0.9, 0.3], 3) == 1


def test_linf_deep_weights_rejects_times_past_blowup():
    with pytest.raises(InputError, match="^tau:"):
        lf.linf_deep_weights([1.0], [0.2], 0.1, [100.0], 3)


# ----------------------------------------------------------------------------------------- claims
CORE = [c for c in select_claims("sam.*", kind="theory") if c.id.split(".")[1] in ("depth1", "gd", "linf")]
SLOW_PROPERTY = {"sam.depth1.svm_direction", "sam.depth1.svm_direction_linf"}


@pytest.mark.parametrize("claim", CORE, ids=lambda c: c.id)
def test_sam_core_claim_is_confirmed(claim):
    ev = run_claim(claim)
    assert ev.verdict is Verdict.CONFIRMED, ev.detail
    assert ev.negative_control["all_failed"]


ONE_SIDE_PER_CASE = {"sam.linf.unbalanced_growth"}
# Controls that only some cases can refute (each is refuted by the sampled cases together: run_claim's test):
# the chatter's sup reaches 0.99 h mu rho on most runs, not all; a limit-rule move needs a winner to move.
SOME_CASES = {"sam.linf.chatter_bound", "sam.linf.limit_rule_L2"}


@pytest.mark.parametrize("claim", CORE, ids=lambda c: c.id)
def test_sam_core_claim_property_and_negative_control(claim):
    """(3) hypothesis over the claim's valid region; (4) its negative control fails on every example."""

    @given(st.data())
    def check(data):
        params = data.draw(claim.domain.strategy())
        predicted = claim.predict(params)
        obs = claim.evaluate(params, predicted)
        if claim.id == "sam.depth1.svm_direction_linf":
            # the frozen-sign flow cannot follow a gradient entry that slides at 0 (e.g. data_seed 545, d 3,
            # rho 0.1875): such data give "undecided", which is not a counterexample (notes/sam-gd-linf.md)
            assume(obs.decided)
        assert obs.decided and obs.error <= claim.tolerance.value, obs.detail
        refuted = claim.controls_refuted_by(params, predicted)
        # unbalanced growth: coordinate 1 sits 0.5 % on one side of 2 rho, so each case refutes the threshold
        # moved towards it; the sampled cases together refute both sides (test_sam_core_claim_is_confirmed)
        if claim.id not in SOME_CASES:
            assert any(refuted) if claim.id in ONE_SIDE_PER_CASE else all(refuted), refuted

    if claim.id in SLOW_PROPERTY:
        from hypothesis import settings

        check = settings(max_examples=3)(check)
    check()


def test_sam_linf_claims_break_when_the_boundary_moves():
    """The zero-hit claim refutes a 1 %-shifted prediction through run_claim itself."""
    from dataclasses import replace

    shifted = replace(linf.LINF_ZERO_HIT, predict=lambda p: linf._zero_hit_predict(p) * 1.01)
    assert run_claim(shifted).verdict is Verdict.REFUTED


def test_svm_data_has_the_constructed_max_margin_vector():
    for seed in range(5):
        for d in (2, 3):
            X, y, wstar = depth1._svm_data(seed, d)
            np.testing.assert_allclose(depth1.svm_vector(X, y), wstar, rtol=1e-7, atol=1e-9)
            margins = y * (X @ wstar)
            np.testing.assert_allclose(margins[:d], 1.0, atol=1e-12)
            assert np.all(margins[d:] >= 1.5)


@pytest.mark.parametrize("depth,alpha,index", [(2, (0.15, 0.05, 0.12), 3), (2, (0.15, 0.12, 0.05), 2),
                                               (3, (0.2, 0.14, 0.13), 1), (4, (0.2, 0.14, 0.13), 1),
                                               (3, (0.12, 0.14, 0.13), 3)])
def test_linf_limit_rule_against_the_flow_with_several_growing(depth, alpha, index):
    """(2) several coordinates above rho: the flow's winner is the predicted index (minor wins at L >= 3)."""
    claim = linf_limits.LINF_LIMIT_L2 if depth == 2 else linf_limits.LINF_LIMIT_DEEP
    params = {"d": 3, "mu": (1.0, 2.0, 3.0), "rho": 0.1, "alpha": alpha, "depth": depth}
    predicted = claim.predict(params)
    assert predicted["index"] == index
    assert claim.evaluate(params, predicted).error == 0.0
