"""Figure jobs of the audit report: an id, the claims a figure illustrates, and ``make(outdir, tier)``.

A :class:`FigureJob` is run as one unit of work (like a claim; see :mod:`biasaudit.audit.units`), so it
can run on any worker; a job that raises becomes an ``error`` figure record, never a crash. Jobs whose
``requires`` (``"module:attribute"`` strings) cannot be imported are left out of the run and listed in the
report as unavailable.

Besides the jobs here, any claim module may define ``FIGURES: tuple[FigureJob, ...]`` (the torch
validation modules do, for Grad-CAM overlays and sweep plots); :func:`all_figures` collects them.

Plotting only: the numbers come from the theory/numerics packages' public functions. Every ``make`` uses
matplotlib's Agg backend and writes PNGs into ``outdir``, returning their paths.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["FigureJob", "FIGURES", "all_figures", "get_figure", "figure_available", "figures_for_claims"]


@dataclass(frozen=True)
class FigureJob:
    id: str
    paper: str
    title: str
    claims: tuple[str, ...]  # claim ids or globs this figure illustrates
    make: Callable[[Path, str], list[Path]]
    caption: str = ""
    requires: tuple[str, ...] = ()  # "module:attribute" the job needs
    unavailable_because: Callable[[str], str | None] | None = None  # tier -> why it cannot run (data absent), or None

    def illustrates(self, claim_id: str) -> bool:
        return any(fnmatch.fnmatchcase(claim_id, pattern) for pattern in self.claims)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    _pyplot().close(fig)
    return path


# ---- sizes per tier ---------------------------------------------------------------------------------------
def _size(tier: str, quick: int, full: int) -> int:
    return quick if tier == "quick" else full


# ---- paper 1: l2-SAM at L = 2 ------------------------------------------------------------------------------
# The spec's five-feature example: mu = (1, 1.5, 2, 2.5, 3); rho = 1, joint normalisation (c = rho/sqrt 2).
# Only alpha/c matters and tau is invariant to scaling w with c, so rho = 1 loses nothing.
SAM_MU = (1.0, 1.5, 2.0, 2.5, 3.0)
SAM_RHO = 1.0


# The spec's switch times for this mu at alpha = alpha_c (1 + 1e-8): j† = 1→2→3→4→5 at these tau.
SAM_SWITCH_REFERENCE = (1e-8, (42.0, 58.7, 75.5, 92.3))


def _sam_l2_heatmap(outdir: Path, tier: str) -> list[Path]:
    """j†(τ, α) for l2-SAM beside GD, with α_c, α_grow and the regime-3 boundary drawn.

    Three panels: l2-SAM over α/c (log τ, to show the early transient between α_grow and α_R3), l2-SAM
    zoomed onto δ = α/α_c − 1 (linear τ, the sequential amplification 1 → … → d with the spec's switch
    times as markers), and GD over α/c (j† = d for every τ > 0).
    """
    from matplotlib.colors import BoundaryNorm, ListedColormap

    from biasaudit.numerics.heatmap import dominant_index_heatmap
    from biasaudit.numerics.l2_boundaries import l2_sam_regime_boundaries

    plt = _pyplot()
    mu = np.array(SAM_MU)
    d = mu.size
    reg = l2_sam_regime_boundaries(mu, SAM_RHO)
    c, ac = reg.c, reg.alpha_collapse
    n_alpha, n_tau = _size(tier, 64, 256), _size(tier, 3000, 12000)
    a_over_c = np.geomspace(0.6 * ac / c, 1.5 * reg.alpha_gd_like / c, n_alpha)
    delta = np.geomspace(1e-10, 1.2 * (reg.alpha_gd_like / ac - 1.0), n_alpha)
    times = np.linspace(0.0, 120.0, n_tau + 1)  # the heatmap's uniform grid; tau = 0 (a tie) is not drawn
    # the adaptive reduction (Dormand-Prince 5(4) on the A-ODE at its default rtol) on both tiers
    sam = dominant_index_heatmap(mu, SAM_RHO, a_over_c * c, times, method="reduction").j_dagger[:, 1:]
    zoom = dominant_index_heatmap(mu, SAM_RHO, ac * (1.0 + delta), times, method="reduction").j_dagger[:, 1:]
    gd = dominant_index_heatmap(mu, SAM_RHO, a_over_c * c, times, method="gd").j_dagger[:, 1:]
    tau_log = tau_lin = times[1:]

    colors = ["#bdbdbd"] + [plt.get_cmap("viridis")(k / max(d - 1, 1)) for k in range(d)]
    cmap, norm = ListedColormap(colors), BoundaryNorm(np.arange(-0.5, d + 1.5), d + 1)
    fig, axes = plt.subplots(1, 3, figsize=(17, 5), constrained_layout=True)
    lines = ((ac, "α_c (collapse)", "-"), (reg.alpha_grow, "α_grow = cμ_d/‖μ‖", "--"),
             (reg.alpha_gd_like, "α_R3 = c(μ_{d−1}+μ_d)/‖μ‖", ":"))
    for ax, grid, name in ((axes[0], sam, "l2-SAM"), (axes[2], gd, "GD (ρ = 0, closed form)")):
        mesh = ax.pcolormesh(tau_log, a_over_c, grid, cmap=cmap, norm=norm, shading="nearest")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rescaled time τ (log)")
        ax.set_ylabel("α / c  (uniform init, c = ρ/√2)")
        ax.set_title(f"j†(τ, α): {name}")
        for value, label, style in lines:
            ax.axhline(value / c, color="crimson", ls=style, lw=1.4, label=label)
    axes[0].legend(loc="upper left", fontsize=8, framealpha=0.9)
    ax = axes[1]
    ax.pcolormesh(tau_lin, delta, zoom, cmap=cmap, norm=norm, shading="nearest")
    ax.set_yscale("log")
    ax.set_xlabel("rescaled time τ")
    ax.set_ylabel("δ = α/α_c − 1")
    ax.set_title("l2-SAM just above α_c: sequential amplification")
    for value, label, style in lines[1:]:
        ax.axhline(value / ac - 1.0, color="crimson", ls=style, lw=1.4, label=label)
    ref_delta, ref_taus = SAM_SWITCH_REFERENCE
    ax.plot(ref_taus, [ref_delta] * len(ref_taus), "wx", ms=9, mew=2, label="spec: switch times at δ = 1e−8")
    ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    bar = fig.colorbar(mesh, ax=axes, ticks=range(d + 1))
    bar.ax.set_yticklabels(["collapsed"] + [f"j†={k}" for k in range(1, d + 1)])
    fig.suptitle(f"Dominant index j† = argmax_j β_j, μ = {tuple(mu.tolist())}, ρ = {SAM_RHO:g} (flow, exact "
                 "log-linear reduction): collapse below α_c, sequential amplification up to α_R3, GD-like above")
    return [_save(fig, outdir / "sam_l2_jdagger_heatmap.png")]


def _sam_l2_iterations(outdir: Path, tier: str) -> list[Path]:
    """j†(k, α) of *discrete* logistic l2-SAM over iterations k, and the rescaled time τ it reaches.

    One SAM step is explicit Euler on the rescaled field with step h_k = η σ(−z̃_k), so τ advances by
    ≈ η e^{−margin} late in training: the iteration heatmap freezes where the τ heatmap keeps switching.
    """
    from matplotlib.colors import BoundaryNorm, ListedColormap

    from biasaudit.numerics.heatmap import dominant_index_heatmap
    from biasaudit.numerics.l2_boundaries import l2_sam_regime_boundaries

    plt = _pyplot()
    mu = np.array(SAM_MU)
    d = mu.size
    rho = 0.1  # the logistic loss is not scale-free: at rho = 1 the margin is large from step 0 and tau stalls
    reg = l2_sam_regime_boundaries(mu, rho)
    c, ac = reg.c, reg.alpha_collapse
    eta, n_iter = 0.1, _size(tier, 20_000, 200_000)
    alphas = np.geomspace(0.6 * ac, 1.5 * reg.alpha_gd_like, _size(tier, 64, 192))
    iters = np.arange(0, n_iter + 1, n_iter // 5000, dtype=float)
    heat = dominant_index_heatmap(mu, rho, alphas, iters, method="sam", time="iterations", eta=eta)
    colors = ["#bdbdbd"] + [plt.get_cmap("viridis")(k / max(d - 1, 1)) for k in range(d)]
    cmap, norm = ListedColormap(colors), BoundaryNorm(np.arange(-0.5, d + 1.5), d + 1)
    fig, (ax_h, ax_t) = plt.subplots(1, 2, figsize=(13, 4.8), constrained_layout=True)
    mesh = ax_h.pcolormesh(iters[1:], alphas / c, heat.j_dagger[:, 1:], cmap=cmap, norm=norm, shading="nearest")
    ax_h.set_xscale("log")
    ax_h.set_yscale("log")
    for value, style in ((ac, "-"), (reg.alpha_grow, "--"), (reg.alpha_gd_like, ":")):
        ax_h.axhline(value / c, color="crimson", ls=style, lw=1.2)
    ax_h.set_xlabel("iteration k (log)")
    ax_h.set_ylabel("α / c")
    ax_h.set_title(f"discrete l2-SAM, η = {eta:g}, ρ = {rho:g}: j†(k, α) (lines: α_c, α_grow, α_R3)")
    bar = fig.colorbar(mesh, ax=ax_h, ticks=range(d + 1))
    bar.ax.set_yticklabels(["collapsed"] + [f"j†={k}" for k in range(1, d + 1)])
    for frac in (0.2, 0.4, 0.6, 0.8):
        row = int(frac * (alphas.size - 1))
        ax_t.loglog(iters[1:], np.maximum(heat.tau[row, 1:], 1e-12), label=f"α/c = {alphas[row] / c:.3g}")
    ax_t.set_xlabel("iteration k")
    ax_t.set_ylabel("rescaled time τ reached")
    ax_t.set_title("τ(k) = Σ η σ(−z̃): it stalls once the margin grows")
    ax_t.legend(fontsize=8)
    return [_save(fig, outdir / "sam_l2_iterations.png")]


def _logistic_loss_from_log_w(mu, log_w):
    """ℓ(⟨β, μ⟩) = log(1 + e^{−margin}), margin = Σ μ_j e^{2 ln w_j}, overflow-safe (ln w may be ±inf)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        margin = np.sum(mu * np.exp(2.0 * log_w), axis=-1)
        margin = np.where(np.isnan(margin), 0.0, margin)
        return np.logaddexp(0.0, -margin)


