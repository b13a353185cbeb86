"""The theory formulas of paper 1 (theory.sam_gd, sam_linf, sam_l2, sam_fields) as Formula objects: each public
wrapper evaluates its Formula (a trace sees it), the catalogue ``sam_l2.FORMULAS`` holds the very expressions the
formulas lambdify, the piecewise and merged forms equal the closed forms they replace, and the sam.* theory claims
are stated in the theory's own symbols (no second, retyped set)."""

import numpy as np
import pytest
import sympy as sp

from biasaudit.registry import all_claims
from biasaudit.theory import sam_fields as sf
from biasaudit.theory import sam_gd as gd
from biasaudit.theory import sam_l2 as l2
from biasaudit.theory import sam_linf as lf
from biasaudit.theory.formula import Formula, traced

MU = np.array([0.7, 1.3, 2.2])
ALPHA = np.array([0.3, 0.05, 0.12])
RHO = 0.1

WRAPPERS = [
    (gd.GD_DEPTH1, lambda: gd.depth1_weights(MU, ALPHA, [0.5])),
    (gd.GD_L2, lambda: gd.gd_l2_weights(MU, ALPHA, [0.5])),
    (gd.GD_BLOWUP_TIME, lambda: gd.gd_blowup_times(MU, ALPHA, 3)),
    (gd.GD_DEEP, lambda: gd.gd_deep_weights(MU, ALPHA, [0.1], 3)),
    (lf.LINF_L2, lambda: lf.linf_l2_weights(MU, ALPHA, RHO, [0.5])),
    (lf.LINF_ZERO_HIT_TIME, lambda: lf.linf_zero_hit_time(MU, ALPHA, RHO, 2)),
    (lf.LINF_ZERO_HIT_TIME, lambda: lf.linf_zero_hit_time(MU, ALPHA, RHO, 4)),
    (lf.LINF_DEEP_BLOWUP, lambda: lf.linf_blowup_times(MU, ALPHA, RHO, 3)),
    (lf.LINF_DEEP_GROW, lambda: lf.linf_deep_weights(MU, ALPHA, RHO, [0.1], 3)),
    (lf.LINF_DEEP_BELOW, lambda: lf.linf_deep_weights(MU, ALPHA, RHO, [0.1], 3)),
    (lf.LINF_DEEP_BELOW, lambda: lf.linf_deep_weights(MU, ALPHA, RHO, [0.1], 4)),
    (lf.LINF_DEEP_SCORE, lambda: lf.linf_deep_scores(MU, ALPHA, RHO, 3)),
    (lf.LINF_DEEP_LOG_SCORE, lambda: lf.linf_deep_log_scores(MU, ALPHA, RHO, 3)),
    (lf.LINF_DEEP_LOG_SCORE, lambda: lf.linf_sam_limit(MU, ALPHA, RHO, 3)),
    (lf.UNBALANCED_THRESHOLD, lambda: lf.linf_grows_unbalanced(MU, ALPHA, ALPHA, RHO)),
    (lf.CHATTER_BOUND, lambda: lf.linf_chatter_bound(0.01, MU, RHO)),
    (l2.ALPHA_GROW, lambda: l2.l2_regime_statement(MU, RHO)),
    (l2.SANDWICH_LOWER, lambda: l2.l2_regime_statement(MU, RHO)),
    (l2.ALPHA_GD_LIKE, lambda: l2.l2_regime_statement(MU, RHO)),
    (l2.JACOBIAN_OTHER, lambda: l2.jacobian_spectrum(MU, 1)),
    (l2.JDAGGER_UNIFORM, lambda: l2.jdagger_uniform(MU, RHO, 0.5)),
    (l2.LOG_LINEAR, lambda: l2.jdagger_general(MU, ALPHA, RHO, 1.0, 0.5)),
    (l2.SWITCH_TIME, lambda: l2.switch_time_residual(3.0, 1.0, 1.0, 2.0, 1.0)),
    (l2.DEEP_PERTURBED_WEIGHT, lambda: l2.deep_perturbed_weights(MU, 0.4, RHO)),
    (l2.DEEP_SMALL_ALPHA_FIELD, lambda: l2.deep_small_alpha_field(MU, RHO, 3)),
]


@pytest.mark.parametrize("formula, call", WRAPPERS, ids=[f"{f.name}-{i}" for i, (f, _) in enumerate(WRAPPERS)])
def test_each_public_wrapper_evaluates_its_formula(formula, call):
    with traced() as seen:
        call()
    assert formula in seen


@pytest.mark.parametrize("algorithm", ["gd", "linf", "l2"])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_reduced_field_evaluates_its_formula_and_is_the_depth1_field_at_depth_1(algorithm, depth):
    field = sf.reduced_field(algorithm, depth, "joint")
    assert isinstance(field.formula, Formula) and field.formula.expr == field.expr
    with traced() as seen:
        field(ALPHA, MU, RHO)
    assert seen == [field.formula]
    if depth == 1:
        assert field.expr == gd.DEPTH1_FIELD.expr == sp.diff(gd.GD_DEPTH1.expr, gd.tau)


