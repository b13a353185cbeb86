"""Part 1 (exact symbolic identities and limits) of every paper-2 claim, plus closed forms vs mpmath."""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from biasaudit.plumbing import InputError
from biasaudit.theory import eos_flow as flow
from biasaudit.theory import eos_minimizers as mins
from biasaudit.theory import eos_model as model
from biasaudit.theory import eos_risk as risk
from biasaudit.theory.eos import eos_regimes

y, c = model.y_sym, model.c_sym


def test_eos_hessian_formula_symbolic():
    for d in (2, 3):
        H = sp.hessian(model.loss_expr(d), model.ws(d))
        assert sp.simplify(H - model.hessian_expr(d)) == sp.zeros(d, d)


def test_eos_hessian_on_manifold_rank1_symbolic():
    x, w = model.xs(2), model.ws(2)
    H = model.hessian_expr(2)
    # on M (r = 0) the diagonal term vanishes: H = 8c g g^T has rank 1 and trace 8c sum x^2 w^2
    on_m = H.subs(y, sum(xi * wi**2 for xi, wi in zip(x, w)))
    assert sp.simplify(on_m.det()) == 0
    b = model.betas(2)
    trace = sp.expand(on_m.trace()).subs({wi**2: bi for wi, bi in zip(w, b)})
    assert sp.simplify(trace - model.on_manifold_sharpness_expr(2)) == 0
    # c = 1/2 gives S = 4 sum x_i^2 beta_i (docs/specification/eos.md)
    assert sp.simplify(model.on_manifold_sharpness_expr(2).subs(c, sp.Rational(1, 2))
                       - 4 * sum(xi**2 * bi for xi, bi in zip(x, b))) == 0


def test_eos_min_norm_vertex_symbolic():
    # on the d = 2 simplex, beta = (t y/x1, (1 - t) y/x2): ||beta||_1 is linear in t, smallest at the larger x
    t = sp.Symbol("t", nonnegative=True)
    x1, x2 = sp.symbols("x1 x2", positive=True)
    n1 = t * y / x1 + (1 - t) * y / x2
    assert sp.simplify(sp.diff(n1, t) - y * (x2 - x1) / (x1 * x2)) == 0  # > 0 iff x2 > x1: vertex 2 wins
    wl1 = sp.sqrt(t * y / x1) + sp.sqrt((1 - t) * y / x2)
    assert sp.simplify(sp.diff(wl1, t, 2)) != 0 and sp.diff(wl1, t, 2).subs({t: sp.Rational(1, 2), x1: 1, x2: 2, y: 1}) < 0


def test_eos_min_norm_l2_interior_symbolic():
    x, b = model.xs(3), model.betas(3)
    lam = sp.Symbol("lam")
    lag = sum(bi**2 for bi in b) - lam * (sum(xi * bi for xi, bi in zip(x, b)) - y)
    sol = sp.solve([sp.diff(lag, v) for v in (*b, lam)], (*b, lam), dict=True)[0]
    norm2 = sum(xi**2 for xi in x)
    assert all(sp.simplify(sol[bi] - y * xi / norm2) == 0 for xi, bi in zip(x, b))


def test_eos_min_sharpness_vertex_symbolic():
    t = sp.Symbol("t", nonnegative=True)
    x1, x2 = sp.symbols("x1 x2", positive=True)
    S = 8 * c * (x1**2 * t * y / x1 + x2**2 * (1 - t) * y / x2)
    assert sp.simplify(S.subs(t, 1) - 8 * c * y * x1) == 0
    assert sp.simplify(sp.diff(S, t) - 8 * c * y * (x1 - x2)) == 0  # < 0 iff x1 < x2: vertex 1 wins


def test_eos_minimizers_disjoint_symbolic():
    x = np.array([1.0, 1.0, 1.0])
    assert not mins.minimizers_disjoint(x) and mins.min_norm_face(x) == mins.min_sharpness_face(x) == (1, 2, 3)
    x = np.array([1.0, 2.0, 2.0])
    assert mins.minimizers_disjoint(x) and mins.min_norm_face(x) == (2, 3) and mins.min_sharpness_face(x) == (1,)


