"""Grad-CAM (Selvaraju et al. 2017) and |input-gradient| saliency, with forward hooks.

For a layer with activation maps A^k (k = 1..K channels, h x w) and class score y^c:

    alpha_k^c = mean_{ij} d y^c / d A^k_ij          (global-average-pooled gradient)
    CAM^c     = ReLU( sum_k alpha_k^c A^k )          (h x w), then bilinear upsampling to the input size

|input gradient| saliency is ``sum_channels |d y^c / d x|`` (gradient x input is *not* offered: it is 0 on dark
pixels by construction, so it cannot measure attention to dark background; notes/validation-sam.md).

:func:`mass_share` turns a map into the share of its total mass on a pixel mask (e.g. low-intensity pixels,
or a patch). A map with zero total mass has no share: NaN, which callers drop (never counted as 0 or 1).
The model is put in eval mode for the maps (BatchNorm uses running stats) and its mode is restored.
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F

__all__ = ["grad_cam", "input_gradient_saliency", "cam_and_input_gradient", "mass_share"]


@contextlib.contextmanager
def _eval_mode(model):
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)


def _targets(logits, target):
    if target is None:
        return logits.argmax(dim=1)
    if isinstance(target, int):
        return torch.full((logits.shape[0],), target, dtype=torch.long, device=logits.device)
    return target.to(logits.device).long()


def grad_cam(model, x, target=None, layer=None, upsample: bool = True):
    """Grad-CAM maps (N x H x W, or N x h x w without upsampling) for class ``target`` (default: prediction).

    ``layer`` defaults to ``model.cam_layer``; ``target`` is None, an int, or a tensor of N labels.
    """
    with _captured(layer if layer is not None else model.cam_layer) as store, _eval_mode(model), \
            torch.enable_grad():
        logits = model(x)
        A = store["A"]
        c = _targets(logits, target)
        (dA,) = torch.autograd.grad(logits.gather(1, c[:, None]).sum(), A)
    return _cam(A, dA, x.shape[-2:] if upsample else None)


@contextlib.contextmanager
def _captured(layer):
    """``store["A"]``: the output of ``layer`` in the forward pass run inside the block."""
    store = {}
    handle = layer.register_forward_hook(lambda module, inputs, output: store.__setitem__("A", output))
    try:
        yield store
    finally:
        handle.remove()


def _cam(A, dA, size):
    """ReLU(sum_k alpha_k A^k) with alpha_k the spatial mean of dA^k; bilinear upsampling to ``size`` (None: none)."""
    weights = dA.mean(dim=(2, 3), keepdim=True)
    cam = F.relu((weights * A.detach()).sum(dim=1))
    if size is not None and cam.shape[-2:] != size:
        cam = F.interpolate(cam[:, None], size=size, mode="bilinear", align_corners=False)[:, 0]
    return cam.detach()


def input_gradient_saliency(model, x, target=None):
    """``sum_channels |d y^c / d x|`` (N x H x W)."""
    with _eval_mode(model), torch.enable_grad():
        x = x.detach().clone().requires_grad_(True)
        logits = model(x)
        c = _targets(logits, target)
        (dx,) = torch.autograd.grad(logits.gather(1, c[:, None]).sum(), x)
    return dx.abs().sum(dim=1)


def cam_and_input_gradient(model, x, target=None, layer=None, upsample: bool = True):
    """``(grad_cam(model, x, target, layer, upsample), input_gradient_saliency(model, x, target))`` from one
    forward and one backward pass: d y^c / d A and d y^c / d x come from the same graph. Bitwise equal to the
    two separate calls (tested); an evaluation of the network experiments uses it to halve its probe passes."""
    with _captured(layer if layer is not None else model.cam_layer) as store, _eval_mode(model), \
            torch.enable_grad():
        x = x.detach().clone().requires_grad_(True)
        logits = model(x)
        A = store["A"]
        c = _targets(logits, target)
        dA, dx = torch.autograd.grad(logits.gather(1, c[:, None]).sum(), (A, x))
    return _cam(A, dA, x.shape[-2:] if upsample else None), dx.abs().sum(dim=1)


def mass_share(maps, mask):
    """Per-image share of a non-negative map's mass inside ``mask`` (N x H x W or H x W bool); NaN if empty."""
    maps = maps.to(torch.float64)
    mask = torch.as_tensor(mask, device=maps.device)
    total = maps.sum(dim=(-2, -1))
    inside = (maps * mask.to(maps.dtype)).sum(dim=(-2, -1))
    return torch.where(total > 0, inside / torch.where(total > 0, total, torch.ones_like(total)),
                       torch.full_like(total, float("nan")))
