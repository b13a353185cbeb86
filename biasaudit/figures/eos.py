"""Figures of paper 2 ("Conflicting Biases at the Edge of Stability") from the theory and numerics, on the
toy model (shared-weight diagonal model, x = (1, 2), y = 1, w0 = 0.1·1): final sharpness and norms against η, the GD outcome classes, the
Pareto front with the GD endpoints, and the risk of the endpoint against η. Plotting only: the numbers come
from :mod:`biasaudit.theory` and :mod:`biasaudit.numerics`.

:func:`sweep_figure` is also the ``biasaudit sweep eos --plot`` figure (three panels sharing η).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from biasaudit.figures._common import pyplot as _pyplot
from biasaudit.figures._common import save as _save
from biasaudit.figures._common import size as _size

__all__ = ["eos_sharpness", "eos_outcomes", "eos_pareto", "eos_risk", "eos_central_flow", "sweep_figure",
           "outcome_style", "EOS_X", "EOS_Y", "EOS_W0", "EOS_X3", "EOS_W03", "CF_X", "CF_Y", "CF_W0"]

EOS_X, EOS_Y, EOS_W0 = (1.0, 2.0), 1.0, (0.1, 0.1)  # the toy model
EOS_X3, EOS_W03 = (0.5, 1.0, 2.0), (0.1, 0.1, 0.1)
CF_X, CF_Y, CF_W0 = (0.7, 1.3, 2.1), 1.5, (0.05, 0.05, 0.05)  # the central-flow toy (eta_c = 0.1638)


def _eos_sweep(x, w0, tier: str, eta_max: float):
    from biasaudit.numerics.eos_gd import gd_sweep

    n = _size(tier, 400, 2000)
    rng = np.random.default_rng(0)  # eta drawn at random, sorted: no eta lands on a factor that hits 0 exactly
    eta = np.sort(rng.uniform(0.02, eta_max, n))
    return gd_sweep(np.array(x), EOS_Y, np.array(w0), eta, max_steps=_size(tier, 20_000, 100_000))


def outcome_style():
    """Marker per outcome code (numerics.eos_gd.OUTCOMES); diverged (3) runs are not drawn. Unsettled (4) runs
    ran out of steps while still settling: their final state is a snapshot (grey crosses)."""
    return {0: ("converged", "o", "#1f77b4"), 1: ("period-2", "s", "#ff7f0e"),
            2: ("bounded-chaotic", "^", "#d62728"), 4: ("unsettled (out of steps)", "x", "#7f7f7f")}


def eos_sharpness(outdir: Path, tier: str) -> list[Path]:
    """Final sharpness against η, with 2/η, s_GF and η_c = 2/s_GF; and the norms against η."""
    from biasaudit.theory.eos_flow import eos_regimes

    plt = _pyplot()
    reg = eos_regimes(EOS_X, EOS_Y, EOS_W0)
    sweep = _eos_sweep(EOS_X, EOS_W0, tier, 0.6)
    eta = sweep.eta
    fig, (ax_s, ax_n) = plt.subplots(1, 2, figsize=(12, 4.6), constrained_layout=True)
    for code, (name, marker, color) in outcome_style().items():
        m = sweep.outcome == code
        if m.any():
            ax_s.plot(eta[m], sweep.sharpness[m], marker, ms=2.5, color=color, label=f"GD, {name}")
            ax_n.plot(eta[m], sweep.beta_l1[m], marker, ms=2.5, color=color, label=f"‖β‖₁ = ‖w‖₂², {name}")
            ax_n.plot(eta[m], sweep.w_l1[m], marker, ms=2, color=color, alpha=0.45,
                      label=f"‖w‖₁, {name}" if code == 0 else None)
    grid = np.linspace(eta.min(), eta.max(), 400)
    ax_s.plot(grid, 2.0 / grid, "k--", lw=1, label="2/η")
    from biasaudit.numerics.eos_sweep import measured_kink  # the claims' own estimator and value

    kink = measured_kink(EOS_X, EOS_Y, EOS_W0, reg.eta_c)
    if kink is not None:
        ax_s.axvline(kink, color="darkgreen", lw=1, ls="-.", label=f"measured kink η = {kink:.5g} "
                                                                    "(eos.gd.kink_location)")
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


def eos_pareto(outdir: Path, tier: str) -> list[Path]:
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


def eos_risk(outdir: Path, tier: str) -> list[Path]:
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


def eos_central_flow(outdir: Path, tier: str) -> list[Path]:
    """‖β‖₂ and the Bayes risk of the endpoint against η/η_c: GD's sweep, the central flow's curve, the gradient
    flow's value, and the min-norm and min-sharpness vertices as horizontal lines."""
    from biasaudit.numerics.eos_central_flow import central_flow_curve
    from biasaudit.numerics.eos_gd import gd_sweep
    from biasaudit.theory.eos_flow import eos_regimes
    from biasaudit.theory.eos_risk import bayes_risk

    plt = _pyplot()
    x = np.array(CF_X)
    reg = eos_regimes(CF_X, CF_Y, CF_W0)
    q = np.linspace(0.5, 2.0, _size(tier, 200, 600))
    flows = central_flow_curve(CF_X, CF_Y, CF_W0, q * reg.eta_c)
    sweep = gd_sweep(x, CF_Y, np.array(CF_W0), q * reg.eta_c, max_steps=_size(tier, 100_000, 100_000))
    ok = sweep.converged
    beta_gf = np.array(reg.beta_gf)
    vertices = {"min-norm vertex": np.eye(x.size)[np.argmax(x)] * CF_Y / x.max(),
                "min-sharpness vertex": np.eye(x.size)[np.argmin(x)] * CF_Y / x.min()}
    fig, (ax_n, ax_r) = plt.subplots(1, 2, figsize=(12, 4.5), constrained_layout=True)
    for ax, value, label in ((ax_n, lambda b: np.linalg.norm(b, axis=-1), "‖β‖₂"),
                             (ax_r, lambda b: bayes_risk(x, CF_Y, b), "E R(β) (Bayes risk)")):
        ax.plot(q[ok], value(sweep.beta[ok]), ".", ms=3, color="#1f77b4", label="GD endpoint (converged)")
        ax.plot(q, value(np.array([f.beta for f in flows])), "-", lw=1.2, color="k", label="central flow")
        ax.axhline(float(value(beta_gf)), color="#2ca02c", ls="--", lw=1, label="gradient flow (β_GF)")
        for (name, beta), style in zip(vertices.items(), (":", "-.")):
            ax.axhline(float(value(beta)), color="gray", ls=style, lw=1, label=name)
        ax.axvline(1.0, color="crimson", lw=0.8, ls="--", label="η = η_c")
        ax.set_xlabel("η / η_c")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
    ax_n.set_title(f"x = {CF_X}, y = {CF_Y}, w0 = 0.05·1, η_c = {reg.eta_c:.4g}")
    return [_save(fig, outdir / "eos_central_flow.png")]


