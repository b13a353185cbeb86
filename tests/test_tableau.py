"""numerics/tableau.py: the Butcher tableaus — invariants, order conditions, measured convergence order (with
a negative control), and every Runge–Kutta integrator of the package against its results from before it
read the tableaus."""

import math
from fractions import Fraction

import numpy as np
import pytest

from biasaudit.numerics.tableau import DOPRI5, RK4, SUM_TOL, TABLEAUS, ButcherTableau, explicit_rk_step
from biasaudit.plumbing import InputError

# An order condition of a float64 tableau holds to the rounding of its coefficients: sums of ≤ 7³ products of
# coefficients ≤ 12 in size (DOPRI5's a): well inside 1e-12; a wrong coefficient misses by far more.
ORDER_CONDITION_TOL = 1e-12
SLOPE_TOL = 0.3  # fitted log-error slope within ±0.3 of the declared order
ROUNDOFF_FLOOR = 1e-13  # errors below this are rounding, not truncation: left out of the fit


# ---------------------------------------------------------------------------------------------- invariants
@pytest.mark.parametrize("tab", TABLEAUS.values(), ids=lambda t: t.name)
def test_tableau_invariants_hold_and_arrays_are_read_only(tab):
    np.testing.assert_allclose(tab.a.sum(axis=1), tab.c, rtol=0, atol=1e-15)
    assert math.isclose(tab.b.sum(), 1.0, abs_tol=1e-15)
    assert np.all(np.triu(tab.a) == 0)
    for arr in (tab.a, tab.b, tab.c):
        with pytest.raises(ValueError):
            arr[0] = 1.0


def test_dormand_prince_tableau_invariants():
    """Row sums equal c_i, both weight vectors sum to 1, FSAL row = 5th-order weights, quadrature conditions
    (moved from tests/test_flows.py with the tableau it checked)."""
    A, c, b5, b4 = DOPRI5.a, DOPRI5.c, DOPRI5.b, DOPRI5.b_embedded
    np.testing.assert_allclose(A.sum(axis=1), c, atol=1e-15)
    assert math.isclose(b5.sum(), 1.0, abs_tol=1e-15) and math.isclose(b4.sum(), 1.0, abs_tol=1e-15)
    np.testing.assert_allclose(A[6], b5, atol=0)
    assert DOPRI5.fsal and not RK4.fsal
    for k in range(1, 5):  # quadrature conditions sum b_i c_i^{k-1} = 1/k up to order 5 (4 for b4)
        assert math.isclose(b5 @ c ** (k - 1), 1 / k, abs_tol=1e-14)
        assert math.isclose(b4 @ c ** (k - 1), 1 / k, abs_tol=1e-14)
    assert math.isclose(b5 @ c**4, 1 / 5, abs_tol=1e-14)


def test_dormand_prince_error_weights_are_b_minus_b_hat_within_an_ulp_of_the_published_rationals():
    """b_error = b − b̂ of the float64 weights (so b − b_error is b̂ exactly), each within the rounding of b and
    b̂ of the published e_i (Hairer–Nørsett–Wanner; scipy's RK45 uses the same rationals)."""
    b_hat = np.array([float(Fraction(x)) for x in ("5179/57600", 0, "7571/16695", "393/640", "-92097/339200",
                                                   "187/2100", "1/40")])
    assert np.array_equal(DOPRI5.b_embedded, b_hat)
    published = [Fraction(71, 57600), 0, Fraction(-71, 16695), Fraction(71, 1920), Fraction(-17253, 339200),
                 Fraction(22, 525), Fraction(-1, 40)]
    for e, exact, b, bh in zip(DOPRI5.b_error, published, DOPRI5.b, b_hat):
        # rounding b and b̂ (eps/2 each) plus the subtraction's own rounding
        assert abs(Fraction(float(e)) - exact) <= np.finfo(float).eps * (abs(b) + abs(bh))
    assert abs(DOPRI5.b_error.sum()) <= SUM_TOL  # the invariant checked at construction


