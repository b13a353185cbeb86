"""A tiny Vision Transformer for the EoS sweeps (a few thousand parameters, CPU friendly).

Images (C, H, W) are cut into P×P patches (H, W divisible by P), linearly embedded to ``dim``, given a
learned position embedding, passed through ``depth`` pre-norm blocks
``x + MHA(LN(x))``, ``x + MLP(LN(x))`` (GELU, hidden ``mlp_ratio·dim``), mean-pooled over patches,
layer-normed and mapped to the class logits. Attention is written with plain tensor ops (no fused kernels),
so ``torch.func`` forward-over-reverse HVPs work on it. ``init_scale`` multiplies every parameter.
"""

from __future__ import annotations

import math

import torch

from biasaudit.plumbing import InputError, positive_int, positive_scalar

__all__ = ["TinyViT", "make_vit", "default_patch"]


class _Block(torch.nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: int):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, mlp_ratio * dim)
        self.fc2 = torch.nn.Linear(mlp_ratio * dim, dim)

    def forward(self, x):
        n, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.norm1(x)).reshape(n, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // h), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(n, t, d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm2(x))))


class TinyViT(torch.nn.Module):
    """A small vision transformer.

    Square patches of side ``patch`` embedded in ``dim``, a learned position embedding, ``depth`` pre-norm blocks
    (``heads`` attention heads, an MLP of width ``mlp_ratio``·dim), mean pooling and a linear head; ``init_scale``
    multiplies every initial parameter.
    """

    def __init__(self, *, num_classes: int, in_channels: int, image_size: int, patch: int = 7, dim: int = 32,
                 depth: int = 1, heads: int = 2, mlp_ratio: int = 2, init_scale: float = 1.0):
        super().__init__()
        self.patch = patch
        n_patches = (image_size // patch) ** 2
        self.embed = torch.nn.Linear(in_channels * patch * patch, dim)
        self.pos = torch.nn.Parameter(0.02 * torch.randn(1, n_patches, dim))
        self.blocks = torch.nn.Sequential(*[_Block(dim, heads, mlp_ratio) for _ in range(depth)])
        self.norm = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, num_classes)
        if init_scale != 1.0:
            with torch.no_grad():
                for p in self.parameters():
                    p.mul_(init_scale)

    def forward(self, x):
        """The logits (N, num_classes) of images (N, C, H, W); flat rows (N, H·W) are read as one-channel square
        images."""
        if x.ndim == 2:  # flat 784-pixel MNIST rows
            side = int(round(math.sqrt(x.shape[1])))
            x = x.reshape(x.shape[0], 1, side, side)
        n, c, hgt, wid = x.shape
        p = self.patch
        x = x.reshape(n, c, hgt // p, p, wid // p, p).permute(0, 2, 4, 1, 3, 5).reshape(n, -1, c * p * p)
        x = self.blocks(self.embed(x) + self.pos)
        return self.head(self.norm(x.mean(dim=1)))


def default_patch(image_size: int) -> int:
    """7 for 28×28 (16 patches), 8 for 32×32, 4 for 16 or 8, else the largest divisor ≤ image_size/2."""
    for p in (7, 8, 4):
        if image_size % p == 0 and image_size // p >= 2:
            return p
    return max([p for p in range(1, image_size // 2 + 1) if image_size % p == 0] or [1])


def make_vit(*, num_classes: int, in_channels: int, image_size: int, patch: int | None = None, dim: int = 32,
             depth: int = 1, heads: int = 2, mlp_ratio: int = 2, init_scale: float = 1.0) -> TinyViT:
    """Validate and build a :class:`TinyViT` (image_size must be divisible by patch, dim by heads)."""
    image_size = positive_int("image_size", image_size)
    patch = default_patch(image_size) if patch is None else positive_int("patch", patch)
    dim, heads = positive_int("dim", dim), positive_int("heads", heads)
    if image_size % patch:
        raise InputError("patch", f"must divide image_size={image_size}", patch)
    if dim % heads:
        raise InputError("heads", f"must divide dim={dim}", heads)
    return TinyViT(num_classes=positive_int("num_classes", num_classes), in_channels=positive_int("in_channels",
                   in_channels), image_size=image_size, patch=patch, dim=dim, depth=positive_int("depth", depth),
                   heads=heads, mlp_ratio=positive_int("mlp_ratio", mlp_ratio),
                   init_scale=positive_scalar("init_scale", init_scale))
