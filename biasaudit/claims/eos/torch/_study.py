r"""Paper 2's network claims as pre-registered seed studies (:mod:`biasaudit.contract`): one statistic per init
seed, read by the same function on the networks and on the theory model, the positive control.

A *family* (:class:`Family`) is one statistic of a learning-rate sweep, ``f(sweep, η_c) -> float`` in
:mod:`biasaudit.validation.eos_stats`, with its decision, margin δ and sweeps. For each architecture of
:data:`biasaudit.validation.eos_config.ARCHS_E2` the family has an effect claim ``<prefix>.<arch>`` and, on the
theory model (:mod:`biasaudit.validation.eos_toy`), its positive control ``<prefix>.diag``: the same function of
the torch sweep minus its value where the numba GD kernel gives the answer independently of torch, either

* ``"dense_kink"``: the kink of numba GD runs on a fine grid around the theory's η_c
  (:func:`biasaudit.numerics.eos_sweep.measured_kink`, the one estimator of the toy's kink), or
* ``"same_grid"``: the same statistic of numba GD runs at the torch sweep's step sizes, read with the theory's η_c, or
* ``"same_grid_sweep_eta_c"``: the same, read with the torch sweep's own η_c (for a statistic of the shape of the
  EoS side, whose claim is not about where η_c lies: the kink and plateau controls test the proxy's η_c; with the
  theory's, a proxy 3 % off moves a run near 1.05 η_c across the EoS side's edge and the statistic with it), or
* ``"teacher"`` (test error, E5): the numba kernel's endpoints at the torch sweep's step sizes, each run's test
  error its risk against a teacher β* placed on the EoS side (:func:`teacher_sweep`), where the theory guarantees a
  U; the control reads the statistic itself (it must be confirmed above 0 by the family's own decision), and a
  second teacher at the flow's endpoint (the risk only rises: a hockey stick, no U) must not read as one.

The positive control is confirmed when that difference is equivalent to 0 within δ: the pipeline (proxy, GD,
eigsh, statistic) recovers the theory model's value. An effect claim is decided only when its positive control is
confirmed in the same audit and its data control passes: the family's null, read where the effect cannot be,
``null_grid`` (the share of runs at η ≤ 0.8 η_c, four kink margins below η_c, at the edge of stability: 0 where no
kink can be, above 0 when the pipeline puts η_c too high) or, for test error, ``flow_side`` (the slope of the
relative test error over the runs below η_c, where GD follows the flow: 0 where η cannot matter). Every control
reads other runs than the claim's statistic; none is a function of the claim's own seed values.

A family with ``contrast`` (E3's rates, E4's norm growth in time) is decided on the per-seed contrast of its
statistic between the two sides of η_c (:func:`biasaudit.validation.eos_stats.side_contrast`): the rate over the EoS side minus the same rate over
the flow side of the same sweep, where GD follows the flow. A pipeline bias that tilts the rate everywhere (a
proxy, a measure or a norm that drifts with η for reasons of its own) moves both arms alike, so it cannot make the
claim; the flow side's rates are in the record (``null_arm``) with their interval.

A statistic with a ``cross_fit`` reads a third argument chosen on the *other* seeds' sweeps (E5's break point,
:func:`biasaudit.validation.eos_stats.u_break_multiple`), so the noise that chooses it cannot also make the
statistic.

Decisions (:mod:`biasaudit.validation.decision`): ``"equivalence"`` (the statistic equals 0 within δ:
:func:`~biasaudit.validation.decision.equivalence_decision`) or ``"positive"`` (the statistic lies above 0:
:func:`~biasaudit.validation.decision.three_way`, refuted on the other side or when equivalent to 0). A network
claim takes them in looks (:mod:`biasaudit.validation.sequential`): 3 seeds, then 5 at the quick tier (5, 8, 12 at
the full tier) while the decision straddles and its positive control is confirmed, each look at its share of
α = 0.05; the record lists the looks and, when undecided, the seeds a decision would need at the observed spread.
The theory model's positive controls read their 8 (16) seeds in one look. ``eos.torch.decision_calibration.vs_placebo`` measures the decisions' error rates,
with these looks, on placebo data.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import sympy as sp

from biasaudit.contract import DataControl, ExperimentContract, contract_observation
from biasaudit.domain import Domain
from biasaudit.ledger import Claim, Observation, OutOfScope, Tolerance
from biasaudit.tier import AuditTier

__all__ = ["Family", "TOY", "LEVEL", "seed_sweeps", "numerics_sweep", "study", "study_claim", "NULL_CONTROLS"]

TOY = "toy"  # the theory model's key among the architectures; its claims end in ".diag"
LEVEL = 0.05
NULL_CONTROLS = {
    "null_grid": DataControl("null_grid", ("runs at eta <= 0.8 eta_c", "the edge"),
                             "the share of runs at or below 0.8 eta_c at the edge of stability (eta S/2 >= 0.95): 0 "
                             "where no kink is"),
    "flow_side": DataControl("flow_side", ("runs at eta <= 0.95 eta_c", "ln eta"),
                             "the slope of the relative test error against ln eta where GD follows the flow: 0 where "
                             "eta cannot change what is learned"),
}
N_TEACHER_TEST = 1000  # Gaussian test inputs of the theory model's teacher risk: as many as the networks' test images
TEACHER_U = 1.2  # the U teacher: GD's endpoint at 1.2 eta_c, inside the quick grid's EoS side (1.07-1.4 eta_c)
TEACHER_FLOW = 0.5  # the hockey-stick teacher: GD's endpoint at 0.5 eta_c, on the flow (below every grid point)
_HOCKEY = DataControl("hockey_stick", ("teacher at the flow's endpoint", "0"),
                      f"the statistic with the teacher at GD's endpoint at {TEACHER_FLOW:g} eta_c, where the risk only "
                      "rises (flat, then up): the upper end of its interval below delta")
_TEACHER_CONTROLS = (_HOCKEY,)
_PRIMARY = ("statistic", "its prediction")
_CONTRAST_ARMS = ("the rate over the EoS side (eta >= 1.05 eta_c)", "the same rate over the flow side (eta <= 0.95 eta_c)")
DECIDED = Tolerance(
    "seed_study_decision", 0.0,
    "the contract's decision on the seed values (validation.decision): error 0 when confirmed, else how far the "
    "decision interval reaches to the wrong side, relative to delta")


_BY_PREFIX: dict[str, "Family"] = {}  # every family by its prefix (Family.control_family)


@dataclass(frozen=True)
class Family:
    """One statistic of the sweeps, studied over init seeds on every architecture (module docstring).

    ``prefix``: the claims' id prefix; ``statistic``: ``"module:function"`` of ``f(sweep, η_c)``; ``decision``:
    ``"equivalence"`` or ``"positive"`` (the sign ``direction``, +1 or -1); ``reference``: ``"dense_kink"``,
    ``"same_grid"`` or ``"same_grid_sweep_eta_c"``; ``title``: the
    effect claims' title with ``{name}``; ``symbol``: the statistic's one-letter name in the claim's statement. The sweeps
    are E2's (:func:`~biasaudit.validation.eos_config.e2_seed_configs`), with MSE or cross-entropy."""

    prefix: str
    statistic: str
    decision: str
    delta: float
    delta_reason: str
    reference: str
    title: str
    source: str
    symbol: str
    direction: int = 1  # a "positive" decision's predicted sign of the statistic
    control_prefix: str = ""  # another family's prefix whose ".diag" is this family's positive control
    offset: float = 0.0  # a "positive" decision reads statistic - offset (a claim about a band's edge)
    eps: float | None = None  # the networks' sweeps stop at this loss instead of E2's (the theory model's: E2's)
    seed_offset: int = 0  # the networks' seeds are E2's moved by this (fresh seeds for a claim seen on E2's)
    null: str = "null_grid"  # the null data control (NULL_CONTROLS)
    cross_fit: str = ""  # "module:function" of (other seeds' sweeps, their eta_c) -> the statistic's third argument
    contrast: bool = False  # decide on the statistic's EoS side minus its flow side (eos_stats.side_contrast)
    arms: tuple = ()  # a contrast's two arms in words (default: E3's rates, _CONTRAST_ARMS)

    def __post_init__(self):
        _BY_PREFIX.setdefault(self.prefix, self)

    def control_family(self) -> "Family":
        """The family whose ``.diag`` claim is this family's positive control (itself, or ``control_prefix``'s):
        the control is decided once, with that family's margin and direction."""
        if not self.control_prefix:
            return self
        if self.control_prefix not in _BY_PREFIX:
            raise KeyError(f"{self.prefix}: no family has the control prefix {self.control_prefix!r}")
        return _BY_PREFIX[self.control_prefix]

    def statistic_function(self):
        """The statistic as a callable ``f(sweep, eta_c) -> float``."""
        import importlib

        module, name = self.statistic.split(":")
        return getattr(importlib.import_module(module), name)

    def value(self, sweep: dict, eta_c: float) -> float:
        """What the decision reads on one sweep: the statistic, or with ``contrast`` its EoS side minus its flow
        side (:func:`~biasaudit.validation.eos_stats.side_contrast`)."""
        from biasaudit.validation.eos_stats import side_contrast

        f = self.statistic_function()
        return side_contrast(f, sweep, eta_c) if self.contrast else f(sweep, eta_c)

    def flow_side(self, sweep: dict, eta_c: float) -> float:
        """A ``contrast`` family's null arm on one sweep: the statistic over the flow side alone."""
        return self.statistic_function()(sweep, eta_c, side="flow")

    def readings(self, sweeps: list[dict], eta_cs: list[float]) -> list[float]:
        """What the decision reads on each seed's sweep (:meth:`value`; with ``cross_fit``: the statistic with its
        third argument chosen on the other seeds)."""
        import importlib

        if not self.cross_fit:
            return [self.value(sw, ec) for sw, ec in zip(sweeps, eta_cs)]
        if self.contrast:
            raise ValueError(f"{self.prefix}: a cross-fitted statistic has no side contrast")
        f = self.statistic_function()
        module, name = self.cross_fit.split(":")
        fit = getattr(importlib.import_module(module), name)
        others = [[j for j in range(len(sweeps)) if j != i] for i in range(len(sweeps))]
        return [f(sw, ec, fit([sweeps[j] for j in o], [eta_cs[j] for j in o]))
                for sw, ec, o in zip(sweeps, eta_cs, others)]

    def contrast_arms(self) -> tuple:
        """A ``contrast`` family's arms in words: the EoS side's reading, then the flow side's."""
        return self.arms or _CONTRAST_ARMS

    def data_controls(self) -> tuple:
        """The contract's data controls: the family's null, read on runs where the effect cannot be."""
        return (NULL_CONTROLS[self.null],)

    def claim_id(self, arch: str, loss: str = "mse") -> str:
        """``<prefix>.<arch>`` (``.ce`` appended for cross-entropy); the theory model's is ``<prefix>.diag`` (or
        ``<control_prefix>.diag``: a family that states the other side of another's statistic shares its control)."""
        if arch == TOY:
            return f"{self.control_prefix or self.prefix}.diag"
        return f"{self.prefix}.{arch}" + ("" if loss == "mse" else f".{loss}")


