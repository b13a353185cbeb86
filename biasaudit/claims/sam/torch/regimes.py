r"""SAM's collapse boundary on networks (regime 1 of paper 1), read as a signature, under the experiment contract.

Below a critical init scale alpha_c, l2-SAM collapses (beta -> 0, the loss stays at its initial value) while GD
fits from the same init; above it SAM fits too. Each design (runs: :mod:`biasaudit.validation.sam_regimes`) trains
SAM, GD, GD on other seeds (A/A) and RandSAM at an alpha ``below`` SAM's boundary and one well ``above`` it, every run
to its loss target or a horizon of at least 4 times GD's time to fit, and reads each run's outcome as a signature
(``ok``, ``collapsed``, ``slow``: :func:`biasaudit.validation.sam_training.run_outcome`). The statistic
(:mod:`biasaudit.validation.sam_collapse_stats`) is the seed's collapse contrast

    C = [c(SAM, below) − c(GD, below)] − [c(SAM, above) − c(GD, above)],   c = 1 collapsed, 0 fitted,

which is 1 on every seed in regime 1 and 0 without a SAM-specific boundary. Seeds with a slow or diverged run are
left out and counted (more than :data:`~biasaudit.validation.sam_collapse_stats.MAX_MISSING_SHARE`: undecided).

=========================================  ======================================================================
claim                                      design
=========================================  ======================================================================
``sam.torch.diag_collapse_boundary``       the depth-2 diagonal network on the patch images: the **positive
                                           control** (``role = "positive_control"``)
``sam.torch.cnn_collapse_boundary``        the small CNN on MNIST-5k (14x14)
``sam.torch.patch_collapse_boundary``      the small CNN on the bright/faint patch images (8x8)
``sam.torch.resnet_collapse_boundary``     the small ResNet without BatchNorm on MNIST-5k (14x14)
``sam.torch.fashion_collapse_boundary``    the small CNN on Fashion-MNIST (14x14), when its files are found
``sam.torch.cifar10_collapse_boundary``,   the same on CIFAR-10 / SVHN, full tier only (``audit --data-dir``)
``sam.torch.svhn_collapse_boundary``
=========================================  ======================================================================

Each network claim is undecided unless the diagonal network's claim is confirmed in the same audit and both data
controls (A/A: GD on other seeds in SAM's place; RandSAM in SAM's place) are equivalent to 0 within :data:`DELTA`.
"""

from __future__ import annotations

import functools

import sympy as sp

from biasaudit.contract import DataControl, ExperimentContract, contract_observation
from biasaudit.domain import Domain, Fixed
from biasaudit.figures import FigureJob
from biasaudit.ledger import Claim, Observation, OutOfScope, Tolerance
from biasaudit.tier import AuditTier

__all__ = ["CLAIMS", "FIGURES", "regime_result", "design_data", "collapse_decision", "STATISTIC", "DELTA",
           "POSITIVE_CONTROL"]

ALPHA, ALPHA_C, RHO = sp.symbols("alpha alpha_c rho", positive=True)
C = sp.Symbol("C")  # the collapse contrast of a seed (validation.sam_collapse_stats)

STATISTIC = "biasaudit.validation.sam_collapse_stats:collapse_contrast"
POSITIVE_CONTROL = "sam.torch.diag_collapse_boundary"
LEVEL = 0.05
# Fixed from the diagonal network's pilot (seeds 1000-1001, which no claim reads) before any claim seed of this
# design ran: there C = 1 on both seeds (SAM collapsed at 0.0139 and fitted at 0.0834, GD fitted at both).
DELTA = 0.25
DELTA_REASON = ("a quarter of the effect where the theory guarantees it (C = 1 on every pilot seed of the diagonal "
                "network): a boundary that changes the outcome of fewer than a quarter of the seeds is not regime 1, "
                "where every run below alpha_c collapses; fixed before any claim seed ran")

CI_SIDE = Tolerance(
    "effect_ci_side", 0.0,
    "the 95% seed-level interval of the collapse contrast C must lie above 0; error = how far it reaches below 0 "
    "(the contract's three-way decision: validation.decision)")

_CONTROLS = (
    DataControl("aa", ("aa", "gd"), "GD from other seeds in SAM's place: the contrast of two GD arms"),
    DataControl("randsam", ("randsam", "gd"), "a random perturbation of norm rho in SAM's place (the placebo)"),
)
_READS = {c.name: " vs ".join(c.arms) for c in _CONTROLS}


