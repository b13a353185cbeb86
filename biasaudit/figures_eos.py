"""Figures of paper 2's toy model from the numerics (matplotlib, Agg; no math here).

* :func:`sweep_figure` — final sharpness vs η with 2/η and η_c, ‖β‖₁ vs η, and the outcome class
  (the ``biasaudit sweep eos --plot`` figure).
* :func:`pareto_figure` — the Pareto front N*(s) with the converged GD endpoints (S, ‖β‖₁).
* :func:`risk_figure` — the Bayes risk E R(β_final) of GD endpoints against η, with the optimum.
* :func:`write_eos_figures` — all three as PNGs in a directory (for the audit report).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["sweep_figure", "pareto_figure", "risk_figure", "write_eos_figures"]

_COLORS = ("tab:green", "tab:orange", "tab:purple", "tab:red", "tab:gray")


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def sweep_figure(sweep):
    """Three stacked panels sharing η: final sharpness with 2/η and η_c; norms; outcome class."""
    from biasaudit.numerics.eos_gd import OUTCOMES

    plt = _plt()
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
        ax.axvline(sweep.kink, color="tab:orange", lw=1, ls="--", label=f"measured kink {sweep.kink:.4g}")
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


def pareto_figure(sweep):
    """N*(s) with the converged GD endpoints coloured by η."""
    from biasaudit.theory.eos_minimizers import pareto_breakpoints, pareto_front

    plt = _plt()
    s = sweep.gd
    ok = s.converged
    S = 8 * s.loss_factor * s.beta[ok] @ s.x**2
    bp = pareto_breakpoints(s.x, s.y, s.loss_factor)
    grid = np.linspace(bp[0, 0], bp[-1, 0] * 1.05, 300)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.plot(grid, pareto_front(s.x, s.y, grid, s.loss_factor), "k-", lw=1, label="Pareto front N*(s)")
    sc = ax.scatter(S, s.beta_l1[ok], c=s.eta[ok], s=8, cmap="viridis", label="GD endpoints")
    fig.colorbar(sc, ax=ax, label="η")
    ax.set_xlabel("sharpness S(β)")
    ax.set_ylabel("‖β‖₁")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def risk_figure(sweep):
    """Bayes risk (uniform-simplex teacher) of the converged endpoints against η."""
    from biasaudit.theory.eos_risk import bayes_optimal_risk, bayes_risk

    plt = _plt()
    s, reg = sweep.gd, sweep.regimes
    ok = s.converged
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(s.eta[ok], bayes_risk(s.x, s.y, s.beta[ok]), ".", ms=3, label="E R(β_final)")
    ax.axhline(bayes_optimal_risk(s.x, s.y), color="tab:green", ls=":", label="optimum at β̄ = y/(d x)")
    ax.axvline(reg.eta_c, color="tab:red", lw=1, label="η_c")
    ax.set_xlabel("step size η")
    ax.set_ylabel("Bayes risk")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def write_eos_figures(sweep, directory) -> list[Path]:
    """Write ``eos_sweep.png``, ``eos_pareto.png``, ``eos_risk.png`` into ``directory``; return the paths."""
    plt = _plt()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, make in (("eos_sweep.png", sweep_figure), ("eos_pareto.png", pareto_figure), ("eos_risk.png", risk_figure)):
        fig = make(sweep)
        path = out / name
        fig.savefig(path, dpi=120)
        plt.close(fig)
        paths.append(path)
    return paths
