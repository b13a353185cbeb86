"""What determines an EoS learning-rate sweep: :class:`SweepConfig`, and the sweeps each tier runs.

==============================  ==========================================================================
name                            what it holds
==============================  ==========================================================================
:class:`SweepConfig`            one sweep (data, network, loss, eps, the grid of multiples of η_c, GF proxy
                                settings, seed); its :meth:`~SweepConfig.key` is the run cache's key
:data:`SWEEP_CONFIGS`           tier -> loss -> the E1/E3/E4/E5 sweep (:func:`tier_config`)
:data:`ARCH_SWEEP_CONFIGS`      tier -> architecture -> the E2 sweep with MSE (:func:`arch_config`)
:data:`ARCH_SWEEP_CONFIGS_CE`   the same with cross-entropy (full tier only)
==============================  ==========================================================================

The key hashes the config, the source of :data:`RUN_CODE` (the code a sweep executes), torch and numpy
versions (:mod:`biasaudit.plumbing.runcache`): a code edit recomputes; no hand-bumped version.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from biasaudit.plumbing import InputError, choice, positive_int, positive_scalar
from biasaudit.plumbing.runcache import run_key

__all__ = ["RUN_CODE", "SweepConfig", "SWEEP_CONFIGS", "tier_config", "ARCHS_E2", "ARCH_SWEEP_CONFIGS",
           "ARCH_SWEEP_CONFIGS_CE", "arch_config", "TOY_SWEEP",
           "E2_SEEDS", "TOY_SEEDS", "E2_FULL_ONLY", "e2_seed_configs", "CENTRAL_FLOW_FCN", "CENTRAL_FLOW_TOY",
           "CENTRAL_FLOW_TOY_T", "CENTRAL_FLOW_SEEDS"]

# The code a sweep executes: its cache key hashes these sources (biasaudit.plumbing.runcache), so an edit to
# any of them recomputes the sweep, and an edit of the statistics, the claims or the figures does not; no
# hand-bumped version. This module is left out: a sweep's configuration enters its key field by field, so adding a
# configuration to the tables below does not retrain the others. tests/test_validation_eos_sweep.py runs small
# sweeps of every architecture and loss and fails when they load a module of validation/ or numerics/ that is not
# listed here.
RUN_CODE = tuple(f"biasaudit.validation.{m}" for m in (
    "data", "device", "eos_data", "eos_runs", "eos_toy", "fcn", "gd_trainer", "gf_proxy", "models", "seeding", "sharpness",
    "vit")) + ("biasaudit.numerics.tableau",)



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
    track_burst: int = 4  # S at this many consecutive steps from every track_every-th (E4's period 2 needs >= 4)
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
        positive_int("track_burst", self.track_burst)  # >= track_every: every step
        positive_int("image_pool", self.image_pool)
        if not all(isinstance(kv, tuple) and len(kv) == 2 and isinstance(kv[0], str) for kv in self.model_kwargs):
            raise InputError("model_kwargs", "must be a tuple of (name, value) pairs", self.model_kwargs)

    def key(self) -> str:
        """The sweep's cache key, ``<arch>-<loss>-<dataset>-<hash>``: 16 hex digits of
        :func:`~biasaudit.plumbing.runcache.run_key` over the fields and the source of :data:`RUN_CODE`. The device and
        the data folder are left out, as are ``hvp_method``, ``image_pool`` and ``model_kwargs`` at their defaults;
        file-based data add the files' sha256."""
        skip = ("device", "data_dir") + (("hvp_method",) if self.hvp_method == "forward-over-reverse" else ())
        skip += tuple(k for k, default in (("image_pool", 1), ("model_kwargs", ())) if getattr(self, k) == default)
        data = {k: v for k, v in dataclasses.asdict(self).items() if k not in skip}
        if self.dataset not in ("teacher", "toy"):
            from biasaudit.validation.data import dataset_fingerprint

            fingerprint = dataset_fingerprint(self.dataset, self.data_dir)
            if fingerprint is not None:  # file-based data: what the files hold (not where they lie)
                data["data_sha256"] = fingerprint
        return f"{self.arch}-{self.loss}-{self.dataset}-" + run_key(data, RUN_CODE, length=16)

    def multiples(self) -> list[float]:
        """The grid: the distinct values of ``coarse`` and ``fine``, sorted (multiples of η_c, or step sizes when
        ``absolute``)."""
        return sorted(set(float(m) for m in tuple(self.coarse) + tuple(self.fine)))


