r"""``sam.torch.minor_first_major_last.<model>``: the paper's central claim, tested in time, under the
experiment contract (:mod:`biasaudit.contract`).

"Minor first, major last": early in training l2-SAM puts its weight on the minor feature, late on the major one,
while GD goes to the major feature from the start. The statistic (:mod:`biasaudit.validation.sam_ladder_stats`)
is the difference-in-differences of the minor feature's margin share in each run's own normalised time
τ = t / t_fit,

    D = (SAM early − SAM late) − (GD early − GD late),   early: 0 < τ ≤ 1/2,  late: τ = 1,

one value per seed pair, at 1.5 α_50 (SAM's boundary α_50 from a pilot on other seeds;
:mod:`biasaudit.validation.sam_ladder_config` says why 1.5). The ladder:

* ``.diag``: the depth-2 diagonal linear network, where the theory holds exactly: the **positive control**
  (``role = "positive_control"``);
* ``.gated_cnn`` and ``.cnn``: the small CNN with and without an elementwise input gate; effect claims, Holm
  across the two, each undecided unless ``.diag`` is confirmed in the same audit;
* ``.mnist_planted``: the gated CNN on MNIST with a faint class-coded patch planted in the border (the minor
  feature; the digit is the major one); its own hypothesis on its own data (outside the patch images' Holm family),
  undecided unless ``.diag`` is confirmed; full tier only (its quick runs cost far more than the quick audit can
  spare: :data:`biasaudit.validation.sam_ladder_config.AUDIT_TIERS`);
* ``sam.torch.minor_outlasts_target_near_boundary.diag``: the failing side: at 1.1 α_50 SAM's minor phase
  outlasts the loss target on the diagonal network, so D < 0 there.

Data controls (each equivalent to 0 within δ, or the claim stays undecided): GD against GD on other seeds (A/A),
RandSAM in SAM's place (a random perturbation of the same norm), equal-intensity patches (no minor or major
feature), and the swapped layout minus the standard one (the effect follows the feature's strength, not its
position); the last two exist on the patch images only, so the MNIST rung declares A/A and RandSAM. Pairs in which a run did not reach its loss target are left out and counted; more than
:data:`MAX_MISSING_SHARE` of them leaves the claim undecided.
"""

from __future__ import annotations

import functools
import math

import sympy as sp

from biasaudit.claims.sam.torch._common import sam_torch_tier
from biasaudit.contract import DataControl, ExperimentContract, contract_observation
from biasaudit.domain import Domain
from biasaudit.figures import FigureJob
from biasaudit.ledger import Claim, Observation, OutOfScope, Tolerance
from biasaudit.tier import AuditTier

__all__ = ["CLAIMS", "FIGURES", "ladder_decision", "STATISTIC", "METRIC", "DELTA", "POSITIVE_CONTROL"]

STATISTIC = "biasaudit.validation.sam_ladder_stats:did"
METRIC = "minor_margin_share"
POSITIVE_CONTROL = "sam.torch.minor_first_major_last.diag"
EFFECT_MODELS = ("gated_cnn", "cnn")  # the Holm family (the patch images)
LEVEL = 0.05
# Fixed from the diagonal network's pilot (8 seeds no claim reads) before any claim seed ran: there D = +0.048
# at 1.5 alpha_50 with a seed sd of 1e-4; half of the effect the statistic shows where the theory guarantees it.
DELTA = 0.024
DELTA_REASON = ("half the effect the same statistic shows where the theory guarantees it: D = +0.048 on the "
                "diagonal network's pilot seeds at 1.5 alpha_50 (seed sd 1e-4); fixed before any claim seed ran")
MAX_MISSING_SHARE = 0.25  # more pairs than this without a fitted run: undecided

CI_SIDE = Tolerance(
    "effect_ci_side", 0.0,
    "the seed-level interval of D (Holm-adjusted in the family) must lie beyond 0 on the predicted side; error = "
    "how far it reaches onto the wrong side (the contract's three-way decision: validation.decision)")