def _sam_l2_plateau(outdir: Path, tier: str) -> list[Path]:
    """Loss and β_j over τ just above α_c: the plateau at β ≈ (ρ²/2) e₁, then the escape."""
    from biasaudit.numerics.l2_reduction import l2_reduction_trajectory
    from biasaudit.numerics.l2_boundaries import l2_sam_regime_boundaries

    plt = _pyplot()
    mu = np.array(SAM_MU)
    d = mu.size
    reg = l2_sam_regime_boundaries(mu, SAM_RHO)
    c, ac = reg.c, reg.alpha_collapse
    tau = np.linspace(0.0, 150.0, _size(tier, 1500, 6000))
    deltas = (1e-1, 1e-3, 1e-5, 1e-7)
    fig, (ax_loss, ax_beta) = plt.subplots(1, 2, figsize=(12, 4.5), constrained_layout=True)
    for k, delta in enumerate(deltas):
        traj = l2_reduction_trajectory(mu, np.full(d, ac * (1 + delta)), c, tau)
        color = plt.get_cmap("plasma")(k / len(deltas))
        ax_loss.plot(tau, _logistic_loss_from_log_w(mu, traj.log_w), color=color,
                     label=f"l2-SAM, α = α_c(1+{delta:g})")
        esc = np.log(1.0 / delta) / mu[0]
        ax_loss.axvline(esc, color=color, lw=0.8, ls=":")
        if k == len(deltas) - 1:
            with np.errstate(over="ignore", divide="ignore"):
                beta = np.exp(2.0 * traj.log_w)
            for j in range(d):
                ax_beta.semilogy(tau, beta[:, j], label=f"β_{j + 1}")
            ax_beta.set_title(f"β_j(τ) at α = α_c(1+{delta:g})")
    below = l2_reduction_trajectory(mu, np.full(d, 0.9 * ac), c, tau)
    ax_loss.plot(tau, _logistic_loss_from_log_w(mu, below.log_w), color="gray", label="l2-SAM, α = 0.9 α_c")
    gd_log_w = np.log(ac) + mu * tau[:, None]
    ax_loss.plot(tau, _logistic_loss_from_log_w(mu, gd_log_w), color="black", ls="--", label="GD, α = α_c")
    ax_loss.axhline(np.log(2.0), color="gray", lw=0.6)
    ax_loss.set_xlabel("rescaled time τ")
    ax_loss.set_ylabel("logistic loss")
    ax_loss.set_title("Loss plateau; dotted: (1/μ₁) ln(1/δ) (escape time up to O(1))")
    ax_loss.legend(fontsize=8)
    ax_beta.axhline(c * c, color="crimson", ls="--", lw=1, label="ρ²/2 (plateau level of β₁)")
    ax_beta.set_ylim(1e-6, 1e3)
    ax_beta.set_xlabel("rescaled time τ")
    ax_beta.legend(fontsize=8)
    return [_save(fig, outdir / "sam_l2_plateau.png")]


