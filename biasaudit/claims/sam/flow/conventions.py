r"""``sam.flow.paper_normalization``: the toolkit's l2-SAM convention is the paper's joint normalisation.

Paper 1 normalises l2-SAM's perturbation over all L·d parameters at once (ε = ρ ∇L/‖∇L‖, c_L = ρ/√L). Every other
claim passes the normalisation; the CLI, the API and the figures call with the default, which this claim reads.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.claims.sam._common import PAPER, _mu_domain
from biasaudit.domain import Domain, Integer, Real, Vector
from biasaudit.ledger import AT_10X_EXACT, Claim, Observation, Tolerance, shifted_prediction
from biasaudit.theory import sam_l2

__all__ = ["CLAIMS"]

L2_SYM = sam_l2.SYMBOLS  # c = c_L, the radius of the reduced l2 field


def _field_values(p, *normalization):
    from biasaudit.theory.sam_fields import reduced_field
    from biasaudit.theory.sam_l2 import c_L

    field = reduced_field("l2", int(p["depth"]), *normalization)
    values = field(np.asarray(p["w"], dtype=float), np.asarray(p["mu"], dtype=float), p["rho"])
    return tuple(np.ravel(values)) + (c_L(p["rho"], int(p["depth"]), *normalization),)


def _predict(p):
    return _field_values(p, "joint")


def _evaluate(p, predicted):
    seen = np.asarray(_field_values(p), dtype=float)
    pred = np.asarray(predicted, dtype=float)
    error = float(np.max(np.abs(seen - pred) / np.maximum(np.abs(pred), 1e-12)))
    return Observation(tuple(seen), error, f"the l2 field and c_L with the default normalisation vs the joint one: "
                                           f"max relative gap {error:.3g}")


PAPER_NORMALIZATION = Claim(
    id="sam.flow.paper_normalization", paper=PAPER, source="Setting (l2-SAM normalised over all parameters)",
    title="The toolkit's convention is the paper's: called without a normalisation, l2-SAM's reduced field and "
          "c_L are those of the joint normalisation (c_L = ρ/√L)",
    hypotheses=(),
    statement=sp.Eq(L2_SYM["c"], L2_SYM["rho"] / sp.sqrt(L2_SYM["L"])),
    no_closed_form="a convention: the prediction is the joint-normalised field and c_L, evaluated by the same "
                   "code asked for the joint normalisation by name",
    predict=_predict, evaluate=_evaluate,
    tolerance=Tolerance("same_computation", 0.0, "the default and the named joint normalisation run the same "
                        "arithmetic: any gap is another normalisation", at_10x=AT_10X_EXACT),
    domain=Domain({"depth": Integer(2, 4), "d": Integer(2, 4), "mu": _mu_domain(), "w": Vector("d", 0.1, 1.0),
                   "rho": Real(0.02, 0.5, log=True)}),
    negative_control=shifted_prediction(0.01),
    notes="A per-layer default (c_L = rho) would change every l2-SAM number the CLI and the figures print.",
)

CLAIMS = (PAPER_NORMALIZATION,)
