r"""Paper 2, E2 across architectures: claims ``eos.torch.e2.<arch>`` under the experiment contract
(:mod:`biasaudit.contract`), and their positive control ``eos.torch.e2.diag`` on the theory model.

Each claim states that the kink of final sharpness against η lies at η_c = 2/s_GF on its architecture. The
statistic is one number per init seed (:func:`biasaudit.validation.eos_stats.kink_offset`):

    k_s = η̂_kink / η_c − 1,

η̂_kink the breakpoint of the two-piece fit S(η) = min(P, c/η) over the seed's sweep (the gradient-flow proxy
gives s_GF and η_c; full-batch GD at η = m·η_c, m ∈ {0.75, 0.93, 0.97, 1.03, 1.07, 1.25, 2} at the quick tier;
:data:`biasaudit.validation.eos_config.E2_SEEDS`: 3 seeds quick, 5 full). The decision
(:func:`biasaudit.validation.decision.equivalence_decision`): confirmed when the seed-level 90 % interval of k
lies inside ±δ, refuted when the 95 % interval lies wholly outside it, undecided otherwise.

* ``eos.torch.e2.diag`` (the **positive control**): the same statistic on torch sweeps of the theory model
  (:mod:`biasaudit.validation.eos_toy`), read against what the numba GD kernel gives for the same seed's
  initialisation independently of torch: k_s(torch) − (η̂_kink,numerics / η_c,theory − 1), with η̂_kink,numerics
  the line-then-hyperbola breakpoint of 301 numba GD runs within ±10 % of the theory's η_c. It must be
  equivalent to 0 within δ: the networks' pipeline (proxy, GD, eigsh, fit) recovers the kink where it is known.
* ``eos.torch.e2.<arch>``: k_s equivalent to 0 within δ; undecided unless the positive control is confirmed in
  the same audit and both data controls pass.

Data controls (each must lie within ±δ): ``aa``, the differences of k between seeds (s, s+1 mod n): two inits of
one architecture agree; ``null_grid``, the share of each seed's runs at η ≤ 0.95 η_c that sit at the edge of
stability (ηS/2 ≥ 0.95): 0 where no kink can be, so a pipeline that sees the edge below its own η_c fails it.
Cross-entropy per architecture (``eos.torch.e2.<arch>.ce``) runs at the full tier only, with one seed, and is not
yet under the contract.
"""

from __future__ import annotations

import functools
import math

import sympy as sp

from biasaudit.claims.eos.torch.sweeps import (
    COMMON, ETA_C_EXPR, KINK, S_PRED_EXPR, TRACKING, _eta_c, _gf_problem, _run_sweep, eta, s_gf,
    sweep_run_units,
)
from biasaudit.contract import DataControl, ExperimentContract, contract_observation
from biasaudit.domain import Domain, Fixed
from biasaudit.figures import FigureJob
from biasaudit.ledger import Claim, Observation, OutOfScope, Tolerance, shifted_prediction
from biasaudit.tier import AuditTier

__all__ = ["CLAIMS", "FIGURES", "ARCHITECTURES", "E2_BOTH", "CONTROL_SIZE", "STATISTIC", "DELTA",
           "POSITIVE_CONTROL", "e2_seed_study"]

ARCHITECTURES = {  # arch -> how the quick tier builds it (the record's notes)
    "fcn": "FCN 784-32-32-10 tanh, MNIST-5k n=500, MSE, eps=1e-2 (the E1 sweep)",
    "cnn": "CNN 3 conv layers (ReLU, width 8) + linear head, MNIST-5k n=100 at 7x7, MSE, eps=2e-2",
    "resnet": "ResNet stem + 2 basic blocks (ReLU, full-batch BatchNorm, width 8), MNIST-5k n=300 at 7x7, MSE, "
              "eps=2e-2",
    "vit": "ViT 1 block (dim 16, 2 heads, patches of 7), MNIST-5k n=100 at 14x14, MSE, eps=2e-2",
    "fcn_relu": "FCN 784-32-32-10 ReLU (the E1 FCN with ReLU for tanh), MNIST-5k n=500, MSE, eps=1e-2",
    "resnet_nobn": "the same ResNet without its BatchNorm layers (alpha and the filters' scale are not cancelled by "
                   "a normalisation), MNIST-5k n=300 at 7x7, MSE, eps=2e-2",
}
NAMES = {"fcn": "FCN", "cnn": "CNN", "resnet": "ResNet (BatchNorm)", "vit": "ViT", "fcn_relu": "ReLU FCN",
         "resnet_nobn": "ResNet without BatchNorm"}