# ---- paper 1: l_inf-SAM limit map --------------------------------------------------------------------------
LINF_MU = (1.0, 2.0)
LINF_RHO = 0.1


def _linf_limit_class(limit, d: int) -> int:
    """Class of a :class:`biasaudit.theory.sam_linf.LinfLimit`: 1..d = e_k, d+1 = fixed (ρ^L·1_E), 0 = β → 0."""
    if limit.kind == "basis":
        return int(limit.index)
    if limit.kind == "fixed":
        return d + 1
    if limit.kind == "zero":
        return 0
    raise ValueError(f"unknown l_inf limit kind {limit.kind!r}")


def _linf_simulated_class(mu, alpha, rho: float, depth: int, d: int) -> int:
    """The same class, read off an integrated reduced flow (numerics.flows): an independent check."""
    from biasaudit.numerics.flows import integrate_reduced_flow

    run = integrate_reduced_flow("linf", mu, alpha, rho, depth, 400.0 / mu[0], n_out=2)
    w = run.w[-1]
    if run.status == "collapsed" or np.max(np.abs(w)) <= 1e-6 * rho:
        return 0
    if run.status == "blowup" or np.max(w) > 10.0 * rho:
        return int(np.argmax(np.abs(w) ** depth)) + 1
    return d + 1