def _configs(arch: str, loss: str, tier: str, eps: float | None = None, seed_offset: int = 0,
             n_seeds: int | None = None) -> list:
    """E2's sweep configurations of ``arch`` with ``loss`` at ``tier``, stopped at ``eps`` when given, at seeds
    0 … ``n_seeds`` − 1 (default: the tier's first look, E2's seeds) moved by ``seed_offset`` (the theory model
    keeps its own)."""
    import dataclasses

    from biasaudit.validation.eos_config import e2_seed_configs

    configs = e2_seed_configs(tier, arch, loss)
    if arch == TOY:
        return configs
    seeds = [c.seed for c in configs] if n_seeds is None else list(range(int(n_seeds)))
    return [dataclasses.replace(configs[0], eps=configs[0].eps if eps is None else eps, seed=s + seed_offset)
            for s in seeds]


def seed_sweeps(arch: str, loss: str, tier: str, eps: float | None = None, seed_offset: int = 0,
                n_seeds: int | None = None) -> list[dict]:
    """E2's sweeps of ``arch`` with ``loss`` at ``tier`` (stopped at ``eps`` when given, ``n_seeds`` seeds moved by
    ``seed_offset``: :func:`_configs`), one per init seed (run or read from the cache)."""
    from biasaudit.claims.eos.torch.sweeps import _run_sweep

    return [_run_sweep(c, f"{tier}/{arch}/{c.loss} E2 seed {c.seed} eps={c.eps:g}")
            for c in _configs(arch, loss, tier, eps, seed_offset, n_seeds)]


