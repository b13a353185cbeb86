"""numerics/filippov.py: the depth-1 l_inf-SAM flow with Filippov sliding, against the discrete algorithm."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from biasaudit.claims.sam import depth1 as C
from biasaudit.numerics.filippov import STABILISATION_RATE, linf_sam_filippov_flow
from biasaudit.numerics.sam_discrete import run_sam

SLIDING_SEED = 869602  # d = 3: the second gradient component slides at 0 for all time (notes/sam-gd-linf.md)
RHO = 0.1
T_END = 2000.0


def _data(seed, d=3):
    X, y, _ = C._svm_data(seed, d)
    return X, y


@pytest.fixture(scope="module")
def sliding_flow():
    X, y = _data(SLIDING_SEED)
    grid = np.concatenate([[-25.0], np.linspace(0.0, math.log(T_END), 60)])
    return X, y, linf_sam_filippov_flow(X, y, RHO, grid, rtol=1e-12)


def test_sliding_seed_slides_on_the_coordinate_the_discrete_run_chatters_on(sliding_flow):
    X, y, res = sliding_flow
    assert res.status == "ok" and res.modes[-1][2] == (1,)
    start = res.modes[-1][0]
    for s, b in zip(res.s, res.beta):
        if s > start + 1.0:  # after the Baumgarte transient: the direction of grad L keeps g_1 = 0
            g = C._grad_direction(b, X, y)
            assert abs(g[1]) / np.linalg.norm(g) < 1e-9
    assert STABILISATION_RATE > 0


def test_discrete_linf_sam_converges_to_the_filippov_flow_at_order_eta(sliding_flow):
    X, y, res = sliding_flow
    beta_flow = res.beta[-1]
    errs = []
    for eta in (0.04, 0.02, 0.01):
        tr = run_sam(np.zeros((1, 3)), X, y, algorithm="linf", rho=RHO, eta=eta, steps=int(T_END / eta),
                     record_every=int(T_END / eta))
        errs.append(np.linalg.norm(tr.beta[-1] - beta_flow))
    ratios = [errs[0] / errs[1], errs[1] / errs[2]]
    assert all(1.6 < r < 2.6 for r in ratios), (errs, ratios)


def test_negative_control_the_frozen_sign_flow_misses_the_sliding_trajectory(sliding_flow):
    """Without sliding (signs frozen from the start of the last mode, no events) the flow leaves the
    discrete trajectory: its error is far above the Filippov flow's O(eta)."""
    X, y, res = sliding_flow
    signs = res.modes[-1][1]
    s0 = res.modes[-1][0]
    k0 = int(np.searchsorted(res.s, s0))
    sol = solve_ivp(C._log_time_field, (res.s[k0], res.s[-1]), res.beta[k0], args=(X, y, "linf", RHO, signs),
                    method="DOP853", rtol=1e-12, atol=1e-12)
    tr = run_sam(np.zeros((1, 3)), X, y, algorithm="linf", rho=RHO, eta=0.01, steps=int(T_END / 0.01),
                 record_every=int(T_END / 0.01))
    frozen_err = np.linalg.norm(sol.y[:, -1] - tr.beta[-1])
    filippov_err = np.linalg.norm(res.beta[-1] - tr.beta[-1])
    assert frozen_err > 20 * filippov_err, (frozen_err, filippov_err)


def test_without_mode_changes_it_is_the_frozen_sign_flow():
    X, y = _data(1, 2)
    res = linf_sam_filippov_flow(X, y, RHO, np.array([-20.0, 0.0, 10.0, 50.0]), rtol=1e-12)
    assert len(res.modes) == 1
    sol = solve_ivp(C._log_time_field, (-20.0, 50.0), np.zeros(2), args=(X, y, "linf", RHO, res.modes[0][1]),
                    method="DOP853", rtol=1e-12, atol=1e-12, t_eval=[0.0, 10.0, 50.0])
    assert np.max(np.abs(sol.y.T - res.beta[1:])) < 1e-9


def test_too_many_mode_changes_are_reported_not_hidden():
    X, y = _data(SLIDING_SEED)
    res = linf_sam_filippov_flow(X, y, RHO, np.array([-25.0, 10.0]), max_switches=1)
    assert res.status == "zeno" and "mode changes" in res.message


def test_claim_decides_the_sliding_data_set():
    params = {"data_seed": SLIDING_SEED, "d": 3, "algorithm": "linf", "rho": RHO}
    pred = C.DEPTH1_SVM_LINF.predict(params)
    obs = C.DEPTH1_SVM_LINF.evaluate(params, pred)
    assert obs.decided and obs.error < C.DEPTH1_SVM_LINF.tolerance.value and "[1]" in obs.detail
    assert all(C.DEPTH1_SVM_LINF.controls_refuted_by(params, pred))


@pytest.mark.parametrize("kwargs, param", [
    ({"X": np.ones((3, 2)), "y": [1, -1, 2], "rho": 0.1, "s_grid": [0, 1]}, "y"),
    ({"X": np.ones((3, 2)), "y": [1, -1, 1], "rho": -0.1, "s_grid": [0, 1]}, "rho"),
    ({"X": np.ones((3, 2)), "y": [1, -1, 1], "rho": 0.1, "s_grid": [1, 0]}, "s_grid"),
    ({"X": np.full((3, 2), np.nan), "y": [1, -1, 1], "rho": 0.1, "s_grid": [0, 1]}, "X"),
])
def test_bad_input_names_the_parameter(kwargs, param):
    with pytest.raises(ValueError, match=f"^{param}:"):
        linf_sam_filippov_flow(**kwargs)


@pytest.mark.parametrize("params", [
    {"data_seed": 251248, "n_base": 1, "rho": 0.17527686920738272, "beta0": 0.49105003747363807,
     "delta_over_rho": 0.10572922906353703},
    {"data_seed": 659138, "n_base": 2, "rho": 0.051274107056167154, "beta0": 0.0863334488095876,
     "delta_over_rho": 0.26545155169165},
])
def test_two_coordinates_reaching_their_surfaces_together_both_slide(params):
    """Symmetric data (sam.depth1.linf_simultaneous_sliding): beta_1 = beta_2 reach 0 at one log time, one event
    fires first; both must enter the sliding set (these two cases slid on one coordinate only before)."""
    from biasaudit.claims.sam.depth1 import sliding

    X, y = sliding._data(params)
    res = linf_sam_filippov_flow(X, y, params["rho"], sliding._grid(), beta0=sliding._beta0(params), rtol=1e-12,
                                 atol=1e-14, max_switches=50)
    assert res.status == "ok" and tuple(res.modes[-1][2]) == (1, 2)
    assert np.max(np.abs(res.beta[-1, 1:])) < 1e-9
