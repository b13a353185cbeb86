r"""``eos.central_flow.kernel_matches_reference``: the numba central flow (:func:`central_flow`, a DOPRI5 kernel with
the edge event and a projection back onto S = 2/η) against its independent reference (:func:`central_flow_ivp`:
scipy's DOP853 on the theory's lambdified velocity, phase by phase): the endpoint β, whether the flow met the edge,
and its sharpness there, at η = 1.1, 1.3 and 1.6 η_c.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.claims.crosscheck import crosscheck_claim, precision_tolerance
from biasaudit.claims.eos._common import _w0
from biasaudit.claims.eos.central_flow.endpoint import CF_DOMAIN
from biasaudit.theory.eos_model import eta_sym

__all__ = ["CLAIMS"]

_ETA_OVER_ETA_C = (1.1, 1.3, 1.6)  # above eta_c, where the flow meets the edge and follows it


def _eta_c(p) -> float:
    from biasaudit.theory.eos_flow import eos_regimes

    return float(eos_regimes(np.asarray(p["x"], float), p["y"], _w0(p), loss_factor=p["c"]).eta_c)


def _kernel(p):
    from biasaudit.numerics.eos_central_flow import central_flow

    rows = []
    for q in _ETA_OVER_ETA_C:
        flow = central_flow(p["x"], p["y"], _w0(p), q * _eta_c(p), loss_factor=p["c"])
        rows.append(np.concatenate([flow.beta, [float(flow.met_edge), flow.sharpness]]))
    return np.concatenate(rows)


def _reference(p):
    from biasaudit.numerics.eos_central_flow_ivp import central_flow_ivp
    from biasaudit.theory.eos_central_flow import top_eigenpair

    rows = []
    for q in _ETA_OVER_ETA_C:
        ref = central_flow_ivp(p["x"], p["y"], _w0(p), q * _eta_c(p), loss_factor=p["c"])
        sharpness = top_eigenpair(np.asarray(p["x"], float), p["y"], ref.w, p["c"])[0]
        rows.append(np.concatenate([ref.beta, [float(ref.met_edge), sharpness]]))
    return np.concatenate(rows)


KERNEL_VS_IVP = crosscheck_claim(
    id="eos.central_flow.kernel_matches_reference", paper="eos",
    title="implementation cross-check: the numba central flow's endpoint beta, whether it met the edge and its final "
          "sharpness equal scipy's DOP853 reference on the theory's velocity (at 1.1, 1.3 and 1.6 eta_c)",
    kernel="numerics.eos_central_flow.central_flow", reference="numerics.eos_central_flow_ivp.central_flow_ivp",
    run_kernel=_kernel, run_reference=_reference, floor=1.0,
    tolerance=precision_tolerance("central_flow_kernel_vs_ivp", 1e-7, "worst gap 7.2e-9 measured over 12 thorough "
                                  "cases (two adaptive integrators, each locating the edge to its own tolerance)"),
    domain=CF_DOMAIN, hypotheses=(sp.Gt(eta_sym, 0, evaluate=False),), samples={"ci": 4, "thorough": 12},
    notes="Every eos.central_flow claim reads the numba kernel; this claim vouches that it integrates the theory's "
          "central velocity (the lambdified gradients, multiplier and top eigenpair) as an independent solver does.",
)

CLAIMS = (KERNEL_VS_IVP,)