def _toy_truth(config) -> tuple:
    """(x, y, w0, the theory's η_c) of the theory model's seed ``config``."""
    import numpy as np

    from biasaudit.theory.eos_flow import eos_regimes
    from biasaudit.validation.eos_data import build_problem
    from biasaudit.validation.eos_toy import TOY_X, TOY_Y

    w0 = build_problem(config).theta_init.detach().cpu().numpy().astype(float)
    x = np.asarray(TOY_X, dtype=float)
    return x, TOY_Y, w0, float(eos_regimes(x, TOY_Y, w0).eta_c)


def numerics_sweep(torch_sweep: dict, config) -> dict:
    """The numba GD kernel's sweep of the theory model at the step sizes of ``torch_sweep`` (a sweep dict with the
    same fields the statistics read: ``eta``, ``outcome``, ``final`` S, l1, l2 and the average and adaptive
    sharpness), and the theory's η_c. S is the kernel's top eigenvalue; the average and adaptive sharpness are the
    torch measures (:func:`~biasaudit.validation.gd_trainer.measure`, with the torch run's seed) evaluated at the
    kernel's endpoint: the path is independent of torch, the measure is shared (it is checked against the dense
    Hessian by ``eos.torch.sharpness_vs_dense``)."""
    import numpy as np
    import torch

    from biasaudit.numerics.eos_gd import gd_sweep
    from biasaudit.validation.eos_data import build_problem
    from biasaudit.validation.gd_trainer import measure

    x, y, w0, eta_c = _toy_truth(config)
    etas = np.array([r["eta"] for r in torch_sweep["runs"]], dtype=float)
    runs = gd_sweep(x, y, w0, etas)
    problem = build_problem(config)
    out = []
    for i, eta in enumerate(etas):
        ok = bool(runs.converged[i])
        w = runs.w[i]
        final = {"S": {"value": float(runs.lambda_max[i]), "converged": ok},
                 "l1": float(np.abs(w).sum()), "l2": float(np.linalg.norm(w))}
        if ok:
            shared = measure(problem, torch.as_tensor(w, dtype=problem.theta_init.dtype), seed=config.seed)
            final.update({k: shared[k] for k in ("avg_sharpness", "adaptive_sharpness")})
        out.append({"eta": float(eta), "outcome": "converged" if ok else "diverged", "final": final})
    for torch_run, run in zip(torch_sweep["runs"], out):
        if torch_run.get("tracked"):
            run.update(_numerics_tracked(x, y, w0, torch_run), tracked=True)
        elif run["outcome"] == "converged":  # the per-step norm and loss, for the flow side of a statistic in time
            run.update(_numerics_path(x, y, _kernel_path(x, y, w0, torch_run)))
    return {"runs": out, "gf": {"s_gf": 2.0 / eta_c, "eta_c": eta_c}}