def _sam_linf_limit_map(outdir: Path, tier: str) -> list[Path]:
    """The predicted limit of β (e_k, fixed, or 0) over a per-coordinate init grid at L = 2 and L = 3,
    with simulated flows at coarse grid points drawn on top (marker colour = simulated class)."""
    from matplotlib.colors import BoundaryNorm, ListedColormap

    from biasaudit.plumbing import InputError
    from biasaudit.theory.sam_linf import linf_sam_limit

    plt = _pyplot()
    mu = np.array(LINF_MU)
    d = mu.size
    n, n_sim = _size(tier, 121, 301), _size(tier, 9, 15)
    grid = np.linspace(0.0, 3.0 * LINF_RHO, n + 1)[1:]
    coarse = (np.arange(n_sim) + 0.5) / n_sim * 3.0 * LINF_RHO + 0.013 * LINF_RHO  # off the lines α_j = ρ
    colors = ["#bdbdbd", "#1f77b4", "#ff7f0e", "#2ca02c"]
    cmap, norm = ListedColormap(colors), BoundaryNorm(np.arange(-0.5, d + 2.5), d + 2)
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), constrained_layout=True)
    disagreements = 0
    for ax, depth in zip(axes, (2, 3)):
        classes = np.full((n, n), np.nan)
        for i, a2 in enumerate(grid):
            for j, a1 in enumerate(grid):
                try:
                    classes[i, j] = _linf_limit_class(linf_sam_limit(mu, np.array([a1, a2]), LINF_RHO, depth), d)
                except InputError:  # an exact tie of the L >= 3 scores: no single limit (left blank)
                    pass
        mesh = ax.pcolormesh(grid / LINF_RHO, grid / LINF_RHO, np.ma.masked_invalid(classes), cmap=cmap,
                             norm=norm, shading="nearest")
        for a2 in coarse:
            for a1 in coarse:
                alpha = np.array([a1, a2])
                sim = _linf_simulated_class(mu, alpha, LINF_RHO, depth, d)
                predicted = _linf_limit_class(linf_sam_limit(mu, alpha, LINF_RHO, depth), d)
                disagreements += sim != predicted
                ax.plot(a1 / LINF_RHO, a2 / LINF_RHO, "o", ms=7, mfc=colors[sim],
                        mec="black" if sim == predicted else "red", mew=0.8 if sim == predicted else 2.5)
        ax.axvline(1.0, color="k", lw=0.6)
        ax.axhline(1.0, color="k", lw=0.6)
        ax.set_xlabel("α₁ / ρ")
        ax.set_ylabel("α₂ / ρ")
        ax.set_title(f"l∞-SAM limit, depth L = {depth}, μ = {tuple(mu.tolist())}, ρ = {LINF_RHO:g}")
    bar = fig.colorbar(mesh, ax=axes, ticks=range(d + 2))
    bar.ax.set_yticklabels(["β → 0"] + [f"β/‖β‖ → e_{k}" for k in range(1, d + 1)] + ["β → ρ^L·1_E (fixed)"])
    fig.suptitle("Background: the limit rule (theory.sam_linf); dots: integrated flows (numerics.flows), "
                 f"colour = simulated limit, red edge = disagreement ({disagreements} of {2 * n_sim**2})")
    return [_save(fig, outdir / "sam_linf_limit_map.png")]