STATISTIC = "biasaudit.validation.eos_stats:kink_offset"
POSITIVE_CONTROL = "eos.torch.e2.diag"
LEVEL = 0.05
# Fixed before seeds 1 and 2 of any architecture ran (seed 0's single-seed readings were seen: FCN +2.4 %, CNN
# +0.2 %, ViT +4.3 %, ReLU FCN -0.7 %, ResNet +14.1 %).
DELTA = KINK.value
DELTA_REASON = ("the kink tolerance of the single-seed design, kept: the grid near eta_c is spaced 4 % (the "
                "two-piece fit resolves the breakpoint to about that), plus the theory model's measured offset of "
                "the kink 0.5-2.2 % above 2/s_GF (eos.gd.kink_location); fixed before seeds 1 and 2 ran")
_CONTROLS = (
    DataControl("aa", ("seed s", "seed s+1"), "two inits of the same architecture: the difference of their kink "
                                              "offsets"),
    DataControl("null_grid", ("runs at eta <= 0.95 eta_c", "the edge"),
                "the share of runs below 0.95 eta_c at the edge of stability (eta S/2 >= 0.95): 0 where no kink is"),
)
_PRIMARY = ("kink", "eta_c")
E2_BOTH = Tolerance(
    "kink_and_tracking", 1.0,
    "each part relative to its own tolerance: the kink within kink_location (5 %: the fine grid's 4 % spacing "
    "plus the toy's measured 1-2 % offset) and the EoS-side median |1 - eta S/2| within eos_tracking (10 %); error <= 1 "
    "means both hold")
EQUIVALENT = Tolerance(
    "kink_equivalence", 0.0,
    "the contract's equivalence decision on the seed values of the kink offset (validation.decision."
    "equivalence_decision): error 0 when the 90 % seed interval lies inside +-delta, else how far the 95 % interval "
    "reaches outside the margin, relative to delta")
CONTROL_SIZE = 0.10
_CONTROL_REASON = ("twice the 5 % kink tolerance: a kink measured within the tolerance is told apart from a "
                   "prediction moved by more than tolerance + its own offset, and the grid near eta_c is spaced 4 %")


def _seed_sweeps(arch: str, tier: str) -> list[dict]:
    from biasaudit.validation.eos_config import e2_seed_configs

    return [_run_sweep(c, f"{tier}/{arch} E2 seed {c.seed}") for c in e2_seed_configs(tier, arch)]


def _numerics_kink_offset(config) -> dict:
    """For the theory model's seed ``config``: the numba kernel's kink offset against the theory's η_c
    (301 GD runs within ±10 % of η_c, :func:`biasaudit.numerics.eos_sweep.kink_location`)."""
    import numpy as np

    from biasaudit.numerics.eos_gd import gd_sweep
    from biasaudit.numerics.eos_sweep import kink_location
    from biasaudit.theory.eos_flow import eos_regimes
    from biasaudit.validation.eos_data import build_problem
    from biasaudit.validation.eos_toy import TOY_X, TOY_Y

    w0 = build_problem(config).theta_init.detach().cpu().numpy().astype(float)
    reg = eos_regimes(np.asarray(TOY_X), TOY_Y, w0)
    grid = np.linspace(0.9 * reg.eta_c, 1.1 * reg.eta_c, 301)
    runs = gd_sweep(np.asarray(TOY_X), TOY_Y, w0, grid)
    ok = runs.converged
    kink = kink_location(grid[ok], runs.lambda_max[ok]) if ok.sum() >= 8 else math.nan
    return {"eta_c": float(reg.eta_c), "s_gf": float(reg.s_gf), "kink": float(kink),
            "offset": float(kink / reg.eta_c - 1), "w0": w0.tolist()}


