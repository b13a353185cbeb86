r"""What the ``eos.*`` claim modules share: parameter helpers, the toy problems and domains. The symbols of the
statements live in :mod:`biasaudit.theory` (``eos_model``, ``eos_flow``, ``eos_minimizers``, ``eos_risk``).

Parameters are dicts with ``x`` (tuple, > 0), ``y`` (> 0), ``w0`` or ``alpha`` (w0 = alpha·1), and ``c``
(the loss factor, L = c r², default 1/2).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linprog

from biasaudit.domain import Choice, Domain, Fixed, Integer, Real, Vector
from biasaudit.ledger import AT_10X_PRECISION, Observation, OutOfScope, Tolerance
from biasaudit.theory import eos as paper2  # paper 2's theory as it is re-exported for users
from biasaudit.theory import eos_model as model

__all__ = []

EPS = np.finfo(float).eps
TOY = {"x": (1.0, 2.0), "y": 1.0, "w0": (0.1, 0.1), "c": 0.5}
TOY_D3 = {"x": (0.5, 1.0, 2.0), "y": 1.0, "w0": (0.1, 0.1, 0.1), "c": 0.5}

def _arr(params, key="x"):
    return np.asarray(params[key], dtype=float)


def _w0(params):
    if "w0" in params:
        return _arr(params, "w0")
    return np.full(len(params["x"]), float(params["alpha"]))


def _problem(params):
    return model.eos_problem(params["x"], params["y"], _w0(params), loss_factor=params.get("c", 0.5))


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def _rel_scaled(a, b):
    """max |a - b| / max(|b|) (for vectors with zero entries)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))


def _shift(factor):
    def control(params, predicted):
        if isinstance(predicted, dict):
            return {k: (np.asarray(v, float) * factor if isinstance(v, (float, tuple, list, np.ndarray))
                        and not isinstance(v, bool) else v) for k, v in predicted.items()}
        return np.asarray(predicted, float) * factor
    return control


# ---- domains ---------------------------------------------------------------------------------------------
GENERAL = Domain(
    {"d": Integer(2, 5), "x": Vector("d", 0.2, 5.0, log=True), "y": Real(0.2, 5.0, log=True),
     "w0": Vector("d", 0.05, 2.0, log=True), "c": Choice((0.5, 1.0))},
    description="x in (0.2, 5)^d, y in (0.2, 5), w0 in (0.05, 2)^d, loss factor 1/2 or 1",
)
DISTINCT = Domain(
    {"d": Integer(2, 5), "x": Vector("d", 0.2, 2.0, increasing=(0.1, 1.5)), "y": Real(0.2, 5.0, log=True),
     "c": Choice((0.5, 1.0))},
    description="x strictly increasing (gaps >= 0.1), y in (0.2, 5)",
)
OFF_MANIFOLD = Domain(
    {"d": Integer(2, 4), "x": Vector("d", 0.2, 3.0, log=True), "y": Real(0.2, 3.0, log=True),
     "w": Vector("d", -1.5, 1.5), "c": Choice((0.5, 1.0))},
    description="any w (off the manifold), x in (0.2, 3)^d",
)
SMALL_INIT = Domain(
    {"d": Integer(2, 4), "x": Vector("d", 0.3, 3.0, log=True), "y": Real(0.3, 3.0, log=True),
     "w0": Vector("d", 0.01, 0.6, log=True), "c": Choice((0.5, 1.0))},
    where=lambda p: float(np.dot(p["x"], np.square(p["w0"]))) < 0.9 * p["y"],
    description="small init: r0 < -0.1 y",
)
ANY_INIT = Domain(
    {"d": Integer(2, 4), "x": Vector("d", 0.3, 3.0, log=True), "y": Real(0.3, 3.0, log=True),
     "w0": Vector("d", 0.01, 2.0, log=True), "c": Choice((0.5, 1.0))},
    where=lambda p: abs(float(np.dot(p["x"], np.square(p["w0"]))) - p["y"]) > 0.05 * p["y"],
    description="small or large init, |r0| > 0.05 y",
)


def _tie_x(p):
    d, pattern = p["d"], p["pattern"]
    base = np.array(p["base"])[:d]
    x = np.sort(base)
    if pattern == "constant":
        x = np.full(d, x[0])
    elif pattern == "tie_max":
        x[-2] = x[-1]
    elif pattern == "tie_min":
        x[1] = x[0]
    return {"x": tuple(float(v) for v in x)}


