"""The network central flow (biasaudit.validation.central_flow) against the numba central flow of the theory model,
its multipliers against the closed form, and its inputs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from biasaudit.plumbing import InputError
from biasaudit.validation.central_flow import edge_multipliers, flow_path, gd_path, path_errors, tracking_error


@pytest.fixture(scope="module")
def toy():
    from biasaudit.claims.eos.torch._study import _toy_truth
    from biasaudit.validation.eos_config import CENTRAL_FLOW_TOY
    from biasaudit.validation.eos_data import build_problem

    config = dataclasses.replace(CENTRAL_FLOW_TOY, seed=0)
    return build_problem(config), _toy_truth(config)


# The torch flow (Euler, h = eta/8, Newton projection) against the numba DOPRI5 kernel at its end time: measured
# 1.5e-5 (1.25 eta_c) and 9.9e-4 (1.5 eta_c) relative in beta; the error is O(h) from the step that meets the edge.
ENDPOINT_RTOL = 2e-3


@pytest.mark.parametrize("multiple", [1.25, 1.5])
def test_the_torch_flow_lands_where_the_numba_flow_does(toy, multiple):
    from biasaudit.numerics.eos_central_flow import central_flow

    problem, (x, y, w0, eta_c) = toy
    eta = multiple * eta_c
    ref = central_flow(x, y, w0, eta)
    flow = flow_path(problem, eta, ref.t_end, k=1, step_fraction=0.125)
    beta = flow.theta.numpy() ** 2
    assert np.linalg.norm(beta - ref.beta) / np.linalg.norm(ref.beta) < ENDPOINT_RTOL
    assert flow.t_edge is not None and abs(flow.sharpness[-1] * eta / 2 - 1) < 1e-3
    # the same flow moved 1 % misses the numba endpoint by more than the tolerance
    assert np.linalg.norm(1.01 * beta - ref.beta) / np.linalg.norm(ref.beta) > 2 * ENDPOINT_RTOL or \
        np.linalg.norm(0.99 * beta - ref.beta) / np.linalg.norm(ref.beta) > 2 * ENDPOINT_RTOL


def test_below_eta_c_the_flow_is_gradient_flow(toy):
    problem, (x, y, w0, eta_c) = toy
    flow = flow_path(problem, 0.5 * eta_c, 10.0, k=1)
    assert flow.t_edge is None and flow.n_edge.max() == 0
    assert np.allclose(flow.loss, flow.loss_avg)


def test_multipliers_solve_the_complementarity_problem():
    rng = np.random.default_rng(0)
    G = rng.standard_normal((50, 3))
    g = rng.standard_normal(50)
    c = edge_multipliers(g, G)
    velocity = -g - G @ c
    s_dot = G.T @ velocity  # no eigenvalue at the edge rises; a positive multiplier holds its eigenvalue still
    assert np.all(c >= 0) and np.all(s_dot <= 1e-10) and np.allclose(c * s_dot, 0, atol=1e-10)
    one = edge_multipliers(g, G[:, :1])
    assert one[0] == pytest.approx(max(0.0, -G[:, 0] @ g / (G[:, 0] @ G[:, 0])))


def test_gd_path_errors_read_the_window_averages(toy):
    problem, (x, y, w0, eta_c) = toy
    eta = 1.25 * eta_c
    flow = flow_path(problem, eta, 10.0, k=1, step_fraction=0.25)
    gd = gd_path(problem, eta, int(round(10.0 / eta)), sharpness_every=3)
    errors = path_errors(gd, flow, 12)
    assert errors["windows"] >= 2 and errors["sharpness"] < 0.1 and errors["norm"] < 0.1
    assert tracking_error([errors]) == max(errors[q] for q in ("loss", "sharpness", "norm"))


def test_bad_inputs_name_the_parameter(toy):
    problem, _ = toy
    for kwargs, name in (({"eta": -1.0, "t_end": 1.0}, "eta"), ({"eta": 0.2, "t_end": 0.0}, "t_end"),
                         ({"eta": 0.2, "t_end": 1.0, "step_fraction": 2.0}, "step_fraction"),
                         ({"eta": 0.2, "t_end": 1.0, "k": 3}, "k")):
        with pytest.raises(InputError, match=name):
            flow_path(problem, **kwargs)
