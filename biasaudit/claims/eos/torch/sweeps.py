"""Paper 2 ("Conflicting Biases at the Edge of Stability") on torch networks: claims ``eos.torch.*``.

Kind ``experiment``. One case each (``samples = 1``): the parameters are the tier that runs
(:class:`~biasaudit.tier.AuditTier`) and the loss. ``predict`` runs the gradient-flow proxy and returns
η_c = 2/s_GF (the theory formula :data:`biasaudit.theory.eos_flow.ETA_C`); ``evaluate`` runs the learning-rate sweep and measures the claim. The sweep of a tier
is computed once per process and cached on disk per run (:func:`biasaudit.validation.eos_runs.run_sweep`), so
all claims of a tier share it. torch is imported only inside ``predict``/``evaluate``.

======================================  ===================================================================
claim                                   measured number (error) and negative control
======================================  ===================================================================
(E1, E2 per architecture and loss)      ``eos.torch.e2.*``, ``eos.torch.e1.tracking.*``, ``eos.torch.e1.plateau.*``:
                                        seed studies in :mod:`biasaudit.claims.eos.torch.architectures`
(E3 per architecture and loss)          ``eos.torch.e3.*``: seed studies in :mod:`biasaudit.claims.eos.torch.measures`
(E4 per architecture)                   ``eos.torch.e4.*``: seed studies in :mod:`biasaudit.claims.eos.torch.dynamics`
(E5 per architecture and loss)          ``eos.torch.e5.u_shape.*``: seed studies in
                                        :mod:`biasaudit.claims.eos.torch.generalization`
``eos.torch.sharpness_vs_dense``        eigsh/Lanczos/HVP, the adaptive sharpness and the Hutchinson trace against
                                        the dense autograd Hessian (float64; tiny FCN, CNN, ResNet, ViT); a
                                        cross-check; control: the dense values × 1.01
======================================  ===================================================================
"""

from __future__ import annotations

import dataclasses
import functools
import math

import sympy as sp

from biasaudit.contract import ExperimentContract
from biasaudit.domain import Domain, Fixed
from biasaudit.ledger import Claim, Observation, Tolerance
from biasaudit.theory.eos_flow import ETA_C

__all__ = ["CLAIMS", "FIGURES"]

eta, s_gf, S, k = sp.symbols("eta s_GF S k", positive=True)

# η_c = 2/s_GF, theory's formula (one lambdified function; s_gf above is theory's s_GF)
ETA_C_EXPR = ETA_C.expr
eta_c_of = ETA_C
# the final sharpness predicted by E1/E2: the flow plateau below η_c, the edge of stability above
S_PRED_EXPR = sp.Min(s_gf, 2 / eta)

TRACKING = Tolerance(
    "eos_tracking", 0.1,
    "'roughly constant' and 'falls like 2/eta' read as within 10 %: the quick tier measured a median "
    "|1 - eta*S/2| of about 0.015 and a flow-side drift S_GF - S_GD = O(eta); 10 % leaves room for both while "
    "the 30 % shift of the negative control fails")
KINK = Tolerance(
    "kink_location", 0.05,
    "fine grid 0.93, 0.97, 1.03, 1.07 x eta_c: spacing 4 % (the bracket alone resolves +-2-4 %), plus the "
    "toy model's measured offset of the kink 1-2 % above 2/s_GF (eos.gd.kink_location)")
DENSE = Tolerance(
    "dense_hessian_agreement", 1e-6,
    "the iterative tools must match the dense autograd Hessian to 1e-6 in float64; eigsh runs at "
    "tol 1e-10, Lanczos over the full Krylov space, so rounding (~p*eps*|H|) is far below; the Hutchinson trace "
    "is random: its error is read in units of 4 of its standard errors, scaled to this tolerance")



def _run_sweep(config, label: str) -> dict:
    from biasaudit.plumbing.status import status
    from biasaudit.validation.eos_runs import run_sweep

    return run_sweep(config, progress=lambda msg: status(f"[eos.torch {label}] {msg.strip()}"))


def _eta_c(sweep) -> float:
    """η_c = 2/s_GF of a sweep's gradient-flow proxy (NaN when s_GF is not positive)."""
    from biasaudit.validation.eos_stats import json_float

    s = json_float(sweep["gf"]["s_gf"])
    return eta_c_of(s) if s > 0 else math.nan


def _gf_problem(sweep) -> str:
    """Why the s_GF prediction cannot be trusted (or '' when it can)."""
    gf = sweep["gf"]
    if not gf.get("reached_eps"):
        return f"the gradient-flow proxy did not reach eps={gf.get('eps')} in {gf.get('steps')} steps"
    if not gf.get("all_converged"):
        bad = [p for p in gf.get("path", []) if not p.get("converged")]
        return f"eigsh did not converge at {len(bad)} points of the gradient-flow path"
    return ""