# ---- paper 2: GD on the shared-weight diagonal model ---------------------------------------------------------
EOS_X, EOS_Y, EOS_W0 = (1.0, 2.0), 1.0, (0.1, 0.1)  # the spec's toy
EOS_X3, EOS_W03 = (0.5, 1.0, 2.0), (0.1, 0.1, 0.1)


def _eos_sweep(x, w0, tier: str, eta_max: float):
    from biasaudit.numerics.eos_gd import gd_sweep

    n = _size(tier, 400, 2000)
    rng = np.random.default_rng(0)  # eta drawn at random, sorted: no eta lands on a factor that hits 0 exactly
    eta = np.sort(rng.uniform(0.02, eta_max, n))
    return gd_sweep(np.array(x), EOS_Y, np.array(w0), eta, max_steps=_size(tier, 20_000, 100_000))


def _outcome_style():
    """Marker per outcome code (numerics.eos_gd.OUTCOMES); diverged (3) runs are not drawn. Unsettled (4) runs
    ran out of steps while still settling: their final state is a snapshot (grey crosses)."""
    return {0: ("converged", "o", "#1f77b4"), 1: ("period-2", "s", "#ff7f0e"),
            2: ("bounded-chaotic", "^", "#d62728"), 4: ("unsettled (out of steps)", "x", "#7f7f7f")}


def _eos_sharpness(outdir: Path, tier: str) -> list[Path]:
    """Final sharpness against η, with 2/η, s_GF and η_c = 2/s_GF; and the norms against η."""
    from biasaudit.theory.eos_flow import eos_regimes

    plt = _pyplot()
    reg = eos_regimes(EOS_X, EOS_Y, EOS_W0)
    sweep = _eos_sweep(EOS_X, EOS_W0, tier, 0.6)
    eta = sweep.eta
    fig, (ax_s, ax_n) = plt.subplots(1, 2, figsize=(12, 4.6), constrained_layout=True)
    for code, (name, marker, color) in _outcome_style().items():
        m = sweep.outcome == code
        if m.any():
            ax_s.plot(eta[m], sweep.sharpness[m], marker, ms=2.5, color=color, label=f"GD, {name}")
            ax_n.plot(eta[m], sweep.beta_l1[m], marker, ms=2.5, color=color, label=f"‖β‖₁ = ‖w‖₂², {name}")
            ax_n.plot(eta[m], sweep.w_l1[m], marker, ms=2, color=color, alpha=0.45,
                      label=f"‖w‖₁, {name}" if code == 0 else None)
    grid = np.linspace(eta.min(), eta.max(), 400)
    ax_s.plot(grid, 2.0 / grid, "k--", lw=1, label="2/η")
    try:  # the measured kink of S_final(η) (numerics.eos_sweep), on the converged runs below the chaos
        from biasaudit.numerics.eos_sweep import kink_location

        ok = sweep.converged & (eta < 0.9 * reg.eta_stable_max)
        kink = kink_location(eta[ok], sweep.lambda_max[ok])
        ax_s.axvline(kink, color="darkgreen", lw=1, ls="-.", label=f"measured kink η = {kink:.4g}")
    except ImportError:
        pass
    ax_s.axhline(reg.s_gf, color="gray", lw=1, label=f"s_GF = {reg.s_gf:.4g}")
    for ax in (ax_s, ax_n):
        ax.axvline(reg.eta_c, color="crimson", lw=1.2, label=f"η_c = 2/s_GF = {reg.eta_c:.4g}")
        ax.axvline(reg.eta_stable_max, color="crimson", lw=0.8, ls=":",
                   label=f"stable minima exist up to η = {reg.eta_stable_max:.3g}")
        ax.set_xlabel("step size η")
    n_div = int(np.sum(sweep.outcome == 3))
    ax_s.set_ylim(0, 1.3 * reg.s_gf)
    ax_s.set_ylabel("final sharpness ‖∇²L‖₂")
    ax_s.set_title(f"x = {EOS_X}, y = {EOS_Y:g}, w₀ = {EOS_W0} ({n_div} diverged runs not shown)")
    ax_s.legend(fontsize=7)
    ax_n.set_ylabel("norm of the final iterate")
    ax_n.set_title("Norms against η")
    ax_n.legend(fontsize=7)
    return [_save(fig, outdir / "eos_sharpness_norms_vs_eta.png")]


