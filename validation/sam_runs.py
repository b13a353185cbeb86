"""The run cache of the SAM network experiments: one JSON file per training run, and grids of runs.

A run's record is :func:`biasaudit.validation.sam_training.train_run`'s, stored as
``$BIASAUDIT_CACHE_DIR/validation-sam/<key>.json`` (:func:`cache_dir`; the key is
:meth:`~biasaudit.validation.sam_training.TrainConfig.key`, a hash of the config and of the training code)
through the one cached-JSON helper (:func:`biasaudit.plumbing.jsoncache.cached_json`: a file lock, so a
second worker that needs the same run waits and reads it; an atomic write, so an interrupted run leaves no
partial file). This module is not part of a run's key: editing it retrains nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from biasaudit.validation.sam_training import OPTIMIZERS, TrainConfig, _dataset, train_run, validate_config

__all__ = ["cache_dir", "cached_run", "cached_run_unit", "run_grid"]


def cache_dir() -> Path:
    """``$BIASAUDIT_CACHE_DIR/validation-sam`` (default ``~/.cache/biasaudit/validation-sam``)."""
    from biasaudit.plumbing import cache_root

    return cache_root() / "validation-sam"


def cached_run_unit(cfg: TrainConfig) -> None:
    """An audit run unit: train ``cfg`` into the run cache (or find it there); returns nothing (the claim
    reads the cached run). Validates first, so a bad config fails before any training."""
    validate_config(cfg)
    cached_run(cfg)


def cached_run(cfg: TrainConfig, *, use_cache: bool = True) -> dict:
    """:func:`~biasaudit.validation.sam_training.train_run`, reusing (and writing) the run's JSON in
    :func:`cache_dir`; ``use_cache=False`` trains and stores nothing (counted as computed)."""
    from biasaudit.plumbing.jsoncache import cached_json
    from biasaudit.plumbing.runcache import count_run

    if not use_cache:
        count_run(computed=True)
        return train_run(cfg)
    key = cfg.key()
    return cached_json(cache_dir() / f"{key}.json", lambda: train_run(cfg), key=key)


def run_grid(configs: list[TrainConfig], *, progress: Callable[[str], None] | None = None,
             use_cache: bool = True) -> dict[float, dict[str, list]]:
    """Train (or read) every run of ``configs``: ``{init scale: {optimizer: [run, ...]}}`` in config order.
    Every config is validated and the data loaded before the first training step."""
    for cfg in configs:  # every input error before the first training step
        validate_config(cfg)
    _dataset(configs[0])
    grid: dict[float, dict[str, list]] = {}
    for i, cfg in enumerate(configs, 1):
        if progress:
            progress(f"[{i}/{len(configs)}] {cfg.optimizer} alpha={cfg.init_scale} seed={cfg.seed}")
        grid.setdefault(cfg.init_scale, {o: [] for o in OPTIMIZERS})[cfg.optimizer].append(
            cached_run(cfg, use_cache=use_cache))
    return grid
