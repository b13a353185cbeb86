r"""``eos.hessian.*``: the Hessian of the shared-weight diagonal model, H = 2c(4ggᵀ + 2r diag(x)) with
g = x ⊙ β^{1/2} and r the residual, and its rank-one form 8c ggᵀ on the solution manifold P (r = 0).

Predictions from :mod:`biasaudit.theory.eos_model`; observations from finite-difference Hessians and from sympy's
exact derivatives of the loss.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from biasaudit.claims.eos._common import GENERAL, OFF_MANIFOLD, TOY, _arr
from biasaudit.ledger import AT_10X_PRECISION, Claim, Observation, Reference, Tolerance, shifted_prediction
from biasaudit.theory import eos_model as model
from biasaudit.theory.eos_model import (HESSIAN, SHARPNESS, H_jk, S_sym, beta_i, c_sym, d_sym, delta_jk, g_j, i_sym,
                                        j_sym, k_sym, r_sym, w_i, w_j, x_i, x_j, y_sym)

__all__ = ["CLAIMS"]


def _fd_hessian(x, y, w, c, h):
    """Central second differences of the loss (independent of the closed-form Hessian)."""
    d = w.size
    f = lambda v: float(model.loss(x, y, v, c))  # noqa: E731
    H = np.empty((d, d))
    for i in range(d):
        for j in range(i, d):
            ei, ej = np.eye(d)[i] * h, np.eye(d)[j] * h
            H[i, j] = H[j, i] = (f(w + ei + ej) - f(w + ei - ej) - f(w - ei + ej) + f(w - ei - ej)) / (4 * h * h)
    return H


FD_TOL = Tolerance(
    "central_difference", 1e-6,
    "4-point second differences of a quartic at h = 1e-4·scale: truncation h²/6·|L''''| ~ 1e-8·scale, "
    "round-off eps·|L|/h² ~ 1e-8; 1e-6 relative to max(1, |λ|max) leaves a margin of 100",
    at_10x=AT_10X_PRECISION,
)
# on the minimizer manifold (r = 0) the same differences err far less: worst 5.0e-12 measured
FD_ON_MANIFOLD_TOL = Tolerance(
    "central_difference_on_manifold", 1e-10,
    "the differences of central_difference at a minimizer (r = 0), relative to max(1, |λ|max) (worst 5.0e-12 "
    "measured); the tolerance is the power of ten at least 10x the worst error measured over the thorough profile",
    at_10x=AT_10X_PRECISION,
)


def _hessian_eval(params, predicted):
    x, y, c = _arr(params), params["y"], params.get("c", 0.5)
    w = _arr(params, "w") if "w" in params else _on_manifold_w(params)
    h = 1e-4 * max(1.0, float(np.max(np.abs(w))))
    # A quartic's central second difference is exact up to a*h^2: one Richardson step removes it.
    lam = np.linalg.eigvalsh((4 * _fd_hessian(x, y, w, c, h / 2) - _fd_hessian(x, y, w, c, h)) / 3)
    scale = max(1.0, float(np.max(np.abs(lam))))
    err = float(np.max(np.abs(np.sort(np.asarray(predicted, float)) - lam)) / scale)
    return Observation(lam.tolist(), err, f"finite-difference eigenvalues {np.round(lam, 6).tolist()}")


def _on_manifold_w(params):
    x, y = _arr(params), params["y"]
    return model.project_to_manifold(x, y, _arr(params, "w0"))


HESSIAN_FORMULA = Claim(
    id="eos.hessian.formula", paper="eos", source="paper 2, theory model (Hessian)",
    title="Hessian of L = c r² is 2c(4ggᵀ + 2r diag(x)), g = x⊙w, on and off the manifold",
    hypotheses=(sp.Gt(x_i, 0, evaluate=False), sp.Gt(c_sym, 0, evaluate=False),
                sp.Eq(r_sym, sp.Sum(x_i * w_i**2, (i_sym, 1, d_sym)) - y_sym), sp.Eq(g_j, x_j * w_j),
                sp.Eq(delta_jk, sp.KroneckerDelta(j_sym, k_sym))),
    statement=HESSIAN.eq(H_jk), formulas=(HESSIAN,),
    predict=lambda p: np.linalg.eigvalsh(model.hessian(_arr(p), p["y"], _arr(p, "w"), p.get("c", 0.5))),
    evaluate=_hessian_eval, tolerance=FD_TOL, domain=OFF_MANIFOLD, negative_control=shifted_prediction(0.01),
    notes="H_jk is the (j, k) entry of the Hessian of L = c r² in w; the symbolic tests compare it, at d = 2 and 3, "
          "with sympy's Hessian of the loss.",
)


def _rank1_predict(params):
    x, c = _arr(params), params.get("c", 0.5)
    beta = _on_manifold_w(params) ** 2
    return np.concatenate([np.zeros(x.size - 1), [float(model.on_manifold_sharpness(x, beta, c))]])


HESSIAN_RANK1 = Claim(
    id="eos.hessian.on_manifold_rank1", paper="eos", source="paper 2, theory model (Hessian on M)",
    title="On M the Hessian has rank 1 with S = 8cΣx_i²β_i (4Σx_i²β_i at c = 1/2)",
    hypotheses=(sp.Eq(sp.Sum(x_i * beta_i, (i_sym, 1, d_sym)), y_sym),),
    statement=sp.Eq(S_sym, sp.Sum(SHARPNESS.expr, (i_sym, 1, d_sym))), formulas=(SHARPNESS,),
    predict=_rank1_predict, evaluate=_hessian_eval, tolerance=FD_ON_MANIFOLD_TOL, domain=GENERAL,
    negative_control=shifted_prediction(0.01),
    references=(Reference({**TOY, "w0": (math.sqrt(1 / 3), math.sqrt(1 / 3))}, [0.0, 4 * (1 / 3 + 4 / 3)], 1e-12,
                          "β = (1/3, 1/3) on the toy manifold: S = 4(1/3 + 4/3)", origin="derived"),),
)


# ---- sympy's exact derivatives of L = c r² -------------------------------------------------------------------
G_j = sp.Symbol("G_j", real=True)  # the j-th entry of the gradient of L in w


@functools.lru_cache(maxsize=8)
def _exact_derivatives(d: int):
    """Numeric functions of (x, y, c, w) at dimension ``d``: sympy's gradient and Hessian of :func:`loss_expr`
    (the observation), and the theory's formulas written out at d, :func:`hessian_expr` and
    :func:`on_manifold_sharpness_expr` (of (x, c, β))."""
    x, w, b = model.xs(d), model.ws(d), model.betas(d)
    loss = model.loss_expr(d)
    args = (*x, y_sym, c_sym, *w)
    exact_grad = sp.lambdify(args, sp.Matrix([sp.diff(loss, wi) for wi in w]), "numpy")
    exact_hess = sp.lambdify(args, sp.hessian(loss, w), "numpy")
    formula_hess = sp.lambdify(args, model.hessian_expr(d), "numpy")
    formula_sharp = sp.lambdify((*x, c_sym, *b), model.on_manifold_sharpness_expr(d), "numpy")
    return exact_grad, exact_hess, formula_hess, formula_sharp


def _on_manifold(x, y, w):
    """The radial projection of w onto M (of the all-ones vector when w = 0)."""
    return model.project_to_manifold(x, y, w if np.any(w) else np.ones_like(w))


def _symbolic_predict(params):
    """∇L = 4c r (x⊙w) (:func:`gradient`), the Hessian (:func:`hessian`, the formula over every (j, k)) and, at the
    radial projection of w onto M, the on-manifold sharpness S(β) (:func:`on_manifold_sharpness`)."""
    x, y, c, w = _arr(params), params["y"], params["c"], _arr(params, "w")
    beta_m = _on_manifold(x, y, w) ** 2
    return np.concatenate([model.gradient(x, y, w, c), np.ravel(model.hessian(x, y, w, c)),
                           [float(model.on_manifold_sharpness(x, beta_m, c))]])


def _symbolic_eval(params, predicted):
    """The prediction, and the same formulas written out at d (:func:`hessian_expr`,
    :func:`on_manifold_sharpness_expr`), against sympy's exact derivatives of the loss."""
    x, y, c, w = _arr(params), params["y"], params["c"], _arr(params, "w")
    d = x.size
    exact_grad, exact_hess, formula_hess, formula_sharp = _exact_derivatives(d)
    w_m = _on_manifold(x, y, w)
    observed = np.concatenate([np.ravel(exact_grad(*x, y, c, *w)), np.ravel(exact_hess(*x, y, c, *w)),
                               [float(np.linalg.eigvalsh(exact_hess(*x, y, c, *w_m))[-1])]])
    written_out = np.concatenate([np.asarray(predicted, float)[:d], np.ravel(formula_hess(*x, y, c, *w)),
                                  [float(formula_sharp(*x, c, *(w_m**2)))]])
    pred = np.asarray(predicted, float)
    parts = {"gradient": slice(0, d), "Hessian": slice(d, d + d * d), "S on M": slice(d + d * d, None)}

    def gaps(values):
        return {name: float(np.max(np.abs(values[view] - observed[view]))
                            / max(1.0, float(np.max(np.abs(observed[view]))))) for name, view in parts.items()}

    errors, errors_d = gaps(pred), gaps(written_out)
    return Observation(observed.tolist(), max(*errors.values(), *errors_d.values()),
                       "sympy's exact derivatives of L = c r² vs the formulas, max |difference| / max(1, |exact|): "
                       + ", ".join(f"{name} {e:.1e}" for name, e in errors.items())
                       + "; the formulas written out at d (hessian_expr, on_manifold_sharpness_expr): "
                       + ", ".join(f"{name} {e:.1e}" for name, e in errors_d.items() if name != "gradient"))


