"""numerics/l2_deep.py and alpha_collapse at even L ≥ 4: certificates, classifier, bisection."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from biasaudit.numerics import l2_deep as D
from biasaudit.numerics.l2_boundaries import DEEP_MIN_DIGITS, alpha_collapse, l2_sam_regime_boundaries
from biasaudit.theory.sam_l2 import c_L


def _field(u, mu, L):
    p = mu * u ** (L - 1)
    return mu * (u - p / math.sqrt(p @ p)) ** (L - 1)


def _u_star(mu, L):
    v = mu ** (-1.0 / (L - 2))
    return v / np.linalg.norm(v)


@pytest.mark.parametrize("L", [4, 6])
def test_interior_equilibrium_is_where_both_certificate_sets_meet(L):
    mu = np.array([1.0, 1.7, 2.5])
    us = _u_star(mu, L)
    assert np.max(np.abs(_field(us, mu, L))) < 1e-15
    # every nearby point on the ray through u* is in one of the two sets: below shrinks, above grows
    assert D.deep_certificate(us * (1 - 1e-6), mu, L) == D.COLLAPSE
    assert D.deep_certificate(us * (1 + 1e-6), mu, L) == D.ESCAPE


@pytest.mark.parametrize("L", [4, 6])
def test_certificate_sets_are_forward_invariant_along_the_flow(L):
    """Start just inside each set, off the ray through u*: the flow never leaves it (Nagumo argument)."""
    rng = np.random.default_rng(L)
    mu = np.array([1.0, 1.4, 2.2])
    us = _u_star(mu, L)
    for sign, code in ((-1, D.COLLAPSE), (+1, D.ESCAPE)):
        for _ in range(5):
            u0 = us * (1 + sign * 0.02) * (1 + 0.002 * rng.standard_normal(3))
            if D.deep_certificate(u0, mu, L) != code:
                continue
            sol = solve_ivp(lambda t, u: _field(u, mu, L), (0, 1e6), u0, method="DOP853", rtol=1e-11,
                            atol=1e-14, dense_output=True,
                            events=lambda t, u: np.max(u) - 3.0)
            for t in np.geomspace(1e-3, sol.t[-1], 200):
                u = sol.sol(t)
                if np.min(u) <= 1e-9:  # collapsed through the certificate set: fine
                    break
                assert D.deep_certificate(u, mu, L) == code, (sign, t, u)


def test_numba_classifier_agrees_with_scipy_dop853():
    mu = np.array([1.0, 2.0])
    for L in (4, 6):
        ac = alpha_collapse(mu, 1.0, depth=L, normalization="layer")
        for rel in (-1e-3, -1e-7, 1e-7, 1e-3, -0.3, 0.3):
            a = ac * (1 + rel)
            assert D.classify_deep_trajectory(mu, a, L).code == D.classify_deep_trajectory_reference(mu, a, L).code
            assert D.classify_deep_trajectory(mu, a, L).code == (D.ESCAPE if rel > 0 else D.COLLAPSE)


def test_deep_alpha_collapse_is_certified_to_10_digits_by_an_independent_integrator():
    for mu, L in (((1.0, 2.0), 4), ((1.0, 1.5, 2.0, 2.5, 3.0), 6), ((1.0, 2.0, 3.0), 8)):
        mu = np.array(mu)
        ac, (lo, hi) = alpha_collapse(mu, 1.0, depth=L, normalization="layer", return_bracket=True)
        assert 0.5 * (hi - lo) <= 10.0 ** -DEEP_MIN_DIGITS * hi
        below = D.classify_deep_trajectory_reference(mu, ac * (1 - 2e-10), L, rtol=1e-13, horizon=1e200)
        above = D.classify_deep_trajectory_reference(mu, ac * (1 + 2e-10), L, rtol=1e-13, horizon=1e200)
        assert (below.code, above.code) == (D.COLLAPSE, D.ESCAPE), (mu, L, ac)


def test_negative_control_a_shifted_deep_threshold_is_not_a_boundary():
    mu = np.array([1.0, 2.0])
    wrong = alpha_collapse(mu, 1.0, depth=4, normalization="layer") * (1 + 1e-6)
    below = D.classify_deep_trajectory_reference(mu, wrong * (1 - 2e-10), 4, rtol=1e-13, horizon=1e200)
    assert below.code == D.ESCAPE  # both sides escape: the check above would fail


def test_deep_alpha_collapse_scales_with_c_and_reduces_to_c_at_d1():
    mu = np.array([1.0, 1.5, 2.5])
    a1 = alpha_collapse(mu, 0.3, depth=4) / c_L(0.3, 4)
    a2 = alpha_collapse(3.0 * mu, 1.7, depth=4, normalization="layer") / c_L(1.7, 4, "layer")
    assert a1 == pytest.approx(a2, rel=1e-9)
    assert alpha_collapse([2.0], 0.8, depth=6) == pytest.approx(c_L(0.8, 6))


def test_deep_regimes_report_the_certificates_and_odd_depth_is_refused():
    r = l2_sam_regime_boundaries([1.0, 2.0], 0.5, depth=6)
    assert r.collapses and r.alpha_collapse is not None and "collapse (every j)" in r.certificates
    with pytest.raises(ValueError, match="^depth: must be even"):
        alpha_collapse([1.0, 2.0], 0.5, depth=5)
    with pytest.raises(ValueError, match="^depth: must be even and >= 4"):
        D.classify_deep_trajectory([1.0, 2.0], 0.5, 2)


def test_per_coordinate_alpha_is_classified_by_both_integrators():
    mu = np.array([1.0, 2.0, 3.0])
    for alpha in ([0.2, 0.2, 0.4], [0.6, 0.2, 0.2], [0.3, 0.35, 0.3]):
        a = D.classify_deep_trajectory(mu, alpha, 4)
        b = D.classify_deep_trajectory_reference(mu, np.array(alpha), 4)
        assert a.code == b.code != D.UNDECIDED
    with pytest.raises(ValueError, match="^alpha:"):
        D.classify_deep_trajectory(mu, [0.1, 0.2], 4)
