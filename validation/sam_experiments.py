"""Does SAM attend to minor (low-intensity) features more than GD on trained networks? The metrics.

Paper 1's empirical claim: on CNNs, SAM in the intermediate regime puts more Grad-CAM attention on
background / low-intensity pixels ("minor features") than GD, which attends to the high-contrast object; on
a controlled task with a bright "major" and a faint "minor" patch (both predictive), SAM uses the minor patch
first. This module trains paired GD / SAM runs and measures that, with the traps of the spec built in.

Protocol (one *run* = one optimizer, one init scale alpha, one seed)
---------------------------------------------------------------------
* GD and SAM runs of the same seed share the initialisation, the minibatch order and the probe images, so
  they are *paired*. The data split is fixed (``data_seed``) across seeds.
* SAM is l2-SAM (joint norm) around SGD with the same learning rate; GD is SGD. Every ``eval_every`` steps:
  training accuracy and loss (eval mode, on up to ``n_eval`` training images), and on ``n_probe`` fixed test
  images the Grad-CAM and |input-gradient| mass share on low-intensity pixels (gray value below
  ``low_threshold`` x the image's maximum; for MNIST that is the black background). Target class = the
  true label. For the patch task also the patch-ablation accuracies (the major or minor patch positions set
  to 0) and the Grad-CAM mass on each patch.
* Outcomes: ``diverged`` (a non-finite loss; detected at the next evaluation, so the inner loop never syncs
  with the device), ``not trained`` (final training accuracy below ``1/K + 0.25 (1 - 1/K)``: these runs
  say nothing about feature bias, spec "Traps"), else ``ok``. Only seeds whose GD *and* SAM runs are ``ok``
  enter the statistics; the others are listed with their reason.

Statistics (seed-level, paired; the spec's "seeds dominate the noise" trap)
---------------------------------------------------------------------------
For each usable seed s: ``raw_s = m_SAM(T) - m_GD(T)`` at the same final step T, and
``matched_s = m_SAM(T) - m_GD(a_SAM(T))``: GD's metric interpolated (linearly, between the two evaluations
that bracket the first time GD's accuracy reaches that value) at SAM's final training accuracy (spec: "slow
training fakes the effect"). If GD never reached SAM's final accuracy, the roles swap: SAM's curve is
interpolated at GD's final accuracy. For the patch task ``matched`` averages the same comparison at fixed accuracy
levels (both runs interpolated at the first crossing of each level) to see which patch is learnt *first*.
The 95 % interval of the mean over seeds is the hull of a percentile bootstrap over seeds (10 000 resamples)
and a Student-t interval (the bootstrap alone under-covers at 5 seeds). An image-level bootstrap (images
and seeds pooled) is reported too, for comparison only: it looks far more certain than it is.

Verdict rule (used by the claims): with predicted sign s (+1: SAM more minor-focused), the effect interval
[lo, hi] gives ``confirmed`` if s*[lo, hi] > 0, ``refuted`` if s*[lo, hi] < 0, else ``undecided``; fewer
than 3 usable seeds is ``undecided``.

Sizes (:data:`TIERS`)
---------------------
``quick`` (the audit; ~1 CPU-minute in all on an idle box, 4 min wall on the loaded shared one): MNIST-5k
pooled to 14x14, 1000 train images, CNN width 8, 150 SGD steps of batch 128, lr 0.1, rho 0.05, alpha = 1,
5 seeds; patch task 256 images 16x16, 45 full-batch steps, lr 0.05. ``full``: MNIST-5k at 28x28 (4000
train), width 16, 1500 steps, alpha in {1, 0.5, 2}, 10 seeds; patch task 2048 images, 400 steps, lr 0.02.

The multi-point diagonal network (:func:`multipoint_jdagger`) maps the dominant index over (iteration,
alpha) for l2-SAM and GD with sam-core's numba kernel; it is a figure, not a torch experiment.

Results are JSON, written atomically (temp file + rename) into a cache directory
(``$BIASAUDIT_CACHE_DIR/validation-sam`` or ``~/.cache/biasaudit/validation-sam``), one file per run keyed
by its configuration, so an interrupted experiment resumes and the figures reuse the claims' runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from biasaudit.plumbing import atomic_write_text
from biasaudit.plumbing import InputError, choice, nonnegative_scalar, positive_int, positive_scalar

__all__ = [
    "RUN_CODE",
    "grid_configs",
    "cached_run_unit",
    "TrainConfig",
    "TIERS",
    "validate_config",
    "train_run",
    "cached_run",
    "metric_at_accuracy",
    "bootstrap_mean_ci",
    "t_mean_ci",
    "paired_effect",
    "patch_lead",
    "verdict_from_interval",
    "minor_mass_experiment",
    "synthetic_patch_experiment",
    "summary_line",
    "plot_curves",
    "plot_overlays",
    "multipoint_data",
    "multipoint_jdagger",
    "plot_multipoint_heatmap",
    "make_figures",
]

# The code a training run executes: its cache key hashes these sources (biasaudit.plumbing.runcache), so an
# edit to any of them recomputes the run; no hand-bumped version.
RUN_CODE = ("biasaudit.validation", "biasaudit.numerics", "biasaudit.claims.validation_sam")
OPTIMIZERS = ("gd", "sam")
CI_LEVEL = 0.95
N_BOOT = 10_000
MIN_SEEDS = 3


@dataclass(frozen=True)
class TrainConfig:
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

    def key(self) -> str:
        """Content address (biasaudit.plumbing.runcache) of the run: config, code, library versions. The
        device and the data folder are left out: where a run trained and where the data lay do not change
        what it is (a run trained on a GPU worker answers a CPU claim)."""
        from biasaudit.plumbing.runcache import run_key

        return run_key({k: v for k, v in asdict(self).items() if k not in ("device", "data_dir")}, RUN_CODE)


def validate_config(cfg: TrainConfig) -> None:
    """Every input check that can be done before training (raises InputError naming the parameter)."""
    from biasaudit.validation.data import DATASETS
    from biasaudit.validation.device import pick_device
    from biasaudit.validation.models import MODELS

    choice("dataset", cfg.dataset, DATASETS)
    choice("model", cfg.model, MODELS)
    choice("optimizer", cfg.optimizer, OPTIMIZERS)
    choice("norm", cfg.norm, ("l2", "linf"))
    choice("normalization", cfg.normalization, ("joint", "layer"))
    nonnegative_scalar("rho", cfg.rho)
    positive_scalar("lr", cfg.lr)
    positive_scalar("init_scale", cfg.init_scale)
    positive_int("steps", cfg.steps)
    positive_int("eval_every", cfg.eval_every)
    positive_int("n_probe", cfg.n_probe)
    positive_int("downsample", cfg.downsample)
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


def _accuracy(model, X, y, chunk: int = 1024) -> tuple[float, float]:
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


def _evaluate(model, ev: dict, n_keep_maps: int) -> dict:
    from biasaudit.validation.gradcam import grad_cam, input_gradient_saliency, mass_share

    was_training = model.training
    model.eval()
    try:
        acc, loss = _accuracy(model, ev["X"], ev["y"])
        cam = grad_cam(model, ev["probe"], target=ev["probe_y"])
        inp = input_gradient_saliency(model, ev["probe"], target=ev["probe_y"])
        cam_low = mass_share(cam, ev["low"])
        out = {"acc": acc, "loss": loss, "cam_low": _nanmean(cam_low),
               "grad_low": _nanmean(mass_share(inp, ev["low"])),
               "cam_low_images": [float(v) for v in cam_low.cpu()],
               "cam_maps": cam[:n_keep_maps].cpu().numpy().round(5).tolist()}
        if "major" in ev:
            X = ev["X"]
            out["acc_no_major"] = _accuracy(model, X * (~ev["major"]), ev["y"])[0]
            out["acc_no_minor"] = _accuracy(model, X * (~ev["minor"]), ev["y"])[0]
            cam_major, cam_minor = _nanmean(mass_share(cam, ev["major"])), _nanmean(mass_share(cam, ev["minor"]))
            out["cam_major"], out["cam_minor"] = cam_major, cam_minor
            both = cam_major + cam_minor
            out["cam_minor_share"] = cam_minor / both if both > 0 else math.nan
            out["minor_reliance"] = out["acc_no_major"] - out["acc_no_minor"]
    finally:
        model.train(was_training)
    return out


def trained_threshold(num_classes: int) -> float:
    """Training accuracy below which a run counts as 'not trained' (a quarter of the way above chance)."""
    chance = 1.0 / num_classes
    return chance + 0.25 * (1.0 - chance)


def train_run(cfg: TrainConfig, *, n_keep_maps: int = 4) -> dict:
    """Train one run and return its JSON-ready record (config, status, curves, probe images' maps)."""
    from biasaudit.validation.device import torch_settings

    validate_config(cfg)
    with torch_settings():
        return _train_run(cfg, n_keep_maps)


def _train_run(cfg: TrainConfig, n_keep_maps: int) -> dict:
    import torch
    import torch.nn.functional as F

    from biasaudit.validation.device import autocast, pick_device
    from biasaudit.validation.models import make_model
    from biasaudit.validation.sam import SAM

    device = pick_device(cfg.device)
    ds = _dataset(cfg)
    X, y = ds.X_train.to(device), ds.y_train.to(device)
    n = X.shape[0]
    ev = {"X": X[:cfg.n_eval], "y": y[:cfg.n_eval],
          "probe": ds.X_test[:cfg.n_probe].to(device), "probe_y": ds.y_test[:cfg.n_probe].to(device)}
    ev["low"] = _low_intensity_mask(ev["probe"], cfg.low_threshold)
    if "masks" in ds.info:
        ev["major"] = torch.as_tensor(ds.info["masks"]["major"], device=device)
        ev["minor"] = torch.as_tensor(ds.info["masks"]["minor"], device=device)
    model = make_model(cfg.model, num_classes=ds.num_classes, in_channels=ds.in_channels,
                       image_size=ds.image_size, init_scale=cfg.init_scale, seed=cfg.seed,
                       width=cfg.width).to(device)
    if cfg.optimizer == "sam":
        opt = SAM(model.parameters(), torch.optim.SGD, rho=cfg.rho, norm=cfg.norm,
                  normalization=cfg.normalization, lr=cfg.lr, model=model)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    gen = torch.Generator().manual_seed(cfg.seed)
    batch = n if cfg.batch_size is None else min(cfg.batch_size, n)
    order, cursor = torch.randperm(n, generator=gen), 0
    bad = torch.zeros((), dtype=torch.bool, device=device)
    curves: dict[str, list] = {"step": []}
    maps, images, status = [], [], "ok"
    model.train()
    for step in range(cfg.steps + 1):
        if step % cfg.eval_every == 0 or step == cfg.steps:
            if bool(bad):  # the only host sync: once per evaluation
                status = "diverged"
                break
            metrics = _evaluate(model, ev, n_keep_maps)
            if not math.isfinite(metrics["loss"]):
                status = "diverged"
                break
            maps.append(metrics.pop("cam_maps"))
            images = metrics.pop("cam_low_images")
            curves["step"].append(step)
            for k, v in metrics.items():
                curves.setdefault(k, []).append(v)
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
    if status == "ok" and not final_acc >= trained_threshold(ds.num_classes):
        status = "not trained"
    return {"config": asdict(cfg), "key": cfg.key(), "status": status, "num_classes": ds.num_classes,
            "curves": curves, "final_cam_low_images": images if curves["step"] else [],
            "maps": maps, "map_images": ev["probe"][:n_keep_maps, 0].cpu().numpy().round(4).tolist()}


def cache_dir() -> Path:
    from biasaudit.plumbing import cache_root

    return cache_root() / "validation-sam"


def cached_run_unit(cfg: TrainConfig) -> None:
    """An audit run unit: train ``cfg`` into the run cache (or find it there); returns nothing (the claim
    reads the cached run). Validates first, so a bad config fails before any training."""
    validate_config(cfg)
    cached_run(cfg)


def cached_run(cfg: TrainConfig, *, use_cache: bool = True) -> dict:
    """:func:`train_run`, reusing (and writing) the run's JSON in :func:`cache_dir`."""
    from biasaudit.plumbing.runcache import count_run
    from biasaudit.plumbing.status import status
    from biasaudit.validation.filelock import exclusive

    if not use_cache:
        count_run(computed=True)
        return train_run(cfg)
    path = cache_dir() / f"{cfg.key()}.json"
    with exclusive(path.with_suffix(".lock"), status):  # a second worker waits, then reads the first one's result
        return _cached_run_locked(cfg, path)


def _cached_run_locked(cfg: TrainConfig, path: Path) -> dict:
    from biasaudit.plumbing.runcache import count_run

    if path.is_file():
        try:
            with open(path) as fh:
                data = json.load(fh)
            if data.get("key") == cfg.key():
                count_run(computed=False)
                return data
        except (OSError, ValueError):
            pass  # a damaged cache file is simply redone
    data = train_run(cfg)
    count_run(computed=True)
    try:
        atomic_write_text(path, json.dumps(data))
    except OSError:
        pass  # an unwritable cache only costs resumability
    return data


# ---------------------------------------------------------------------------------------------- statistics
def metric_at_accuracy(acc, metric, a: float) -> float:
    """The metric where the run's accuracy first reaches ``a`` (linear between bracketing evaluations)."""
    acc, metric = np.asarray(acc, float), np.asarray(metric, float)
    hits = np.nonzero(acc >= a)[0]
    if hits.size == 0:
        return math.nan
    i = int(hits[0])
    if i == 0 or acc[i] == acc[i - 1]:
        return float(metric[i])
    w = (a - acc[i - 1]) / (acc[i] - acc[i - 1])
    return float(metric[i - 1] + w * (metric[i] - metric[i - 1]))


def bootstrap_mean_ci(values, *, level: float = CI_LEVEL, n_boot: int = N_BOOT, seed: int = 0):
    """Percentile bootstrap interval of the mean (NaNs dropped); (nan, nan) for fewer than 2 values."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, v.size, size=(n_boot, v.size))].mean(axis=1)
    q = (1 - level) / 2
    return (float(np.quantile(means, q)), float(np.quantile(means, 1 - q)))


def t_mean_ci(values, *, level: float = CI_LEVEL):
    from scipy import stats

    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return (math.nan, math.nan)
    half = stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    return (float(v.mean() - half), float(v.mean() + half))


def _hull(a, b):
    return (float(min(a[0], b[0])), float(max(a[1], b[1])))


def paired_effect(gd_runs: list[dict], sam_runs: list[dict], metric: str, *,
                  levels: tuple[float, ...] | None = None) -> dict:
    """Seed-level paired SAM - GD differences of ``metric`` (raw at the same step, and accuracy-matched).

    ``levels=None`` matches at SAM's final accuracy (GD interpolated); a tuple of accuracy levels compares
    both runs where each first reaches each level, averaged over the levels both reach.
    """
    gd_by_seed = {r["config"]["seed"]: r for r in gd_runs}
    raw, matched, seeds, excluded, image_diffs = [], [], [], {}, []
    for sam in sam_runs:
        s = sam["config"]["seed"]
        gd = gd_by_seed.get(s)
        if gd is None:
            excluded[s] = "no GD run"
            continue
        if gd["status"] != "ok" or sam["status"] != "ok":
            excluded[s] = f"GD {gd['status']}, SAM {sam['status']}"
            continue
        g, m = gd["curves"], sam["curves"]
        if levels is None:
            gd_matched = metric_at_accuracy(g["acc"], g[metric], m["acc"][-1])
            diff = m[metric][-1] - gd_matched
            if not math.isfinite(gd_matched):  # SAM ended more accurate than GD ever was: match the other way
                diff = metric_at_accuracy(m["acc"], m[metric], g["acc"][-1]) - g[metric][-1]
        else:
            diffs = [metric_at_accuracy(m["acc"], m[metric], a) - metric_at_accuracy(g["acc"], g[metric], a)
                     for a in levels]
            diffs = [d for d in diffs if math.isfinite(d)]
            diff = float(np.mean(diffs)) if diffs else math.nan
        if not math.isfinite(diff):
            excluded[s] = "no common accuracy" if levels is None else "no common accuracy level"
            continue
        seeds.append(s)
        raw.append(m[metric][-1] - g[metric][-1])
        matched.append(diff)
        if metric == "cam_low" and sam.get("final_cam_low_images") and gd.get("final_cam_low_images"):
            image_diffs.extend(np.asarray(sam["final_cam_low_images"], float)
                               - np.asarray(gd["final_cam_low_images"], float))
    out = {"metric": metric, "seeds": seeds, "excluded": {str(k): v for k, v in excluded.items()},
           "raw": raw, "matched": matched,
           "raw_mean": float(np.mean(raw)) if raw else math.nan,
           "matched_mean": float(np.mean(matched)) if matched else math.nan,
           "raw_ci": _hull(bootstrap_mean_ci(raw), t_mean_ci(raw)),
           "matched_ci_bootstrap": bootstrap_mean_ci(matched), "matched_ci_t": t_mean_ci(matched)}
    out["matched_ci"] = _hull(out["matched_ci_bootstrap"], out["matched_ci_t"])
    if image_diffs:
        out["raw_ci_images"] = bootstrap_mean_ci(image_diffs)
    return out


def patch_lead(runs: list[dict], level: float = 0.9) -> dict:
    """Which patch is learnt first, per run: ``lead = t_major - t_minor`` (steps; > 0 means minor first).

    ``t_minor`` is the first evaluated step at which the accuracy with the *major* patch ablated (the model
    predicting from the faint patch alone) reaches ``level``; ``t_major`` likewise with the minor patch
    ablated. A patch never learnt within the horizon T is censored at T + eval_every. Only ``ok`` runs count.
    """
    leads, seeds, excluded = [], [], {}
    for r in runs:
        if r["status"] != "ok":
            excluded[str(r["config"]["seed"])] = r["status"]
            continue
        c = r["curves"]
        horizon = c["step"][-1] + r["config"]["eval_every"]

        def first(key):
            hits = [s for s, a in zip(c["step"], c[key]) if a >= level]
            return hits[0] if hits else horizon

        leads.append(float(first("acc_no_minor") - first("acc_no_major")))
        seeds.append(r["config"]["seed"])
    ci = _hull(bootstrap_mean_ci(leads), t_mean_ci(leads))
    return {"metric": "minor_lead_steps", "level": level, "seeds": seeds, "excluded": excluded, "values": leads,
            "mean": float(np.mean(leads)) if leads else math.nan, "ci": ci}


def verdict_from_interval(ci, direction: int, n_seeds: int) -> tuple[str, float]:
    """('confirmed'|'refuted'|'undecided', error) for an effect interval and a predicted sign.

    ``error = max(0, -direction * lo_or_hi)``: 0 when the interval lies on the predicted side of 0, the
    distance the interval sits on the wrong side otherwise (compared with a tolerance of 0).
    """
    lo, hi = ci
    if n_seeds < MIN_SEEDS or not (math.isfinite(lo) and math.isfinite(hi)):
        return "undecided", math.nan
    a, b = sorted((direction * lo, direction * hi))
    if a > 0:
        return "confirmed", 0.0
    if b < 0:
        return "refuted", float(-b)
    return "undecided", float(-a)


# --------------------------------------------------------------------------------------------- experiments
# "quick" fits the audit budget on 2 CPU cores; "full" is the bigger setting (minutes to an hour on a CPU).
TIERS: dict[str, dict[str, dict]] = {
    "minor_mass": {
        "quick": dict(dataset="mnist5k", model="cnn", downsample=2, n_train=1000, n_test=500, n_eval=1000,
                      n_probe=64, width=8, steps=150, eval_every=15, lr=0.1, rho=0.05, batch_size=128,
                      seeds=(0, 1, 2, 3, 4), init_scales=(1.0,)),
        "full": dict(dataset="mnist5k", model="cnn", downsample=1, n_train=4000, n_test=1000, n_eval=2000,
                     n_probe=256, width=16, steps=1500, eval_every=50, lr=0.1, rho=0.05, batch_size=128,
                     seeds=tuple(range(10)), init_scales=(1.0, 0.5, 2.0)),
    },
    "synthetic": {
        "quick": dict(dataset="synthetic-patches", model="cnn", n_train=256, n_test=128, n_eval=256,
                      n_probe=32, width=8, steps=45, eval_every=3, lr=0.05, rho=0.05, batch_size=None,
                      seeds=(0, 1, 2, 3, 4), init_scales=(1.0,), levels=(0.6, 0.7, 0.8, 0.9, 0.95)),
        "full": dict(dataset="synthetic-patches", model="cnn", n_train=2048, n_test=512, n_eval=2048,
                     n_probe=256, width=16, steps=400, eval_every=2, lr=0.02, rho=0.05, batch_size=None,
                     seeds=tuple(range(10)), init_scales=(1.0, 0.5, 2.0), levels=(0.6, 0.7, 0.8, 0.9, 0.95)),
    },
}


def _settings(kind: str, tier: str, overrides: Mapping[str, Any]) -> dict:
    choice("tier", tier, tuple(TIERS[kind]))
    settings = dict(TIERS[kind][tier])
    settings.update({k: v for k, v in overrides.items() if v is not None})
    return settings


def _grid(settings: dict, device: str, data_dir: str | None) -> list[TrainConfig]:
    skip = {"seeds", "init_scales", "levels"}
    base = TrainConfig(device=device, data_dir=data_dir,
                       **{k: v for k, v in settings.items() if k not in skip})
    return [replace(base, optimizer=o, seed=s, init_scale=a)
            for a in settings["init_scales"] for s in settings["seeds"] for o in OPTIMIZERS]


def grid_configs(kind: str, tier: str = "quick", *, device: str = "cpu", data_dir: str | None = None,
                 **overrides) -> list[TrainConfig]:
    """The training runs of experiment ``kind`` (``"minor_mass"`` or ``"synthetic"``) at ``tier``: one
    :class:`TrainConfig` per (init scale, seed, optimizer), in the order the experiment runs them."""
    return _grid(_settings(kind, tier, overrides), device, data_dir)


def _run_grid(settings: dict, device: str, data_dir: str | None,
              progress: Callable[[str], None] | None, use_cache: bool) -> dict[float, dict[str, list]]:
    configs = _grid(settings, device, data_dir)
    for cfg in configs:  # every input error before the first training step
        validate_config(cfg)
    _dataset(configs[0])
    grid: dict[float, dict[str, list]] = {}
    for i, cfg in enumerate(configs, 1):
        if progress:
            progress(f"[{i}/{len(configs)}] {cfg.optimizer} alpha={cfg.init_scale} seed={cfg.seed}")
        grid.setdefault(cfg.init_scale, {o: [] for o in OPTIMIZERS})[cfg.optimizer].append(
            cached_run(cfg, use_cache=use_cache))
    return grid


def minor_mass_experiment(tier: str = "quick", *, device: str = "cpu", data_dir: str | None = None,
                          progress: Callable[[str], None] | None = None, use_cache: bool = True,
                          **overrides) -> dict:
    """GD vs SAM Grad-CAM (and |input gradient|) mass on low-intensity pixels, per init scale.

    ``overrides`` replace tier settings (dataset, model, steps, seeds, init_scales, rho, lr, ...).
    The primary effect (the claim's) is the accuracy-matched Grad-CAM difference at the first init scale.
    """
    settings = _settings("minor_mass", tier, overrides)
    grid = _run_grid(settings, device, data_dir, progress, use_cache)
    per_scale = {}
    for alpha, runs in grid.items():
        per_scale[str(alpha)] = {
            "cam_low": paired_effect(runs["gd"], runs["sam"], "cam_low"),
            "grad_low": paired_effect(runs["gd"], runs["sam"], "grad_low"),
            "status": {o: [r["status"] for r in runs[o]] for o in OPTIMIZERS},
        }
    primary = per_scale[str(settings["init_scales"][0])]["cam_low"]
    return {"kind": "minor_mass", "tier": tier, "settings": _jsonable(settings), "per_scale": per_scale,
            "primary": primary, "runs": grid}


def synthetic_patch_experiment(tier: str = "quick", *, device: str = "cpu",
                               progress: Callable[[str], None] | None = None, use_cache: bool = True,
                               **overrides) -> dict:
    """The bright/faint patch task: which patch do GD and SAM learn first (ablation accuracy, Grad-CAM)?

    Primary effect: ``minor_reliance = acc(major ablated) - acc(minor ablated)``, SAM - GD, compared at the
    same training accuracy levels. Positive = SAM relies more on the faint patch. ``lead_sam``/``lead_gd``:
    :func:`patch_lead`, the absolute order in which each optimizer learns the two patches.
    """
    settings = _settings("synthetic", tier, overrides)
    grid = _run_grid(settings, device, None, progress, use_cache)
    levels = tuple(settings["levels"])
    per_scale = {}
    for alpha, runs in grid.items():
        per_scale[str(alpha)] = {
            "minor_reliance": paired_effect(runs["gd"], runs["sam"], "minor_reliance", levels=levels),
            "cam_minor_share": paired_effect(runs["gd"], runs["sam"], "cam_minor_share", levels=levels),
            "lead_sam": patch_lead(runs["sam"]),
            "lead_gd": patch_lead(runs["gd"]),
            "status": {o: [r["status"] for r in runs[o]] for o in OPTIMIZERS},
        }
    primary = per_scale[str(settings["init_scales"][0])]["minor_reliance"]
    return {"kind": "synthetic", "tier": tier, "settings": _jsonable(settings), "per_scale": per_scale,
            "primary": primary, "runs": grid}


def _jsonable(value):
    from biasaudit.plumbing import jsonable

    return jsonable(value)


def summary_line(effect: dict, direction: int = 1) -> str:
    verdict, _ = verdict_from_interval(effect["matched_ci"], direction, len(effect["seeds"]))
    lo, hi = effect["matched_ci"]
    rlo, rhi = effect["raw_ci"]
    return (f"{effect['metric']}: matched SAM-GD {effect['matched_mean']:+.4f} [{lo:+.4f}, {hi:+.4f}], "
            f"raw {effect['raw_mean']:+.4f} [{rlo:+.4f}, {rhi:+.4f}], {len(effect['seeds'])} seeds "
            f"({verdict}; excluded {effect['excluded'] or 'none'})")


# -------------------------------------------------------------------------- multi-point diagonal network
def multipoint_data(mu=(1.0, 1.5, 2.0, 2.5), n: int = 8, spread: float = 0.3, seed: int = 0):
    """n positive points x_i = mu * (1 + spread * U(-1, 1)) with y_i = +1: separable, feature j has scale mu_j."""
    from biasaudit.plumbing import positive_increasing

    mu = positive_increasing("mu", mu)
    if not 0 <= spread < 1:
        raise InputError("spread", "must lie in [0, 1) (keeps every feature positive)", spread)
    rng = np.random.default_rng(seed)
    return mu * (1 + spread * rng.uniform(-1, 1, size=(positive_int("n", n), mu.size))), np.ones(n)


def multipoint_jdagger(X, y, alphas, *, rho: float = 0.1, eta: float = 0.05, steps: int = 20000,
                       record_every: int = 20, algorithm: str = "l2", collapsed_below: float | None = None) -> dict:
    """j†(iteration, alpha) = argmax_j beta_j (1-based) of the depth-2 diagonal network, balanced init alpha*1.

    Uses sam-core's numba kernel ``biasaudit.numerics.sam_discrete.run_sam``. Entries where max_j beta_j <
    ``collapsed_below`` (default 0.05 rho^2: the plateau has beta ~ rho^2/2 e_1, while the collapsed discrete
    iterates chatter at beta ~ (eta mu rho)^2) are 0; iterations after divergence are -1. Step 0 (all beta_j
    tied) is left out.
    """
    from biasaudit.numerics.sam_discrete import run_sam

    if collapsed_below is None:
        collapsed_below = 0.05 * rho**2
    X = np.asarray(X, float)
    alphas = np.asarray(alphas, float)
    m = steps // record_every + 1 + (1 if steps % record_every else 0)
    jd = np.full((alphas.size, m), -1, dtype=np.int64)
    loss = np.full((alphas.size, m), np.nan)
    rec_steps = None
    for i, a in enumerate(alphas):
        tr = run_sam(np.full((2, X.shape[1]), a), X, y, algorithm=algorithm, rho=rho, eta=eta, steps=steps,
                     record_every=record_every)
        k = len(tr.steps)
        jd[i, :k] = np.where(tr.beta.max(axis=1) < collapsed_below, 0, tr.beta.argmax(axis=1) + 1)
        loss[i, :k] = tr.loss
        if k == m:
            rec_steps = tr.steps
    if rec_steps is None:
        rec_steps = np.append(np.arange(0, steps + 1, record_every), [] if steps % record_every == 0 else [steps])
    return {"steps": rec_steps[1:], "alphas": alphas, "jdagger": jd[:, 1:], "loss": loss[:, 1:],
            "algorithm": algorithm, "rho": rho,
            "eta": eta}


def plot_multipoint_heatmap(path: Path, *, rho: float = 0.1) -> Path:
    """j† over (iteration, alpha) for l2-SAM next to GD (baseline), multi-point data (spec, Empirical claims)."""
    plt = _pyplot()
    X, y = multipoint_data()
    alphas = np.geomspace(0.25 * rho, 1.5 * rho, 36)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    d = X.shape[1]
    for ax, alg in zip(axes, ("gd", "l2")):
        h = multipoint_jdagger(X, y, alphas, rho=rho, algorithm=alg)
        im = ax.pcolormesh(h["steps"], alphas / rho, h["jdagger"], cmap=plt.get_cmap("viridis", d + 1),
                           vmin=-0.5, vmax=d + 0.5, shading="nearest")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("iteration k")
        ax.set_title(f"{'GD' if alg == 'gd' else 'l2-SAM'}: dominant index j† (0 = collapsed)", fontsize=9)
    axes[0].set_ylabel("alpha / rho")
    fig.colorbar(im, ax=axes, label="j† (1 = most minor)")
    fig.suptitle(f"multi-point data (n = {X.shape[0]}, mu = 1, 1.5, 2, 2.5, spread 30%), depth 2, "
                 f"rho = {rho}, eta = 0.05", fontsize=9)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


# ------------------------------------------------------------------------------------------------- figures
def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_curves(result: dict, metric: str, path: Path, ylabel: str) -> Path:
    """Per-seed curves of ``metric`` against step and against training accuracy, GD vs SAM."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    colors = {"gd": "tab:blue", "sam": "tab:red"}
    for alpha, runs in result["runs"].items():
        for opt in OPTIMIZERS:
            for i, r in enumerate(runs[opt]):
                c = r["curves"]
                if metric not in c:
                    continue
                style = "-" if r["status"] == "ok" else ":"
                label = f"{opt.upper()} alpha={alpha}" if i == 0 else None
                axes[0].plot(c["step"], c[metric], style, color=colors[opt], alpha=0.6, label=label)
                axes[1].plot(c["acc"], c[metric], style, color=colors[opt], alpha=0.6, label=label)
    axes[0].set_xlabel("training step")
    axes[1].set_xlabel("training accuracy")
    for ax in axes:
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{result['settings']['dataset']}: {ylabel} (dotted: diverged / not trained)")
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def plot_overlays(result: dict, path: Path, seed_index: int = 0, n_images: int = 4) -> Path:
    """Grad-CAM overlays of GD and SAM on the same probe images at several training times."""
    plt = _pyplot()
    runs = next(iter(result["runs"].values()))
    gd, sam = runs["gd"][seed_index], runs["sam"][seed_index]
    images = np.asarray(gd["map_images"])[:n_images]
    n_t = min(len(gd["maps"]), len(sam["maps"]))
    times = sorted({0, n_t // 3, (2 * n_t) // 3, n_t - 1}) if n_t else []
    fig, axes = plt.subplots(2 * len(images), max(len(times), 1),
                             figsize=(1.6 * max(len(times), 1), 1.6 * 2 * len(images)), squeeze=False)
    for row, img in enumerate(images):
        for col, t in enumerate(times):
            for k, (name, run) in enumerate((("GD", gd), ("SAM", sam))):
                ax = axes[2 * row + k, col]
                cam = np.asarray(run["maps"][t][row])
                ax.imshow(img, cmap="gray", vmin=0, vmax=1)
                ax.imshow(cam / cam.max() if cam.max() > 0 else cam, cmap="jet", alpha=0.45, vmin=0, vmax=1)
                ax.set_xticks([]), ax.set_yticks([])
                if row == 0 or col == 0:
                    ax.set_title(f"{name} step {run['curves']['step'][t]}", fontsize=6)
    fig.suptitle(f"Grad-CAM, GD vs SAM (seed {gd['config']['seed']})", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def make_figures(outdir, tier: str = "quick") -> list[Path]:
    """PNGs for the audit report: Grad-CAM overlays and minor-mass curves (MNIST), patch-task curves.

    ``tier`` is the experiment size ("quick" or "full"; the audit's claim module passes the size its claims
    used). Runs come from the same cache as the claims, so after the claims ran this only draws.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tier = choice("tier", tier, ("quick", "full"))
    mm = minor_mass_experiment(tier)
    syn = synthetic_patch_experiment(tier)
    return [
        plot_overlays(mm, outdir / "sam_torch_gradcam_overlays.png"),
        plot_curves(mm, "cam_low", outdir / "sam_torch_minor_mass_gradcam.png", "Grad-CAM mass on low-intensity px"),
        plot_curves(mm, "grad_low", outdir / "sam_torch_minor_mass_inputgrad.png",
                    "|input grad| mass on low-intensity px"),
        plot_overlays(syn, outdir / "sam_torch_patches_overlays.png"),
        plot_curves(syn, "minor_reliance", outdir / "sam_torch_patches_reliance.png",
                    "acc(major ablated) - acc(minor ablated)"),
        plot_curves(syn, "cam_minor_share", outdir / "sam_torch_patches_cam_minor.png",
                    "Grad-CAM minor / (minor+major)"),
        plot_multipoint_heatmap(outdir / "sam_torch_multipoint_jdagger.png"),
    ]