SYMBOLIC = Claim(
    id="eos.hessian.symbolic_derivatives", paper="eos", source="paper 2, theory model (gradient and Hessian)",
    title="∇L = 4c r g and H = 2c(4ggᵀ + 2r diag(x)) are sympy's exact derivatives of L = c r², and on M the top "
          "eigenvalue of the exact Hessian is S = 8cΣx_i²β_i",
    hypotheses=(sp.Gt(x_i, 0, evaluate=False), sp.Gt(c_sym, 0, evaluate=False),
                sp.Eq(r_sym, sp.Sum(x_i * w_i**2, (i_sym, 1, d_sym)) - y_sym), sp.Eq(g_j, x_j * w_j),
                sp.Eq(delta_jk, sp.KroneckerDelta(j_sym, k_sym))),
    statement=sp.And(sp.Eq(G_j, 4 * c_sym * r_sym * g_j), HESSIAN.eq(H_jk),
                     sp.Eq(S_sym, sp.Sum(SHARPNESS.expr, (i_sym, 1, d_sym)))),
    formulas=(HESSIAN, SHARPNESS),
    predict=_symbolic_predict, evaluate=_symbolic_eval,
    tolerance=Tolerance("float64_evaluation", 1e-14, "two float64 evaluations of the same polynomial in different "
                        "orders (the formulas vs sympy's expanded derivatives) and one eigenvalue solve, relative to "
                        "max(1, |exact|) (worst 7.6e-16 measured); the tolerance is the power of ten at least 10x the "
                        "worst error measured over the thorough profile", at_10x=AT_10X_PRECISION),
    domain=OFF_MANIFOLD, negative_control=shifted_prediction(0.01),
    notes="The observation differentiates the loss L = c r² (theory.eos_model.loss_expr) with sympy at d = 2..4 and "
          "evaluates the exact gradient and Hessian at the sampled point; the top eigenvalue of the exact Hessian "
          "is read at the radial projection of w onto M. The same formulas written out at d (hessian_expr, "
          "on_manifold_sharpness_expr) are compared with it too, and count in the error.",
)


CLAIMS = (HESSIAN_FORMULA, HESSIAN_RANK1, SYMBOLIC)
