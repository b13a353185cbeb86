"""One training run of the SAM network experiments: its configuration, the training loop and the
evaluations along the way.

A *run* is one optimizer (GD or SAM), one init scale alpha, one seed. See
:mod:`biasaudit.validation.sam_experiments` for the protocol, :mod:`biasaudit.validation.sam_stats` for the
statistics, :mod:`biasaudit.validation.sam_runs` for the run cache and :mod:`biasaudit.validation.sam_regimes`
for the alpha grids. The cache key of a run (:meth:`TrainConfig.key`) hashes its configuration and the source
of the modules in :data:`RUN_CODE` (the code a run executes), so an edit of the statistics, the run cache or
the figures never retrains a run, and an edit of the training code always does.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from biasaudit.plumbing import InputError, choice, nonnegative_scalar, positive_int, positive_scalar

__all__ = ["RUN_CODE", "OPTIMIZERS", "PLACEBO", "SCHEDULES", "COLLAPSE_BAND", "TrainConfig", "validate_config", "train_run",
           "trained_threshold", "run_outcome"]
CALIBRATION_EXAMPLES = 2048  # training images whose statistics a fixed normalisation takes (one forward pass)

# The code a training run executes: its cache key hashes these sources (biasaudit.plumbing.runcache).
RUN_CODE = ("biasaudit.validation.sam_training", "biasaudit.validation.models", "biasaudit.validation.sam",
            "biasaudit.validation.data", "biasaudit.validation.device", "biasaudit.validation.gradcam",
            "biasaudit.validation.seeding")
OPTIMIZERS = ("gd", "sam")  # the paired comparison of every design
PLACEBO = "randsam"  # a random perturbation of norm rho in SAM's place (validation.sam): the placebo arm
SCHEDULES = ("every", "dense")  # evaluations every eval_every steps; or every 2 steps to step 40, then every eval_every
DENSE_UNTIL, DENSE_EVERY = 40, 2
# Collapse is a signature, not a deadline: a run that did not reach its loss target is "collapsed" when its loss
# stayed within COLLAPSE_BAND (relative) of its initial value over the second half of the run and its output
# scale (mean |logit|) did not grow over that half by more than COLLAPSE_BAND (it shrank, or sits at the collapsed
# state: on the diagonal network beta falls to 0 on the patch pixels within ~100 steps, and the scale then stays
# constant to 3 digits, so "strictly smaller" would be a coin toss); otherwise it is "slow" (still moving).
COLLAPSE_BAND = 0.01


@dataclass(frozen=True)
class TrainConfig:
    """One training run; every field but ``device`` and ``data_dir`` is part of its cache key.

    ``dataset``, ``model`` (of ``width`` channels), ``optimizer`` (``gd`` or ``sam`` with radius ``rho``, ``norm`` and
    ``normalization``), step size ``lr``, ``steps``, ``batch_size`` (None: full batch), init scale α (``init_scale``),
    ``seed``. Evaluated every ``eval_every`` steps on ``n_eval`` training images, and Grad-CAM on ``n_probe`` test
    images, where a pixel below ``low_threshold`` of its image's maximum is low-intensity. ``n_train``/``n_test`` (None:
    all), ``downsample`` (average-pool factor), ``data_seed`` (which subset), ``keep_maps`` (probe maps stored for the
    overlay figure).
    """

    dataset: str = "mnist5k"
    model: str = "cnn"
    optimizer: str = "gd"
    rho: float = 0.05
    norm: str = "l2"
    normalization: str = "joint"
    lr: float = 0.1
    steps: int = 200
    batch_size: int | None = None  # None: full batch
    init_scale: float = 1.0
    seed: int = 0
    eval_every: int = 20
    width: int = 8
    n_train: int | None = 1000
    n_test: int | None = 500
    n_eval: int = 1000
    n_probe: int = 64
    low_threshold: float = 0.3
    downsample: int = 1  # average-pool factor applied to the images (2: MNIST at 14 x 14)
    data_seed: int = 0
    data_dir: str | None = None
    device: str = "cpu"
    keep_maps: int = 4  # probe images whose Grad-CAM map each evaluation stores (the overlay figure); 0: none
    loss_target: float | None = None  # stop at the first evaluation with training loss <= target (None: run all steps)
    schedule: str = "every"  # when to evaluate (SCHEDULES)
    probe: bool = True  # Grad-CAM and low-intensity masses at each evaluation (off: the patch metrics only)

    def key(self) -> str:
        """Content address (biasaudit.plumbing.runcache) of the run: config, code, library versions and, for
        file-based data sets, the sha256 of the files (:func:`~biasaudit.validation.data.dataset_fingerprint`).
        The device and the data folder are left out: where a run trained and where the data lay do not change
        what it is (a run trained on a GPU worker answers a CPU claim)."""
        from biasaudit.plumbing.runcache import run_key
        from biasaudit.validation.data import dataset_fingerprint

        fields = {k: v for k, v in asdict(self).items() if k not in ("device", "data_dir")}
        fingerprint = dataset_fingerprint(self.dataset, self.data_dir)
        if fingerprint is not None:  # file-based data: what the files hold, not where they lie
            fields["data_sha256"] = fingerprint
        return run_key(fields, RUN_CODE)


def validate_config(cfg: TrainConfig) -> None:
    """Every input check that can be done before training (raises InputError naming the parameter)."""
    from biasaudit.validation.data import DATASETS
    from biasaudit.validation.device import pick_device
    from biasaudit.validation.models import MODELS

    choice("dataset", cfg.dataset, DATASETS)
    choice("model", cfg.model, MODELS)
    choice("optimizer", cfg.optimizer, (*OPTIMIZERS, PLACEBO))
    choice("schedule", cfg.schedule, SCHEDULES)
    if cfg.loss_target is not None:
        positive_scalar("loss_target", cfg.loss_target)
    choice("norm", cfg.norm, ("l2", "linf"))
    choice("normalization", cfg.normalization, ("joint", "layer"))
    nonnegative_scalar("rho", cfg.rho)
    positive_scalar("lr", cfg.lr)
    positive_scalar("init_scale", cfg.init_scale)
    positive_int("steps", cfg.steps)
    positive_int("eval_every", cfg.eval_every)
    positive_int("n_probe", cfg.n_probe)
    positive_int("downsample", cfg.downsample)
    if isinstance(cfg.keep_maps, bool) or not isinstance(cfg.keep_maps, int) or not 0 <= cfg.keep_maps <= cfg.n_probe:
        raise InputError("keep_maps", f"must be an integer in [0, n_probe = {cfg.n_probe}]", cfg.keep_maps)
    if cfg.batch_size is not None:
        positive_int("batch_size", cfg.batch_size)
    if not 0 < cfg.low_threshold < 1:
        raise InputError("low_threshold", "must lie in (0, 1) (a fraction of each image's maximum)", cfg.low_threshold)
    pick_device(cfg.device)


# ------------------------------------------------------------------------------------------------ training
_DATA_MEMO: dict[tuple, Any] = {}


def _dataset(cfg: TrainConfig):
    from biasaudit.validation.data import load_dataset

    key = (cfg.dataset, cfg.data_dir, cfg.n_train, cfg.n_test, cfg.data_seed, cfg.downsample)
    if key not in _DATA_MEMO:
        _DATA_MEMO.clear()
        ds = load_dataset(cfg.dataset, data_dir=cfg.data_dir, n_train=cfg.n_train, n_test=cfg.n_test,
                          seed=cfg.data_seed)
        if cfg.downsample > 1:
            ds = _downsample(ds, cfg.downsample)
        _DATA_MEMO[key] = ds
    return _DATA_MEMO[key]


def _downsample(ds, k: int):
    import torch.nn.functional as F

    from biasaudit.validation.data import Dataset

    info = dict(ds.info)
    if "masks" in info:  # a pooled pixel belongs to a patch if any of its source pixels does
        import torch

        info["masks"] = {name: F.max_pool2d(torch.as_tensor(m, dtype=torch.float32)[None, None], k)[0, 0].numpy() > 0
                         for name, m in info["masks"].items()}
    return Dataset(ds.name, F.avg_pool2d(ds.X_train, k), ds.y_train, F.avg_pool2d(ds.X_test, k), ds.y_test,
                   ds.num_classes, info)


def _low_intensity_mask(x, threshold: float):
    gray = x.mean(dim=1)
    peak = gray.amax(dim=(-2, -1), keepdim=True)
    return gray < threshold * peak


_ACCURACY_CHUNK = 1024  # images per forward pass of an evaluation


def _accuracy(model, X, y, chunk: int = _ACCURACY_CHUNK) -> tuple[float, float]:
    import torch
    import torch.nn.functional as F

    correct, loss = 0.0, 0.0
    with torch.no_grad():
        for i in range(0, X.shape[0], chunk):
            logits = model(X[i:i + chunk]).float()
            correct += float((logits.argmax(1) == y[i:i + chunk]).sum())
            loss += float(F.cross_entropy(logits, y[i:i + chunk], reduction="sum"))
    return correct / X.shape[0], loss / X.shape[0]


def _nanmean(t) -> float:
    import torch

    finite = t[torch.isfinite(t)]
    return float(finite.mean()) if finite.numel() else math.nan


def _mean_margin(model, X, y) -> float:
    """Mean over images of logit_y - max_{k != y} logit_k."""
    import torch

    with torch.no_grad():
        return _margin_of_logits(model(X).float(), y)


def _margins(logits, y):
    """Per example: logit_y − max_{k≠y} logit_k."""
    true = logits.gather(1, y[:, None])[:, 0]
    other = logits.scatter(1, y[:, None], -math.inf).amax(dim=1)
    return true - other


def _margin_of_logits(logits, y) -> float:
    return float(_margins(logits, y).mean())


def _ablated(model, X, y) -> tuple[float, float]:
    """(accuracy, mean margin) on ``X`` from one forward pass: the same numbers, bit for bit on the CPU
    (tested), as :func:`_accuracy` and :func:`_mean_margin` when ``X`` fits one chunk (the quick patch design's
    256 images do; the full tier's 2048 take the two separate passes)."""
    import torch

    if X.shape[0] > _ACCURACY_CHUNK:
        return _accuracy(model, X, y)[0], _mean_margin(model, X, y)
    with torch.no_grad():
        logits = model(X).float()
        return float((logits.argmax(1) == y).sum()) / X.shape[0], _margin_of_logits(logits, y)


def _patch_ablations(model, ev: dict) -> dict:
    """Accuracy with one patch ablated (``acc_no_major``, ``acc_no_minor``, ``minor_reliance``) and the
    patch-ablation margins: M_P = margin(only patch P kept) - margin(both patches ablated), and the minor
    share M_minor / (|M_minor| + |M_major|) (in [-1, 1]; NaN while both are 0, e.g. the diagonal net at init).
    For a linear model M_P is exactly patch P's contribution to the margin."""
    X, y = ev["X"], ev["y"]
    acc_no_major, margin_no_major = _ablated(model, X * (~ev["major"]), y)
    acc_no_minor, margin_no_minor = _ablated(model, X * (~ev["minor"]), y)
    none = _mean_margin(model, X * (~(ev["major"] | ev["minor"])), y)
    m_minor, m_major = margin_no_major - none, margin_no_minor - none
    both = abs(m_minor) + abs(m_major)
    return {"acc_no_major": acc_no_major, "acc_no_minor": acc_no_minor, "minor_reliance": acc_no_major - acc_no_minor,
            "margin_minor": m_minor, "margin_major": m_major,
            "minor_margin_share": m_minor / both if both > 0 else math.nan}


def _logit_scale(model, X) -> float:
    """Mean |logit| over ``X``: the output scale whose shrinking marks a collapse."""
    import torch

    with torch.no_grad():
        return float(model(X[:_ACCURACY_CHUNK]).float().abs().mean())


def _input_gradient_share(model, ev: dict) -> float:
    """|∂ margin / ∂x| mass on the minor patch over its mass on both patches, summed over the evaluation images
    (in [0, 1]; NaN while both are 0). The margin is logit_y − max_{k≠y} logit_k, as in the ablations."""
    import torch

    X = ev["X"][:_ACCURACY_CHUNK].detach().clone().requires_grad_(True)
    y = ev["y"][:_ACCURACY_CHUNK]
    with torch.enable_grad():
        (grad,) = torch.autograd.grad(_margins(model(X).float(), y).sum(), X)
    mass = grad.abs().sum(dim=1)  # over channels: (n, H, W)
    minor, major = float(mass[:, ev["minor"]].sum()), float(mass[:, ev["major"]].sum())
    return minor / (minor + major) if minor + major > 0 else math.nan


def _evaluation_steps(cfg: TrainConfig) -> set[int]:
    """The steps at which a run is evaluated (the last step always is)."""
    every = set(range(0, cfg.steps + 1, cfg.eval_every)) | {cfg.steps}
    if cfg.schedule == "dense":
        every |= set(range(0, min(DENSE_UNTIL, cfg.steps) + 1, DENSE_EVERY))
    return every


def run_outcome(curves: dict, reached_target: bool) -> str:
    """``"ok"`` (reached its loss target), ``"collapsed"`` (the signature: loss within :data:`COLLAPSE_BAND` of its
    initial value over the second half of the run, and an output scale at the end at most (1 + :data:`COLLAPSE_BAND`)
    times its value at the half: not growing) or ``"slow"`` (neither: still moving at the horizon)."""
    if reached_target:
        return "ok"
    steps, loss, scale = curves["step"], curves["loss"], curves.get("logit_scale", [])
    if not steps:
        return "slow"
    half = steps[-1] / 2
    second = [i for i, t in enumerate(steps) if t >= half]
    flat = all(abs(loss[i] - loss[0]) <= COLLAPSE_BAND * loss[0] for i in second)
    not_growing = bool(scale) and scale[-1] <= (1 + COLLAPSE_BAND) * scale[second[0]]
    return "collapsed" if flat and not_growing else "slow"


def _evaluate(model, ev: dict, n_keep_maps: int) -> dict:
    from biasaudit.validation.gradcam import cam_and_input_gradient, mass_share

    was_training = model.training
    model.eval()
    try:
        acc, loss = _accuracy(model, ev["X"], ev["y"])
        out = {"acc": acc, "loss": loss}
        out["logit_scale"] = _logit_scale(model, ev["X"])
        has_cam = ev["probe_on"] and getattr(model, "cam_layer", None) is not None
        if has_cam:
            cam, inp = cam_and_input_gradient(model, ev["probe"], target=ev["probe_y"])
            cam_low = mass_share(cam, ev["low"])
            out.update({"cam_low": _nanmean(cam_low), "grad_low": _nanmean(mass_share(inp, ev["low"])),
                        "cam_low_images": [float(v) for v in cam_low.cpu()],
                        "cam_maps": cam[:n_keep_maps].cpu().numpy().round(5).tolist()})
        else:
            out.update({"cam_low_images": [], "cam_maps": []})
        if "major" in ev:
            out.update(_patch_ablations(model, ev))
            out["grad_minor_share"] = _input_gradient_share(model, ev)
            if has_cam:
                cam_major, cam_minor = _nanmean(mass_share(cam, ev["major"])), _nanmean(mass_share(cam, ev["minor"]))
                out["cam_major"], out["cam_minor"] = cam_major, cam_minor
                both = cam_major + cam_minor
                out["cam_minor_share"] = cam_minor / both if both > 0 else math.nan
    finally:
        model.train(was_training)
    return out


def trained_threshold(num_classes: int) -> float:
    """Training accuracy below which a run counts as 'not trained' (a quarter of the way above chance)."""
    chance = 1.0 / num_classes
    return chance + 0.25 * (1.0 - chance)


def train_run(cfg: TrainConfig) -> dict:
    """Train one run and return its JSON-ready record (config, status, curves, and the first
    ``cfg.keep_maps`` probe images with their Grad-CAM map at every evaluation)."""
    from biasaudit.validation.device import torch_settings

    validate_config(cfg)
    with torch_settings():
        return _train_run(cfg, cfg.keep_maps)


def _train_run(cfg: TrainConfig, n_keep_maps: int) -> dict:
    import torch
    import torch.nn.functional as F

    from biasaudit.validation.device import autocast, pick_device
    from biasaudit.validation.models import calibrate_fixed_norms, make_model
    from biasaudit.validation.sam import SAM

    device = pick_device(cfg.device)
    ds = _dataset(cfg)
    X, y = ds.X_train.to(device), ds.y_train.to(device)
    n = X.shape[0]
    ev = {"X": X[:cfg.n_eval], "y": y[:cfg.n_eval],
          "probe": ds.X_test[:cfg.n_probe].to(device), "probe_y": ds.y_test[:cfg.n_probe].to(device)}
    ev["low"] = _low_intensity_mask(ev["probe"], cfg.low_threshold)
    ev["probe_on"] = cfg.probe
    if "masks" in ds.info:
        ev["major"] = torch.as_tensor(ds.info["masks"]["major"], device=device)
        ev["minor"] = torch.as_tensor(ds.info["masks"]["minor"], device=device)
    model = make_model(cfg.model, num_classes=ds.num_classes, in_channels=ds.in_channels,
                       image_size=ds.image_size, init_scale=cfg.init_scale, seed=cfg.seed,
                       width=cfg.width).to(device)
    calibrate_fixed_norms(model, X[:CALIBRATION_EXAMPLES])  # a fixed normalisation's statistics at θ0
    if cfg.optimizer in ("sam", PLACEBO):
        opt = SAM(model.parameters(), torch.optim.SGD, rho=cfg.rho, norm=cfg.norm, normalization=cfg.normalization,
                  lr=cfg.lr, model=model, direction="random" if cfg.optimizer == PLACEBO else "gradient",
                  seed=cfg.seed)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    gen = torch.Generator().manual_seed(cfg.seed)
    batch = n if cfg.batch_size is None else min(cfg.batch_size, n)
    order, cursor = torch.randperm(n, generator=gen), 0
    bad = torch.zeros((), dtype=torch.bool, device=device)
    curves: dict[str, list] = {"step": []}
    maps, images, status = [], [], "ok"
    evaluate_at, reached = _evaluation_steps(cfg), False
    model.train()
    for step in range(cfg.steps + 1):
        if step in evaluate_at:
            if bool(bad):  # the only host sync: once per evaluation
                status = "diverged"
                break
            metrics = _evaluate(model, ev, n_keep_maps)
            if not math.isfinite(metrics["loss"]):
                status = "diverged"
                break
            maps.append(metrics.pop("cam_maps"))  # [] per evaluation when keep_maps = 0
            images = metrics.pop("cam_low_images")
            curves["step"].append(step)
            for k, v in metrics.items():
                curves.setdefault(k, []).append(v)
            if cfg.loss_target is not None and metrics["loss"] <= cfg.loss_target:
                reached = True
                break
        if step == cfg.steps:
            break
        if batch == n:
            xb, yb = X, y
        else:
            if cursor + batch > n:
                order, cursor = torch.randperm(n, generator=gen), 0
            idx = order[cursor:cursor + batch].to(device)
            cursor += batch
            xb, yb = X[idx], y[idx]

        def closure(xb=xb, yb=yb):
            opt.zero_grad(set_to_none=True)
            with autocast(device):
                loss = F.cross_entropy(model(xb).float(), yb)
            loss.backward()
            return loss

        loss = opt.step(closure)
        bad |= ~torch.isfinite(loss.detach())
    final_acc = curves["acc"][-1] if curves.get("acc") else math.nan
    if status == "ok" and cfg.loss_target is not None:
        status = run_outcome(curves, reached)
    elif status == "ok" and not final_acc >= trained_threshold(ds.num_classes):
        status = "not trained"
    return {"config": asdict(cfg), "key": cfg.key(), "status": status, "num_classes": ds.num_classes,
            "curves": curves, "final_cam_low_images": images if curves["step"] else [],
            "maps": maps, "map_images": ev["probe"][:n_keep_maps, 0].cpu().numpy().round(4).tolist()}
