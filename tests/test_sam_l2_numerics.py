"""numerics/l2_reduction.py, numerics/heatmap*.py, numerics/sam_mpmath.py: kernels against references."""

import math

import numpy as np
import pytest

from biasaudit.numerics import heatmap as hm
from biasaudit.numerics import heatmap_reduction as hr
from biasaudit.numerics import l2_reduction as red
from biasaudit.numerics.l2_boundaries import alpha_collapse
from biasaudit.numerics.sam_mpmath import mp_A_at, mp_classify

MU = np.array([1.0, 1.5, 2.0, 2.5, 3.0])
EPS = np.finfo(float).eps


def test_reduction_kernel_matches_plain_numpy_reference_classifier():
    for alpha in (0.3, 0.47, 0.48, 0.9):
        a = red.classify_l2_trajectory(MU, alpha, 1.0, dt=1e-2)
        b = red.classify_l2_trajectory_reference(MU, np.full(5, alpha), 1.0, dt=1e-2)
        assert a.code == b.code and a.tau == pytest.approx(b.tau, abs=1e-9)
        assert a.A == pytest.approx(b.A, rel=1e-12)


def test_reduction_rk4_converges_at_order_4_against_mpmath():
    """diffrax-style: error of A(τ=3) at dt = 2^-2 … 2^-6 against a 30-digit GBS reference, fitted slope ≈ 4."""
    alpha = np.array([0.6, 0.3, 0.5])
    mu = np.array([1.0, 2.0, 3.0])
    exact = float(mp_A_at(mu, alpha, 0.7, [3], dps=30)[0])
    dts = 2.0 ** -np.arange(2, 7)
    errs = [abs(red.l2_reduction_trajectory(mu, alpha, 0.7, [0.0, 3.0], dt=dt).A[-1] - exact) for dt in dts]
    slope = np.polyfit(np.log(dts), np.log(errs), 1)[0]
    assert 3.7 < slope < 4.3, (slope, errs)


def test_heatmap_rk4_kernel_converges_at_order_4():
    mu, alpha = np.array([1.0, 2.0]), np.array([1.1])
    times = np.array([0.0, 2.0])
    exact = red.l2_reduction_trajectory_reference(mu, np.full(2, 1.1), 1.0, [0.0, 2.0], rtol=1e-13, atol=1e-15)
    exact_log_S = exact.log_S[-1]
    spos = np.array([8, 16, 32, 64])
    errs = [abs(hm.dominant_index_heatmap(mu, np.sqrt(2), alpha, times, method="rk4", steps_per_output=int(n))
                .log_S[0, -1] - exact_log_S) for n in spos]
    slope = np.polyfit(np.log(2.0 / spos), np.log(errs), 1)[0]
    assert 3.7 < slope < 4.3, (slope, errs)


def test_log_linear_reduction_matches_full_flow_dop853():
    alpha = np.array([0.8, 0.5, 0.9, 0.6, 0.7])
    grid = np.linspace(0, 20, 41)
    a = red.l2_reduction_trajectory(MU, alpha, 1.0, grid)
    b = red.l2_reduction_trajectory_reference(MU, alpha, 1.0, grid)
    assert np.max(np.abs(a.log_w - b.log_w)) < 1e-8
    assert np.array_equal(a.j_dagger, b.j_dagger)


def test_reduction_works_in_log_space_far_past_float64_overflow():
    tr = red.l2_reduction_trajectory(MU, 1.0, 1.0, [0.0, 300.0, 1000.0])  # e^{3·1000} overflows float64
    assert np.all(np.isfinite(tr.log_w)) and tr.log_w[-1, -1] > 2000
    assert np.all(np.isfinite(tr.A)) and tr.status[-1] == red.ESCAPE


def test_collapse_is_certified_and_classified_not_a_nan():
    tr = red.l2_reduction_trajectory(MU, 0.2, 1.0, np.linspace(0, 10, 11))
    assert tr.status[-1] == red.COLLAPSE and np.isinf(tr.A[-1]) and tr.j_dagger[-1] == 0
    h = hm.dominant_index_heatmap(MU, np.sqrt(2), [0.2], np.linspace(0, 10, 11), method="rk4")
    assert h.status[0] == -1 and h.loss[0, -1] == pytest.approx(math.log(2)) and not np.isnan(h.loss).any()


def test_alpha_collapse_reproduces_to_12_digits_under_step_refinement():
    a = alpha_collapse(MU, math.sqrt(2))
    b = alpha_collapse(MU, math.sqrt(2), dt=1e-3 / 3)
    assert abs(a - b) / a < 1e-11


