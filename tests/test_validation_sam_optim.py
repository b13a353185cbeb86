"""The torch SAM optimizer: a quadratic with a known SAM limit cycle / fixed point, the zero-gradient guard,
BatchNorm statistics, equivalence to the base optimizer at rho = 0, and the perturbation formulas."""

import copy

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from biasaudit.plumbing import InputError
from biasaudit.validation.sam import SAM, frozen_batchnorm_stats, sam_perturbation


@pytest.fixture(autouse=True)
def _ieee_subnormals():
    """Flush-to-zero is process-global; a module run earlier may have left it on (hypothesis then refuses)."""
    import torch

    torch.set_flush_denormal(False)


EPS64 = np.finfo(np.float64).eps


def _quadratic_closure(opt, theta, lam, center=0.0):
    def closure():
        opt.zero_grad()
        loss = 0.5 * (lam * (theta - center) ** 2).sum()
        loss.backward()
        return loss
    return closure


def test_sam_quadratic_converges_to_the_known_two_cycle():
    """1-d L = lam/2 theta^2: theta' = (1 - eta lam) theta - eta lam rho sign(theta); the SAM iterates settle on
    the 2-cycle +-theta*, theta* = eta lam rho / (2 - eta lam) (solve -theta = (1 - eta lam) theta - eta lam rho)."""
    eta, lam, rho = 0.1, 2.0, 0.3
    star = eta * lam * rho / (2 - eta * lam)
    theta = torch.nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
    opt = SAM([theta], torch.optim.SGD, rho=rho, lr=eta)
    closure = _quadratic_closure(opt, theta, lam)
    values = []
    for _ in range(400):
        opt.step(closure)
        values.append(float(theta.detach()))
    assert abs(abs(values[-1]) - star) < 100 * EPS64
    assert values[-1] * values[-2] < 0 and abs(values[-1] + values[-2]) < 100 * EPS64


def test_sam_quadratic_minimum_is_a_fixed_point_thanks_to_the_zero_gradient_guard():
    """At the minimum the gradient is exactly 0: eps = 0 (not NaN), so SAM stays put."""
    for norm, normalization in (("l2", "joint"), ("l2", "layer"), ("linf", "joint")):
        theta = torch.nn.Parameter(torch.tensor([0.5, -1.0], dtype=torch.float64))
        opt = SAM([theta], torch.optim.SGD, rho=0.2, lr=0.1, norm=norm, normalization=normalization)
        closure = _quadratic_closure(opt, theta, torch.tensor([1.0, 3.0], dtype=torch.float64),
                                     center=torch.tensor([0.5, -1.0], dtype=torch.float64))
        for _ in range(5):
            opt.step(closure)
        assert torch.equal(theta.detach(), torch.tensor([0.5, -1.0], dtype=torch.float64))


def test_sam_zero_gradient_layer_gets_zero_perturbation():
    g = [torch.zeros(3, dtype=torch.float64), torch.tensor([3.0, 4.0], dtype=torch.float64)]
    joint = sam_perturbation(g, 0.5, "l2", "joint")
    layer = sam_perturbation(g, 0.5, "l2", "layer")
    linf = sam_perturbation(g, 0.5, "linf")
    for eps in (joint, layer, linf):
        assert torch.equal(eps[0], torch.zeros(3, dtype=torch.float64))
    torch.testing.assert_close(layer[1], torch.tensor([0.3, 0.4], dtype=torch.float64))
    torch.testing.assert_close(joint[1], torch.tensor([0.3, 0.4], dtype=torch.float64))
    torch.testing.assert_close(linf[1], torch.tensor([0.5, 0.5], dtype=torch.float64))
    all_zero = sam_perturbation([torch.zeros(2), torch.zeros(2)], 0.5, "l2", "joint")
    assert all(torch.equal(e, torch.zeros(2)) for e in all_zero)