def _observation(sweep, res, predicted_text) -> Observation:
    problem = _gf_problem(sweep)
    if problem:
        return Observation(res, math.nan, f"undecided: {problem}", decided=False)
    detail = f"{res['detail']}; predicted {predicted_text}"
    return Observation({k: v for k, v in res.items() if k != "detail"}, res["error"], detail, res["decided"])


# Tiny float64 networks for the dense cross-check: each architecture's builder at a size whose dense Hessian is cheap
DENSE_NETS = {  # arch -> (input shape, model kwargs, width); p = 99, 167, 110, 251 parameters
    "fcn": ((5,), {}, 6),
    "cnn": ((1, 4, 4), {"width": 1}, 0),
    "resnet": ((1, 4, 4), {"width": 1}, 0),
    "vit": ((1, 6, 6), {"dim": 4, "patch": 3}, 0),
}
DENSE_XI = 1e-3  # ξ of the adaptive sharpness's scaling T = diag(|θ| + ξ), passed to the eigensolver and the dense side
HUTCHINSON_SE = 4.0  # the Hutchinson trace may stray from tr H by its own standard error; 4 of them (a 6e-5 chance)


@functools.cache
def _dense_case(arch: str):
    """(loss function, θ after 50 GD steps, its dense Hessian H) of the tiny float64 ``arch`` on 40 random inputs
    with 3 classes (memoised: the prediction, the evaluation and its control read the same case)."""
    import numpy as np

    from biasaudit.validation.gd_trainer import make_problem, train_gd
    from biasaudit.validation.sharpness import dense_hessian

    shape, kwargs, width = DENSE_NETS[arch]
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, *shape))
    y = rng.integers(0, 3, 40)
    problem = make_problem(arch, "mse", X, y, X[:10], y[:10], num_classes=3, dtype="float64", seed=1,
                           model_kwargs=kwargs or None, **({"width": width, "depth": 2} if width else {}))
    run = train_gd(problem, 0.05, eps=1e-9, max_steps=50, final_measures=False, keep_theta=True)
    theta = run.theta.detach()
    return problem.train_loss, theta, dense_hessian(problem.train_loss, theta)


def _dense_truth(arch: str) -> dict:
    """What the dense Hessian H (and T H T, T = diag(|θ| + ξ)) gives for ``arch``."""
    import numpy as np

    f, theta, H = _dense_case(arch)
    ev = np.linalg.eigvalsh(H)
    T = np.abs(theta.numpy()) + DENSE_XI
    return {"lambda_min": float(ev[0]), "lambda_max": float(ev[-1]), "S": float(np.abs(ev).max()),
            "trace": float(np.trace(H)), "adaptive": float(np.linalg.eigvalsh(T[:, None] * H * T[None, :])[-1]),
            "p": f.p}


@functools.cache
def _iterative_measures(arch: str) -> dict:
    """What the iterative tools give for ``arch`` (eigsh, our Lanczos, the adaptive sharpness, Hutchinson, HVPs
    against H); ``{"unconverged": ...}`` when eigsh did not converge."""
    import numpy as np
    import torch

    from biasaudit.validation.sharpness import (
        adaptive_sharpness,
        hutchinson_trace,
        lanczos_eigenvalues,
        top_eigenvalue,
    )

    f, theta, H = _dense_case(arch)
    est = {w: top_eigenvalue(f, theta, w, tol=1e-10) for w in ("LM", "LA", "SA")}
    if not all(e.converged for e in est.values()):
        return {"unconverged": {w: e.residual for w, e in est.items() if not e.converged}}
    ritz = lanczos_eigenvalues(f, theta, f.p, seed=2)
    trace, trace_se = hutchinson_trace(f, theta, 64, seed=3)
    v = torch.as_tensor(np.random.default_rng(3).standard_normal(f.p), dtype=theta.dtype)
    scale = float(np.abs(H).max())
    return {"S_eigsh": abs(est["LM"].value), "lambda_max_eigsh": est["LA"].value,
            "lambda_min_eigsh": est["SA"].value, "lambda_max_lanczos": float(ritz[-1]),
            "lambda_min_lanczos": float(ritz[0]),
            "adaptive_eigsh": adaptive_sharpness(f, theta, xi=DENSE_XI, tol=1e-10).value,
            "hvp_rel_err": {m: float(np.abs(f.hvp(theta, v, m).numpy() - H @ v.numpy()).max() / scale)
                            for m in ("forward-over-reverse", "double-backward")},
            "trace_hutchinson": trace, "trace_se": trace_se}


def _predict_dense(params) -> dict:
    return {arch: _dense_truth(arch) for arch in params["nets"]}


