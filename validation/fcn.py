"""Fully connected networks for the EoS sweeps: ``in → width → … → width → classes``.

``depth`` is the number of hidden layers (the quick-tier FCN 784→32→32→10 is width 32, depth 2).
Inputs of any shape are flattened. Initialisation is torch's default (Kaiming-uniform, fan-in) scaled by
``init_scale`` (weights and biases), so a sweep can move between small and large initialisation.
"""

from __future__ import annotations

import torch

from biasaudit.plumbing import choice, positive_int, positive_scalar

__all__ = ["FCN", "ACTIVATIONS", "make_fcn"]

ACTIVATIONS = ("tanh", "relu")


class FCN(torch.nn.Module):
    """Flatten, then ``depth`` × (Linear(·, width), activation), then Linear(width, num_classes)."""

    def __init__(self, in_features: int, num_classes: int, *, width: int = 32, depth: int = 2,
                 activation: str = "tanh", init_scale: float = 1.0):
        super().__init__()
        act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[activation]
        layers: list[torch.nn.Module] = [torch.nn.Flatten()]
        fan_in = in_features
        for _ in range(depth):
            layers += [torch.nn.Linear(fan_in, width), act()]
            fan_in = width
        layers.append(torch.nn.Linear(fan_in, num_classes))
        self.net = torch.nn.Sequential(*layers)
        if init_scale != 1.0:
            with torch.no_grad():
                for p in self.parameters():
                    p.mul_(init_scale)

    def forward(self, x):
        """The logits (N, num_classes) of the inputs ``x`` (N, …), flattened first."""
        return self.net(x)


def make_fcn(in_features: int, num_classes: int, *, width: int = 32, depth: int = 2, activation: str = "tanh",
             init_scale: float = 1.0) -> FCN:
    """Build an :class:`FCN` after validating every argument (InputError names the bad one)."""
    return FCN(positive_int("in_features", in_features), positive_int("num_classes", num_classes),
               width=positive_int("width", width), depth=positive_int("depth", depth),
               activation=choice("activation", activation, ACTIVATIONS),
               init_scale=positive_scalar("init_scale", init_scale))
