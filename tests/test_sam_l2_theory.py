"""Part (1) of every sam.l2 claim: exact symbolic identities and limits (theory/sam_l2.py)."""

import numpy as np
import pytest
import sympy as sp

from biasaudit.numerics import l2_boundaries as B
from biasaudit.theory import sam_l2 as T

tau, A, c, S, H = T.tau, T.A, T.c, T.S, T.H
mu_j, mu_1, mu_d = T.mu_j, T.mu_1, T.mu_d
alpha_j, w_j = T.alpha_j, T.w_j


def test_log_linear_reduction_solves_the_flow_symbolically():
    # d/dτ [ln α + μτ − cμ²A(τ)] with A' = 1/S equals w'/w of the flow
    ln_w = T.FORMULAS["log_linear"]
    d_dtau = sp.diff(ln_w, tau) + sp.diff(ln_w, A) * T.FORMULAS["A_prime"]
    assert sp.simplify(d_dtau - T.FORMULAS["field"] / w_j) == 0
    assert ln_w.subs({tau: 0, A: 0}) == sp.log(alpha_j)


def test_jdagger_formula_uniform_alpha_is_the_harmonic_mean_form():
    general = T.FORMULAS["jdagger_score_general"] - sp.log(alpha_j)
    uniform = tau * T.FORMULAS["jdagger_score_uniform"].subs(H, tau / A)
    assert sp.simplify(general - uniform) == 0


@pytest.mark.parametrize("d, k", [(2, 0), (2, 1), (3, 0), (3, 1), (3, 2)])
def test_fixed_points_jacobian_is_exactly_the_stated_spectrum(d, k):
    J, mus = T.jacobian_at_fixed_point(d, k)
    assert J.is_diagonal()
    for j in range(d):
        want = mus[k] if j == k else mus[j] * (1 - mus[j] / mus[k])
        assert sp.simplify(J[j, j] - want) == 0


def test_fixed_points_are_zeros_of_the_field():
    for k in range(3):
        mus = np.array([0.7, 1.3, 2.9])
        w = np.zeros(3)
        w[k] = 0.4
        assert np.all(T.rescaled_field_l2(w, mus, 0.4) == 0.0)


def test_certificates_collapse_rates_are_negative_below_c_mu1():
    r, s = sp.symbols("r s", positive=True)  # S = cμ₁/(1+r) < cμ₁, μ_j = μ₁(1+s) ≥ μ₁
    rate = T.FORMULAS["log_growth_rate"].subs({S: c * mu_1 / (1 + r), mu_j: mu_1 * (1 + s)})
    assert sp.factor(rate).is_negative
    rate_1 = T.FORMULAS["log_growth_rate"].subs({S: c * mu_1 / (1 + r), mu_j: mu_1})
    assert sp.factor(rate_1).is_negative


def test_certificates_escape_coordinate_above_c_grows():
    r = sp.Symbol("r", positive=True)  # w_k = c(1+r) ⇒ S ≥ μ_k w_k > cμ_k ⇒ rate_k > 0
    rate = T.FORMULAS["log_growth_rate"].subs({S: mu_j * c * (1 + r) + sp.Symbol("e", nonnegative=True)})
    assert sp.factor(sp.together(rate)).is_positive


def test_sandwich_and_alpha_grow_boundaries_are_where_rates_vanish():
    # uniform α: S(0) = α‖μ‖; at α = cμ₁/‖μ‖ the slowest-decaying rate is 0, at α = cμ_d/‖μ‖ the fastest
    for bound, m in (("sandwich_lower", mu_1), ("alpha_grow", mu_d)):
        S0 = T.FORMULAS[bound] * T.norm_mu
        assert sp.simplify(T.FORMULAS["log_growth_rate"].subs({S: S0, mu_j: m})) == 0
    assert T.FORMULAS["sandwich_upper"] == T.FORMULAS["alpha_grow"]


def test_sandwich_collapses_to_c_at_d_equal_1():
    assert T.FORMULAS["sandwich_lower"].subs(T.norm_mu, mu_1) == c
    assert B.alpha_collapse([1.7], 0.3) == pytest.approx(0.3 / np.sqrt(2), rel=1e-15)


def test_regime3_boundary_is_the_tie_between_d_minus_1_and_d_at_tau_0():
    mu_a = T.mu_dm1
    tie = T.FORMULAS["jdagger_score_uniform"].subs(mu_j, mu_d) - T.FORMULAS["jdagger_score_uniform"].subs(mu_j, mu_a)
    H_star = sp.solve(sp.Eq(tie, 0), H)
    assert len(H_star) == 1 and sp.simplify(H_star[0] / T.norm_mu - T.FORMULAS["alpha_gd_like"]) == 0


