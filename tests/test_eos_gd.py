"""GD on the toy model: numba kernel vs the numpy reference, outcome classes, mpmath, sweeps; part 1 of GD claims."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from biasaudit.numerics.eos_gd import CONVERGED, DIVERGED, OUTCOMES, PERIOD2, gd_path, gd_sweep, gd_sweep_numpy
from biasaudit.numerics.eos_mpmath import gd_run_mpmath
from biasaudit.numerics.eos_sweep import flow_fixed_point, kink_location, norm_path, pareto_excess, sweep_eos
from biasaudit.plumbing import InputError
from biasaudit.theory import eos_model as model
from biasaudit.theory.eos import eos_regimes

TOY = dict(x=[1.0, 2.0], y=1.0, w0=[0.1, 0.1])


def test_eos_gd_update_is_gradient_step_symbolic():
    d = 3
    x, w = model.xs(d), model.ws(d)
    eta = sp.Symbol("eta", positive=True)
    L = model.loss_expr(d)
    r = sum(xi * wi**2 for xi, wi in zip(x, w)) - model.y_sym
    for xi, wi in zip(x, w):
        gd = wi - eta * sp.diff(L, wi)
        assert sp.simplify(gd - wi * (1 - 4 * model.c_sym * eta * r * xi)) == 0


def test_eos_gd_tracking_gap_symbolic():
    # near M the residual obeys r+ = r (1 - eta S) + O(r^2): stable iff eta S <= 2, i.e. 1 - eta S/2 >= 0
    eta, S, r = sp.symbols("eta S r", positive=True)
    mult = 1 - eta * S
    assert sp.solve(sp.Eq(sp.Abs(mult), 1), eta) == [2 / S]
    assert sp.simplify((1 - eta * S / 2).subs(eta, 2 / S)) == 0


def test_eos_gd_flow_aligned_linear_limit():
    # gap(eta) = C eta + D eta^2: gap(eta)/gap(eta/2) -> 2 as eta -> 0
    eta, C, D = sp.symbols("eta C D", positive=True)
    gap = C * eta + D * eta**2
    assert sp.limit(gap / gap.subs(eta, eta / 2), eta, 0) == 2


def test_eos_gd_kink_fixed_point_symbolic():
    # eta (A - C eta) = 2 has the root 2/A + O(C) above eta_c = 2/A for C > 0
    eta, A, C = sp.symbols("eta A C", positive=True)
    root = min(sp.solve(sp.Eq(eta * (A - C * eta), 2), eta), key=lambda e: e.subs({A: 8, C: 1}))
    assert sp.limit(root, C, 0) == 2 / A
    assert sp.diff(root, C).subs({A: 8, C: sp.Rational(1, 10)}) > 0


def test_eos_gd_projected_monotone_fixed_points():
    # the flow projection of a point of M is the point itself
    reg = eos_regimes([1, 2], 1, [0.1, 0.1])
    p = norm_path([1, 2], 1, np.sqrt(reg.beta_gf), 0.1, 3)
    assert p["projected"] == pytest.approx(reg.beta_gf_l1, rel=1e-13)


def test_eos_gd_numba_matches_numpy_reference():
    eta = np.linspace(0.05, 0.6, 120)
    a = gd_sweep(**TOY, eta=eta, max_steps=5000)
    b = gd_sweep_numpy(**TOY, eta=eta, max_steps=5000)
    both = a.converged & b.converged
    assert both.sum() >= 80
    assert np.mean(a.outcome == b.outcome) > 0.9
    # fastmath reassociation changes the last bits of r; below the chaotic window (eta < 0.469) the
    # convergent runs agree to ~1e-12 (EoS oscillations amplify round-off; near the window up to ~1e-8)
    regular = both & (eta < 0.46)
    assert np.max(np.abs(a.w[regular] - b.w[regular])) < 1e-10
    assert np.all(a.steps[both] - b.steps[both] <= 3)


@settings(max_examples=15)
@given(st.floats(0.01, 0.7), st.floats(0.02, 1.3))
def test_eos_gd_outputs_are_finite_for_any_eta(eta, a):
    s = gd_sweep([1.0, 2.0], 1.0, [a, a], [eta, 2 * eta, 4 * eta], max_steps=3000)
    for arr in (s.w, s.w_prev, s.r_tail, s.sharpness, s.beta_l1, s.w_l1):
        assert np.all(np.isfinite(arr))
    assert set(s.outcome.tolist()) <= set(range(len(OUTCOMES)))
    conv = s.converged
    assert np.all(np.abs(s.r[conv]) < s.tol)


def test_eos_gd_exact_zero_factor_is_an_outcome():
    # w0 = (1, 1), eta = 0.25: r0 = 2 and 1 - 2 eta r0 x_1 = 0 exactly
    s = gd_sweep([1.0, 2.0], 1.0, [1.0, 1.0], [0.25], max_steps=1000)
    assert np.all(np.isfinite(s.w)) and s.outcome[0] in range(len(OUTCOMES))


def test_eos_gd_divergence_is_classified_not_raised():
    s = gd_sweep(**TOY, eta=[5.0, 50.0])
    assert np.all(s.outcome == DIVERGED) and np.all(np.isfinite(s.w))


def test_eos_gd_period2_window_on_the_toy():
    s = gd_sweep(**TOY, eta=np.linspace(0.52, 0.55, 60))
    assert (s.outcome == PERIOD2).sum() >= 5
    p2 = s.outcome == PERIOD2
    assert np.all(s.r_tail[p2, -1] * s.r_tail[p2, -2] < 0)


def test_eos_gd_float64_vs_mpmath_convergent_digits():
    for eta in (0.1, 0.262, 0.4):
        s = gd_sweep(**TOY, eta=[eta])
        m = gd_run_mpmath(**TOY, eta=eta, tol=1e-25, max_steps=20000)
        assert s.outcome[0] == m.outcome == CONVERGED
        assert np.max(np.abs(s.beta[0] - m.beta) / m.beta) < 1e-7


def test_eos_gd_mpmath_chaotic_class_agrees():
    s = gd_sweep(**TOY, eta=[0.49], max_steps=5000)
    m = gd_run_mpmath(**TOY, eta=0.49, max_steps=5000)
    assert s.outcome[0] == m.outcome != CONVERGED


def test_eos_gd_kink_location_on_a_synthetic_curve():
    eta = np.linspace(0.9, 1.1, 201)
    S = np.where(eta < 1.02, 2.0 - 0.1 * eta, (2.0 - 0.1 * 1.02) * 1.02 / eta)
    assert kink_location(eta, S) == pytest.approx(1.02, abs=2e-3)


def test_eos_gd_toy_kink_and_fixed_point():
    reg = eos_regimes(**TOY)
    sw = sweep_eos(**TOY, eta_min=0.9 * reg.eta_c, eta_max=1.1 * reg.eta_c, n=201)
    fp = flow_fixed_point(**TOY, eta_c=reg.eta_c)
    assert 1.0 < sw.kink / reg.eta_c < 1.03
    assert abs(sw.kink / fp - 1) < 0.005


def test_eos_gd_d2_endpoints_on_front_and_d3_excess():
    reg = eos_regimes(**TOY)
    s = gd_sweep(**TOY, eta=np.linspace(0.3 * reg.eta_c, 0.46, 80))
    assert np.max(np.abs(pareto_excess(s))) < 1e-11
    s3 = gd_sweep([0.5, 1, 2], 1.0, [0.1] * 3, np.linspace(0.1, 0.46, 80))
    ex = pareto_excess(s3)
    assert ex.min() > -1e-9 and ex.max() > 0.05


def test_eos_gd_rejects_bad_input():
    with pytest.raises(InputError, match="^eta: must be > 0"):
        gd_sweep(**TOY, eta=[0.1, -0.1])
    with pytest.raises(InputError, match="^eta: must be finite"):
        gd_sweep(**TOY, eta=[math.nan])
    with pytest.raises(InputError, match="^max_steps:"):
        gd_sweep(**TOY, eta=[0.1], max_steps=0)
    with pytest.raises(InputError, match="^x:"):
        gd_path([1.0, -2.0], 1.0, [0.1, 0.1], 0.1, 10)


def test_the_sweep_figure_writes_a_png(tmp_path):
    """``biasaudit sweep eos --plot``'s figure (also the ``eos-outcomes`` figure job)."""
    from biasaudit.figures._common import save
    from biasaudit.figures.eos import sweep_figure

    sw = sweep_eos(**TOY, eta_min=0.05, eta_max=0.6, n=80, max_steps=20_000)
    path = save(sweep_figure(sw), tmp_path / "eos_sweep.png")
    assert path.stat().st_size > 10_000


def test_eos_gd_previous_iterate_matches_numpy_reference():
    eta = np.linspace(0.05, 0.46, 40)
    a = gd_sweep(**TOY, eta=eta, max_steps=5000)
    b = gd_sweep_numpy(**TOY, eta=eta, max_steps=5000)
    both = a.converged & b.converged & (a.steps == b.steps)
    assert both.sum() >= 30
    assert np.allclose(a.w_prev[both], b.w_prev[both], rtol=1e-10, atol=1e-12)
    # runs that ran out of steps keep an exact copy of w_{k-1}
    c = gd_sweep(**TOY, eta=[0.53], max_steps=2001)
    p = gd_path(**TOY, eta=0.53, steps=2001)
    assert np.allclose(c.w_prev[0], p[-2], rtol=1e-9) and np.allclose(c.w[0], p[-1], rtol=1e-9)