_CONTROLS = (
    DataControl("aa", ("gd@seed+5000", "gd"), "GD in SAM's place, on other seeds: the statistic of two GD runs"),
    DataControl("randsam", ("randsam", "gd"), "a random perturbation of norm rho in SAM's place (the placebo)"),
    DataControl("equal", ("sam@equal", "gd@equal"), "patches of equal intensity: no minor and no major feature"),
    DataControl("swapped", ("sam@swapped - sam", "gd@swapped - gd"),
                "the faint patch where the bright one was: D(swapped) - D(standard), the effect follows strength"),
)
_READS = {c.name: " vs ".join(c.arms) for c in _CONTROLS}

D = sp.Symbol("D")  # (SAM early - SAM late) - (GD early - GD late) of the minor margin share
ALPHA, ALPHA_50, RHO = sp.symbols("alpha alpha_50 rho", positive=True)


def _runs(model: str):
    def runs() -> tuple:
        from biasaudit.audit.units import RunUnit
        from biasaudit.validation.sam_ladder_config import ladder_runs, run_config

        tier = sam_torch_tier()
        if _out_of_scope(model, tier):
            return ()
        units = []
        for run in ladder_runs(model, tier):
            cfg = run_config(run, tier, device="auto")
            units.append(RunUnit(f"sam-{cfg.key()}", f"run ladder {model}/{tier}: {run.arm} {run.multiple} "
                                 f"seed={run.seed}", "biasaudit.validation.sam_runs:cached_run_unit", (cfg,)))
        return tuple(units)
    return runs


def _out_of_scope(model: str, tier: str) -> str | None:
    """Why the audit does not run ``model``'s claim at ``tier``, or None when it does."""
    from biasaudit.validation.sam_ladder_config import AUDIT_TIERS

    if tier in AUDIT_TIERS[model]:
        return None
    return (f"the {model} rung of the ladder runs at the full tier only (biasaudit audit --tier full, meant for a "
            "GPU): its quick runs cost far more than the quick audit's budget for it")


@functools.cache
def _holm_levels(tier: str) -> dict[str, float]:
    """The level at which each effect model's interval is read (:func:`~biasaudit.validation.sam_stats.holm_levels`
    over :data:`EFFECT_MODELS`)."""
    from biasaudit.validation.sam_ladder import ladder_values
    from biasaudit.validation.sam_stats import holm_levels

    return holm_levels({m: ladder_values(m, tier)[METRIC]["did"]["primary"]["values"] for m in EFFECT_MODELS}, LEVEL)


