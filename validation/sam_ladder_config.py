r"""The design of "minor first, major last" on a ladder of models: what runs, fixed before any claim seed ran.

The ladder: the depth-2 diagonal linear network (``diag``: the theory's own model, the positive control), the
small CNN behind an elementwise input gate (``gated_cnn``: every input feature reaches the network through a
depth-2 product, as in the theory) and the plain small CNN (``cnn``). Task: the bright/faint patch images
(:func:`biasaudit.validation.data.synthetic_patches`: both patches predict the label; the faint one is the minor
feature). One rung more, on real images: ``mnist_planted``, the gated CNN on MNIST-5k with a faint class-coded patch
planted in the border (``mnist5k-planted``: the patch is the minor feature, the rest of the image, the digit, the
major one); it runs at the full tier only (:data:`AUDIT_TIERS`). Every run trains full-batch until its training loss reaches :data:`LOSS_TARGET` (or its horizon) and
is evaluated every 2 steps up to step 40, then every ``eval_every`` (the ``dense`` schedule of
:mod:`biasaudit.validation.sam_training`).

Placement in α (the init scale). SAM's boundary α_50 (the α at which half of SAM's runs reach the loss target
within the horizon) was measured per model on pilot seeds that no claim reads (:data:`PILOT_SEEDS`; the pilot
is :func:`pilot_boundary`, its numbers are in notes/validation-sam.md). The claims read the multiples
:data:`MULTIPLES` of it:

* ``primary`` = 1.5 α_50: where the verdicts are read. On the diagonal network, where the theory is exact, the
  major feature overtakes the minor one before the loss target only from about 1.3 α_50 on (the pilot: the
  statistic D is −0.24 at 1.04 α_50 and −0.38 at 1.15 α_50, +0.11 at 1.26 α_50 and +0.06 at 1.48 α_50, on every
  seed): nearer the boundary SAM's minor phase outlasts the loss target. 1.5 α_50 was fixed from the diagonal
  network alone, before any seed of a network claim ran.
* ``near`` = 1.1 α_50: the point nearest the boundary (its reading on the diagonal network is a claim of its own:
  the failing side); the networks run it at the full tier only.
* ``gd_like`` = 3 α_50: the GD-like regime (the dose-response's far end).

Arms per seed s (GD and SAM of one seed share data and initialisation): ``sam``/``gd`` at each multiple; at the
primary multiple also ``aa`` (GD on seed s + :data:`AA_OFFSET`, read against GD on seed s), ``randsam`` (a
random perturbation of norm ρ in SAM's place), and SAM/GD on the ``equal`` and ``swapped`` patch layouts where
the task has them (:func:`control_arms`: MNIST's major feature is the digit, not a patch, so it has neither).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from biasaudit.plumbing import InputError, choice

__all__ = ["MODELS", "TIERS", "AUDIT_TIERS", "MULTIPLES", "multiples", "LOSS_TARGET", "PILOT_SEEDS", "AA_OFFSET",
           "ARMS", "LAYOUT_ARMS", "control_arms", "LadderRun", "ladder_settings", "ladder_runs", "run_config",
           "pilot_boundary", "check_seeds", "check_horizon"]

MODELS = ("diag", "gated_cnn", "cnn", "mnist_planted")
TIERS = ("quick", "full")
MULTIPLES = {"near": 1.1, "primary": 1.5, "gd_like": 3.0}
LOSS_TARGET = 0.05
PILOT_SEEDS = tuple(range(1000, 1008))  # the pilot's seeds: no claim reads them
AA_OFFSET = 5000  # the A/A arm's GD run of seed s trains on seed s + AA_OFFSET (other data, other init)
ARMS = ("sam", "gd", "aa", "randsam", "sam_equal", "gd_equal", "sam_swapped", "gd_swapped")
LAYOUT_ARMS = ("sam_equal", "gd_equal", "sam_swapped", "gd_swapped")  # the patch layouts' arms: patch tasks only
_NO_LAYOUTS = ("mnist_planted",)  # the major feature is the digit: no equal or swapped layout exists
# The tiers at which the audit runs a model's claims. The MNIST rung's quick runs would cost 15-20 min of one core
# (12 seeds x 6 runs of 2-60 s on 2 shared cores), far beyond the 60 s the quick audit can spare for it.
AUDIT_TIERS = {"diag": TIERS, "gated_cnn": TIERS, "cnn": TIERS, "mnist_planted": ("full",)}

_COMMON = dict(n_test=64, n_probe=4, batch_size=None, loss_target=LOSS_TARGET, schedule="dense", probe=False,
               keep_maps=0, eval_every=10)
# per model: the training setting, the pilot's alpha_50 (pilot_boundary on PILOT_SEEDS, 5 alphas 1.15 apart: diag
# 0.0278 with no seed varying (its init is deterministic; 0.0259 never fits, 0.0298 always), gated_cnn 0.459
# [0.404, 0.534], cnn 0.430 [0.346, 0.514]; mnist_planted 1.09 [0.96, 1.30] on 6 seeds, horizon 1000 = 6x GD's
# 160 steps to fit at alpha 1.0; notes/validation-sam.md), the horizon; per tier: the seeds
_SETTINGS = {
    "diag": dict(dataset="synthetic-patches", model="diag2", n_train=256, n_eval=256, lr=0.2, rho=0.3,
                 steps=4000, alpha_50=0.0278),
    "gated_cnn": dict(dataset="synthetic-patches", model="gated_cnn", downsample=2, width=4, n_train=256,
                      n_eval=256, lr=0.1, rho=0.2, steps=2000, alpha_50=0.46),
    "cnn": dict(dataset="synthetic-patches", model="cnn", downsample=2, width=4, n_train=256, n_eval=256, lr=0.1,
                rho=0.2, steps=2000, alpha_50=0.43),
    "mnist_planted": dict(dataset="mnist5k-planted", model="gated_cnn", downsample=2, width=4, n_train=256,
                          n_eval=256, lr=0.1, rho=0.2, steps=1000, alpha_50=1.09),
}
_SEEDS = {"quick": tuple(range(12)), "full": tuple(range(32))}
# The near multiple on the networks costs the most (SAM's runs there sit on the loss plateau for most of their
# horizon): at the quick tier only the diagonal network, where the failing side is stated, runs it.
_NEAR_AT_QUICK = ("diag",)


def multiples(model: str, tier: str) -> tuple[str, ...]:
    """The multiples of α_50 that ``model`` runs at ``tier`` (keys of :data:`MULTIPLES`)."""
    return tuple(m for m in MULTIPLES if m != "near" or tier == "full" or model in _NEAR_AT_QUICK)


def control_arms(model: str) -> tuple[str, ...]:
    """The arms of ``model``'s data controls at the primary multiple (:data:`ARMS` less ``sam`` and ``gd``; the
    patch layouts' arms only on the patch images)."""
    choice("model", model, MODELS)
    return tuple(a for a in ARMS if a not in ("sam", "gd") and (model not in _NO_LAYOUTS or a not in LAYOUT_ARMS))


