"""Figures of the EoS sweeps on torch networks (paper 2): sharpness, norms and test error against η, the
dynamics of one EoS run, and E2 across architectures. The numbers come from
:mod:`biasaudit.validation.eos_runs` (a sweep is run, or read from the run cache) and
:mod:`biasaudit.validation.eos_stats`; matplotlib's Agg backend, PNGs written into the folder given."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from biasaudit.figures._common import pyplot, save
from biasaudit.validation.eos_stats import e5_one_sweep, final_sharpness, json_float, usable_runs

__all__ = ["make_sweep_figures", "make_e2_figure", "make_e5_figure"]


def make_sweep_figures(outdir, tier: str = "quick", *, sweep: dict | None = None,
                       progress: Callable | None = None) -> list[str]:
    """Write the four PNG figures of a tier (running or loading its MSE sweep) and return their paths.

    final S vs η with 2/η and η_c; norms vs η; test error vs η with 95 % Wilson CIs; S_t and ‖θ‖₁ over time
    for the tracked EoS run. (For ``biasaudit audit``: ``make_sweep_figures(outdir, "quick")``.)
    """
    plt = pyplot()
    if sweep is None:
        from biasaudit.validation.eos_config import tier_config
        from biasaudit.validation.eos_runs import run_sweep

        sweep = run_sweep(tier_config(tier, "mse"), progress=progress)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    eta_c = json_float(sweep["gf"]["eta_c"])
    runs = [r for r in sweep["runs"] if r["outcome"] != "diverged"]
    diverged = [float(r["eta"]) for r in sweep["runs"] if r["outcome"] == "diverged"]
    etas = np.array([r["eta"] for r in runs], dtype=float)
    S = np.array([final_sharpness(r)[0] for r in runs])
    # the η range of the axes: the plotted runs, else the diverged ones (every run diverged: the panels show
    # the references and say so, never a zero-size reduction), else η_c
    span = etas if etas.size else np.array(diverged or ([eta_c] if math.isfinite(eta_c) else [1.0]))
    paths = []

    fig, ax = plt.subplots(figsize=(5, 3.6))
    grid = np.geomspace(span.min() * 0.9, span.max() * 1.1, 200)
    ax.plot(grid, 2 / grid, "k--", lw=1, label="2/η")
    if math.isfinite(eta_c):
        ax.axvline(eta_c, color="C3", lw=1, label=f"η_c = 2/s_GF = {eta_c:.3g}")
    if runs:
        ax.plot(etas, S, "o-", label="final S = max|λ|")
    ax.set(xscale="log", yscale="log", xlabel="η", ylabel="sharpness", title="final sharpness vs η")
    _no_runs_note(ax, runs, diverged)
    _eta_axis(ax, eta_c, span)
    if ax.get_legend_handles_labels()[0]:  # nothing labelled when every run diverged and eta_c is unknown
        ax.legend(fontsize=8)
    paths.append(_saved(fig, outdir / "eos_sharpness_vs_eta.png"))

    fig, ax = plt.subplots(figsize=(5, 3.6))
    for key, label in (("l1", "‖θ‖₁"), ("l2", "‖θ‖₂"), ("nuclear_sum", "Σ nuclear")):
        if not runs:
            break
        vals = np.array([r["final"][key] for r in runs])
        ax.plot(etas, vals / vals[0], "o-", label=label)
    if math.isfinite(eta_c):
        ax.axvline(eta_c, color="C3", lw=1, label="η_c")
    _no_runs_note(ax, runs, diverged)
    ax.set(xscale="log", xlabel="η", ylabel="norm / norm at smallest η", title="norms vs η")
    _eta_axis(ax, eta_c, span)
    if ax.get_legend_handles_labels()[0]:  # nothing labelled when every run diverged and eta_c is unknown
        ax.legend(fontsize=8)
    paths.append(_saved(fig, outdir / "eos_norms_vs_eta.png"))

    e5 = e5_one_sweep(sweep, eta_c)
    fig, ax = plt.subplots(figsize=(5, 3.6))
    if e5["test_error"]:
        err = np.array(e5["test_error"])
        ci = np.array(e5["ci95"])
        ax.errorbar(e5["etas"], err, yerr=[err - ci[:, 0], ci[:, 1] - err], fmt="o-", capsize=3)
    if math.isfinite(eta_c):
        ax.axvline(eta_c, color="C3", lw=1, label="η_c")
    _no_runs_note(ax, runs, diverged)
    ax.set(xscale="log", xlabel="η", ylabel="test error (95% Wilson CI)", title="test error vs η")
    _eta_axis(ax, eta_c, span)
    if ax.get_legend_handles_labels()[0]:  # nothing labelled when every run diverged and eta_c is unknown
        ax.legend(fontsize=8)
    paths.append(_saved(fig, outdir / "eos_test_error_vs_eta.png"))

    tracked = [r for r in sweep["runs"] if r.get("tracked")]
    fig, ax = plt.subplots(figsize=(5, 3.6))
    if tracked:
        r = tracked[0]
        pts = [p for p in r["sharpness_path"] if p.get("converged")]
        ax.plot([p["step"] for p in pts], [abs(json_float(p["S"])) for p in pts], ".-", ms=3, label="S_t")
        ax.axhline(2 / r["eta"], color="k", ls="--", lw=1, label="2/η")
        ax.set(xlabel="step", ylabel="sharpness", title=f"EoS run, η = {r['eta']:.3g}")
        ax2 = ax.twinx()
        l1 = np.asarray(r["l1"], float)
        ax2.plot(np.arange(len(l1)), l1, color="C2", lw=0.8, label="‖θ‖₁")
        ax2.set_ylabel("‖θ‖₁", color="C2")
        ax.legend(fontsize=8, loc="lower right")
    paths.append(_saved(fig, outdir / "eos_dynamics.png"))
    return paths


def _no_runs_note(ax, runs, diverged) -> None:
    """When no run is left to plot (every run diverged), say so on the panel instead of leaving it blank."""
    if runs:
        return
    what = (f"every run diverged (η = {', '.join(f'{e:.3g}' for e in diverged[:4])}"
            + (", ..." if len(diverged) > 4 else "") + ")") if diverged else "no GD runs in this sweep"
    ax.text(0.5, 0.5, f"nothing to plot: {what}", transform=ax.transAxes, ha="center", va="center", fontsize=8,
            wrap=True)


def _eta_axis(ax, eta_c: float, etas) -> None:
    """Log η axis labelled in multiples of η_c (matplotlib's own minor labels overlap on short ranges)."""
    from matplotlib.ticker import NullFormatter

    lo, hi = min(etas), max(etas)
    ticks = [m for m in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0) if lo * 0.95 <= m * eta_c <= hi * 1.05]
    if math.isfinite(eta_c) and ticks:
        ax.set_xticks([m * eta_c for m in ticks])
        ax.set_xticklabels([f"{m:g} η_c" for m in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())



def make_e2_figure(outdir, tier: str = "quick", *, sweeps: dict | None = None,
                   progress: Callable | None = None) -> list[str]:
    """E2 across architectures: final S/s_GF against η/η_c for each architecture of :data:`~biasaudit.validation.eos_config.ARCH_SWEEP_CONFIGS`, with
    the prediction min(1, η_c/η) (plateau, then 2/η). Writes ``eos_e2_architectures.png``."""
    plt = pyplot()
    if not sweeps:
        from biasaudit.validation.eos_config import ARCHS_E2, E2_FULL_ONLY, arch_config
        from biasaudit.validation.eos_runs import run_sweep

        # the tier's architectures (at the quick tier not those that run at the full tier only), seed 0's sweep
        sweeps = {arch: run_sweep(arch_config(tier, arch), progress=progress) for arch in ARCHS_E2
                  if not (tier == "quick" and arch in E2_FULL_ONLY)}
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    lo, hi = math.inf, 0.0
    for i, (arch, sweep) in enumerate(sweeps.items()):
        s_gf, eta_c = json_float(sweep["gf"]["s_gf"]), json_float(sweep["gf"]["eta_c"])
        runs, _ = usable_runs(sweep)
        if not runs or not (s_gf > 0):
            continue
        m = np.array([r["eta"] / eta_c for r in runs])
        ratio = np.array([final_sharpness(r)[0] / s_gf for r in runs])
        lo, hi = min(lo, m.min()), max(hi, m.max())
        ax.plot(m, ratio, "o-", color=f"C{i}", ms=4, lw=1, label=f"{arch} (s_GF {s_gf:.3g})")
    if hi > 0:
        grid = np.geomspace(lo * 0.95, hi * 1.05, 200)
        ax.plot(grid, np.minimum(1.0, 1.0 / grid), "k--", lw=1, label="predicted min(1, η_c/η)")
    ax.axvline(1.0, color="0.6", lw=0.8)
    ax.set(xscale="log", yscale="log", xlabel="η / η_c  (η_c = 2/s_GF)", ylabel="final S / s_GF",
           title=f"E2 across architectures ({tier} tier, MSE)")
    ax.legend(fontsize=7)
    path = outdir / "eos_e2_architectures.png"
    return [str(save(fig, path))]


def make_e5_figure(outdir, panels: dict) -> list[str]:
    """E5: test error relative to its mean over the sweep, against η/η_c, one panel per entry of ``panels``
    (title -> {label: [one sweep per seed]}); a thin line per seed, a thick one for the seeds' mean. Writes
    ``eos_e5_test_error.png``."""
    from biasaudit.validation.eos_stats import relative_errors_by_multiple, relative_test_errors

    plt = pyplot()
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (title, curves) in zip(axes[0], panels.items()):
        for i, (label, sweeps) in enumerate(curves.items()):
            eta_cs = [json_float(sweep["gf"]["eta_c"]) for sweep in sweeps]
            for sweep, eta_c in zip(sweeps, eta_cs):
                m, e = relative_test_errors(sweep, eta_c)
                if m.size:
                    ax.plot(m, e, "-", color=f"C{i}", lw=0.6, alpha=0.5)
            table = relative_errors_by_multiple(sweeps, eta_cs)
            if table:
                grid = sorted(table)
                ax.plot(grid, [np.mean(table[g]) for g in grid], "o-", color=f"C{i}", ms=3, lw=1.6,
                        label=f"{label} ({len(sweeps)} seeds)")
        ax.axvline(1.0, color="0.6", lw=0.8)
        ax.set(xscale="log", xlabel="η / η_c", ylabel="test error / its mean over the sweep", title=title)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    return [_saved(fig, outdir / "eos_e5_test_error.png")]


def _saved(fig, path: Path) -> str:
    fig.tight_layout()
    return str(save(fig, path))