def _contender(method, alphas, times, spo):
    """The adaptive reduction, the plain-numpy RK4 (numerics' reference) or the bench's solve_ivp baseline."""
    if method == "reduction":
        return hm.dominant_index_heatmap(MU, math.sqrt(2), alphas, times, method=method)
    from biasaudit.benchmarks.heatmap_baselines import solve_ivp_heatmap
    from biasaudit.numerics.heatmap_rk4 import rk4_heatmap_reference

    batch = np.repeat(alphas[:, None], MU.size, axis=1)
    if method == "numpy":
        jd, loss, logS, status = rk4_heatmap_reference(batch, MU, 1.0, (times[1] - times[0]) / spo, spo, times.size)
    else:
        jd, loss, logS, status = solve_ivp_heatmap(batch, MU, 1.0, times)
    return hm.Heatmap(alphas, times, "tau", jd, loss, logS, status, None, method, 1.0, MU)


@pytest.mark.parametrize("method", ["numpy", "reduction", "solve_ivp"])
def test_heatmap_methods_agree_with_the_numba_kernel(method):
    ac = alpha_collapse(MU, math.sqrt(2))
    alphas = np.array([0.9, 1.01, 1.3, 2.5]) * ac
    times = np.linspace(0, 30, 61)
    ref = hm.dominant_index_heatmap(MU, math.sqrt(2), alphas, times, method="rk4", steps_per_output=100)
    h = _contender(method, alphas, times, 100)
    assert np.array_equal(h.status, ref.status)
    assert np.mean(h.j_dagger == ref.j_dagger) > 0.99  # switch instants may land on either side
    both = np.isfinite(h.log_S) & np.isfinite(ref.log_S)
    assert np.max(np.abs(h.log_S[both] - ref.log_S[both])) < 1e-6


def test_heatmap_gd_baseline_is_major_only_and_loss_decreases():
    h = hm.dominant_index_heatmap(MU, 1.0, [0.01, 0.5, 2.0], np.linspace(0, 5, 11), method="gd")
    assert np.all(h.j_dagger[:, 1:] == 5)
    assert np.all(np.diff(h.loss, axis=1) <= 0)


def test_heatmap_per_coordinate_alpha_matches_the_general_formula():
    from biasaudit.theory.sam_l2 import jdagger_general

    alphas = np.array([[0.9, 0.6, 0.5, 0.4, 0.3], [0.5, 0.5, 0.9, 0.2, 0.1]])
    times = np.linspace(0, 10, 21)
    h = hm.dominant_index_heatmap(MU, math.sqrt(2), alphas, times, method="rk4")
    for b in range(2):
        tr = red.l2_reduction_trajectory(MU, alphas[b], 1.0, times)
        live = np.isfinite(tr.A)
        assert np.array_equal(h.j_dagger[b][live][1:], jdagger_general(MU, alphas[b], 1.0, times[live], tr.A[live])[1:])


def test_heatmap_iterations_record_tau_as_sum_of_steps_and_track_the_flow():
    ac = alpha_collapse(MU, math.sqrt(2))
    h = hm.dominant_index_heatmap(MU, math.sqrt(2), [1.5 * ac], np.arange(0, 2001, 100), time="iterations",
                                  method="sam", eta=0.01)
    tau = h.tau[0]
    assert tau[0] == 0 and np.all(np.diff(tau) > 0) and tau[1] <= 100 * 0.01 * 0.5 + 1e-12  # h ≤ η σ(0)
    flow = red.l2_reduction_trajectory_reference(MU, np.full(5, 1.5 * ac), 1.0, tau)
    assert np.max(np.abs(h.log_S[0] - flow.log_S)) < 0.05  # O(η)


def test_discrete_separatrix_shift_is_order_eta():
    ac = alpha_collapse([1.0, 2.0], 1.0)
    shifts = [ac - hm.discrete_alpha_collapse([1.0, 2.0], 1.0, h, rel_tol=1e-9) for h in (0.02, 0.01)]
    assert shifts[0] > 0 and shifts[1] > 0 and shifts[0] / shifts[1] == pytest.approx(2.0, rel=0.05)


def test_zero_gradient_defines_epsilon_zero():
    from biasaudit.theory.sam_l2 import rescaled_field_deep, rescaled_field_l2

    assert np.all(rescaled_field_l2(np.zeros(3), np.array([1.0, 2, 3]), 0.5) == 0)
    assert np.all(rescaled_field_deep(np.zeros(3), np.array([1.0, 2, 3]), 0.5, 3) == 0)
    from biasaudit.numerics import heatmap_rk4 as rk

    mu = np.array([1.0, 2.0])
    # a zero column kept live: the step kernel leaves it at 0
    X, m, scratch = rk._block_start(np.zeros((3, 2)), mu, 1.0, np.zeros(3, dtype=np.int64), rk.BLOCK)
    V, kappa, s, vmx, live, watch = rk._rows(X, 2, rk.BLOCK)
    live[:3] = 1.0
    rk._steps(X, mu, 0.01, 5, scratch)
    assert np.all(V[:, :3] == 0) and np.all(np.isfinite(X))


