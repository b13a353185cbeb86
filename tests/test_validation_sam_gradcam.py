"""Grad-CAM on hand-built networks whose answer is known, and the mass-share metric."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from biasaudit.validation.gradcam import cam_and_input_gradient, grad_cam, input_gradient_saliency, mass_share


@pytest.fixture(autouse=True)
def _ieee_subnormals():
    """Flush-to-zero is process-global; a module run earlier may have left it on (hypothesis then refuses)."""
    import torch

    torch.set_flush_denormal(False)


class Mask(torch.nn.Module):
    def __init__(self, mask):
        super().__init__()
        self.register_buffer("mask", torch.as_tensor(mask, dtype=torch.float32))

    def forward(self, x):
        return x * self.mask


class Wrapped(torch.nn.Module):
    """A Sequential plus a ``cam_layer`` attribute (set on a Sequential it would run twice)."""

    def __init__(self, seq, cam_layer):
        super().__init__()
        self.seq = seq
        self.cam_layer = cam_layer

    def forward(self, x):
        return self.seq(x)


def _region(size, rows, cols):
    m = np.zeros((size, size), dtype=bool)
    m[rows, cols] = True
    return m


def _two_region_net(size=8):
    """Channel 0 sees only region A and pushes class 1 up; channel 1 sees only region B and pushes it down.

    Grad-CAM for class 1: weight of channel 0 > 0, of channel 1 < 0, so after the ReLU the map lives on A.
    """
    A, B = _region(size, slice(0, 3), slice(0, 3)), _region(size, slice(5, 8), slice(5, 8))
    conv = torch.nn.Conv2d(1, 2, 1, bias=False)
    with torch.no_grad():
        conv.weight.fill_(1.0)
    layer = Mask(np.stack([A, B]))
    head = torch.nn.Linear(2, 2, bias=False)
    with torch.no_grad():
        head.weight.copy_(torch.tensor([[0.0, 0.0], [1.0, -1.0]]))
    model = torch.nn.Sequential(conv, layer, torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), head)
    return Wrapped(model, layer), A, B


def test_gradcam_localizes_the_only_region_the_model_uses():
    model, A, B = _two_region_net()
    x = torch.rand(5, 1, 8, 8, generator=torch.Generator().manual_seed(0)) + 0.1
    cam = grad_cam(model, x, target=1)
    assert cam.shape == (5, 8, 8)
    torch.testing.assert_close(mass_share(cam, A), torch.ones(5, dtype=torch.float64), rtol=0, atol=1e-12)
    assert float(cam[:, torch.as_tensor(B)].abs().max()) == 0.0
    # class 0 has zero weights: no mass at all, the share is undefined (NaN), never 0 or 1
    assert torch.isnan(mass_share(grad_cam(model, x, target=0), A)).all()


def test_gradcam_map_equals_the_hand_computed_formula():
    model, A, _ = _two_region_net()
    x = torch.rand(2, 1, 8, 8, generator=torch.Generator().manual_seed(1))
    cam = grad_cam(model, x, target=1)
    # alpha_0 = mean of dy/dA^0 = 1/64 (avg pool) ; CAM = relu(alpha_0 A^0 - alpha_1 A^1) = x * A / 64
    expected = torch.relu(x[:, 0] * torch.as_tensor(A, dtype=torch.float32) / 64.0)
    torch.testing.assert_close(cam, expected, rtol=1e-6, atol=1e-7)


def test_gradcam_upsamples_to_the_input_and_restores_training_mode():
    torch.manual_seed(0)
    seq = torch.nn.Sequential(torch.nn.Conv2d(1, 3, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                              torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 2))
    model = Wrapped(seq, seq[2])
    model.train()
    cam = grad_cam(model, torch.rand(4, 1, 8, 8))
    assert cam.shape == (4, 8, 8) and bool((cam >= 0).all()) and model.training
    small = grad_cam(model, torch.rand(4, 1, 8, 8), upsample=False)
    assert small.shape == (4, 4, 4)


def test_input_gradient_saliency_is_zero_outside_the_receptive_region():
    model, A, B = _two_region_net()
    x = torch.rand(3, 1, 8, 8)
    sal = input_gradient_saliency(model, x, target=1)
    mask = torch.as_tensor(A | B)
    assert float(sal[:, ~mask].max()) == 0.0
    torch.testing.assert_close(sal[:, mask], torch.full_like(sal[:, mask], 1 / 64))


@given(st.integers(1, 6), st.floats(0.0, 5.0))
def test_mass_share_lies_in_unit_interval_and_splits_exactly(seed, shift):
    gen = torch.Generator().manual_seed(seed)
    maps = torch.rand(3, 5, 5, generator=gen) + shift
    mask = torch.rand(5, 5, generator=gen) > 0.5
    inside, outside = mass_share(maps, mask), mass_share(maps, ~mask)
    assert bool(((inside >= 0) & (inside <= 1)).all())
    torch.testing.assert_close(inside + outside, torch.ones(3, dtype=torch.float64), rtol=0, atol=1e-12)


@pytest.mark.parametrize("target", [None, 1, torch.tensor([1, 1, 1])])
def test_gradcam_target_forms_agree(target):
    model, A, _ = _two_region_net()
    x = torch.rand(3, 1, 8, 8, generator=torch.Generator().manual_seed(3))
    x[:, 0, torch.as_tensor(A)] += 1.0  # region A brighter than B: the model predicts class 1
    with torch.no_grad():
        assert bool((model(x).argmax(1) == 1).all())
    cam = grad_cam(model, x, target=target)
    torch.testing.assert_close(mass_share(cam, A), torch.ones(3, dtype=torch.float64))


@pytest.mark.parametrize("name", ["cnn", "resnet"])
def test_one_pass_cam_and_input_gradient_equal_the_two_separate_calls_bit_for_bit(name):
    from biasaudit.validation.models import make_model

    model = make_model(name, num_classes=10, in_channels=1, image_size=14, width=4, init_scale=1.2, seed=2)
    model.train()  # the maps are taken in eval mode and the mode is restored
    x = torch.rand(6, 1, 14, 14)
    target = torch.randint(0, 10, (6,))
    cam, inp = cam_and_input_gradient(model, x, target=target)
    assert torch.equal(cam, grad_cam(model, x, target=target))
    assert torch.equal(inp, input_gradient_saliency(model, x, target=target))
    assert model.training and not x.requires_grad