@pytest.mark.parametrize("change, param", [
    (dict(b=[0.2, 0.3, 0.3, 0.3]), "b"),                      # weights sum to 1.1
    (dict(c=[0.0, 0.5, 0.5, 0.9]), "a"),                      # row 3 sums to 1, not c_3
    (dict(a=np.triu(np.ones((4, 4)))), "a"),                  # not explicit
    (dict(b=[1 / 6, 1 / 3, 1 / 3, 1 / 6 + 1e-12]), "b"),      # off by 1e-12: caught
    (dict(order=0), "order"),
    (dict(b_error=[0.1, -0.1, 0.0, 0.0]), "b_error"),         # without error_order
    (dict(b_error=[0.1, 0.0, 0.0, 0.0], error_order=3), "b_error"),  # does not sum to 0
    (dict(b=[1 / 6, 1 / 3, math.nan, 1 / 6]), "b"),
])
def test_invalid_tableaus_are_refused_naming_the_field(change, param):
    fields = dict(name="t", order=4, a=RK4.a, b=RK4.b, c=RK4.c)
    with pytest.raises(InputError, match=f"^{param}:"):
        ButcherTableau(**{**fields, **change})


def test_sum_tolerance_accepts_rounded_rationals_only():
    assert SUM_TOL < 1e-14
    ButcherTableau("ok", 4, RK4.a, [1 / 6, 1 / 3, 1 / 3, 1 / 6 + 1e-16], RK4.c)  # one rounding: accepted


def test_subdiagonal_is_offered_only_where_every_stage_reads_the_previous_one():
    assert RK4.a_subdiagonal.tolist() == [0.5, 0.5, 1.0]
    with pytest.raises(InputError, match="^a:"):
        DOPRI5.a_subdiagonal


# ---------------------------------------------------------------------------------------- order conditions
def _trees(order: int) -> list[tuple]:
    """Rooted trees with ``order`` nodes, each a sorted tuple of its subtrees (the leaf is ())."""
    if order == 1:
        return [()]
    out = set()
    for children in _forests(order - 1):
        out.add(tuple(sorted(children)))
    return sorted(out)


def _forests(n: int, smallest: tuple | None = None) -> list[list]:
    """Multisets of trees with n nodes in all (non-increasing in (size, tree) to avoid repeats)."""
    if n == 0:
        return [[]]
    out = []
    for size in range(1, n + 1):
        for t in _trees(size):
            key = (size, t)
            if smallest is not None and key > smallest:
                continue
            for rest in _forests(n - size, key):
                out.append([t] + rest)
    return out


def _size(t) -> int:
    return 1 + sum(_size(u) for u in t)


def _density(t) -> int:
    """γ(t) = |t| ∏ γ(children)."""
    return _size(t) * math.prod(_density(u) for u in t)


def _stage_weights(t, a: np.ndarray) -> np.ndarray:
    """Φ vector: ∏_children (a Φ(child)), the leaf giving ones."""
    out = np.ones(a.shape[0])
    for u in t:
        out = out * (a @ _stage_weights(u, a))
    return out


def _order_residuals(a, b, up_to: int) -> dict[int, float]:
    """max over the trees of each order of |b·Φ(t) − 1/γ(t)|."""
    return {p: max(abs(b @ _stage_weights(t, a) - 1.0 / _density(t)) for t in _trees(p))
            for p in range(1, up_to + 1)}


def test_tree_count_is_the_known_sequence():
    assert [len(_trees(p)) for p in range(1, 7)] == [1, 1, 2, 4, 9, 20]


@pytest.mark.parametrize("tab, weights, order", [(RK4, "b", 4), (DOPRI5, "b", 5), (DOPRI5, "b_embedded", 4)],
                         ids=["rk4", "dopri5", "dopri5-embedded"])
def test_order_conditions_hold_up_to_the_order_and_fail_one_above(tab, weights, order):
    res = _order_residuals(tab.a, getattr(tab, weights), order + 1)
    assert all(res[p] < ORDER_CONDITION_TOL for p in range(1, order + 1)), res
    assert res[order + 1] > 1e-4, res  # exactly this order, not more


def test_order_conditions_negative_control_a_swapped_weight_is_caught():
    swapped = np.array([1 / 6, 1 / 3, 1 / 6, 1 / 3])  # still sums to 1: the invariants cannot see it
    res = _order_residuals(RK4.a, swapped, 4)
    assert res[1] < ORDER_CONDITION_TOL and max(res.values()) > 1e-2


# -------------------------------------------------------------------------------- measured convergence order
def _riccati(t, y):
    """y' = 1 + y², y(0) = 0: y = tan t, a nonlinear ODE whose error is in the asymptotic regime for every h
    below (on y' = −2ty² Dormand–Prince's small 5th-order constant leaves h⁶ visible down to roundoff)."""
    return 1.0 + y * y


T_END = 1.2  # tan t stays O(1) (tan 1.2 = 2.57): no blow-up nearby


