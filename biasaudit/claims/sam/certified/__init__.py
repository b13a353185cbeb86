r"""``sam.certified.*``: proven enclosures of the l2-SAM regime boundaries and of the l_inf-SAM thresholds.

Each claim predicts the boundaries in floats from :mod:`biasaudit.theory.sam_l2` / :mod:`biasaudit.theory.sam_linf`
(their formulas, lambdified once) and observes a proven enclosure of each exact value
(:mod:`biasaudit.numerics.certified_boundaries`: ball arithmetic on the root of a theory function, isolated and
proved unique by an interval Newton step), cross-checked by the same root in mpmath's ``iv`` context. The roots are
other theory expressions than the closed forms predicted: α_grow and the sandwich's lower end are the roots in α
of w̃_j = α − cμ_j/‖μ‖ at j = d and j = 1, α_gd_like the root of the tie of the j† scores of j = d − 1 and j = d at
τ = 0. ``alpha_collapse`` has no claim here: it is a bisection over simulated trajectories, and proving it needs a
validated ODE integration (``ALPHA_COLLAPSE_REASON`` in the numerics module says so wherever it is reported).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.claims.enclosure import FLOAT_ROUNDING, enclosure_observation
from biasaudit.claims.sam._common import PAPER, _mu_domain
from biasaudit.domain import Choice, Domain, Integer, Real
from biasaudit.ledger import Claim, Reference, shifted_prediction
from biasaudit.theory import sam_l2 as l2
from biasaudit.theory import sam_linf as linf

__all__ = ["CLAIMS"]

SYM = l2.SYMBOLS

SLACK_REASON = ("the float prediction usually lands inside its enclosure (error exactly 0); the tolerance is the "
                "float rounding of the worst quantity measured anywhere (1.3e-14, the root tau near 0), not a scale "
                "this claim's errors set")


def _l2_statement(params):
    return l2.l2_regime_statement(np.asarray(params["mu"], float), params["rho"], depth=params["depth"],
                                  normalization=params["normalization"])


def _l2_predict(params):
    reg = _l2_statement(params)
    out = {"c": reg.c, "alpha_grow": reg.alpha_grow, "alpha_shrink_all": reg.alpha_shrink_all}
    if reg.alpha_gd_like is not None:
        out["alpha_gd_like"] = reg.alpha_gd_like
    return out


def _l2_evaluate(params, predicted):
    from biasaudit.numerics.certified_boundaries import certify_l2, reference_l2

    reg = _l2_statement(params)
    return enclosure_observation(predicted, certify_l2(reg), reference_l2(reg))


_L2_DOMAIN = {"d": Integer(2, 5), "mu": _mu_domain(lo=0.1, hi=3.0, gaps=(0.05, 3.0)), "rho": Real(1e-3, 10.0, log=True),
              "normalization": Choice(("joint", "layer"))}
DEFAULTS = {"mu": (1.0, 3.0, 4.0), "rho": 0.2, "depth": 2, "normalization": "joint"}  # the CLI's example

L2_DEPTH2 = Claim(
    id="sam.certified.l2_boundaries", paper=PAPER,
    source="derived from paper 1, §C (the l2-SAM regimes at L = 2): each closed form is the root of a theory function",
    title="Proven enclosures of c, α_grow = cμ_d/‖μ‖, cμ_1/‖μ‖ and α_gd_like = c(μ_{d−1}+μ_d)/‖μ‖ at L = 2 contain "
          "the float values",
    hypotheses=(sp.Eq(SYM["L"], 2, evaluate=False),),
    statement=sp.And(l2.ALPHA_GROW.eq(SYM["alpha_grow"]), l2.SANDWICH_LOWER.eq(SYM["alpha"]),
                     l2.ALPHA_GD_LIKE.eq(SYM["alpha_R3"])),
    formulas=(l2.ALPHA_GROW, l2.SANDWICH_LOWER, l2.ALPHA_GD_LIKE),
    predict=_l2_predict, evaluate=_l2_evaluate, tolerance=FLOAT_ROUNDING,
    domain=Domain({**_L2_DOMAIN, "depth": Choice((2,))}, description="L = 2, d = 2..5, rho in [1e-3, 10]"),
    negative_control=shifted_prediction(0.01), slack_reason=SLACK_REASON,
    references=(Reference(DEFAULTS, {"alpha_grow": 0.2 / 2**0.5 * 4 / 26**0.5}, 1e-15,
                          "mu = (1, 3, 4), rho = 0.2: alpha_grow = (0.2/sqrt 2) 4/sqrt 26", origin="derived"),),
    compare_reference=lambda p, e: abs(p["alpha_grow"] / e["alpha_grow"] - 1),
    notes="Interval Newton proves each root unique in its interval; widths ~3e-16 relative at the defaults, about "
          "1 ms for the four (biasaudit bench --cases sam.certified).",
)

L2_DEEP = Claim(
    id="sam.certified.l2_boundaries_deep", paper=PAPER,
    source="derived from paper 1 (l2-SAM at depth L > 2: w̃_j = α − c_L μ_j/‖μ‖)",
    title="Proven enclosures of c_L, α_grow = c_Lμ_d/‖μ‖ and c_Lμ_1/‖μ‖ at depth L = 3..8 contain the float values",
    hypotheses=(sp.Gt(SYM["L"], 2, evaluate=False),),
    statement=sp.And(l2.ALPHA_GROW.eq(SYM["alpha_grow"]), l2.SANDWICH_LOWER.eq(SYM["alpha"])),
    formulas=(l2.ALPHA_GROW, l2.SANDWICH_LOWER),
    predict=_l2_predict, evaluate=_l2_evaluate, tolerance=FLOAT_ROUNDING,
    domain=Domain({**_L2_DOMAIN, "depth": Integer(3, 8)}, description="L = 3..8, d = 2..5, rho in [1e-3, 10]"),
    negative_control=shifted_prediction(0.01), slack_reason=SLACK_REASON,
)


def _linf_predict(params):
    return {"alpha_threshold": float(params["rho"]),
            "unbalanced_threshold": float(linf.UNBALANCED_THRESHOLD(float(params["rho"])))}


def _linf_evaluate(params, predicted):
    from biasaudit.numerics.certified_boundaries import certify_linf, reference_linf

    _, cert = certify_linf(params["mu"], params["rho"], 2)
    return enclosure_observation(predicted, cert, reference_linf(params["mu"], params["rho"], 2))


LINF = Claim(
    id="sam.certified.linf_thresholds", paper=PAPER,
    source="derived from paper 1 (l_inf-SAM at L = 2: G = {α_j > ρ}, unbalanced growth iff u_j(0) + v_j(0) > 2ρ)",
    title="Proven enclosures of the l_inf-SAM thresholds ρ (root of μ(w − ρ)) and 2ρ (root of the initial slope of "
          "u_j + v_j) contain the float values",
    hypotheses=(sp.Eq(linf.L, 2, evaluate=False),),
    statement=sp.And(sp.Eq(linf.alpha, linf.rho, evaluate=False), linf.UNBALANCED_THRESHOLD.eq(linf.s0)),
    formulas=(linf.UNBALANCED_THRESHOLD,),
    predict=_linf_predict, evaluate=_linf_evaluate, tolerance=FLOAT_ROUNDING,
    domain=Domain({"d": Integer(1, 4), "mu": _mu_domain(), "rho": Real(1e-6, 1e3, log=True)},
                  description="d = 1..4, rho in [1e-6, 1e3]"),
    negative_control=shifted_prediction(0.01), slack_reason=SLACK_REASON,
)

CLAIMS = (L2_DEPTH2, L2_DEEP, LINF)