def _eval_dense(params, predicted) -> Observation:
    observed, errors, notes = {}, {}, []
    for arch in params["nets"]:
        got, truth = _iterative_measures(arch), predicted[arch]
        if "unconverged" in got:
            return Observation({}, math.nan, f"{arch}: eigsh did not converge: {got['unconverged']}", decided=False)
        pairs = {"S_eigsh": "S", "lambda_max_eigsh": "lambda_max", "lambda_min_eigsh": "lambda_min",
                 "lambda_max_lanczos": "lambda_max", "lambda_min_lanczos": "lambda_min", "adaptive_eigsh": "adaptive"}
        rel = {k: abs(got[k] - truth[t]) / abs(truth[t]) for k, t in pairs.items()}
        rel.update({f"hvp_{m}": e for m, e in got["hvp_rel_err"].items()})
        # the Hutchinson trace, in units of the tolerance: within HUTCHINSON_SE standard errors of tr H reads <= tol
        rel["trace_hutchinson"] = (abs(got["trace_hutchinson"] - truth["trace"]) / (HUTCHINSON_SE * got["trace_se"])
                                   * DENSE.value)
        worst = max(rel, key=rel.get)
        observed[arch], errors[arch] = got, rel[worst]
        notes.append(f"{arch} (p={truth['p']}): worst {worst} {rel[worst]:.1e}; trace {got['trace_hutchinson']:.4g} "
                     f"+- {got['trace_se']:.2g} against {truth['trace']:.4g}")
    return Observation({"nets": observed, "error_by_net": errors}, max(errors.values()), "; ".join(notes))


COMMON = dict(paper="eos", kind="experiment", samples={"ci": 1, "thorough": 1}, controls=1)


# ---- run units: the audit trains a sweep's pieces on any worker before the claims read them ----------------
def sweep_run_units(config, label: str) -> tuple:
    """The run units of one sweep: its gradient-flow proxy, then one GD run per multiple of η_c (each waits
    for the proxy, which gives η_c). Run ids are the sweep's content key, so claims sharing a sweep share them."""
    from biasaudit.audit.units import RunUnit

    config = dataclasses.replace(config, device="auto")  # the worker's GPU if it has one (not in the key)
    module = "biasaudit.validation.eos_runs"
    gf = RunUnit(f"eos-{config.key()}-gf", f"run {label}: gradient-flow proxy", f"{module}:sweep_gf", (config,))
    etas = tuple(RunUnit(f"eos-{config.key()}-eta-{m!r}", f"run {label}: GD at {m:g} eta_c",
                         f"{module}:sweep_eta_run", (config, m), after=(gf.run_id,)) for m in config.multiples())
    return (gf, *etas)


CLAIMS = (
    Claim(
        id="eos.torch.sharpness_vs_dense",
        source="paper 2, measuring sharpness on networks (HVP, eigsh, Lanczos, Hutchinson and the adaptive sharpness "
               "against a dense Hessian)",
        title="on tiny float64 versions of the FCN, CNN, ResNet and ViT, HVPs, eigsh (max|lambda|, lambda_max, "
              "lambda_min), our Lanczos, the adaptive sharpness and the Hutchinson trace agree with the dense "
              "autograd Hessian",
        hypotheses=(sp.Gt(S, 0, evaluate=False),), statement=sp.Eq(S, sp.Symbol("max_abs_eig_dense_H")),
        predict=_predict_dense, evaluate=_eval_dense, tolerance=DENSE,
        domain=Domain({"nets": Fixed(tuple(DENSE_NETS))}, description="FCN 5-6-6-3 tanh, CNN and ResNet of width 2 "
                      "and a ViT of dim 4 on 6x6 inputs; 40 random inputs, 3 classes, float64, after 50 GD steps"),
        negative_control=lambda params, predicted: {
            arch: {**truth, **{k: truth[k] * 1.01 for k in ("lambda_min", "lambda_max", "S", "adaptive", "trace")}}
            for arch, truth in predicted.items()},
        contract=ExperimentContract(role="cross_check"),
        **COMMON),
)


def _make_figures(outdir, tier):
    from pathlib import Path

    from biasaudit.figures.eos_torch import make_sweep_figures

    return [Path(p) for p in make_sweep_figures(outdir, tier)]


def _figures():
    try:
        from biasaudit.figures import FigureJob
    except ImportError:  # the audit's figure module is optional for this module
        return ()
    return (FigureJob(
        id="eos.torch.sweep", paper="eos",
        title="full-batch GD on an MNIST FCN: sharpness, norms and test error against eta; one EoS run in time",
        claims=("eos.torch.e*",), make=_make_figures,
        caption="Final sharpness vs eta with 2/eta and eta_c = 2/s_GF; l1, l2, nuclear norms vs eta; test error "
                "vs eta with 95 % Wilson intervals; S_t and l1 over time at eta = 2 eta_c.",
        requires=("biasaudit.figures.eos_torch:make_sweep_figures", "torch:Tensor")),)


FIGURES = _figures()