def test_eos_pareto_front_symbolic():
    seg = mins.PARETO_SEGMENT
    xj, xk, s = mins.xj, mins.xk, mins.s_sym
    assert sp.simplify(seg.subs(s, 8 * c * y * xj) - y / xj) == 0
    assert sp.simplify(seg.subs(s, 8 * c * y * xk) - y / xk) == 0
    # the form at c = 1/2 (docs/specification/eos.md)
    half = y * (xj + xk) / (xj * xk) - s / (4 * xj * xk)
    assert sp.simplify(seg.subs(c, sp.Rational(1, 2)) - half) == 0
    # vertices lie on the convex curve N = 8 c y^2 / S: the hull is all of them
    S = sp.Symbol("S", positive=True)
    assert sp.diff(8 * c * y**2 / S, S, 2).is_positive


def test_eos_pareto_d2_affine_symbolic():
    b1, b2 = mins.D2_BETA
    x1, x2, S = mins.x1, mins.x2, mins.S_sym
    assert sp.simplify(x1 * b1 + x2 * b2 - y) == 0
    assert sp.simplify(8 * c * (x1**2 * b1 + x2**2 * b2) - S) == 0
    # toy: ||beta||_1 = 1.5 - S/8
    toy = {x1: 1, x2: 2, y: 1, c: sp.Rational(1, 2)}
    assert sp.simplify((b1 + b2).subs(toy) - (sp.Rational(3, 2) - S / 8)) == 0


def test_eos_stable_minima_thresholds_symbolic():
    eta, x = sp.symbols("eta x", positive=True)
    thr = mins.STABLE_ETA.expr.subs(mins.x_j, x)
    assert sp.simplify(thr * 8 * c * y * x - 2) == 0  # eta_max * S_vertex = 2
    assert thr.subs({c: sp.Rational(1, 2), y: 1, x: 1}) == sp.Rational(1, 2)  # toy: 0.5
    # Jacobian of the GD map at a vertex has eigenvalue 1 - eta S in the normal direction
    w = sp.Symbol("w", positive=True)
    step = w * (1 - 4 * c * eta * (x * w**2 - y) * x)
    J = sp.diff(step, w).subs(w, sp.sqrt(y / x))
    assert sp.simplify(J - (1 - eta * 8 * c * x * y)) == 0


def test_eos_gf_limit_symbolic():
    # the flow's closed form solves dw/dt = -4 c r x w with s' = r
    t = sp.Symbol("t")
    x, w0 = sp.symbols("x w0", positive=True)
    s = sp.Function("s")(t)
    w = w0 * sp.exp(-4 * c * x * s)
    r = sp.Symbol("r")
    assert sp.simplify(sp.diff(w, t).subs(sp.Derivative(s, t), r) + 4 * c * r * x * w) == 0
    # the root equation is strictly decreasing in tau
    assert sp.diff(flow.GF_ROOT_TERM, flow.tau_sym).is_negative


def test_eos_gf_kl_potential_symbolic():
    b, b0, mu, x = flow._b, flow._b0, sp.Symbol("mu"), flow._x
    grad = sp.diff(flow.KL_TERM, b)
    assert sp.simplify(grad - sp.log(b / b0)) == 0
    assert sp.diff(flow.KL_TERM, b, 2).is_positive  # strictly convex
    # stationarity log(b/b0) = mu x gives b = b0 exp(mu x): the closed form with mu = -4 tau
    assert sp.simplify(sp.solve(sp.Eq(grad, mu * x), b)[0] - flow.GF_BETA.subs(flow.tau_sym, -mu / 4)) == 0


def test_eos_gf_residual_sign_symbolic():
    x, w = model.xs(2), model.ws(2)
    r = sum(xi * wi**2 for xi, wi in zip(x, w)) - y
    flow_w = [-4 * c * r * xi * wi for xi, wi in zip(x, w)]
    rdot = sum(sp.diff(r, wi) * fi for wi, fi in zip(w, flow_w))
    grad_r2 = sum(sp.diff(r, wi) ** 2 for wi in w)
    assert sp.simplify(rdot + 2 * c * grad_r2 * r) == 0