def _global_error(tab: ButcherTableau, n: int, weights=None) -> float:
    if weights is not None:
        tab = ButcherTableau(tab.name, tab.order, tab.a, weights, tab.c)
    h, y, t = T_END / n, 0.0, 0.0
    for _ in range(n):
        y = explicit_rk_step(_riccati, t, y, h, tab)[0]
        t += h
    return abs(y - math.tan(T_END))


def _slope(tab, ns, weights=None) -> float:
    errs = np.array([_global_error(tab, n, weights=weights) for n in ns])
    keep = errs > ROUNDOFF_FLOOR
    assert keep.sum() >= 4, errs
    return float(np.polyfit(np.log(T_END / np.asarray(ns)[keep]), np.log(errs[keep]), 1)[0])


NS = 2 ** np.arange(2, 11)  # h = 1.2 · 2^-2 … 1.2 · 2^-10


@pytest.mark.parametrize("tab, weights, order", [(RK4, None, 4), (DOPRI5, None, 5), (DOPRI5, "embedded", 4)],
                         ids=["rk4", "dopri5", "dopri5-embedded"])
def test_measured_convergence_order_matches_the_declared_order(tab, weights, order):
    slope = _slope(tab, NS, weights=tab.b_embedded if weights else None)
    assert abs(slope - order) <= SLOPE_TOL, slope


def test_convergence_negative_control_a_perturbed_coefficient_drops_the_order():
    """A 5 % change of one coefficient (row sums kept, so the tableau is still valid) costs at least one order."""
    a = DOPRI5.a.copy()
    a[4, 0] *= 1.05
    a[4, 1] -= a[4, 0] - DOPRI5.a[4, 0]  # keep the row sum = c_4
    broken = ButcherTableau("dopri5-perturbed", 5, a, DOPRI5.b, DOPRI5.c)
    assert _slope(broken, NS) < DOPRI5.order - 0.5
    swapped = np.array([1 / 6, 1 / 3, 1 / 6, 1 / 3])
    assert _slope(RK4, NS, weights=swapped) < RK4.order - 0.5


def test_embedded_error_estimate_is_the_difference_of_the_two_solutions():
    y0, h = 0.7, 0.1
    y5, err, ks = explicit_rk_step(_riccati, 0.3, y0, h, DOPRI5)
    y4 = y0 + h * sum(w * k for w, k in zip(DOPRI5.b_embedded, ks))
    assert err == pytest.approx(y5 - y4, abs=4 * np.finfo(float).eps)  # y5 − y4 cancels: rounding of y ~ 1
    assert abs(err) > 1e-9  # and the estimate is not trivially 0
    assert explicit_rk_step(_riccati, 0.3, y0, h, RK4)[1] is None


def test_reference_step_is_the_textbook_rk4_and_accepts_a_given_first_stage():
    t, y, h = 0.4, np.array([0.3, -1.2]), 0.05

    def f(t, y):
        return np.array([y[1] * t, -np.sin(y[0])])

    k1 = f(t, y)
    k2 = f(t + h / 2, y + h / 2 * k1)
    k3 = f(t + h / 2, y + h / 2 * k2)
    k4 = f(t + h, y + h * k3)
    textbook = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    np.testing.assert_allclose(explicit_rk_step(f, t, y, h, RK4)[0], textbook, rtol=4 * np.finfo(float).eps)
    np.testing.assert_array_equal(explicit_rk_step(f, t, y, h, RK4, k1=k1)[0], explicit_rk_step(f, t, y, h, RK4)[0])


def test_reference_step_takes_torch_tensors_as_the_gradient_flow_proxy_does():
    """validation.gf_proxy steps θ' = −∇L(θ) with the same function on torch tensors (first stage given)."""
    torch = pytest.importorskip("torch")
    H = torch.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=torch.float64)

    def grad(x):
        return H @ x + 0.1 * x**3

    theta, h = torch.tensor([0.5, -0.7], dtype=torch.float64), 0.05
    g = grad(theta)
    k2 = grad(theta - 0.5 * h * g)
    k3 = grad(theta - 0.5 * h * k2)
    k4 = grad(theta - h * k3)
    textbook = theta - (h / 6.0) * (g + 2 * k2 + 2 * k3 + k4)
    stepped = explicit_rk_step(lambda _t, x: -grad(x), 0.0, theta, h, RK4, k1=-g)[0]
    assert isinstance(stepped, torch.Tensor)
    assert torch.allclose(stepped, textbook, rtol=4 * np.finfo(float).eps, atol=0)


