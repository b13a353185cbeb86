"""SAM's collapse boundary on networks (regime 1 of paper 1: below alpha_c SAM never leaves chance).

=====================================  ===========================================================================
claim                                  what it tests (runs: :mod:`biasaudit.validation.sam_regimes`)
=====================================  ===========================================================================
``sam.torch.cnn_collapse_boundary``    on the small CNN (MNIST-5k, 14x14), at fixed rho, SAM stays at chance below
                                       some alpha inside the grid and trains above it, while GD trains at every
                                       grid alpha up to there (Clopper-Pearson intervals over 16 paired seeds)
``sam.torch.resnet_collapse_boundary`` the same on a small ResNet with BatchNorm (MNIST-5k, 14x14)
``sam.torch.fashion_collapse_boundary`` the same on Fashion-MNIST (14x14), when its files are found; else out of
                                       scope (``cifar10_`` and ``svhn_collapse_boundary``: the same at the full
                                       tier with ``audit --data-dir``)
``sam.torch.patch_collapse_boundary``  the same on the bright/faint patch images (8x8)
=====================================  ===========================================================================

The designs' grids also record the earlier minor-feature statistics (area over progress levels); the regime
figures show them as a dose-response, read by no verdict. "Minor first, major last" is tested in time, under the
experiment contract, by :mod:`biasaudit.claims.sam.torch.ladder`.
"""

from __future__ import annotations

import functools

import sympy as sp

from biasaudit.domain import Domain, Fixed
from biasaudit.figures import FigureJob
from biasaudit.ledger import Claim, Observation, OutOfScope, Tolerance
from biasaudit.tier import AuditTier

__all__ = ["CLAIMS", "FIGURES", "regime_result", "design_data"]

rho, alpha = sp.symbols("rho alpha", real=True)
alpha_c = sp.Symbol("alpha_c", positive=True)
p_sam, p_gd = sp.Function("P_SAM"), sp.Function("P_GD")  # probability that a run trains
m_sam, m_gd = sp.symbols("m_SAM m_GD", nonnegative=True)

SHORTFALL = Tolerance(
    "collapse_shortfall", 0.0,
    "each training fraction's 95% Clopper-Pearson interval must lie on the claimed side of 1/2; error = the "
    "largest distance an interval reaches across 1/2 (0: every condition holds)")
CI_SIDE = Tolerance(
    "effect_ci_side", 0.0,
    "the 95% seed-level interval (hull of the seed bootstrap and Student t) of SAM - GD must lie on the "
    "predicted side of 0; error = how far it reaches onto the wrong side, straddling 0 is undecided")


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
        return tuple(RunUnit(f"sam-{cfg.key()}", f"run {design}/{tier}: {cfg.optimizer} alpha={cfg.init_scale} "
                             f"seed={cfg.seed}", "biasaudit.validation.sam_runs:cached_run_unit", (cfg,))
                     for cfg in regime_configs(design, tier, device="auto", data_dir=data_dir))
    return runs


# ------------------------------------------------------------------------------------- collapse boundary
def _collapse_evaluate(params, predicted):
    import numpy as np

    from biasaudit.validation.sam_regimes import collapse_test

    tier = _tier()
    res = regime_result(params["design"], tier)
    other = "gd" if predicted == "sam" else "sam"
    alphas = res["collapse"]["alphas"]
    trained = {o: np.array([[r["status"] == "ok" for r in res["runs"][a][o]] for a in alphas]) for o in ("gd", "sam")}
    test = collapse_test(alphas, trained[predicted], trained[other])
    b = res["boundary"]
    observed = {"tier": tier, "optimizer_with_boundary": predicted, **{k: test[k] for k in (
        "verdict", "shortfalls", "sam_fraction", "gd_fraction", "sam_ci", "gd_ci", "alphas")},
        "alpha_50": b.get("alpha_50"), "alpha_50_ci": b.get("ci"), "grid_bracket": b.get("grid_bracket"),
        "rho": res["settings"]["rho"], "seeds": len(res["settings"]["seeds"]),
        "status_counts": {a: {o: {s: v.count(s) for s in set(v)} for o, v in st.items()}
                          for a, st in res["status"].items()}}
    name = {"sam": "SAM", "gd": "GD"}
    fractions = ", ".join(f"{a:g}: {name[predicted]} {p:.2f} / {name[other]} {q:.2f}" for a, p, q in zip(
        alphas, test["sam_fraction"], test["gd_fraction"]))
    a50 = b.get("alpha_50")
    where = (f"alpha_50 = {a50:.3g} (95% seed bootstrap {b['ci'][0]:.3g}-{b['ci'][1]:.3g}, between grid points "
             f"{b['grid_bracket'][0]} and {b['grid_bracket'][1]})" if a50 else "no rising SAM boundary fitted")
    detail = (f"[{tier} tier, rho = {res['settings']['rho']}, {len(res['settings']['seeds'])} paired seeds] "
              f"training fraction by alpha ({fractions}); {where}; {test['verdict']}")
    return Observation(observed, test["error"], detail, decided=test["verdict"] != "undecided")


def _collapse_predict(params) -> str:
    missing = design_data(params["design"], _tier())[1]
    if missing:
        raise OutOfScope(missing)
    return "sam"


