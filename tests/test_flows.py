"""biasaudit.numerics.flows: convergence order, error control, events (Filippov sliding, blow-up, collapse), inputs."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from biasaudit.numerics.flows import integrate_reduced_flow, integrate_reduced_flow_reference
from biasaudit.numerics.tableau import RK4
from biasaudit.plumbing import InputError
from biasaudit.theory.sam_gd import gd_blowup_times
from biasaudit.theory.sam_linf import linf_deep_weights, linf_l2_weights, linf_zero_hit_time

H = 2.0 ** -np.arange(0, 11)  # 2^0 ... 2^-10


def _order(hs, errs):
    errs = np.asarray(errs)
    keep = errs > 1e-14  # above the roundoff floor
    return np.polyfit(np.log(np.asarray(hs)[keep]), np.log(errs[keep]), 1)[0]


def test_flows_rk4_order_on_linear_ode():
    """GD at L = 2 is linear, w = alpha e^{mu tau}: fitted log-error slope over h = 2^0..2^-10 is 4 +- 0.2."""
    mu, alpha = np.array([0.5, 1.0]), 0.5
    exact = alpha * np.exp(mu)
    errs = [np.max(np.abs(integrate_reduced_flow("gd", mu, alpha, 0.0, 2, 1.0, dt=h, n_out=2).w[-1] - exact)
                   / exact) for h in H]
    assert abs(_order(H, errs) - RK4.order) <= 0.2


def test_flows_rk4_order_on_linf_closed_form():
    """l_inf-SAM at L = 3 against its algebraic closed form (both sides of rho): order 4 +- 0.2."""
    mu, alpha, rho = np.array([0.5, 1.0]), np.array([0.3, 0.05]), 0.1
    exact = linf_deep_weights(mu, alpha, rho, [1.0], 3)
    errs = [np.max(np.abs(integrate_reduced_flow("linf", mu, alpha, rho, 3, 1.0, dt=h, n_out=2).w[-1] - exact))
            for h in H]
    assert abs(_order(H, errs) - RK4.order) <= 0.2


@pytest.mark.parametrize("rtol", [1e-6, 1e-8, 1e-10, 1e-12])
def test_flows_adaptive_error_bounded_by_tolerance(rtol):
    """DP5(4): the global error of a blow-up-type ODE (GD, L = 3) stays within 10 rtol of the exact value."""
    mu, alpha = np.array([0.5, 1.0]), 0.5
    res = integrate_reduced_flow("gd", mu, alpha, 0.0, 3, 1.5, method="adaptive", rtol=rtol, atol=rtol * 1e-2,
                                 n_out=2)
    exact = alpha / (1 - alpha * mu * 1.5)
    assert res.status == "ok"
    assert np.max(np.abs(res.w[-1] - exact) / exact) <= 10 * rtol


def test_flows_adaptive_takes_fewer_steps_at_looser_tolerance():
    runs = [integrate_reduced_flow("l2", [1.0, 2.0], 0.8, 1.0, 2, 10.0, method="adaptive", rtol=r, n_out=2)
            for r in (1e-6, 1e-10)]
    assert runs[0].n_steps < runs[1].n_steps
    np.testing.assert_allclose(runs[0].w[-1], runs[1].w[-1], rtol=1e-4)


@given(st.sampled_from(["gd", "linf", "l2"]), st.integers(1, 4), st.sampled_from(["joint", "layer"]),
       st.lists(st.floats(0.15, 0.6), min_size=1, max_size=3), st.floats(0.05, 0.3))
def test_flows_numba_rk4_matches_numpy_reference(alg, L, norm, alpha, rho):
    """The numba kernel and the plain-numpy reference (sympy-lambdified field) agree to roundoff."""
    mu = np.linspace(1.0, 1.5, len(alpha))
    kw = dict(normalization=norm, dt=0.01, n_out=6)
    a = integrate_reduced_flow(alg, mu, alpha, rho, L, 0.3, **kw)
    b = integrate_reduced_flow_reference(alg, mu, alpha, rho, L, 0.3, **kw)
    assert a.status == b.status
    np.testing.assert_allclose(a.w, b.w, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("method", ["rk4", "adaptive"])
def test_flows_linf_filippov_sliding_is_exact(method):
    """alpha_j < rho at L = 2: w_j hits 0 at tau_0 and stays exactly 0 (sign(0) = 0), no chattering."""
    mu, alpha, rho = np.array([1.0, 2.0]), np.array([0.05, 0.3]), 0.1
    t0 = linf_zero_hit_time(mu, alpha, rho)[0]
    res = integrate_reduced_flow("linf", mu, alpha, rho, 2, 3.0, method=method, dt=1e-3, n_out=31)
    after = res.tau > t0 + 1e-2
    assert np.all(res.w[after, 0] == 0.0)
    np.testing.assert_allclose(res.w, linf_l2_weights(mu, alpha, rho, res.tau), rtol=1e-8, atol=1e-12)


def test_flows_linf_odd_depth_never_slides():
    """Parity: at L = 3, alpha < rho increases towards rho and never reaches 0."""
    res = integrate_reduced_flow("linf", [1.0], [0.05], 0.1, 3, 200.0, method="adaptive", n_out=5)
    assert np.all(np.diff(res.w[:, 0]) > 0) and 0.09 < res.w[-1, 0] < 0.1


@pytest.mark.parametrize("method", ["rk4", "adaptive"])
def test_flows_blowup_is_reported_not_nan(method):
    mu, alpha = np.array([1.0, 2.0]), np.array([0.5, 0.3])
    t_star = gd_blowup_times(mu, alpha, 3)
    res = integrate_reduced_flow("gd", mu, alpha, 0.0, 3, 2.0, method=method, dt=1e-3, n_out=11)
    assert res.status == "blowup"
    assert np.all(np.isfinite(res.w)) and np.all(np.isfinite(res.tau))
    assert res.tau[-1] == res.tau_stop
    assert abs(res.tau_stop - t_star.min()) <= (1e-9 if method == "adaptive" else 2e-3)


@pytest.mark.parametrize("method", ["rk4", "adaptive"])
def test_flows_l2_collapse_is_reported(method):
    """l2-SAM, L = 2, mu = (1, 2), c = 1/sqrt(2): alpha = 0.5 < alpha_c = 0.5213 collapses; 0.6 escapes."""
    low = integrate_reduced_flow("l2", [1.0, 2.0], 0.5, 1.0, 2, 30.0, method=method, dt=1e-3, n_out=7)
    high = integrate_reduced_flow("l2", [1.0, 2.0], 0.6, 1.0, 2, 30.0, method=method, dt=1e-3, n_out=7)
    assert low.status == "collapsed" and low.w.shape == (7, 2) and np.all(low.w[1:] == 0)
    assert 0 < low.tau_stop < 30
    assert high.status == "ok" and np.all(high.w[-1] > 1e3)


@pytest.mark.parametrize("kwargs,param", [
    ({"mu": [1.0, -2.0]}, "mu"), ({"mu": [1.0, math.nan]}, "mu"), ({"alpha": [0.1, 0.2, 0.3]}, "alpha"),
    ({"alpha": math.inf}, "alpha"), ({"rho": 0.0}, "rho"), ({"depth": 0}, "depth"), ({"tau_end": -1.0}, "tau_end"),
    ({"algorithm": "sgd"}, "algorithm"), ({"method": "euler"}, "method"), ({"dt": 0.0}, "dt"),
    ({"normalization": "rows"}, "normalization"), ({"n_out": 1}, "n_out"),
])
def test_flows_bad_input_names_the_parameter(kwargs, param):
    args = {"algorithm": "l2", "mu": [1.0, 2.0], "alpha": 0.3, "rho": 0.1, "depth": 2, "tau_end": 1.0}
    args.update(kwargs)
    method = args.pop("method", "rk4")
    dt = args.pop("dt", None)
    n_out = args.pop("n_out", 5)
    norm = args.pop("normalization", "joint")
    with pytest.raises(InputError, match=f"^{param}:"):
        integrate_reduced_flow(**args, method=method, dt=dt, n_out=n_out, normalization=norm)


@pytest.mark.parametrize("method", ["rk4", "adaptive"])
def test_flows_l2_depth2_obeys_the_log_linear_reduction(method):
    """l2-SAM at L = 2: ln(w_j/alpha_j) - mu_j tau = -c mu_j^2 A(tau) with ONE scalar A for every j."""
    mu = np.array([1.0, 1.5, 2.0, 3.0])
    alpha = np.array([0.9, 0.7, 0.8, 0.6])
    res = integrate_reduced_flow("l2", mu, alpha, 1.0, 2, 8.0, method=method, dt=1e-3, rtol=1e-12, n_out=9)
    assert res.status == "ok"
    A = -(np.log(res.w / alpha) - res.tau[:, None] * mu) / (res.c * mu**2)
    np.testing.assert_allclose(A, A[:, :1] * np.ones_like(A), rtol=1e-8, atol=1e-12)
    assert np.all(np.diff(A[:, 0]) > 0)  # A' = 1/S > 0
