"""The torch SAM optimizer: a quadratic with a known SAM limit cycle / fixed point, the zero-gradient guard,
BatchNorm statistics, equivalence to the base optimizer at rho = 0, and the perturbation formulas."""

import copy
import math

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


# ------------------------------------------------------------------------- variants (USAM, ASAM, m-SAM)
TOL = 1e-12  # float64, hand-written update vs optimizer


def _close(actual, expected):
    torch.testing.assert_close(actual, expected, rtol=TOL, atol=TOL)


def _quartic(opt, params, coeffs):
    """L = sum_k sum(c_k theta_k^4)/4: gradient c theta^3, hand-written below."""
    def closure():
        opt.zero_grad()
        loss = sum((c * p**4).sum() for c, p in zip(coeffs, params)) / 4
        loss.backward()
        return loss
    return closure


def _quartic_start():
    a0 = torch.tensor([0.7, -0.4, 0.0, 1.2], dtype=torch.float64)  # a zero entry: T = eta_asam there
    b0 = torch.tensor([-0.3, 0.9], dtype=torch.float64)
    ca = torch.tensor([1.0, 2.0, 0.5, 0.7], dtype=torch.float64)
    cb = torch.tensor([3.0, 0.2], dtype=torch.float64)
    return a0, b0, ca, cb


def test_sam_unnormalized_step_matches_a_hand_written_update():
    """USAM: theta <- theta - eta c (theta + rho g)^3, g = c theta^3, two steps, two tensors."""
    a0, b0, ca, cb = _quartic_start()
    a, b = torch.nn.Parameter(a0.clone()), torch.nn.Parameter(b0.clone())
    rho, eta = 0.3, 0.05
    opt = SAM([a, b], torch.optim.SGD, rho=rho, lr=eta, normalization="none")
    closure = _quartic(opt, [a, b], [ca, cb])
    ha, hb = a0.clone(), b0.clone()
    for _ in range(2):
        opt.step(closure)
        ga, gb = ca * ha**3, cb * hb**3
        ha, hb = ha - eta * ca * (ha + rho * ga) ** 3, hb - eta * cb * (hb + rho * gb) ** 3
        _close(a.detach(), ha)
        _close(b.detach(), hb)


@pytest.mark.parametrize("normalization", ["joint", "layer", "none"])
@pytest.mark.parametrize("eta_asam", [0.01, 0.3, 0.0])
def test_sam_asam_step_matches_a_hand_written_update(normalization, eta_asam):
    """ASAM: T = |theta| + eta_asam, u = T g; eps = rho T u/||u|| (joint over both tensors / per tensor) or
    rho T u (none); theta <- theta - eta grad(theta + eps). Biases and weights alike (both tensors scaled)."""
    a0, b0, ca, cb = _quartic_start()
    a, b = torch.nn.Parameter(a0.clone()), torch.nn.Parameter(b0.clone())
    rho, eta = 0.2, 0.05
    kw = {} if eta_asam == 0.01 else {"eta_asam": eta_asam}  # 0.01 is the default
    opt = SAM([a, b], torch.optim.SGD, rho=rho, lr=eta, normalization=normalization, adaptive=True, **kw)
    opt.step(_quartic(opt, [a, b], [ca, cb]))
    ga, gb = ca * a0**3, cb * b0**3
    Ta, Tb = a0.abs() + eta_asam, b0.abs() + eta_asam
    ua, ub = Ta * ga, Tb * gb
    if normalization == "joint":
        na = nb = torch.sqrt((ua**2).sum() + (ub**2).sum())
    elif normalization == "layer":
        na, nb = torch.sqrt((ua**2).sum()), torch.sqrt((ub**2).sum())
    else:
        na = nb = torch.tensor(1.0, dtype=torch.float64)
    ea, eb = rho * Ta * ua / na, rho * Tb * ub / nb
    _close(a.detach(), a0 - eta * ca * (a0 + ea) ** 3)
    _close(b.detach(), b0 - eta * cb * (b0 + eb) ** 3)
    if eta_asam == 0.0:  # theta = 0 and T = 0: that coordinate is not perturbed and (gradient 0) stays put
        assert float(a.detach()[2]) == 0.0


