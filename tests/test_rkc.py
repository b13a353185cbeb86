"""Runge–Kutta–Chebyshev steps (validation.rkc) and the rkc gradient-flow proxy."""

import math

import numpy as np
import pytest
import torch

from biasaudit.plumbing import InputError
from biasaudit.validation import gf_proxy
from biasaudit.validation.eos_data import teacher_dataset
from biasaudit.validation.gd_trainer import make_problem
from biasaudit.validation.gf_proxy import gradient_flow_sharpness
from biasaudit.validation.rkc import (MAX_STAGES, power_estimate, rkc2_coefficients, rkc2_error, rkc2_stages,
                                      rkc2_step, stability_polynomial)

STAGES = (2, 3, 5, 10, 40, 200)
S_GF_AGREEMENT = 0.01  # the bar for a proxy against today's at half its step


def _diagonal_flow(lam):
    """L = ½ Σ λ_i θ_i²: ∇L = λ ⊙ θ, the exact flow θ_i(t) = e^{−λ_i t} θ_i(0)."""
    lam = torch.as_tensor(lam, dtype=torch.float64)
    return lam, (lambda y: lam * y)


@pytest.mark.parametrize("s", STAGES)
def test_the_step_multiplies_a_linear_mode_by_the_stability_polynomial(s):
    """The stage recursion and the closed form aₛ + bₛTₛ(w₀ + w₁z) are the same polynomial (z = −hλ)."""
    beta = rkc2_coefficients(s).beta
    lam, grad = _diagonal_flow(np.linspace(-0.2, 1.0, 25) * beta)
    y0 = torch.ones_like(lam)
    out = rkc2_step(grad, y0, grad(y0), 1.0, s)
    assert np.allclose(out.numpy(), stability_polynomial(s, -lam.numpy()), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("s", STAGES)
def test_stable_exactly_on_the_interval_minus_beta_to_zero(s):
    """|Rₛ(z)| ≤ 1 on [−βₛ, 0] (βₛ = (1 + w₀)/w₁ ≈ 0.65 s²), and |Rₛ| > 1 within 20 % past −βₛ (within 1 %
    from s = 10 on): the stage-count rule is not loose. (βₛ is where w₀ + w₁z = −1; for a few stages the damped
    polynomial stays in [−1, 1] a little further.)"""
    c = rkc2_coefficients(s)
    z = np.linspace(-c.beta, 0.0, 20_001)
    assert np.abs(stability_polynomial(s, z)).max() <= 1 + 1e-12
    past = 1.2 if s < 10 else 1.01  # negative control
    beyond = np.linspace(-past * c.beta, -c.beta, 20_001)
    assert np.abs(stability_polynomial(s, beyond)).max() > 1
    assert 0.6 * s * s - 1 <= c.beta <= 0.67 * s * s


def test_second_order_and_not_third():
    """Rₛ(z) − e^z = O(z³): the error falls 8x per halving of z, with a nonzero z³ constant."""
    for s in (3, 10, 50):
        z = np.array([-1e-2, -5e-3, -2.5e-3])
        err = stability_polynomial(s, z) - np.exp(z)
        ratios = err[:-1] / err[1:]
        assert np.allclose(ratios, 8.0, rtol=0.02)
        assert abs(err[-1]) > 1e-12  # not a higher-order method by accident (a shifted z² term would give 4x)


def test_stage_count_is_the_fewest_that_cover_h_rho():
    for h_rho in (0.0, 0.5, 3.0, 17.0, 650.0, 1e5):
        s = rkc2_stages(h_rho)
        assert rkc2_coefficients(s).beta >= h_rho
        assert s == 2 or rkc2_coefficients(s - 1).beta < h_rho
    with pytest.raises(InputError, match="^h_rho:"):
        rkc2_stages(-1.0)
    with pytest.raises(InputError, match="^h_rho:"):
        rkc2_stages(math.nan)
    with pytest.raises(InputError, match="^h_rho:.*stages"):
        rkc2_stages(10 * rkc2_coefficients(MAX_STAGES).beta)
    with pytest.raises(InputError, match="^stages:"):
        rkc2_coefficients(1)


def test_a_stiff_flow_at_a_hundred_times_the_euler_step():
    """θ' = −Aθ with λ ∈ [0.01, 1000]: h = 2 (Euler needs h < 0.002) tracks the slow modes to O(h²) and no
    mode grows; Euler at the same h blows up (negative control). (Stiff modes are damped only mildly per step,
    |Rₛ| ≲ aₛ + bₛ ≈ 0.95: the proxy's error estimate sees them if they matter.)"""
    lam, grad = _diagonal_flow(np.geomspace(1e-2, 1e3, 12))
    y = torch.ones_like(lam)
    h, steps = 2.0, 10
    s = rkc2_stages(h * lam.max().item())
    for _ in range(steps):
        y = rkc2_step(grad, y, grad(y), h, s)
    exact = torch.exp(-lam * h * steps)
    slow = lam < 0.1
    assert torch.allclose(y[slow], exact[slow], rtol=0.02)
    assert y.abs().max() <= 1
    euler = torch.ones_like(lam)
    for _ in range(steps):
        euler = euler - h * grad(euler)
    assert euler.abs().max() > 1e10


def test_error_estimate_is_third_order_on_a_slow_mode():
    lam, grad = _diagonal_flow([0.3, 0.7])
    y0 = torch.tensor([1.0, -2.0], dtype=torch.float64)
    est = []
    for h in (0.2, 0.1):
        y1 = rkc2_step(grad, y0, grad(y0), h, 4)
        est.append(rkc2_error(y0, y1, grad(y0), grad(y1), h).norm().item())
    assert est[0] / est[1] == pytest.approx(8.0, rel=0.1)


def test_power_estimate_finds_the_top_eigenvalue_of_a_quadratic():
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((30, 30)))
    lam = np.concatenate([[40.0, 12.0], rng.uniform(0, 5, 28)])
    A = torch.as_tensor(Q @ np.diag(lam) @ Q.T)
    grad = lambda y: A @ y  # noqa: E731
    theta = torch.as_tensor(rng.standard_normal(30))
    v = torch.as_tensor(rng.standard_normal(30))
    est, v = power_estimate(grad, theta, grad(theta), v, 30)
    assert est == pytest.approx(40.0, rel=1e-6)
    again, _ = power_estimate(grad, theta, grad(theta), v, 1)  # warm start: one gradient suffices
    assert again == pytest.approx(40.0, rel=1e-6)