def _kernel_path(x, y, w0, torch_run: dict):
    """The numba kernel's iterates w_0 … w_K at the torch run's η, for as many steps K."""
    from biasaudit.numerics.eos_gd import gd_path

    return gd_path(x, y, w0, torch_run["eta"], max(int(torch_run["steps"]), 1))


def _numerics_path(x, y, w) -> dict:
    """Per-step ‖w_k‖₁ and L(w_k) of the iterates ``w`` (rows)."""
    import numpy as np

    from biasaudit.theory.eos_model import loss

    return {"l1": np.abs(w).sum(axis=1).tolist(), "loss": loss(x, y, w).tolist()}


def _numerics_tracked(x, y, w0, torch_run: dict) -> dict:
    """The numba kernel's path at the tracked torch run's η for as many steps: per-step ‖w‖₁, and the top Hessian
    eigenvalue (the theory's Hessian) at the steps the torch run measured it."""
    from biasaudit.theory.eos_model import hessian_eigenvalues

    w = _kernel_path(x, y, w0, torch_run)
    steps = [p["step"] for p in torch_run["sharpness_path"] if p["step"] < len(w)]
    top = hessian_eigenvalues(x, y, w[steps])[..., -1] if steps else []
    return {**_numerics_path(x, y, w),
            "sharpness_path": [{"step": k, "S": float(s), "converged": True} for k, s in zip(steps, top)]}