def test_sam_asam_official_bias_convention_through_a_param_group():
    """ASAM's official code scales weights only (T = 1 on biases): a group with adaptive=False; the joint norm
    is taken over T g for the weights and g for the biases."""
    a0, b0, ca, cb = _quartic_start()
    a, b = torch.nn.Parameter(a0.clone()), torch.nn.Parameter(b0.clone())
    rho, eta = 0.2, 0.05
    opt = SAM([{"params": [a]}, {"params": [b], "adaptive": False}], torch.optim.SGD, rho=rho, lr=eta,
              adaptive=True)
    opt.step(_quartic(opt, [a, b], [ca, cb]))
    ga, gb = ca * a0**3, cb * b0**3
    Ta = a0.abs() + 0.01
    nrm = torch.sqrt(((Ta * ga) ** 2).sum() + (gb**2).sum())
    _close(a.detach(), a0 - eta * ca * (a0 + rho * Ta**2 * ga / nrm) ** 3)
    _close(b.detach(), b0 - eta * cb * (b0 + rho * gb / nrm) ** 3)


def test_sam_asam_perturbation_is_scale_invariant_at_eta_zero():
    """Kwon et al.: with eta_asam = 0 and theta' = theta / c (c > 0 elementwise), L'(theta') = L(c theta'):
    g' = c g and T' = T / c, so eps' = eps / c, i.e. the perturbed points correspond: c (theta' + eps') =
    theta + eps. Plain SAM (T = 1) does not have this property (the power check)."""
    rng = torch.Generator().manual_seed(3)
    theta = torch.randn(5, generator=rng, dtype=torch.float64)
    g = torch.randn(5, generator=rng, dtype=torch.float64)  # any gradient at theta
    c = torch.rand(5, generator=rng, dtype=torch.float64) * 4 + 0.25
    eps = sam_perturbation([g], 0.1, T=[theta.abs()])[0]
    eps_c = sam_perturbation([c * g], 0.1, T=[(theta / c).abs()])[0]
    _close(c * (theta / c + eps_c), theta + eps)
    plain, plain_c = sam_perturbation([g], 0.1)[0], sam_perturbation([c * g], 0.1)[0]
    assert float((c * (theta / c + plain_c) - (theta + plain)).abs().max()) > 1e-3


def _logistic_grads(w, b, x, y):
    """Mean logistic loss log(1 + exp(-y (x.w + b))) of the rows given, and its gradient (analytic)."""
    z = y * (x @ w + b)
    s = torch.sigmoid(-z)
    return torch.nn.functional.softplus(-z).mean(), -(s * y) @ x / len(y), -(s * y).mean().reshape(1)


def _hand_eps(kind, rho, w, b, gw, gb):
    if kind == "l2":
        n = torch.sqrt((gw**2).sum() + (gb**2).sum())
        return rho * gw / n, rho * gb / n
    if kind == "none":
        return rho * gw, rho * gb
    if kind == "linf":
        return rho * torch.sign(gw), rho * torch.sign(gb)
    Tw, Tb = w.abs() + 0.01, b.abs() + 0.01  # asam
    n = torch.sqrt(((Tw * gw) ** 2).sum() + ((Tb * gb) ** 2).sum())
    return rho * Tw**2 * gw / n, rho * Tb**2 * gb / n


VARIANTS = {"l2": {}, "none": {"normalization": "none"}, "linf": {"norm": "linf"}, "asam": {"adaptive": True}}


def _logistic_data():
    rng = torch.Generator().manual_seed(5)
    x = torch.randn(5, 3, generator=rng, dtype=torch.float64)
    y = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0], dtype=torch.float64)
    w0 = torch.tensor([0.4, -0.2, 0.3], dtype=torch.float64)
    b0 = torch.tensor([0.1], dtype=torch.float64)
    return x, y, w0, b0