def design_data(design: str, tier: str) -> tuple[str | None, str | None]:
    """(data folder or None, None) when the design can run at ``tier``, else (None, why it cannot).

    Designs on data that cannot be bundled run when :func:`~biasaudit.validation.data.dataset_location` finds
    the files (in ``$BIASAUDIT_DATA_DIR``, set by ``audit --data-dir``, or Debian's Fashion-MNIST folder);
    otherwise their claims are out of scope, with this reason."""
    from biasaudit.tier import experiment_data_dir
    from biasaudit.validation.data import BUNDLED_DATASETS, dataset_location
    from biasaudit.validation.sam_regimes import DESIGNS

    if tier not in DESIGNS[design]:
        return None, (f"the {design} design runs at the full tier only (biasaudit audit --tier full, meant for a "
                      "GPU)")
    dataset = DESIGNS[design][tier]["dataset"]
    if dataset in BUNDLED_DATASETS:
        return None, None
    where = experiment_data_dir()
    found = dataset_location(dataset, where)
    if found is None:
        looked = f"--data-dir {where}" if where else "no --data-dir given"
        extra = " or /usr/share/datasets/fashion-mnist (apt-get install dataset-fashion-mnist)" \
            if dataset == "fashion-mnist" else ""
        return None, f"data set {dataset} not found ({looked}{extra})"
    return str(found), None


@functools.cache
def _regime_result(design: str, tier: str, data_dir: str | None) -> dict:
    from biasaudit.validation.sam_regimes import regime_experiment

    return regime_experiment(design, tier, data_dir=data_dir)


def regime_result(design: str, tier: str) -> dict:
    """The design's grid, trained or read from the run cache, and its analysis (memoised per process)."""
    return _regime_result(design, tier, design_data(design, tier)[0])


def _tier() -> str:
    from biasaudit.claims.sam.torch._common import sam_torch_tier

    return sam_torch_tier()


def _runs_of_design(design: str):
    def runs() -> tuple:
        from biasaudit.audit.units import RunUnit
        from biasaudit.validation.sam_regimes import regime_configs

        tier = _tier()
        data_dir, missing = design_data(design, tier)
        if missing:
            return ()
        designs = (design,) if design == "diag" else (design, "diag")  # a network claim reads its positive control
        return tuple(RunUnit(f"sam-{cfg.key()}", f"run {d}/{tier}: {cfg.optimizer} alpha={cfg.init_scale} "
                             f"seed={cfg.seed}", "biasaudit.validation.sam_runs:cached_run_unit", (cfg,))
                     for d in designs
                     for cfg in regime_configs(d, tier, device="auto", data_dir=data_dir if d == design else None))
    return runs


# ------------------------------------------------------------------------------------- collapse boundary
def collapse_decision(design: str, tier: str, *, delta: float = DELTA, data_dir: str | None = None,
                      result: dict | None = None) -> dict:
    """The decision on the collapse contrast of ``design`` at ``tier``, its data controls and its outcomes.

    Parameters
    ----------
    design, tier : str
        A design of :data:`biasaudit.validation.sam_regimes.DESIGNS` and a tier it runs at.
    delta : float
        The equivalence margin (> 0); the claims' is :data:`DELTA`.
    data_dir : str, optional
        Where a file-based data set lies (the claims find it with :func:`design_data`).
    result : dict, optional
        The design's :func:`~biasaudit.validation.sam_regimes.regime_experiment` output (read from the run cache
        when not given).

    Raises
    ------
    InputError
        Naming the parameter: an unknown design or tier, or ``delta`` <= 0.
    """
    import math

    from biasaudit.plumbing import InputError
    from biasaudit.validation.decision import equivalence_control, three_way
    from biasaudit.validation.sam_collapse_stats import collapse_indicator
    from biasaudit.validation.sam_regimes import design_settings, regime_experiment

    design_settings(design, tier)
    if not (isinstance(delta, (int, float)) and math.isfinite(delta) and delta > 0):
        raise InputError("delta", "must be a finite number > 0 (the equivalence margin)", delta)
    res = regime_experiment(design, tier, data_dir=data_dir) if result is None else result
    main = res["contrast"]["sam"]
    decision = three_way(main["values"], direction=1, delta=delta, level=LEVEL)
    controls = [equivalence_control(c.name, res["contrast"][c.arms[0]]["values"], margin=delta,
                                    reads=_READS[c.name], level=LEVEL) for c in _CONTROLS]
    n = len(main["values"]) + len(main["missing"])
    below = [collapse_indicator(s["status"]) - collapse_indicator(g["status"])
             for s, g in zip(res["runs"]["below"]["sam"], res["runs"]["below"]["gd"])]
    below = [v for v in below if math.isfinite(v)]
    return {"secondary": {"below_difference": float(sum(below) / len(below)) if below else math.nan,
                          "below_seeds": len(below)},
            "design": design, "tier": tier, "alphas": res["alphas"], "rho": res["settings"]["rho"],
            "horizon": res["settings"]["steps"], "loss_target": res["settings"]["loss_target"], "delta": delta,
            "decision": decision, "controls": controls, "values": main["values"], "seeds": main["seeds"],
            "missing": main["missing"], "missing_share": len(main["missing"]) / n if n else 1.0,
            "outcomes": res["outcomes"], "collapsed": res["collapsed"], "fit_steps": res["fit_steps"]}


