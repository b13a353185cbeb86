"""The learning-rate sweep of paper 2 on torch networks, and the verdict numbers for E1–E5 and CE.

Pipeline (one :class:`SweepConfig`):

1. data (``biasaudit.validation.data.load_dataset``, or the synthetic ``teacher`` set below) and a :class:`Problem`
   with one fixed init;
2. s_GF and η_c = 2/s_GF from the gradient-flow proxy (:mod:`biasaudit.validation.gf_proxy`), up to the same eps;
3. full-batch GD (:func:`biasaudit.validation.gd_trainer.train_gd`) at η = m·η_c for a coarse grid of multiples m
   plus a fine grid within ±10 % of η_c; the run at ``track_multiple`` records sharpness every
   ``track_every`` steps (E4);
4. the verdict numbers (pure functions of the sweep dict: :func:`e1_phase_transition`, :func:`e2_kink`,
   :func:`e3_measures`, :func:`e4_dynamics`, :func:`e5_u_shape`).

Every finished piece (the GF result, each (arch, η) run) is written atomically as JSON under the run
directory (``out`` or the cache dir ``$BIASAUDIT_CACHE_DIR/validation-eos/<key>``): an interrupted sweep
resumes, a finished run is never recomputed. The key is content-addressed (config, the source of
:data:`RUN_CODE`, torch and numpy versions: :mod:`biasaudit.plumbing.runcache`): a code edit recomputes.
Results are also memoised in-process, so all claims of a tier share one sweep.

Symbols: η step size, η_c = 2/s_GF, S = max|λ(∇²L)| at the end of a run (L < eps), g = ηS/2 the stability
ratio (g = 1 on the edge of stability), ‖θ‖₁ the paper's norm.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from biasaudit.plumbing import InputError, choice, positive_int, positive_scalar
from biasaudit.plumbing.runcache import count_run, run_key

__all__ = [
    "SweepConfig", "TIERS", "ARCH_TIERS", "ARCH_TIERS_CE", "ARCHS_E2", "arch_config", "e2_architecture", "RUN_CODE", "tier_config", "run_sweep", "sweep_gf", "sweep_eta_run", "e3_configs",
    "e3_measures_over_seeds", "teacher_dataset", "load_data", "cache_dir",
    "e1_phase_transition", "e2_kink", "e3_measures", "e3_norm_slopes", "e4_dynamics", "e5_u_shape",
    "wilson_interval",
    "make_figures", "make_e2_figure", "SIDE_MARGIN", "EDGE_DELTA",
]

# The code a sweep executes: its cache key hashes these sources (biasaudit.plumbing.runcache), so an edit to
# any of them recomputes the sweep; no hand-bumped version.
RUN_CODE = ("biasaudit.validation", "biasaudit.numerics", "biasaudit.claims.eos.torch.sweeps")
SIDE_MARGIN = 0.05  # runs within ±5 % of the predicted η_c are neither "flow side" nor "EoS side"
EDGE_DELTA = 0.05  # a run is at the edge of stability when ηS/2 ≥ 1 − EDGE_DELTA
Z95 = 1.959963984540054  # two-sided 95 % normal quantile


@dataclass(frozen=True)
class SweepConfig:
    """Everything that determines a sweep (its hash is the cache key)."""

    arch: str = "fcn"
    loss: str = "mse"
    dataset: str = "mnist5k"
    n_train: int = 500
    n_test: int = 1000
    width: int = 32
    depth: int = 2
    activation: str = "tanh"
    dtype: str = "float32"
    eps: float = 1e-2
    coarse: tuple = (0.5, 0.75, 1.25, 2.0, 3.5)  # multiples of η_c
    fine: tuple = (0.93, 0.97, 1.03, 1.07)  # within ±10 % of η_c
    absolute: bool = False  # True: coarse/fine are step sizes, not multiples of η_c
    max_steps: int = 20_000
    gf_every: int = 200
    gf_fraction: float = 0.5
    gf_method: str = "gd"
    track_multiple: float = 2.0
    track_every: int = 25
    seed: int = 0
    mse_convention: str = "mean"
    init_scale: float = 1.0
    hvp_method: str = "forward-over-reverse"
    data_dir: str | None = None
    device: str = "cpu"
    image_pool: int = 1  # average-pool factor applied to the images (4: MNIST at 7 x 7)
    model_kwargs: tuple = ()  # (name, value) pairs for the CNN/ResNet/ViT builder, e.g. (("width", 8),)

    def __post_init__(self):
        from biasaudit.validation.gd_trainer import check_sweep_inputs

        check_sweep_inputs(arch=self.arch, loss=self.loss, etas=tuple(self.coarse) + tuple(self.fine),
                           eps=self.eps, max_steps=self.max_steps, dtype=self.dtype)
        positive_int("n_train", self.n_train)
        positive_int("n_test", self.n_test)
        positive_int("gf_every", self.gf_every)
        if int(self.track_every) != self.track_every or self.track_every < 0:
            raise InputError("track_every", "must be an integer >= 0 (0: no tracked run)", self.track_every)
        positive_scalar("track_multiple", self.track_multiple)
        positive_int("image_pool", self.image_pool)
        if not all(isinstance(kv, tuple) and len(kv) == 2 and isinstance(kv[0], str) for kv in self.model_kwargs):
            raise InputError("model_kwargs", "must be a tuple of (name, value) pairs", self.model_kwargs)

    def key(self) -> str:
        skip = ("device", "data_dir") + (("hvp_method",) if self.hvp_method == "forward-over-reverse" else ())
        skip += tuple(k for k, default in (("image_pool", 1), ("model_kwargs", ())) if getattr(self, k) == default)
        data = {k: v for k, v in dataclasses.asdict(self).items() if k not in skip}
        if self.dataset != "teacher":
            from biasaudit.validation.data import dataset_fingerprint

            fingerprint = dataset_fingerprint(self.dataset, self.data_dir)
            if fingerprint is not None:  # file-based data: what the files hold (not where they lie)
                data["data_sha256"] = fingerprint
        return f"{self.arch}-{self.loss}-{self.dataset}-" + run_key(data, RUN_CODE, length=16)

    def multiples(self) -> list[float]:
        return sorted(set(float(m) for m in tuple(self.coarse) + tuple(self.fine)))


# The quick tier is the spec's measured setting (FCN 784→32→32→10 tanh, MNIST-5k n=500, MSE, eps=1e-2).
# CE gets its own GF proxy with sharpness measured every few steps and a shorter grid (module notes).
TIERS: dict[str, dict[str, SweepConfig]] = {
    "quick": {
        "mse": SweepConfig(),
        "ce": SweepConfig(loss="ce", eps=0.25, gf_every=5, coarse=(0.5, 1.5, 3.0), fine=(0.93, 1.07),
                          track_multiple=1.5, track_every=0, max_steps=6000),
    },
    "full": {
        "mse": SweepConfig(dataset="mnist", n_train=5000, n_test=10000,
                           coarse=(0.25, 0.5, 0.75, 1.25, 1.5, 2.0, 3.0, 5.0),
                           fine=(0.9, 0.95, 0.98, 1.02, 1.05, 1.1), eps=1e-2, max_steps=200_000, track_every=10),
        "ce": SweepConfig(loss="ce", dataset="mnist", n_train=5000, n_test=10000, eps=0.25, gf_every=5,
                          coarse=(0.5, 1.5, 2.0, 3.0),
                          fine=(0.93, 0.97, 1.03, 1.07), max_steps=100_000, track_multiple=1.5, track_every=0),
    },
}


def tier_config(tier: str, loss: str = "mse", **overrides) -> SweepConfig:
    choice("tier", tier, tuple(TIERS))
    choice("loss", loss, ("mse", "ce"))
    return dataclasses.replace(TIERS[tier][loss], **overrides) if overrides else TIERS[tier][loss]


# E2 across architectures (issue 16 item 1). The FCN is the quick tier's MSE sweep. The CNN, ResNet and ViT are
# sized so that a whole sweep costs ~1-2 min on one core: MNIST-5k n = 100 pooled to 7 x 7 (ViT: 14 x 14,
# patches of 7), MSE, eps = 2e-2 (at eps = 1e-2 a GD run near eta_c of the 7 x 7 CNN needs ~5,000 steps,
# against ~2,000 at 2e-2; notes/validation-eos.md). The ResNet takes n = 300: at n = 100 its whole flow was
# ~200 steps with S rising ~5 % per step at the stop, so every endpoint hung on the step that crossed eps.
# The full tier runs them at 28 x 28, n = 1000, eps = 1e-2.
ARCHS_E2 = ("fcn", "cnn", "resnet", "vit", "fcn_relu")  # fcn_relu: the E1 FCN with ReLU instead of tanh
_E2_GRID = dict(coarse=(0.75, 1.25, 2.0), fine=(0.93, 0.97, 1.03, 1.07), track_every=0)
_E2_FULL_GRID = dict(coarse=(0.5, 0.75, 1.25, 1.5, 2.0, 3.0), fine=(0.9, 0.95, 0.98, 1.02, 1.05, 1.1),
                     track_every=0, dataset="mnist", n_train=1000, n_test=10000, eps=1e-2, max_steps=200_000)
ARCH_TIERS: dict[str, dict[str, SweepConfig]] = {
    "quick": {
        "fcn": TIERS["quick"]["mse"],
        "cnn": SweepConfig(arch="cnn", n_train=100, image_pool=4, model_kwargs=(("width", 8),), eps=2e-2,
                           gf_every=100, **_E2_GRID),
        "resnet": SweepConfig(arch="resnet", n_train=300, image_pool=4, model_kwargs=(("width", 8),), eps=2e-2,
                              gf_every=100, **_E2_GRID),
        "vit": SweepConfig(arch="vit", n_train=100, image_pool=2, model_kwargs=(("dim", 16), ("patch", 7)),
                           eps=2e-2, gf_every=100, **_E2_GRID),
        "fcn_relu": dataclasses.replace(TIERS["quick"]["mse"], activation="relu"),
    },
    "full": {
        "fcn": TIERS["full"]["mse"],
        "cnn": SweepConfig(arch="cnn", model_kwargs=(("width", 16),), **_E2_FULL_GRID),
        "resnet": SweepConfig(arch="resnet", model_kwargs=(("width", 16),), **_E2_FULL_GRID),
        "vit": SweepConfig(arch="vit", model_kwargs=(("dim", 32), ("patch", 7)), **_E2_FULL_GRID),
        "fcn_relu": dataclasses.replace(TIERS["full"]["mse"], activation="relu"),
    },
}


# Cross-entropy per architecture: the full tier only, for the budget. At the quick sizes (eps = 0.25) the three
# sweeps cost 49 s (CNN), 116 s (ViT) and 327 s (ResNet) of one core, which would put the quick tier's
# eos.torch.* over its 8 minutes; their by-hand results are in notes/validation-eos.md.
ARCH_TIERS_CE: dict[str, dict[str, SweepConfig]] = {
    "full": {"fcn": TIERS["full"]["ce"], "fcn_relu": dataclasses.replace(TIERS["full"]["ce"], activation="relu"),
             **{arch: dataclasses.replace(ARCH_TIERS["full"][arch], loss="ce", eps=0.25, gf_every=5,
                                          track_multiple=1.5) for arch in ("cnn", "resnet", "vit")}},
}


def arch_config(tier: str, arch: str, loss: str = "mse", **overrides) -> SweepConfig:
    """The E2 sweep of ``arch`` with ``loss`` at ``tier`` (:data:`ARCH_TIERS`, :data:`ARCH_TIERS_CE`)."""
    choice("tier", tier, tuple(ARCH_TIERS))
    choice("arch", arch, ARCHS_E2)
    choice("loss", loss, ("mse", "ce"))
    table = ARCH_TIERS if loss == "mse" else ARCH_TIERS_CE
    if tier not in table:
        raise InputError("tier", f"E2 with {loss} per architecture runs at {' or '.join(table)} only", tier)
    config = table[tier][arch]
    return dataclasses.replace(config, **overrides) if overrides else config


# --------------------------------------------------------------------------------------------- data

@dataclass(frozen=True)
class TeacherData:
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
    from biasaudit.validation.data import load_dataset  # owned by the torch-sam engineer (issue 5)

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


# --------------------------------------------------------------------------------------------- storage

def cache_dir() -> Path:
    """``$BIASAUDIT_CACHE_DIR/validation-eos`` (default ``~/.cache/biasaudit/validation-eos``)."""
    from biasaudit.plumbing import cache_root

    return cache_root() / "validation-eos"


def _write_json(path: Path, data) -> None:
    from biasaudit.plumbing import atomic_write_text
    from biasaudit.plumbing import jsonable

    atomic_write_text(path, json.dumps(jsonable(data)))


def _read_json(path: Path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, json.JSONDecodeError):
        return None


def _float(x) -> float:
    """JSON turns non-finite floats into strings ('nan', 'inf'); read them back."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


