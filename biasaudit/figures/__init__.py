"""Figure jobs of the audit report: an id, the claims a figure illustrates, and ``make(outdir, tier)``.

A :class:`FigureJob` is run as one unit of work (like a claim; see :mod:`biasaudit.audit.units`), so it
can run on any worker; a job that raises becomes an ``error`` figure record, never a crash. Jobs whose
``requires`` (``"module:attribute"`` strings) cannot be imported are left out of the run and listed in the
report as unavailable.

Besides the jobs here, any claim module may define ``FIGURES: tuple[FigureJob, ...]`` (the torch
experiment claims do, for Grad-CAM overlays and sweep plots); :func:`all_figures` collects them.

Every plot of the toolkit lives in this package, one module per concept; the layers below
(plumbing, theory, numerics, validation) return numbers and never import matplotlib:

===================  ====================================================================================
module               what it draws
===================  ====================================================================================
:mod:`.sam`          paper 1 from theory and numerics: j† heatmaps, the plateau, the l∞-SAM limit map
:mod:`.eos`          paper 2's toy from theory and numerics: sharpness and norms vs η, outcome classes,
                     Pareto front, risk; :func:`~.eos.sweep_figure` (``biasaudit sweep eos --plot``)
:mod:`.sam_torch`    the SAM network experiments: Grad-CAM overlays, minor-feature curves, regime grids
:mod:`.eos_torch`    the EoS sweeps on torch networks: sharpness, norms, test error vs η; E2 per architecture
===================  ====================================================================================

Plotting only: the numbers come from the lower layers' public functions. Every ``make`` uses matplotlib's
Agg backend (imported when a figure is drawn, not when a module is imported) and writes PNGs into ``outdir``,
returning their paths.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from biasaudit.figures.eos import eos_central_flow, eos_outcomes, eos_pareto, eos_risk, eos_sharpness
from biasaudit.figures.sam import (LINF_MU, LINF_RHO, sam_l2_heatmap, sam_l2_iterations, sam_l2_plateau,
                                   sam_linf_limit_map)

__all__ = ["FigureJob", "FIGURES", "all_figures", "get_figure", "figure_available", "figures_for_claims"]


@dataclass(frozen=True)
class FigureJob:
    """One figure of the report.

    ``id``, ``paper``, ``title``; ``claims``, the claim ids or globs it illustrates; ``make(outdir, tier)`` writes its
    PNGs and returns their paths; ``caption``; ``requires``, the ``"module:attribute"`` names it needs;
    ``unavailable_because(tier)``, why it cannot run (e.g. its data are absent), or None.
    """

    id: str
    paper: str
    title: str
    claims: tuple[str, ...]  # claim ids or globs this figure illustrates
    make: Callable[[Path, str], list[Path]]
    caption: str = ""
    requires: tuple[str, ...] = ()  # "module:attribute" the job needs
    unavailable_because: Callable[[str], str | None] | None = None  # tier -> why it cannot run (data absent), or None

    def illustrates(self, claim_id: str) -> bool:
        """Whether ``claim_id`` matches one of the job's ``claims``."""
        return any(fnmatch.fnmatchcase(claim_id, pattern) for pattern in self.claims)