def test_the_l2_catalogue_holds_the_expressions_the_formulas_lambdify():
    for key, formula in [("alpha_grow", l2.ALPHA_GROW), ("sandwich_upper", l2.ALPHA_GROW),
                         ("sandwich_lower", l2.SANDWICH_LOWER), ("alpha_gd_like", l2.ALPHA_GD_LIKE),
                         ("log_linear", l2.LOG_LINEAR), ("jdagger_score_general", l2.LOG_LINEAR),
                         ("jdagger_score_uniform", l2.JDAGGER_UNIFORM), ("jacobian_other", l2.JACOBIAN_OTHER),
                         ("deep_perturbed_weight", l2.DEEP_PERTURBED_WEIGHT),
                         ("deep_small_alpha_field", l2.DEEP_SMALL_ALPHA_FIELD)]:
        assert l2.FORMULAS[key] is formula.expr, key
    assert l2.FORMULAS["switch_time"] == l2.SWITCH_TIME.eq(l2.tau)
    assert l2.FORMULAS["plateau_exit_time"] is l2.PLATEAU_EXIT_TIME


def test_the_plateau_slope_is_the_derivative_of_the_exit_time_in_ln_1_over_delta():
    u = sp.Symbol("u", real=True)
    exit_time = l2.PLATEAU_EXIT_TIME.subs(l2.delta, sp.exp(-u))  # u = ln(1/delta)
    assert sp.simplify(sp.diff(exit_time, u) - l2.PLATEAU_EXIT_SLOPE.expr) == 0
    assert l2.PLATEAU_EXIT_SLOPE(1.55) == 1.0 / 1.55


def test_the_zero_hit_time_is_the_L2_formula_at_L_2_and_the_even_formula_above():
    expr = lf.LINF_ZERO_HIT_TIME.expr
    assert expr.subs(lf.L, 2) == lf.LINF_ZERO_HIT
    for depth in (4, 6, 8):
        assert expr.subs(lf.L, depth) == lf.LINF_DEEP_ZERO_HIT.subs(lf.L, depth)
    branch2 = sp.lambdify((lf.mu, lf.alpha, lf.rho), lf.LINF_ZERO_HIT)
    branch4 = sp.lambdify((lf.mu, lf.alpha, lf.rho, lf.L), lf.LINF_DEEP_ZERO_HIT)
    below = ALPHA < RHO
    assert np.array_equal(lf.linf_zero_hit_time(MU, ALPHA, RHO, 2)[below], branch2(MU[below], ALPHA[below], RHO))
    assert np.array_equal(lf.linf_zero_hit_time(MU, ALPHA, RHO, 4)[below], branch4(MU[below], ALPHA[below], RHO, 4))


def test_the_merged_below_rho_form_is_the_odd_and_the_even_closed_form():
    x0, t = lf.rho - lf.alpha, lf.tau
    for depth in (3, 4, 5, 6, 7):
        sign = -1 if depth % 2 else 1  # odd L: x^(2-L) grows with tau; even L: it shrinks
        typed = lf.rho - (x0 ** (2 - depth) - sign * (depth - 2) * lf.mu * t) ** sp.Rational(1, 2 - depth)
        assert sp.simplify(lf.LINF_DEEP_BELOW.expr.subs(lf.L, depth) - typed) == 0


def test_the_log_score_is_the_log_of_the_score():
    x = sp.Symbol("x", positive=True)  # alpha - rho > 0: the score is taken over G only
    on_G = {lf.alpha: lf.rho + x}
    assert sp.simplify(sp.exp(lf.LINF_DEEP_LOG_SCORE.expr.subs(on_G)) - lf.LINF_DEEP_SCORE.expr.subs(on_G)) == 0
    np.testing.assert_allclose(np.exp(lf.linf_deep_log_scores(MU, ALPHA, 0.01, 4)),
                               lf.linf_deep_scores(MU, ALPHA, 0.01, 4), rtol=1e-14)


def test_the_departure_rate_is_the_growth_rate_of_w_minus_rho_in_the_closed_form():
    rate = sp.diff(sp.log(lf.LINF_L2.expr - lf.rho), lf.tau)
    assert sp.simplify(rate - lf.LINF_DEPARTURE_RATE.expr) == 0
    assert lf.LINF_DEPARTURE_RATE.expr == sp.diff(lf.LINF_FIELD_L2, lf.SYMBOLS["w"])


def test_one_euler_step_is_w_plus_h_times_the_field():
    w, h = np.array([0.3, 0.5]), 0.01
    F = np.array([1.2, -0.4])
    assert np.array_equal(sf.EULER_STEP(w, h, F), w + h * F)


# ------------------------------------------------------------------------------- one set of symbols
def _theory_atoms() -> set:
    atoms = set()
    for module in (gd, lf, l2, sf):
        for value in module.SYMBOLS.values():
            atoms.add(value)  # a symbol, an applied function such as w(tau), or an undefined function (argmax)
            if isinstance(value, sp.Basic):
                atoms |= value.free_symbols | {type(f) for f in value.atoms(sp.core.function.AppliedUndef)}
    return atoms


SAM_THEORY = [c for c in all_claims() if c.kind == "theory" and c.id.startswith("sam.")]


@pytest.mark.parametrize("claim", SAM_THEORY, ids=lambda c: c.id)
def test_statements_and_hypotheses_are_written_in_the_theory_symbols(claim):
    """Every symbol and undefined function of a sam.* statement or hypothesis is one of theory's (SYMBOLS of
    sam_gd, sam_linf, sam_l2, sam_fields): a retyped symbol (same name, other assumptions) would not be."""
    if claim.source.startswith("implementation cross-check"):
        return  # a kernel against its reference (biasaudit.claims.crosscheck): no statement of the paper
    theory = _theory_atoms()
    for expr in (claim.statement, *claim.hypotheses):
        foreign = {s for s in expr.free_symbols if s not in theory}
        foreign |= {type(f) for f in expr.atoms(sp.core.function.AppliedUndef) if type(f) not in theory}
        assert not foreign, f"{claim.id}: {sorted(map(str, foreign))} are not theory symbols"