def test_eos_s_gf_small_init_limit():
    # toy: s_GF = 7.727 and the limit of the root for beta0 -> 0 pins S -> 4 y x_max = 8
    reg = eos_regimes([1, 2], 1, [0.1, 0.1])
    assert abs(reg.s_gf - 7.727) < 5e-4 and abs(reg.eta_c - 0.2588) < 5e-5
    assert abs(eos_regimes([1, 2], 1, [1e-6, 1e-6]).s_gf - 8) < 1e-5


def test_eos_s_gf_small_alpha_rate_symbolic():
    # d = 2 exact: beta_1 = a^2 u, beta_2 = a^2 u^2 (x = (1, 2)), constraint a^2 u + 2 a^2 u^2 = y
    a, u = sp.symbols("a u", positive=True)
    usol = sp.solve(sp.Eq(a**2 * u + 2 * a**2 * u**2, 1), u)
    usol = [v for v in usol if v.subs(a, sp.Rational(1, 10)) > 0][0]
    gap = 8 - 4 * (a**2 * usol + 4 * a**2 * usol**2)  # 4 y x_max - S at y = 1
    assert sp.limit(gap / a, a, 0, "+") == 2 * sp.sqrt(2)  # rate a^1 = a^{2(1 - 1/2)}
    assert flow.ALPHA_RATE_EXPONENT.subs({flow.x_next: 1, flow.x_max: 2}) == 1


def test_eos_s_gf_large_init_symbolic():
    # x = (1, 2), w0 = (1, 1): H(w0) = [[8, 8], [8, 24]], lambda_max = 16 + 8 sqrt(2)
    x, w = model.xs(2), model.ws(2)
    H0 = model.hessian_expr(2).subs({x[0]: 1, x[1]: 2, w[0]: 1, w[1]: 1, y: 1, c: sp.Rational(1, 2)})
    assert max(H0.eigenvals()) == 16 + 8 * sp.sqrt(2)
    reg = eos_regimes([1, 2], 1, [1, 1])
    assert reg.init_regime == "large" and abs(reg.s_gf - (16 + 8 * math.sqrt(2))) < 1e-12


def test_eos_risk_bayes_symbolic():
    # d = 2: p1 ~ U(0, 1); integrate the risk exactly and compare with the formula
    p, x1, x2, b1, b2 = sp.symbols("p x1 x2 b1 b2", positive=True)
    integrand = (b1 - y * p / x1) ** 2 + (b2 - y * (1 - p) / x2) ** 2
    exact = sp.integrate(integrand, (p, 0, 1))
    formula = sum(risk.BAYES_RISK_TERM.subs({risk._x: xi, risk._b: bi, risk.d_sym: 2}) for xi, bi in ((x1, b1), (x2, b2)))
    assert sp.simplify(exact - formula) == 0


def test_eos_risk_optimum_symbolic():
    d = risk.d_sym
    assert sp.simplify(risk.BAYES_OPTIMUM - y / (d * risk._x)) == 0
    x = model.xs(3)
    # the optimum lies on P and has S = 4 y mean(x) at c = 1/2
    beta = [risk.BAYES_OPTIMUM.subs({risk._x: xi, d: 3}) for xi in x]
    assert sp.simplify(sum(xi * bi for xi, bi in zip(x, beta)) - y) == 0
    assert sp.simplify(4 * sum(xi**2 * bi for xi, bi in zip(x, beta)) - 4 * y * sum(x) / 3) == 0


def test_eos_risk_d2_ratio4_symbolic():
    x1, x2 = sp.symbols("x1 x2", positive=True)
    term = lambda xv, bv: risk.BAYES_RISK_TERM.subs({risk._x: xv, risk._b: bv, risk.d_sym: 2})  # noqa: E731
    opt = term(x1, y / (2 * x1)) + term(x2, y / (2 * x2))
    v1 = term(x1, y / x1) + term(x2, 0)
    v2 = term(x1, 0) + term(x2, y / x2)
    assert sp.simplify(v1 / opt) == 4 and sp.simplify(v2 / opt) == 4


