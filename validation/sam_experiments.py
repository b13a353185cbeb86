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

from biasaudit.plumbing import InputError, choice, positive_int
from biasaudit.validation.sam_training import (  # re-exported: one run's training lives there
    OPTIMIZERS, RUN_CODE, TrainConfig, _dataset, cache_dir, cached_run, cached_run_unit, train_run,
    trained_threshold, validate_config,
)

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

CI_LEVEL = 0.95
N_BOOT = 10_000
MIN_SEEDS = 3


# ---------------------------------------------------------------------------------------------- statistics
def metric_at_accuracy(acc, metric, a: float) -> float:
    """The metric where the run's accuracy first reaches ``a`` (linear between bracketing evaluations)."""
    from biasaudit.validation.sam_stats import metric_at_level

    return metric_at_level(acc, metric, a)


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


def _mean_band(xs: list, ys: list, grid):
    """Mean and 95 % Student-t band over runs of curves ys(xs), each interpolated on ``grid`` (NaN outside
    a run's range; a grid point needs at least 2 runs)."""
    from scipy import stats

    Y = np.full((len(xs), len(grid)), np.nan)
    for i, (x, y) in enumerate(zip(xs, ys)):
        x, y = np.asarray(x, float), np.asarray(y, float)
        order = np.argsort(x, kind="stable")
        x, y = x[order], y[order]
        inside = (grid >= x[0]) & (grid <= x[-1])
        Y[i, inside] = np.interp(grid[inside], x, y)
    n = np.sum(np.isfinite(Y), axis=0)
    mean, half = np.full(len(grid), np.nan), np.full(len(grid), np.nan)
    ok = n >= 2
    mean[ok] = np.nanmean(Y[:, ok], axis=0)
    half[ok] = stats.t.ppf(0.975, n[ok] - 1) * np.nanstd(Y[:, ok], axis=0, ddof=1) / np.sqrt(n[ok])
    return mean, mean - half, mean + half


def plot_curves(result: dict, metric: str, path: Path, ylabel: str) -> Path:
    """Mean and 95 % seed band of ``metric`` against step and against training accuracy, GD vs SAM.

    Only trained runs enter the curves; the legend says how many of the runs did not train."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    colors = {"gd": "tab:blue", "sam": "tab:red"}
    for alpha, runs in result["runs"].items():
        for opt in OPTIMIZERS:
            ok = [r for r in runs[opt] if r["status"] == "ok" and metric in r["curves"]]
            if not ok:
                continue
            label = (f"{opt.upper()} alpha={alpha}: {len(ok)} trained runs"
                     + (f" ({len(runs[opt]) - len(ok)} not trained, left out)" if len(ok) < len(runs[opt]) else ""))
            steps = np.unique(np.concatenate([r["curves"]["step"] for r in ok])).astype(float)
            acc_grid = np.linspace(min(min(r["curves"]["acc"]) for r in ok), max(max(r["curves"]["acc"]) for r in ok), 60)
            for ax, xkey, grid in ((axes[0], "step", steps), (axes[1], "acc", acc_grid)):
                mean, lo, hi = _mean_band([r["curves"][xkey] for r in ok], [r["curves"][metric] for r in ok], grid)
                ax.plot(grid, mean, color=colors[opt], label=label if xkey == "step" else None)
                ax.fill_between(grid, lo, hi, color=colors[opt], alpha=0.2, lw=0)
    axes[0].set_xlabel("training step")
    axes[1].set_xlabel("training accuracy")
    for ax in axes:
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend(fontsize=7)
    else:
        axes[0].text(0.5, 0.5, "no run trained", transform=axes[0].transAxes, ha="center")
    fig.suptitle(f"{result['settings']['dataset']}: {ylabel} (mean and 95% band over seeds)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def _with_maps(run: dict, n_images: int, data_dir: str | None = None) -> dict:
    """``run`` itself if it stored Grad-CAM maps, else the same run (same config, so the same trajectory)
    with ``keep_maps`` = n_images, trained once and cached: the regime designs store maps for their first seeds
    only, so when none of those trained the overlay figure retrains only the pair it shows. ``data_dir`` is this worker's data folder (None:
    the run's own)."""
    from biasaudit.validation.sam_training import TrainConfig, cached_run

    if any(len(m) for m in run.get("maps", [])) or ("maps" in run and not run["maps"]):
        return run  # it has maps, or it had no evaluation to map; a slimmed record (no "maps" key) retrains
    cfg = TrainConfig(**run["config"])
    # device and data folder are this worker's (the run key leaves both out: the run may come from elsewhere)
    return cached_run(replace(cfg, keep_maps=min(n_images, cfg.n_probe), device="auto",
                              data_dir=data_dir or cfg.data_dir))