def teacher_sweep(torch_sweep: dict, config, teacher_multiple: float) -> dict:
    r"""The numba GD kernel's sweep of the theory model at the step sizes of ``torch_sweep``, each run's test error
    its risk against a teacher: the mean of :math:`\tfrac12\langle x', \beta - \beta^*\rangle^2` over
    :data:`N_TEACHER_TEST` inputs :math:`x' \sim N(0, I)` drawn with the seed (one test set per seed, shared by its
    runs, as the networks' test images are), :math:`\beta = w\odot w`, and :math:`\beta^*` the kernel's endpoint
    at ``teacher_multiple`` · η_c (the theory's). The risk is 0 at that step size and grows with the distance
    between endpoints; diverged runs stay diverged."""
    import numpy as np

    from biasaudit.numerics.eos_gd import gd_sweep

    x, y, w0, eta_c = _toy_truth(config)
    etas = np.array([r["eta"] for r in torch_sweep["runs"]], dtype=float)
    runs = gd_sweep(x, y, w0, np.append(etas, teacher_multiple * eta_c))
    if not runs.converged[-1]:
        raise RuntimeError(f"the teacher's GD run at {teacher_multiple:g} eta_c did not converge")
    teacher = runs.w[-1] ** 2
    test_x = np.random.default_rng(config.seed).standard_normal((N_TEACHER_TEST, x.size))
    out = []
    for i, eta in enumerate(etas):
        ok = bool(runs.converged[i])
        risk = float(np.mean(0.5 * (test_x @ (runs.w[i] ** 2 - teacher)) ** 2)) if ok else float("nan")
        out.append({"eta": float(eta), "outcome": "converged" if ok else "diverged",
                    "final": {"test_error": risk, "n_test": N_TEACHER_TEST}})
    return {"runs": out, "gf": torch_sweep["gf"]}


def _dense_kink_offset(config) -> float:
    """The kink of the numba GD kernel on the theory model's seed ``config`` (the one estimator,
    :func:`biasaudit.numerics.eos_sweep.measured_kink`), as an offset from the theory's η_c."""
    from biasaudit.numerics.eos_sweep import measured_kink

    x, y, w0, eta_c = _toy_truth(config)
    kink = measured_kink(x, y, w0, eta_c)
    return math.nan if kink is None else float(kink / eta_c - 1)


def _seed_values(family: Family, arch: str, loss: str, tier: str, n_seeds: int | None) -> dict:
    """What ``family`` reads on the first ``n_seeds`` seeds of ``arch`` (None: the theory model's seeds, or E2's):
    the configurations, sweeps, η_c, the readings, the numerics' reference (theory model) and the decision's
    values."""
    from biasaudit.claims.eos.torch.sweeps import _eta_c

    configs = _configs(arch, loss, tier, family.eps, family.seed_offset, n_seeds)
    sweeps = seed_sweeps(arch, loss, tier, family.eps, family.seed_offset, n_seeds)
    eta_cs = [_eta_c(sw) for sw in sweeps]
    teacher = arch == TOY and family.reference == "teacher"
    read = [teacher_sweep(sw, c, TEACHER_U) for sw, c in zip(sweeps, configs)] if teacher else sweeps
    readings = family.readings(read, eta_cs)
    values, reference = readings, None
    if arch == TOY and not teacher:
        if family.reference == "dense_kink":
            reference = [_dense_kink_offset(c) for c in configs]
        else:
            reference = []
            for sw, c, ec in zip(sweeps, configs, eta_cs):
                ref = numerics_sweep(sw, c)
                reference.append(family.value(
                    ref, ec if family.reference == "same_grid_sweep_eta_c" else ref["gf"]["eta_c"]))
        values = [v - r for v, r in zip(readings, reference)]
    return {"configs": configs, "sweeps": sweeps, "eta_cs": eta_cs, "read": read, "readings": readings,
            "values": values, "reference": reference}


def _decide(family: Family, arch: str):
    """(values, level) -> the family's decision at that level (the theory model's: equivalence to the numerics)."""
    from biasaudit.validation.decision import equivalence_decision, three_way

    if family.decision == "equivalence" or (arch == TOY and family.reference != "teacher"):
        return lambda values, level: equivalence_decision(values, delta=family.delta, level=level)
    return lambda values, level: three_way([v - family.offset for v in values], direction=family.direction,
                                           delta=family.delta, level=level, adjusted_level=level)


