"""Sizes of the two fixed-alpha SAM network experiments (:mod:`biasaudit.validation.sam_experiments`).

:data:`SAM_SIZES` holds, per experiment (``"minor_mass"``, ``"synthetic"``) and tier (``"quick"``, ``"full"``),
the training settings and the grid (seeds, init scales; the patch task also its accuracy levels).

``quick`` (~1 CPU-minute in all on an idle box, 4 min wall on the loaded shared one): MNIST-5k pooled to
14x14, 1000 train images, CNN width 8, 150 SGD steps of batch 128, lr 0.1, rho 0.05, alpha = 1, 5 seeds;
patch task 256 images 16x16, 45 full-batch steps, lr 0.05. ``full`` (minutes to an hour on a CPU):
MNIST-5k at 28x28 (4000 train), width 16, 1500 steps, alpha in {1, 0.5, 2}, 10 seeds; patch task 2048
images, 400 steps, lr 0.02. (The regime grids of the audit's claims have their own sizes:
:data:`biasaudit.validation.sam_regimes.DESIGNS`.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from biasaudit.plumbing import choice
from biasaudit.validation.sam_training import OPTIMIZERS, TrainConfig

__all__ = ["SAM_SIZES", "GRID_KEYS", "experiment_settings", "grid_configs", "configs_of"]

# experiment -> tier -> settings ("quick" fits the audit budget on 2 CPU cores; "full" is the bigger setting)
SAM_SIZES: dict[str, dict[str, dict]] = {
    "minor_mass": {
        "quick": dict(dataset="mnist5k", model="cnn", downsample=2, n_train=1000, n_test=500, n_eval=1000,
                      n_probe=64, width=8, steps=150, eval_every=15, lr=0.1, rho=0.05, batch_size=128,
                      seeds=(0, 1, 2, 3, 4), init_scales=(1.0,)),
        "full": dict(dataset="mnist5k", model="cnn", downsample=1, n_train=4000, n_test=1000, n_eval=2000,
                     n_probe=256, width=16, steps=1500, eval_every=50, lr=0.1, rho=0.05, batch_size=128,
                     seeds=tuple(range(10)), init_scales=(1.0, 0.5, 2.0)),
    },
    "synthetic": {
        "quick": dict(dataset="synthetic-patches", model="cnn", n_train=256, n_test=128, n_eval=256,
                      n_probe=32, width=8, steps=45, eval_every=3, lr=0.05, rho=0.05, batch_size=None,
                      seeds=(0, 1, 2, 3, 4), init_scales=(1.0,), levels=(0.6, 0.7, 0.8, 0.9, 0.95)),
        "full": dict(dataset="synthetic-patches", model="cnn", n_train=2048, n_test=512, n_eval=2048,
                     n_probe=256, width=16, steps=400, eval_every=2, lr=0.02, rho=0.05, batch_size=None,
                     seeds=tuple(range(10)), init_scales=(1.0, 0.5, 2.0), levels=(0.6, 0.7, 0.8, 0.9, 0.95)),
    },
}
GRID_KEYS = ("seeds", "init_scales", "levels")  # settings that span the grid, not fields of one run


def experiment_settings(kind: str, tier: str, overrides: Mapping[str, Any]) -> dict:
    """The settings of experiment ``kind`` at ``tier``, with the ``overrides`` that are not None.

    Parameters
    ----------
    kind : str
        ``"minor_mass"`` or ``"synthetic"`` (a key of :data:`SAM_SIZES`).
    tier : str
        ``"quick"`` or ``"full"``.
    overrides : mapping
        Settings to replace; None values are ignored.

    Returns
    -------
    dict
        The settings, a fresh copy.

    Raises
    ------
    InputError
        If ``tier`` is not a tier of ``kind``.

    Examples
    --------
    >>> settings = experiment_settings("synthetic", "quick", {"steps": 10, "lr": None})
    >>> settings["steps"], settings["lr"]
    (10, 0.05)
    """
    choice("tier", tier, tuple(SAM_SIZES[kind]))
    settings = dict(SAM_SIZES[kind][tier])
    settings.update({k: v for k, v in overrides.items() if v is not None})
    return settings


def configs_of(settings: dict, device: str, data_dir: str | None) -> list[TrainConfig]:
    """One :class:`~biasaudit.validation.sam_training.TrainConfig` per (init scale, seed, optimizer).

    Parameters
    ----------
    settings : dict
        The experiment's settings (:func:`experiment_settings`), :data:`GRID_KEYS` spanning the grid.
    device : str
        The torch device of every run.
    data_dir : str or None
        Where the data files lie.

    Returns
    -------
    list of TrainConfig
        In the order init scale, seed, optimizer (innermost).

    Examples
    --------
    >>> configs = configs_of(experiment_settings("synthetic", "quick", {}), "cpu", None)
    >>> len(configs), [(c.seed, c.optimizer) for c in configs[:3]]
    (10, [(0, 'gd'), (0, 'sam'), (1, 'gd')])
    """
    base = TrainConfig(device=device, data_dir=data_dir,
                       **{k: v for k, v in settings.items() if k not in GRID_KEYS})
    return [replace(base, optimizer=o, seed=s, init_scale=a)
            for a in settings["init_scales"] for s in settings["seeds"] for o in OPTIMIZERS]


def grid_configs(kind: str, tier: str = "quick", *, device: str = "cpu", data_dir: str | None = None,
                 **overrides) -> list[TrainConfig]:
    """The training runs of experiment ``kind`` (``"minor_mass"`` or ``"synthetic"``) at ``tier``: one
    :class:`~biasaudit.validation.sam_training.TrainConfig` per (init scale, seed, optimizer), in the order the
    experiment runs them.

    Parameters
    ----------
    kind : str
        ``"minor_mass"`` or ``"synthetic"``.
    tier : str
        ``"quick"`` (the default) or ``"full"``.
    device : str
        The torch device (default ``"cpu"``).
    data_dir : str, optional
        Where the data files lie.
    **overrides
        Settings to replace (None values are ignored).

    Returns
    -------
    list of TrainConfig
        The runs.

    Raises
    ------
    InputError
        If ``tier`` is not a tier of ``kind``.

    Examples
    --------
    >>> configs = grid_configs("minor_mass", "quick", steps=10)
    >>> len(configs), configs[0].steps, configs[0].model
    (10, 10, 'cnn')
    """
    return configs_of(experiment_settings(kind, tier, overrides), device, data_dir)
