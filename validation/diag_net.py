"""The depth-L diagonal linear network in torch (float64), trained by GD / l_inf-SAM / l2-SAM / unnormalized SAM.

This is the torch side of a two-way check: the same discrete algorithms as the numba kernels of
``numerics/sam_discrete.py`` (sam-core), run through :class:`biasaudit.validation.sam.SAM` wrapping ``torch.optim.SGD``
and torch autograd. Agreement to 1e-10 checks both the kernels' hand-written gradients and the torch SAM
optimizer. A plain-numpy implementation (:func:`numpy_sam_trajectory`) is the readable reference.

Model and algorithm (paper 1, "Setting")
----------------------------------------
==============  ======================================================================
symbol          meaning
==============  ======================================================================
L, d            depth, dimension; W = (w^(1), ..., w^(L)) in R^{L x d}
beta            beta = w^(1) * ... * w^(L) (elementwise), f(x) = <beta, x>
(x_i, y_i)      n points, y_i in {-1, +1}; margin z_i = y_i <beta, x_i>
loss            L(W) = (1/n) sum_i log(1 + exp(-z_i))  (``reduction="mean"``; ``"sum"`` drops 1/n)
eta, rho        step size, SAM radius
eps             0 (gd); rho sign(g) (linf); rho g/||g||_2 (l2; norm joint over all L d entries, or per
                layer w^(l) with ``normalization="layer"``); eps = 0 where the gradient is 0;
                rho g (l2 with ``normalization="none"``: unnormalized SAM / USAM; notes/validation-sam.md, "SAM variants")
step            W <- W - eta grad L(W + eps(grad L(W)))
tau             rescaled time, tau_k = sum_{j<k} eta (1/n) sum_i sigma(-z~_{j,i}), z~ the margin at W + eps
                (for one point this is the Euler step h_k = eta sigma(-z~_k) of the rescaled flow)
==============  ======================================================================

Recording: states at steps 0, r, 2r, ... (r = ``record_every``) and always the last step. A state whose W,
beta or loss is not finite, or with |W| > ``W_MAX`` (1e150, as in the numba kernels), stops the run with
``status = "diverged"`` (the trajectory is kept up to the last good record).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from biasaudit.plumbing import InputError, as_finite_vector, choice, nonnegative_scalar, positive_int, positive_scalar

__all__ = ["DiagTrajectory", "torch_sam_trajectory", "numpy_sam_trajectory", "ALGORITHMS", "NORMALIZATIONS"]

ALGORITHMS = ("gd", "linf", "l2")
NORMALIZATIONS = ("joint", "layer", "none")  # "none": unnormalized SAM, eps = rho g (algorithm "l2" only)


@dataclass(frozen=True)
class DiagTrajectory:
    """The recorded states of one run (:func:`torch_sam_trajectory`, :func:`numpy_sam_trajectory`).

    ``steps`` (m,) the iterations recorded; ``W`` (m, L, d) the layers; ``beta`` (m, d) = w^(1) ⊙ … ⊙ w^(L); ``loss``
    (m,); ``tau`` (m,) the rescaled time; ``status`` ``"ok"``, or ``"diverged"`` when a state was not finite or exceeded
    ``W_MAX`` (the records then end at the last good one).
    """

    steps: np.ndarray   # (m,) iteration numbers recorded
    W: np.ndarray       # (m, L, d)
    beta: np.ndarray    # (m, d)
    loss: np.ndarray    # (m,)
    tau: np.ndarray     # (m,)
    status: str         # "ok" | "diverged"


def _validate(W0, X, y, algorithm, rho, eta, steps, normalization, record_every, reduction):
    W0 = np.array(W0, dtype=float)
    if W0.ndim != 2 or W0.size == 0 or not np.all(np.isfinite(W0)):
        raise InputError("W0", "must be a finite L x d array", W0)
    X = np.array(X, dtype=float)
    if X.ndim == 1:
        X = X[None, :]
    if X.ndim != 2 or X.shape[1] != W0.shape[1] or not np.all(np.isfinite(X)):
        raise InputError("X", f"must be a finite n x {W0.shape[1]} array", X)
    y = as_finite_vector("y", y)
    if y.shape[0] != X.shape[0] or not np.all(np.isin(y, (-1.0, 1.0))):
        raise InputError("y", f"must hold {X.shape[0]} labels in {{-1, +1}}", y)
    choice("algorithm", algorithm, ALGORITHMS)
    choice("normalization", normalization, NORMALIZATIONS)
    if normalization == "none" and algorithm == "linf":
        raise InputError("normalization", "'none' (unnormalized SAM, eps = rho g) applies to algorithm 'l2' only",
                         normalization)
    choice("reduction", reduction, ("mean", "sum"))
    return (W0, X, y, nonnegative_scalar("rho", rho), positive_scalar("eta", eta),
            positive_int("steps", steps, minimum=0), positive_int("record_every", record_every))


W_MAX = 1e150  # the same bound as numerics.sam_discrete: beyond it |W|^L overflows float64 for L >= 3


def _diverged(W: np.ndarray, beta: np.ndarray, loss: float) -> bool:
    """A state is diverged when W, beta or the loss is not finite, or |W| exceeds W_MAX."""
    return not (math.isfinite(loss) and np.all(np.isfinite(beta)) and np.all(np.isfinite(W))
                and np.max(np.abs(W)) <= W_MAX)


def _record_at(steps: int, record_every: int) -> np.ndarray:
    at = np.arange(0, steps + 1, record_every)
    return at if at[-1] == steps else np.append(at, steps)


def torch_sam_trajectory(W0, X, y, *, algorithm: str = "l2", rho: float = 0.1, eta: float = 0.01,
                         steps: int = 100, normalization: str = "joint", record_every: int = 1,
                         reduction: str = "mean") -> DiagTrajectory:
    """Train the diagonal network with torch autograd + :class:`biasaudit.validation.sam.SAM` (SGD base), float64."""
    import torch

    from biasaudit.validation.sam import SAM

    W0, X, y, rho, eta, steps, record_every = _validate(W0, X, y, algorithm, rho, eta, steps, normalization,
                                                        record_every, reduction)
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    layers = [torch.nn.Parameter(torch.from_numpy(w.copy())) for w in W0]
    if algorithm == "gd" or rho == 0:
        opt = torch.optim.SGD(layers, lr=eta)
    else:
        opt = SAM(layers, torch.optim.SGD, rho=rho, lr=eta, norm="linf" if algorithm == "linf" else "l2",
                  normalization=normalization)
    scale = 1.0 / X.shape[0] if reduction == "mean" else 1.0
    margins = []  # the margin at which the gradient of the step is taken (z~ for SAM)

    def loss_fn():
        beta = torch.stack(list(layers)).prod(dim=0)
        return beta, yt * (Xt @ beta)

    def closure():
        opt.zero_grad()
        _, z = loss_fn()
        loss = torch.nn.functional.softplus(-z).sum() * scale
        loss.backward()
        margins.append(z.detach())
        return loss

    record = set(_record_at(steps, record_every).tolist())
    rec_steps, rec_W, rec_loss, rec_tau = [], [], [], []
    tau, status = 0.0, "ok"
    for k in range(steps + 1):
        with torch.no_grad():
            beta, z = loss_fn()
            loss = float(torch.nn.functional.softplus(-z).sum() * scale)
            W = torch.stack([p.detach() for p in layers]).numpy().copy()
        if _diverged(W, beta.numpy(), loss):
            status = "diverged"
            break
        if k in record:
            rec_steps.append(k), rec_W.append(W), rec_loss.append(loss), rec_tau.append(tau)
        if k == steps:
            break
        margins.clear()
        opt.step(closure)
        z_tilde = margins[-1]  # the last closure call is the (perturbed) gradient of the update
        tau += eta * scale * float(torch.sigmoid(-z_tilde).sum())
    W_arr = np.array(rec_W).reshape(-1, *W0.shape)
    return DiagTrajectory(np.array(rec_steps, dtype=np.int64), W_arr, W_arr.prod(axis=1), np.array(rec_loss),
                          np.array(rec_tau), status)


# ------------------------------------------------------------------------------------- plain numpy reference
def _prod_others(W: np.ndarray) -> np.ndarray:
    """P[l] = prod_{k != l} W[k] (no division, so exact zeros are fine)."""
    L = W.shape[0]
    return np.array([np.prod(np.delete(W, l, axis=0), axis=0) if L > 1 else np.ones(W.shape[1])
                     for l in range(L)])


def _grad(W, X, y, scale):
    beta = np.prod(W, axis=0)
    z = y * (X @ beta)
    s = 0.5 * (1.0 - np.tanh(0.5 * z))  # sigma(-z) = -l'(z), stable for either sign
    g_beta = -scale * (X.T @ (y * s))
    return g_beta[None, :] * _prod_others(W), z


def numpy_sam_trajectory(W0, X, y, *, algorithm: str = "l2", rho: float = 0.1, eta: float = 0.01,
                         steps: int = 100, normalization: str = "joint", record_every: int = 1,
                         reduction: str = "mean") -> DiagTrajectory:
    """The same algorithm with hand-written gradients in numpy (the readable reference)."""
    W0, X, y, rho, eta, steps, record_every = _validate(W0, X, y, algorithm, rho, eta, steps, normalization,
                                                        record_every, reduction)
    scale = 1.0 / X.shape[0] if reduction == "mean" else 1.0
    W = W0.copy()
    record = set(_record_at(steps, record_every).tolist())
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and classified as diverged
        return _numpy_loop(W, X, y, algorithm, rho, eta, steps, normalization, scale, record, W0.shape)


def _numpy_loop(W, X, y, algorithm, rho, eta, steps, normalization, scale, record, shape):
    rec_steps, rec_W, rec_loss, rec_tau = [], [], [], []
    tau, status = 0.0, "ok"
    for k in range(steps + 1):
        beta = np.prod(W, axis=0)
        z = y * (X @ beta)
        loss = scale * float(np.sum(np.logaddexp(0.0, -z)))
        if _diverged(W, beta, loss):
            status = "diverged"
            break
        if k in record:
            rec_steps.append(k), rec_W.append(W.copy()), rec_loss.append(loss), rec_tau.append(tau)
        if k == steps:
            break
        g, _ = _grad(W, X, y, scale)
        if algorithm == "gd" or rho == 0:
            eps = np.zeros_like(W)
        elif algorithm == "linf":
            eps = rho * np.sign(g)
        elif normalization == "none":
            eps = rho * g
        elif normalization == "joint":
            n = np.linalg.norm(g)
            eps = g * (rho / n) if n > 0 else np.zeros_like(W)
        else:
            n = np.linalg.norm(g, axis=1, keepdims=True)
            eps = g * np.where(n > 0, rho / np.where(n > 0, n, 1.0), 0.0)
        g_sam, z_tilde = _grad(W + eps, X, y, scale)
        tau += eta * scale * float(np.sum(0.5 * (1.0 - np.tanh(0.5 * z_tilde))))
        W = W - eta * g_sam
    W_arr = np.array(rec_W).reshape(-1, *shape)
    return DiagTrajectory(np.array(rec_steps, dtype=np.int64), W_arr, W_arr.prod(axis=1), np.array(rec_loss),
                          np.array(rec_tau), status)