# ------------------------------------------------------------- every integrator against its previous results
# Outputs of each Runge–Kutta integrator as computed before it read its coefficients from the tableaus (the
# hand-written code of commit 82b5863; the rk4 heatmap then ran its generated unrolled-d5 kernel). The RK4
# weights are now b = (1/6, 1/3, 1/3, 1/6) instead of (k1 + 2k2 + 2k3 + k4)/6: rounding only. Measured:
# ≤ 1.3e-16 relative everywhere but the fastmath heatmap kernel (8.9e-14, reassociation over 2,000 steps).
# Integer outputs (steps, status, certificate codes) must be identical.
PREVIOUS_RTOL = 1e-12
INF = math.inf
PREVIOUS = {
    "flows_rk4_l2_L3": [1.1248757810627525, 0.7065977022739705, 0.8097604434199404, 200],
    "flows_rk4_linf_L2": [1.0154845484703205, 0.9389056079552109, 4.217107305298855, 100],
    "flows_rk4_gd_L2": [3.694528048854684, 16.379444924029777, 161.37151102285404, 200],
    "flows_dopri5_l2_L2": [21.5712732430262, 348.64906303380735, 7818.87746931927, 268],
    "flows_dopri5_gd_L3": [0.8000000000110372, 1.9999999904988812, 22],
    "flows_reference_l2_L3": [0.6676176669581545, 0.40190906575171387, 0.4688038460568031, 100],
    "l2_deep_classify": [1, 24.750352792773427, 125, 0.16028883335918953],
    "reduction_classify": [1, 1.2786666666666588, 0.585303545388157],
    "reduction_classify_reference": [1, 1.280000000000001, 0.5858902797972763],
    "reduction_rk4_A": [0.0, 0.2312295839323523, 0.2318898266604166, 0.23188982762998328],
    "reduction_dopri5_A": [0.0, 0.23122958392461332, 0.23188982666890548, 0.23188982764025742],
    "alpha_collapse": [0.4717868997235486],
    "heatmap_rk4": [-INF, 8.898856851011436, 27.586860437422292, 30.41582435793573, -1, 1, 1, 1],
    "heatmap_reduction-fixed": [-INF, 8.89885685941934, 27.586860448580588, 30.415824370013606, -1, 1, 1, 1],
    "heatmap_reduction": [-INF, 8.898856845667835, 27.58686044878152, 30.415824370036415, -1, 1, 1, 1,
                          120, 0, 336, 2, 218, 0, 171, 0],
    "heatmap_numpy": [-INF, 8.898856851012232, 27.58686043742239, 30.415824357935822, -1, 1, 1, 1],
    "heatmap_A_scalar": [INF, 2.8232831758602597, 0.3358875802135957, 0.0942085820216292],
}
MU3, ALPHA3 = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.3, 0.4])
MU5 = np.array([1.0, 1.5, 2.0, 2.5, 3.0])
ALPHA5 = np.array([0.8, 0.5, 0.9, 0.6, 0.7])
GRID = np.array([0.0, 2.5, 7.0, 20.0])


def _flow(result):
    return [*result.w[-1], result.n_steps]


def _heat(method, with_steps=False, **kw):
    from biasaudit.numerics import heatmap as hm
    from biasaudit.numerics.l2_boundaries import alpha_collapse

    alphas = np.array([0.9, 1.01, 1.3, 2.5]) * alpha_collapse(MU5, math.sqrt(2))
    h = hm.dominant_index_heatmap(MU5, math.sqrt(2), alphas, np.linspace(0, 10, 11), method=method, **kw)
    return [*h.log_S[:, -1], *h.status] + ([*h.steps.ravel()] if with_steps else [])


def _numpy_reference():
    from biasaudit.numerics.heatmap_rk4 import rk4_heatmap_reference
    from biasaudit.numerics.l2_boundaries import alpha_collapse

    alphas = np.array([0.9, 1.01, 1.3, 2.5]) * alpha_collapse(MU5, math.sqrt(2))
    _, _, log_s, status = rk4_heatmap_reference(np.repeat(alphas[:, None], 5, axis=1), MU5, 1.0, 1.0 / 200, 200, 11)
    return [*log_s[:, -1], *status]


def _a_scalar():
    from biasaudit.numerics.heatmap_reduction import _A_batch_scalar
    from biasaudit.numerics.l2_boundaries import alpha_collapse

    alphas = np.array([0.9, 1.01, 1.3, 2.5]) * alpha_collapse(MU5, math.sqrt(2))
    A, rows, status = np.zeros((4, 11)), np.zeros((4, 11), dtype=np.int64), np.zeros(4, dtype=np.int64)
    _A_batch_scalar(np.log(np.repeat(alphas[:, None], 5, axis=1)), MU5, 1.0, 1.0 / 200, 200, A, rows, status)
    return [*A[:, -1]]


