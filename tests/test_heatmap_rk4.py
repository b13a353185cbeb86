"""numerics/heatmap_rk4.py, numerics/rsqrt.py, numerics/simd.py: the batched RK4 heatmap kernel.

The kernel (``method="rk4"``) is checked against the plain numpy RK4 of the same update
(:func:`biasaudit.numerics.heatmap_rk4.rk4_heatmap_reference`), across d, padded blocks, collapse/escape mixes
and renormalisation."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from biasaudit.numerics import heatmap as hm
from biasaudit.numerics import heatmap_rk4 as rk
from biasaudit.numerics.rsqrt import MAGIC, NEWTON_STEPS, _bits, _from_bits, rsqrt
from biasaudit.numerics.simd import WIDE_VECTOR_ATTRIBUTE, prefer_wide_vectors

# Rounding only: fastmath reassociation and the few-ulp 1/√ accumulate over the 2,000–6,000 steps below;
# the RK4 truncation error at these steps is ≥ 1e-8, so a wrong update shows up far above this.
KERNEL_VS_NUMPY_LOG_S = 1e-10
RSQRT_ULP = 4  # tested bound of rsqrt against 1/math.sqrt (measured max: 3 ulp)


@njit
def _rsqrt_with(q, steps):
    """rsqrt with a chosen number of Newton steps (the negative control uses one fewer)."""
    y = _from_bits(MAGIC - (_bits(q) >> 1))
    for _ in range(steps):
        y = y * (1.5 - 0.5 * q * y * y)
    return y


def _ulp_error(y, q):
    ref = 1.0 / math.sqrt(q)
    return abs(y - ref) / math.ulp(ref)


@given(st.floats(min_value=-300.0, max_value=300.0), st.floats(min_value=1.0, max_value=10.0))
def test_rsqrt_is_within_a_few_ulp_over_the_normal_range(exponent, mantissa):
    q = mantissa * 10.0**exponent
    assert _ulp_error(rsqrt(q), q) <= RSQRT_ULP


def test_rsqrt_extremes_and_the_newton_count_is_needed():
    qs = 10.0 ** np.linspace(-307, 307, 20001)
    qs = np.concatenate([qs, [np.finfo(float).tiny, np.finfo(float).max, 1.0, 4.0, 2.0]])
    assert max(_ulp_error(rsqrt(q), q) for q in qs) <= RSQRT_ULP
    assert max(_ulp_error(_rsqrt_with(q, NEWTON_STEPS), q) for q in qs) <= RSQRT_ULP
    # negative control: one Newton step fewer leaves ~3e-11 relative error, far outside the bound
    assert max(_ulp_error(_rsqrt_with(q, NEWTON_STEPS - 1), q) for q in qs) > 1e4


def test_prefer_wide_vectors_marks_the_llvm_function_and_changes_nothing_else():
    @njit(fastmath=True)
    def scaled_sum(x):
        prefer_wide_vectors()
        s = 0.0
        for i in range(x.size):
            s += 2.0 * x[i]
        return s

    x = np.arange(100.0)
    assert scaled_sum(x) == pytest.approx(2 * x.sum())
    llvm = next(iter(scaled_sum.inspect_llvm().values()))
    assert WIDE_VECTOR_ATTRIBUTE in llvm


def _reference(mu, alphas, times, spo, rho=math.sqrt(2)):
    """The plain-numpy RK4 of the same update, as a Heatmap."""
    from biasaudit.theory.sam_l2 import c_L

    mu, alphas, times = np.asarray(mu, float), np.asarray(alphas, float), np.asarray(times, float)
    batch = np.repeat(alphas[:, None], mu.size, axis=1) if alphas.ndim == 1 else alphas
    c = c_L(rho, 2, "joint")
    jd, loss, logS, status = rk.rk4_heatmap_reference(batch, mu, c, (times[1] - times[0]) / spo, spo, times.size)
    return hm.Heatmap(alphas, times, "tau", jd, loss, logS, status, None, "numpy", c, mu)


def _heatmaps(mu, alphas, times, spo, rho=math.sqrt(2)):
    out = {"rk4": hm.dominant_index_heatmap(mu, rho, alphas, times, method="rk4", steps_per_output=spo)}
    return _reference(mu, alphas, times, spo, rho), out


def _assert_same(ref, h):
    assert np.array_equal(ref.status, h.status)
    assert np.array_equal(np.isfinite(ref.log_S), np.isfinite(h.log_S))
    fin = np.isfinite(ref.log_S)
    assert np.max(np.abs(ref.log_S[fin] - h.log_S[fin])) < KERNEL_VS_NUMPY_LOG_S
    assert np.max(np.abs(ref.loss - h.loss)) < KERNEL_VS_NUMPY_LOG_S
    assert np.mean(ref.j_dagger == h.j_dagger) > 0.999  # a near-tie may flip at rounding level


@pytest.mark.parametrize("mu", [(1.0,), (1.0, 2.0), (1.0, 1.5, 2.0, 2.5, 3.0), tuple(np.linspace(1, 3, 17))])
def test_kernels_match_the_numpy_rk4_across_d_and_padded_blocks(mu):
    from biasaudit.numerics.l2_boundaries import alpha_collapse

    mu = np.array(mu)
    ac = alpha_collapse(mu, math.sqrt(2)) if mu.size > 1 else 1.0
    alphas = np.linspace(0.7 * ac, 2.0 * ac, 70)  # 70 = one full block and one padded block
    ref, out = _heatmaps(mu, alphas, np.linspace(0.0, 8.0, 41), 50)
    if mu.size > 1:
        assert {-1, 1} <= set(ref.status.tolist())
    for h in out.values():
        _assert_same(ref, h)


def test_kernels_renormalise_past_2_to_the_400_like_the_reference():
    mu = np.array([1.0, 2.0, 3.0])
    alphas = np.array([[0.5, 0.4, 0.6], [2.0, 1.0, 3.0], [0.3, 0.2, 0.25]])
    times = np.linspace(0.0, 120.0, 61)  # e^{3·120} = 2^{519}: at least one renormalisation
    ref, out = _heatmaps(mu, alphas, times, 100)
    assert np.max(ref.log_S[np.isfinite(ref.log_S)]) > 400 * math.log(2)
    for h in out.values():
        _assert_same(ref, h)


def test_kernels_agree_on_per_coordinate_alphas_and_the_initial_certificates():
    rng = np.random.default_rng(3)
    mu = np.array([1.0, 1.3, 2.2, 4.0])
    alphas = np.exp(rng.uniform(-3, 1, size=(45, 4)))
    alphas[0] = 1e-3  # collapsed at τ = 0
    alphas[1] = 10.0  # escaped at τ = 0
    ref, out = _heatmaps(mu, alphas, np.linspace(0.0, 3.0, 31), 40)
    assert ref.status[0] == -1 and ref.status[1] == 1
    for h in out.values():
        _assert_same(ref, h)


def test_negative_control_a_perturbed_step_is_caught():
    """Half a percent more step in the kernel must break the agreement the tests above demand."""
    mu, alphas, times = np.array([1.0, 2.0, 3.0]), np.linspace(0.4, 1.2, 16), np.linspace(0.0, 6.0, 31)
    ref = _reference(mu, alphas, times, 50)
    batch = np.repeat(alphas[:, None], 3, axis=1)
    jd, loss, logS, status = rk.rk4_heatmap(batch, mu, ref.c, 1.005 * 6.0 / 30 / 50, 50, 31)
    fin = np.isfinite(ref.log_S) & np.isfinite(logS)
    assert np.max(np.abs(ref.log_S[fin] - logS[fin])) > KERNEL_VS_NUMPY_LOG_S


def test_one_coordinate_kernel_follows_the_closed_form():
    """d = 1: S = w and w' = w − c, so w(τ) = c + (α − c) e^τ (escape from α = 2 > c = 1)."""
    jd, loss, logS, status = rk.rk4_heatmap(np.array([[2.0]]), np.array([1.0]), 1.0, 0.01, 10, 3)
    assert status[0] == 1 and np.allclose(logS[0], np.log(1.0 + np.exp([0.0, 0.1, 0.2])), rtol=0, atol=1e-9)


def test_the_kernel_reads_rk4_from_the_tableau():
    """The stage offsets and weights are the tableau's (a_{i,i−1}, b), not copies."""
    from biasaudit.numerics.tableau import RK4

    assert rk._SUB == tuple(RK4.a_subdiagonal) and rk._B == tuple(RK4.b)