_MEMO: dict[str, dict] = {}


def run_sweep(config: SweepConfig, out: str | os.PathLike | None = None, *, progress: Callable | None = None,
              threads: int | None = None) -> dict:
    """Run (or resume, or load) the sweep of ``config``; returns ``{"config", "gf", "runs", "dir"}``.

    A sweep is the gradient-flow proxy (:func:`sweep_gf`, which gives η_c) and one GD run per multiple of η_c
    (:func:`sweep_eta_run`). Each is cached on its own file under its own lock, so the audit can schedule
    them as separate run units on several workers (``biasaudit.claims.eos.torch.sweeps.sweep_run_units``) and this
    call then only reads."""
    run_dir = Path(out) if out is not None else cache_dir() / config.key()
    memo_key = f"{config.key()}@{run_dir}"
    if memo_key in _MEMO:
        return _MEMO[memo_key]
    gf = sweep_gf(config, run_dir, progress=progress, threads=threads)
    eta_c = _float(gf["eta_c"])
    runs = []
    if math.isfinite(eta_c) or config.absolute:
        runs = [_eta_run(config, m, eta_c, run_dir, progress, threads) for m in config.multiples()]
    result = {"config": dataclasses.asdict(config), "gf": gf, "runs": sorted(runs, key=lambda r: r["eta"]),
              "dir": str(run_dir)}
    _MEMO[memo_key] = result
    return result


