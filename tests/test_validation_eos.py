"""Sharpness tools, the GD trainer and the GF proxy on tiny networks with synthetic teacher data."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from biasaudit.plumbing import InputError
from biasaudit.validation.eos_config import SweepConfig
from biasaudit.validation.eos_data import teacher_dataset
from biasaudit.validation.gd_trainer import check_sweep_inputs, make_problem, measure, parameter_norms, train_gd
from biasaudit.validation.gf_proxy import eps_sensitivity, gradient_flow_sharpness
from biasaudit.validation.sharpness import (FlatLoss, adaptive_sharpness, average_sharpness, dense_hessian,
                                            hutchinson_trace, hvp, lanczos_eigenvalues, power_iteration, top_eigenvalue)

F64_EIG = 1e-6  # agreement with the dense Hessian in float64
ROUND = 1e3 * np.finfo(float).eps  # HVP vs dense H v: a few hundred roundings of O(|H|) terms


def tiny(arch="fcn", loss="mse", dtype="float64", activation="tanh", n=40, seed=1, **kw):
    if arch == "fcn":
        data = teacher_dataset(n, 20, d=5, num_classes=3, seed=seed)
        X, Xt = data.X_train, data.X_test
    else:  # tiny image models on random 8x8 images with teacher labels
        rng = np.random.default_rng(seed)
        X, Xt = rng.random((n, 1, 8, 8)), rng.random((20, 1, 8, 8))
        data = teacher_dataset(n, 20, d=5, num_classes=3, seed=seed)
        kw.setdefault("model_kwargs", {"dim": 4, "heads": 2, "patch": 4} if arch == "vit" else {"width": 2})
    return make_problem(arch, loss, X, data.y_train, Xt, data.y_test, num_classes=3, dtype=dtype, width=6,
                        depth=2, activation=activation, seed=seed, **kw)


def trained_point(problem, steps=30, eta=0.05):
    return train_gd(problem, eta, eps=1e-12, max_steps=steps, final_measures=False, keep_theta=True).theta


# ----------------------------------------------------------------------------- sharpness vs dense Hessian

@pytest.mark.parametrize("arch,loss,act", [("fcn", "mse", "tanh"), ("fcn", "ce", "relu"), ("vit", "ce", "tanh"),
                                           ("cnn", "mse", "tanh"), ("resnet", "ce", "tanh")])
def test_sharpness_vs_dense_hvp_both_methods(arch, loss, act):
    problem = tiny(arch, loss, activation=act)
    f = problem.train_loss
    theta = trained_point(problem, 5)
    H = dense_hessian(f, theta)
    v = torch.as_tensor(np.random.default_rng(0).standard_normal(f.p))
    scale = np.abs(H).max() * np.linalg.norm(v.numpy(), 1)
    for method in ("forward-over-reverse", "double-backward"):
        assert np.abs(hvp(f, theta, v, method).numpy() - H @ v.numpy()).max() <= ROUND * scale


@pytest.mark.parametrize("loss", ["mse", "ce"])
def test_sharpness_vs_dense_eigsh_lm_la_sa(loss):
    problem = tiny(loss=loss)
    f = problem.train_loss
    theta = trained_point(problem)
    ev = np.linalg.eigvalsh(dense_hessian(f, theta))
    want = {"LM": ev[np.argmax(np.abs(ev))], "LA": ev[-1], "SA": ev[0]}
    for which, value in want.items():
        est = top_eigenvalue(f, theta, which, tol=1e-10, residual=True)
        assert est.converged and est.residual < 1e-6
        assert abs(est.value - value) <= F64_EIG * abs(value), which


def test_sharpness_vs_dense_default_tol_is_1e3_or_better():
    problem = tiny()
    f = problem.train_loss
    theta = trained_point(problem)
    top = np.abs(np.linalg.eigvalsh(dense_hessian(f, theta))).max()
    est = top_eigenvalue(f, theta)  # tol 1e-3
    assert abs(abs(est.value) - top) <= 1e-3 * top


def test_sharpness_vs_dense_lanczos_oracle_matches_eigsh_and_dense():
    problem = tiny(loss="ce")
    f = problem.train_loss
    theta = trained_point(problem)
    ev = np.linalg.eigvalsh(dense_hessian(f, theta))
    ritz = lanczos_eigenvalues(f, theta, f.p, seed=3)
    assert abs(ritz[-1] - ev[-1]) <= F64_EIG * abs(ev[-1]) and abs(ritz[0] - ev[0]) <= F64_EIG * abs(ev[0])
    assert abs(top_eigenvalue(f, theta, "LA", tol=1e-10).value - ritz[-1]) <= F64_EIG * abs(ritz[-1])


def test_sharpness_power_iteration_converges_to_max_abs_eigenvalue():
    problem = tiny()
    f = problem.train_loss
    theta = trained_point(problem)
    ev = np.linalg.eigvalsh(dense_hessian(f, theta))
    top = ev[np.argmax(np.abs(ev))]
    _, history = power_iteration(f, theta, 400, seed=0)
    err = np.abs(history - top) / abs(top)
    assert err[-1] < 1e-6 and err[-1] <= err[9]


def test_sharpness_eigsh_nonconvergence_is_flagged_with_residual():
    problem = tiny()
    f = problem.train_loss
    theta = trained_point(problem)
    est = top_eigenvalue(f, theta, "SA", tol=1e-15, maxiter=1, ncv=3)
    assert not est.converged
    assert math.isnan(est.value) or (math.isfinite(est.residual) and est.residual > 0)


def test_sharpness_warm_start_saves_hvps():
    problem = tiny()
    f = problem.train_loss
    theta = trained_point(problem)
    cold = top_eigenvalue(f, theta, tol=1e-8, ncv=8)
    warm = top_eigenvalue(f, theta, tol=1e-8, ncv=8, v0=cold.vector)
    assert warm.n_hvp < cold.n_hvp and abs(warm.value - cold.value) <= 1e-7 * abs(cold.value)


def test_sharpness_hutchinson_trace_is_unbiased():
    problem = tiny()
    f = problem.train_loss
    theta = trained_point(problem)
    tr = np.trace(dense_hessian(f, theta))
    est, se = hutchinson_trace(f, theta, 200, seed=0)
    assert abs(est - tr) <= 5 * se


def test_sharpness_average_sharpness_is_quadratic_at_small_rho():
    problem = tiny()
    f = problem.train_loss
    theta = trained_point(problem)
    H = dense_hessian(f, theta)
    rho = 1e-3
    est, se = average_sharpness(f, theta, rho, 200, seed=0)
    expected = rho**2 * np.trace(H) / (2 * f.p)  # E[uᵀHu] = tr H / p on the unit sphere
    assert abs(est - expected) <= 5 * se + 1e-3 * abs(expected)


def test_sharpness_adaptive_matches_dense_scaled_hessian():
    problem = tiny()
    f = problem.train_loss
    theta = trained_point(problem)
    T = np.abs(theta.numpy()) + 1e-3
    H = dense_hessian(f, theta)
    want = np.linalg.eigvalsh(T[:, None] * H * T[None, :])[-1]
    assert abs(adaptive_sharpness(f, theta, tol=1e-10).value - want) <= F64_EIG * abs(want)


@settings(max_examples=10)
@given(a=st.integers(-300, 300), b=st.integers(-300, 300), seed=st.integers(0, 100))
def test_sharpness_hvp_is_linear_and_symmetric(a, b, seed):
    # integer draws scaled by 1/100: hypothesis' float strategies refuse to run once any test has set
    # torch.set_flush_denormal(True) in this process (validation.device.setup_torch does)
    a, b = a / 100, b / 100
    problem = PROBLEM_F64
    f, theta = problem.train_loss, problem.theta_init
    rng = np.random.default_rng(seed)
    u, v = (torch.as_tensor(rng.standard_normal(f.p)) for _ in range(2))
    lhs = hvp(f, theta, a * u + b * v)
    rhs = a * hvp(f, theta, u) + b * hvp(f, theta, v)
    scale = float(hvp(f, theta, u).abs().max() + hvp(f, theta, v).abs().max()) * (abs(a) + abs(b) + 1)
    assert float((lhs - rhs).abs().max()) <= ROUND * scale
    assert abs(float(u @ hvp(f, theta, v)) - float(v @ hvp(f, theta, u))) <= ROUND * scale * f.p


PROBLEM_F64 = tiny()


# ----------------------------------------------------------------------------- trainer

def test_trainer_outcomes_converged_oscillating_diverged():
    problem = tiny(dtype="float32")
    conv = train_gd(problem, 0.2, eps=0.3, max_steps=2000, extra_measures=False)
    assert conv.outcome == "converged" and conv.loss[-1] < 0.3 and conv.final["S"]["converged"]
    osc = train_gd(problem, 0.2, eps=1e-9, max_steps=3, final_measures=False)
    assert osc.outcome == "oscillating" and osc.steps == 3 and len(osc.loss) == 4
    div = train_gd(problem, 1e4, eps=1e-3, max_steps=500)
    assert div.outcome == "diverged" and "S" not in div.final


def test_trainer_fixed_init_is_shared_across_the_sweep():
    problem = tiny()
    before = problem.theta_init.clone()
    a = train_gd(problem, 0.1, eps=1e-9, max_steps=20, final_measures=False)
    b = train_gd(problem, 0.1, eps=1e-9, max_steps=20, final_measures=False)
    assert torch.equal(problem.theta_init, before)
    assert np.array_equal(a.loss, b.loss) and a.loss[0] == b.loss[0]
    assert all(torch.equal(problem.init_state[k], v) for k, v in problem.model.state_dict().items())


def test_trainer_float32_and_float64_agree_early():
    l32 = train_gd(tiny(dtype="float32"), 0.1, eps=1e-9, max_steps=10, final_measures=False).loss
    l64 = train_gd(tiny(dtype="float64"), 0.1, eps=1e-9, max_steps=10, final_measures=False).loss
    assert np.allclose(l32, l64, rtol=1e-4)


def test_trainer_sharpness_path_and_measures():
    problem = tiny()
    run = train_gd(problem, 0.1, eps=1e-9, max_steps=20, sharpness_every=5)
    assert [p["step"] for p in run.sharpness_path] == [0, 5, 10, 15, 20]
    bursts = train_gd(problem, 0.1, eps=1e-9, max_steps=12, sharpness_every=5, sharpness_burst=2,
                      final_measures=False)
    assert [p["step"] for p in bursts.sharpness_path] == [0, 1, 5, 6, 10, 11]
    with pytest.raises(InputError, match="^sharpness_burst:"):
        train_gd(problem, 0.1, max_steps=2, sharpness_every=5, sharpness_burst=0)
    assert all(p["converged"] for p in run.sharpness_path)
    final = run.final
    for key in ("l1", "l2", "nuclear", "train_loss", "test_loss", "train_error", "test_error", "S", "lambda_max",
                "trace", "avg_sharpness", "adaptive_sharpness"):
        assert key in final
    assert len(final["nuclear"]) == 3  # depth 2: three weight matrices
    assert "lambda_min" not in final  # opt-in (slow): measure(..., lambda_min=True)
    lo = measure(problem, problem.theta_init, lambda_min=True)
    assert lo["lambda_min"]["value"] <= lo["lambda_max"]["value"]
    theta = problem.theta_init
    norms = parameter_norms(problem, theta)
    assert norms["l1"] == pytest.approx(float(theta.abs().sum())) and norms["l2"] >= 0


@pytest.mark.parametrize("kwargs,param", [
    ({"eta": 0.0}, "eta"), ({"eta": -1.0}, "eta"), ({"eta": math.nan}, "eta"),
    ({"eps": 0.0}, "eps"), ({"eps": -1e-2}, "eps"), ({"max_steps": 0}, "max_steps"),
])
def test_trainer_bad_input_raises_before_training(kwargs, param):
    problem = tiny()
    args = {"eta": 0.1, "eps": 1e-2, "max_steps": 10, **kwargs}
    eta = args.pop("eta")
    with pytest.raises(InputError, match=f"^{param}:"):
        train_gd(problem, eta, **args)


@pytest.mark.parametrize("kwargs,param", [
    ({"arch": "mlp"}, "arch"), ({"loss": "hinge"}, "loss"), ({"coarse": (), "fine": ()}, "eta"),
    ({"coarse": (0.5, -1.0)}, "eta"), ({"eps": 0.0}, "eps"), ({"dtype": "float16"}, "dtype"),
])
def test_sweep_config_bad_input(kwargs, param):
    with pytest.raises(InputError, match=f"^{param}:"):
        SweepConfig(**kwargs)


def test_sweep_inputs_checked_directly():
    with pytest.raises(InputError, match="^eta: the sweep must contain"):
        check_sweep_inputs(etas=[])
    with pytest.raises(InputError, match="^arch:"):
        make_problem("transformer", "mse", np.zeros((4, 2)), np.zeros(4, int), np.zeros((4, 2)), np.zeros(4, int),
                     num_classes=2)


# ----------------------------------------------------------------------------- gradient-flow proxy

def test_gf_proxy_s_gf_is_the_running_max_and_eta_c_is_2_over_it():
    problem = tiny(dtype="float64", hvp_method="double-backward")
    res = gradient_flow_sharpness(problem, 0.05, every=20)
    assert res.reached_eps and res.all_converged
    assert res.s_gf == max(p["S"] for p in res.path)
    assert res.eta_c == pytest.approx(2 / res.s_gf, rel=1e-15)
    s = [res.sensitivity[repr(e)]["s_gf"] for e in (0.2, 0.1, 0.05)]
    assert s[0] <= s[1] <= s[2] == res.s_gf  # a running max can only grow as eps shrinks
    assert math.isfinite(eps_sensitivity(res))


def test_gf_proxy_gd_and_rk4_agree():
    problem = tiny(dtype="float64", hvp_method="double-backward")
    gd = gradient_flow_sharpness(problem, 0.05, every=10, fraction=0.25)
    rk4 = gradient_flow_sharpness(problem, 0.05, method="rk4", every=10, fraction=0.25)
    assert gd.s_gf == pytest.approx(rk4.s_gf, rel=0.02)


def test_gf_proxy_bad_input():
    problem = tiny()
    with pytest.raises(InputError, match="^eps:"):
        gradient_flow_sharpness(problem, 0.0)
    with pytest.raises(InputError, match="^fraction:"):
        gradient_flow_sharpness(problem, 0.1, fraction=1.5)
    with pytest.raises(InputError, match="^method:"):
        gradient_flow_sharpness(problem, 0.1, method="euler")


def test_flatloss_rejects_a_parameterless_model():
    with pytest.raises(InputError, match="^model:"):
        FlatLoss(torch.nn.Tanh(), lambda o, y: o.sum(), torch.zeros(2), torch.zeros(2))


def test_sharpness_fixed_point_operator_matches_hvp():
    from biasaudit.validation.sharpness import HessianAt

    problem = tiny(dtype="float64")
    f, theta = problem.train_loss, trained_point(problem, steps=5)
    H = HessianAt(f, theta)
    rng = np.random.default_rng(3)
    for _ in range(3):  # repeated products through the one retained graph
        v = torch.as_tensor(rng.standard_normal(f.p), dtype=theta.dtype)
        for method in ("forward-over-reverse", "double-backward"):
            assert torch.allclose(H(v), hvp(f, theta, v, method), rtol=0, atol=1e-10)
    n = f.n_hvp
    H(v)
    assert f.n_hvp == n + 1


def test_sharpness_hvp_falls_back_to_double_backward_without_forward_mode(monkeypatch):
    import biasaudit.validation.sharpness as sh

    problem = tiny()
    f, theta = problem.train_loss, problem.theta_init
    v = torch.ones(f.p, dtype=theta.dtype)
    want = hvp(f, theta, v, "double-backward")

    def no_forward_mode():
        def jvp(*args, **kwargs):
            raise NotImplementedError("no forward AD formula")
        return torch.func.grad, jvp

    monkeypatch.setattr(sh, "_torch_func", no_forward_mode)
    assert torch.equal(hvp(f, theta, v), want) and f.hvp_method == "double-backward" and f.hvp_fallback
    with pytest.raises(NotImplementedError):
        hvp(f, theta, v, "forward-over-reverse")  # asked for explicitly: no silent fallback


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_trainer_and_sharpness_on_cuda_match_cpu():
    cpu = train_gd(tiny(), 0.1, eps=1e-9, max_steps=10, extra_measures=False)
    gpu = train_gd(tiny(device="cuda"), 0.1, eps=1e-9, max_steps=10, extra_measures=False)
    assert np.allclose(cpu.loss, gpu.loss, rtol=1e-10)
    assert gpu.final["S"]["value"] == pytest.approx(cpu.final["S"]["value"], rel=1e-6)
