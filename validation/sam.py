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
l2 / none              rho * g: unnormalized SAM (USAM, Andriushchenko & Flammarion 2022)
linf                   rho * sign(g), with sign(0) = 0 (``normalization`` "none" is refused for linf)
=====================  ===================================================================================

Variants (exact updates in notes/validation-sam.md, "SAM variants")::

    SAM (Foret et al.)       SAM(..., norm="l2", normalization="joint")            (the default)
    unnormalized SAM (USAM)  SAM(..., normalization="none")                        eps = rho g
    ASAM (Kwon et al. 2021)  SAM(..., adaptive=True, eta_asam=0.01)                eps = rho T^2 g / ||T g||_2
    m-SAM / 1-SAM            opt.step_msharpness(loss_fn, x, y, m=m)               eps per group of m examples
    RandSAM (a placebo)      SAM(..., direction="random", seed=s)                  eps = rho r / ||r||_2

RandSAM replaces the gradient in the table by a fresh Gaussian vector r (one draw per step from a generator
seeded with ``seed``): the same radius, the same two passes and the same cost as SAM, but no
sharpness-awareness. It is the placebo of the network experiments: an effect that RandSAM shows too is not
SAM's.

ASAM: ``T = |theta| + eta_asam`` elementwise, for every parameter of a group with ``adaptive=True`` (biases
included; the official ASAM code uses T = 1 on biases: put them in a param group with ``adaptive=False``).
With ``adaptive=True`` each row of the table applies to ``u = T g`` and the result is multiplied by T once
more: joint ``eps = rho T u / ||u||_2`` (u joint over every l2/joint group, T = 1 in non-adaptive ones),
layer ``eps_T = rho T u_T / ||u_T||_2``, none ``eps = rho T^2 g``. ``adaptive`` needs ``norm="l2"``.

m-sharpness (:meth:`SAM.step_msharpness`): the batch is cut, in order, into groups of ``m`` examples (the last
group is smaller when m does not divide the batch size n; m >= n is one group, i.e. ordinary SAM). For each
group G: g_G = grad L_G(theta), eps_G = perturbation(g_G), h_G = grad L_G(theta + eps_G); then
``theta = base(theta, sum_G (|G|/n) h_G)``. 1-SAM is m = 1.

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

from biasaudit.plumbing import InputError, choice, nonnegative_scalar, positive_int

__all__ = ["SAM", "asam_scale", "frozen_batchnorm_stats", "sam_perturbation"]

NORMS = ("l2", "linf")
NORMALIZATIONS = ("joint", "layer", "none")
DIRECTIONS = ("gradient", "random")  # SAM's ascent direction, or RandSAM's random one (a placebo)
ETA_ASAM = 0.01  # Kwon et al. (2021)'s default eta for T = |theta| + eta


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


def asam_scale(params: list, eta_asam: float) -> list:
    """ASAM's elementwise T = |theta| + eta_asam for each tensor (new tensors)."""
    T = torch._foreach_abs(params)
    torch._foreach_add_(T, eta_asam)
    return T


def sam_perturbation(grads: list, rho: float, norm: str = "l2", normalization: str = "joint",
                     joint_norm=None, T: list | None = None) -> list:
    """eps for a list of gradient tensors (the math of the table above, allocation included).

    ``T`` (ASAM, l2 only): the elementwise scales |theta| + eta_asam; the table is applied to u = T g and the
    result multiplied by T. ``joint_norm`` (joint only): ||u||_2 over every tensor that shares the joint norm.
    """
    if norm == "linf":
        eps = torch._foreach_sign(grads)
        torch._foreach_mul_(eps, rho)
        return eps
    u = grads if T is None else torch._foreach_mul(grads, T)
    if normalization == "none":
        eps = torch._foreach_mul(u, rho)
    elif normalization == "layer":
        norms = torch._foreach_norm(u)
        scales = [torch.where(n > 0, rho / n, torch.zeros_like(n)) for n in norms]
        eps = torch._foreach_mul(u, scales)
    else:
        if joint_norm is None:
            joint_norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(u)))
        scale = torch.where(joint_norm > 0, rho / joint_norm, torch.zeros_like(joint_norm))
        eps = torch._foreach_mul(u, scale)
    if T is not None:
        torch._foreach_mul_(eps, T)
    return eps


def _check_group(group) -> None:
    """InputError, naming the option, for a bad SAM option of one param group."""
    nonnegative_scalar("rho", group["rho"])
    choice("norm", group["norm"], NORMS)
    choice("normalization", group["normalization"], NORMALIZATIONS)
    if not isinstance(group["adaptive"], bool):
        raise InputError("adaptive", "must be True or False", group["adaptive"])
    nonnegative_scalar("eta_asam", group["eta_asam"])
    if group["norm"] == "linf" and group["normalization"] == "none":
        raise InputError("normalization", "'none' (unnormalized SAM, eps = rho g) needs norm='l2'", "none")
    if group["norm"] == "linf" and group["adaptive"]:
        raise InputError("adaptive", "ASAM (adaptive=True) needs norm='l2'", True)


