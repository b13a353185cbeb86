"""mpmath references (30+ digits) for the near-threshold cases: α_c and the switch times (slow)."""

import math

import mpmath
import numpy as np
import pytest

from biasaudit.numerics.l2_boundaries import alpha_collapse
from biasaudit.numerics.sam_mpmath import mp_alpha_collapse, mp_switch_times


@pytest.mark.slow
@pytest.mark.parametrize("mu", [(1.0, 2.0), (1.0, 1.01)])
def test_alpha_collapse_float64_agrees_with_mpmath_bisection(mu):
    a = alpha_collapse(mu, math.sqrt(2))  # c = 1
    lo, hi = mp_alpha_collapse(mu, a * (1 - 1e-9), a * (1 + 1e-9), rel_tol=1e-14, dps=32)
    assert float(abs((lo + hi) / 2 - a) / a) < 1e-11  # the issue asks 1e-9; measured ~2e-13


@pytest.mark.slow
def test_switch_time_float64_agrees_with_mpmath_near_threshold():
    from biasaudit.claims.sam.l2.dynamics import SWITCH_TIMES

    params = {"d": 2, "mu": (1.0, 2.0), "rho": math.sqrt(2), "normalization": "joint", "delta": 1e-8}
    predicted = SWITCH_TIMES.predict(params)
    alpha = alpha_collapse((1.0, 2.0), math.sqrt(2)) * (1 + 1e-8)
    exact = mp_switch_times((1.0, 2.0), alpha, 1.0, predicted, dps=30)
    # float64 RK4 error ~1e-14 is amplified ~1/delta = 1e8 along the separatrix: agreement ~1e-6 absolute
    assert abs(float(exact[0]) - predicted[0]) / predicted[0] < 1e-7


def test_mpmath_gbs_integrator_is_exact_on_a_closed_form():
    """d = 1: S = μα e^{μτ − cμ²A}; B = e^{−cμ²A} solves B' = −(c/α)μ e^{−μτ}, so
    A(τ) = −ln(1 − (c/α)(1 − e^{−μτ}))/(cμ²): the GBS integrator must reproduce it to ~1e-25."""
    from biasaudit.numerics.sam_mpmath import mp_A_at

    with mpmath.workdps(30):
        mu, alpha, c = mpmath.mpf(2), mpmath.mpf(0.7), mpmath.mpf(0.3)  # the same binary floats as below
        closed = -mpmath.log(1 - c / alpha * (1 - mpmath.exp(-mu * 1))) / (c * mu**2)
        got = mp_A_at([2.0], [0.7], 0.3, [1], dps=30)[0]
        assert abs(got - closed) < mpmath.mpf(10) ** -24
    assert np.isfinite(float(got))