@functools.cache
def e2_seed_study(arch: str, tier: str) -> dict:
    """The seed values of E2 on ``arch`` (``"toy"``: the theory model) at ``tier``, the decision and the data
    controls (JSON-ready except ``decision`` and ``controls``, which have ``to_json``)."""
    import numpy as np

    from biasaudit.validation.decision import equivalence_control, equivalence_decision
    from biasaudit.validation.eos_config import e2_seed_configs
    from biasaudit.validation.eos_stats import edge_share, eos_median_gap, json_float, kink_offset
    from biasaudit.validation.gf_proxy import GFResult, eps_sensitivity

    sweeps = _seed_sweeps(arch, tier)
    eta_cs = [_eta_c(sw) for sw in sweeps]
    offsets = [kink_offset(sw, ec) for sw, ec in zip(sweeps, eta_cs)]
    seeds = [sw["config"]["seed"] for sw in sweeps]
    problems = [f"seed {s}: {p}" for s, sw in zip(seeds, sweeps) if (p := _gf_problem(sw))]
    reference = None
    values = offsets
    if arch == "toy":
        reference = [_numerics_kink_offset(c) for c in e2_seed_configs(tier, "toy")]
        values = [o - r["offset"] for o, r in zip(offsets, reference)]
    finite = [v for v in offsets if math.isfinite(v)]
    n = len(offsets)
    aa = [offsets[i] - offsets[(i + 1) % n] for i in range(n)] if n >= 2 else []
    null = [edge_share(sw, ec) for sw, ec in zip(sweeps, eta_cs)]
    decision = equivalence_decision(values, delta=DELTA, level=LEVEL)
    controls = [
        equivalence_control("aa", aa, margin=DELTA, reads="kink offset of seed s minus that of seed s+1 (mod n)",
                            level=LEVEL),
        equivalence_control("null_grid", null, margin=DELTA, reads="share of runs at eta <= 0.95 eta_c at the edge",
                            level=LEVEL),
    ]
    eps_change = [json_float(eps_sensitivity(GFResult.from_json({k: v for k, v in sw["gf"].items() if k != "key"})))
                  for sw in sweeps]
    return {
        "arch": arch, "tier": tier, "seeds": seeds, "values": values, "kink_offsets": offsets,
        "eta_c": eta_cs, "s_gf": [json_float(sw["gf"]["s_gf"]) for sw in sweeps], "reference": reference,
        "decision": decision, "controls": controls, "aa_values": aa, "null_values": null, "problems": problems,
        "eos_median_gap": [eos_median_gap(sw, ec) for sw, ec in zip(sweeps, eta_cs)],
        "eta_c_rel_change_2eps_to_eps": eps_change,
        "kink_offset_sd": float(np.std(finite, ddof=1)) if len(finite) >= 2 else math.nan,
        "grid_multiples": sorted(float(m) for m in sweeps[0]["config"]["coarse"] + sweeps[0]["config"]["fine"]),
    }


def _pc_summary(tier: str) -> dict:
    from biasaudit.validation.decision import gated_verdict

    pc = e2_seed_study("toy", tier)
    verdict, _ = gated_verdict(pc["decision"], pc["controls"], None)
    if pc["problems"]:
        verdict = "undecided"
    return {"claim": POSITIVE_CONTROL, "statistic": STATISTIC, "effect": pc["decision"].mean,
            "interval": list(pc["decision"].tost_interval), "verdict": verdict,
            "reads": "torch kink offset minus the numba kernel's, on the theory model"}