# tier -> loss -> sweep. The quick tier is the measured setting (FCN 784→32→32→10 tanh, MNIST-5k
# n=500, MSE, eps=1e-2). CE gets its own GF proxy with sharpness measured every few steps and a shorter grid.
SWEEP_CONFIGS: dict[str, dict[str, SweepConfig]] = {
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
    """The sweep of ``tier`` with ``loss`` (:data:`SWEEP_CONFIGS`), with ``overrides`` replaced."""
    choice("tier", tier, tuple(SWEEP_CONFIGS))
    choice("loss", loss, ("mse", "ce"))
    return dataclasses.replace(SWEEP_CONFIGS[tier][loss], **overrides) if overrides else SWEEP_CONFIGS[tier][loss]


# E2 across architectures. The FCN is the quick tier's MSE sweep. The CNN, ResNet and ViT are
# sized so that a whole sweep costs ~1-2 min on one core: MNIST-5k n = 100 pooled to 7 x 7 (ViT: 14 x 14,
# patches of 7), MSE, eps = 2e-2 (at eps = 1e-2 a GD run near eta_c of the 7 x 7 CNN needs ~5,000 steps,
# against ~2,000 at 2e-2; notes/validation-eos.md). The ResNet takes n = 300: at n = 100 its whole flow was
# ~200 steps with S rising ~5 % per step at the stop, so every endpoint hung on the step that crossed eps.
# The full tier runs them at 28 x 28, n = 1000, eps = 1e-2.
# fcn_relu: the E1 FCN with ReLU instead of tanh; resnet_nobn: the same ResNet without its BatchNorm layers;
# resnet_fixednorm: the same ResNet with each BatchNorm's statistics fixed at θ0's (validation.models), so nothing is
# scale-invariant. It takes n = 100: its flow sharpens steadily (S from ~25 to 120-170 at eps with MSE, ~2800 with
# cross-entropy), and at n = 300 the proxy had not reached eps = 0.02 after 4000 steps (36 s; S 173 and rising),
# while at n = 100 it does in 1500-2600 steps (10-20 s) and a seed's sweep costs 50-90 s with MSE, ~145 s with CE.
ARCHS_E2 = ("fcn", "cnn", "resnet", "vit", "fcn_relu", "resnet_nobn", "resnet_fixednorm")
_E2_GRID = dict(coarse=(0.75, 1.25, 2.0), fine=(0.93, 0.97, 1.03, 1.07), track_every=0)
_E2_FULL_GRID = dict(coarse=(0.5, 0.75, 1.25, 1.5, 2.0, 3.0), fine=(0.9, 0.95, 0.98, 1.02, 1.05, 1.1),
                     track_every=0, dataset="mnist", n_train=1000, n_test=10000, eps=1e-2, max_steps=200_000)
ARCH_SWEEP_CONFIGS: dict[str, dict[str, SweepConfig]] = {
    "quick": {
        "fcn": SWEEP_CONFIGS["quick"]["mse"],
        "cnn": SweepConfig(arch="cnn", n_train=100, image_pool=4, model_kwargs=(("width", 8),), eps=2e-2,
                           gf_every=100, **_E2_GRID),
        "resnet": SweepConfig(arch="resnet", n_train=300, image_pool=4, model_kwargs=(("width", 8),), eps=2e-2,
                              gf_every=100, **_E2_GRID),
        "vit": SweepConfig(arch="vit", n_train=100, image_pool=2, model_kwargs=(("dim", 16), ("patch", 7)),
                           eps=2e-2, gf_every=100, **_E2_GRID),
        "fcn_relu": dataclasses.replace(SWEEP_CONFIGS["quick"]["mse"], activation="relu"),
        "resnet_nobn": SweepConfig(arch="resnet", n_train=300, image_pool=4,
                                   model_kwargs=(("width", 8), ("norm", "none")), eps=2e-2, gf_every=100, **_E2_GRID),
        "resnet_fixednorm": SweepConfig(arch="resnet", n_train=100, image_pool=4,
                                        model_kwargs=(("width", 8), ("norm", "fixed")), eps=2e-2, gf_every=100,
                                        **_E2_GRID),
    },
    "full": {
        "fcn": SWEEP_CONFIGS["full"]["mse"],
        "cnn": SweepConfig(arch="cnn", model_kwargs=(("width", 16),), **_E2_FULL_GRID),
        "resnet": SweepConfig(arch="resnet", model_kwargs=(("width", 16),), **_E2_FULL_GRID),
        "vit": SweepConfig(arch="vit", model_kwargs=(("dim", 32), ("patch", 7)), **_E2_FULL_GRID),
        "fcn_relu": dataclasses.replace(SWEEP_CONFIGS["full"]["mse"], activation="relu"),
        "resnet_nobn": SweepConfig(arch="resnet", model_kwargs=(("width", 16), ("norm", "none")), **_E2_FULL_GRID),
        "resnet_fixednorm": SweepConfig(arch="resnet", model_kwargs=(("width", 16), ("norm", "fixed")),
                                        **_E2_FULL_GRID),
    },
}


# The positive control of the network claims: the theory model (validation.eos_toy) through the same pipeline
# (proxy, GD, eigsh, statistics) on the quick tier's E2 grid. float64, eps = 1e-8 (a run's endpoint sits on the
# solution manifold to 1e-4 in r); the proxy re-measures sharpness every 5 steps (its whole run is ~20 steps).
# Its grid adds 1.15 and 1.4 eta_c to E2's: GD on the theory model diverges at 2 eta_c (all 8 quick seeds), so E2's
# grid leaves it 2 EoS-side runs, and E3's statistics need 3 (it converges up to 1.75 eta_c on every seed). E4's run,
# with its sharpness measured every 5 steps, is the one at 1.4 eta_c (the networks': 2 eta_c, every 25 steps).
TOY_SWEEP = SweepConfig(arch="diag_shared", loss="half_sq", dataset="toy", n_train=1, n_test=1, dtype="float64",
                        eps=1e-8, gf_every=5, max_steps=50_000,
                        **{**_E2_GRID, "coarse": (0.75, 1.15, 1.25, 1.4, 2.0), "track_multiple": 1.4,
                           "track_every": 5})
# Init seeds of every E2 claim, per tier (each seed: its own init, data subset, s_GF and eta_c). The theory model
# takes more (a sweep costs ~3 s): on its first 3 seeds the 90 % interval of the positive control's statistic was
# 0.068 wide (seed sd 0.020), as wide as the margin, so 8 seeds at the quick tier and 16 at the full tier (fixed
# before seeds 3-15 ran).
E2_SEEDS = {"quick": (0, 1, 2), "full": (0, 1, 2, 3, 4)}
TOY_SEEDS = {"quick": tuple(range(8)), "full": tuple(range(16))}
# Architectures whose E2 sweeps do not fit the quick tier, with the measured reason: they run at the full tier.
E2_FULL_ONLY = {
    "resnet_nobn": "without BatchNorm the quick ResNet (7x7, n = 300, width 8) fits slowly while its sharpness keeps "
                   "rising: after 3000 proxy steps (270 s of one core) the MSE loss was 0.066 against eps = 0.02 and "
                   "S had grown from 0.22 to 31 (init scale 1.5 and 2: loss 0.070 and 0.061 at 2000 steps, S 24 and "
                   "33, still rising); at n = 100, with the default init or the residual branches' last convolution "
                   "zeroed (SkipInit), 6000 steps left the loss at 0.057-0.059 and S at 56-73, still rising; so no "
                   "sweep reaches eps where the flow's sharpness has levelled off",
}


def e2_seed_configs(tier: str, arch: str, loss: str = "mse") -> list[SweepConfig]:
    """E2's sweeps of ``arch`` (an entry of :data:`ARCHS_E2`, or ``"toy"``: :data:`TOY_SWEEP`, whose loss is
    ½ r² whatever ``loss``) with ``loss`` at each seed of :data:`E2_SEEDS` (the toy: :data:`TOY_SEEDS`) for
    ``tier``."""
    choice("tier", tier, tuple(E2_SEEDS))
    base = TOY_SWEEP if arch == "toy" else arch_config(tier, arch, loss)
    return [dataclasses.replace(base, seed=seed) for seed in (TOY_SEEDS if arch == "toy" else E2_SEEDS)[tier]]


# Cross-entropy per architecture: each architecture's MSE setting with cross-entropy, eps = 0.25 (near the flow's
# sharpness peak; eos.torch.e1.tracking_fails_small_eps.fcn.ce states what happens below it) and sharpness re-measured every
# 5 steps of the proxy (CE's sharpness peaks mid-path); the quick tier on the E2 grid.
_CE = dict(loss="ce", eps=0.25, gf_every=5, track_multiple=1.5)
ARCH_SWEEP_CONFIGS_CE: dict[str, dict[str, SweepConfig]] = {
    tier: {arch: dataclasses.replace(ARCH_SWEEP_CONFIGS[tier][arch], **_CE, **(
        dict(max_steps=6000, track_every=0) if tier == "quick" else {})) for arch in ARCHS_E2}
    for tier in ("quick", "full")
}


def arch_config(tier: str, arch: str, loss: str = "mse", **overrides) -> SweepConfig:
    """The E2 sweep of ``arch`` with ``loss`` at ``tier`` (:data:`ARCH_SWEEP_CONFIGS`, :data:`ARCH_SWEEP_CONFIGS_CE`)."""
    choice("tier", tier, tuple(ARCH_SWEEP_CONFIGS))
    choice("arch", arch, ARCHS_E2)
    choice("loss", loss, ("mse", "ce"))
    table = ARCH_SWEEP_CONFIGS if loss == "mse" else ARCH_SWEEP_CONFIGS_CE
    config = table[tier][arch]
    return dataclasses.replace(config, **overrides) if overrides else config


# The central flow on networks (biasaudit.validation.central_flow, claims eos.torch.central_flow.*): GD and the flow
# over a short path, the gradient-flow time to loss eps, at the step sizes `coarse` (multiples of eta_c). A small
# FCN (MNIST-5k n = 100 pooled to 7 x 7, 49-16-16-10 tanh, p = 1242, float64) with eps = 0.045: its gradient flow
# reaches eps at t = 250-300 with s_GF = 1.5-1.7, so GD at 1.25-1.5 eta_c takes 110-200 steps (a pure-sharpening
# path to eps = 1e-2 would take t = 1800). Not 2 eta_c: seed 1 starts with S(theta_0) = 0.64 s_GF, above 2/eta there,
# where GD is unstable from its first step and the flow is not defined. The theory model at the same multiples (GD
# on it diverges at 2 eta_c) over t = 40.
CENTRAL_FLOW_FCN = SweepConfig(n_train=100, image_pool=4, width=16, dtype="float64", eps=0.045, gf_every=20,
                               coarse=(1.25, 1.5), fine=(), track_every=0)
CENTRAL_FLOW_TOY = dataclasses.replace(TOY_SWEEP, coarse=(1.25, 1.5), fine=())
CENTRAL_FLOW_TOY_T = 40.0  # the theory model's loss falls ~1e-5-fold by then (GD at 1.25-1.5 eta_c: 160-200 steps)
CENTRAL_FLOW_SEEDS = {"quick": (0, 1, 2), "full": (0, 1, 2, 3, 4)}