def ladder_decision(model: str, tier: str, *, multiple: str = "primary", direction: int = 1,
                    adjusted_level: float | None = None, statistic: str = "did", metric: str = METRIC,
                    controls=None, delta: float = DELTA, seeds=None, horizon=None) -> dict:
    """The decision, data controls and secondary readings of ``model`` at ``multiple`` (one dict, JSON-ready).

    Parameters
    ----------
    model, tier : str
        A model of the ladder (``diag``, ``gated_cnn``, ``cnn``) and ``quick`` or ``full``.
    multiple : str
        Where to read, a key of :data:`biasaudit.validation.sam_ladder_config.MULTIPLES`.
    direction : int
        The predicted side of the statistic, +1 or −1.
    adjusted_level : float, optional
        The Holm-adjusted level of the decision interval (default: :data:`LEVEL`).
    statistic, metric : str
        The seed statistic (``did``, ``early_difference``, ``dominance``) and the minor-share metric
        (``minor_margin_share``, ``grad_minor_share``); the claims read ``did`` of ``minor_margin_share``.
    controls : sequence of str, optional
        The data controls to compute (default: the model's, :func:`biasaudit.validation.sam_ladder.model_controls`:
        ``aa``, ``randsam``, and on the patch images ``equal`` and ``swapped``).
    delta : float
        The equivalence margin (> 0); the claims' is :data:`DELTA`.
    seeds, horizon : optional
        Seeds (at least 3, distinct) and the most steps a run may take, replacing the tier's.

    Raises
    ------
    InputError
        Naming the parameter: an unknown model, tier, multiple, statistic, metric or control, ``delta`` ≤ 0,
        fewer than 3 seeds, or a horizon shorter than the evaluation schedule.
    """
    import numpy as np

    from biasaudit.plumbing import InputError, choice
    from biasaudit.validation.decision import equivalence_control, three_way
    from biasaudit.validation.sam_ladder import ladder_values, median_fit_steps, model_controls, outcome_counts
    from biasaudit.validation.sam_ladder_config import MULTIPLES, ladder_settings, multiples
    from biasaudit.validation.sam_ladder_stats import METRICS, STATISTICS
    from biasaudit.validation.sam_stats import t_power

    settings = ladder_settings(model, tier, seeds=seeds, horizon=horizon)  # model, tier, seeds, horizon
    choice("multiple", multiple, multiples(model, tier))
    choice("statistic", statistic, tuple(STATISTICS))
    choice("metric", metric, METRICS)
    controls = model_controls(model) if controls is None else tuple(controls)
    for name in controls:
        choice("control", name, model_controls(model))
    if not (isinstance(delta, (int, float)) and math.isfinite(delta) and delta > 0):
        raise InputError("delta", "must be a finite number > 0 (the equivalence margin)", delta)
    values = ladder_values(model, tier, seeds=seeds, horizon=horizon)
    main = values[metric][statistic]
    read = _at(main, multiple)
    decision = three_way(read["values"], direction=direction, delta=delta, level=LEVEL,
                         adjusted_level=adjusted_level)
    results = [equivalence_control(name, main["controls"][name]["values"], margin=delta, reads=_READS[name],
                                   level=LEVEL) for name in controls]
    n_pairs = len(read["values"]) + len(read["missing"])
    sd = float(np.std(read["values"], ddof=1)) if len(read["values"]) >= 2 else 0.0
    runs = dict(seeds=seeds, horizon=horizon)
    return {
        "model": model, "multiple": multiple, "alpha": settings["alpha_50"] * MULTIPLES[multiple],
        "alpha_50": settings["alpha_50"], "statistic": statistic, "metric": metric, "delta": delta,
        "horizon": settings["steps"], "decision": decision, "controls": results,
        "values": read["values"], "seeds": read["seeds"], "missing": read["missing"],
        "missing_share": len(read["missing"]) / n_pairs if n_pairs else 1.0,
        "secondary": {
            "early_difference": _mean(_at(values[metric]["early_difference"], multiple)["values"]),
            "dominance_seeds": int(sum(_at(values[metric]["dominance"], multiple)["values"])),
            "did_input_gradient_share": _mean(_at(values["grad_minor_share"]["did"], multiple)["values"]),
        },
        "dose_response": {m: _mean(main["dose"][m]["values"]) for m in main["dose"]},
        "fit_steps": {arm: median_fit_steps(model, tier, multiple, arm, **runs) for arm in ("sam", "gd")},
        "outcomes": outcome_counts(model, tier, **runs)[multiple],
        "power_at_delta": t_power(delta / sd, len(read["values"]), alpha=LEVEL / 2) if sd > 0 else 1.0,
    }


def _at(statistic: dict, multiple: str) -> dict:
    return statistic["primary"] if multiple == "primary" else statistic["dose"][multiple]


def _mean(values) -> float:
    return float(sum(values) / len(values)) if values else math.nan


