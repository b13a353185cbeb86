"""Small image classifiers for the validation experiments: a CNN and a ResNet (basic blocks, BatchNorm).

``make_model(name, *, num_classes, in_channels, image_size, init_scale=1.0, **kw)``:

===============  ==================================================================================================
name             architecture (``width`` = w, default 16 for the CNN, 16 for the ResNet)
===============  ==================================================================================================
``cnn``          conv3x3(C->w) ReLU, conv3x3(w->2w) ReLU, maxpool 2 (if image_size >= 16), conv3x3(2w->2w) ReLU
                 [Grad-CAM layer], then ``head="flatten"`` (default: linear on the flattened map; trains much faster
                 at small sizes) or ``head="gap"`` (global average pool, linear(2w->K)). No normalisation layers.
``resnet``       conv3x3(C->w) BN ReLU, BasicBlock(w), BasicBlock(w->2w, stride 2), BasicBlock(2w->4w, stride 2;
                 only if image_size >= 16) [Grad-CAM layer], global average pool, linear. BasicBlock = conv BN
                 ReLU conv BN + shortcut (1x1 conv + BN when the shape changes), ReLU.
``resnet_nobn``  the same ResNet without its BatchNorm layers (``_resnet(norm="none")``): α is not cancelled by a
                 normalisation layer, so it scales the network's function as in the theory.
``resnet_fixednorm``  the same ResNet with each BatchNorm's statistics held fixed (``_resnet(norm="fixed")``):
                 :func:`calibrate_fixed_norms` sets every layer's per-channel mean and variance once, from the
                 training batch at θ₀, and they stay; the gains and shifts train. At θ₀ it computes what the
                 BatchNorm ResNet computes on that batch, but afterwards it is an ordinary network: no filter is
                 scale-invariant.
===============  ==================================================================================================

``init_scale`` (the paper's alpha): after torch's default initialisation, *every* parameter (conv/linear
weights and biases, BatchNorm affine weights) is multiplied by alpha. alpha = 1 is the default init. In the
BN network, alpha on conv weights cancels inside BN; what survives is alpha on the BN gain, the shortcut-free
head and the classifier, i.e. the output scale. Every model exposes ``model.cam_layer``, the module whose
output map Grad-CAM uses.

Other engineers may add architectures with :func:`register_model` (name -> builder with the same keywords).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from biasaudit.plumbing import InputError, finite_scalar, positive_int

__all__ = ["MODELS", "make_model", "register_model", "count_parameters", "calibrate_fixed_norms"]

_BUILDERS: dict[str, Callable] = {}


def register_model(name: str, builder: Callable) -> None:
    """Make ``make_model(name, ...)`` call ``builder(num_classes=, in_channels=, image_size=, **kw)``."""
    _BUILDERS[name] = builder


def _cnn(*, num_classes: int, in_channels: int, image_size: int, width: int = 16, head: str = "flatten"):
    import torch.nn as nn

    from biasaudit.plumbing import choice

    w = positive_int("width", width)
    choice("head", head, ("flatten", "gap"))
    side = image_size // 2 if image_size >= 16 else image_size

    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(in_channels, w, 3, padding=1), nn.ReLU(),
                nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(),
                nn.MaxPool2d(2) if image_size >= 16 else nn.Identity(),
                nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.ReLU(),
            )
            self.cam_layer = self.features[-1]
            if head == "gap":
                self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * w, num_classes))
            else:
                self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * w * side * side, num_classes))

        def forward(self, x):
            return self.head(self.features(x))

    return SmallCNN()


def _resnet(*, num_classes: int, in_channels: int, image_size: int, width: int = 16, norm: str = "batch"):
    """``norm="batch"``: BatchNorm after every convolution (the default); ``"none"``: no normalisation, so the
    init scale α is not cancelled by a normalisation layer and no filter is scale-invariant; ``"fixed"``: a
    normalisation whose statistics are set once by :func:`calibrate_fixed_norms` and then held."""
    import torch.nn as nn
    import torch.nn.functional as F

    from biasaudit.plumbing import choice

    w = positive_int("width", width)
    choice("norm", norm, ("batch", "none", "fixed"))

    # the normalisation's layer factory, named like the layers it builds
    Norm = {"batch": nn.BatchNorm2d, "fixed": _fixed_norm_class(),  # noqa: N806
            "none": lambda channels: nn.Identity()}[norm]

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = Norm(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.bn2 = Norm(cout)
            self.shortcut = nn.Identity()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), Norm(cout))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + self.shortcut(x))

    class SmallResNet(nn.Module):
        def __init__(self):
            super().__init__()
            blocks = [BasicBlock(w, w, 1), BasicBlock(w, 2 * w, 2)]
            cout = 2 * w
            if image_size >= 16:
                blocks.append(BasicBlock(2 * w, 4 * w, 2))
                cout = 4 * w
            self.stem = nn.Sequential(nn.Conv2d(in_channels, w, 3, padding=1, bias=False), Norm(w), nn.ReLU())
            self.blocks = nn.Sequential(*blocks)
            self.cam_layer = self.blocks[-1]
            self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cout, num_classes))

        def forward(self, x):
            return self.head(self.blocks(self.stem(x)))

    return SmallResNet()


@functools.cache
def _fixed_norm_class():
    import torch
    import torch.nn as nn

    class FixedNorm2d(nn.Module):
        r"""y = γ (x − m)/√(v + ε) + β per channel, with (m, v) buffers set by :func:`calibrate_fixed_norms` (the
        batch's mean and biased variance, as BatchNorm normalises with) and then held; γ, β train. Uncalibrated, it
        refuses to run, so no network trains on placeholder statistics."""

        eps = 1e-5  # BatchNorm2d's default

        def __init__(self, channels):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(channels))
            self.bias = nn.Parameter(torch.zeros(channels))
            self.register_buffer("mean", torch.zeros(channels))
            self.register_buffer("var", torch.ones(channels))
            self.register_buffer("calibrated", torch.tensor(False))  # travels with the state_dict
            self.calibrating = False
            self.ready = False  # the same as a Python flag: forward never reads a device tensor on the host

        def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
            super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
            self.ready = bool(self.calibrated)

        def forward(self, x):
            if self.calibrating:
                with torch.no_grad():
                    self.mean.copy_(x.mean(dim=(0, 2, 3)))
                    self.var.copy_(x.var(dim=(0, 2, 3), unbiased=False))
                    self.calibrated.fill_(True)
                self.ready = True
            elif not self.ready:
                raise RuntimeError("FixedNorm2d: call calibrate_fixed_norms(model, X) before using the model")
            shape = (1, -1, 1, 1)
            return (x - self.mean.view(shape)) / torch.sqrt(self.var.view(shape) + self.eps) * self.weight.view(
                shape) + self.bias.view(shape)

    return FixedNorm2d


def calibrate_fixed_norms(model, X) -> int:
    """Set the statistics of every fixed normalisation in ``model`` from one forward pass on the batch ``X`` (each
    layer sees its input as normalised by the layers before it, as in BatchNorm); the number of layers set.
    A model without such layers is left as it is (0)."""
    import torch

    layers = [m for m in model.modules() if isinstance(m, _fixed_norm_class())]
    if not layers:
        return 0
    for m in layers:
        m.calibrating = True
    try:
        with torch.no_grad():
            model(X)
    finally:
        for m in layers:
            m.calibrating = False
    return len(layers)


def _diag2(*, num_classes: int, in_channels: int, image_size: int, width: int | None = None):
    """``width`` is accepted (and ignored) so every model takes the experiments' keywords."""
    import torch
    import torch.nn as nn

    d = in_channels * image_size * image_size

    class DiagonalNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.u = nn.Parameter(torch.ones(num_classes, d))
            self.v = nn.Parameter(torch.ones(num_classes, d))
            self.cam_layer = None

        def forward(self, x):
            return x.flatten(1) @ (self.u * self.v).T

    return DiagonalNet()


def _gated_cnn(*, num_classes: int, in_channels: int, image_size: int, width: int = 16):
    r"""The small CNN behind an elementwise input gate: f(x) = CNN(u ⊙ x), u ∈ R^{C×H×W} initialised to 1.

    Every input feature x_j then reaches the network through a product u_j · (first-layer weight), a depth-2
    path as in the diagonal linear network of the theory (β_j = u_j v_j); ``make_model``'s ``init_scale`` α
    scales the gate with every other parameter."""
    import torch
    import torch.nn as nn

    body = _cnn(num_classes=num_classes, in_channels=in_channels, image_size=image_size, width=width)

    class GatedCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = nn.Parameter(torch.ones(in_channels, image_size, image_size))
            self.body = body
            self.cam_layer = body.cam_layer

        def forward(self, x):
            return self.body(x * self.gate)

    return GatedCNN()


register_model("cnn", _cnn)
register_model("resnet", _resnet)
register_model("diag2", _diag2)
register_model("gated_cnn", _gated_cnn)
register_model("resnet_nobn", functools.partial(_resnet, norm="none"))
register_model("resnet_fixednorm", functools.partial(_resnet, norm="fixed"))
MODELS = ("cnn", "resnet", "diag2", "gated_cnn", "resnet_nobn", "resnet_fixednorm")


def make_model(name: str, *, num_classes: int, in_channels: int, image_size: int, init_scale: float = 1.0,
               seed: int | None = None, **kw):
    """Build a model by name; ``seed`` (optional) seeds torch's initialisation for this model only."""
    import torch

    if name not in _BUILDERS:
        raise InputError("model", f"must be one of {', '.join(sorted(_BUILDERS))}", name)
    num_classes = positive_int("num_classes", num_classes, minimum=2)
    in_channels = positive_int("in_channels", in_channels)
    image_size = positive_int("image_size", image_size, minimum=4)
    alpha = finite_scalar("init_scale", init_scale)
    if alpha <= 0:
        raise InputError("init_scale", "must be > 0", init_scale)
    if seed is None:
        model = _BUILDERS[name](num_classes=num_classes, in_channels=in_channels, image_size=image_size, **kw)
    else:
        from biasaudit.validation.seeding import seeded_global_rng

        with seeded_global_rng(seed):
            model = _BUILDERS[name](num_classes=num_classes, in_channels=in_channels, image_size=image_size, **kw)
    if alpha != 1.0:
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(alpha)
    return model


def count_parameters(model) -> int:
    """The number of trainable entries (``requires_grad``) of ``model``'s parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