def _cached(path: Path, key: str, compute: Callable[[], dict]) -> dict:
    """The JSON at ``path`` if it holds ``key``, else ``compute()`` written there atomically; one process at a
    time per file (a second waits, then reads). Counted as computed or reused (biasaudit.plumbing.runcache)."""
    from biasaudit.plumbing.status import status
    from biasaudit.validation.filelock import exclusive

    with exclusive(path.with_name(f".{path.name}.lock"), status):
        data = _read_json(path)
        if data is not None and data.get("key") == key:
            count_run(computed=False)
            return data
        data = {"key": key, **compute()}
        _write_json(path, data)
        count_run(computed=True)
        return data


def _sweep_dir(config: SweepConfig, run_dir) -> Path:
    run_dir = Path(run_dir) if run_dir is not None else cache_dir() / config.key()
    if not (run_dir / "config.json").is_file():
        _write_json(run_dir / "config.json", {"key": config.key(), **dataclasses.asdict(config)})
    return run_dir


def sweep_gf(config: SweepConfig, run_dir=None, *, progress: Callable | None = None, threads: int | None = None
             ) -> dict:
    """The sweep's gradient-flow proxy (``gf.json``: s_GF, η_c = 2/s_GF), computed once and cached."""
    from biasaudit.validation.device import setup_torch

    say = progress or (lambda msg: None)
    run_dir = _sweep_dir(config, run_dir)

    def compute():
        from biasaudit.validation.gf_proxy import gradient_flow_sharpness

        setup_torch(threads)
        say(f"gradient-flow proxy ({config.arch}, {config.loss}, eps={config.eps:g}) ...")
        res = gradient_flow_sharpness(build_problem(config), config.eps, method=config.gf_method,
                                      fraction=config.gf_fraction, every=config.gf_every, seed=config.seed,
                                      progress=say)
        return res.to_json()

    return _cached(run_dir / "gf.json", config.key(), compute)


def sweep_eta_run(config: SweepConfig, multiple: float, run_dir=None, *, progress: Callable | None = None,
                  threads: int | None = None) -> dict:
    """One GD run of the sweep at η = ``multiple`` · η_c (or at η = ``multiple`` when ``config.absolute``); reads
    (or computes) the sweep's gradient-flow proxy for η_c first. An audit run unit."""
    eta_c = _float(sweep_gf(config, run_dir, progress=progress, threads=threads)["eta_c"])
    return _eta_run(config, multiple, eta_c, run_dir, progress, threads)


def _eta_run(config: SweepConfig, multiple: float, eta_c: float, run_dir, progress: Callable | None,
             threads: int | None) -> dict:
    from biasaudit.validation.device import setup_torch

    say = progress or (lambda msg: None)
    run_dir = _sweep_dir(config, run_dir)
    eta = multiple if config.absolute else multiple * eta_c
    if not math.isfinite(eta):
        raise ValueError(f"sweep_eta_run: no finite eta_c for {config.key()} (the GF proxy failed)")

    def compute():
        from biasaudit.validation.gd_trainer import train_gd

        setup_torch(threads)
        tracked = not config.absolute and config.track_every and math.isclose(multiple, config.track_multiple)
        # with --absolute the grid holds step sizes: the multiple is eta/eta_c (left out when eta_c is unknown)
        times = (eta / eta_c if eta_c else math.nan) if config.absolute else multiple
        say(f"GD eta={eta:.4g}" + (f" ({times:.4g} x eta_c)" if math.isfinite(times) else "") + " ...")
        run = train_gd(build_problem(config), eta, eps=config.eps, max_steps=config.max_steps,
                       sharpness_every=config.track_every if tracked else 0, seed=config.seed)
        say(f"  {run.outcome} after {run.steps} steps, {run.seconds:.1f} s")
        return {"multiple": None if config.absolute else multiple, "tracked": bool(tracked), **run.to_json()}

    return _cached(run_dir / f"run_eta_{eta:.8e}.json", config.key(), compute)


# --------------------------------------------------------------------------------------------- verdicts

def _final_S(run) -> tuple[float, bool]:
    S = (run.get("final") or {}).get("S") or {}
    return abs(_float(S.get("value"))), bool(S.get("converged", False))


def _usable(sweep) -> tuple[list[dict], list[str]]:
    """Runs with a finite, converged final sharpness; notes for those left out."""
    ok, notes = [], []
    for r in sweep["runs"]:
        S, conv = _final_S(r)
        if r["outcome"] == "diverged":
            notes.append(f"eta={r['eta']:.4g} diverged")
        elif not (conv and math.isfinite(S)):
            res = _float(((r.get("final") or {}).get("S") or {}).get("residual"))
            notes.append(f"eta={r['eta']:.4g}: eigensolver did not converge (residual {res:.2g})")
        else:
            ok.append(r)
    return ok, notes


