"""``sam.torch.diag_net_matches_numerics``: the torch diagonal network (autograd and the torch SAM optimizer,
float64) follows the numba kernels of :mod:`biasaudit.numerics.sam_discrete` step for step: GD, l_inf-SAM and
l2-SAM (joint, per-layer and unnormalized), depth 2 and 3. An implementation cross-check (the experiment
contract's role ``cross_check``), not an effect claim: the ladder's positive control trains this network.
"""

from __future__ import annotations

import math

import sympy as sp

from biasaudit.contract import ExperimentContract
from biasaudit.domain import Choice, Domain, Fixed
from biasaudit.ledger import Claim, Observation, Tolerance

__all__ = ["CLAIMS", "DIAG_CASES", "DIAG_CLAIM"]

rho, alpha, eta = sp.symbols("rho alpha eta", real=True)  # real, not positive: Gt(rho, 0) must stay a relation
k = sp.Symbol("k", integer=True, nonnegative=True)


# ------------------------------------------------------------------------------ diagonal network vs numba
DIAG_CASES = tuple((alg, norm, L) for alg in ("gd", "linf", "l2") for norm in ("joint", "layer", "none")
                   for L in (2, 3) if not (alg == "gd" and norm != "joint") and not (alg == "linf" and norm == "none"))


def _diag_inputs(params):
    import numpy as np

    d = len(params["mu"])
    X = np.array([params["mu"], [1.5, 0.5, 1.0][:d]], dtype=float)
    y = np.array([1.0, 1.0])
    return X, y


def _diag_predict(params, rho_scale: float = 1.0):
    """The torch trajectories (records of W) for every (algorithm, normalization, depth) case."""
    import numpy as np

    from biasaudit.validation.diag_net import torch_sam_trajectory

    X, y = _diag_inputs(params)
    out = {}
    for alg, norm, L in DIAG_CASES:
        W0 = np.tile(np.asarray(params["alpha"], float), (L, 1))
        eta_ = params["eta"] * (rho_scale if alg == "gd" else 1.0)
        tr = torch_sam_trajectory(W0, X, y, algorithm=alg, rho=params["rho"] * rho_scale, eta=eta_,
                                  steps=params["steps"], normalization=norm, record_every=params["record_every"],
                                  reduction=params["reduction"])
        out[f"{alg}/{norm}/L{L}"] = tr.W.tolist()
    return out


def _diag_evaluate(params, predicted):
    import numpy as np

    try:
        from biasaudit.numerics.sam_discrete import run_sam
    except ImportError as exc:
        return Observation(None, math.nan, f"biasaudit.numerics.sam_discrete.run_sam is not available ({exc})", decided=False)
    X, y = _diag_inputs(params)
    errors = {}
    for alg, norm, L in DIAG_CASES:
        W0 = np.tile(np.asarray(params["alpha"], float), (L, 1))
        tr = run_sam(W0, X, y, algorithm=alg, rho=params["rho"], eta=params["eta"], steps=params["steps"],
                     normalization=norm, record_every=params["record_every"])
        torch_W = np.asarray(predicted[f"{alg}/{norm}/L{L}"])
        numba_W = np.asarray(tr.W)
        if numba_W.shape != torch_W.shape:
            errors[f"{alg}/{norm}/L{L}"] = math.inf
            continue
        scale = max(1.0, float(np.max(np.abs(numba_W))))
        errors[f"{alg}/{norm}/L{L}"] = float(np.max(np.abs(torch_W - numba_W)) / scale)
    worst = max(errors, key=errors.get)
    return Observation(errors, errors[worst],
                       f"max |W_torch - W_numba| / max(1, |W|) over {len(errors)} cases; worst {worst}")


DIAG_CLAIM = Claim(
    id="sam.torch.diag_net_matches_numerics",
    paper="sam",
    source="§Setting (algorithms), discrete steps; torch autograd vs numerics/sam_discrete",
    title="torch diagonal network (autograd + torch SAM optimizer) follows the numba GD/SAM trajectories",
    hypotheses=(sp.Gt(eta, 0, evaluate=False), sp.Ge(rho, 0, evaluate=False), sp.Gt(alpha, 0, evaluate=False)),
    statement=sp.Eq(sp.Function("W_torch")(k), sp.Function("W_numba")(k)),
    predict=_diag_predict,
    evaluate=_diag_evaluate,
    tolerance=Tolerance("float64_trajectory", 1e-10,
                        "the same float64 operations in a different order: ~1e-16 per step, amplified at most "
                        "mildly over 200 steps away from sign(0) chatter (alpha > rho keeps gradients nonzero)"),
    domain=Domain({"mu": Fixed((1.0, 2.0, 3.0)), "alpha": Fixed((0.3, 0.25, 0.2)), "rho": Choice((0.05, 0.1)),
                   "eta": Fixed(0.05), "steps": Fixed(200), "record_every": Fixed(50), "reduction": Fixed("mean")}),
    negative_control=lambda params, predicted: _diag_predict(params, rho_scale=1.01),
    kind="experiment",
    contract=ExperimentContract(role="cross_check"),
    samples={"ci": 1, "thorough": 2},
    controls=1,
    notes="rho (eta for GD) moved by 1% must break the 1e-10 agreement",
)


CLAIMS = (DIAG_CLAIM,)
