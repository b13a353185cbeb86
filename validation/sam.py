"""Sharpness-Aware Minimization for torch, wrapping any base optimizer (torch.optim conventions).

One SAM step with radius rho and base update ``base`` (SGD: theta <- theta - eta * g)::

    g      = grad L(theta)                       # first closure call (its loss is returned)
    eps    = perturbation(g, rho)                # see the table; eps = 0 where the gradient is 0
    g_sam  = grad L(theta + eps)                 # second closure call; BatchNorm running stats frozen
    theta  = base(theta, g_sam)                  # theta is restored exactly (copied back, not theta+eps-eps)

=====================  ===================================================================================
``norm``/``normalization``  perturbation eps
=====================  ===================================================================================
l2 / joint (default)   rho * g / ||g||_2, the norm taken jointly over every parameter of every group
l2 / layer             rho * g_T / ||g_T||_2 separately for each parameter tensor T ("layer" = tensor; for
                       the diagonal network each layer w^(l) is one tensor)
linf                   rho * sign(g), with sign(0) = 0
=====================  ===================================================================================

Zero-gradient guard: where the (joint or per-tensor) norm is 0 the gradient itself is 0, and eps is defined
as 0 (``g * where(norm > 0, rho / norm, 0)``: no division by zero, no host sync). Unlike optax and the
common PyTorch SAM, no ``1e-12`` is added to the norm, so the update equals the mathematical definition and
matches the numba kernels of ``numerics/`` to rounding.

``rho = 0`` is exactly the base optimizer (the second pass is skipped); ``rho < 0`` raises InputError.

BatchNorm: in train mode every forward pass updates the running statistics. The perturbed pass must not,
so :meth:`SAM.step` runs it inside :func:`frozen_batchnorm_stats` (buffers saved and restored bit for bit)
when the optimizer knows the model (``SAM(..., model=model)``); loops that call :meth:`first_step` /
:meth:`second_step` themselves use the context manager directly.

Usage::

    opt = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1, model=model)

    def closure():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        return loss

    loss = opt.step(closure)
"""

from __future__ import annotations

import contextlib

import torch

from biasaudit.plumbing import InputError, choice, nonnegative_scalar

__all__ = ["SAM", "frozen_batchnorm_stats", "sam_perturbation"]

NORMS = ("l2", "linf")
NORMALIZATIONS = ("joint", "layer")


@contextlib.contextmanager
def frozen_batchnorm_stats(model):
    """Within the block, BatchNorm running statistics (mean, var, batch count) are left unchanged."""
    if model is None:
        yield
        return
    saved = []
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm) and module.track_running_stats:
            buffers = [b for b in (module.running_mean, module.running_var, module.num_batches_tracked)
                       if b is not None]
            saved.append((buffers, [b.clone() for b in buffers]))
    try:
        yield
    finally:
        with torch.no_grad():
            for buffers, copies in saved:
                for b, c in zip(buffers, copies):
                    b.copy_(c)


def sam_perturbation(grads: list, rho: float, norm: str = "l2", normalization: str = "joint",
                     joint_norm=None) -> list:
    """eps for a list of gradient tensors (the math of the table above, allocation included)."""
    if norm == "linf":
        eps = torch._foreach_sign(grads)
        torch._foreach_mul_(eps, rho)
        return eps
    if normalization == "layer":
        norms = torch._foreach_norm(grads)
        scales = [torch.where(n > 0, rho / n, torch.zeros_like(n)) for n in norms]
        return torch._foreach_mul(grads, scales)
    if joint_norm is None:
        joint_norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
    scale = torch.where(joint_norm > 0, rho / joint_norm, torch.zeros_like(joint_norm))
    return torch._foreach_mul(grads, scale)


class SAM(torch.optim.Optimizer):
    """SAM around ``base_optimizer`` (a torch.optim class, built on the same param groups with ``**kwargs``)."""

    def __init__(self, params, base_optimizer=torch.optim.SGD, *, rho: float = 0.05, norm: str = "l2",
                 normalization: str = "joint", model=None, **kwargs):
        rho = nonnegative_scalar("rho", rho)
        choice("norm", norm, NORMS)
        choice("normalization", normalization, NORMALIZATIONS)
        if not (isinstance(base_optimizer, type) and issubclass(base_optimizer, torch.optim.Optimizer)):
            raise InputError("base_optimizer", "must be a torch.optim.Optimizer class (e.g. torch.optim.SGD)",
                             base_optimizer)
        super().__init__(params, dict(rho=rho, norm=norm, normalization=normalization, **kwargs))
        for group in self.param_groups:
            nonnegative_scalar("rho", group["rho"])
            choice("norm", group["norm"], NORMS)
            choice("normalization", group["normalization"], NORMALIZATIONS)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self.defaults.update(self.base_optimizer.defaults)
        self.model = model
        self._perturbed: list[list] = []

    def _active(self):
        """(group, params with a gradient, their gradients) for every group with rho > 0."""
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if params and group["rho"] > 0:
                yield group, params, [p.grad for p in params]

    @torch.no_grad()
    def first_step(self, zero_grad: bool = False) -> None:
        """theta <- theta + eps(grad); the unperturbed theta is kept for :meth:`second_step`."""
        active = list(self._active())
        self._perturbed = []
        joint = [g for group, _, grads in active if group["norm"] == "l2" and group["normalization"] == "joint"
                 for g in grads]
        joint_norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(joint))) if joint else None
        for group, params, grads in active:
            eps = sam_perturbation(grads, group["rho"], group["norm"], group["normalization"], joint_norm)
            saved = []
            for p in params:
                state = self.state[p]
                if "sam_theta" not in state or state["sam_theta"].shape != p.shape:
                    state["sam_theta"] = torch.empty_like(p, memory_format=torch.preserve_format)
                saved.append(state["sam_theta"])
            torch._foreach_copy_(saved, params)
            torch._foreach_add_(params, eps)
            self._perturbed.append(params)
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad: bool = False) -> None:
        """Restore theta exactly, then take the base optimizer's step with the perturbed gradient."""
        for params in self._perturbed:
            torch._foreach_copy_(params, [self.state[p]["sam_theta"] for p in params])
        self._perturbed = []
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def step(self, closure=None):
        """One SAM step. ``closure`` must zero the gradients, compute the loss, call backward and return it."""
        if closure is None:
            raise InputError("closure", "SAM needs a closure that recomputes the loss and calls backward()")
        closure = torch.enable_grad()(closure)
        loss = closure()
        if all(group["rho"] == 0 for group in self.param_groups):
            self.base_optimizer.step()  # rho = 0: exactly the base optimizer
            return loss
        self.first_step(zero_grad=True)
        with frozen_batchnorm_stats(self.model):
            closure()
        self.second_step()
        return loss

    def state_dict(self):
        return self.base_optimizer.state_dict() | {"sam_state": None}

    def load_state_dict(self, state_dict):
        state_dict = {k: v for k, v in state_dict.items() if k != "sam_state"}
        self.base_optimizer.load_state_dict(state_dict)
        self.param_groups = self.base_optimizer.param_groups