def _observe(model: str, multiple: str, direction: int, tier: str, positive_control: str | None) -> Observation:
    from biasaudit.validation.decision import gated_verdict

    level = _holm_levels(tier)[model] if model in EFFECT_MODELS and multiple == "primary" else None
    r = ladder_decision(model, tier, multiple=multiple, direction=direction, adjusted_level=level)
    decision = r["decision"]
    pc = None
    if positive_control is not None:
        c = ladder_decision("diag", tier)
        verdict, _ = gated_verdict(c["decision"], c["controls"], None)
        pc = {"claim": positive_control, "statistic": STATISTIC, "metric": METRIC, "effect": c["decision"].mean,
              "interval": list(c["decision"].interval), "verdict": verdict}
    verdict, why = gated_verdict(decision, r["controls"], None if pc is None else pc["verdict"])
    if r["missing_share"] > MAX_MISSING_SHARE:
        verdict, why = "undecided", (f"{len(r['missing'])} of {len(r['values']) + len(r['missing'])} pairs did "
                                     f"not both reach the loss target (more than {MAX_MISSING_SHARE:.0%})")
    observed = contract_observation(
        statistic={"name": STATISTIC, "metric": METRIC, "multiple": multiple, "alpha": r["alpha"],
                   "alpha_50": r["alpha_50"], "mean": decision.mean, "interval": list(decision.interval),
                   "values": r["values"], "seeds": r["seeds"]},
        positive_control=pc, data_controls=r["controls"], decision=decision, n_seeds=len(r["values"]),
        tier=tier, missing=r["missing"], secondary=r["secondary"], dose_response=r["dose_response"],
        fit_steps=r["fit_steps"], outcomes=r["outcomes"], power_at_delta=r["power_at_delta"])
    lo, hi = decision.interval
    controls = "; ".join(c.summary() for c in r["controls"])
    detail = (f"[{tier} tier] {model} at alpha = {r['alpha']:.4g} ({multiple}: {r['alpha'] / r['alpha_50']:.2f} "
              f"alpha_50): D = {decision.mean:+.4f} [{lo:+.4f}, {hi:+.4f}] over {decision.n} seeds "
              f"({len(r['missing'])} pairs without a fitted run); {decision.verdict} by '{decision.rule}' "
              f"(delta {DELTA}); data controls (within +-{DELTA}): {controls}"
              + (f"; positive control {pc['claim']}: {pc['verdict']} (D = {pc['effect']:+.4f})" if pc else "")
              + f"; SAM - GD early share {r['secondary']['early_difference']:+.3f}; median steps to the loss "
              f"target SAM {r['fit_steps']['sam']:.0f}, GD {r['fit_steps']['gd']:.0f}; verdict: {verdict} ({why})")
    error = decision.error if verdict == decision.verdict and verdict != "undecided" else math.nan
    return Observation(observed, error, detail, decided=verdict != "undecided")


def _claim(cid: str, model: str, *, multiple: str, direction: int, title: str, source: str, notes: str,
           role: str) -> Claim:
    from biasaudit.validation.sam_ladder import model_controls

    positive_control = POSITIVE_CONTROL if role == "effect" else None
    data_controls = tuple(c for c in _CONTROLS if c.name in model_controls(model))

    def evaluate(params, predicted):
        return _observe(model, multiple, int(predicted), params["tier"], positive_control)

    def predict(params, direction=direction):
        missing = _out_of_scope(model, params["tier"])
        if missing:
            raise OutOfScope(missing)
        return direction

    rel = sp.Gt if direction > 0 else sp.Lt
    return Claim(
        id=cid, paper="sam", source=source, title=title,
        hypotheses=(sp.Eq(ALPHA, sp.Float(_multiple(multiple), 3) * ALPHA_50, evaluate=False),
                    sp.Gt(RHO, 0, evaluate=False)),
        statement=rel(D, 0, evaluate=False),
        predict=predict, evaluate=evaluate, tolerance=CI_SIDE,
        domain=Domain({"tier": AuditTier(sam_torch_tier)}), negative_control=(), kind="experiment",
        samples={"ci": 1, "thorough": 1}, notes=notes, runs=_runs(model),
        contract=ExperimentContract(role=role, statistic=STATISTIC, positive_control=positive_control,
                                    data_controls=data_controls, primary_arms=("sam", "gd"), delta=DELTA,
                                    delta_reason=DELTA_REASON, level=LEVEL, min_seeds=3),
    )