def _spearman(x, y) -> float:
    from scipy.stats import spearmanr

    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3 or np.all(y == y[0]):
        return math.nan
    return float(spearmanr(x, y).statistic)


def e1_phase_transition(sweep: dict, eta_c: float) -> dict:
    """E1: flow side (η ≤ (1−m)η_c): S ≈ 2/η_c; EoS side (η ≥ (1+m)η_c): ηS/2 ≈ 1, ‖θ‖₁ rising in η.

    error = max(max_flow |S η_c/2 − 1|, median_EoS |1 − ηS/2|, 1 if ‖θ‖₁ does not rise over the EoS side).
    """
    runs, notes = _usable(sweep)
    flow = [r for r in runs if r["eta"] <= (1 - SIDE_MARGIN) * eta_c]
    eos = [r for r in runs if r["eta"] >= (1 + SIDE_MARGIN) * eta_c]
    out = {"eta_c": eta_c, "n_flow": len(flow), "n_eos": len(eos), "notes": notes}
    if not flow or len(eos) < 2:
        return {**out, "error": math.nan, "decided": False,
                "detail": f"too few usable runs: {len(flow)} flow-side, {len(eos)} EoS-side; {'; '.join(notes)}"}
    flow_dev = [abs(_final_S(r)[0] * eta_c / 2 - 1) for r in flow]
    gaps = [abs(1 - r["eta"] * _final_S(r)[0] / 2) for r in eos]
    l1 = [r["final"]["l1"] for r in eos]
    rho_l1 = _spearman([r["eta"] for r in eos], l1) if len(eos) >= 3 else float(np.sign(l1[-1] - l1[0]))
    norm_violation = 0.0 if rho_l1 > 0 else 1.0
    error = max(max(flow_dev), float(np.median(gaps)), norm_violation)
    l1_rise = l1[-1] / l1[0] - 1
    detail = (f"flow side max|S*eta_c/2-1|={max(flow_dev):.3g} ({len(flow)} runs); EoS side median|1-eta*S/2|="
              f"{np.median(gaps):.3g} ({len(eos)} runs); l1 Spearman vs eta={rho_l1:.2f}, l1 rise "
              f"{l1_rise:+.1%} from eta={eos[0]['eta']:.3g} to {eos[-1]['eta']:.3g}")
    return {**out, "error": error, "decided": True, "flow_dev": flow_dev, "eos_gaps": gaps, "l1_spearman": rho_l1,
            "l1_rise": l1_rise, "detail": detail}


def e2_kink(sweep: dict, eta_kink: float) -> dict:
    """E2: the kink of final S(η) sits at the predicted η (= 2/s_GF).

    The kink is the breakpoint of the two-piece power law S(η) = min(P, c/η) fitted to the usable runs in
    log-log (least squares; the split between plateau and EoS branch is chosen by the smallest residual, P
    and c are the geometric means of S and ηS on either side): η̂ = c/P, where the plateau meets the EoS
    branch. c is free (E1 checks c ≈ 2), so η̂ does not assume the 2/η law. error = |η̂/η_kink − 1|.
    The bracket (last run left of the split, first run right of it) is reported beside it.
    """
    runs, notes = _usable(sweep)
    if len(runs) < 3:
        return {"error": math.nan, "decided": False, "notes": notes, "detail": f"{len(runs)} usable runs (< 3)"}
    eta = np.array([r["eta"] for r in runs])
    logS = np.log([_final_S(r)[0] for r in runs])
    best = None
    for i in range(1, len(runs)):
        logP = logS[:i].mean()
        logc = (np.log(eta[i:]) + logS[i:]).mean()
        pred = np.minimum(logP, logc - np.log(eta))
        sse = float(((logS - pred) ** 2).sum())
        if best is None or sse < best[0]:
            best = (sse, i, math.exp(logP), math.exp(logc))
    sse, i, P, c = best
    kink = c / P
    error = abs(kink / eta_kink - 1)
    bracket = (float(eta[i - 1]), float(eta[i]))
    return {"error": error, "decided": True, "kink": kink, "plateau": P, "eos_constant": c, "bracket": bracket,
            "rms_log_residual": math.sqrt(sse / len(runs)), "notes": notes,
            "detail": f"two-piece fit S=min(P, c/eta): P={P:.4g}, c={c:.4g}, kink c/P={kink:.4g} (split between "
                      f"eta={bracket[0]:.4g} and {bracket[1]:.4g}), predicted {eta_kink:.4g}: "
                      f"{kink / eta_kink - 1:+.2%}"}


def e2_architecture(sweep: dict, eta_c: float, *, kink_tolerance: float, tracking_tolerance: float) -> dict:
    """E2 on one architecture: the kink sits at η_c and above it the final sharpness tracks 2/η.

    error = max(|η̂_kink/η_c − 1| / kink_tolerance, median_EoS |1 − ηS/2| / tracking_tolerance): each part
    relative to its own tolerance, so error ≤ 1 means both hold (η̂_kink from :func:`e2_kink`; EoS side:
    η ≥ (1 + SIDE_MARGIN) η_c, as in :func:`e1_phase_transition`).
    """
    kink = e2_kink(sweep, eta_c)
    runs, notes = _usable(sweep)
    eos = [r for r in runs if r["eta"] >= (1 + SIDE_MARGIN) * eta_c]
    grid = sorted(r["eta"] / eta_c for r in sweep["runs"]) if eta_c > 0 else []
    near = [m for m in grid if abs(m - 1) <= 0.1]
    resolution = float(np.diff(near).max()) if len(near) > 1 else math.nan
    base = {"eta_c": eta_c, "grid_multiples": grid, "grid_resolution_near_eta_c": resolution, "notes": notes,
            "outcomes": {f"{r['eta']:.4g}": r["outcome"] for r in sweep["runs"]}}
    if not kink["decided"] or len(eos) < 2:
        return {**base, "error": math.nan, "decided": False,
                "detail": f"{kink.get('detail', '')}; {len(eos)} usable EoS-side runs (< 2); {'; '.join(notes)}"}
    gaps = [abs(1 - r["eta"] * _final_S(r)[0] / 2) for r in eos]
    kink_part = kink["error"] / kink_tolerance
    track_part = float(np.median(gaps)) / tracking_tolerance
    detail = (f"kink {kink['kink']:.4g} = {kink['kink'] / eta_c:.3f} x 2/s_GF (tolerance {kink_tolerance:.0%}; "
              f"grid spacing near eta_c {resolution:.0%}); EoS side median |1-eta*S/2| = {np.median(gaps):.3g} "
              f"over {len(eos)} runs (tolerance {tracking_tolerance:.0%})")
    return {**base, "error": max(kink_part, track_part), "decided": True, "kink": kink["kink"],
            "kink_over_eta_c": kink["kink"] / eta_c, "kink_error": kink["error"], "bracket": kink["bracket"],
            "plateau": kink["plateau"], "eos_constant": kink["eos_constant"], "eos_gaps": gaps,
            "eos_median_gap": float(np.median(gaps)), "kink_part": kink_part, "tracking_part": track_part,
            "detail": detail}


