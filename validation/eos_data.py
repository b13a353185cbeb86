"""The training problem of an EoS sweep: its data (a real data set, or the synthetic ``teacher`` set) and
the network and loss of :func:`biasaudit.validation.gd_trainer.make_problem`, built once per sweep."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from biasaudit.plumbing import InputError, positive_int
from biasaudit.validation.eos_config import SweepConfig

__all__ = ["TeacherData", "teacher_dataset", "load_data", "build_problem"]


@dataclass(frozen=True)
class TeacherData:
    """The synthetic ``teacher`` data set as numpy arrays: inputs ``X_train`` (n_train, d) and ``X_test`` (n_test, d),
    integer labels ``y_train`` and ``y_test`` in [0, ``num_classes``), and its ``name``."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    name: str
    num_classes: int


def teacher_dataset(n_train: int = 200, n_test: int = 200, *, d: int = 10, num_classes: int = 3, width: int = 16,
                    seed: int = 0) -> TeacherData:
    """Synthetic teacher data: x ~ N(0, I_d), y = argmax of a random tanh teacher network (for tests)."""
    n_train, n_test = positive_int("n_train", n_train), positive_int("n_test", n_test)
    d, num_classes = positive_int("d", d), positive_int("num_classes", num_classes, minimum=2)
    rng = np.random.default_rng(seed)
    W1 = rng.standard_normal((d, width)) / math.sqrt(d)
    W2 = rng.standard_normal((width, num_classes)) / math.sqrt(width)
    X = rng.standard_normal((n_train + n_test, d))
    y = np.argmax(np.tanh(X @ W1) @ W2, axis=1)
    return TeacherData(X[:n_train], y[:n_train], X[n_train:], y[n_train:], "teacher", num_classes)


def load_data(config: SweepConfig):
    """``teacher`` here; every real data set through ``biasaudit.validation.data.load_dataset`` (torch-sam's loader)."""
    if config.dataset == "teacher":
        return teacher_dataset(config.n_train, config.n_test, seed=config.seed)
    if config.dataset == "toy":
        from biasaudit.validation.eos_toy import toy_data

        return toy_data()
    from biasaudit.validation.data import load_dataset

    return load_dataset(config.dataset, data_dir=config.data_dir, n_train=config.n_train, n_test=config.n_test,
                        seed=config.seed)


def _as_images(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim == 2:
        side = int(round(math.sqrt(X.shape[1])))
        if side * side == X.shape[1]:
            return X.reshape(X.shape[0], 1, side, side)
    return X


def _pool(X: np.ndarray, k: int) -> np.ndarray:
    """Average-pool images (n, c, H, W) by k (H and W must be multiples of k)."""
    if X.ndim != 4 or X.shape[2] % k or X.shape[3] % k:
        raise InputError("image_pool", f"must divide the image size {tuple(X.shape[2:])}", k)
    n, c, h, w = X.shape
    return X.reshape(n, c, h // k, k, w // k, k).mean(axis=(3, 5))


_PROBLEM: dict[str, object] = {}  # the last problem built (the runs of one sweep share it, as before)


def build_problem(config: SweepConfig):
    """The training problem of ``config`` (data, model factory, loss); the last one is kept for reuse."""
    if config.key() not in _PROBLEM:
        _PROBLEM.clear()
        _PROBLEM[config.key()] = _build_problem(config)
    return _PROBLEM[config.key()]


def _build_problem(config: SweepConfig):
    from biasaudit.validation.gd_trainer import make_problem

    data = load_data(config)
    Xtr, Xte = np.asarray(data.X_train), np.asarray(data.X_test)
    if config.arch in ("cnn", "resnet", "vit") or config.image_pool > 1:
        Xtr, Xte = _as_images(Xtr), _as_images(Xte)
    if config.image_pool > 1:
        Xtr, Xte = _pool(Xtr, config.image_pool), _pool(Xte, config.image_pool)
    if config.arch == "fcn":
        Xtr, Xte = Xtr.reshape(len(Xtr), -1), Xte.reshape(len(Xte), -1)
    return make_problem(config.arch, config.loss, Xtr, data.y_train, Xte, data.y_test,
                        num_classes=data.num_classes, dtype=config.dtype, device=config.device, seed=config.seed,
                        width=config.width, depth=config.depth, activation=config.activation,
                        init_scale=config.init_scale, mse_convention=config.mse_convention,
                        hvp_method=config.hvp_method, model_kwargs=dict(config.model_kwargs),
                        description={"dataset": getattr(data, "name", config.dataset)})