FIGURES: tuple[FigureJob, ...] = (
    FigureJob("sam-l2-heatmap", "sam", "j†(τ, α) heatmaps for l2-SAM beside GD, regime boundaries drawn",
              ("sam.l2.regime*", "sam.l2.alpha_*", "sam.l2.jdagger_formula", "sam.l2.switch_times",
               "sam.l2.monotone_in_alpha", "sam.l2.nonmonotone_in_tau", "sam.l2.sandwich", "sam.gd.l2_closed_form"),
              sam_l2_heatmap,
              caption="Flow in rescaled time, uniform α, from the exact log-linear reduction (A-ODE).",
              requires=("biasaudit.numerics.l2_boundaries:l2_sam_regime_boundaries", "biasaudit.numerics.heatmap:dominant_index_heatmap")),
    FigureJob("sam-l2-iterations", "sam", "j† over iterations of discrete l2-SAM, and the τ it reaches",
              ("sam.l2.discrete_vs_flow", "sam.l2.discrete_separatrix_shift", "sam.flow.euler_step"),
              sam_l2_iterations,
              caption="The same heatmap as above, over iterations instead of rescaled time.",
              requires=("biasaudit.numerics.l2_boundaries:l2_sam_regime_boundaries", "biasaudit.numerics.heatmap:dominant_index_heatmap")),
    FigureJob("sam-l2-plateau", "sam", "Loss curves of l2-SAM just above α_c: the plateau and the escape",
              ("sam.l2.plateau_law", "sam.l2.regime1_collapse", "sam.l2.regime2_sequential", "sam.l2.asymptotics",
               "sam.l2.log_linear_reduction", "sam.l2.certificates"), sam_l2_plateau,
              requires=("biasaudit.numerics.l2_boundaries:l2_sam_regime_boundaries", "biasaudit.numerics.l2_reduction:l2_reduction_trajectory")),
    FigureJob("sam-linf-limit-map", "sam", "l∞-SAM limit map over a per-coordinate init grid",
              ("sam.linf.*",), sam_linf_limit_map,
              caption=f"μ = {LINF_MU}, ρ = {LINF_RHO}; prediction of the limit rule (theory.sam_linf).",
              requires=("biasaudit.theory.sam_linf:linf_sam_limit",)),
    FigureJob("eos-sharpness-norms", "eos", "Final sharpness and norms against η, with 2/η and η_c",
              ("eos.s_gf.*", "eos.gd.tracking_gap", "eos.gd.kink*", "eos.gd.flow_aligned_linear",
               "eos.gd.outcome_classes", "eos.gd.toy_numbers", "eos.gd.projected_monotone", "eos.gd.float64_vs_mpmath",
               "eos.stable_minima.*", "eos.gf.*"), eos_sharpness,
              caption="GD on the toy model (x = (1, 2), y = 1, w0 = 0.1·1); η drawn at random (sorted) so no factor 1 − 2ηr x hits 0.",
              requires=("biasaudit.numerics.eos_gd:gd_sweep", "biasaudit.theory.eos_flow:eos_regimes")),
    FigureJob("eos-outcomes", "eos", "GD outcome class against η (converged, period-2, chaotic, diverged)",
              ("eos.gd.outcome_classes", "eos.gd.toy_numbers", "eos.gd.float64_vs_mpmath"), eos_outcomes,
              caption="Drawn by biasaudit.figures.eos.sweep_figure (the eos module's own plot) on an even η grid.",
              requires=("biasaudit.figures.eos:sweep_figure", "biasaudit.numerics.eos_sweep:sweep_eos")),
    FigureJob("eos-pareto", "eos", "Pareto front of ‖β‖₁ against sharpness, with the GD endpoints",
              ("eos.pareto.*", "eos.gd.d2_endpoints_on_front", "eos.gd.d3_*", "eos.min_norm.*", "eos.min_sharpness.*",
               "eos.minimizers.*"), eos_pareto,
              requires=("biasaudit.numerics.eos_gd:gd_sweep", "biasaudit.theory.eos_minimizers:pareto_front")),
    FigureJob("eos-risk", "eos", "Risk of the GD endpoint against η", ("eos.*risk*",), eos_risk,
              requires=("biasaudit.numerics.eos_gd:gd_sweep", "biasaudit.theory.eos_risk:fixed_teacher_risk_curve")),
    FigureJob("eos-central-flow", "eos", "‖β‖₂ and risk of the endpoint against η/η_c: GD and the central flow",
              ("eos.central_flow.*",), eos_central_flow,
              caption="The central flow (gradient flow held at S = 2/η) predicts GD's endpoint on the toy x = (0.7, 1.3, "
                      "2.1), y = 1.5, w0 = 0.05·1; horizontal lines: gradient flow and the two vertices of P.",
              requires=("biasaudit.numerics.eos_central_flow:central_flow_curve",
                        "biasaudit.numerics.eos_gd:gd_sweep")),
)


def all_figures(modules: tuple[str, ...] = ()) -> tuple[FigureJob, ...]:
    """The jobs here plus the ``FIGURES`` of every registered (and extra) claim module
    (:func:`biasaudit.registry.load`)."""
    from biasaudit.registry import load

    return load(tuple(modules)).figures


def get_figure(figure_id: str, modules: tuple[str, ...] = ()) -> FigureJob:
    """The figure job ``figure_id`` (ours or of the claim ``modules``); LookupError when this worker has none."""
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