class SAM(torch.optim.Optimizer):
    """SAM around ``base_optimizer`` (a torch.optim class, built on the same param groups with ``**kwargs``)."""

    def __init__(self, params, base_optimizer=torch.optim.SGD, *, rho: float = 0.05, norm: str = "l2",
                 normalization: str = "joint", adaptive: bool = False, eta_asam: float = ETA_ASAM, model=None,
                 direction: str = "gradient", seed: int = 0, **kwargs):
        options = {"rho": rho, "norm": norm, "normalization": normalization, "adaptive": adaptive, "eta_asam": eta_asam}
        _check_group(options)
        options["rho"], options["eta_asam"] = float(rho), float(eta_asam)
        if not (isinstance(base_optimizer, type) and issubclass(base_optimizer, torch.optim.Optimizer)):
            raise InputError("base_optimizer", "must be a torch.optim.Optimizer class (e.g. torch.optim.SGD)",
                             base_optimizer)
        super().__init__(params, dict(**options, **kwargs))
        for group in self.param_groups:
            _check_group(group)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self.defaults.update(self.base_optimizer.defaults)
        self.model = model
        self._perturbed: list[list] = []
        self.direction = choice("direction", direction, DIRECTIONS)
        self._noise = torch.Generator().manual_seed(int(seed)) if direction == "random" else None

    def _active(self):
        """(group, params with a gradient, their gradients) for every group with rho > 0; RandSAM: a fresh
        Gaussian draw in place of each gradient."""
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if params and group["rho"] > 0:
                if self._noise is None:
                    yield group, params, [p.grad for p in params]
                else:
                    yield group, params, [torch.randn(p.shape, generator=self._noise, dtype=p.dtype).to(p.device)
                                          for p in params]

    @torch.no_grad()
    def first_step(self, zero_grad: bool = False) -> None:
        """theta <- theta + eps(grad); the unperturbed theta is kept for :meth:`second_step`."""
        active = list(self._active())
        self._perturbed = []
        scales = [asam_scale(params, group["eta_asam"]) if group["adaptive"] else None
                  for group, params, _ in active]  # ASAM's T at the unperturbed theta
        units = [grads if T is None else torch._foreach_mul(grads, T) for (_, _, grads), T in zip(active, scales)]
        joint = [u for (group, _, _), us in zip(active, units)
                 if group["norm"] == "l2" and group["normalization"] == "joint" for u in us]
        joint_norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(joint))) if joint else None
        for (group, params, grads), T in zip(active, scales):
            eps = sam_perturbation(grads, group["rho"], group["norm"], group["normalization"], joint_norm, T)
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
    def _restore(self) -> None:
        """Copy the unperturbed theta saved by :meth:`first_step` back (exact)."""
        for params in self._perturbed:
            torch._foreach_copy_(params, [self.state[p]["sam_theta"] for p in params])
        self._perturbed = []

    @torch.no_grad()
    def second_step(self, zero_grad: bool = False) -> None:
        """Restore theta exactly, then take the base optimizer's step with the perturbed gradient."""
        self._restore()
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

    def step_msharpness(self, loss_fn, *batch, m: int):
        """One m-SAM step (m-sharpness; 1-SAM for ``m = 1``) on ``batch`` (tensors sharing dimension 0).

        ``loss_fn(*chunk)`` must return the *mean* loss over the examples of ``chunk`` (the optimizer calls
        ``zero_grad`` and ``backward`` itself). The batch of n examples is cut in order into groups of ``m``
        (the last one smaller when m does not divide n; m >= n is one group). Per group G: g_G at theta,
        eps_G = perturbation(g_G), h_G = grad L_G(theta + eps_G) with BatchNorm running stats frozen; then
        the base step with sum_G (|G|/n) h_G. Each unperturbed group pass updates BatchNorm running stats
        (as consecutive minibatches would). With rho = 0 in every group this is one full-batch pass and the
        base optimizer's step (bitwise). Returns the batch loss at theta, sum_G (|G|/n) L_G (detached).
        """
        if not callable(loss_fn):
            raise InputError("loss_fn", "must be a callable returning the mean loss over the given examples", loss_fn)
        if isinstance(m, bool):
            raise InputError("m", "must be an integer >= 1 (examples per group)", m)
        m = positive_int("m", m)
        if not batch or not all(isinstance(t, torch.Tensor) and t.dim() >= 1 for t in batch):
            raise InputError("batch", "must be one or more tensors with a batch dimension", batch)
        n = batch[0].shape[0]
        if n == 0 or any(t.shape[0] != n for t in batch):
            raise InputError("batch", "tensors must share a nonzero first (batch) dimension",
                             [tuple(t.shape) for t in batch])
        if all(group["rho"] == 0 for group in self.param_groups):
            self.zero_grad()
            with torch.enable_grad():
                loss = loss_fn(*batch)
                loss.backward()
            self.base_optimizer.step()  # rho = 0: exactly the base optimizer on the whole batch
            return loss.detach()
        total, acc = None, {}
        for start in range(0, n, m):
            chunk = tuple(t[start:start + m] for t in batch)
            weight = chunk[0].shape[0] / n
            self.zero_grad()
            with torch.enable_grad():
                loss = loss_fn(*chunk)
                loss.backward()
            total = loss.detach() * weight if total is None else total + loss.detach() * weight
            self.first_step(zero_grad=True)
            with frozen_batchnorm_stats(self.model), torch.enable_grad():
                loss_fn(*chunk).backward()
            self._restore()
            with torch.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is None:
                            continue
                        if p in acc:
                            acc[p].add_(p.grad, alpha=weight)
                        else:
                            acc[p] = torch.mul(p.grad, weight)
        self.zero_grad()
        for p, g in acc.items():
            p.grad = g
        self.base_optimizer.step()
        return total

    def state_dict(self):
        """The base optimizer's state, with a ``sam_state`` placeholder (SAM keeps nothing between steps)."""
        return self.base_optimizer.state_dict() | {"sam_state": None}

    def load_state_dict(self, state_dict):
        """Load a :meth:`state_dict` into the base optimizer and share its param groups again."""
        state_dict = {k: v for k, v in state_dict.items() if k != "sam_state"}
        self.base_optimizer.load_state_dict(state_dict)
        self.param_groups = self.base_optimizer.param_groups