@pytest.mark.parametrize("kind", list(VARIANTS))
@pytest.mark.parametrize("m", [1, 2, 3, 5, 8])
def test_sam_msharpness_step_matches_a_hand_written_update(kind, m):
    """m-SAM on 5 examples: groups of m in order (m = 2: sizes 2, 2, 1; m >= 5: one group), eps per group from
    that group's gradient, h_G = grad L_G(theta + eps_G), theta <- theta - eta sum_G (|G|/5) h_G. Two steps."""
    x, y, w0, b0 = _logistic_data()
    w, b = torch.nn.Parameter(w0.clone()), torch.nn.Parameter(b0.clone())
    rho, eta = 0.3, 0.5
    opt = SAM([w, b], torch.optim.SGD, rho=rho, lr=eta, **VARIANTS[kind])

    def loss_fn(xc, yc):
        return torch.nn.functional.softplus(-yc * (xc @ w + b)).mean()

    hw, hb = w0.clone(), b0.clone()
    for _ in range(2):
        loss = opt.step_msharpness(loss_fn, x, y, m=m)
        sw, sb, total = torch.zeros_like(hw), torch.zeros_like(hb), 0.0
        for start in range(0, 5, m):
            xs, ys = x[start:start + m], y[start:start + m]
            lg, gw, gb = _logistic_grads(hw, hb, xs, ys)
            ew, eb = _hand_eps(kind, rho, hw, hb, gw, gb)
            _, pw, pb = _logistic_grads(hw + ew, hb + eb, xs, ys)
            sw, sb, total = sw + len(ys) / 5 * pw, sb + len(ys) / 5 * pb, total + len(ys) / 5 * float(lg)
        hw, hb = hw - eta * sw, hb - eta * sb
        assert abs(float(loss) - total) <= TOL
        _close(w.detach(), hw)
        _close(b.detach(), hb)


@pytest.mark.parametrize("m", [16, 40])
def test_sam_msharpness_with_one_group_is_exactly_ordinary_sam(m):
    """m >= batch size: step_msharpness == step(closure) bit for bit (BatchNorm model, SGD with momentum)."""
    x, y = torch.randn(16, 4, generator=torch.Generator().manual_seed(1)), torch.arange(16) % 2
    a, b = _bn_model(), _bn_model()
    kw = {"rho": 0.2, "lr": 0.1, "momentum": 0.9}
    opt_a = SAM(a.parameters(), torch.optim.SGD, model=a, **kw)
    opt_b = SAM(b.parameters(), torch.optim.SGD, model=b, **kw)
    for _ in range(4):
        la = opt_a.step_msharpness(lambda xc, yc: torch.nn.functional.cross_entropy(a(xc), yc), x, y, m=m)
        lb = opt_b.step(_bn_closure(opt_b, b, x, y))
        assert torch.equal(la, lb.detach())
    for pa, pb in zip(a.state_dict().values(), b.state_dict().values()):
        assert torch.equal(pa, pb)


@pytest.mark.parametrize("variant", [{"normalization": "none"}, {"adaptive": True}, {"norm": "linf"}])
@pytest.mark.parametrize("msharp", [False, True])
def test_sam_variants_with_rho_zero_are_exactly_the_base_optimizer(variant, msharp):
    x, y = torch.randn(16, 4, generator=torch.Generator().manual_seed(2)), torch.arange(16) % 2
    a, b = _bn_model(), _bn_model()
    kw = {"lr": 0.05, "momentum": 0.9, "weight_decay": 1e-3}
    opt_a = SAM(a.parameters(), torch.optim.SGD, rho=0.0, model=a, **variant, **kw)
    opt_b = torch.optim.SGD(b.parameters(), **kw)
    for _ in range(3):
        if msharp:
            opt_a.step_msharpness(lambda xc, yc: torch.nn.functional.cross_entropy(a(xc), yc), x, y, m=4)
        else:
            opt_a.step(_bn_closure(opt_a, a, x, y))
        opt_b.step(_bn_closure(opt_b, b, x, y))
    for pa, pb in zip(a.state_dict().values(), b.state_dict().values()):
        assert torch.equal(pa, pb)