def eos_outcomes(outdir: Path, tier: str) -> list[Path]:
    """The eos numerics' own sweep figure (:func:`sweep_figure`): sharpness, ‖β‖₁ and the outcome class
    (converged / period-2 / bounded-chaotic / diverged / unsettled) against η on the toy."""
    from biasaudit.numerics.eos_sweep import sweep_eos

    sweep = sweep_eos(EOS_X, EOS_Y, EOS_W0, 0.02, 0.6, _size(tier, 600, 3000),
                      max_steps=_size(tier, 20_000, 100_000))
    return [_save(sweep_figure(sweep), outdir / "eos_outcome_classes.png")]


_COLORS = ("tab:green", "tab:orange", "tab:purple", "tab:red", "tab:gray")


def sweep_figure(sweep):
    """Three stacked panels sharing η: final sharpness with 2/η and η_c; norms; outcome class."""
    from biasaudit.numerics.eos_gd import OUTCOMES

    plt = _pyplot()
    s, reg = sweep.gd, sweep.regimes
    ok = s.converged
    fig, axes = plt.subplots(3, 1, figsize=(7.5, 8.5), sharex=True, gridspec_kw={"height_ratios": [3, 2, 1]})
    ax = axes[0]
    ax.plot(s.eta[ok], s.sharpness[ok], ".", ms=3, color="tab:blue", label="final sharpness max|λ| (converged)")
    eta_line = np.linspace(s.eta.min(), s.eta.max(), 400)
    ax.plot(eta_line, 2 / eta_line, "k--", lw=1, label="2/η")
    ax.axhline(reg.s_gf, color="tab:gray", lw=0.8, ls=":", label=f"s_GF = {reg.s_gf:.4g}")
    ax.axvline(reg.eta_c, color="tab:red", lw=1, label=f"η_c = 2/s_GF = {reg.eta_c:.4g}")
    if sweep.kink is not None:
        ax.axvline(sweep.kink, color="tab:orange", lw=1, ls="--", label=f"measured kink {sweep.kink:.5g} "
                                                                         "(eos.gd.kink_location)")
    ax.axvline(reg.eta_stable_max, color="tab:purple", lw=0.8, ls="-.",
               label=f"no stable minima above {reg.eta_stable_max:.4g}")
    top = max(reg.s_gf, float(np.max(s.sharpness[ok])) if ok.any() else reg.s_gf) * 1.15
    ax.set_ylim(0, top)
    ax.set_ylabel("sharpness")
    ax.set_title(f"GD on f = <w⊙w, x>: x = {np.round(s.x, 3).tolist()}, y = {s.y:g}, "
                 f"w0 = {np.round(s.w0, 3).tolist()}", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    ax = axes[1]
    ax.plot(s.eta[ok], s.beta_l1[ok], ".", ms=3, color="tab:blue", label="‖β‖₁ = ‖w‖₂²")
    ax.plot(s.eta[ok], s.w_l1[ok], ".", ms=3, color="tab:cyan", label="‖w‖₁")
    ax.axhline(reg.min_norm_beta_l1, color="tab:gray", lw=0.8, ls=":", label="min ‖β‖₁ = y/x_max")
    ax.axvline(reg.eta_c, color="tab:red", lw=1)
    ax.set_ylabel("norm (converged)")
    ax.legend(fontsize=7, loc="upper left")
    ax = axes[2]
    for k, name in enumerate(OUTCOMES):
        m = s.outcome == k
        ax.plot(s.eta[m], np.full(m.sum(), k), "|", ms=10, color=_COLORS[k])
    ax.set_yticks(range(len(OUTCOMES)), OUTCOMES, fontsize=7)
    ax.set_ylim(-0.5, len(OUTCOMES) - 0.5)
    ax.axvline(reg.eta_c, color="tab:red", lw=1)
    ax.set_xlabel("step size η")
    fig.tight_layout()
    return fig