TIES = Domain(
    {"d": Integer(2, 5), "base": Vector(5, 0.2, 2.0, increasing=(0.1, 1.0)), "y": Real(0.2, 5.0, log=True),
     "pattern": Choice(("distinct", "constant", "tie_max", "tie_min")), "c": Choice((0.5, 1.0))},
    derive=_tie_x,
    description="x distinct, constant, or with a tie at the max or at the min",
)


# ---- shared by the GD claims (numba kernel) and the risk claims --------------------------------------------
GD_SMALL = Domain(
    {"d": Integer(2, 3), "x": Vector("d", 0.5, 1.2, increasing=(0.4, 1.0)), "y": Real(0.6, 1.5),
     "alpha": Real(0.03, 0.15, log=True), "c": Fixed(0.5)},
    where=lambda p: p["alpha"] ** 2 * sum(p["x"]) < 0.5 * p["y"],
    description="GD sweeps: d = 2, 3, x increasing (gaps >= 0.4), small init w0 = alpha·1",
)


def _regimes(params):
    return paper2.eos_regimes(params["x"], params["y"], _w0(params), loss_factor=params.get("c", 0.5))


MEASURED_SCALE = ("; the tolerance is the power of ten at least 10x the worst error measured over the thorough "
                  "profile")

# ---- the linear programs of the minimizer claims -------------------------------------------------------------
LP_TOL = Tolerance("highs_lp", 1e-8, "HiGHS primal/dual feasibility 1e-7 absolute on O(1) data; 1e-8 relative "
                   "on the optimal value is what it reaches on these small LPs (measured ~1e-15 on random x; on "
                   "near-tied x the optimum can sit on the other vertex, off by the tie's gap: 5e-12 at "
                   "x2 - x1 = 5e-12)", at_10x=AT_10X_PRECISION)
# the LP's optimum at a vertex of the minimizer set: one basis solve (worst 2.1e-16 measured)
LP_VERTEX_TOL = Tolerance("highs_lp_vertex", 1e-14, "HiGHS on the minimum-sharpness LP, whose optimum is one vertex "
                          "(a single basis solve), relative (worst 2.1e-16 measured)" + MEASURED_SCALE,
                          at_10x=AT_10X_PRECISION)


def _lp(cost, x, y, A_ub=None, b_ub=None):
    res = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=x[None, :], b_eq=[y], bounds=(0, None), method="highs")
    return res


# ---- GD tracking 2/eta (eos.gd.tracking_gap, eos.s_gf.large_init) ------------------------------------------
TRACK_BAND = (0.0, 0.035)


def _tracking_predict(params):
    reg = _regimes(params)
    if reg.init_regime != "small":
        raise OutOfScope("large init: see eos.s_gf.large_init")
    return {"eta_c": reg.eta_c, "eta_lo": 1.05 * reg.eta_c, "eta_hi": reg.eta_stable_max}


def _tracking_eval(params, predicted, n=1000):
    from biasaudit.numerics.eos_gd import gd_sweep
    from biasaudit.numerics.eos_sweep import tracking_gap

    eta = np.linspace(predicted["eta_lo"], predicted["eta_hi"], n)
    s = gd_sweep(params["x"], params["y"], _w0(params), eta, loss_factor=params.get("c", 0.5))
    ok = s.converged
    if ok.sum() < 10:
        return Observation(None, math.nan, f"only {ok.sum()} converged runs", decided=False)
    gap = tracking_gap(s, 0.0, float(eta[-1]))  # 1 - eta S/2 of the converged runs: every eta of the grid
    inside = float(np.mean((gap >= TRACK_BAND[0]) & (gap <= TRACK_BAND[1])))
    return Observation({"fraction_in_band": inside, "median_gap": float(np.median(gap)), "max_gap": float(gap.max())},
                       1 - inside,
                       f"{ok.sum()} converged of {n} eta in [{eta[0]:.4g}, {eta[-1]:.4g}]: {inside:.3%} have "
                       f"1 - eta S/2 in [0, 0.035]; median gap {np.median(gap):.4f}, max {gap.max():.4f}")