def _multiple(name: str) -> float:
    from biasaudit.validation.sam_ladder_config import MULTIPLES

    return MULTIPLES[name]


_NAMES = {"diag": "the depth-2 diagonal linear network", "gated_cnn": "the small CNN behind an elementwise gate",
          "cnn": "the small CNN", "mnist_planted": "the gated CNN on MNIST with a faint class-coded patch"}
_SOURCE = "§Regimes (regime 2: minor features amplified first, the major one last), on the patch images"

CLAIMS = (
    _claim(POSITIVE_CONTROL, "diag", multiple="primary", direction=1, role="positive_control",
           title="on the diagonal network (the theory's model) SAM moves from the minor patch to the major one over "
                 "training more than GD does: D > 0 (the ladder's positive control)",
           source="derived: " + _SOURCE + "; the positive control of the ladder",
           notes="where the theory holds exactly; the statistic must see the effect here for any network claim "
                 "to be decided"),
    *(_claim(f"sam.torch.minor_first_major_last.{m}", m, multiple="primary", direction=1, role="effect",
             title=f"on {_NAMES[m]}, SAM moves from the minor patch to the major one over training more than GD "
                   f"does: D > 0", source=_SOURCE,
             notes="Holm across the network claims of the ladder; undecided unless the diagonal network's positive "
                   "control is confirmed")
      for m in EFFECT_MODELS),
    _claim("sam.torch.minor_first_major_last.mnist_planted", "mnist_planted", multiple="primary", direction=1,
           role="effect",
           title="on the gated CNN on MNIST with a faint class-coded patch planted in the border (the minor feature; "
                 "the digit is the major one), SAM moves from the patch to the digit over training more than GD "
                 "does: D > 0",
           source="§Regimes (regime 2: minor features amplified first, the major one last), on MNIST-5k with a "
                  "planted class-coded patch",
           notes="its own hypothesis on its own data (not in the patch images' Holm family); data controls A/A and "
                 "RandSAM (MNIST has no equal or swapped layout: the digit is not a patch); undecided unless the "
                 "diagonal network's positive control is confirmed; full tier only"),
    _claim("sam.torch.minor_outlasts_target_near_boundary.diag", "diag", multiple="near", direction=-1,
           role="effect",
           title="just above SAM's boundary (1.1 alpha_50) the minor phase outlasts the loss target on the diagonal "
                 "network: D < 0 (the failing side of minor first, major last)",
           source="measured here (notes/validation-sam.md): the failing side of " + _SOURCE,
           notes="the theory's switch to the major feature comes after the loss target this close to alpha_c"),
)


def _make_figure(outdir, tier):
    from pathlib import Path

    from biasaudit.figures.sam_torch import plot_ladder_figure, plot_multipoint_heatmap

    return [plot_ladder_figure(("diag", "gated_cnn"), sam_torch_tier(), outdir),
            plot_multipoint_heatmap(Path(outdir) / "sam_torch_multipoint_jdagger.png")]


FIGURES = (FigureJob(
    id="sam.torch.minor_first_major_last", paper="sam",
    title="Minor first, major last in time: the minor patch's margin share against normalised time",
    claims=("sam.torch.minor_first_major_last.*", "sam.torch.minor_outlasts_target_near_boundary.*"),
    make=_make_figure,
    caption="The minor patch's share of the margin against normalised time tau = t / t_fit (each run to its loss "
            "target), SAM and GD, mean and 95 % seed band, at 1.1, 1.5 and 3 alpha_50; the diagonal network (left) "
            "and the gated CNN (right). Second figure: the dominant index j† of l2-SAM over (iteration, alpha) on "
            "multi-point data beside GD's.",
    requires=("biasaudit.figures.sam_torch:plot_ladder_figure", "torch:Tensor")),)