def _observe_study(arch: str, params) -> Observation:
    from biasaudit.tier import experiment_tier
    from biasaudit.validation.decision import gated_verdict

    tier = experiment_tier(params["tier"])
    r = e2_seed_study(arch, tier)
    decision = r["decision"]
    pc = None if arch == "toy" else _pc_summary(tier)
    verdict, why = gated_verdict(decision, r["controls"], None if pc is None else pc["verdict"])
    if r["problems"]:
        verdict, why = "undecided", "the gradient-flow proxy cannot be trusted: " + "; ".join(r["problems"])
    observed = contract_observation(
        statistic={"name": STATISTIC, "mean": decision.mean, "interval": list(decision.tost_interval),
                   "values": r["values"], "seeds": r["seeds"]},
        positive_control=pc, data_controls=r["controls"], decision=decision, n_seeds=decision.n, tier=tier,
        kink_offsets=r["kink_offsets"], eta_c=r["eta_c"], s_gf=r["s_gf"], numerics_reference=r["reference"],
        eos_median_gap=r["eos_median_gap"], eta_c_rel_change_2eps_to_eps=r["eta_c_rel_change_2eps_to_eps"],
        grid_multiples=r["grid_multiples"])
    lo, hi = decision.tost_interval
    what = "torch minus numerics kink offset" if arch == "toy" else "kink offset eta_kink/eta_c - 1"
    controls = "; ".join(f"{c.name} {c.mean:+.3f} [{c.interval[0]:+.3f}, {c.interval[1]:+.3f}]"
                         f"{'' if c.equivalent else ' NOT within'}" for c in r["controls"])
    detail = (f"[{tier} tier] {what}: {decision.mean:+.4f}, 90 % seed interval [{lo:+.4f}, {hi:+.4f}] over "
              f"{decision.n} seeds (per seed " + ", ".join(f"{v:+.3f}" for v in r["values"]) + f"); "
              f"{decision.verdict} by '{decision.rule}' (delta {DELTA:g}); data controls (within +-{DELTA:g}): "
              f"{controls}" + (f"; positive control {pc['claim']}: {pc['verdict']}" if pc else "")
              + f"; verdict: {verdict} ({why})")
    error = decision.error if verdict == decision.verdict and verdict != "undecided" else math.nan
    return Observation(observed, error, detail, decided=verdict != "undecided")


def _study_runs(arch: str):
    def runs() -> tuple:
        from biasaudit.tier import experiment_tier
        from biasaudit.validation.eos_config import e2_seed_configs

        tier = experiment_tier("quick")
        return tuple(u for c in e2_seed_configs(tier, arch) for u in sweep_run_units(c, f"E2 {arch} seed {c.seed}"))
    return runs


def _study_claim(arch: str) -> Claim:
    toy = arch == "toy"
    cid = POSITIVE_CONTROL if toy else f"eos.torch.e2.{arch}"
    name = "the theory model (shared-weight diagonal network, one data point)" if toy else f"the {NAMES[arch]}"
    return Claim(
        id=cid, paper="eos", kind="experiment", samples={"ci": 1, "thorough": 1},
        source="paper 2, §Experiments (E2: the transition sits at 2/s_GF across architectures)"
               + ("; the positive control of the network claims, where the numba kernel gives the kink" if toy else ""),
        title=(f"on {name}, the networks' pipeline finds the kink of final sharpness where the numba GD kernel "
               "puts it: the torch kink offset equals the numerics' to within 5 % of eta_c" if toy else
               f"on {name}, the kink of final sharpness against eta lies at eta_c = 2/s_GF to within 5 %, "
               "over init seeds"),
        hypotheses=(sp.Gt(s_gf, 0, evaluate=False), sp.Gt(eta, 0, evaluate=False)),
        statement=sp.Lt(sp.Abs(sp.Symbol("eta_kink", positive=True) / ETA_C_EXPR - 1), sp.Float(DELTA, 2)),
        predict=lambda params: 0.0, evaluate=lambda params, predicted: _observe_study(arch, params),
        tolerance=EQUIVALENT,
        domain=Domain({"tier": AuditTier()}, description=f"the tier's E2 sweeps of {arch} at each init seed"),
        negative_control=(), runs=_study_runs(arch),
        notes=("x = (0.7, 1.3, 2.1), y = 1.5, w0 = 0.05 exp(0.2 z) per seed, loss 1/2 r^2, float64, eps = 1e-8"
               if toy else ARCHITECTURES[arch] + "; 3 init seeds at the quick tier, 5 at the full tier"),
        contract=ExperimentContract(
            role="positive_control" if toy else "effect", statistic=STATISTIC,
            positive_control=None if toy else POSITIVE_CONTROL, data_controls=_CONTROLS, primary_arms=_PRIMARY,
            delta=DELTA, delta_reason=DELTA_REASON, level=LEVEL, min_seeds=3),
    )