def _collapse_claim(cid: str, design: str, what: str, source: str) -> Claim:
    return Claim(
        id=cid,
        paper="sam",
        source=source,
        title=f"on {what} SAM has a collapse boundary in alpha (stays at chance below, trains above) while GD "
              "trains on both sides",
        hypotheses=(sp.Gt(rho, 0, evaluate=False), sp.Gt(alpha, 0, evaluate=False)),
        statement=sp.And(sp.Lt(p_sam(alpha_c / 2), sp.Rational(1, 2), evaluate=False),
                         sp.Gt(p_gd(alpha_c / 2), sp.Rational(1, 2), evaluate=False),
                         sp.Gt(p_sam(2 * alpha_c), sp.Rational(1, 2), evaluate=False)),
        predict=_collapse_predict,
        evaluate=_collapse_evaluate,
        tolerance=SHORTFALL,
        domain=Domain({"tier": AuditTier(_tier), "design": Fixed(design)}),
        negative_control=lambda params, predicted: "gd",
        kind="experiment",
        samples={"ci": 1, "thorough": 1},
        controls=1,
        notes="negative control: the same test with GD in SAM's place (GD has no collapse boundary) must not "
              "confirm; no extra runs",
        runs=_runs_of_design(design),
    )


_COLLAPSE_DESIGNS = (  # design, what the network and data are, where the claim comes from
    ("cnn", "a small CNN (MNIST-5k at 14x14)", "on a CNN"),
    ("resnet", "a small ResNet with BatchNorm (MNIST-5k at 14x14)", "on a ResNet"),
    ("fashion", "a small CNN on Fashion-MNIST (14x14)", "on a CNN (Fashion-MNIST, when present)"),
    ("cifar10", "a CNN on CIFAR-10 (full tier, with --data-dir)", "on a CNN (CIFAR-10, full tier)"),
    ("svhn", "a CNN on SVHN (full tier, with --data-dir)", "on a CNN (SVHN, full tier)"),
    ("patch", "a small CNN on the bright/faint patch images", "on a CNN (patch task)"),
)
COLLAPSE_CLAIMS = {design: _collapse_claim(f"sam.torch.{design}_collapse_boundary", design, what,
                                           f"§Regimes (collapse below alpha_c), {where}")
                   for design, what, where in _COLLAPSE_DESIGNS}
COLLAPSE_CLAIM, RESNET_COLLAPSE_CLAIM, PATCH_COLLAPSE_CLAIM = (COLLAPSE_CLAIMS[d] for d in ("cnn", "resnet", "patch"))
FASHION_COLLAPSE_CLAIM, CIFAR10_COLLAPSE_CLAIM, SVHN_COLLAPSE_CLAIM = (
    COLLAPSE_CLAIMS[d] for d in ("fashion", "cifar10", "svhn"))


CLAIMS = tuple(COLLAPSE_CLAIMS.values())


# ------------------------------------------------------------------------------------------------ figure
# One figure job per design, so that auditing one claim trains (or reads) only its own design's grid.
_FIGURE_DESIGNS = (  # design, file, claims it illustrates, what it shows
    ("cnn", "sam_torch_cnn_collapse_boundary.png", ("sam.torch.cnn_collapse_boundary",),
     "the MNIST CNN"),
    ("resnet", "sam_torch_resnet_collapse_boundary.png", ("sam.torch.resnet_collapse_boundary",), "the MNIST ResNet"),
    ("patch", "sam_torch_patch_collapse_boundary.png", ("sam.torch.patch_collapse_boundary",),
     "the CNN on the bright/faint patch images"),
    ("fashion", "sam_torch_fashion_collapse_boundary.png", ("sam.torch.fashion_collapse_boundary",),
     "the Fashion-MNIST CNN"),
    ("cifar10", "sam_torch_cifar10_collapse_boundary.png", ("sam.torch.cifar10_collapse_boundary",),
     "the CIFAR-10 CNN"),
    ("svhn", "sam_torch_svhn_collapse_boundary.png", ("sam.torch.svhn_collapse_boundary",), "the SVHN CNN"),
)


def _regime_figure_maker(design: str, name: str):
    def make(outdir, tier):
        from biasaudit.figures.sam_torch import plot_regime_figure

        return [plot_regime_figure(regime_result(design, _tier()), outdir, name)]
    return make


def _design_missing(design: str):
    return lambda tier: design_data(design, tier)[1]


FIGURES = tuple(
    FigureJob(
        id=f"sam.torch.regimes.{design}",
        paper="sam",
        title=f"SAM's collapse boundary on {what}: training fraction"
              + (" and the earlier minor-feature statistic" if design in ("cnn", "patch") else "") + " against alpha",
        claims=claims,
        make=_regime_figure_maker(design, name),
        caption="Left: share of paired seeds that leave chance accuracy, SAM and GD, with 95% Clopper-Pearson "
                "intervals, and the fitted SAM boundary alpha_50."
                + (" Right: the earlier minor-feature statistic (SAM - GD over progress levels, mean and 95% seed "
                   "interval) at every grid alpha, a dose-response that no verdict reads." if design in ("cnn", "patch")
                   else ""),
        requires=("biasaudit.figures.sam_torch:plot_regime_figure", "torch:Tensor"),
        unavailable_because=_design_missing(design),
    )
    for design, name, claims, what in _FIGURE_DESIGNS)