@functools.cache
def study(family: Family, arch: str, loss: str, tier: str) -> dict:
    """The seed values of ``family`` on ``arch`` (:data:`TOY`: the theory model) with ``loss`` at ``tier``, the
    decision and the data controls (``decision``, ``controls`` and ``sequential`` have ``to_json``; the rest is
    JSON-ready). A network claim takes the tier's looks (:data:`biasaudit.validation.sequential.LOOKS`): seeds are
    added while its decision straddles, up to the tier's cap; the theory model's seeds are one look."""
    from biasaudit.claims.eos.torch.sweeps import _gf_problem
    from biasaudit.validation.decision import equivalence_control, no_effect_control, seed_interval
    from biasaudit.validation.eos_stats import edge_share, flow_side_error_slope, json_float
    from biasaudit.validation.gf_proxy import eps_sensitivity
    from biasaudit.validation.sequential import LOOKS, sequential_decision

    teacher = arch == TOY and family.reference == "teacher"
    read_at: dict = {}

    def values_at(n):
        read_at[n] = _seed_values(family, arch, loss, tier, None if arch == TOY else n)
        return read_at[n]["values"]

    looks = (len(_configs(arch, loss, tier)),) if arch == TOY else LOOKS[tier]

    def go_on() -> bool:  # more seeds only where no other gate already holds the verdict undecided
        last = read_at[max(read_at)]
        return (_positive_control(family, tier)["verdict"] == "confirmed"
                and not any(_gf_problem(sw) for sw in last["sweeps"]))

    sequential = sequential_decision(values_at, _decide(family, arch), looks, level=LEVEL, go_on=go_on)
    r = read_at[sequential.looks[-1].n]
    configs, sweeps, eta_cs = r["configs"], r["sweeps"], r["eta_cs"]
    seeds = [c.seed for c in configs]
    problems = [f"seed {s}: {p}" for s, sw in zip(seeds, sweeps) if (p := _gf_problem(sw))]
    if teacher:  # the U is guaranteed and large; the controls read the teacher where no U is (module docstring)
        null = family.readings([teacher_sweep(sw, c, TEACHER_FLOW) for sw, c in zip(sweeps, configs)], eta_cs)
        controls = [no_effect_control("hockey_stick", null, margin=family.delta, level=LEVEL, reads=_HOCKEY.meaning)]
    else:
        if family.null == "flow_side":
            null = [flow_side_error_slope(sw, ec) for sw, ec in zip(r["read"], eta_cs)]
        else:
            null = [edge_share(sw, ec) for sw, ec in zip(sweeps, eta_cs)]
        controls = [equivalence_control(family.null, null, margin=family.delta, reads=NULL_CONTROLS[family.null].meaning,
                                        level=LEVEL)]
    null_arm = None
    if family.contrast:
        flow = [family.flow_side(sw, ec) for sw, ec in zip(sweeps, eta_cs)]
        null_arm = {"reads": family.contrast_arms()[1], "values": [json_float(v) for v in flow],
                    "interval": [json_float(b) for b in seed_interval(flow, 1 - 2 * LEVEL)]}
    eps_change = [json_float(eps_sensitivity(sw["gf"])) for sw in sweeps]
    return {
        "arch": arch, "tier": tier, "seeds": seeds, "values": r["values"], "readings": r["readings"],
        "reference": r["reference"], "eta_c": eta_cs, "s_gf": [json_float(sw["gf"]["s_gf"]) for sw in sweeps],
        "decision": sequential.decision, "sequential": sequential, "controls": controls, "null_values": null,
        "null_arm": null_arm, "problems": problems, "eta_c_rel_change_2eps_to_eps": eps_change,
        "grid_multiples": configs[0].multiples(),
        "outcomes": [{f"{r['eta']:.4g}": r["outcome"] for r in sw["runs"]} for sw in sweeps],
    }


def _positive_control(family: Family, tier: str) -> dict:
    from biasaudit.validation.decision import gated_verdict

    family = family.control_family()
    pc = study(family, TOY, "mse", tier)
    verdict, _ = gated_verdict(pc["decision"], pc["controls"], None)
    if pc["problems"]:
        verdict = "undecided"
    teacher = family.reference == "teacher"
    interval = pc["decision"].interval if teacher else pc["decision"].tost_interval
    return {"claim": family.claim_id(TOY), "statistic": family.statistic, "effect": pc["decision"].mean,
            "interval": list(interval), "verdict": verdict,
            "reads": "the statistic of the numba kernel's endpoints against a teacher where the theory guarantees the "
                     "effect" if teacher else "the torch statistic minus the numba kernel's, on the theory model"}


