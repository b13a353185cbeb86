r"""How fast l2-SAM trains at L = 2 compared with GD from the same init: the loss plateau of regime 2.

One example (μ, +1), balanced uniform init α, margin z = Σ_j μ_j β_j with β_j = w_j², logistic loss
ℓ(z) = ln(1 + e^{−z}). The **loss-halving time** T_½ is the first τ with ℓ(z(τ)) ≤ ℓ(z(0))/2, in the rescaled
time τ of both flows (dτ = −ℓ'(z̃) dt; GD's flow in τ is w_j' = μ_j w_j, SAM's is w_j' = μ_j w_j (1 − cμ_j/S)).

Exact facts used (derived from the log-linear reduction): ln w_j^SAM(τ) = ln w_j^GD(τ) − cμ_j² A(τ) ≤ ln w_j^GD(τ),
so z_SAM(τ) ≤ z_GD(τ) and T_½^SAM ≥ T_½^GD at every α: in τ, SAM never trains faster than GD. GD's halving time
solves Σ_j μ_j α² e^{2μ_j τ} = z_½ (closed form up to a scalar root). Near α_c the SAM trajectory first sits on the
plateau β ≈ c² e_1 for (1/μ_1) ln(1/δ) + O(1), so T_½^SAM − T_½^GD grows with the plateau law's slope.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.sam.l2._common import PAPER, _alpha_c, _arr, _c, _flow, _regimes
from biasaudit.domain import Choice, Domain, Integer, Real, Vector
from biasaudit.ledger import Claim, Observation, Tolerance, shifted_prediction, two_sided
from biasaudit.theory import sam_l2 as theory

SYM = theory.SYMBOLS  # the symbols the statements are written in

__all__ = ["CLAIMS"]

_delta = SYM["delta"]

# δ = α/α_c − 1 of the delay's slope fit: the plateau law's range (its O(1) terms converge like δ; see
# dynamics.PLATEAU_DELTAS). α_c bisected to float spacing, as there.
DELAY_DELTAS = np.array([1e-8, 1e-9, 1e-10])
DELAY_AC_REL_TOL = 1e-15
# τ grid: step 0.0025/μ_1 up to 60/μ_1 (the plateau law's grid); the crossing is interpolated in ln z.
_GRID_STEPS = 24001
_GRID_SPAN_MU1 = 60.0


def loss_halving_margin(z0: float) -> float:
    """z_½ with ℓ(z_½) = ℓ(z0)/2, ℓ(z) = ln(1 + e^{−z}): z_½ = −ln(e^{ℓ(z0)/2} − 1)."""
    return -math.log(math.expm1(0.5 * math.log1p(math.exp(-z0))))


def gd_halving_time(mu: np.ndarray, alpha: float) -> float:
    """T_½^GD: the root of Σ_j μ_j α² e^{2μ_j τ} = z_½ (GD's flow in τ: w_j = α e^{μ_j τ})."""
    from scipy.optimize import brentq

    z0 = float(np.sum(mu) * alpha**2)
    z_half = loss_halving_margin(z0)
    upper = (math.log(z_half) - math.log(z0)) / (2 * mu[0]) + 1.0  # there every e^{2μ_j τ} ≥ z_½/z0: a bracket
    return brentq(lambda t: math.log(np.sum(mu * np.exp(2 * mu * t))) + 2 * math.log(alpha) - math.log(z_half),
                  0.0, upper, xtol=1e-14, rtol=1e-14)


def sam_halving_time(mu: np.ndarray, alpha: float, c: float, grid: np.ndarray) -> float:
    """T_½^SAM from the independent full flow (DOP853 in log space) on ``grid``: the first crossing of
    ln z = ln z_½, linearly interpolated in ln z; NaN if the loss has not halved by grid[-1]."""
    ref = _flow(mu, np.full(mu.size, alpha), c, grid)
    log_z = np.logaddexp.reduce(np.log(mu)[None, :] + 2 * ref.log_w, axis=1)
    target = math.log(loss_halving_margin(float(np.sum(mu) * alpha**2)))
    over = np.nonzero(log_z >= target)[0]
    if over.size == 0 or over[0] == 0:
        return math.nan
    i = over[0]
    return float(grid[i - 1] + (target - log_z[i - 1]) * (grid[i] - grid[i - 1]) / (log_z[i] - log_z[i - 1]))


def _delay_grid(mu):
    return np.linspace(0.0, _GRID_SPAN_MU1 / mu[0], _GRID_STEPS)


# ========================================================================== the delay's growth law
def _delay_evaluate(p, predicted):
    """Slope of T_½^SAM − T_½^GD against ln(1/δ) over δ = 1e-8, 1e-9, 1e-10, against the predicted 1/μ_1."""
    from biasaudit.numerics.l2_boundaries import alpha_collapse

    mu, c = _arr(p), _c(p)
    ac = alpha_collapse(mu, p["rho"], normalization=p.get("normalization", "joint"), rel_tol=DELAY_AC_REL_TOL)
    grid = _delay_grid(mu)
    delays, ratios = [], []
    for delta in DELAY_DELTAS:
        alpha = ac * (1 + delta)
        t_sam, t_gd = sam_halving_time(mu, alpha, c, grid), gd_halving_time(mu, alpha)
        if not math.isfinite(t_sam):
            return Observation(None, math.nan, f"the SAM loss has not halved by tau = {grid[-1]:.3g}", decided=False)
        delays.append(t_sam - t_gd)
        ratios.append(t_sam / t_gd)
    slope = float(np.polyfit(np.log(1 / DELAY_DELTAS), delays, 1)[0])
    return Observation({"slope": slope, "ratios": tuple(round(r, 3) for r in ratios)}, abs(slope / predicted - 1),
                       f"T_half^SAM − T_half^GD = {np.round(delays, 4).tolist()} at delta = 1e-8, 1e-9, 1e-10 "
                       f"(SAM/GD = {np.round(ratios, 2).tolist()}); slope {slope:.5f}, 1/mu_1 = {predicted:.5f}")


LOSS_HALVING_DELAY = Claim(
    id="sam.l2.loss_halving_delay", paper=PAPER,
    source="derived (C: plateau law, read on the loss; the loss-halving comparison with GD was asked for in the "
           "review recorded in notes/verdict-power.md)",
    title="near alpha_c, SAM's loss-halving time exceeds GD's (same alpha, rescaled time tau) by "
          "(1/mu_1) ln(1/delta) + O(1): the loss plateau is the plateau law's",
    hypotheses=(sp.Gt(_delta, 0, evaluate=False),),
    statement=sp.Eq(SYM["T_half^SAM"] - SYM["T_half^GD"], theory.PLATEAU_EXIT_TIME + sp.O(1)),
    formulas=(theory.PLATEAU_EXIT_SLOPE,),
    predict=lambda p: theory.PLATEAU_EXIT_SLOPE(_arr(p)[0]), evaluate=_delay_evaluate,
    tolerance=Tolerance("delay_slope", 2e-3,
                        "relative error of the fitted slope: the O(1) terms converge like delta (~1e-8 here); the "
                        "crossing is interpolated in ln z on a step 0.0025/mu_1 (error ~1e-6 of tau); measured "
                        "errors <= 6.3e-4 over 24 thorough draws (notes/verdict-power.md)"),
    domain=Domain({"d": Integer(2, 4), "mu": Vector("d", 0.5, 2.0, increasing=(0.3, 1.0)),
                   "rho": Real(0.05, 2.0, log=True), "normalization": Choice(("joint", "layer"))}),
    negative_control=shifted_prediction(0.01),
    samples={"ci": 3, "thorough": 24},
)


# ========================================================== the slowdown, as measured here (notes/verdict-power.md)
SLOWDOWN_RESOLUTION = 0.1  # "equal" read as within 10 %; "within ~1e-6" read as within one decade of 1e-6
SLOWDOWN_FACTOR = 4.0
SLOWDOWN_DELTA = 1e-6


def _halving_ratio(mu, c, alpha):
    return sam_halving_time(mu, alpha, c, _delay_grid(mu)) / gd_halving_time(mu, alpha)


def _slowdown_evaluate(p, predicted):
    """The SAM/GD halving-time ratio at mid regime 2 (u = 1/2) and δ_4, the largest δ = α/α_c − 1 at which the
    ratio reaches 4 (bisection in ln δ, ratio decreasing in δ on the plateau side). Error, in units of the
    statement's resolution: max(|ratio_mid/predicted − 1| / 0.1, |log10(δ_4 / predicted δ_4)|)."""
    mu, c = _arr(p), _c(p)
    r = _regimes(p)
    mid = r.alpha_collapse + 0.5 * (r.alpha_gd_like - r.alpha_collapse)
    ratio_mid = _halving_ratio(mu, c, mid)
    ac = _alpha_c(p)
    top = r.alpha_gd_like / ac - 1  # δ at the regime 3 boundary
    if _halving_ratio(mu, c, ac * (1 + top)) >= SLOWDOWN_FACTOR:
        delta_4 = top
    else:
        lo, hi = math.log(1e-12), math.log(top)  # ratio(lo) >= 4 > ratio(hi)
        for _ in range(12):  # ln δ to 25/2^12: far below the one-decade resolution
            m = 0.5 * (lo + hi)
            lo, hi = (m, hi) if _halving_ratio(mu, c, ac * (1 + math.exp(m))) >= SLOWDOWN_FACTOR else (lo, m)
        delta_4 = math.exp(lo)
    err = max(abs(ratio_mid / predicted["ratio_mid"] - 1) / SLOWDOWN_RESOLUTION,
              abs(math.log10(delta_4 / predicted["delta_4x"])))
    return Observation({"ratio_mid": ratio_mid, "delta_4x": delta_4}, err,
                       f"SAM/GD loss-halving time at mid regime 2: {ratio_mid:.3f}; the ratio reaches 4 up to "
                       f"delta = {delta_4:.3g} (regime 3 starts at delta = {top:.3g})")


def _slowdown_moved(p, predicted, signed):
    """Both predicted numbers moved past the statement's resolution: ratio × (1 ± 0.11), δ_4 × 10^{±1.1}."""
    return p, {"ratio_mid": predicted["ratio_mid"] * (1 + signed), "delta_4x": predicted["delta_4x"] * 10**(10 * signed)}


SLOWDOWN_NEAR_ALPHA_C_ONLY = Claim(
    id="sam.l2.slowdown_near_alpha_c_only", paper=PAPER,
    source="measured here (notes/verdict-power.md; not in the paper): 'SAM's loss-halving time is 4x GD's only "
           "within ~1e-6 of alpha_c, equal at mid regime 2'",
    title="SAM's loss-halving time (tau) is >= 4x GD's only within delta ~1e-6 of alpha_c, and equal to GD's "
          "(within 10 %) at mid regime 2",
    hypotheses=(sp.Gt(_delta, 0, evaluate=False),),
    statement=sp.And(sp.Implies(sp.Eq(SYM["alpha"], (SYM["alpha_c"] + SYM["alpha_R3"]) / 2, evaluate=False),
                                sp.Eq(SYM["T_half^SAM"] / SYM["T_half^GD"], 1, evaluate=False)),
                     sp.Eq(SYM["delta_4"], sp.Pow(10, -6, evaluate=False), evaluate=False)),
    no_closed_form="a measurement stated as two constants (the ratio T_half^SAM/T_half^GD = 1 at mid regime 2, "
                   "alpha = (alpha_c + alpha_R3)/2; delta_4 = 1e-6, the largest delta = alpha/alpha_c - 1 at which "
                   "the ratio reaches 4), not a formula; the check computes both halving times (a root for GD, the integrated flow for SAM)",
    predict=lambda p: {"ratio_mid": 1.0, "delta_4x": SLOWDOWN_DELTA}, evaluate=_slowdown_evaluate,
    tolerance=Tolerance("slowdown_resolution", 1.0,
                        "error in units of the statement's own resolution: 10 % on the mid-regime ratio, one "
                        "decade on delta_4; the ratios are computed to ~1e-6",
                        at_10x="every sampled case misses by a factor > 10 of the resolution (measured: mid-regime "
                               "ratios 1.5-3.6, delta_4 >= 1e-2): 10x forgives none"),
    domain=Domain({"d": Integer(2, 4), "mu": Vector("d", 0.5, 2.0, increasing=(0.3, 1.0)),
                   "rho": Real(0.05, 2.0, log=True), "normalization": Choice(("joint", "layer"))}),
    negative_control=two_sided("ratio_mid and delta_4x (past the statement's resolution)", 0.11, _slowdown_moved,
                               reason="the statement is resolved to 10 % (and one decade): 11 % is the smallest "
                                      "move the check can tell"),
    samples={"ci": 3, "thorough": 24}, controls=1,
    notes="Expected verdict: refuted. In tau, SAM's halving time is >= GD's at every alpha (exact, see the module "
          "docstring); the measured mid-regime ratio is 1.5-3.6 and the ratio stays >= 4 to delta ~1e-2 and "
          "beyond. The failing side, stated with a theory slope, is sam.l2.loss_halving_delay.",
)


CLAIMS = (LOSS_HALVING_DELAY, SLOWDOWN_NEAR_ALPHA_C_ONLY)