def test_eos_risk_u_shape_symbolic():
    # R(S) = |beta(S) - beta*|^2 is a parabola in S with its vertex at S(beta*)
    x1, x2, S = mins.x1, mins.x2, mins.S_sym
    Sstar = sp.Symbol("S_star", positive=True)
    beta = sp.Matrix(mins.D2_BETA)
    R = ((beta - beta.subs(S, Sstar)).T * (beta - beta.subs(S, Sstar)))[0]
    assert sp.solve(sp.diff(R, S), S) == [Sstar]
    assert sp.diff(R, S, 2).subs({x1: 1, x2: 2, c: sp.Rational(1, 2)}).is_positive
    assert risk.u_shape_condition([1, 2], 1, [0.5, 0.25], 7.727) and not risk.u_shape_condition([1, 2], 1, [0, 0.5], 7.727)


def test_eos_deep_min_sharpness_interior_symbolic():
    L = mins.L_sym
    x, b, k = sp.symbols("x beta k", positive=True)
    term = mins.DEEP_SHARPNESS_TERM.subs(mins._x, x).subs(mins._b, b)
    # Lagrange: d term / d beta = mu x  ->  beta ∝ x^(-L/(L-2))
    cand = k * x ** (-L / (L - 2))
    lhs = sp.diff(term, b).subs(b, cand) / x
    assert sp.simplify(sp.diff(sp.log(lhs), x).subs(L, 4)) == 0  # multiplier independent of x (L = 4)
    assert sp.simplify(sp.diff(sp.log(lhs), x).subs(L, 5)) == 0
    assert sp.diff(term, b, 2).subs({L: 3}).is_positive  # strictly convex for L >= 3
    # L = 2 is the linear (shallow) case: no interior point
    assert sp.diff(term.subs(L, 2), b, 2) == 0


@settings(max_examples=20)
@given(st.lists(st.floats(0.2, 5.0), min_size=2, max_size=5), st.floats(0.2, 5.0), st.floats(0.01, 1.5))
def test_eos_gf_limit_root_against_mpmath(x, yv, a):
    x = np.array(x)
    beta0 = np.full(x.size, a * a)
    tau = flow.gf_tau(x, yv, beta0)
    with mpmath.workdps(40):
        f = lambda t: mpmath.fsum(mpmath.mpf(xi) * mpmath.mpf(bi) * mpmath.exp(-4 * xi * t) for xi, bi in zip(x, beta0)) - yv  # noqa: E731
        ref = mpmath.findroot(f, tau)
    assert abs(tau - float(ref)) <= 1e-12 * max(1.0, abs(tau))


def test_eos_problem_rejects_bad_input():
    with pytest.raises(InputError, match="^x: must be strictly positive \\(mixed signs"):
        model.eos_problem([1.0, -1.0], 1.0)
    with pytest.raises(InputError, match="^x: must be strictly positive"):
        model.eos_problem([1.0, 0.0], 1.0)
    with pytest.raises(InputError, match="^y: must be > 0"):
        model.eos_problem([1.0, 2.0], -1.0)
    with pytest.raises(InputError, match="^y: must be finite"):
        model.eos_problem([1.0, 2.0], float("nan"))
    with pytest.raises(InputError, match="^w0: must have length 2"):
        model.eos_problem([1.0, 2.0], 1.0, [0.1])
    with pytest.raises(InputError, match="^w0: entries must be non-zero"):
        model.eos_problem([1.0, 2.0], 1.0, [0.1, 0.0])
    with pytest.raises(InputError, match="^loss_factor: must be > 0"):
        model.eos_problem([1.0, 2.0], 1.0, [0.1, 0.1], loss_factor=0)


def test_eos_loss_factor_doubles_sharpness_and_halves_eta_c():
    a = eos_regimes([0.7, 1.3, 2.1], 1.5, [0.05] * 3)
    b = eos_regimes([0.7, 1.3, 2.1], 1.5, [0.05] * 3, loss_factor=1.0)
    assert b.s_gf == pytest.approx(2 * a.s_gf, rel=1e-14) and b.eta_c == pytest.approx(a.eta_c / 2, rel=1e-14)
    assert b.beta_gf == pytest.approx(a.beta_gf, rel=1e-14)
    assert b.eta_stable_max == pytest.approx(a.eta_stable_max / 2, rel=1e-14)