def _positive_control(tier: str) -> dict:
    from biasaudit.validation.sam_collapse_stats import positive_control_record

    return positive_control_record(collapse_decision("diag", tier, result=regime_result("diag", tier)), POSITIVE_CONTROL, STATISTIC)


def _collapse_evaluate(params, predicted):
    import math

    from biasaudit.validation.sam_collapse_stats import study_verdict

    tier, design = _tier(), params["design"]
    r = collapse_decision(design, tier, result=regime_result(design, tier))
    decision = r["decision"]
    pc = None if design == "diag" else _positive_control(tier)
    verdict, why = study_verdict(r, None if pc is None else pc["verdict"])
    observed = contract_observation(
        statistic={"name": STATISTIC, "alphas": r["alphas"], "mean": decision.mean,
                   "interval": list(decision.interval), "values": r["values"], "seeds": r["seeds"]},
        positive_control=pc, data_controls=r["controls"], decision=decision, n_seeds=len(r["values"]),
        tier=tier, rho=r["rho"], horizon=r["horizon"], loss_target=r["loss_target"], missing=r["missing"],
        outcomes=r["outcomes"], collapsed_share=r["collapsed"], fit_steps=r["fit_steps"], secondary=r["secondary"])
    lo, hi = decision.interval
    below, above = r["alphas"]["below"], r["alphas"]["above"]
    share = r["collapsed"]
    controls = "; ".join(c.summary() for c in r["controls"])
    gd_fit = r["fit_steps"]["below"]["gd"]
    detail = (f"[{tier} tier, rho = {r['rho']}, horizon {r['horizon']} steps, loss target {r['loss_target']}] "
              f"collapsed share SAM / GD / RandSAM at alpha = {below:g}: {share['below']['sam'][0]:.2f} / "
              f"{share['below']['gd'][0]:.2f} / {share['below']['randsam'][0]:.2f}, at {above:g}: "
              f"{share['above']['sam'][0]:.2f} / {share['above']['gd'][0]:.2f} / {share['above']['randsam'][0]:.2f}; "
              f"C = {decision.mean:+.3f} [{lo:+.3f}, {hi:+.3f}] over {decision.n} seeds ({len(r['missing'])} with a "
              f"slow or diverged run); {decision.verdict} by '{decision.rule}' (delta {r['delta']}); data controls "
              f"(within +-{r['delta']}): {controls}"
              + (f"; positive control {pc['claim']}: {pc['verdict']} (C = {pc['effect']:+.3f})" if pc else "")
              + f"; secondary (no verdict reads it): c(SAM) - c(GD) below = {r['secondary']['below_difference']:+.3f} "
              f"over the {r['secondary']['below_seeds']} seeds whose SAM and GD runs below both ended ok or collapsed"
              + (f"; median steps of GD to the target below: {gd_fit:.0f}" if gd_fit is not None else "")
              + f"; verdict: {verdict} ({why})")
    error = decision.error if verdict == decision.verdict and verdict != "undecided" else math.nan
    return Observation(observed, error, detail, decided=verdict != "undecided")


def _collapse_predict(params) -> int:
    missing = design_data(params["design"], _tier())[1]
    if missing:
        raise OutOfScope(missing)
    return 1


def _collapse_claim(cid: str, design: str, what: str, source: str, role: str = "effect") -> Claim:
    positive_control = POSITIVE_CONTROL if role == "effect" else None
    return Claim(
        id=cid,
        paper="sam",
        source=source,
        title=f"on {what} SAM collapses below its boundary in alpha (the loss stays at its initial value, the output "
              "does not grow) and fits above it, while GD fits on both sides: collapse contrast C > 0"
              + (" (the positive control of the collapse claims)" if role == "positive_control" else ""),
        hypotheses=(sp.Gt(RHO, 0, evaluate=False), sp.Lt(ALPHA, ALPHA_C, evaluate=False)),
        statement=sp.Gt(C, 0, evaluate=False),
        predict=_collapse_predict,
        evaluate=_collapse_evaluate,
        tolerance=CI_SIDE,
        domain=Domain({"tier": AuditTier(_tier), "design": Fixed(design)}),
        negative_control=(),
        kind="experiment",
        samples={"ci": 1, "thorough": 1},
        notes=("where the theory's collapse holds: the statistic must see it here for any network's collapse claim "
               "to be decided" if role == "positive_control" else
               "undecided unless the diagonal network's collapse claim is confirmed in the same audit; data "
               "controls A/A and RandSAM"),
        runs=_runs_of_design(design),
        contract=ExperimentContract(role=role, statistic=STATISTIC, positive_control=positive_control,
                                    data_controls=_CONTROLS, primary_arms=("sam", "gd"), delta=DELTA,
                                    delta_reason=DELTA_REASON, level=LEVEL, min_seeds=3),
    )


