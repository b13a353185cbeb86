r"""What the ``sam.l2.*`` claim modules share: the independent full-flow reference (DOP853 in log space,
memoised), the exact reduction, the cached regime boundaries and α_c, τ grids for j† sequences. The claims'
statements are written in the symbols and formulas of :mod:`biasaudit.theory.sam_l2` (``SYMBOLS``).

Notation: μ (``mu``), α (``alpha``), ρ (``rho``), c = ρ/√2 (joint) or ρ (per layer), τ rescaled time,
A = ∫dτ/S, S = ‖μ⊙w‖₂, j† = argmax_j β_j (1-based).
"""

from __future__ import annotations

import functools
import types

import numpy as np

from biasaudit.domain import Choice, Integer, Real, Vector

__all__ = []

PAPER = "sam"
EPS = np.finfo(float).eps
FLOW_RTOL = 1e-12  # DOP853 tolerances of the independent full-flow reference
FLOW_ATOL = 1e-14

def _arr(p, key="mu"):
    return np.asarray(p[key], dtype=float)


def _c(p):
    from biasaudit.theory.sam_l2 import c_L

    return c_L(p["rho"], int(p.get("depth", 2)), p.get("normalization", "joint"))


def _base(**extra):
    fields = {"d": Integer(2, 5), "mu": Vector("d", 0.5, 2.0, increasing=(0.25, 1.0)),
              "rho": Real(0.05, 2.0, log=True), "normalization": Choice(("joint", "layer"))}
    fields.update(extra)
    return fields


def _sequence(jd) -> tuple:
    out = [int(jd[0])]
    for x in jd[1:]:
        if int(x) != out[-1]:
            out.append(int(x))
    return tuple(out)


_FLOW_CACHE: dict = {}


def _flow(mu, alpha, c, grid, rtol=FLOW_RTOL):
    """Independent reference: the full flow in log space with DOP853 (numerics.l2_reduction reference).

    Memoised on the exact inputs (a negative control re-evaluates the same parameters with a shifted
    prediction; the observation does not depend on the prediction, so it is computed once)."""
    from biasaudit.numerics.l2_reduction import l2_reduction_trajectory_reference

    mu, alpha, grid = (np.asarray(x, dtype=float) for x in (mu, alpha, grid))
    key = (mu.tobytes(), alpha.tobytes(), float(c), grid.tobytes(), rtol)
    if key not in _FLOW_CACHE:
        if len(_FLOW_CACHE) > 64:
            _FLOW_CACHE.clear()
        _FLOW_CACHE[key] = l2_reduction_trajectory_reference(mu, alpha, c, grid, rtol=rtol, atol=rtol * 1e-2)
    return _FLOW_CACHE[key]


def _flow_outcome(mu, c, alpha, grid):
    """"collapse", "escape" or "none": which certificate the full flow from uniform ``alpha`` hits on ``grid``."""
    ref = _flow(mu, np.full(mu.size, alpha), c, grid)
    return "collapse" if (ref.status == -1).any() else "escape" if (ref.status == 1).any() else "none"


SEQ_RTOL = 1e-10  # j† sequences: an index changes only at crossings, insensitive to 1e-10 relative errors


def _reduction(mu, alpha, c, grid):
    from biasaudit.numerics.l2_reduction import l2_reduction_trajectory

    return l2_reduction_trajectory(mu, alpha, c, grid)


@functools.lru_cache(maxsize=128)
def _alpha_c_cached(mu: tuple, rho: float, normalization: str) -> float:
    from biasaudit.numerics.l2_boundaries import alpha_collapse

    return alpha_collapse(np.array(mu), rho, normalization=normalization)


@functools.lru_cache(maxsize=128)
def _regimes_cached(mu: tuple, rho: float, normalization: str):
    from biasaudit.numerics.l2_boundaries import l2_sam_regime_boundaries

    shown = l2_sam_regime_boundaries(np.array(mu), rho, normalization=normalization).to_json()
    return types.SimpleNamespace(**shown)


def _regimes(p):
    """The regimes at depth 2 as ``biasaudit regimes sam --json`` reports them (:meth:`L2Regimes.to_json`, read as
    attributes), cached: predict and evaluate of one case ask for the same boundaries."""
    return _regimes_cached(tuple(float(m) for m in p["mu"]), float(p["rho"]), p.get("normalization", "joint"))


def _alpha_c(p):
    return _alpha_c_cached(tuple(float(m) for m in p["mu"]), float(p["rho"]), p.get("normalization", "joint"))


def _seq_grid(mu, c, alpha, tau_end=None):
    return _seq_grid_cached(tuple(np.asarray(mu, float)), float(c), tuple(np.asarray(alpha, float)), tau_end)


@functools.lru_cache(maxsize=64)
def _seq_grid_cached(mu, c, alpha, tau_end):
    """τ grid for j† sequences: log-spaced near 0+ (j†(0) is a tie at uniform α), then linear up to a horizon
    past the last switch, τ = c(μ_{d−1}+μ_d)A_∞ (A_∞ estimated by the reduction)."""
    mu, alpha = np.array(mu), np.array(alpha)
    if tau_end is None:  # A_∞ needs no fine step: A' = 1/S decays like e^{−μ_d τ} after the escape
        from biasaudit.numerics.l2_reduction import l2_reduction_trajectory

        long = l2_reduction_trajectory(mu, alpha, c, np.array([0.0, 120.0 / mu[0]]), dt=2e-2 / mu[-1])
        A_end = long.A[-1] if np.isfinite(long.A[-1]) else 0.0
        tau_end = 1.3 * c * (mu[-2] + mu[-1]) * A_end + 10.0 / mu[0]
    return np.concatenate([np.geomspace(1e-6, 1.0, 200) / mu[-1], np.linspace(1.0 / mu[-1], tau_end, 6000)[1:]])


# ========================================================================== regime 2's alpha (shared)
def _r2_alpha(p):
    """α = α_c + u(α_R3 − α_c); a negative control sets ``alpha`` directly (just across a boundary)."""
    if "alpha" in p:
        return p["alpha"]
    r = _regimes(p)
    return r.alpha_collapse + p["u"] * (r.alpha_gd_like - r.alpha_collapse)
