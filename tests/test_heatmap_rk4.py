"""numerics/heatmap_rk4.py, numerics/rsqrt.py, numerics/simd.py: the batched RK4 heatmap kernels.

The unrolled (generated) and generic kernels are checked against the plain numpy RK4 of the same update
(``method="numpy"``), across d, padded blocks, collapse/escape mixes and renormalisation."""

import math
import sys
from pathlib import Path

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


def _heatmaps(mu, alphas, times, spo, rho=math.sqrt(2)):
    out = {v: hm.dominant_index_heatmap(mu, rho, alphas, times, method="rk4", steps_per_output=spo, rk4_variant=v)
           for v in ("generic", rk.kernel_variant(len(mu)))}
    ref = hm.dominant_index_heatmap(mu, rho, alphas, times, method="numpy", steps_per_output=spo)
    return ref, out


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
    """Half a percent more step in the generic kernel must break the agreement the tests above demand."""
    mu, alphas, times = np.array([1.0, 2.0, 3.0]), np.linspace(0.4, 1.2, 16), np.linspace(0.0, 6.0, 31)
    ref = hm.dominant_index_heatmap(mu, math.sqrt(2), alphas, times, method="numpy", steps_per_output=50)
    jd, loss, logS = (np.zeros((16, 31), dtype=np.int64), np.zeros((16, 31)), np.zeros((16, 31)))
    status = np.zeros(16, dtype=np.int64)
    batch = np.repeat(alphas[:, None], 3, axis=1)
    rk.rk4_batch(batch, mu, ref.c, 1.005 * 6.0 / 30 / 50, 50, jd, loss, logS, status, variant="generic")
    fin = np.isfinite(ref.log_S) & np.isfinite(logS)
    assert np.max(np.abs(ref.log_S[fin] - logS[fin])) > KERNEL_VS_NUMPY_LOG_S


def test_generated_source_is_deterministic_and_specialised():
    assert rk.unrolled_steps_source(5) == rk.unrolled_steps_source(5)
    assert rk.unrolled_steps_source(5) != rk.unrolled_steps_source(4)
    assert "y4 = m4 *" in rk.unrolled_steps_source(5) and "y5" not in rk.unrolled_steps_source(5)
    assert rk.kernel_variant(5) == "unrolled-d5" and rk.kernel_variant(rk.MAX_UNROLLED_D + 1) == "generic"
    with pytest.raises(ValueError, match="d: must be in"):
        rk.unrolled_steps_source(0)
    with pytest.raises(ValueError, match="variant: must be"):
        rk.rk4_batch(np.ones((2, 3)), np.ones(3), 1.0, 0.1, 1, *(np.zeros((2, 2)),) * 3, np.zeros(2, np.int64),
                     variant="unrolled-d4")


def _forget_loaded(variant, monkeypatch):
    prefix = f"biasaudit_kernel_heatmap_rk4_{variant.replace('-', '_')}_"
    for name in [n for n in sys.modules if n.startswith(prefix)]:
        monkeypatch.delitem(sys.modules, name)
    return prefix


def test_generated_module_is_written_once_under_the_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path))
    _forget_loaded("unrolled-d2", monkeypatch)
    module = rk._load("unrolled-d2")
    files = list((tmp_path / "kernels").glob("*.py"))
    assert module.__name__ in sys.modules and len(files) == 1
    assert files[0].read_text() == rk._module_source("unrolled-d2")


def test_a_tampered_kernel_file_is_replaced_before_anything_of_it_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path))
    _forget_loaded("unrolled-d2", monkeypatch)
    module = rk._load("unrolled-d2")
    path = Path(module.__file__)
    marker = tmp_path / "pwned"
    path.write_text(f"open({str(marker)!r}, 'w').close()\n" + rk._module_source("unrolled-d2"))
    _forget_loaded("unrolled-d2", monkeypatch)
    again = rk._load("unrolled-d2")
    assert not marker.exists() and path.read_text() == rk._module_source("unrolled-d2")
    assert again.__file__ == str(path) and callable(again.rk4_batch)


def test_a_kernel_dir_others_can_write_is_not_imported_from(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path))
    (tmp_path / "kernels").mkdir(mode=0o777)
    (tmp_path / "kernels").chmod(0o777)
    _forget_loaded("unrolled-d1", monkeypatch)
    module = rk._load("unrolled-d1")
    assert getattr(module, "__file__", None) is None and not list((tmp_path / "kernels").glob("*.py"))


def test_unwritable_cache_dir_compiles_in_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(blocker))
    name_prefix = _forget_loaded("unrolled-d1", monkeypatch)
    module = rk._load("unrolled-d1")
    assert module.__name__.startswith(name_prefix)
    jd, loss, logS = np.zeros((1, 3), dtype=np.int64), np.zeros((1, 3)), np.zeros((1, 3))
    status = np.zeros(1, dtype=np.int64)
    module.rk4_batch(np.array([[2.0]]), np.array([1.0]), 1.0, 0.01, 10, jd, loss, logS, status)
    # d = 1: S = w and w' = w − c, so w(τ) = c + (α − c) e^τ
    assert status[0] == 1 and np.allclose(logS[0], np.log(1.0 + np.exp([0.0, 0.1, 0.2])), rtol=0, atol=1e-9)


def test_generated_module_name_changes_when_a_dependency_changes(tmp_path, monkeypatch):
    """numba's cache only watches the caller's file: a changed dependency must give a new module (and file)."""
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path))
    names = []
    for deps in ("deps v1", "deps v2"):
        monkeypatch.setattr(rk, "package_digest", lambda deps=deps: deps)
        _forget_loaded("unrolled-d3", monkeypatch)
        names.append(rk._load("unrolled-d3").__name__)
    assert names[0] != names[1] and len(list((tmp_path / "kernels").glob("*.py"))) == 2
    monkeypatch.undo()
    # the digest covers the modules the generated source calls into
    package = Path(rk.__file__).parent
    called = {"heatmap_rk4", "heatmap_common", "rsqrt", "simd"}
    assert called <= {p.stem for p in package.glob("*.py")}
    assert "def _handle_events" in Path(rk.__file__).read_text() and "MAGIC" in (package / "rsqrt.py").read_text()