# ---- cross-entropy per architecture: the full tier only, one seed (not yet under the contract) -------------
def _out_of_tier(params) -> str | None:
    """Why the claim does not run at this tier (CE per architecture is full-tier only), else None."""
    from biasaudit.tier import experiment_tier
    from biasaudit.validation.eos_config import ARCH_SWEEP_CONFIGS_CE

    if experiment_tier(params["tier"]) not in ARCH_SWEEP_CONFIGS_CE:
        return f"E2 with {params['loss']} on the {params['arch']} runs at the full tier only (audit --tier full)"
    return None


def _config(params):
    from biasaudit.tier import experiment_tier
    from biasaudit.validation.eos_config import arch_config

    return arch_config(experiment_tier(params["tier"]), params["arch"], params["loss"])


def _sweep(params) -> dict:
    return _run_sweep(_config(params), f"{params['tier']}/{params['arch']}/{params['loss']} E2")


def _predict(params) -> dict:
    from biasaudit.validation.eos_stats import json_float

    if _out_of_tier(params):
        raise OutOfScope(_out_of_tier(params))
    sweep = _sweep(params)
    return {"eta_c": _eta_c(sweep), "s_gf": json_float(sweep["gf"]["s_gf"]), "eps": sweep["gf"]["eps"],
            "gf_steps": sweep["gf"]["steps"]}


def _evaluate(params, predicted) -> Observation:
    from biasaudit.validation.eos_stats import e2_architecture

    sweep = _sweep(params)
    res = e2_architecture(sweep, predicted["eta_c"], kink_tolerance=KINK.value, tracking_tolerance=TRACKING.value)
    problem = _gf_problem(sweep)
    observed = {k: v for k, v in res.items() if k != "detail"}
    if problem:
        return Observation(observed, math.nan, f"undecided: {problem}", decided=False)
    return Observation(observed, res["error"], f"{res['detail']}; predicted kink at 2/s_GF = "
                       f"{predicted['eta_c']:.4g} (s_GF = {predicted['s_gf']:.4g}, eps = {predicted['eps']:g})",
                       res["decided"])


def _ce_claim(arch: str) -> Claim:
    return Claim(
        id=f"eos.torch.e2.{arch}.ce",
        source="paper 2, §Experiments (E2: the transition holds across architectures, cross-entropy)",
        title=f"{NAMES[arch]} with cross-entropy: the kink of final sharpness against eta lies at 2/s_GF, and "
              "above it the final sharpness tracks 2/eta",
        hypotheses=(sp.Gt(s_gf, 0, evaluate=False), sp.Gt(eta, 0, evaluate=False)),
        statement=sp.And(sp.Eq(sp.Symbol("eta_kink", positive=True), ETA_C_EXPR, evaluate=False),
                         sp.Eq(sp.Function("S_final")(eta), S_PRED_EXPR, evaluate=False)),
        predict=_predict, evaluate=_evaluate, tolerance=E2_BOTH,
        domain=Domain({"tier": AuditTier(), "arch": Fixed(arch), "loss": Fixed("ce")},
                      description=f"the tier's {arch} sweep with ce"),
        negative_control=shifted_prediction(CONTROL_SIZE, key="eta_c", reason=_CONTROL_REASON),
        runs=lambda: (), notes=f"{ARCHITECTURES[arch]}; with cross-entropy (eps = 0.25) at the full tier only",
        **COMMON)


CLAIMS = (_study_claim("toy"), *(_study_claim(arch) for arch in ARCHITECTURES),
          *(_ce_claim(arch) for arch in ARCHITECTURES))


def _make_figure(outdir, tier):
    from pathlib import Path

    from biasaudit.figures.eos_torch import make_e2_figure

    return [Path(p) for p in make_e2_figure(outdir, tier)]


FIGURES = (FigureJob(
    id="eos.torch.e2_architectures", paper="eos",
    title="E2 across architectures: final sharpness against eta, in units of s_GF and eta_c",
    claims=("eos.torch.e2.*",), make=_make_figure,
    caption="Final S/s_GF against eta/eta_c for the FCN, CNN, ResNet and ViT of the tier, with the predicted "
            "plateau-then-2/eta curve min(1, eta_c/eta); a kink left of 1 means the transition comes early.",
    requires=("biasaudit.figures.eos_torch:make_e2_figure", "torch:Tensor")),)
