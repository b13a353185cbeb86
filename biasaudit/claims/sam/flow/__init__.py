r"""``sam.flow.*``: exact facts linking one discrete step to the rescaled flow: one discrete step is
explicit Euler on the rescaled field (``sam.flow.euler_step``), and the rescaled field is the SAM flow on the
linear loss (``sam.flow.linear_loss``).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.claims.sam._common import _ALG_DOMAIN, EPS, PAPER, _arr, _mu_domain, _sigma_neg
from biasaudit.claims.sam.flow import conventions, crosscheck
from biasaudit.domain import Domain, Integer, Real, Vector
from biasaudit.ledger import AT_10X_PRECISION, Claim, Observation, Tolerance, two_sided
from biasaudit.theory import sam_fields as theory

SYM = theory.SYMBOLS  # the symbols the statements are written in

_a, _w, _eta = SYM["alpha"], SYM["w"], SYM["eta"]

__all__ = ["CLAIMS"]


def _perturbed_balanced(algorithm, normalization, w, mu, rho, L):
    if algorithm == "gd":
        return w.copy()
    if algorithm == "linf":
        return w - rho * np.sign(w ** (L - 1))
    from biasaudit.theory.sam_fields import effective_radius

    c = effective_radius(rho, L, normalization)
    T = float(np.linalg.norm(mu * w ** (L - 1)))
    return w - c * mu * w ** (L - 1) / T


def _euler_predict(p, h_factor=1.0):
    from biasaudit.theory.sam_fields import reduced_field

    mu, w, L, rho = _arr(p, "mu"), _arr(p, "alpha"), int(p["depth"]), float(p["rho"])
    F = reduced_field(p["algorithm"], L, p["normalization"])(w, mu, rho)
    zt = float(np.sum(mu * _perturbed_balanced(p["algorithm"], p["normalization"], w, mu, rho, L) ** L))
    h = p["eta"] * _sigma_neg(zt) * h_factor
    return tuple(theory.EULER_STEP(w, h, F)) + (h,)


def _euler_evaluate(p, predicted):
    from biasaudit.numerics.sam_discrete import run_sam

    mu, w, L = _arr(p, "mu"), _arr(p, "alpha"), int(p["depth"])
    tr = run_sam(np.tile(w, (L, 1)), mu, [1.0], algorithm=p["algorithm"], rho=p["rho"], eta=p["eta"], steps=1,
                 normalization=p["normalization"])
    pred = np.asarray(predicted[:-1])
    scale = np.maximum(np.abs(pred), np.abs(w))
    err_w = float(np.max(np.abs(tr.W[1] - pred[None, :]) / scale[None, :]))
    err_h = abs(tr.tau[1] - predicted[-1]) / predicted[-1]
    return Observation(tuple(tr.W[1, 0]) + (float(tr.tau[1]),), max(err_w, err_h),
                       f"one discrete step (every layer) vs w + h F(w): rel. error {err_w:.1e}; h vs "
                       f"eta sigma(-z~): {err_h:.1e}")


FLOW_EULER = Claim(
    id="sam.flow.euler_step", paper=PAPER, source="Setting (flows, exact fact 2)",
    title="one discrete SAM step on the logistic loss is explicit Euler on the rescaled field with "
          "h_k = eta sigma(-z~_k)",
    hypotheses=(sp.Gt(_a, 0, evaluate=False), sp.Gt(_eta, 0, evaluate=False),
                sp.Eq(SYM["h"], _eta / (1 + sp.exp(SYM["z~"])))),
    statement=theory.EULER_STEP.eq(SYM["w_{k+1}"]),
    formulas=(theory.EULER_STEP,),
    predict=_euler_predict, evaluate=_euler_evaluate,
    tolerance=Tolerance("float64_roundoff", 256 * EPS, "the same arithmetic in another order: a few ulp (worst "
                        "4.7 eps measured); 256 eps is the power of two at least 10x the worst error measured over "
                        "the thorough profile",
                        at_10x=AT_10X_PRECISION),
    domain=Domain({**_ALG_DOMAIN, "depth": Integer(1, 5), "d": Integer(1, 4), "mu": _mu_domain(),
                   "alpha": Vector("d", 0.1, 1.5), "rho": Real(0.02, 0.5), "eta": Real(0.01, 1.0)}),
    negative_control=two_sided("step h", 0.01, lambda p, pred, s: (p, _euler_predict(p, h_factor=1.0 + s))),
    notes="negative control: h moved by 1 %",
)


def _linear_loss_predict(p):
    from biasaudit.theory.sam_fields import reduced_field

    return tuple(reduced_field(p["algorithm"], int(p["depth"]), p["normalization"])(_arr(p, "alpha"), _arr(p, "mu"),
                                                                                   float(p["rho"])))


def _complex_step_grad(f, x):
    """Gradient of a real-analytic f by the complex step (exact to roundoff: no subtraction)."""
    g = np.empty_like(x)
    flat = x.ravel()
    for i in range(flat.size):
        z = flat.astype(complex)
        z[i] += 1e-30j
        g.flat[i] = f(z.reshape(x.shape)).imag / 1e-30
    return g


def _linear_loss_evaluate(p, predicted):
    mu, a, L, rho = _arr(p, "mu"), _arr(p, "alpha"), int(p["depth"]), float(p["rho"])
    W = np.tile(a, (L, 1))

    def lin_loss(Wm):
        return -np.sum(np.prod(Wm, axis=0) * mu)

    g = _complex_step_grad(lin_loss, W)
    if p["algorithm"] == "gd":
        eps = 0 * g
    elif p["algorithm"] == "linf":
        eps = rho * np.sign(g)
    elif p["normalization"] == "joint":
        eps = rho * g / np.linalg.norm(g)
    else:
        eps = rho * g / np.linalg.norm(g, axis=1, keepdims=True)
    field = -_complex_step_grad(lin_loss, W + eps)  # SAM flow on the linear loss, every layer
    pred = np.asarray(predicted)
    scale = mu * np.maximum(np.abs(a), rho) ** (L - 1)  # the field's size (it vanishes at w = rho for l_inf)
    err = float(np.max(np.abs(field - pred[None, :]) / scale[None, :]))
    return Observation(tuple(field[0]), err, f"complex-step SAM flow on -<beta, mu> (all {L} layers) vs the "
                                             f"reduced field: max error {err:.1e} (relative to mu max(w, rho)^(L-1))")


def _linear_loss_control(p, predicted, signed_size):
    mu, a, L, rho = _arr(p, "mu"), _arr(p, "alpha"), int(p["depth"]), float(p["rho"])
    return p, tuple(np.asarray(predicted) + signed_size * mu * np.maximum(np.abs(a), rho) ** (L - 1))


FLOW_LINEAR = Claim(
    id="sam.flow.linear_loss", paper=PAPER, source="Setting (flows, exact fact 1)",
    title="the rescaled reduced field is the SAM flow on the linear loss -<beta, mu> (balanced states)",
    hypotheses=(sp.Gt(_a, 0, evaluate=False),),
    statement=sp.Eq(SYM["F(w)"], -sp.Derivative(SYM["L_lin"](_w + SYM["epsilon"]), _w), evaluate=False),
    no_closed_form="one closed form per case, not one for the claim: the prediction is the reduced field of the "
                   "sampled algorithm (GD, l_inf-SAM, l2-SAM joint or per layer) at the sampled depth "
                   "(theory.sam_fields.reduced_field, a formula lambdified per algorithm, depth and normalisation); "
                   "the statement is the identity it is checked against (complex-step derivatives of the linear loss)",
    predict=_linear_loss_predict, evaluate=_linear_loss_evaluate,
    tolerance=Tolerance("float64_roundoff", 32 * EPS, "complex-step derivatives are exact to roundoff (worst 1.6 eps "
                        "measured); 32 eps is the power of two at least 10x the worst error measured over the "
                        "thorough profile",
                        at_10x=AT_10X_PRECISION),
    domain=Domain({**_ALG_DOMAIN, "depth": Integer(1, 5), "d": Integer(1, 4), "mu": _mu_domain(),
                   "alpha": Vector("d", 0.1, 1.5), "rho": Real(0.02, 0.5)}),
    negative_control=two_sided("field / (mu max(w, rho)^(L-1))", 0.01, _linear_loss_control),
    notes="negative control: the field moved by ±1 % of its scale mu max(w, rho)^(L-1)",
)


CLAIMS = (FLOW_EULER, FLOW_LINEAR) + conventions.CLAIMS + crosscheck.CLAIMS
