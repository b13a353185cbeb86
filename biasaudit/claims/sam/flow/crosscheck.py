r"""``sam.flow.integrator_matches_reference``: the numba fixed-step RK4 of the reduced balanced flow
(:func:`integrate_reduced_flow`) against its plain reference (:func:`integrate_reduced_flow_reference`), which
integrates the sympy-lambdified field of :mod:`biasaudit.theory.sam_fields` with the same steps and stop rules.
"""

from __future__ import annotations

import numpy as np

from biasaudit.claims.crosscheck import crosscheck_claim, precision_tolerance
from biasaudit.claims.sam._common import PAPER, _mu_domain
from biasaudit.domain import Choice, Domain, Integer, Real, Vector

__all__ = ["CLAIMS"]

_DT, _N_OUT = 0.01, 11  # RK4 step and outputs compared (tau_end <= 1: at most 100 steps of the slow reference)


def _args(p):
    return (p["algorithm"], np.asarray(p["mu"], dtype=float), np.asarray(p["alpha"], dtype=float), p["rho"],
            int(p["depth"]), p["tau_end"])


def _flow_record(res):
    return np.concatenate([res.w.ravel(), [len(res.tau), res.tau_stop]])


def _kernel(p):
    from biasaudit.numerics.flows import integrate_reduced_flow

    return _flow_record(integrate_reduced_flow(*_args(p), normalization=p["normalization"], method="rk4", dt=_DT,
                                               n_out=_N_OUT))


def _reference(p):
    from biasaudit.numerics.flows import integrate_reduced_flow_reference

    with np.errstate(over="ignore", invalid="ignore"):  # the stage that crosses the blow-up bound overflows
        return _flow_record(integrate_reduced_flow_reference(*_args(p), normalization=p["normalization"], dt=_DT,
                                                             n_out=_N_OUT))


FLOW_KERNEL = crosscheck_claim(
    id="sam.flow.integrator_matches_reference", paper=PAPER,
    title="implementation cross-check: the numba RK4 of the reduced balanced flow equals the plain RK4 of the "
          "theory's sympy field (GD, l_inf-SAM and l2-SAM, joint and per-layer, L = 1..4)",
    kernel="numerics.flows.integrate_reduced_flow", reference="numerics.flows.integrate_reduced_flow_reference",
    run_kernel=_kernel, run_reference=_reference, floor=0.1,
    tolerance=precision_tolerance("rk4_kernel_vs_sympy_field", 1e-11, "worst gap 2.9e-13 measured (L = 4 "
                                  "near its blow-up, where the flow amplifies roundoff)"),
    domain=Domain({"algorithm": Choice(("gd", "linf", "l2")), "normalization": Choice(("joint", "layer")),
                   "depth": Integer(1, 4), "d": Integer(1, 4), "mu": _mu_domain(), "alpha": Vector("d", 0.05, 1.0),
                   "rho": Real(0.02, 0.5), "tau_end": Real(0.2, 1.0)}),
    notes="The flow claims (sam.gd.*, sam.linf.*, sam.l2.*) read the numba integrator; this claim vouches that its "
          "field is the theory's field (the reference evaluates theory.sam_fields.reduced_field) and that its "
          "steps, snapping at 0 and stop rules are the reference's.",
)

CLAIMS = (FLOW_KERNEL,)
