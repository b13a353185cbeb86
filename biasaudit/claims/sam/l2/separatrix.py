r"""α_c, the separatrix between collapse and escape at L = 2: the certificates (``sam.l2.certificates``), the
sandwich c μ₁/‖μ‖ ≤ α_c ≤ c μ_d/‖μ‖ (``sam.l2.sandwich``), the bisection against the reference table (derived here,
see notes/sam-l2.md) and a 30-digit mpmath bracket (``sam.l2.alpha_collapse``), and its scale invariance
(``sam.l2.alpha_collapse_scale_invariance``).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.sam.l2._common import PAPER, _alpha_c, _arr, _base, _c, _flow_outcome
from biasaudit.domain import Choice, Domain, Integer, Real, Vector
from biasaudit.ledger import (AT_10X_EXACT, AT_10X_PRECISION, Claim, Control, Observation, Reference, Tolerance,
                              shifted_prediction)
from biasaudit.theory import sam_l2 as theory

SYM = theory.SYMBOLS  # the symbols the statements are written in

_L, _alpha_c_s, _c_s, _mu_j = SYM["L"], SYM["alpha_c"], SYM["c"], SYM["mu_j"]

__all__ = ["CLAIMS"]

REFERENCE_TABLE = (  # μ, α_c/c: the reference table (derived here, see notes/sam-l2.md)
    ((1.0, 2.0), 0.73726),
    ((1.0, 1.5, 2.0, 2.5, 3.0), 0.47179),
    ((1.0, 2.0, 3.0, 4.0, 5.0), 0.49111),
    (tuple(float(k) for k in range(1, 11)), 0.35578),
    ((1.0, 1.01), 0.70712),
)


# ========================================================================== certificates
def _cert_state(p):
    """The initial state of a case. ``case`` "collapse": S = margin · cμ₁ < cμ₁; "escape": one coordinate at
    (2 − margin)c > c. The negative controls' edge states sit on the wrong side of a certificate moved by
    ``edge`` (relative): "collapse_edge" has S = (1 + edge/2)cμ₁ along e₁ (which escapes), "escape_edge" has
    max_j w_j = (1 − edge/2)c along e_d (which shrinks)."""
    mu, c = _arr(p), _c(p)
    rng = np.random.default_rng(int(p["seed"]))
    w = rng.uniform(0.1, 1.0, mu.size)
    if p["case"] == "collapse":
        w *= p["margin"] * c * mu[0] / np.linalg.norm(mu * w)  # S = margin · cμ₁ < cμ₁
    elif p["case"] == "escape":
        w *= c / np.max(w) * 0.9
        w[int(p["seed"]) % mu.size] = c * (2.0 - p["margin"])  # one coordinate just above c
    else:
        edge = p["edge"]
        w *= 1e-3 * c / np.max(w)
        j = 0 if p["case"] == "collapse_edge" else mu.size - 1
        w[j] = c * (1 + edge / 2) if j == 0 else c * (1 - edge / 2)
        if j == 0:  # S = (1 + edge/2) c μ₁ exactly
            rest = np.linalg.norm(np.delete(mu * w, 0))
            w[0] = math.sqrt(max(((1 + edge / 2) * c * mu[0]) ** 2 - rest**2, 0.0)) / mu[0]
    return w


def _cert_evaluate(p, predicted):
    from scipy.integrate import solve_ivp

    from biasaudit.theory.sam_l2 import rescaled_field_l2

    mu, c = _arr(p), _c(p)
    w0 = _cert_state(p)

    def rhs(t, w):
        return rescaled_field_l2(np.maximum(w, 0.0), mu, c)

    def tiny(t, w):
        return np.linalg.norm(mu * w) - 1e-9 * c * mu[0]

    tiny.terminal = True
    T = 8.0 / mu[0]
    sol = solve_ivp(rhs, (0, T), w0, method="DOP853", rtol=1e-11, atol=1e-16 * c, events=tiny,
                    t_eval=np.linspace(0, T, 400))
    S = np.linalg.norm(mu[:, None] * sol.y, axis=0)
    wmax = np.max(sol.y, axis=0)
    outcome, threshold = predicted["outcome"], predicted["threshold"]
    if outcome == "collapse":  # S must never increase, and β → 0 in finite τ (event hit)
        rise = float(np.max(np.diff(S), initial=0.0)) / (c * mu[0])
        err = max(rise, 0.0) + (0.0 if sol.status == 1 else 1.0)
        return Observation("collapse" if sol.status == 1 else "no collapse", err,
                           f"S(0)/(c mu_1) = {S[0] / (c * mu[0]):.6f} (certificate: < {threshold:.4g}); max rise "
                           f"of S/(c mu_1) = {rise:.1e}; hit S = 1e-9 c mu_1 at tau = {sol.t[-1]:.3g}")
    drop = float(np.max(threshold * c - wmax, initial=0.0)) / c  # max_j w_j must stay above the threshold, and grow
    err = max(drop, 0.0) + (0.0 if wmax[-1] > 2 * c else 1.0)
    return Observation("escape" if err == 0 else "no escape", err,
                       f"min over tau of max_j w_j/c = {np.min(wmax) / c:.6f} (certificate: > {threshold:.4g}); "
                       f"end {wmax[-1] / c:.3g}")


CERTIFICATES = Claim(
    id="sam.l2.certificates", paper=PAPER, source="C (regime 1 certificates)",
    title="S < c mu_1 ⇒ every coordinate shrinks forever (beta → 0); max_j w_j > c ⇒ escape",
    hypotheses=(sp.Eq(_L, 2),),
    statement=sp.And(sp.Implies(theory.FORMULAS["certificate_collapse"], SYM["collapse"]),
                     sp.Implies(theory.FORMULAS["certificate_escape"], SYM["escape"])),
    no_closed_form="the prediction is the certificate the sampled initial state satisfies (collapse or escape) and "
                   "its threshold 1 (units of c mu_1 or c), not a formula; the check integrates the flow from there",
    predict=lambda p: {"outcome": p["case"], "threshold": 1.0}, evaluate=_cert_evaluate,
    tolerance=Tolerance("monotone_exact", 1e-10,
                        "S nonincreasing / max w ≥ c hold exactly; DOP853 at rtol 1e-11 adds ~1e-11 jitter",
                        at_10x=AT_10X_PRECISION),
    domain=Domain(_base(case=Choice(("collapse", "escape")), margin=Real(0.5, 0.999), seed=Integer(0, 10**6))),
    slack_reason=("the error is a violation clipped at 0 (a rise of S, a drop of max w below the threshold) plus 1 for "
                  "a wrong outcome: exactly 0 whenever the certificate holds; 1e-10 absorbs the integrator's jitter at "
                  "a tangency"),
    negative_control=(
        Control("+", 0.01, "collapse certificate S < c mu_1", lambda p, pred: (
            {**p, "case": "collapse_edge", "edge": 0.01}, {"outcome": "collapse", "threshold": 1.01}),
            reason="a sufficient condition: only the bold side (a larger threshold) can be wrong"),
        Control("-", 0.01, "escape certificate max_j w_j > c", lambda p, pred: (
            {**p, "case": "escape_edge", "edge": 0.01}, {"outcome": "escape", "threshold": 0.99}),
            reason="a sufficient condition: only the bold side (a smaller threshold) can be wrong"),
    ),
    notes="Both certificates are sufficient conditions, so each can be wrong on one side only: the controls move "
          "each threshold 1 % to its bold side and start just past it (S = 1.005 c mu_1 along e_1 escapes; "
          "max_j w_j = 0.995 c along e_d shrinks).",
)


# ========================================================================== sandwich
def _sandwich_predict(p):
    mu = _arr(p)
    n = float(np.linalg.norm(mu))
    return (float(theory.SANDWICH_LOWER(1.0, mu[0], n)), float(theory.ALPHA_GROW(1.0, mu[-1], n)))  # units of c (c = 1)


def _sandwich_evaluate(p, predicted):
    """The independent full flow (DOP853, no reduction, no bisection) at each bound: collapse at the lower,
    escape at the upper."""
    mu, c = _arr(p), _c(p)
    lo, hi = predicted
    grid = np.linspace(0.0, 60.0 / mu[0], 600)
    out = [_flow_outcome(mu, c, a * c, grid) for a in (lo, hi)]
    if "none" in out:
        return Observation(tuple(out), math.nan, f"full flow undecided by tau = {grid[-1]:.3g}: {out}",
                           decided=False)
    err = float(out[0] != "collapse") + float(out[1] != "escape")
    return Observation(tuple(out), err, f"full flow at alpha/c = {lo:.6f} and {hi:.6f}: {out}")


def _bound_past_alpha_c(index: int, factor: float):
    """A bound moved 1 % past the true α_c (from the bisection): the wrong sandwich the check must refute."""
    def make(p, pred):
        wrong = list(pred)
        wrong[index] = _alpha_c(p) / _c(p) * factor
        return p, tuple(wrong)
    return make


SANDWICH = Claim(
    id="sam.l2.sandwich", paper=PAPER, source="C (regime 1 sandwich)",
    title="c mu_1/‖mu‖ ≤ alpha_c ≤ c mu_d/‖mu‖",
    hypotheses=(sp.Eq(_L, 2),),
    statement=sp.And(sp.Le(theory.SANDWICH_LOWER.expr, _alpha_c_s, evaluate=False),
                     sp.Le(_alpha_c_s, theory.ALPHA_GROW.expr, evaluate=False)),
    formulas=(theory.SANDWICH_LOWER, theory.ALPHA_GROW),
    predict=_sandwich_predict, evaluate=_sandwich_evaluate,
    tolerance=Tolerance("exact_classification", 0.0, "collapse/escape at the bounds is a yes/no fact",
                        at_10x=AT_10X_EXACT),
    domain=Domain(_base()),
    negative_control=(
        Control("+", 0.01, "lower bound", _bound_past_alpha_c(0, 1.01),
                reason="a bound, not a boundary: the control puts it 1 % past alpha_c, the first wrong value"),
        Control("-", 0.01, "upper bound", _bound_past_alpha_c(1, 0.99),
                reason="a bound, not a boundary: the control puts it 1 % past alpha_c, the first wrong value"),
    ),
    notes="Each bound is an inequality, so each can be wrong on one side only; the controls move it 1 % past "
          "alpha_c. The check never reads alpha_c itself (that would be the bisection checking its own interval).",
    references=(Reference({"d": 2, "mu": (1.0, 1.01), "rho": 1.0, "normalization": "joint"},
                          (0.70358, 0.71062), 1e-5, "the lower bound at mu=(1,1.01) is 0.70358", origin="derived"),),
    compare_reference=lambda pred, exp: abs(pred[0] - exp[0]) / exp[0],
    samples={"ci": 4, "thorough": 32},
)


# ========================================================================== alpha_collapse
def _ac_evaluate(p, predicted):
    """mpmath (40 digits, GBS) certifies a bracket around the float64 α_c/c: inside ±5e-10 ⇒ error ≤ 5e-10;
    outside ±2e-9 ⇒ error ≥ 2e-9 (a certified lower bound); in between ⇒ undecided."""
    from biasaudit.numerics.sam_mpmath import mp_classify

    mu = _arr(p)
    a = float(predicted)

    def inside(r):
        return mp_classify(mu, a * (1 - r), 1.0, dps=30, tol=1e-18).code == -1 and \
            mp_classify(mu, a * (1 + r), 1.0, dps=30, tol=1e-18).code == 1

    if inside(5e-10):
        return Observation("certified within 5e-10", 5e-10, "mpmath (30 digits): alpha(1−5e−10) collapses, "
                                                              "alpha(1+5e−10) escapes")
    if not inside(2e-9):
        return Observation("outside ±2e-9", 2e-9, "mpmath: the true alpha_c is outside alpha(1 ± 2e−9)")
    return Observation("between 5e-10 and 2e-9", math.nan, "mpmath bracket inconclusive", decided=False)


_ALPHA_C_NO_CLOSED_FORM = ("alpha_c has no closed form: a bisection inside the sandwich, classifying each trajectory "
                           "of the exact reduction by the two certificates (numerics.l2_boundaries)")

ALPHA_COLLAPSE = Claim(
    id="sam.l2.alpha_collapse", paper=PAPER, source="C (reference values of alpha_c/c)",
    title="alpha_c (certificate-driven bisection, float64) matches the reference table (derived here, see "
          "notes/sam-l2.md) and a 30-digit mpmath bracket",
    hypotheses=(sp.Eq(_L, 2), sp.Gt(SYM["rho"], 0, evaluate=False)),
    statement=sp.Eq(_alpha_c_s / _c_s, SYM["bisect"](theory.FORMULAS["certificate_collapse"],
                                                     theory.FORMULAS["certificate_escape"])),
    no_closed_form=_ALPHA_C_NO_CLOSED_FORM,
    predict=lambda p: _alpha_c(p) / _c(p), evaluate=_ac_evaluate,
    tolerance=Tolerance("float64_vs_mpmath", 1e-9, "1e-9 relative agreement between float64 and mpmath (30 digits): "
                                                   "mpmath certifies the float64 "
                        "alpha_c within 5e-10 (error 5e-10) or outside 2e-9 (error 2e-9)"),
    domain=Domain({"d": Integer(2, 3), "mu": Vector("d", 0.5, 2.0, increasing=(0.25, 1.0)),
                   "rho": Real(0.05, 2.0, log=True), "normalization": Choice(("joint", "layer"))}),
    negative_control=shifted_prediction(0.01),
    references=tuple(Reference({"d": len(mu), "mu": mu, "rho": 1.0, "normalization": "joint"}, val, 5e-6 / val,
                               f"alpha_c/c = {val} at mu = {mu} (5 digits: half a unit of the last digit)",
                               origin="derived")
                     for mu, val in REFERENCE_TABLE),
    samples={"ci": 1, "thorough": 8}, controls=1,
)


# ========================================================================== scale invariance
SCALE_RESOLUTION = 1e-6  # the invariance is checked at α/c = prediction × (1 ± 1e−6) on the rescaled problem


def _scale_evaluate(p, predicted):
    """Independent of the bisection: the full flow (DOP853) of the *rescaled* problem (sμ, ρ') started at
    α = c'·prediction·(1 ∓ 1e−6) must collapse below and escape above."""
    mu = _arr(p) * p["scale"]
    rho2 = p["rho"] * p["rho_factor"]
    c2 = _c({**p, "rho": rho2})
    grid = np.linspace(0.0, 80.0 / mu[0], 400)
    out = [_flow_outcome(mu, c2, float(predicted) * factor * c2, grid)
           for factor in (1 - SCALE_RESOLUTION, 1 + SCALE_RESOLUTION)]
    if "none" in out:
        return Observation(tuple(out), math.nan, f"full flow undecided by tau = {grid[-1]:.3g}", decided=False)
    err = float(out[0] != "collapse") + float(out[1] != "escape")
    return Observation(tuple(out), err, f"full flow of (s mu, rho') = ({p['scale']:.3g} mu, {rho2:.3g}) at "
                                        f"alpha/c' = prediction x (1 -/+ 1e-6): {out}")


SCALE_INVARIANCE = Claim(
    id="sam.l2.alpha_collapse_scale_invariance", paper=PAPER, source="C (regime boundaries: only alpha/c matters)",
    title="alpha_c/c depends only on the direction of mu: invariant to mu → s mu and to rho",
    hypotheses=(sp.Eq(_L, 2), sp.Gt(SYM["s"], 0, evaluate=False)),
    statement=sp.Eq(SYM["alpha_c(mu, c)"](SYM["s"] * _mu_j, _c_s) / _c_s, SYM["alpha_c(mu, c)"](_mu_j, 1)),
    no_closed_form=_ALPHA_C_NO_CLOSED_FORM,
    predict=lambda p: _alpha_c(p) / _c(p), evaluate=_scale_evaluate,
    tolerance=Tolerance("exact_classification", 0.0, "collapse below and escape above alpha_c(1 -/+ 1e-6) of the "
                                                      "rescaled problem is a yes/no fact of its full flow",
                        at_10x=AT_10X_EXACT),
    domain=Domain(_base(scale=Real(0.1, 10.0, log=True), rho_factor=Real(0.1, 10.0, log=True))),
    negative_control=shifted_prediction(0.01),
    samples={"ci": 4, "thorough": 32},
)


CLAIMS = (
    CERTIFICATES, SANDWICH, ALPHA_COLLAPSE, SCALE_INVARIANCE,
)