def _observe(family: Family, arch: str, loss: str, params) -> Observation:
    from biasaudit.tier import experiment_tier
    from biasaudit.validation.decision import gated_verdict

    tier = experiment_tier(params["tier"])
    r = study(family, arch, loss, tier)
    decision = r["decision"]
    pc = None if arch == TOY else _positive_control(family, tier)
    verdict, why = gated_verdict(decision, r["controls"], None if pc is None else pc["verdict"])
    if r["problems"]:
        verdict, why = "undecided", "the gradient-flow proxy cannot be trusted: " + "; ".join(r["problems"])
    interval = decision.tost_interval if decision.direction == 0 else decision.interval
    observed = contract_observation(
        statistic={"name": family.statistic, "mean": decision.mean, "interval": list(interval),
                   "values": r["values"], "seeds": r["seeds"]},
        positive_control=pc, data_controls=r["controls"], decision=decision, n_seeds=decision.n, tier=tier,
        readings=r["readings"], numerics_reference=r["reference"], eta_c=r["eta_c"], s_gf=r["s_gf"],
        eta_c_rel_change_2eps_to_eps=r["eta_c_rel_change_2eps_to_eps"], grid_multiples=r["grid_multiples"],
        outcomes=r["outcomes"], sequential=r["sequential"].to_json(),
        **({"null_arm": r["null_arm"]} if r["null_arm"] else {}))
    name = family.statistic.split(":")[1] + (" (EoS side minus flow side)" if family.contrast else "")
    what = f"{name} (torch minus numerics)" if arch == TOY and family.reference != "teacher" else name + (
        f" - {family.offset:g}" if family.offset else "")
    coverage = f"{100 * (1 - (2 if decision.direction == 0 else 1) * decision.adjusted_level):.1f} %"
    controls = "; ".join(c.summary() for c in r["controls"])
    detail = (f"[{tier} tier] {what}: {decision.mean:+.4f}, {coverage} seed interval [{interval[0]:+.4f}, "
              f"{interval[1]:+.4f}] over {decision.n} seeds (per seed " + ", ".join(
                  f"{v - (0 if arch == TOY else family.offset):+.3f}" for v in r["values"])
              + ")" + (_null_arm_detail(r["null_arm"]) if r["null_arm"] else "")
              + f"; {decision.verdict} by '{decision.rule}' (delta {family.delta:g})"
              + (_looks_detail(r["sequential"]) if arch != TOY else "") + "; data controls (within "
              f"+-{family.delta:g}): {controls}" + (f"; positive control {pc['claim']}: {pc['verdict']}" if pc else "")
              + f"; verdict: {verdict} ({why})")
    error = decision.error if verdict == decision.verdict and verdict != "undecided" else math.nan
    return Observation(observed, error, detail, decided=verdict != "undecided")


def _looks_detail(sequential) -> str:
    """The looks taken and, for an undecided claim, why no more seeds were read and how many a decision would need at
    the observed spread."""
    from biasaudit.validation.sequential import LOOKS, MAX_SEEDS_STATED

    looks = ", ".join(f"{look.n} seeds at alpha {look.level:.4f} {look.verdict}" for look in sequential.looks)
    text = f"; looks: {looks}"
    if sequential.decision.verdict == "undecided":
        need = sequential.seeds_needed
        why = "the tier's cap" if sequential.capped else "no more seeds: another gate holds it undecided"
        if not need:
            return text + f" ({why}; at the observed mean and spread no count up to {MAX_SEEDS_STATED} decides)"
        tier = sequential.tier_that_decides
        if tier is None:
            where = f"beyond every tier's cap (full: {LOOKS['full'][-1]})"
        else:
            where = f"within the {tier} tier's cap of {LOOKS[tier][-1]}"
            if tier == "full":
                where += " (audit --tier full, meant for a GPU)"
        text += f" ({why}; at the observed mean and spread about {need} seeds would decide: {where})"
    return text


def _null_arm_detail(arm: dict) -> str:
    lo, hi = arm["interval"]
    return ("; the flow side alone " + ", ".join(f"{v:+.3f}" for v in arm["values"])
            + f" (90 % [{lo:+.3f}, {hi:+.3f}])")


def _out_of_tier(arch: str, tier: str) -> str | None:
    """Why ``arch`` does not run at ``tier`` (:data:`biasaudit.validation.eos_config.E2_FULL_ONLY`), else None."""
    from biasaudit.validation.eos_config import E2_FULL_ONLY

    if tier == "quick" and arch in E2_FULL_ONLY:
        return f"the full tier only (audit --tier full): {E2_FULL_ONLY[arch]}"
    return None