_COLLAPSE_DESIGNS = (  # design, what the network and data are, where the claim comes from
    ("cnn", "a small CNN (MNIST-5k at 14x14)", "on a CNN"),
    ("resnet", "a small ResNet without BatchNorm (MNIST-5k at 14x14)", "on a ResNet"),
    ("fashion", "a small CNN on Fashion-MNIST (14x14)", "on a CNN (Fashion-MNIST, when present)"),
    ("cifar10", "a CNN on CIFAR-10 (full tier, with --data-dir)", "on a CNN (CIFAR-10, full tier)"),
    ("svhn", "a CNN on SVHN (full tier, with --data-dir)", "on a CNN (SVHN, full tier)"),
    ("patch", "a small CNN on the bright/faint patch images", "on a CNN (patch task)"),
)
DIAG_COLLAPSE_CLAIM = _collapse_claim(POSITIVE_CONTROL, "diag", "the depth-2 diagonal network (the theory's model, "
                                      "on the patch images)", "derived: §Regimes (regime 1: collapse below alpha_c); "
                                      "the positive control of the collapse claims", role="positive_control")
COLLAPSE_CLAIMS = {design: _collapse_claim(f"sam.torch.{design}_collapse_boundary", design, what,
                                           f"§Regimes (collapse below alpha_c), {where}")
                   for design, what, where in _COLLAPSE_DESIGNS}
COLLAPSE_CLAIM, RESNET_COLLAPSE_CLAIM, PATCH_COLLAPSE_CLAIM = (COLLAPSE_CLAIMS[d] for d in ("cnn", "resnet", "patch"))
FASHION_COLLAPSE_CLAIM, CIFAR10_COLLAPSE_CLAIM, SVHN_COLLAPSE_CLAIM = (
    COLLAPSE_CLAIMS[d] for d in ("fashion", "cifar10", "svhn"))


CLAIMS = (DIAG_COLLAPSE_CLAIM, *COLLAPSE_CLAIMS.values())



# ------------------------------------------------------------------------------------------------ figure
# One figure job per design, so that auditing one claim trains (or reads) only its own design's runs.
_FIGURE_DESIGNS = (  # design, what it shows
    ("diag", "the diagonal network (positive control)"), ("cnn", "the MNIST CNN"),
    ("resnet", "the MNIST ResNet without BatchNorm"), ("patch", "the CNN on the bright/faint patch images"),
    ("fashion", "the Fashion-MNIST CNN"), ("cifar10", "the CIFAR-10 CNN"), ("svhn", "the SVHN CNN"),
)


def _claim_id(design: str) -> str:
    return POSITIVE_CONTROL if design == "diag" else f"sam.torch.{design}_collapse_boundary"


def _regime_figure_maker(design: str):
    def make(outdir, tier):
        from biasaudit.figures.sam_torch import plot_regime_figure

        return [plot_regime_figure(regime_result(design, _tier()), outdir,
                                   f"sam_torch_{design}_collapse_boundary.png")]
    return make


def _design_missing(design: str):
    return lambda tier: design_data(design, tier)[1]


FIGURES = tuple(
    FigureJob(
        id=f"sam.torch.regimes.{design}",
        paper="sam",
        title=f"SAM's collapse boundary on {what}: each run's outcome (fitted, collapsed, slow) below and above it",
        claims=(_claim_id(design),),
        make=_regime_figure_maker(design),
        caption="Share of seeds whose run fitted (reached the loss target), collapsed (the loss stayed at its initial "
                "value over the second half of the horizon and the output scale did not grow) or was slow (still "
                "moving at the horizon), for SAM, GD, RandSAM and GD on other seeds (A/A), at the alpha below SAM's "
                "boundary and the one above it.",
        requires=("biasaudit.figures.sam_torch:plot_regime_figure", "torch:Tensor"),
        unavailable_because=_design_missing(design),
    )
    for design, what in _FIGURE_DESIGNS)
