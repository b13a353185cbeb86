r"""SAM's collapse boundary moves with rho: a (rho, alpha) design on networks.

Paper 1's l2-SAM at depth 2 depends on alpha and rho only through alpha/c, c = rho/√2 (joint normalisation), so
its collapse threshold is alpha_c = c·g(μ): proportional to rho. GD has no rho; its behaviour cannot depend on it.
A design tests the consequence that can be read on a network with one alpha: at an init scale ``alpha`` between
SAM's boundaries for a small radius ``rho_lo`` and a large one ``rho_hi``, SAM collapses at ``rho_hi`` and fits
at ``rho_lo``. Per seed, all sharing the seed's initialisation, data and batch order:

================  ==============================================================================================
arm               run at ``alpha``
================  ==============================================================================================
``sam_hi``        l2-SAM of radius ``rho_hi``
``sam_lo``        l2-SAM of radius ``rho_lo``
``aa``            l2-SAM of radius ``rho_lo`` from seed + :data:`~biasaudit.validation.sam_regimes.AA_OFFSET`:
                  the A/A control puts it in ``sam_hi``'s place (SAM against SAM at the same rho)
``randsam_hi``,   a random perturbation of norm ``rho_hi`` / ``rho_lo`` (the same cost and noise, no
``randsam_lo``    sharpness-awareness): the RandSAM control puts them in the SAM arms' places
``gd``            plain GD: where GD itself stands at ``alpha`` (it has no rho, so GD "at both rho" would be
                  one run twice, equal by construction: a reading, not a control)
================  ==============================================================================================

Each design builds on a collapse design of :mod:`biasaudit.validation.sam_regimes` at the same tier: its ``alpha``
is that design's ``below`` alpha, ``rho_hi`` its rho (so ``sam_hi``, ``randsam_hi`` and ``gd`` are the same runs,
shared through the run cache) and ``rho_lo`` = ``rho_hi`` / :data:`RHO_FACTOR`, with the same horizon and loss
target. Every run ends with one outcome (:func:`biasaudit.validation.sam_training.run_outcome`); the statistic
is the seed's rho contrast (:func:`biasaudit.validation.sam_collapse_stats.rho_contrast`), decided under the
experiment contract by :mod:`biasaudit.claims.sam.torch.rho_scaling`.

Designs (:data:`DESIGNS`): ``diag`` (the positive control: the depth-2 diagonal network on the bright/faint patch
images, where the theory's scaling holds) and ``patch`` (the small CNN on the same images). The audit runs
``patch`` at the full tier only (:data:`AUDIT_TIERS`): its quick size costs more than the quick audit can pay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from biasaudit.plumbing import choice

__all__ = ["DESIGNS", "AUDIT_TIERS", "ARMS", "RHO_FACTOR", "design_settings", "rho_configs", "rho_experiment"]

ARMS = ("sam_hi", "sam_lo", "aa", "randsam_hi", "randsam_lo", "gd")
_ARM_RUN = {  # arm: (optimizer, radius, seed offset)
    "sam_hi": ("sam", "rho_hi", 0), "sam_lo": ("sam", "rho_lo", 0), "aa": ("sam", "rho_lo", None),
    "randsam_hi": ("randsam", "rho_hi", 0), "randsam_lo": ("randsam", "rho_lo", 0), "gd": ("gd", "rho_hi", 0)}
# rho_hi / rho_lo. Placement (pilots on seeds 1000-1003, which no claim reads; notes/validation-sam.md "SAM's
# boundary moves with rho"): on the diagonal network a factor 4 puts the collapse design's below alpha 2x below
# SAM's boundary at rho_hi and 2x above it at rho_lo; on the patch CNN SAM at rho_lo fitted there on all four seeds.
RHO_FACTOR = 4.0
DESIGNS = ("diag", "patch")
# The tiers the audit runs each design at. The patch design's quick size is defined (and was read once,
# notes/validation-sam.md) but its 36 runs of its own took 219 CPU-seconds, about 110 s of wall time on 2 cores:
# over the 90 s the quick audit has for this study (SAM at rho_lo needs 300-1350 steps, and collapses on some seeds).
AUDIT_TIERS = {"diag": ("quick", "full"), "patch": ("full",)}


def design_settings(design: str, tier: str = "quick") -> dict:
    """The design's settings at ``tier``: the collapse design's, with ``alpha``, ``rho_hi`` and ``rho_lo`` in place of
    its ``alphas`` and ``rho``; an unknown design, or a tier it lacks, is an InputError."""
    from biasaudit.validation import sam_regimes

    choice("design", design, DESIGNS)
    settings = sam_regimes.design_settings(design, tier)
    rho_hi = settings.pop("rho")
    alpha = settings.pop("alphas")[0]
    return {**settings, "alpha": alpha, "rho_hi": rho_hi, "rho_lo": rho_hi / RHO_FACTOR}


def rho_configs(design: str, tier: str = "quick", *, device: str = "cpu") -> list:
    """One :class:`~biasaudit.validation.sam_training.TrainConfig` per (seed, arm), in that order."""
    from biasaudit.validation.sam_regimes import AA_OFFSET
    from biasaudit.validation.sam_training import TrainConfig

    settings = design_settings(design, tier)
    skip = ("alpha", "rho_hi", "rho_lo", "seeds", "data_seed_per_seed")
    base = TrainConfig(device=device, init_scale=settings["alpha"],
                       **{k: v for k, v in settings.items() if k not in skip})
    configs = []
    for s in settings["seeds"]:
        for arm in ARMS:
            optimizer, radius, offset = _ARM_RUN[arm]
            seed = s + (AA_OFFSET if offset is None else offset)
            configs.append(replace(base, optimizer=optimizer, rho=settings[radius], seed=seed,
                                   data_seed=seed if settings["data_seed_per_seed"] else base.data_seed))
    return configs


def rho_experiment(design: str, tier: str = "quick", *, device: str = "cpu",
                   progress: Callable[[str], None] | None = None, use_cache: bool = True) -> dict:
    """Train (or read from the run cache) the design's runs and read them (module docstring).

    Returns
    -------
    dict
        ``settings``, ``runs`` ({arm: [run, ...]} in seed order), ``outcomes`` ({arm: {outcome: count}}),
        ``collapsed`` ({arm: [share, [lo, hi]]}: the collapsed share with its 95 % Clopper-Pearson interval),
        ``fit_steps`` ({arm: median steps of the runs that reached the target, or None}) and ``contrast``
        ({control: :func:`~biasaudit.validation.sam_collapse_stats.rho_contrast`} for the claim's pair ``sam``
        and the controls ``aa`` and ``randsam``).
    """
    from biasaudit.plumbing import jsonable
    from biasaudit.validation.sam_collapse_stats import arm_readings, rho_contrast
    from biasaudit.validation.sam_runs import cached_run
    from biasaudit.validation.sam_training import validate_config

    settings = design_settings(design, tier)
    configs = rho_configs(design, tier, device=device)
    for cfg in configs:
        validate_config(cfg)
    runs: dict[str, list] = {arm: [] for arm in ARMS}
    for i, cfg in enumerate(configs):
        arm = ARMS[i % len(ARMS)]
        if progress:
            progress(f"[{i + 1}/{len(configs)}] {design} {arm} rho={cfg.rho:g} alpha={cfg.init_scale:g} "
                     f"seed={cfg.seed}")
        runs[arm].append(cached_run(cfg, use_cache=use_cache))
    outcomes, collapsed, fit_steps = arm_readings(runs)
    pairs = {"sam": ("sam_hi", "sam_lo"), "aa": ("aa", "sam_lo"), "randsam": ("randsam_hi", "randsam_lo")}
    return {"design": design, "tier": tier, "settings": jsonable(settings), "runs": runs, "outcomes": outcomes,
            "collapsed": collapsed, "fit_steps": fit_steps,
            "contrast": {name: rho_contrast(runs[hi], runs[lo]) for name, (hi, lo) in pairs.items()}}