def _eos_pareto(outdir: Path, tier: str) -> list[Path]:
    """The Pareto front min ‖β‖₁ s.t. S ≤ s, with the converged GD endpoints (d = 2 and d = 3)."""
    from biasaudit.theory.eos_flow import eos_regimes
    from biasaudit.theory.eos_minimizers import pareto_breakpoints, pareto_front

    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), constrained_layout=True)
    for ax, x, w0 in ((axes[0], EOS_X, EOS_W0), (axes[1], EOS_X3, EOS_W03)):
        reg = eos_regimes(x, EOS_Y, w0)
        sweep = _eos_sweep(x, w0, tier, 1.05 * reg.eta_stable_max)
        ok = sweep.converged
        corners = pareto_breakpoints(np.array(x), EOS_Y)
        s = np.linspace(corners[0, 0], corners[-1, 0], 400)
        ax.plot(s, pareto_front(np.array(x), EOS_Y, s), "k-", lw=1.5, label="Pareto front N*(s)")
        ax.plot(corners[:, 0], corners[:, 1], "ko", ms=4)
        scatter = ax.scatter(sweep.sharpness[ok], sweep.beta_l1[ok], c=sweep.eta[ok], s=7, cmap="viridis",
                             label="GD endpoints (converged)")
        ax.plot([reg.sharpness_gf], [reg.beta_gf_l1], "r*", ms=11, label="gradient-flow limit")
        ax.set_xlabel("sharpness S = 4Σ x_i² β_i")
        ax.set_ylabel("‖β‖₁")
        ax.set_title(f"x = {x}, y = {EOS_Y:g}")
        ax.legend(fontsize=8)
        fig.colorbar(scatter, ax=ax, label="η")
    return [_save(fig, outdir / "eos_pareto_front.png")]