def plot_overlays(result: dict, path: Path, seed_index: int = 0, n_images: int = 4,
                  data_dir: str | None = None) -> Path:
    """Grad-CAM overlays of GD and SAM on the same probe images at several training times.

    Each panel is labelled with the optimizer, the step and the run's training accuracy there; all panels
    of one image share one colour scale (the largest map value of that image over both runs and all
    times), so a weak map looks weak instead of being stretched to full colour. The pair shown is the
    ``seed_index``-th trained GD/SAM pair, those that stored their maps first (so a position, not a seed)."""
    plt = _pyplot()
    runs = next(iter(result["runs"].values()))
    pairs = [(g, m) for g, m in zip(runs["gd"], runs["sam"]) if g["status"] == "ok" and m["status"] == "ok"]
    # trained pairs that stored their maps first (the regime grids store them for their first seeds only)
    pairs.sort(key=lambda pair: not all(r["config"].get("keep_maps", 0) > 0 for r in pair))
    gd, sam = pairs[min(seed_index, len(pairs) - 1)] if pairs else (runs["gd"][0], runs["sam"][0])
    gd, sam = _with_maps(gd, n_images, data_dir), _with_maps(sam, n_images, data_dir)
    images = np.asarray(gd["map_images"])[:n_images]
    n_t = min(len(gd["maps"]), len(sam["maps"]))
    times = sorted({0, n_t // 3, (2 * n_t) // 3, n_t - 1}) if n_t else []
    n_cols = max(len(times), 1)
    fig, axes = plt.subplots(2 * len(images), n_cols, figsize=(1.9 * n_cols, 1.75 * 2 * len(images)), squeeze=False)
    im = None
    for row, img in enumerate(images):
        scale = max((float(np.max(run["maps"][t][row])) for run in (gd, sam) for t in times), default=0.0) or 1.0
        for k, (name, run) in enumerate((("GD", gd), ("SAM", sam))):
            for col, t in enumerate(times):
                ax = axes[2 * row + k, col]
                cam = np.asarray(run["maps"][t][row]) / scale
                ax.imshow(img, cmap="gray", vmin=0, vmax=1)
                im = ax.imshow(cam, cmap="jet", alpha=0.45, vmin=0, vmax=1)
                ax.set_xticks([]), ax.set_yticks([])
                c = run["curves"]
                ax.set_title(f"{name} step {c['step'][t]}, acc {c['acc'][t]:.2f}", fontsize=6)
            axes[2 * row + k, 0].set_ylabel(f"image {row + 1}: {name}", fontsize=6)
    if im is not None:
        fig.colorbar(im, ax=axes, shrink=0.5, label="Grad-CAM / max for that image")
    alpha = gd["config"]["init_scale"]
    fig.suptitle(f"Grad-CAM, GD vs SAM, seed {gd['config']['seed']}, alpha = {alpha} (one colour scale per image)",
                 fontsize=8)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def _regime2_result(design: str, tier: str, data_dir: str | None = None) -> dict:
    """A regime grid's runs at its regime-2 alpha, shaped like an experiment result for the plots."""
    from biasaudit.validation.sam_regimes import regime_experiment

    res = regime_experiment(design, tier, data_dir=data_dir)
    alpha = res["alpha_regime2"] or res["collapse"]["alphas"][-1]
    return {"settings": res["settings"], "runs": {alpha: res["runs"][alpha]}}


def make_figures(outdir, tier: str = "quick", data_dir: str | None = None) -> list[Path]:
    """PNGs for the audit report: Grad-CAM overlays and minor-feature curves at the regime-2 alpha of the
    ``cnn`` (MNIST) and ``patch`` regime grids, and the multi-point diagonal network.

    ``tier`` is the experiment size ("quick" or "full"; the audit's claim module passes the size its claims
    used); ``data_dir`` is where a run retrained for its maps finds its data. Runs come from the same cache as the claims, so after the claims ran this only draws.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tier = choice("tier", tier, ("quick", "full"))
    mm = _regime2_result("cnn", tier, data_dir)
    syn = _regime2_result("patch", tier, data_dir)
    return [
        plot_overlays(mm, outdir / "sam_torch_gradcam_overlays.png", data_dir=data_dir),
        plot_curves(mm, "cam_low", outdir / "sam_torch_minor_mass_gradcam.png", "Grad-CAM mass on low-intensity px"),
        plot_curves(mm, "grad_low", outdir / "sam_torch_minor_mass_inputgrad.png",
                    "|input grad| mass on low-intensity px"),
        plot_overlays(syn, outdir / "sam_torch_patches_overlays.png", data_dir=data_dir),
        plot_curves(syn, "minor_reliance", outdir / "sam_torch_patches_reliance.png",
                    "acc(major ablated) - acc(minor ablated)"),
        plot_curves(syn, "cam_minor_share", outdir / "sam_torch_patches_cam_minor.png",
                    "Grad-CAM minor / (minor+major)"),
        plot_multipoint_heatmap(outdir / "sam_torch_multipoint_jdagger.png"),
    ]