def test_mpmath_classifier_agrees_with_float64_threshold():
    ac = alpha_collapse([1.0, 2.0], math.sqrt(2))  # c = 1
    assert mp_classify([1.0, 2.0], ac * (1 - 1e-9), 1.0, dps=30, tol=1e-20).code == -1
    assert mp_classify([1.0, 2.0], ac * (1 + 1e-9), 1.0, dps=30, tol=1e-20).code == 1


@pytest.mark.parametrize("call, param", [
    (lambda: red.l2_reduction_trajectory([1.0, 2.0], [0.1, 0.2, 0.3], 1.0, [0, 1]), "alpha"),
    (lambda: red.l2_reduction_trajectory([1.0, 2.0], 0.1, 1.0, [1, 0]), "tau_grid"),
    (lambda: red.classify_l2_trajectory([1.0, math.nan], 0.1, 1.0), "mu"),
    (lambda: red.classify_l2_trajectory([1.0, 2.0], -0.1, 1.0), "alpha"),
    (lambda: red.classify_l2_trajectory([1.0, 2.0], 0.1, 0.0), "c"),
    (lambda: hm.dominant_index_heatmap([1.0, 2.0], 1.0, [0.1], [0, 1, 3]), "times"),
    (lambda: hm.dominant_index_heatmap([1.0, 2.0], 1.0, [0.1], [0, 1], method="euler"), "method"),
    (lambda: hm.dominant_index_heatmap([1.0, 2.0], 1.0, [0.0], [0, 1]), "alphas"),
    (lambda: hm.dominant_index_heatmap([1.0, 2.0], 1.0, [0.1], [0, 1], time="iterations", method="numpy"),
     "method"),
    (lambda: hm.dominant_index_heatmap([1.0, 2.0], -1.0, [0.1], [0, 1]), "rho"),
    (lambda: alpha_collapse([1.0, 2.0], math.inf), "rho"),
])
def test_numerics_bad_input_names_the_parameter(call, param):
    with pytest.raises(ValueError, match=f"^{param}:"):
        call()


@pytest.mark.parametrize("normalization", ["joint", "layer"])
def test_heatmap_discrete_kernel_matches_sam_core_run_sam(normalization):
    """Independent cross-check: sam-core's discrete SAM on the full 2 x d parameters (numerics.sam_discrete)."""
    sd = pytest.importorskip("biasaudit.numerics.sam_discrete")
    mu, rho, eta, alpha = np.array([1.0, 2.0, 3.0]), 0.4, 0.05, 0.25
    h = hm.dominant_index_heatmap(mu, rho, [alpha], np.arange(0, 401, 50), time="iterations", method="sam",
                                  eta=eta, normalization=normalization)
    tr = sd.run_sam(np.full((2, 3), alpha), mu[None, :], np.array([1.0]), algorithm="l2", rho=rho, eta=eta,
                    steps=400, normalization=normalization, record_every=50)
    assert np.allclose(h.tau[0], tr.tau, rtol=1e-12, atol=0)
    assert np.allclose(h.loss[0], tr.loss, rtol=1e-10, atol=0)
    assert np.array_equal(h.j_dagger[0][1:], np.argmax(tr.beta, axis=1)[1:] + 1)


def test_reduction_matches_sam_core_reduced_flow_integrator():
    """Independent cross-check: sam-core's generic reduced-field integrator (numerics.flows), L = 2."""
    flows = pytest.importorskip("biasaudit.numerics.flows")
    mu, alpha, rho = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.3, 0.4]), 0.6
    res = flows.integrate_reduced_flow("l2", mu, alpha, rho, 2, 4.0, method="adaptive", rtol=1e-12, atol=1e-14,
                                       n_out=41)
    tr = red.l2_reduction_trajectory(mu, alpha, rho / np.sqrt(2), res.tau)
    assert np.max(np.abs(np.log(res.w) - tr.log_w)) < 1e-8


def test_reduction_block_kernel_matches_the_one_alpha_reference_kernel():
    ac = alpha_collapse(MU, math.sqrt(2))
    alphas = np.linspace(0.81 * ac, 2.0 * ac, 37)  # not a multiple of the block size; not at alpha_c itself
    log_alphas = np.log(np.repeat(alphas[:, None], 5, axis=1))
    outs = []
    for kernel in (hr._A_batch, hr._A_batch_scalar):
        A, rows, status = np.zeros((37, 81)), np.zeros((37, 81), dtype=np.int64), np.zeros(37, dtype=np.int64)
        kernel(log_alphas, MU, 1.0, 40.0 / 8000, 100, A, rows, status)
        outs.append((A, rows, status))
    (A1, r1, s1), (A2, r2, s2) = outs
    assert np.array_equal(np.isfinite(A1), np.isfinite(A2)) and np.array_equal(r1, r2) and np.array_equal(s1, s2)
    both = np.isfinite(A1)
    assert np.max(np.abs(A1[both] - A2[both]) / np.maximum(1.0, np.abs(A2[both]))) < 1e-13