def _current(name):
    from biasaudit.numerics import flows, l2_deep
    from biasaudit.numerics import l2_reduction as red
    from biasaudit.numerics.l2_boundaries import alpha_collapse

    flow = flows.integrate_reduced_flow
    runs = {
        "flows_rk4_l2_L3": lambda: _flow(flow("l2", MU3, ALPHA3, 0.6, 3, 2.0, method="rk4", dt=1e-2, n_out=3)),
        "flows_rk4_linf_L2": lambda: _flow(flow("linf", MU3, ALPHA3, 0.2, 2, 1.0, method="rk4", dt=1e-2, n_out=3)),
        "flows_rk4_gd_L2": lambda: _flow(flow("gd", MU3, ALPHA3, 0.0, 2, 2.0, method="rk4", dt=1e-2, n_out=3)),
        "flows_dopri5_l2_L2": lambda: _flow(flow("l2", MU3, ALPHA3, 0.6, 2, 4.0, method="adaptive", rtol=1e-10,
                                                 atol=1e-12, n_out=3)),
        "flows_dopri5_gd_L3": lambda: _flow(flow("gd", np.array([0.5, 1.0]), 0.5, 0.0, 3, 1.5, method="adaptive",
                                                 rtol=1e-8, atol=1e-10, n_out=2)),
        "flows_reference_l2_L3": lambda: _flow(flows.integrate_reduced_flow_reference("l2", MU3, ALPHA3, 0.6, 3, 1.0,
                                                                                      dt=1e-2, n_out=3)),
        "l2_deep_classify": lambda: [(r := l2_deep.classify_deep_trajectory(MU3, 0.6, 4)).code, r.sigma, r.steps,
                                     r.closest],
        "reduction_classify": lambda: [(r := red.classify_l2_trajectory(MU5, 0.5, 1.0)).code, r.tau, r.A],
        "reduction_classify_reference": lambda: [(r := red.classify_l2_trajectory_reference(
            MU5, np.full(5, 0.5), 1.0, dt=1e-2)).code, r.tau, r.A],
        "reduction_rk4_A": lambda: [*red.l2_reduction_trajectory(MU5, ALPHA5, 1.0, GRID).A],
        "reduction_dopri5_A": lambda: [*red.l2_reduction_trajectory(MU5, ALPHA5, 1.0, GRID, rtol=1e-10).A],
        "alpha_collapse": lambda: [alpha_collapse(MU5, math.sqrt(2))],
        "heatmap_rk4": lambda: _heat("rk4", steps_per_output=200),
        "heatmap_reduction-fixed": lambda: _heat("reduction-fixed", steps_per_output=200),
        "heatmap_reduction": lambda: _heat("reduction", with_steps=True),
        "heatmap_numpy": _numpy_reference,
        "heatmap_A_scalar": _a_scalar,
    }
    return runs[name]()


@pytest.mark.parametrize("name", PREVIOUS)
def test_every_runge_kutta_integrator_agrees_with_its_previous_results(name):
    now, before = _current(name), PREVIOUS[name]
    assert len(now) == len(before)
    for x, y in zip(now, before):
        if isinstance(y, int):
            assert x == y, (now, before)
        elif math.isfinite(y):
            assert x == pytest.approx(y, rel=PREVIOUS_RTOL, abs=0), (now, before)
        else:
            assert x == y, (now, before)


def test_previous_results_negative_control_the_swapped_weights_move_them():
    """Fixed-step RK4 with two weights swapped (the mutant numerics.rk4_weight) is far outside PREVIOUS_RTOL."""
    from biasaudit.theory.sam_fields import reduced_field

    field = reduced_field("l2", 3, "joint")
    swapped = ButcherTableau("rk4-swapped", 4, RK4.a, [1 / 6, 1 / 3, 1 / 6, 1 / 3], RK4.c)
    w = {tab.name: ALPHA3.copy() for tab in (RK4, swapped)}
    for tab in (RK4, swapped):
        for _ in range(100):  # the reference's grid: tau = 1 in steps of 1e-2
            w[tab.name] = explicit_rk_step(lambda t, x: field(x, MU3, 0.6), 0.0, w[tab.name], 1e-2, tab)[0]
    np.testing.assert_allclose(w["rk4"], PREVIOUS["flows_reference_l2_L3"][:3], rtol=PREVIOUS_RTOL)
    assert np.max(np.abs(w["rk4-swapped"] / w["rk4"] - 1)) > 1e3 * PREVIOUS_RTOL