MEASURES = {  # name -> (how to read it from a run's final measures, expected direction on the EoS side)
    "l1": (lambda f: f["l1"], +1),
    "l2": (lambda f: f["l2"], +1),
    "nuclear_sum": (lambda f: f["nuclear_sum"], +1),
    "S_worst_case": (lambda f: abs(_float(f["S"]["value"])), -1),
    "avg_sharpness": (lambda f: _float(f["avg_sharpness"]["value"]), -1),
    "adaptive_sharpness": (lambda f: _float(f["adaptive_sharpness"]["value"]), -1),
}


def e3_measures(sweep: dict, eta_c: float, directions: dict | None = None) -> dict:
    """E3: on the EoS side every norm rises and every sharpness measure falls with η.

    Per measure, ρ = Spearman(η, measure) over EoS-side runs; violation = (1 − direction·ρ)/2 ∈ [0, 1]
    (0: perfectly monotone in the expected direction). error = the largest violation.
    """
    directions = directions or {k: d for k, (_, d) in MEASURES.items()}
    runs, notes = _usable(sweep)
    eos = [r for r in runs if r["eta"] >= (1 + SIDE_MARGIN) * eta_c]
    if len(eos) < 3:
        return {"error": math.nan, "decided": False, "notes": notes, "detail": f"{len(eos)} EoS-side runs (< 3)"}
    etas = [r["eta"] for r in eos]
    rhos, viol, values = {}, {}, {}
    for name, (read, _) in MEASURES.items():
        try:
            vals = [read(r["final"]) for r in eos]
        except (KeyError, TypeError):
            vals = [math.nan] * len(eos)
        values[name] = vals
        rho = _spearman(etas, vals) if np.all(np.isfinite(vals)) else math.nan
        rhos[name] = rho
        viol[name] = (1 - directions[name] * rho) / 2 if math.isfinite(rho) else math.nan
    if any(math.isnan(v) for v in viol.values()):
        return {"error": math.nan, "decided": False, "spearman": rhos, "values": values, "notes": notes,
                "detail": "a measure could not be computed on every EoS-side run"}
    worst = max(viol, key=viol.get)
    return {"error": viol[worst], "decided": True, "spearman": rhos, "values": values, "etas": etas,
            "notes": notes, "detail": "Spearman(eta, measure) on the EoS side: "
            + ", ".join(f"{k}={v:+.2f}" for k, v in rhos.items()) + f"; worst {worst}"}


E3_SEEDS = (0, 1, 2)
# EoS-side multiples of each seed's own η_c for E3 (the flow side does not enter E3)
E3_EOS_MULTIPLES = {"quick": (1.07, 1.25, 1.5, 2.0, 2.5, 3.0, 3.5), "full": (1.05, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0)}


def e3_configs(tier: str, loss: str = "mse") -> list[SweepConfig]:
    """E3's sweeps: the tier's setting at each seed of :data:`E3_SEEDS` (initialisation), EoS side only.

    EoS endpoints are chaotic in η (a 1e-6 change of η_c moves them by ~1 %), so E3 is judged on several
    seeds and more EoS points than the shared sweep has; see :func:`e3_measures_over_seeds`."""
    base = tier_config(tier, loss)
    return [dataclasses.replace(base, seed=seed, coarse=E3_EOS_MULTIPLES[tier], fine=(), track_every=0)
            for seed in E3_SEEDS]


def e3_measures_over_seeds(sweeps: list, eta_cs: list, directions: dict | None = None) -> dict:
    """E3 over seeds: per measure, ρ̄ = the mean over seeds of Spearman(η, measure) on each seed's EoS side;
    violation = (1 − direction·ρ̄)/2; error = the largest violation. Undecided if any seed is."""
    per = [e3_measures(sw, ec, directions) for sw, ec in zip(sweeps, eta_cs)]
    seeds = [sw.get("config", {}).get("seed", i) for i, sw in enumerate(sweeps)]
    if not all(p["decided"] for p in per):
        bad = [f"seed {s}: {p['detail']}" for s, p in zip(seeds, per) if not p["decided"]]
        return {"error": math.nan, "decided": False, "detail": "; ".join(bad),
                "notes": [n for p in per for n in p.get("notes", [])]}
    directions = directions or {k: d for k, (_, d) in MEASURES.items()}
    mean_rho = {k: float(np.mean([p["spearman"][k] for p in per])) for k in MEASURES}
    viol = {k: (1 - directions[k] * r) / 2 for k, r in mean_rho.items()}
    worst = max(viol, key=viol.get)
    n_runs = [len(p["etas"]) for p in per]
    return {"error": viol[worst], "decided": True, "spearman_mean": mean_rho,
            "spearman_per_seed": {k: [p["spearman"][k] for p in per] for k in MEASURES}, "seeds": seeds,
            "eos_runs_per_seed": n_runs, "notes": [n for p in per for n in p.get("notes", [])],
            "detail": f"mean over seeds {seeds} of Spearman(eta, measure), {n_runs} EoS-side runs: "
            + ", ".join(f"{k}={r:+.2f} (" + ",".join(f"{x:+.1f}" for x in (p["spearman"][k] for p in per)) + ")"
                        for k, r in mean_rho.items()) + f"; worst {worst}"}


NORMS = ("l1", "l2", "nuclear_sum")
SLOPE_ROUNDOFF = 1e-12  # added to each interval's half-width: a least-squares slope of a constant is ~1e-16, not 0
T975 = {1: 12.706204736, 2: 4.302652730, 3: 3.182446305, 4: 2.776445105, 5: 2.570581836, 6: 2.446911851,
        7: 2.364624252, 8: 2.306004135, 9: 2.262157163}  # Student t 97.5 % quantiles by degrees of freedom


