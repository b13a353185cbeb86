"""Paper 2, E2 across architectures: claims ``eos.torch.e2.<arch>`` for an FCN (tanh and ReLU), a CNN, a ResNet
and a ViT.

Each claim states that, on its architecture, the kink of final sharpness against η lies at η_c = 2/s_GF and
that above it the final sharpness tracks 2/η. One sweep per architecture
(:data:`biasaudit.validation.eos_config.ARCH_SWEEP_CONFIGS`): the gradient-flow proxy gives s_GF, then full-batch
GD runs at η = m·η_c, m ∈ {0.75, 0.93, 0.97, 1.03, 1.07, 1.25, 2} at the quick tier.

=================  =====================================================================================
tier               what runs (MSE with the torch ``mean`` convention; MNIST-5k subsets)
=================  =====================================================================================
quick (audit)      fcn: 784-32-32-10 tanh, n = 500, eps = 1e-2 (the E1 sweep); fcn_relu: the same with ReLU;
                   cnn (ReLU, width 8): n = 100 pooled to 7 x 7; resnet (ReLU, BatchNorm, width 8): n = 300
                   at 7 x 7; vit (dim 16, patches of 7): n = 100 pooled to 14 x 14; eps = 2e-2
full (GPU)         cnn/resnet width 16, vit dim 32, 28 x 28 MNIST n = 1000, eps = 1e-2, 12-point grid
full only          ``eos.torch.e2.<arch>.ce``: cross-entropy, eps = 0.25 (the quick tier reports them out of
                   scope; its CE evidence is ``eos.torch.ce_tracking`` on the FCN)
=================  =====================================================================================

error = max(|η̂_kink/η_c − 1| / 5 %, median_EoS |1 − ηS/2| / 10 %)
(:func:`biasaudit.validation.eos_stats.e2_architecture`), so error ≤ 1 means both parts hold.
Negative controls: η_c moved by ±10 %, twice the kink tolerance (see :data:`CONTROL_SIZE`).
"""

from __future__ import annotations

import sympy as sp

from biasaudit.claims.eos.torch.sweeps import (
    COMMON, ETA_C_EXPR, KINK, S_PRED_EXPR, TRACKING, _eta_c, _gf_problem, _run_sweep, eta, s_gf,
    sweep_run_units,
)
from biasaudit.domain import Domain, Fixed
from biasaudit.figures import FigureJob
from biasaudit.ledger import Claim, Observation, OutOfScope, Tolerance, shifted_prediction
from biasaudit.tier import AuditTier

__all__ = ["CLAIMS", "FIGURES", "ARCHITECTURES", "E2_BOTH", "CONTROL_SIZE"]

ARCHITECTURES = {  # arch -> how the quick tier builds it (the record's notes)
    "fcn": "FCN 784-32-32-10 tanh, MNIST-5k n=500, MSE, eps=1e-2 (the E1 sweep)",
    "cnn": "CNN 3 conv layers (ReLU, width 8) + linear head, MNIST-5k n=100 at 7x7, MSE, eps=2e-2",
    "resnet": "ResNet stem + 2 basic blocks (ReLU, full-batch BatchNorm, width 8), MNIST-5k n=300 at 7x7, MSE, "
              "eps=2e-2",
    "vit": "ViT 1 block (dim 16, 2 heads, patches of 7), MNIST-5k n=100 at 14x14, MSE, eps=2e-2",
    "fcn_relu": "FCN 784-32-32-10 ReLU (the E1 FCN with ReLU for tanh), MNIST-5k n=500, MSE, eps=1e-2",
}
NAMES = {"fcn": "FCN", "cnn": "CNN", "resnet": "ResNet", "vit": "ViT", "fcn_relu": "ReLU FCN"}
E2_BOTH = Tolerance(
    "kink_and_tracking", 1.0,
    "each part relative to its own tolerance: the kink within kink_location (5 %: the fine grid's 4 % spacing "
    "plus the toy's measured 1-2 % offset) and the EoS-side median |1 - eta S/2| within eos_tracking (10 %); error <= 1 "
    "means both hold")
CONTROL_SIZE = 0.10
_CONTROL_REASON = ("twice the 5 % kink tolerance: a kink measured within the tolerance is told apart from a "
                   "prediction moved by more than tolerance + its own offset, and the grid near eta_c is spaced 4 %")


def _out_of_tier(params) -> str | None:
    """Why the claim does not run at this tier (CE per architecture is full-tier only), else None."""
    from biasaudit.tier import experiment_tier
    from biasaudit.validation.eos_config import ARCH_SWEEP_CONFIGS, ARCH_SWEEP_CONFIGS_CE

    table = ARCH_SWEEP_CONFIGS if params["loss"] == "mse" else ARCH_SWEEP_CONFIGS_CE
    tier = experiment_tier(params["tier"])
    if tier not in table:
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
    import math

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


def _runs(arch: str, loss: str):
    def runs() -> tuple:
        params = {"tier": "quick", "arch": arch, "loss": loss}
        if _out_of_tier(params):
            return ()
        return sweep_run_units(_config(params), f"E2 {arch} {loss}")
    return runs


def _claim(arch: str, loss: str = "mse") -> Claim:
    name = NAMES[arch]
    return Claim(
        id=f"eos.torch.e2.{arch}" + ("" if loss == "mse" else f".{loss}"),
        source="paper 2, §Experiments (E2: the transition holds across architectures"
               + ("" if loss == "mse" else ", cross-entropy") + ")",
        title=f"{name}{' with cross-entropy' if loss == 'ce' else ''}: the kink of final sharpness against eta "
              "lies at 2/s_GF, and above it the final sharpness tracks 2/eta",
        hypotheses=(sp.Gt(s_gf, 0, evaluate=False), sp.Gt(eta, 0, evaluate=False)),
        statement=sp.And(sp.Eq(sp.Symbol("eta_kink", positive=True), ETA_C_EXPR, evaluate=False),
                         sp.Eq(sp.Function("S_final")(eta), S_PRED_EXPR, evaluate=False)),
        predict=_predict, evaluate=_evaluate, tolerance=E2_BOTH,
        domain=Domain({"tier": AuditTier(), "arch": Fixed(arch), "loss": Fixed(loss)},
                      description=f"the tier's {arch} sweep with {loss}"),
        negative_control=shifted_prediction(CONTROL_SIZE, key="eta_c", reason=_CONTROL_REASON),
        runs=_runs(arch, loss), notes=ARCHITECTURES[arch] if loss == "mse" else
        f"{ARCHITECTURES[arch]}; with cross-entropy (eps = 0.25) at the full tier only", **COMMON)


CLAIMS = tuple(_claim(arch) for arch in ARCHITECTURES) + tuple(_claim(arch, "ce") for arch in ARCHITECTURES)


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
