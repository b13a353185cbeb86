"""Gradient descent on a quadratic is stable exactly below eta = 2 / lambda_max: a claim from outside the
two papers, audited by biasaudit's machinery.

Setting: f(x) = x^T A x / 2 with A symmetric positive definite (eigenvalues lambda_1 <= ... <= lambda_max),
GD x_{k+1} = x_k - eta A x_k = (I - eta A) x_k. Classical fact: the iterates stay bounded from every x_0
iff |1 - eta lambda_i| <= 1 for all i, i.e. the critical step size is

    eta_c = 2 / lambda_max.

The four parts of a biasaudit claim:
1. symbolic statement: ``Eq(eta_c, 2 / lambda_max)`` (sympy), whose right-hand side is a
   :class:`~biasaudit.theory.formula.Formula` that :func:`_predict` evaluates (what the reader sees is what runs);
2. independent numerics: GD itself, run for K steps on a randomly rotated A (so the eigenvalues are not
   handed to the check), with eta_c found by bisection on "the iterate grew tenfold";
3. property test: sampled cases (dimension, spectrum, rotation) from the domain;
4. negative control: the prediction moved by 1 % either way must be refuted.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.domain import Domain, Integer, Real
from biasaudit.ledger import Claim, Observation, Tolerance
from biasaudit.theory.formula import Formula

__all__ = ["CLAIMS"]

eta_c, lam_max = sp.symbols("eta_c lambda_max", positive=True)
ETA_C = Formula("eta_c", 2 / lam_max, (lam_max,), "math")

STEPS = 2**15  # K: GD steps per trial, computed by repeated squaring of I - eta A
GROWTH = 10.0  # "diverged": |x_K| > GROWTH |x_0|


def _matrix(params) -> np.ndarray:
    rng = np.random.default_rng(params["seed"])
    d = params["d"]
    spectrum = np.sort(np.exp(rng.uniform(math.log(params["lambda_min"]), math.log(params["lambda_hi"]), d)))
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return (q * spectrum) @ q.T


def _predict(params) -> float:
    """eta_c = 2 / lambda_max, the eigenvalue taken from the same matrix the numerics iterate on."""
    return ETA_C(float(np.linalg.eigvalsh(_matrix(params))[-1]))


def _diverges(A: np.ndarray, eta: float, x0: np.ndarray) -> bool:
    M = np.eye(len(A)) - eta * A
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging run overflows: that is the answer
        xK = np.linalg.matrix_power(M, STEPS) @ x0  # K GD steps, by repeated squaring
        return not np.all(np.isfinite(xK)) or np.linalg.norm(xK) > GROWTH * np.linalg.norm(x0)


def _measured_eta_c(A: np.ndarray, x0: np.ndarray) -> float:
    """Bisection for the smallest eta at which GD diverges, bracketed without the eigenvalues:
    2/||A||_F <= eta_c <= 2 sqrt(d)/||A||_F."""
    fro = np.linalg.norm(A)
    lo, hi = 2 / fro, 2.02 * math.sqrt(len(A)) / fro
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _diverges(A, mid, x0) else (mid, hi)
    return 0.5 * (lo + hi)


def _evaluate(params, predicted) -> Observation:
    A = _matrix(params)
    x0 = np.random.default_rng(params["seed"] + 1).standard_normal(len(A))
    measured = _measured_eta_c(A, x0)
    error = abs(measured - predicted) / predicted
    return Observation({"measured_eta_c": measured}, error,
                       f"GD diverges from eta = {measured:.8g}; predicted 2/lambda_max = {predicted:.8g}")


RESOLUTION = Tolerance(
    "divergence_resolution", 1e-3,
    "just above eta_c the top mode grows like (1 + 2 delta)^K; a tenfold growth in K = 2^15 steps needs "
    "delta >= ln(10 sqrt(d)/|<x0, v>|) / (2K) ~ 1e-4, so the bisection locates eta_c to ~1e-4 relative; "
    "a 1 % error is 10x outside")

GD_STABILITY = Claim(
    id="example.gd_quadratic.stability_threshold",
    paper="example",
    source="derived: classical (linear stability of GD on a quadratic); biasaudit plugin example",
    title="GD on f(x) = x^T A x / 2 is stable exactly for eta < 2 / lambda_max(A)",
    hypotheses=(sp.Gt(lam_max, 0, evaluate=False),),
    statement=sp.Eq(eta_c, ETA_C.expr, evaluate=False),
    formulas=(ETA_C,),
    predict=_predict,
    evaluate=_evaluate,
    tolerance=RESOLUTION,
    domain=Domain({"d": Integer(1, 6), "lambda_min": Real(0.05, 1.0, log=True), "lambda_hi": Real(2.0, 50.0, log=True),
                   "seed": Integer(0, 10_000)}),
    negative_control=lambda params, predicted: predicted * 1.01,
    kind="theory",
    samples={"ci": 6, "thorough": 40},
    notes="negative control: eta_c moved by 1 %",
)

CLAIMS = (GD_STABILITY,)