def e3_norm_slopes(sweeps: list, eta_cs: list, shape: str = "growth") -> dict:
    """E3's norms as the paper states them: the slope of ‖θ‖ against η above η_c, seed by seed.

    Per seed and norm: least squares ‖θ‖ = k·(η/η_c) + m over the EoS-side runs (η ≥ 1.05 η_c), the relative
    slope k / ‖θ‖(first EoS run) (growth per unit of η/η_c, scale-free) and R² of the line. Across seeds: the
    mean relative slope and its 95 % Student-t interval (seed-level: the seeds are the independent units).

    ``shape="growth"``: every norm's interval lies above 0 (error 0; an interval below 0 or a
    flat norm, |mean| within its interval's half-width with the interval above 0 nowhere, is error 1 once
    decided). ``shape="flat"`` (the control): every interval contains 0. Undecided when fewer than 2 seeds
    have ≥ 3 EoS-side runs, or when the intervals neither exclude nor are consistent with the shape.
    """
    choice("shape", shape, ("growth", "flat"))
    per_seed = {k: [] for k in NORMS}
    r2 = {k: [] for k in NORMS}
    for sweep, eta_c in zip(sweeps, eta_cs):
        runs, _ = _usable(sweep)
        eos = [r for r in runs if r["eta"] >= (1 + SIDE_MARGIN) * eta_c]
        if len(eos) < 3:
            continue
        x = np.array([r["eta"] / eta_c for r in eos])
        for k in NORMS:
            y = np.array([_float(r["final"].get(k)) for r in eos])
            if not np.all(np.isfinite(y)):
                continue
            slope, intercept = np.polyfit(x, y, 1)
            resid = y - (slope * x + intercept)
            ss = float(np.sum((y - y.mean()) ** 2))
            per_seed[k].append(float(slope / y[np.argmin(x)]))
            r2[k].append(1 - float(np.sum(resid**2)) / ss if ss > 0 else math.nan)
    n = min(len(v) for v in per_seed.values())
    if n < 2:
        return {"error": math.nan, "decided": False, "detail": f"{n} seed(s) with >= 3 EoS-side runs (< 2)"}
    stats = {}
    for k, v in per_seed.items():
        v = np.array(v)
        half = T975[v.size - 1] * float(v.std(ddof=1)) / math.sqrt(v.size) + SLOPE_ROUNDOFF
        stats[k] = {"mean": float(v.mean()), "ci95": (float(v.mean() - half), float(v.mean() + half)),
                    "per_seed": v.tolist(),
                    "r2_mean": float(np.nanmean(r2[k])) if np.isfinite(r2[k]).any() else math.nan}  # a constant norm: no R²
    grows = all(st["ci95"][0] > 0 for st in stats.values())
    not_growing = any(st["ci95"][1] < 0 for st in stats.values())
    flat = all(st["ci95"][0] <= 0 <= st["ci95"][1] for st in stats.values())
    if shape == "growth":
        error, decided = (0.0, True) if grows else (1.0, True) if (not_growing or flat) else (math.nan, False)
    else:
        error, decided = (0.0, True) if flat else (1.0, True) if (grows or not_growing) else (math.nan, False)
    return {"error": error, "decided": decided, "norms": stats, "seeds": n,
            "detail": "relative slope of the norm per unit eta/eta_c above 1.05 eta_c, mean over "
                      f"{n} seeds [95 % t interval] (R² of the line): "
                      + ", ".join(f"{k} {st['mean']:+.3f} [{st['ci95'][0]:+.3f}, {st['ci95'][1]:+.3f}] "
                                  f"(R² {st['r2_mean']:.2f})" for k, st in stats.items())}


