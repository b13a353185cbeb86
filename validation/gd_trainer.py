"""Full-batch gradient descent from a fixed initialisation, with outcome classes and measures.

A :class:`Problem` holds one network, its fixed initialisation θ₀ (a ``state_dict`` copy, shared by every
run of a sweep), the full training batch, the test set and the loss. :func:`train_gd` runs

    θ_{k+1} = θ_k − η ∇L(θ_k)

until L(θ_k) < eps (``converged``), a non-finite or exploding loss (``diverged``, never an exception), or
``max_steps`` (``oscillating``: bounded, not converged). Sharpness can be recorded every ``sharpness_every``
steps along the path (eigsh warm-started from the previous eigenvector). :func:`measure` gives the final
measures.

Conventions
-----------
==========  ===================================================================================
symbol      meaning
==========  ===================================================================================
η (eta)     step size; ε (eps) the loss threshold at which training stops (reported with every result)
n, C        training points, classes; e_y the one-hot vector of label y
MSE         ``mse_convention="mean"`` (default, torch's ``mse_loss``): L = 1/(nC) Σ_i ‖f(x_i) − e_{y_i}‖²;
            ``"half-sum"``: L = 1/(2n) Σ_i ‖f(x_i) − e_{y_i}‖² (the toy model's ½r²). half-sum = (C/2)·mean,
            so its sharpness is C/2 times larger, η_c C/2 times smaller, and eps means C/2 times less
CE          L = 1/n Σ_i −log softmax(f(x_i))_{y_i}
diverged    L non-finite, or L > DIVERGE_FACTOR · max(L(θ₀), 1)
‖θ‖₁, ‖θ‖₂  over all parameters (weights and biases); nuclear: Σσ of each ``*.weight`` with ≥ 2
            dims (conv kernels reshaped to out × (in·k·k)), one number per layer
==========  ===================================================================================
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from biasaudit.plumbing import InputError, choice, positive_int, positive_scalar
from biasaudit.validation.sharpness import (FlatLoss, adaptive_sharpness, average_sharpness, hutchinson_trace,
                                            top_eigenvalue)

__all__ = ["ARCHS", "LOSSES", "DTYPES", "OUTCOMES", "Problem", "GDRun", "make_problem", "train_gd", "measure",
           "parameter_norms", "check_sweep_inputs", "DIVERGE_FACTOR"]

ARCHS = ("fcn", "cnn", "resnet", "vit", "diag_shared")  # diag_shared: the theory model (validation.eos_toy)
LOSSES = ("mse", "ce", "half_sq")  # half_sq: ½ mean r² of a one-output regression (the theory model's loss)
DTYPES = {"float32": torch.float32, "float64": torch.float64}
OUTCOMES = ("converged", "oscillating", "diverged")
DIVERGE_FACTOR = 1e4  # a loss 10^4 times its initial value never comes back under GD in our sweeps
AVG_SHARPNESS_RHO = 0.5  # radius of the average-sharpness sphere (absolute; stated in every result)


MSE_CONVENTIONS = ("mean", "half-sum")


def mse_loss(outputs, targets):
    """1/(nC) Σ_i ‖f(x_i) − e_{y_i}‖² (torch's mean reduction) with ``targets`` the one-hot matrix."""
    return ((outputs - targets) ** 2).mean()


def mse_half_sum_loss(outputs, targets):
    """1/(2n) Σ_i ‖f(x_i) − e_{y_i}‖² with ``targets`` the one-hot matrix."""
    return 0.5 * ((outputs - targets) ** 2).sum(dim=1).mean()


def ce_loss(outputs, labels):
    """1/n Σ_i −log softmax(f(x_i))_{y_i}."""
    return torch.nn.functional.cross_entropy(outputs, labels)


def half_sq_loss(outputs, targets):
    """1/(2n) Σ_i (f(x_i) − y_i)² of a one-output regression (the theory model's ½ r² for n = 1)."""
    return 0.5 * ((outputs[:, 0] - targets) ** 2).mean()


def check_sweep_inputs(*, arch: str | None = None, loss: str | None = None, etas=None, eps=None,
                       max_steps=None, dtype: str | None = None) -> None:
    """Every bad sweep input raises InputError here, before any training."""
    if arch is not None:
        choice("arch", arch, ARCHS)
    if loss is not None:
        choice("loss", loss, LOSSES)
    if dtype is not None:
        choice("dtype", dtype, tuple(DTYPES))
    if etas is not None:
        values = list(np.atleast_1d(np.asarray(etas, dtype=object)))
        if not values:
            raise InputError("eta", "the sweep must contain at least one step size", list(values))
        for v in values:
            positive_scalar("eta", v)
    if eps is not None:
        positive_scalar("eps", eps)
    if max_steps is not None:
        positive_int("max_steps", max_steps)


def build_model(arch: str, *, num_classes: int, input_shape: tuple, width: int = 32, depth: int = 2,
                activation: str = "tanh", init_scale: float = 1.0, model_kwargs: dict | None = None):
    """fcn/vit from this package; cnn/resnet from :mod:`biasaudit.validation.models` (imported lazily).

    ``width``/``depth``/``activation`` are the FCN's; ``model_kwargs`` go to the ViT/CNN/ResNet builders
    (e.g. ``{"width": 4}`` for a tiny CNN, ``{"dim": 8, "patch": 4}`` for a tiny ViT).
    """
    model_kwargs = dict(model_kwargs or {})
    choice("arch", arch, ARCHS)
    if arch == "diag_shared":
        from biasaudit.validation.eos_toy import SharedDiagonal

        return SharedDiagonal(int(np.prod(input_shape)), init_scale=init_scale)
    if arch == "fcn":
        from biasaudit.validation.fcn import make_fcn

        return make_fcn(int(np.prod(input_shape)), num_classes, width=width, depth=depth, activation=activation,
                        init_scale=init_scale)
    if len(input_shape) != 3:
        raise InputError("arch", f"{arch} needs image inputs (channels, height, width)", input_shape)
    if arch == "vit":
        from biasaudit.validation.vit import make_vit

        return make_vit(num_classes=num_classes, in_channels=input_shape[0], image_size=input_shape[1],
                        init_scale=init_scale, **model_kwargs)
    from biasaudit.validation.models import make_model

    model = make_model(arch, num_classes=num_classes, in_channels=input_shape[0], image_size=input_shape[1],
                       init_scale=init_scale, **model_kwargs)
    _full_batch_norm(model)
    return model


def _full_batch_norm(model) -> None:
    """BatchNorm always normalises with the statistics of the batch it sees (the full batch, under GD).

    Running statistics are dropped, so the loss is a pure function of θ (no buffer mutation inside
    ``torch.func`` transforms, no train/eval switch); the test loss uses the test batch's statistics.
    """
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.track_running_stats = False
            m.running_mean = m.running_var = m.num_batches_tracked = None


@dataclass
class Problem:
    """One network + fixed init + data + loss. ``init_state`` is shared by every run of a sweep."""

    arch: str
    loss: str
    model: torch.nn.Module
    init_state: dict
    X_train: torch.Tensor
    y_train: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    num_classes: int
    dtype: str
    device: str
    description: dict = field(default_factory=dict)
    mse_convention: str = "mean"
    hvp_method: str = "forward-over-reverse"

    def __post_init__(self):
        self.model.load_state_dict(self.init_state)
        self.train_loss = FlatLoss(self.model, self.loss_fn, self.X_train, self.targets(self.y_train),
                                   self.hvp_method)
        self.theta_init = self.train_loss.theta0.clone()

    @property
    def loss_fn(self):
        """The training loss ``(outputs, targets) -> scalar``: cross-entropy for ``loss="ce"``, else MSE in the
        ``mse_convention`` (``"mean"``: :func:`mse_loss`, otherwise :func:`mse_half_sum_loss`)."""
        if self.loss == "ce":
            return ce_loss
        if self.loss == "half_sq":
            return half_sq_loss
        return mse_loss if self.mse_convention == "mean" else mse_half_sum_loss

    def targets(self, labels):
        """What the loss compares the outputs with: one-hot rows in the problem's dtype for MSE, ``labels`` unchanged
        for CE."""
        if self.loss == "mse":
            return torch.nn.functional.one_hot(labels, self.num_classes).to(DTYPES[self.dtype])
        return labels  # CE: class labels; half_sq: the regression targets (already in the problem's dtype)

    def test_loss(self) -> FlatLoss:
        """A :class:`~biasaudit.validation.sharpness.FlatLoss` of the same model and loss on the test set."""
        return FlatLoss(self.model, self.loss_fn, self.X_test, self.targets(self.y_test), self.hvp_method)


def make_problem(arch: str, loss: str, X_train, y_train, X_test, y_test, *, num_classes: int, dtype: str = "float32",
                 device="cpu", seed: int = 0, width: int = 32, depth: int = 2, activation: str = "tanh",
                 init_scale: float = 1.0, mse_convention: str = "mean", hvp_method: str = "forward-over-reverse",
                 model_kwargs: dict | None = None, description: dict | None = None) -> Problem:
    """Validate, move the data to ``device``/``dtype``, build the model from ``seed``
    (:func:`~biasaudit.validation.seeding.seeded_global_rng`: safe beside other threads).
    ``device``: a torch device or ``"auto"`` | ``"cpu"`` | ``"cuda[:N]"`` (:func:`biasaudit.validation.device.pick_device`)."""
    from biasaudit.validation.device import pick_device

    check_sweep_inputs(arch=arch, loss=loss, dtype=dtype)
    if isinstance(device, str):
        device = pick_device(device)
    regression = loss == "half_sq"
    num_classes = positive_int("num_classes", num_classes, minimum=1 if regression else 2)
    choice("mse_convention", mse_convention, MSE_CONVENTIONS)
    tdtype = DTYPES[dtype]
    Xtr = torch.as_tensor(np.asarray(X_train), dtype=tdtype, device=device)
    Xte = torch.as_tensor(np.asarray(X_test), dtype=tdtype, device=device)
    label_dtype = tdtype if regression else torch.long
    ytr = torch.as_tensor(np.asarray(y_train), dtype=label_dtype, device=device)
    yte = torch.as_tensor(np.asarray(y_test), dtype=label_dtype, device=device)
    if Xtr.shape[0] == 0 or Xtr.shape[0] != ytr.shape[0]:
        raise InputError("X_train", "must be non-empty with one label per row", tuple(Xtr.shape))
    if not regression and (ytr.min() < 0 or ytr.max() >= num_classes):
        raise InputError("y_train", f"labels must lie in 0..{num_classes - 1}", (int(ytr.min()), int(ytr.max())))
    from biasaudit.validation.seeding import seeded_global_rng

    with seeded_global_rng(seed):  # one thread at a time: a threaded Dask worker builds several models at once
        model = build_model(arch, num_classes=num_classes, input_shape=tuple(Xtr.shape[1:]), width=width,
                            depth=depth, activation=activation, init_scale=init_scale, model_kwargs=model_kwargs
                            ).to(device=device, dtype=tdtype)
    from biasaudit.validation.models import calibrate_fixed_norms

    calibrate_fixed_norms(model, Xtr)  # a fixed normalisation takes its statistics from the training batch at θ₀
    init_state = copy.deepcopy(model.state_dict())
    desc = {"arch": arch, "loss": loss, "dtype": dtype, "seed": seed, "width": width, "depth": depth,
            "activation": activation, "init_scale": init_scale, "mse_convention": mse_convention,
            "model_kwargs": dict(model_kwargs or {}), "n_train": int(Xtr.shape[0]),
            "n_test": int(Xte.shape[0]), **(description or {})}
    return Problem(arch, loss, model, init_state, Xtr, ytr, Xte, yte, num_classes, dtype, str(device), desc,
                   mse_convention, hvp_method)


def parameter_norms(problem: Problem, theta) -> dict:
    """‖θ‖₁, ‖θ‖₂ and the nuclear norm of every weight matrix (conv kernels as out × rest)."""
    theta = theta.detach()
    out = {"l1": float(theta.abs().sum()), "l2": float(theta.norm())}
    nuclear = {}
    for name, tensor in problem.train_loss.unflatten(theta).items():
        if tensor.ndim >= 2 and name.endswith("weight"):
            mat = tensor.reshape(tensor.shape[0], -1).double()
            nuclear[name] = float(torch.linalg.matrix_norm(mat, ord="nuc"))
    out["nuclear"] = nuclear
    out["nuclear_sum"] = float(sum(nuclear.values()))
    return out


def _error_rate(outputs, labels) -> float:
    """The share of misclassified rows; NaN for a one-output regression (no classes to get wrong)."""
    if outputs.shape[1] == 1:
        return math.nan
    return float((outputs.argmax(dim=1) != labels).double().mean())


def measure(problem: Problem, theta, *, sharpness: bool = True, v0=None, extra: bool = True, lambda_min: bool = False,
            seed: int = 0) -> dict:
    """Final measures: norms, train/test loss and error, S = max|λ| (+ λ_max), trace, avg, adaptive.

    ``lambda_min``: also the algebraically smallest eigenvalue (eigsh "SA"). Off by default: the bottom of a
    network's Hessian spectrum is dense, so it takes 5-10 times as long as S (on the quick tier's ResNet 5.3 s
    against 0.8 s, most of a run's final measures) and no experiment reads it.
    """
    f = problem.train_loss
    with torch.no_grad():
        out_tr = f.outputs(theta)
        out_te = f.outputs(theta, problem.X_test)
        res = {
            "train_loss": float(problem.loss_fn(out_tr, problem.targets(problem.y_train))),
            "train_error": _error_rate(out_tr, problem.y_train),
            "test_loss": float(problem.loss_fn(out_te, problem.targets(problem.y_test))),
            "test_error": _error_rate(out_te, problem.y_test),
            "n_test": int(problem.y_test.shape[0]),
        }
    res.update(parameter_norms(problem, theta))
    finite = bool(torch.isfinite(theta).all()) and math.isfinite(res["train_loss"])
    if not (sharpness and finite):
        return res
    lm = top_eigenvalue(f, theta, "LM", v0=v0, seed=seed)
    res["S"] = lm.as_dict()
    res["S_vector"] = lm.vector
    if extra:
        la = lm if (lm.converged and lm.value > 0) else top_eigenvalue(f, theta, "LA", seed=seed)
        res["lambda_max"] = la.as_dict()
        tr, tr_se = hutchinson_trace(f, theta, 16, seed=seed)
        res["trace"] = {"value": tr, "se": tr_se, "n_samples": 16}
        avg, avg_se = average_sharpness(f, theta, AVG_SHARPNESS_RHO, 16, seed=seed)
        res["avg_sharpness"] = {"value": avg, "se": avg_se, "rho": AVG_SHARPNESS_RHO, "n_samples": 16}
        res["adaptive_sharpness"] = adaptive_sharpness(f, theta, seed=seed).as_dict()
    if lambda_min:
        res["lambda_min"] = top_eigenvalue(f, theta, "SA", seed=seed).as_dict()
    return res


@dataclass
class GDRun:
    """One full-batch GD run: outcome class, per-step loss and norms, sharpness path, final measures."""

    eta: float
    eps: float
    outcome: str
    steps: int
    loss: np.ndarray  # L(θ_k), k = 0..steps
    l1: np.ndarray  # ‖θ_k‖₁
    l2: np.ndarray  # ‖θ_k‖₂
    sharpness_path: list  # [{"step", "S", "converged", "residual", "loss", "l1"}]
    final: dict
    seconds: float
    theta: torch.Tensor | None = None

    def to_json(self) -> dict:
        """The run as JSON (arrays as lists); θ and the final sharpness eigenvector (``S_vector``) are left out."""
        final = {k: v for k, v in self.final.items() if k != "S_vector"}
        return {"eta": self.eta, "eps": self.eps, "outcome": self.outcome, "steps": self.steps,
                "loss": self.loss.tolist(), "l1": self.l1.tolist(), "l2": self.l2.tolist(),
                "sharpness_path": self.sharpness_path, "final": final, "seconds": self.seconds}

    @classmethod
    def from_json(cls, data: dict) -> "GDRun":
        """The run stored by :meth:`to_json` (without θ)."""
        return cls(data["eta"], data["eps"], data["outcome"], data["steps"], np.asarray(data["loss"], float),
                   np.asarray(data["l1"], float), np.asarray(data["l2"], float), data["sharpness_path"],
                   data["final"], data["seconds"])


def train_gd(problem: Problem, eta: float, *, eps: float = 1e-2, max_steps: int = 20_000, sharpness_every: int = 0,
             sharpness_burst: int = 1, final_measures: bool = True, extra_measures: bool = True,
             keep_theta: bool = False, seed: int = 0) -> GDRun:
    """Full-batch GD from ``problem``'s fixed init until L < eps, divergence, or ``max_steps`` (module doc).

    ``sharpness_every`` = m > 0 measures S at steps k with k mod m < ``sharpness_burst`` (b consecutive steps from
    every m-th; b >= m: every step): a burst shows whether S_t alternates from one step to the next, which one
    measurement per m steps cannot)."""
    eta = positive_scalar("eta", eta)
    eps = positive_scalar("eps", eps)
    max_steps = positive_int("max_steps", max_steps)
    sharpness_every = int(sharpness_every)
    if sharpness_every < 0:
        raise InputError("sharpness_every", "must be >= 0 (0: off)", sharpness_every)
    sharpness_burst = positive_int("sharpness_burst", sharpness_burst)
    t0 = time.perf_counter()
    f = problem.train_loss
    theta = problem.theta_init.clone()
    losses = np.full(max_steps + 1, np.nan)
    l1 = np.full(max_steps + 1, np.nan)
    l2 = np.full(max_steps + 1, np.nan)
    path: list[dict] = []
    v0 = None
    limit = None
    outcome, k = "oscillating", max_steps
    for k in range(max_steps + 1):
        value, g = f.value_and_grad(theta)
        lv = float(value)
        losses[k], l1[k], l2[k] = lv, float(theta.abs().sum()), float(theta.norm())
        if limit is None:
            limit = DIVERGE_FACTOR * max(lv, 1.0) if math.isfinite(lv) else 0.0
        if not math.isfinite(lv) or lv > limit or not bool(torch.isfinite(g).all()):
            outcome = "diverged"
            break
        if lv < eps:
            outcome = "converged"
            break
        if sharpness_every and k % sharpness_every < sharpness_burst:
            est = top_eigenvalue(f, theta, "LM", v0=v0, seed=seed)
            v0 = est.vector
            path.append({"step": k, "S": est.value, "converged": est.converged, "residual": est.residual,
                         "loss": lv, "l1": l1[k]})
        if k == max_steps:
            break
        theta = theta - eta * g
    n = k + 1
    final = {}
    if final_measures:
        final = measure(problem, theta, sharpness=outcome != "diverged", v0=v0, extra=extra_measures, seed=seed)
    return GDRun(eta, eps, outcome, k, losses[:n], l1[:n], l2[:n], path, final, time.perf_counter() - t0,
                 theta if keep_theta else None)
