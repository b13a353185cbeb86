r"""SAM's collapse boundary on networks (regime 1 of paper 1), read as a signature, not a deadline.

Paper 1's l2-SAM at depth 2 collapses below a critical init scale alpha_c (at fixed rho): beta -> 0 and the loss
stays at its initial value, while GD fits from the same init. A design tests that on one network at two alphas,
``below`` SAM's boundary and well ``above`` it, with four arms per seed, all sharing the initialisation, the data
and the batch order of their seed:

=============  ================================================================================================
arm            run
=============  ================================================================================================
``sam``        l2-SAM (joint normalisation) of radius rho
``gd``         plain GD
``aa``         GD on seed + :data:`AA_OFFSET` (other init; other data where the design draws data per seed): the
               A/A control puts it in SAM's place
``randsam``    a random perturbation of norm rho in SAM's place (the same cost and noise, no sharpness-awareness)
=============  ================================================================================================

Every run trains until its training loss reaches the design's ``loss_target`` or its horizon ``steps``, which is
at least 4 times GD's time to fit at the ``below`` alpha in the design's pilot (seeds 1000-1001, which no claim
reads), and ends with one outcome (:func:`biasaudit.validation.sam_training.run_outcome`): ``ok``, ``collapsed``
(the loss stayed at its initial value over the second half and the output scale did not grow), ``slow`` (still
moving at the horizon) or ``diverged``. The statistic is the seed's collapse contrast C
(:mod:`biasaudit.validation.sam_collapse_stats`), decided under the experiment contract by
:mod:`biasaudit.claims.sam.torch.regimes`.

Designs (:data:`DESIGNS`): ``diag`` (the positive control: the depth-2 diagonal network ``diag2`` on the
bright/faint patch images, where the theory's collapse holds), ``patch`` (the small CNN on the same images, 8x8),
``cnn`` (MNIST-5k at 14x14), ``fashion`` (Fashion-MNIST 14x14, when its files are found), and at the full tier
only ``resnet`` (the small ResNet *without* BatchNorm, ``resnet_nobn``: with BatchNorm alpha cancels on every
convolution), ``cifar10`` and ``svhn``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from biasaudit.plumbing import choice

__all__ = ["DESIGNS", "ARMS", "AA_OFFSET", "design_settings", "regime_configs", "regime_experiment",
           "outcome_text"]

ARMS = ("sam", "gd", "aa", "randsam")
AA_OFFSET = 5000  # the A/A arm's GD run of seed s trains from seed s + AA_OFFSET
_OPTIMIZER = {"sam": "sam", "gd": "gd", "aa": "gd", "randsam": "randsam"}

_MNIST = dict(dataset="mnist5k", model="cnn", downsample=2, n_train=1000, n_test=500, n_eval=500, n_probe=4,
              width=4, lr=0.1, batch_size=64, loss_target=1.0, eval_every=25, schedule="every", probe=False,
              keep_maps=0, data_seed_per_seed=False)
_PATCH_IMAGES = dict(dataset="synthetic-patches", n_train=256, n_test=64, n_eval=256, n_probe=4, batch_size=None,
                     loss_target=0.05, eval_every=10, schedule="every", probe=False, keep_maps=0,
                     data_seed_per_seed=True)
_QUICK_SEEDS, _FULL_SEEDS = tuple(range(12)), tuple(range(32))

# Placement (pilots on seeds 1000-1001, notes/validation-sam.md "Collapse as a signature"): the horizon is the
# first round number at least 4 times GD's median pilot time to fit at the below alpha (diag 120 steps -> 480; patch
# 380 -> 1600; cnn 175 -> 800); the above alpha is where SAM, GD and RandSAM all fitted in the pilot.
_DIAG_QUICK = {**_PATCH_IMAGES, "model": "diag2", "lr": 0.2, "rho": 0.3, "steps": 480,
               "alphas": (0.0139, 0.0834), "seeds": _QUICK_SEEDS}
_PATCH_QUICK = {**_PATCH_IMAGES, "model": "cnn", "downsample": 2, "width": 4, "lr": 0.1, "rho": 0.2, "steps": 1600,
                "eval_every": 25, "alphas": (0.3, 1.29), "seeds": _QUICK_SEEDS}
_CNN_QUICK = {**_MNIST, "rho": 0.3, "steps": 800, "alphas": (0.7, 2.8), "seeds": _QUICK_SEEDS}
_FASHION_QUICK = {**_CNN_QUICK, "dataset": "fashion-mnist"}  # not piloted here (no files): the MNIST placement
# The full tier (32 seeds, 28x28, width 8; meant for a GPU) is not piloted under the signature: the quick
# placement with the horizon doubled. The ResNet without BatchNorm runs at the full tier only: at the quick size
# (14x14, width 4, rho = 0.3) GD itself was still slow at alpha = 0.7 after 1600 steps (loss 2.32 -> 1.66 and
# 2.32 -> 2.06), so the pilot found no alpha where SAM collapses and GD fits within a horizon the quick tier pays
# for; its full-tier alphas are unpiloted.
_BIG = dict(downsample=1, n_train=4000, n_test=1000, n_eval=2000, width=8, seeds=_FULL_SEEDS, steps=1600)
_COLOUR_FULL = {**_CNN_QUICK, **_BIG}

DESIGNS: dict[str, dict[str, dict]] = {
    "diag": {"quick": _DIAG_QUICK, "full": {**_DIAG_QUICK, "n_train": 1024, "seeds": _FULL_SEEDS}},
    "patch": {"quick": _PATCH_QUICK,
              "full": {**_PATCH_QUICK, "downsample": 1, "n_train": 2048, "n_eval": 2048, "width": 8,
                       "steps": 3200, "seeds": _FULL_SEEDS}},
    "cnn": {"quick": _CNN_QUICK, "full": {**_CNN_QUICK, **_BIG}},
    "resnet": {"full": {**_CNN_QUICK, **_BIG, "model": "resnet_nobn", "steps": 3200, "alphas": (1.4, 5.6)}},
    "fashion": {"quick": _FASHION_QUICK, "full": {**_FASHION_QUICK, **_BIG}},
    "cifar10": {"full": {**_COLOUR_FULL, "dataset": "cifar10"}},
    "svhn": {"full": {**_COLOUR_FULL, "dataset": "svhn"}},
}
_GRID_KEYS = ("alphas", "seeds", "data_seed_per_seed")


def design_settings(design: str, tier: str = "quick") -> dict:
    """A copy of the settings of ``design`` at ``tier`` (from :data:`DESIGNS`); an unknown design, or a tier it lacks,
    is an InputError."""
    choice("design", design, tuple(DESIGNS))
    choice("tier", tier, tuple(DESIGNS[design]))
    return dict(DESIGNS[design][tier])


def _points(settings: dict) -> dict[str, float]:
    from biasaudit.validation.sam_collapse_stats import POINTS

    return dict(zip(POINTS, settings["alphas"]))


def regime_configs(design: str, tier: str = "quick", *, device: str = "cpu", data_dir: str | None = None) -> list:
    """One :class:`~biasaudit.validation.sam_training.TrainConfig` per (point, seed, arm), in that order."""
    from biasaudit.validation.sam_training import TrainConfig

    settings = design_settings(design, tier)
    base = TrainConfig(device=device, data_dir=data_dir, **{k: v for k, v in settings.items() if k not in _GRID_KEYS})
    per_seed_data = settings["data_seed_per_seed"]
    configs = []
    for alpha in _points(settings).values():
        for s in settings["seeds"]:
            for arm in ARMS:
                seed = s + AA_OFFSET if arm == "aa" else s
                configs.append(replace(base, optimizer=_OPTIMIZER[arm], seed=seed, init_scale=alpha,
                                       data_seed=seed if per_seed_data else base.data_seed))
    return configs


def regime_experiment(design: str, tier: str = "quick", *, device: str = "cpu", data_dir: str | None = None,
                      progress: Callable[[str], None] | None = None, use_cache: bool = True) -> dict:
    """Train (or read from the run cache) the design's runs and read them (module docstring).

    Returns
    -------
    dict
        ``settings``, ``alphas`` ({point: alpha}), ``runs`` ({point: {arm: [run, ...]}} in seed order),
        ``outcomes`` ({point: {arm: {outcome: count}}}), ``collapsed`` ({point: {arm: [share, [lo, hi]]}}: the
        collapsed share with its 95 % Clopper-Pearson interval), ``fit_steps`` ({point: {arm: median steps of the
        runs that reached the target}}) and ``contrast`` ({arm: :func:`~biasaudit.validation.sam_collapse_stats.
        paired_contrast` with that arm in SAM's place}, for ``sam``, ``aa`` and ``randsam``).
    """
    from biasaudit.validation.sam_collapse_stats import arm_readings, paired_contrast
    from biasaudit.validation.sam_runs import cached_run
    from biasaudit.validation.sam_training import validate_config

    settings = design_settings(design, tier)
    configs = regime_configs(design, tier, device=device, data_dir=data_dir)
    for cfg in configs:
        validate_config(cfg)
    points = _points(settings)
    runs: dict[str, dict[str, list]] = {p: {arm: [] for arm in ARMS} for p in points}
    i = 0
    for point in points:
        for _ in settings["seeds"]:
            for arm in ARMS:
                cfg = configs[i]
                i += 1
                if progress:
                    progress(f"[{i}/{len(configs)}] {design} {arm} alpha={cfg.init_scale} seed={cfg.seed}")
                runs[point][arm].append(cached_run(cfg, use_cache=use_cache))
    readings = {p: arm_readings(by_arm) for p, by_arm in runs.items()}
    outcomes, collapsed, fit_steps = ({p: r[k] for p, r in readings.items()} for k in range(3))
    return {"design": design, "tier": tier, "settings": _jsonable(settings), "alphas": points, "runs": runs,
            "outcomes": outcomes, "collapsed": collapsed, "fit_steps": fit_steps,
            "contrast": {arm: paired_contrast(runs, arm) for arm in ("sam", "aa", "randsam")}}


def outcome_text(result: dict) -> str:
    """One line: each arm's outcomes at each point (``sam below 0.7: 9 collapsed, 3 ok``)."""
    parts = []
    for point, alpha in result["alphas"].items():
        for arm in ("sam", "gd", "randsam", "aa"):
            counts = ", ".join(f"{k} {o}" for o, k in result["outcomes"][point][arm].items() if k)
            parts.append(f"{arm} {point} {alpha:g}: {counts}")
    return "; ".join(parts)


def _jsonable(value: Any):
    from biasaudit.plumbing import jsonable

    return jsonable(value)
