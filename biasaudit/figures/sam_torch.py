"""Figures of the SAM network experiments (paper 1 on torch networks): Grad-CAM overlays, minor-feature
curves, the regime grids' boundary and dose-response, and the multi-point diagonal network.

The numbers come from :mod:`biasaudit.validation` (runs from the same cache as the claims, so after the
claims ran these only draw); matplotlib's Agg backend, PNGs written into the folder given.

==============================  ==========================================================================
function                        what it draws
==============================  ==========================================================================
:func:`plot_ladder_figure`      the audit's ``sam.torch.minor_first_major_last`` job: the minor share in
                                normalised time, SAM and GD, per model and multiple of alpha_50
:func:`plot_overlays`           Grad-CAM of GD and SAM on the same probe images at several training times
:func:`plot_curves`             mean and 95 % seed band of a metric against step and training accuracy
:func:`plot_regime_figure`      training fraction against alpha (boundary) and the earlier minor-feature
                                statistic (a dose-response no verdict reads)
:func:`plot_multipoint_heatmap` j† over (iteration, alpha) for l2-SAM beside GD, multi-point data
==============================  ==========================================================================
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from biasaudit.figures._common import pyplot as _pyplot
from biasaudit.figures._common import save

__all__ = ["plot_ladder_figure", "plot_overlays", "plot_curves", "plot_regime_figure", "plot_multipoint_heatmap",
           "mean_band"]


def plot_multipoint_heatmap(path: Path, *, rho: float = 0.1) -> Path:
    """j† over (iteration, alpha) for l2-SAM next to GD (baseline), multi-point data (the paper's empirical claims)."""
    from biasaudit.validation.sam_multipoint import multipoint_data, multipoint_jdagger

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
    save(fig, path)
    return path


def mean_band(xs: list, ys: list, grid):
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
    from biasaudit.validation.sam_training import OPTIMIZERS

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
                mean, lo, hi = mean_band([r["curves"][xkey] for r in ok], [r["curves"][metric] for r in ok], grid)
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
    save(fig, path)
    return path


def _with_maps(run: dict, n_images: int, data_dir: str | None = None) -> dict:
    """``run`` itself if it stored Grad-CAM maps, else the same run (same config, so the same trajectory)
    with ``keep_maps`` = n_images, trained once and cached: the regime designs store maps for their first seeds
    only, so when none of those trained the overlay figure retrains only the pair it shows. ``data_dir`` is this worker's data folder (None:
    the run's own)."""
    from biasaudit.validation.sam_runs import cached_run
    from biasaudit.validation.sam_training import TrainConfig

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
    save(fig, path)
    return path


def plot_regime_figure(result: dict, outdir, name: str):
    """Each arm's outcomes (fitted, collapsed, slow, diverged: share of seeds, stacked) at the alpha below SAM's
    boundary and the one above it, from :func:`biasaudit.validation.sam_regimes.regime_experiment`."""
    plt = _pyplot()
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    s = result["settings"]
    arms = ("sam", "gd", "randsam", "aa")
    names = {"sam": "SAM", "gd": "GD", "randsam": "RandSAM", "aa": "GD (A/A)"}
    colors = {"ok": "tab:green", "collapsed": "tab:red", "slow": "tab:orange", "diverged": "tab:gray"}
    fig, axes = plt.subplots(1, len(result["alphas"]), figsize=(4.4 * len(result["alphas"]), 3.4), sharey=True,
                             squeeze=False)
    n = len(s["seeds"])
    for ax, (point, alpha) in zip(axes[0], result["alphas"].items()):
        bottom = np.zeros(len(arms))
        for outcome, color in colors.items():
            share = np.array([result["outcomes"][point][arm][outcome] / n for arm in arms])
            ax.bar(range(len(arms)), share, bottom=bottom, color=color, label=outcome if point == "below" else None)
            bottom += share
        ax.set_xticks(range(len(arms)))
        ax.set_xticklabels([names[a] for a in arms], fontsize=8)
        ax.set_title(f"{point} SAM's boundary: alpha = {alpha:g}", fontsize=9)
        ax.set_ylim(0, 1.02)
    axes[0, 0].set_ylabel(f"share of {n} seeds")
    axes[0, 0].legend(fontsize=7, loc="lower left")
    fig.suptitle(f"{s['model']} on {s['dataset']}, rho = {s['rho']}: each run to loss {s['loss_target']} or "
                 f"{s['steps']} steps", fontsize=9)
    fig.tight_layout()
    path = outdir / name
    save(fig, path)
    return path


def plot_ladder_figure(models: tuple[str, ...], tier: str, outdir) -> Path:
    """The minor patch's margin share against normalised time τ = t / t_fit, SAM and GD (mean and 95 % seed
    band of the runs that reached their loss target), one panel per model, one line style per multiple of
    α_50 (:data:`biasaudit.validation.sam_ladder_config.MULTIPLES`)."""
    from biasaudit.validation.sam_ladder import cached_ladder_run
    from biasaudit.validation.sam_ladder_config import MULTIPLES, LadderRun, ladder_settings, multiples

    plt = _pyplot()
    fig, axes = plt.subplots(1, len(models), figsize=(5.2 * len(models), 3.8), squeeze=False)
    grid = np.linspace(0.0, 1.0, 101)
    styles = {"near": ":", "primary": "-", "gd_like": "--"}
    colors = {"sam": "tab:red", "gd": "tab:blue"}
    for ax, model in zip(axes[0], models):
        settings = ladder_settings(model, tier)
        for multiple in multiples(model, tier):
            factor = MULTIPLES[multiple]
            for arm in ("sam", "gd"):
                runs = [cached_ladder_run(LadderRun(model, multiple, arm, s), tier) for s in settings["seeds"]]
                ok = [r for r in runs if r["status"] == "ok" and r["curves"]["step"][-1] > 0]
                if len(ok) < 2:
                    continue
                taus = [np.asarray(r["curves"]["step"], float) / r["curves"]["step"][-1] for r in ok]
                mean, lo, hi = mean_band(taus, [r["curves"]["minor_margin_share"] for r in ok], grid)
                ax.plot(grid, mean, styles[multiple], color=colors[arm],
                        label=f"{arm.upper()} {factor:g} α50 ({len(ok)}/{len(runs)} fitted)")
                ax.fill_between(grid, lo, hi, color=colors[arm], alpha=0.12, lw=0)
        ax.axvline(0.5, color="0.6", lw=0.8)
        ax.set(title=f"{model} (α50 = {settings['alpha_50']:g})", xlabel="τ = t / t_fit",
               ylabel="minor patch's margin share")
        ax.legend(fontsize=6.5, loc="best")
    return save(fig, Path(outdir) / "sam_torch_minor_first_major_last.png")