def test_heatmap_gd_baseline_in_iterations_is_major_only():
    h = hm.dominant_index_heatmap(MU, 1.0, [0.01, 0.3], np.arange(0, 501, 50), time="iterations", method="gd",
                                  eta=0.1)
    assert np.all(h.j_dagger[:, 1:] == 5) and np.all(h.status == 1)
    assert np.all(np.diff(h.tau, axis=1) > 0) and np.all(np.diff(h.loss, axis=1) < 0)


# ---- adaptive Dormand–Prince 5(4) reduction (method="reduction"; the fixed-step RK4 is "reduction-fixed") ----
def _adaptive_vs_reference(alpha, c_kernel, grid):
    a = red.l2_reduction_trajectory(MU, alpha, c_kernel, grid, rtol=1e-11)
    b = red.l2_reduction_trajectory_reference(MU, alpha, 1.0, grid)
    both = np.isfinite(a.log_S) & np.isfinite(b.log_S)
    same_support = np.array_equal(np.isfinite(a.log_S), np.isfinite(b.log_S))
    return float(np.max(np.abs(a.log_S[both] - b.log_S[both]))), same_support, a, b


@pytest.mark.parametrize("factor", [0.9, 1.3, 2.5])
def test_adaptive_reduction_matches_full_flow_dop853_reference(factor):
    # away from alpha_c (there the flow itself amplifies errors like 1/|alpha - alpha_c|)
    ac = alpha_collapse(MU, math.sqrt(2))
    err, same_support, a, b = _adaptive_vs_reference(factor * ac, 1.0, np.linspace(0, 30, 121))
    assert same_support and np.array_equal(a.status, b.status)
    assert err < 1e-9


def test_adaptive_reduction_negative_control_wrong_c_is_detected():
    ac = alpha_collapse(MU, math.sqrt(2))
    err, _, _, _ = _adaptive_vs_reference(1.3 * ac, 1.05, np.linspace(0, 30, 121))
    assert err > 1e-3


def test_adaptive_reduction_heatmap_matches_rk4_kernel_around_alpha_c():
    ac = alpha_collapse(MU, math.sqrt(2))
    rel = np.geomspace(1e-6, 1e-2, 9)
    alphas = ac * (1.0 + np.concatenate([-rel[::-1], rel]))
    times = np.linspace(0, 60, 241)
    rk4 = hm.dominant_index_heatmap(MU, math.sqrt(2), alphas, times, method="rk4")
    h = hm.dominant_index_heatmap(MU, math.sqrt(2), alphas, times, method="reduction")
    assert np.array_equal(h.j_dagger, rk4.j_dagger)
    assert np.array_equal(h.status, rk4.status)
    assert np.all(h.status[:9] == -1) and np.all(h.j_dagger[:9, -1] == 0)  # alpha < alpha_c collapses
    assert np.all(h.status[9:] == 1) and np.all(h.j_dagger[9:, -1] > 0)
    assert np.all(np.isneginf(h.log_S[:9, -1])) and np.all(h.loss[:9, -1] == hm.LN2)
    assert h.steps is not None and np.all(h.steps[:, 0] > 0)


def test_adaptive_and_fixed_reduction_agree_and_adaptive_takes_fewer_steps():
    ac = alpha_collapse(MU, math.sqrt(2))
    alphas = np.array([0.8, 0.9, 1.1, 1.3, 1.6, 2.0]) * ac  # not alpha_c itself (ill-conditioned there)
    times = np.linspace(0, 40, 81)
    a = hm.dominant_index_heatmap(MU, math.sqrt(2), alphas, times, method="reduction")
    f = hm.dominant_index_heatmap(MU, math.sqrt(2), alphas, times, method="reduction-fixed")
    assert np.array_equal(a.status, f.status) and np.array_equal(a.j_dagger, f.j_dagger)
    both = np.isfinite(a.log_S) & np.isfinite(f.log_S)
    assert np.array_equal(np.isfinite(a.log_S), np.isfinite(f.log_S))
    assert np.max(np.abs(a.log_S[both] - f.log_S[both])) < 1e-8
    assert np.max(a.steps[:, 0]) < 40 * 3 / 2e-3 / 10  # far fewer than the fixed RK4 steps


def test_adaptive_reduction_rejects_dt_and_rtol_together():
    from biasaudit.plumbing import InputError

    with pytest.raises(InputError):
        red.l2_reduction_trajectory(MU, 0.5, 1.0, [0.0, 1.0], dt=1e-3, rtol=1e-10)