def e4_dynamics(sweep: dict, level_factor: float = 1.0) -> dict:
    """E4: in the tracked EoS run S_t oscillates around ``level_factor``·2/η; the 2-step averaged ‖θ‖₁ grows.

    EoS phase: from the first measurement with ηS/2 ≥ 1 − EDGE_DELTA to the end. error = max(median over the
    phase of |S_t/level − 1| (how far from the level S_t sits), 1 if S_t does not oscillate (monotone over
    the phase), 1 if the 2-step averaged ‖θ‖₁ does not grow over the phase). The fractions of measurements
    above and below the level are reported: "around" is read as "centred within the tolerance", not as
    "equally often on both sides" (measured: S_t sits mostly slightly above 2/η).
    """
    tracked = [r for r in sweep["runs"] if r.get("tracked")]
    if not tracked:
        return {"error": math.nan, "decided": False, "detail": "no tracked run in this sweep"}
    r = tracked[0]
    eta, level = r["eta"], level_factor * 2.0 / r["eta"]
    path = [p for p in r["sharpness_path"] if p.get("converged")]
    if r["outcome"] == "diverged" or len(path) < 4:
        return {"error": math.nan, "decided": False, "eta": eta,
                "detail": f"tracked run {r['outcome']} with {len(path)} converged sharpness points"}
    S = np.array([abs(_float(p["S"])) for p in path])
    steps = np.array([p["step"] for p in path])
    at_edge = np.nonzero(eta * S / 2 >= 1 - EDGE_DELTA)[0]
    if len(at_edge) == 0:
        if r["outcome"] == "oscillating":  # stopped by max_steps: the horizon was too short to tell
            return {"error": math.nan, "decided": False, "eta": eta,
                    "detail": f"sharpness had not reached 2/eta when max_steps={r['steps']} stopped the run"}
        return {"error": 1.0, "decided": True, "eta": eta, "detail": "sharpness never reached 2/eta before L < eps"}
    start = at_edge[0]
    phase = S[start:]
    dev = float(np.median(np.abs(phase / level - 1)))
    above, below = float(np.mean(phase > level)), float(np.mean(phase < level))
    l1 = np.asarray(r["l1"], float)
    avg = 0.5 * (l1[:-1] + l1[1:])  # two-step average removes the period-2 swing
    k0 = int(steps[start])
    growth = avg[-1] / avg[min(k0, len(avg) - 1)] - 1 if len(avg) else math.nan
    raw_up = float(np.mean(np.diff(l1[k0:]) > 0)) if len(l1) - k0 > 2 else math.nan
    steps_dS = np.diff(phase)
    oscillates = bool(np.any(steps_dS > 0) and np.any(steps_dS < 0))
    error = max(dev, 0.0 if oscillates else 1.0, 0.0 if growth > 0 else 1.0)
    return {"error": error, "decided": True, "eta": eta, "level": level, "median_dev": dev, "oscillates": oscillates,
            "frac_above": above,
            "frac_below": below, "l1_growth_avg2": growth, "raw_l1_increasing_fraction": raw_up,
            "phase_start_step": k0, "steps": r["steps"],
            "detail": f"eta={eta:.4g}: EoS from step {k0} of {r['steps']}; median|S/(2/eta)-1|={dev:.3g}, "
                      f"{above:.0%} above / {below:.0%} below 2/eta; 2-step-averaged l1 {growth:+.2%} over the "
                      f"phase (raw l1 rises on {raw_up:.0%} of steps)"}


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion k/n."""
    if n <= 0:
        return (math.nan, math.nan)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


E5_BOOT = 4000  # parametric bootstrap draws of the test-error curve (Monte Carlo error of a 2.5 % quantile ~0.2 %)
E5_LEVEL = 0.95


def e5_u_shape(sweep: dict, shape: str = "U", *, n_boot: int = E5_BOOT, seed: int = 0) -> dict:
    """E5 with a fair test: is test error against log η U-shaped (``shape="U"``) or not (``"no U"``)?

    Every non-diverged run counts once: a quadratic e(u) = a u² + b u + c in u = ln η is fitted to all of them
    (least squares, equal weights), so no end is judged on a single point against the best of many. Its
    uncertainty is a parametric bootstrap of each run's error over its n test examples (e* ~ Bin(n, e)/n,
    independent between runs: conservative, since the runs share one test set), ``n_boot`` draws, fixed seed.

    * **U**: the curvature's 95 % interval lies above 0 *and* the fitted minimum −b/(2a) lies inside the
      swept range of u in at least 95 % of the draws.
    * **no U**: the curvature's interval lies below 0, or the fitted minimum lies outside the range (or
      a ≤ 0) in at least 95 % of the draws.
    * neither: the sweep cannot tell (``decided`` False).

    ``error`` = 0 when ``shape`` holds, 1 when the other one does, NaN when undecided.
    """
    choice("shape", shape, ("U", "no U"))
    runs = [r for r in sweep["runs"] if r["outcome"] != "diverged"]
    if len(runs) < 4:
        return {"error": math.nan, "decided": False, "detail": f"{len(runs)} non-diverged runs (< 4 for a quadratic)"}
    errs = np.array([r["final"]["test_error"] for r in runs], float)
    n = int(runs[0]["final"]["n_test"])
    u = np.log([r["eta"] for r in runs])
    design = np.vstack([u**2, u, np.ones_like(u)]).T
    rng = np.random.default_rng(seed)
    draws = rng.binomial(n, np.clip(errs, 0, 1), size=(n_boot, errs.size)) / n
    coef = np.linalg.lstsq(design, draws.T, rcond=None)[0]  # (3, n_boot)
    a, b = coef[0], coef[1]
    fit = np.linalg.lstsq(design, errs, rcond=None)[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        vertex = np.where(a > 0, -b / (2 * a), np.nan)
    inside = (a > 0) & (vertex > u.min()) & (vertex < u.max())
    a_lo, a_hi = (float(q) for q in np.quantile(a, [(1 - E5_LEVEL) / 2, (1 + E5_LEVEL) / 2]))
    p_inside = float(inside.mean())
    is_u = a_lo > 0 and p_inside >= E5_LEVEL
    is_not_u = a_hi < 0 or (1 - p_inside) >= E5_LEVEL
    holds, other = (is_u, is_not_u) if shape == "U" else (is_not_u, is_u)
    error = 0.0 if holds else 1.0 if other else math.nan
    cis = [wilson_interval(round(e * n), n) for e in errs]
    best = int(np.argmin(errs))
    fitted_min = float(np.exp(-fit[1] / (2 * fit[0]))) if fit[0] > 0 else math.nan
    return {"error": error, "decided": bool(holds or other), "curvature": float(fit[0]),
            "curvature_ci95": (a_lo, a_hi), "p_min_inside": p_inside, "eta_at_fitted_min": fitted_min,
            "test_error": errs.tolist(), "ci95": cis, "n_test": n, "etas": [r["eta"] for r in runs],
            "best_index": best,
            "detail": f"test error {errs.min():.3f}..{errs.max():.3f} (n={n}) over {len(runs)} runs; quadratic in "
                      f"ln eta: curvature {fit[0]:+.4f} (95 % {a_lo:+.4f}..{a_hi:+.4f}), fitted minimum inside "
                      f"the sweep in {p_inside:.1%} of {n_boot} draws"
                      + (f" (at eta {fitted_min:.3g})" if math.isfinite(fitted_min) else "")}


# --------------------------------------------------------------------------------------------- figures

def make_figures(outdir, tier: str = "quick", *, sweep: dict | None = None,
                 progress: Callable | None = None) -> list[str]:
    """Write the four PNG figures of a tier (running or loading its MSE sweep) and return their paths.

    final S vs η with 2/η and η_c; norms vs η; test error vs η with 95 % Wilson CIs; S_t and ‖θ‖₁ over time
    for the tracked EoS run. (For ``biasaudit audit``: ``make_figures(outdir, "quick")``.)
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep = sweep or run_sweep(tier_config(tier, "mse"), progress=progress)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    eta_c = _float(sweep["gf"]["eta_c"])
    runs = [r for r in sweep["runs"] if r["outcome"] != "diverged"]
    diverged = [float(r["eta"]) for r in sweep["runs"] if r["outcome"] == "diverged"]
    etas = np.array([r["eta"] for r in runs], dtype=float)
    S = np.array([_final_S(r)[0] for r in runs])
    # the η range of the axes: the plotted runs, else the diverged ones (every run diverged: the panels show
    # the references and say so, never a zero-size reduction), else η_c
    span = etas if etas.size else np.array(diverged or ([eta_c] if math.isfinite(eta_c) else [1.0]))
    paths = []

    fig, ax = plt.subplots(figsize=(5, 3.6))
    grid = np.geomspace(span.min() * 0.9, span.max() * 1.1, 200)
    ax.plot(grid, 2 / grid, "k--", lw=1, label="2/η")
    if math.isfinite(eta_c):
        ax.axvline(eta_c, color="C3", lw=1, label=f"η_c = 2/s_GF = {eta_c:.3g}")
    if runs:
        ax.plot(etas, S, "o-", label="final S = max|λ|")
    ax.set(xscale="log", yscale="log", xlabel="η", ylabel="sharpness", title="final sharpness vs η")
    _no_runs_note(ax, runs, diverged)
    _eta_axis(ax, eta_c, span)
    if ax.get_legend_handles_labels()[0]:  # nothing labelled when every run diverged and eta_c is unknown
        ax.legend(fontsize=8)
    paths.append(_save(fig, outdir / "eos_sharpness_vs_eta.png"))

    fig, ax = plt.subplots(figsize=(5, 3.6))
    for key, label in (("l1", "‖θ‖₁"), ("l2", "‖θ‖₂"), ("nuclear_sum", "Σ nuclear")):
        if not runs:
            break
        vals = np.array([r["final"][key] for r in runs])
        ax.plot(etas, vals / vals[0], "o-", label=label)
    if math.isfinite(eta_c):
        ax.axvline(eta_c, color="C3", lw=1, label="η_c")
    _no_runs_note(ax, runs, diverged)
    ax.set(xscale="log", xlabel="η", ylabel="norm / norm at smallest η", title="norms vs η")
    _eta_axis(ax, eta_c, span)
    if ax.get_legend_handles_labels()[0]:  # nothing labelled when every run diverged and eta_c is unknown
        ax.legend(fontsize=8)
    paths.append(_save(fig, outdir / "eos_norms_vs_eta.png"))

    e5 = e5_u_shape(sweep)
    fig, ax = plt.subplots(figsize=(5, 3.6))
    if "test_error" in e5:
        err = np.array(e5["test_error"])
        ci = np.array(e5["ci95"])
        ax.errorbar(e5["etas"], err, yerr=[err - ci[:, 0], ci[:, 1] - err], fmt="o-", capsize=3)
    if math.isfinite(eta_c):
        ax.axvline(eta_c, color="C3", lw=1, label="η_c")
    _no_runs_note(ax, runs, diverged)
    ax.set(xscale="log", xlabel="η", ylabel="test error (95% Wilson CI)", title="test error vs η")
    _eta_axis(ax, eta_c, span)
    if ax.get_legend_handles_labels()[0]:  # nothing labelled when every run diverged and eta_c is unknown
        ax.legend(fontsize=8)
    paths.append(_save(fig, outdir / "eos_test_error_vs_eta.png"))

    tracked = [r for r in sweep["runs"] if r.get("tracked")]
    fig, ax = plt.subplots(figsize=(5, 3.6))
    if tracked:
        r = tracked[0]
        pts = [p for p in r["sharpness_path"] if p.get("converged")]
        ax.plot([p["step"] for p in pts], [abs(_float(p["S"])) for p in pts], ".-", ms=3, label="S_t")
        ax.axhline(2 / r["eta"], color="k", ls="--", lw=1, label="2/η")
        ax.set(xlabel="step", ylabel="sharpness", title=f"EoS run, η = {r['eta']:.3g}")
        ax2 = ax.twinx()
        l1 = np.asarray(r["l1"], float)
        ax2.plot(np.arange(len(l1)), l1, color="C2", lw=0.8, label="‖θ‖₁")
        ax2.set_ylabel("‖θ‖₁", color="C2")
        ax.legend(fontsize=8, loc="lower right")
    paths.append(_save(fig, outdir / "eos_dynamics.png"))
    return paths