def _predict(arch: str, params) -> float:
    from biasaudit.tier import experiment_tier

    why = _out_of_tier(arch, experiment_tier(params["tier"]))
    if why:
        raise OutOfScope(why)
    return 0.0


def _runs(arch: str, loss: str, eps: float | None = None, seed_offset: int = 0):
    def runs() -> tuple:
        from biasaudit.claims.eos.torch.sweeps import sweep_run_units
        from biasaudit.tier import experiment_tier

        tier = experiment_tier("quick")
        if _out_of_tier(arch, tier):
            return ()
        return tuple(u for c in _configs(arch, loss, tier, eps, seed_offset)
                     for u in sweep_run_units(c, f"E2 {arch} {c.loss} seed {c.seed}"))
    return runs


_TOY_NAME = "the theory model (shared-weight diagonal network on one data point)"
_TOY_NOTES = "x = (0.7, 1.3, 2.1), y = 1.5, w0 = 0.05 exp(0.2 z) per seed, loss 1/2 r^2, float64, eps = 1e-8"


def study_claim(family: Family, arch: str, loss: str = "mse", *, name: str = "", notes: str = "") -> Claim:
    """The claim of ``family`` on ``arch`` with ``loss`` (``name``: the architecture in words), or its positive
    control when ``arch`` is :data:`TOY`."""
    toy = arch == TOY
    teacher = toy and family.reference == "teacher"
    statistic = (sp.Symbol(family.symbol + "_EoS") - sp.Symbol(family.symbol + "_flow") if family.contrast
                 else sp.Symbol(family.symbol))
    controls = _TEACHER_CONTROLS if teacher else family.data_controls()
    if teacher:
        statement = sp.Gt(statistic, 0)
    elif toy:
        numerics = (sp.Symbol(family.symbol + "_EoS_numerics") - sp.Symbol(family.symbol + "_flow_numerics")
                    if family.contrast else sp.Symbol(family.symbol + "_numerics"))
        statement = sp.Lt(sp.Abs(statistic - numerics), sp.Float(family.delta, 2))
    elif family.decision == "equivalence":
        statement = sp.Lt(sp.Abs(statistic), sp.Float(family.delta, 2))
    else:
        offset = (sp.Float(family.offset, 2) if round(family.offset, 2) == family.offset  # 0.1 as 0.1, 5/12 as 5/12
                  else sp.nsimplify(family.offset, rational=True, tolerance=1e-12))
        statement = sp.Gt(family.direction * (statistic - offset), 0)
    stat_name = family.statistic.split(":")[1]
    if teacher:
        title = (f"on {_TOY_NAME}, with each run's test error its risk against a teacher at GD's endpoint at "
                 f"{TEACHER_U:g} eta_c (a U in eta that the theory guarantees), {stat_name} lies above 0 over init "
                 "seeds; with the teacher at the flow's endpoint (the risk only rises) it does not")
    elif toy:
        title = (f"on {_TOY_NAME}, the networks' pipeline recovers what the numba GD kernel gives: {stat_name} of "
                 f"the torch sweeps equals the numerics' to within {family.delta:g}")
    else:
        title = family.title.format(name=name + (" with cross-entropy" if loss == "ce" else ""))
    return Claim(
        id=family.claim_id(arch, loss), paper="eos", kind="experiment", samples={"ci": 1, "thorough": 1},
        source=family.source + ("; the positive control of the network claims, where the numba kernel gives the "
                                "answer" if toy else ""),
        title=title,
        hypotheses=(sp.Gt(sp.Symbol("s_GF", positive=True), 0, evaluate=False),),
        statement=statement, predict=lambda params: _predict(arch, params),
        evaluate=lambda params, predicted: _observe(family, arch, loss, params), tolerance=DECIDED,
        domain=Domain({"tier": AuditTier()}, description=f"the tier's E2 sweeps of {arch} with {loss}, one per seed"),
        negative_control=(), runs=_runs(arch, loss, family.eps, family.seed_offset), notes=_TOY_NOTES if toy else notes,
        contract=ExperimentContract(
            role="positive_control" if toy else "effect", statistic=family.statistic,
            positive_control=None if toy else family.claim_id(TOY), data_controls=controls,
            primary_arms=family.contrast_arms() if family.contrast else _PRIMARY, delta=family.delta,
            delta_reason=family.delta_reason, level=LEVEL, min_seeds=3),
    )