def _eos_risk(outdir: Path, tier: str) -> list[Path]:
    """Risk of the GD endpoint against η: the Bayes risk, and ‖β − β*‖² for a fixed teacher."""
    from biasaudit.theory.eos_flow import eos_regimes
    from biasaudit.theory.eos_minimizers import d2_beta_of_sharpness
    from biasaudit.theory.eos_risk import bayes_optimal_risk, bayes_risk, fixed_teacher_risk_curve

    plt = _pyplot()
    x = np.array(EOS_X)
    reg = eos_regimes(EOS_X, EOS_Y, EOS_W0)
    sweep = _eos_sweep(EOS_X, EOS_W0, tier, reg.eta_stable_max)
    ok = sweep.converged
    s_star = 0.5 * (4 * EOS_Y * x.min() + reg.s_gf)  # inside (4 y x_min, S_GF): the U-shape condition
    beta_star = d2_beta_of_sharpness(x, EOS_Y, s_star)
    fig, (ax_b, ax_f) = plt.subplots(1, 2, figsize=(12, 4.5), constrained_layout=True)
    ax_b.plot(sweep.eta[ok], bayes_risk(x, EOS_Y, sweep.beta[ok]) / bayes_optimal_risk(x, EOS_Y), ".", ms=3,
              label="GD endpoint")
    ax_b.axhline(4.0, color="gray", ls=":", label="vertices (4× optimal at d = 2)")
    ax_b.set_ylabel("E R(β) / optimal")
    ax_b.set_title("Bayes risk (teacher uniform on the simplex)")
    ax_f.plot(sweep.eta[ok], np.sum((sweep.beta[ok] - beta_star) ** 2, axis=1), ".", ms=3, label="GD endpoint")
    grid = np.linspace(sweep.eta.min(), sweep.eta.max(), 400)
    ax_f.plot(grid, fixed_teacher_risk_curve(x, EOS_Y, beta_star, reg.s_gf, grid), "k--", lw=1,
              label="‖β(min(2/η, S_GF)) − β*‖²")
    ax_f.axvline(2.0 / s_star, color="crimson", lw=1, label="η = 2/S(β*)")
    ax_f.set_ylabel("‖β − β*‖²")
    ax_f.set_title(f"fixed teacher β* = {np.round(beta_star, 4).tolist()} (S(β*) = {s_star:.3g})")
    for ax in (ax_b, ax_f):
        ax.axvline(reg.eta_c, color="crimson", lw=0.8, ls="--", label=f"η_c = {reg.eta_c:.3g}")
        ax.set_xlabel("step size η")
        ax.legend(fontsize=8)
    return [_save(fig, outdir / "eos_risk_vs_eta.png")]


def _eos_outcomes(outdir: Path, tier: str) -> list[Path]:
    """The eos numerics' own sweep figure (``biasaudit.figures_eos.sweep_figure``): sharpness, ‖β‖₁ and
    the outcome class (converged / period-2 / bounded-chaotic / diverged / unsettled) against η on the toy."""
    from biasaudit.figures_eos import sweep_figure
    from biasaudit.numerics.eos_sweep import sweep_eos

    sweep = sweep_eos(EOS_X, EOS_Y, EOS_W0, 0.02, 0.6, _size(tier, 600, 3000),
                      max_steps=_size(tier, 20_000, 100_000))
    return [_save(sweep_figure(sweep), outdir / "eos_outcome_classes.png")]