def _no_runs_note(ax, runs, diverged) -> None:
    """When no run is left to plot (every run diverged), say so on the panel instead of leaving it blank."""
    if runs:
        return
    what = (f"every run diverged (η = {', '.join(f'{e:.3g}' for e in diverged[:4])}"
            + (", ..." if len(diverged) > 4 else "") + ")") if diverged else "no GD runs in this sweep"
    ax.text(0.5, 0.5, f"nothing to plot: {what}", transform=ax.transAxes, ha="center", va="center", fontsize=8,
            wrap=True)


def _eta_axis(ax, eta_c: float, etas) -> None:
    """Log η axis labelled in multiples of η_c (matplotlib's own minor labels overlap on short ranges)."""
    from matplotlib.ticker import NullFormatter

    lo, hi = min(etas), max(etas)
    ticks = [m for m in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0) if lo * 0.95 <= m * eta_c <= hi * 1.05]
    if math.isfinite(eta_c) and ticks:
        ax.set_xticks([m * eta_c for m in ticks])
        ax.set_xticklabels([f"{m:g} η_c" for m in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())


def _save(fig, path: Path) -> str:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)



def make_e2_figure(outdir, tier: str = "quick", *, sweeps: dict | None = None,
                   progress: Callable | None = None) -> list[str]:
    """E2 across architectures: final S/s_GF against η/η_c for each architecture of :data:`ARCH_TIERS`, with
    the prediction min(1, η_c/η) (plateau, then 2/η). Writes ``eos_e2_architectures.png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweeps = sweeps or {arch: run_sweep(arch_config(tier, arch), progress=progress) for arch in ARCHS_E2}
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    lo, hi = math.inf, 0.0
    for i, (arch, sweep) in enumerate(sweeps.items()):
        s_gf, eta_c = _float(sweep["gf"]["s_gf"]), _float(sweep["gf"]["eta_c"])
        runs, _ = _usable(sweep)
        if not runs or not (s_gf > 0):
            continue
        m = np.array([r["eta"] / eta_c for r in runs])
        ratio = np.array([_final_S(r)[0] / s_gf for r in runs])
        lo, hi = min(lo, m.min()), max(hi, m.max())
        ax.plot(m, ratio, "o-", color=f"C{i}", ms=4, lw=1, label=f"{arch} (s_GF {s_gf:.3g})")
    if hi > 0:
        grid = np.geomspace(lo * 0.95, hi * 1.05, 200)
        ax.plot(grid, np.minimum(1.0, 1.0 / grid), "k--", lw=1, label="predicted min(1, η_c/η)")
    ax.axvline(1.0, color="0.6", lw=0.8)
    ax.set(xscale="log", yscale="log", xlabel="η / η_c  (η_c = 2/s_GF)", ylabel="final S / s_GF",
           title=f"E2 across architectures ({tier} tier, MSE)")
    ax.legend(fontsize=7)
    path = outdir / "eos_e2_architectures.png"
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return [str(path)]