def test_switch_times_solve_beta_j_equals_beta_j_plus_1():
    a, b = sp.symbols("mu_a mu_b", positive=True)
    ln_a = T.FORMULAS["log_linear"].subs(mu_j, a)
    ln_b = T.FORMULAS["log_linear"].subs(mu_j, b)
    sol = sp.solve(sp.Eq(ln_a, ln_b), tau)
    assert len(sol) == 1 and sp.simplify(sol[0] - c * (a + b) * A) == 0
    assert T.switch_time_residual(3.0, 1.0, 1.0, 2.0, 1.0) == 0.0


def test_scale_invariance_only_alpha_over_c_and_direction_of_mu_matter():
    s, u, sigma = sp.symbols("s u sigma", positive=True)
    # w = c u, μ → sμ, τ = σ/s: du/dσ = μ u (1 − μ/‖μ⊙u‖), independent of c and s
    S_scaled = s * sp.Symbol("N", positive=True) * c  # ‖sμ ⊙ c u‖ = s c ‖μ⊙u‖, N = ‖μ⊙u‖
    field = (s * mu_j) * (c * u) * (1 - c * s * mu_j / S_scaled)
    du_dsigma = sp.simplify(field / c / s)
    assert du_dsigma.free_symbols == {mu_j, u, sp.Symbol("N", positive=True)}


def test_plateau_beta_is_rho_squared_over_2_with_joint_normalisation():
    c_joint = T.FORMULAS["c_joint"].subs(T.L, 2)
    assert sp.simplify(T.FORMULAS["plateau_beta"].subs(c, c_joint) - T.rho**2 / 2) == 0


def test_asymptotics_log_ratio_to_gd_is_minus_c_mu_squared_A():
    gd = sp.log(alpha_j) + mu_j * tau
    assert sp.simplify(T.FORMULAS["log_linear"] - gd + c * mu_j**2 * A) == 0


def test_deep_perturbed_weight_at_uniform_alpha():
    a, n = sp.symbols("alpha N", positive=True)
    for L in range(2, 7):
        T_norm = a ** (L - 1) * n  # ‖μ ⊙ w^{L−1}‖ = α^{L−1}‖μ‖
        w_tilde = a - c * mu_j * a ** (L - 1) / T_norm
        assert sp.simplify(w_tilde - T.FORMULAS["deep_perturbed_weight"].subs({T.alpha: a, T.norm_mu: n})) == 0


@pytest.mark.parametrize("L", [2, 3, 4, 5, 6])
def test_deep_small_alpha_field_limit_and_parity(L):
    a = sp.Symbol("alpha", positive=True)
    field = mu_j * T.FORMULAS["deep_perturbed_weight"].subs(T.alpha, a) ** (L - 1)
    limit = sp.limit(field, a, 0)
    want = T.FORMULAS["deep_small_alpha_field"].subs(T.L, L)
    assert sp.simplify(limit - want) == 0
    assert (want.subs({c: 1, mu_j: 1, T.norm_mu: 1}) < 0) == (L % 2 == 0)


def test_c_L_normalisations():
    assert T.c_L(0.6, 2, "joint") == pytest.approx(0.6 / np.sqrt(2))
    assert T.c_L(0.6, 3, "layer") == 0.6
    with pytest.raises(ValueError, match="^normalization:"):
        T.c_L(0.6, 2, "global")


def test_regime_boundaries_are_ordered_and_depth_dependent():
    r = B.l2_sam_regime_boundaries([1.0, 1.5, 2.0], 0.4)
    lo, hi = r.sandwich
    assert lo <= r.alpha_collapse <= hi == r.alpha_grow < r.alpha_gd_like
    r4 = B.l2_sam_regime_boundaries([1.0, 1.5, 2.0], 0.4, depth=4)
    assert r4.collapses and r4.alpha_gd_like is None
    lo4, hi4 = r4.sandwich
    assert lo4 < r4.alpha_collapse < hi4 == r4.alpha_grow
    r3 = B.l2_sam_regime_boundaries([1.0, 1.5, 2.0], 0.4, depth=3)
    assert not r3.collapses
    with pytest.raises(ValueError, match="^depth:"):
        B.alpha_collapse([1.0, 2.0], 0.4, depth=3)


def test_the_statement_leaves_alpha_collapse_to_numerics_and_agrees_on_the_closed_forms():
    stated = T.l2_regime_statement([1.0, 1.5, 2.0], 0.4)
    computed = B.l2_sam_regime_boundaries([1.0, 1.5, 2.0], 0.4)
    assert stated.collapses and stated.alpha_collapse is None and stated.alpha_collapse_bracket is None
    for name in ("c", "alpha_grow", "alpha_gd_like", "sandwich", "alpha_shrink_all"):
        assert getattr(stated, name) == getattr(computed, name)
    lo, hi = computed.alpha_collapse_bracket
    assert stated.sandwich[0] <= lo <= computed.alpha_collapse <= hi <= stated.sandwich[1]
