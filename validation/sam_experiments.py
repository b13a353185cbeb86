"""Does SAM attend to minor (low-intensity) features more than GD on trained networks? The two fixed-alpha
experiments.

Paper 1's empirical claim: on CNNs, SAM in the intermediate regime puts more Grad-CAM attention on
background / low-intensity pixels ("minor features") than GD, which attends to the high-contrast object; on
a controlled task with a bright "major" and a faint "minor" patch (both predictive), SAM uses the minor patch
first. :func:`minor_mass_experiment` and :func:`synthetic_patch_experiment` train paired GD / SAM runs at
fixed init scales and measure that, with the measured traps built in (notes/validation-sam.md). (The audit's claims run the regime
grids of :mod:`biasaudit.validation.sam_regimes` instead, which first locate SAM's collapse boundary.)

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
  say nothing about feature bias), else ``ok``. Only seeds whose GD *and* SAM runs are ``ok``
  enter the statistics; the others are listed with their reason.

Where the pieces live: the sizes in :data:`biasaudit.validation.sam_config.SAM_SIZES`, one run in
:mod:`biasaudit.validation.sam_training`, the run cache in :mod:`biasaudit.validation.sam_runs` (one JSON file
per run keyed by its configuration and training code, so an interrupted experiment resumes and the figures
reuse the claims' runs), the seed-level paired statistics, accuracy matching and the verdict rule in
:mod:`biasaudit.validation.sam_stats`, the figures in :mod:`biasaudit.figures.sam_torch`.
"""

from __future__ import annotations

from collections.abc import Callable

from biasaudit.plumbing import jsonable
from biasaudit.validation.sam_config import configs_of, experiment_settings
from biasaudit.validation.sam_runs import run_grid
from biasaudit.validation.sam_stats import paired_effect, patch_lead
from biasaudit.validation.sam_training import OPTIMIZERS

__all__ = ["minor_mass_experiment", "synthetic_patch_experiment"]


def minor_mass_experiment(tier: str = "quick", *, device: str = "cpu", data_dir: str | None = None,
                          progress: Callable[[str], None] | None = None, use_cache: bool = True,
                          **overrides) -> dict:
    """GD vs SAM Grad-CAM (and |input gradient|) mass on low-intensity pixels, per init scale.

    ``overrides`` replace tier settings (dataset, model, steps, seeds, init_scales, rho, lr, ...).
    The primary effect (the claim's) is the accuracy-matched Grad-CAM difference at the first init scale.
    """
    settings = experiment_settings("minor_mass", tier, overrides)
    grid = run_grid(configs_of(settings, device, data_dir), progress=progress, use_cache=use_cache)
    per_scale = {}
    for alpha, runs in grid.items():
        per_scale[str(alpha)] = {
            "cam_low": paired_effect(runs["gd"], runs["sam"], "cam_low"),
            "grad_low": paired_effect(runs["gd"], runs["sam"], "grad_low"),
            "status": {o: [r["status"] for r in runs[o]] for o in OPTIMIZERS},
        }
    primary = per_scale[str(settings["init_scales"][0])]["cam_low"]
    return {"kind": "minor_mass", "tier": tier, "settings": jsonable(settings), "per_scale": per_scale,
            "primary": primary, "runs": grid}


def synthetic_patch_experiment(tier: str = "quick", *, device: str = "cpu",
                               progress: Callable[[str], None] | None = None, use_cache: bool = True,
                               **overrides) -> dict:
    """The bright/faint patch task: which patch do GD and SAM learn first (ablation accuracy, Grad-CAM)?

    Primary effect: ``minor_reliance = acc(major ablated) - acc(minor ablated)``, SAM - GD, compared at the
    same training accuracy levels. Positive = SAM relies more on the faint patch. ``lead_sam``/``lead_gd``:
    :func:`~biasaudit.validation.sam_stats.patch_lead`, the absolute order in which each optimizer learns the two
    patches.
    """
    settings = experiment_settings("synthetic", tier, overrides)
    grid = run_grid(configs_of(settings, device, None), progress=progress, use_cache=use_cache)
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
    return {"kind": "synthetic", "tier": tier, "settings": jsonable(settings), "per_scale": per_scale,
            "primary": primary, "runs": grid}