FIGURES: tuple[FigureJob, ...] = (
    FigureJob("sam-l2-heatmap", "sam", "j†(τ, α) heatmaps for l2-SAM beside GD, regime boundaries drawn",
              ("sam.l2.regime*", "sam.l2.alpha_*", "sam.l2.jdagger_formula", "sam.l2.switch_times",
               "sam.l2.monotone_in_alpha", "sam.l2.nonmonotone_in_tau", "sam.l2.sandwich", "sam.gd.l2_closed_form"),
              _sam_l2_heatmap,
              caption="Flow in rescaled time, uniform α, from the exact log-linear reduction (A-ODE).",
              requires=("biasaudit.numerics.l2_boundaries:l2_sam_regime_boundaries", "biasaudit.numerics.heatmap:dominant_index_heatmap")),
    FigureJob("sam-l2-iterations", "sam", "j† over iterations of discrete l2-SAM, and the τ it reaches",
              ("sam.l2.discrete_vs_flow", "sam.l2.discrete_separatrix_shift", "sam.flow.euler_step"),
              _sam_l2_iterations,
              caption="The same heatmap as above, over iterations instead of rescaled time.",
              requires=("biasaudit.numerics.l2_boundaries:l2_sam_regime_boundaries", "biasaudit.numerics.heatmap:dominant_index_heatmap")),
    FigureJob("sam-l2-plateau", "sam", "Loss curves of l2-SAM just above α_c: the plateau and the escape",
              ("sam.l2.plateau_law", "sam.l2.regime1_collapse", "sam.l2.regime2_sequential", "sam.l2.asymptotics",
               "sam.l2.log_linear_reduction", "sam.l2.certificates"), _sam_l2_plateau,
              requires=("biasaudit.numerics.l2_boundaries:l2_sam_regime_boundaries", "biasaudit.numerics.l2_reduction:l2_reduction_trajectory")),
    FigureJob("sam-linf-limit-map", "sam", "l∞-SAM limit map over a per-coordinate init grid",
              ("sam.linf.*",), _sam_linf_limit_map,
              caption=f"μ = {LINF_MU}, ρ = {LINF_RHO}; prediction of the limit rule (theory.sam_linf).",
              requires=("biasaudit.theory.sam_linf:linf_sam_limit",)),
    FigureJob("eos-sharpness-norms", "eos", "Final sharpness and norms against η, with 2/η and η_c",
              ("eos.s_gf.*", "eos.gd.tracking_gap", "eos.gd.kink*", "eos.gd.flow_aligned_linear",
               "eos.gd.outcome_classes", "eos.gd.toy_numbers", "eos.gd.projected_monotone", "eos.gd.float64_vs_mpmath",
               "eos.stable_minima.*", "eos.gf.*"), _eos_sharpness,
              caption="GD on the spec's toy; η drawn at random (sorted) so no factor 1 − 2ηr x hits 0.",
              requires=("biasaudit.numerics.eos_gd:gd_sweep", "biasaudit.theory.eos_flow:eos_regimes")),
    FigureJob("eos-outcomes", "eos", "GD outcome class against η (converged, period-2, chaotic, diverged)",
              ("eos.gd.outcome_classes", "eos.gd.toy_numbers", "eos.gd.float64_vs_mpmath"), _eos_outcomes,
              caption="Drawn by biasaudit.figures_eos.sweep_figure (the eos module's own plot) on an even η grid.",
              requires=("biasaudit.figures_eos:sweep_figure", "biasaudit.numerics.eos_sweep:sweep_eos")),
    FigureJob("eos-pareto", "eos", "Pareto front of ‖β‖₁ against sharpness, with the GD endpoints",
              ("eos.pareto.*", "eos.gd.d2_endpoints_on_front", "eos.gd.d3_*", "eos.min_norm.*", "eos.min_sharpness.*",
               "eos.minimizers.*"), _eos_pareto,
              requires=("biasaudit.numerics.eos_gd:gd_sweep", "biasaudit.theory.eos_minimizers:pareto_front")),
    FigureJob("eos-risk", "eos", "Risk of the GD endpoint against η", ("eos.*risk*",), _eos_risk,
              requires=("biasaudit.numerics.eos_gd:gd_sweep", "biasaudit.theory.eos_risk:fixed_teacher_risk_curve")),
)


def all_figures(modules: tuple[str, ...] = ()) -> tuple[FigureJob, ...]:
    """The jobs here plus the ``FIGURES`` of every registered (and extra) claim module."""
    from biasaudit.registry import claim_modules

    jobs = list(FIGURES)
    for name in dict.fromkeys((*claim_modules(), *modules)):
        try:
            module = importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module that fails to import is reported by the audit itself
            continue
        jobs.extend(getattr(module, "FIGURES", ()))
    ids = [j.id for j in jobs]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise RuntimeError(f"duplicate figure ids: {duplicates}")
    return tuple(jobs)


def get_figure(figure_id: str, modules: tuple[str, ...] = ()) -> FigureJob:
    for job in all_figures(modules):
        if job.id == figure_id:
            return job
    raise LookupError(f"figure {figure_id!r} is not registered on this worker")


def figure_available(job: FigureJob, tier: str = "quick") -> tuple[bool, str]:
    """Whether every ``requires`` entry imports and the job's own precondition holds; if not, the reason."""
    for requirement in job.requires:
        module, _, attribute = requirement.partition(":")
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            return False, f"{module} cannot be imported ({exc})"
        if attribute and not hasattr(mod, attribute):
            return False, f"{module} has no {attribute} yet"
    why = job.unavailable_because(tier) if job.unavailable_because is not None else None
    return (False, why) if why else (True, "")


def figures_for_claims(claim_ids, modules: tuple[str, ...] = ()) -> list[FigureJob]:
    """Jobs that illustrate at least one of ``claim_ids`` (in registry order)."""
    ids = list(claim_ids)
    return [job for job in all_figures(modules) if any(job.illustrates(c) for c in ids)]
