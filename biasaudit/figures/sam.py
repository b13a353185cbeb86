"""Figures of paper 1 ("Minor First, Major Last") from the theory and numerics: l2-SAM's dominant index
j†(τ, α) beside GD, j† over iterations of discrete l2-SAM, the loss plateau just above α_c, and the l∞-SAM
limit map. Plotting only: the numbers come from :mod:`biasaudit.theory` and :mod:`biasaudit.numerics`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from biasaudit.figures._common import pyplot as _pyplot
from biasaudit.figures._common import save as _save
from biasaudit.figures._common import size as _size

__all__ = ["sam_l2_heatmap", "sam_l2_iterations", "sam_l2_plateau", "sam_linf_limit_map", "SAM_MU", "SAM_RHO",
           "SAM_SWITCH_REFERENCE", "LINF_MU", "LINF_RHO"]


# The five-feature example: mu = (1, 1.5, 2, 2.5, 3); rho = 1, joint normalisation (c = rho/sqrt 2).
# Only alpha/c matters and tau is invariant to scaling w with c, so rho = 1 loses nothing.
SAM_MU = (1.0, 1.5, 2.0, 2.5, 3.0)
SAM_RHO = 1.0


# The reference switch times (derived here, sam.l2.switch_times) for this mu at alpha = alpha_c (1 + 1e-8): j† = 1→2→3→4→5 at these tau.
SAM_SWITCH_REFERENCE = (1e-8, (42.0, 58.7, 75.5, 92.3))


def sam_l2_heatmap(outdir: Path, tier: str) -> list[Path]:
    """j†(τ, α) for l2-SAM beside GD, with α_c, α_grow and the regime-3 boundary drawn.

    Three panels: l2-SAM over α/c (log τ, to show the early transient between α_grow and α_R3), l2-SAM
    zoomed onto δ = α/α_c − 1 (linear τ, the sequential amplification 1 → … → d with the reference switch
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
    ax.plot(ref_taus, [ref_delta] * len(ref_taus), "wx", ms=9, mew=2, label="reference switch times at δ = 1e−8")
    ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    bar = fig.colorbar(mesh, ax=axes, ticks=range(d + 1))
    bar.ax.set_yticklabels(["collapsed"] + [f"j†={k}" for k in range(1, d + 1)])
    fig.suptitle(f"Dominant index j† = argmax_j β_j, μ = {tuple(mu.tolist())}, ρ = {SAM_RHO:g} (flow, exact "
                 "log-linear reduction): collapse below α_c, sequential amplification up to α_R3, GD-like above")
    return [_save(fig, outdir / "sam_l2_jdagger_heatmap.png")]


def sam_l2_iterations(outdir: Path, tier: str) -> list[Path]:
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


def sam_l2_plateau(outdir: Path, tier: str) -> list[Path]:
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


# ---- l_inf-SAM limit map --------------------------------------------------------------------------
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


def sam_linf_limit_map(outdir: Path, tier: str) -> list[Path]:
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