def check_seeds(seeds) -> tuple[int, ...]:
    """``seeds`` as a tuple of distinct non-negative ints, at least :data:`~biasaudit.validation.decision.MIN_SEEDS`
    of them (fewer cannot give a seed-level interval); else :class:`InputError` naming ``seeds``."""
    from biasaudit.validation.decision import MIN_SEEDS

    try:
        seeds = tuple(int(s) for s in seeds)
    except (TypeError, ValueError):
        raise InputError("seeds", "must be a sequence of integers", seeds) from None
    if len(seeds) < MIN_SEEDS or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise InputError("seeds", f"must be at least {MIN_SEEDS} distinct non-negative integers", seeds)
    return seeds


def check_horizon(steps, eval_every: int) -> int:
    """``steps`` (a run's horizon) as an int that covers the evaluation schedule: the dense evaluations (every
    2 steps to step 40) and at least one evaluation after them; else :class:`InputError` naming ``horizon``."""
    from biasaudit.validation.sam_training import DENSE_UNTIL

    shortest = DENSE_UNTIL + eval_every
    if not isinstance(steps, (int, float)) or int(steps) != steps or steps < shortest:
        raise InputError("horizon", f"must be an integer >= {shortest} steps (the dense evaluations to step "
                                    f"{DENSE_UNTIL} and one every {eval_every} after them)", steps)
    return int(steps)