@given(st.lists(st.floats(-10, 10), min_size=2, max_size=6), st.floats(0.0, 2.0))
def test_sam_perturbation_norms_match_the_definition(values, rho):
    g = torch.tensor(values, dtype=torch.float64)
    parts = [g[: len(values) // 2], g[len(values) // 2:]]
    joint = torch.cat(sam_perturbation(parts, rho, "l2", "joint"))
    nrm = float(torch.linalg.vector_norm(g))
    expected = g * (rho / nrm) if nrm > 0 else torch.zeros_like(g)
    torch.testing.assert_close(joint, expected, rtol=4 * EPS64, atol=4 * EPS64)
    for part, eps in zip(parts, sam_perturbation(parts, rho, "l2", "layer")):
        n = float(torch.linalg.vector_norm(part))
        assert abs(float(torch.linalg.vector_norm(eps)) - (rho if n > 0 else 0.0)) <= 8 * EPS64 * max(rho, 1)
    linf = torch.cat(sam_perturbation(parts, rho, "linf"))
    assert torch.equal(linf, rho * torch.sign(g))


def _bn_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU(), torch.nn.Linear(6, 2))


def _bn_closure(opt, model, x, y):
    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss
    return closure


def test_sam_batchnorm_running_stats_update_only_on_the_unperturbed_pass():
    x, y = torch.randn(16, 4, generator=torch.Generator().manual_seed(1)), torch.arange(16) % 2
    model = _bn_model()
    reference = copy.deepcopy(model)
    reference(x)  # one unperturbed forward in train mode: the stats SAM must end with
    opt = SAM(model.parameters(), torch.optim.SGD, rho=0.5, lr=0.1, model=model)
    opt.step(_bn_closure(opt, model, x, y))
    bn, ref_bn = model[1], reference[1]
    assert int(bn.num_batches_tracked) == 1
    torch.testing.assert_close(bn.running_mean, ref_bn.running_mean, rtol=0, atol=0)
    torch.testing.assert_close(bn.running_var, ref_bn.running_var, rtol=0, atol=0)
    # power check: without the model, the perturbed pass does update the statistics
    leaky = _bn_model()
    opt2 = SAM(leaky.parameters(), torch.optim.SGD, rho=0.5, lr=0.1)
    opt2.step(_bn_closure(opt2, leaky, x, y))
    assert int(leaky[1].num_batches_tracked) == 2
    assert not torch.equal(leaky[1].running_mean, ref_bn.running_mean)


def test_frozen_batchnorm_stats_restores_buffers_bit_for_bit():
    model = _bn_model()
    before = {k: v.clone() for k, v in model.state_dict().items() if "running" in k or "tracked" in k}
    with frozen_batchnorm_stats(model):
        model(torch.randn(8, 4))
    after = model.state_dict()
    assert all(torch.equal(v, after[k]) for k, v in before.items())


@pytest.mark.parametrize("base, kwargs", [(torch.optim.SGD, {"lr": 0.05, "momentum": 0.9, "weight_decay": 1e-3}),
                                          (torch.optim.Adam, {"lr": 1e-2})])
def test_sam_with_rho_zero_is_exactly_the_base_optimizer(base, kwargs):
    x, y = torch.randn(16, 4, generator=torch.Generator().manual_seed(2)), torch.arange(16) % 2
    a, b = _bn_model(), _bn_model()
    opt_a = SAM(a.parameters(), base, rho=0.0, model=a, **kwargs)
    opt_b = base(b.parameters(), **kwargs)
    for _ in range(5):
        opt_a.step(_bn_closure(opt_a, a, x, y))
        opt_b.step(_bn_closure(opt_b, b, x, y))
    for pa, pb in zip(a.state_dict().values(), b.state_dict().values()):
        assert torch.equal(pa, pb)


def test_sam_step_matches_a_hand_written_update():
    """theta <- theta - eta grad(theta + rho g/||g||) on L = sum(c theta^4)/4 (nonlinear gradient)."""
    c = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
    theta0 = torch.tensor([0.7, -0.4, 1.2], dtype=torch.float64)
    theta = torch.nn.Parameter(theta0.clone())
    opt = SAM([theta], torch.optim.SGD, rho=0.1, lr=0.05)

    def closure():
        opt.zero_grad()
        loss = (c * theta**4).sum() / 4
        loss.backward()
        return loss

    opt.step(closure)
    g = c * theta0**3
    w = theta0 + 0.1 * g / torch.linalg.vector_norm(g)
    torch.testing.assert_close(theta.detach(), theta0 - 0.05 * c * w**3, rtol=4 * EPS64, atol=4 * EPS64)


def test_sam_rejects_bad_input():
    p = [torch.nn.Parameter(torch.zeros(2))]
    with pytest.raises(InputError, match="^rho: must be >= 0"):
        SAM(p, torch.optim.SGD, rho=-0.1, lr=0.1)
    with pytest.raises(InputError, match="^norm:"):
        SAM(p, torch.optim.SGD, rho=0.1, norm="l3", lr=0.1)
    with pytest.raises(InputError, match="^rho:"):
        SAM([{"params": p, "rho": -1.0}], torch.optim.SGD, rho=0.1, lr=0.1)
    opt = SAM(p, torch.optim.SGD, rho=0.1, lr=0.1)
    with pytest.raises(InputError, match="^closure:"):
        opt.step()