# ----------------------------------------------------------------------------- the rkc proxy on a network

EPS = 0.02


def _problem(dtype="float64"):
    """A small FCN whose flow sharpens: S rises from 0.88 at init to 1.76 at L = 0.02 (so s_GF is not S(0))."""
    data = teacher_dataset(40, 10, d=5, num_classes=3, seed=1)
    return make_problem("fcn", "mse", data.X_train, data.y_train, data.X_test, data.y_test, num_classes=3,
                        dtype=dtype, width=16, depth=2, activation="tanh", seed=1, init_scale=0.5)


def test_rkc_proxy_agrees_with_the_explicit_proxy_and_takes_fewer_gradients():
    problem = _problem()
    gd = gradient_flow_sharpness(problem, EPS, method="gd", fraction=0.1, every=50)
    rkc = gradient_flow_sharpness(problem, EPS, method="rkc", rtol=1e-3, every=5)
    assert gd.reached_eps and rkc.reached_eps and rkc.all_converged
    assert rkc.s_gf > 1.5 * rkc.path[0]["S"]  # the flow sharpens: the check is not read at the init
    assert rkc.s_gf == pytest.approx(gd.s_gf, rel=S_GF_AGREEMENT)
    assert rkc.n_grad < gd.n_grad / 2
    assert rkc.method == "rkc" and rkc.rtol == 1e-3 and rkc.s_gf == max(p["S"] for p in rkc.path)
    assert rkc.eta_c == pytest.approx(2 / rkc.s_gf, rel=1e-15)


def test_rkc_proxy_lands_just_below_each_threshold():
    problem = _problem()
    eps = EPS
    res = gradient_flow_sharpness(problem, eps, method="rkc", rtol=1e-2, every=1000)
    final = res.path[-1]["loss"]
    assert (1 - 3 * gf_proxy.LANDING) * eps <= final < eps
    losses = {round(p["loss"], 12) for p in res.path}
    for level in (4 * eps, 2 * eps):  # each level was measured just past its crossing
        assert any((1 - 3 * gf_proxy.LANDING) * level <= x < level for x in losses)


def test_rkc_proxy_half_tolerance_changes_s_gf_little():
    problem = _problem()
    a = gradient_flow_sharpness(problem, EPS, method="rkc", rtol=1e-2)
    b = gradient_flow_sharpness(problem, EPS, method="rkc", rtol=1e-2 / 8)
    assert a.s_gf == pytest.approx(b.s_gf, rel=S_GF_AGREEMENT)
    assert b.n_grad > a.n_grad


def test_rkc_proxy_bad_input():
    problem = _problem()
    with pytest.raises(InputError, match="^rtol:"):
        gradient_flow_sharpness(problem, 0.05, method="rkc", rtol=0.0)
    with pytest.raises(InputError, match="^rtol:"):
        gradient_flow_sharpness(problem, 0.05, method="gd", rtol=1e-2)