def ladder_settings(model: str, tier: str, *, seeds=None, horizon=None) -> dict:
    """The training setting of ``model`` at ``tier`` (keywords of :class:`~biasaudit.validation.sam_training.
    TrainConfig`), with ``alpha_50`` and ``seeds``; ``seeds`` and ``horizon`` (the most steps a run may take)
    replace the tier's when given."""
    choice("model", model, MODELS)
    choice("tier", tier, TIERS)
    settings = {**_COMMON, **_SETTINGS[model], "seeds": _SEEDS[tier]}
    if seeds is not None:
        settings["seeds"] = check_seeds(seeds)
    if horizon is not None:
        settings["steps"] = check_horizon(horizon, settings["eval_every"])
    return settings


@dataclass(frozen=True)
class LadderRun:
    """One run of the ladder: ``model``, ``multiple`` (a key of :data:`MULTIPLES`), ``arm`` (:data:`ARMS`) and
    ``seed``."""

    model: str
    multiple: str
    arm: str
    seed: int


def ladder_runs(model: str, tier: str, *, seeds=None) -> tuple[LadderRun, ...]:
    """Every run the claims of ``model`` read at ``tier`` (on ``seeds`` when given): SAM and GD at each multiple,
    and the control arms at the primary multiple."""
    seeds = ladder_settings(model, tier, seeds=seeds)["seeds"]
    runs = [LadderRun(model, m, arm, s) for m in multiples(model, tier) for s in seeds for arm in ("sam", "gd")]
    runs += [LadderRun(model, "primary", arm, s) for s in seeds for arm in control_arms(model)]
    return tuple(runs)


def run_config(run: LadderRun, tier: str, device: str = "cpu", *, horizon=None):
    """The :class:`~biasaudit.validation.sam_training.TrainConfig` of one ladder run (``horizon``: its most steps,
    the model's own when ``None``)."""
    from biasaudit.validation.sam_training import TrainConfig

    if run.multiple not in MULTIPLES:
        raise InputError("multiple", f"must be one of {', '.join(MULTIPLES)}", run.multiple)
    if run.arm not in ("sam", "gd", *control_arms(run.model)):
        raise InputError("arm", f"must be one of {', '.join(('sam', 'gd', *control_arms(run.model)))}", run.arm)
    settings = ladder_settings(run.model, tier, horizon=horizon)
    alpha = round(settings["alpha_50"] * MULTIPLES[run.multiple], 10)
    base = {k: v for k, v in settings.items() if k not in ("alpha_50", "seeds")}
    optimizer = {"aa": "gd", "randsam": "randsam"}.get(run.arm, run.arm.split("_")[0])
    seed = run.seed + AA_OFFSET if run.arm == "aa" else run.seed
    dataset = base.pop("dataset")
    if run.arm.endswith(("_equal", "_swapped")):
        dataset = f"{dataset}-{run.arm.split('_')[1]}"
    return TrainConfig(**base, dataset=dataset, optimizer=optimizer, init_scale=alpha, seed=seed, data_seed=seed,
                       device=device)


def pilot_boundary(model: str, alphas, *, seeds=PILOT_SEEDS, tier: str = "quick") -> dict:
    """SAM's boundary α_50 of ``model`` from pilot runs (SAM only, on ``seeds``): the share of runs that reach
    the loss target at each α of ``alphas``, and the logistic fit of :func:`biasaudit.validation.sam_stats.
    logistic_boundary`. The audit never runs it; the design's ``alpha_50`` was read from its output."""
    import numpy as np

    from biasaudit.validation.sam_runs import cached_run
    from biasaudit.validation.sam_stats import logistic_boundary
    from biasaudit.validation.sam_training import TrainConfig

    settings = ladder_settings(model, tier)
    base = {k: v for k, v in settings.items() if k not in ("alpha_50", "seeds")}
    alphas = [float(a) for a in alphas]
    fits = np.array([[cached_run(replace(TrainConfig(**base), optimizer="sam", init_scale=a, seed=s, data_seed=s))
                      ["status"] == "ok" for s in seeds] for a in alphas])
    return {"model": model, "alphas": alphas, "seeds": list(seeds), "reached_target": fits.mean(axis=1).tolist(),
            "boundary": logistic_boundary(alphas, fits)}