def test_sam_msharpness_batchnorm_stats_move_only_on_the_unperturbed_group_passes():
    """m = 4 on 16 examples: the running stats end as after 4 unperturbed forwards of the groups in order
    (the perturbed passes are frozen); without the model the perturbed passes leak (8 updates)."""
    x, y = torch.randn(16, 4, generator=torch.Generator().manual_seed(1)), torch.arange(16) % 2
    model = _bn_model()
    reference = copy.deepcopy(model)
    for start in range(0, 16, 4):
        reference(x[start:start + 4])
    opt = SAM(model.parameters(), torch.optim.SGD, rho=0.5, lr=0.1, model=model)
    opt.step_msharpness(lambda xc, yc: torch.nn.functional.cross_entropy(model(xc), yc), x, y, m=4)
    assert int(model[1].num_batches_tracked) == 4
    assert torch.equal(model[1].running_mean, reference[1].running_mean)
    assert torch.equal(model[1].running_var, reference[1].running_var)
    leaky = _bn_model()
    opt2 = SAM(leaky.parameters(), torch.optim.SGD, rho=0.5, lr=0.1)
    opt2.step_msharpness(lambda xc, yc: torch.nn.functional.cross_entropy(leaky(xc), yc), x, y, m=4)
    assert int(leaky[1].num_batches_tracked) == 8


@pytest.mark.parametrize("variant", [{"normalization": "none"}, {"adaptive": True},
                                     {"adaptive": True, "normalization": "layer"}])
def test_sam_variants_keep_the_minimum_a_fixed_point(variant):
    """Zero gradient: eps = 0 (no NaN) for USAM and ASAM, through step and step_msharpness."""
    center = torch.tensor([0.5, -1.0], dtype=torch.float64)
    theta = torch.nn.Parameter(center.clone())
    opt = SAM([theta], torch.optim.SGD, rho=0.2, lr=0.1, **variant)
    lam = torch.tensor([1.0, 3.0], dtype=torch.float64)
    closure = _quadratic_closure(opt, theta, lam, center=center)
    for _ in range(3):
        opt.step(closure)
        opt.step_msharpness(lambda k: 0.5 * (k * lam * (theta - center) ** 2).sum(), torch.ones(3), m=1)
    assert torch.equal(theta.detach(), center)


def test_sam_variants_reject_bad_input():
    p = [torch.nn.Parameter(torch.zeros(2))]
    for kwargs, name in [({"normalization": "unit"}, "normalization"), ({"norm": "linf", "normalization": "none"},
                         "normalization"), ({"adaptive": True, "norm": "linf"}, "adaptive"),
                         ({"adaptive": "yes"}, "adaptive"), ({"eta_asam": -0.01}, "eta_asam"),
                         ({"eta_asam": math.inf}, "eta_asam")]:
        with pytest.raises(InputError, match=f"^{name}:"):
            SAM(p, torch.optim.SGD, rho=0.1, lr=0.1, **kwargs)
    with pytest.raises(InputError, match="^eta_asam:"):
        SAM([{"params": p, "eta_asam": -1.0}], torch.optim.SGD, rho=0.1, lr=0.1, adaptive=True)
    opt = SAM(p, torch.optim.SGD, rho=0.1, lr=0.1)
    x, y = torch.zeros(4, 2), torch.zeros(4)

    def loss_fn(xc, yc):
        return (xc @ p[0] - yc).pow(2).mean()

    for m in (0, -1, 1.5, True, "2"):
        with pytest.raises(InputError, match="^m:"):
            opt.step_msharpness(loss_fn, x, y, m=m)
    for batch in ((), (x, torch.zeros(3)), (torch.zeros(0, 2),), (x, [1.0, 2.0, 3.0, 4.0])):
        with pytest.raises(InputError, match="^batch:"):
            opt.step_msharpness(loss_fn, *batch, m=2)
    with pytest.raises(InputError, match="^loss_fn:"):
        opt.step_msharpness(None, x, y, m=2)
