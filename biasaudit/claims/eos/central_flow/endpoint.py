r"""GD's endpoint above η_c against the central flow's (:mod:`biasaudit.numerics.eos_central_flow`):
``eos.central_flow.gd_endpoint``, ``eos.central_flow.norm_curve``, and where the flow's endpoint at the same η fails
as a prediction, ``eos.central_flow.gd_endpoint_near_edge`` and ``eos.central_flow.gd_endpoint_large_eta``.

The prediction is the flow's endpoint β_CF(η) (the end of an integration: no closed form); the observation is
GD's endpoint from the numba GD kernel (:func:`biasaudit.numerics.eos_gd.gd_sweep`), independent of the flow.

At the same η the relative distance :math:`\|\beta_{GD} - \beta_{CF}(\eta)\|_2/\|\beta_{CF}(\eta)\|_2` grows with
q = η/η_c (60 draws of :data:`CF_DOMAIN`, notes/eos.md): median 1.2 % at q = 1.025, 2.7 % at 1.1, 4.1 % at 1.2,
5.0 % at 1.3 and 5.4 % at 1.5, with tails up to 15 % on [1.15, 1.35] and 38 % next to η_c; above q ≈ 1.4 GD's
endpoint jumps by 10–250 % between neighbouring η (chaotic transients). Most of that distance is a shift *along* the
flow's curve of endpoints: GD lands next to β_CF(η′) at an η′ a little above η (400 draws × 8 η on [1.15, 1.35]:
η′/η_c − q has median 0.08 (q − 1)), and its distance from the curve {β_CF(η′)} is median 0.14–0.25 %, 99th
percentile 1.9–4.6 %, worst 5.7 %, growing with q − 1 (99th percentile 0.10–0.13 (q − 1), worst 0.13–0.24 (q − 1)).
Hence ``gd_endpoint`` states the distance from the curve with the bound :data:`CURVE_SLOPE` (q − 1), and the same-η
distance within :data:`ENDPOINT_TOL` = 16 % is stated where it fails, next to η_c and at large η, with
counterexamples.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.eos._common import _w0
from biasaudit.domain import Choice, Domain, Integer, Real, Vector
from biasaudit.ledger import Claim, Observation, Reference, Tolerance, two_sided
from biasaudit.theory import eos_flow as flow
from biasaudit.theory.eos_central_flow import beta_cf
from biasaudit.theory.eos_flow import err_rel, eta_c_sym, r_0
from biasaudit.theory.eos_minimizers import stable_eta_max
from biasaudit.theory.eos_model import eos_problem, eta_sym

__all__ = ["CLAIMS", "CF_DOMAIN", "ENDPOINT_TOL", "BAND", "NEAR_EDGE", "LARGE_ETA"]

BAND = (1.15, 1.35)  # eta / eta_c where the flow predicts GD's endpoint to ENDPOINT_TOL
NEAR_EDGE = (1.01, 1.15)  # the failing side next to eta_c
LARGE_ETA = (1.5, 2.0)  # the failing side at large eta
N_ETA = 8  # step sizes per draw (evenly spaced in the band)
ENDPOINT_TOL = 0.16  # the same-eta distance of the failing sides (near the edge, at large eta)
CURVE_GRID = np.linspace(1.0, 1.6, 121)[1:]  # eta'/eta_c of the flow's curve of endpoints (GD lands <= 1.45 eta_c)
CURVE_SLOPE = 0.3  # GD's distance from the flow's curve of endpoints <= CURVE_SLOPE * (eta/eta_c - 1) (see below)
CURVE_SLOPE_REASON = (
    "GD's distance from the flow's curve of endpoints grows with eta - eta_c: over 400 draws of the domain (8 eta each "
    "on the band) its 99th percentile is 0.10-0.13 (eta/eta_c - 1) at every eta of the band and the worst draw "
    "0.13-0.24 (eta/eta_c - 1) (median 0.007-0.009 (eta/eta_c - 1)); the bound takes that growth with the slope 0.3, "
    "2.3 times the 99th percentile's and 1.25 times the worst draw's")
CONTROL_MULTIPLE = 2.0  # controls scale the predicted beta by 1 ± 2·ENDPOINT_TOL: any GD endpoint within the
# tolerance of beta_CF is then at least ENDPOINT_TOL from the moved prediction (triangle inequality)
MIN_CONVERGED = 0.5  # fewer converged GD runs than this fraction of the band: undecided


def _cf_where(p) -> bool:
    """Small init (r0 < −y/2) and a stable minimum at 2η_c (η_c < 1/(8cyx_min)): the flow converges on (η_c, 2η_c]."""
    x, w0, c = np.asarray(p["x"], float), np.asarray(p["w0"], float), p["c"]
    if float(x @ (w0 * w0)) >= 0.5 * p["y"]:
        return False
    eta_c = 2.0 / flow.s_gf(eos_problem(x, p["y"], w0, loss_factor=c))
    return 2.0 * eta_c <= stable_eta_max(x, p["y"], c)


CF_DOMAIN = Domain(
    {"d": Integer(2, 5), "x": Vector("d", 0.3, 3.0, log=True), "y": Real(0.3, 3.0, log=True),
     "w0": Vector("d", 0.02, 0.3, log=True), "c": Choice((0.5, 1.0))},
    where=_cf_where,
    description="d = 2..5, x in (0.3, 3)^d, y in (0.3, 3), w0 in (0.02, 0.3)^d with r0 < -y/2, loss factor 1/2 or "
                "1, and 2 eta_c <= 1/(4cy x_min) (a minimum with S = 2/eta exists on the whole range)",
)

PILOT = {"x": (0.7, 1.3, 2.1), "y": 1.5, "w0": (0.05, 0.05, 0.05), "c": 0.5}
# counterexamples drawn from CF_DOMAIN (seed 7, parameters rounded; notes/eos.md): GD's endpoint 38 % from the
# flow's at 1.01 eta_c, and 62 % at 1.79 eta_c
NEAR_EDGE_CASE = {"x": (0.84, 0.96, 1.07, 2.97), "y": 1.86, "w0": (0.108, 0.291, 0.036, 0.031), "c": 0.5}
# a thorough check's draw (seed 5): GD's norm smallest at eta_c, the flow's at 1.055 eta_c
ARGMIN_CASE = {"x": (0.396829486694936, 0.7423381817331955, 0.42315595544838974, 0.3065790672354882,
                     0.44415861059871004), "y": 1.480478970585239,
               "w0": (0.1497188982449881, 0.054220327938373745, 0.1114352722808567, 0.02349515881842673,
                      0.0512371342621562), "c": 1.0}
LARGE_ETA_CASE = {"x": (2.37, 1.79, 0.5, 0.6, 2.24), "y": 0.3, "w0": (0.185, 0.173, 0.071, 0.045, 0.043), "c": 1.0}


def _eta_c(params) -> float:
    return 2.0 / flow.s_gf(eos_problem(params["x"], params["y"], _w0(params), loss_factor=params.get("c", 0.5)))


def _predict_band(band, curve: bool = False):
    def predict(params):
        from biasaudit.numerics.eos_central_flow import central_flow_curve

        eta_c = _eta_c(params)
        q = np.linspace(band[0], band[1], N_ETA)
        c = params.get("c", 0.5)
        runs = central_flow_curve(params["x"], params["y"], _w0(params), q * eta_c, loss_factor=c)
        out = {"eta_c": eta_c, "q": q, "beta": np.array([r.beta for r in runs]), "status": [r.status for r in runs]}
        if curve:
            flows = central_flow_curve(params["x"], params["y"], _w0(params), CURVE_GRID * eta_c, loss_factor=c)
            ok = np.array([f.status == "converged" for f in flows])
            out.update(curve_q=CURVE_GRID[ok], curve_beta=np.array([f.beta for f in flows])[ok])
        return out
    return predict


def curve_distance(point: np.ndarray, curve: np.ndarray) -> tuple[float, float]:
    """(the l2 distance from ``point`` to the polyline through the rows of ``curve``, the position of the nearest
    point as a fractional row index)."""
    a, b = curve[:-1], curve[1:]
    ab = b - a
    t = np.clip(((point - a) * ab).sum(axis=1) / np.maximum((ab * ab).sum(axis=1), 1e-300), 0.0, 1.0)
    gaps = np.linalg.norm(a + t[:, None] * ab - point, axis=1)
    i = int(np.argmin(gaps))
    return float(gaps[i]), i + float(t[i])


def _endpoint_errors(params, predicted):
    """(q, relative error per η, GD converged) for the η of the prediction."""
    from biasaudit.numerics.eos_gd import gd_sweep

    q = np.asarray(predicted["q"], float)
    s = gd_sweep(params["x"], params["y"], _w0(params), q * predicted["eta_c"], loss_factor=params.get("c", 0.5))
    beta = np.asarray(predicted["beta"], float)
    err = np.linalg.norm(s.beta - beta, axis=1) / np.linalg.norm(beta, axis=1)
    ok = s.converged & np.array([st == "converged" for st in predicted["status"]])
    return q, np.where(ok, err, np.nan), ok


def _endpoint_eval(params, predicted):
    q, err, ok = _endpoint_errors(params, predicted)
    if ok.mean() < MIN_CONVERGED:
        return Observation(err.tolist(), math.nan, f"GD converged at {int(ok.sum())} of {ok.size} eta only",
                           decided=False)
    worst = int(np.nanargmax(err))
    return Observation({"q": q.tolist(), "error": err.tolist()}, float(err[worst]),
                       f"||beta_GD - beta_CF||/||beta_CF|| at eta/eta_c = {q[worst]:.4g}: {err[worst]:.3%} (worst of "
                       f"{int(ok.sum())} converged eta in [{q[0]:.3g}, {q[-1]:.3g}] eta_c)")


def _curve_eval(params, predicted):
    """GD's distance from the flow's curve of endpoints, relative to ‖β_CF(η)‖, worst over the band's η; the
    detail adds where on the curve GD lands (η′/η_c − η/η_c) and the distance from β_CF(η) at the same η."""
    from biasaudit.numerics.eos_gd import gd_sweep

    q = np.asarray(predicted["q"], float)
    s = gd_sweep(params["x"], params["y"], _w0(params), q * predicted["eta_c"], loss_factor=params.get("c", 0.5))
    beta = np.asarray(predicted["beta"], float)
    curve, curve_q = np.asarray(predicted["curve_beta"], float), np.asarray(predicted["curve_q"], float)
    ok = s.converged & np.array([st == "converged" for st in predicted["status"]])
    if ok.mean() < MIN_CONVERGED or len(curve) < 2:
        return Observation(None, math.nan, f"GD converged at {int(ok.sum())} of {ok.size} eta only", decided=False)
    dist, shift, same = (np.full(q.size, np.nan) for _ in range(3))
    for j in np.flatnonzero(ok):
        scale = np.linalg.norm(beta[j])
        gap, pos = curve_distance(s.beta[j], curve)
        dist[j] = gap / scale
        shift[j] = float(np.interp(pos, np.arange(len(curve_q)), curve_q)) - q[j]
        same[j] = np.linalg.norm(s.beta[j] - beta[j]) / scale
    per_unit = dist / (q - 1)
    worst = int(np.nanargmax(per_unit))
    return Observation(
        {"q": q.tolist(), "curve_distance": dist.tolist(), "landing_shift": shift.tolist(),
         "same_eta_distance": same.tolist()}, float(per_unit[worst]),
        f"distance of GD's endpoint from the flow's curve of endpoints, relative to ||beta_CF(eta)||: "
        f"{dist[worst]:.3%} at eta/eta_c = {q[worst]:.4g}, {per_unit[worst]:.3f} (eta/eta_c - 1) (the largest of "
        f"{int(ok.sum())} converged eta in [{q[0]:.3g}, {q[-1]:.3g}]); GD lands on the curve at eta'/eta_c - "
        f"eta/eta_c = {np.nanmin(shift):+.4f} .. {np.nanmax(shift):+.4f}; its distance from beta_CF at the same eta "
        f"is up to {np.nanmax(same):.2%}")


def _scale_curve(params, predicted, signed):
    """The flow's curve scaled by 1 ± CONTROL_MULTIPLE · CURVE_SLOPE · (band's largest η/η_c − 1)."""
    return params, {**predicted, "curve_beta": np.asarray(predicted["curve_beta"], float)
                    * (1 + CONTROL_MULTIPLE * signed * (BAND[1] - 1))}


def _scale_beta(params, predicted, signed):
    return params, {**predicted, "beta": np.asarray(predicted["beta"], float) * (1 + CONTROL_MULTIPLE * signed)}


_CONTROLS = two_sided("prediction[beta]", ENDPOINT_TOL, _scale_beta,
                      reason="the claim's tolerance: beta_CF scaled by 1 ± 2·16 %, so that a GD endpoint within 16 % "
                             "of beta_CF is more than 16 % from the moved one")

_ENDPOINT_TOLERANCE = Tolerance(
    "central_flow_endpoint", ENDPOINT_TOL,
    "relative l2 distance of GD's endpoint from the flow's at the same eta: over 600 draws in [1.15, 1.35] eta_c its "
    "99th percentile is 7.3 % and the worst 15.3 % (a shift along the flow's curve of endpoints, not chaos); the "
    "sides where it fails are stated with this 16 %")


beta_gd = sp.Function("beta_GD", nonnegative=True)  # GD's endpoint at step eta
norm = sp.Function("norm", nonnegative=True)  # the l2 norm
argmin = sp.Function("argmin")  # argmin over eta of its first argument
q_min_gd, q_min_cf = sp.symbols("q_min_GD q_min_CF", positive=True)  # where ||beta||_2 is smallest, in eta/eta_c


def _statement(band):
    """(the bound on GD's relative distance from beta_CF, the band of eta as a hypothesis)."""
    distance = norm(beta_gd(eta_sym) - beta_cf(eta_sym)) / norm(beta_cf(eta_sym))
    bound = sp.And(sp.Le(err_rel, sp.Float(ENDPOINT_TOL, 2), evaluate=False), sp.Eq(err_rel, distance, evaluate=False))
    return bound, sp.And(sp.Ge(eta_sym, sp.Float(band[0], 3) * eta_c_sym, evaluate=False),
                         sp.Le(eta_sym, sp.Float(band[1], 3) * eta_c_sym, evaluate=False))


_HYPOTHESES_SMALL_INIT = sp.Lt(r_0, 0, evaluate=False)
_NO_CLOSED_FORM = ("beta_CF(eta) is the end of an integration (the central flow, numba DOPRI5 with the edge "
                   "event and projection onto S = 2/eta), and GD's endpoint is a simulation")


def _endpoint_claim(id_, band, title, notes, references=(), samples=None):
    statement, hyp = _statement(band)
    return Claim(
        id=id_, paper="eos",
        source="derived (the central flow of Cohen, Damian et al., ICLR 2025, applied to paper 2's toy model)",
        title=title, hypotheses=(_HYPOTHESES_SMALL_INIT, hyp), statement=statement,
        no_closed_form=_NO_CLOSED_FORM, predict=_predict_band(band), evaluate=_endpoint_eval,
        tolerance=_ENDPOINT_TOLERANCE, domain=CF_DOMAIN, negative_control=_CONTROLS,
        samples=samples or {"ci": 8, "thorough": 48}, references=references, compare_reference=_beta_compare,
        notes=notes)


def _beta_compare(predicted, expected):
    return float(np.max(np.abs(np.asarray(predicted["beta"], float) - np.asarray(expected, float))
                        / np.maximum(np.abs(np.asarray(expected, float)), 1e-300)))


eta_prime = sp.Symbol("eta'", positive=True)  # where on the flow's curve of endpoints GD lands
min_over_eta_prime = sp.Function("min_eta_prime", nonnegative=True)  # the minimum over eta' in (eta_c, 1.6 eta_c]


def _curve_statement(band):
    distance = min_over_eta_prime(norm(beta_gd(eta_sym) - beta_cf(eta_prime))) / norm(beta_cf(eta_sym))
    bound = sp.And(sp.Le(err_rel, sp.Float(CURVE_SLOPE, 2) * (eta_sym / eta_c_sym - 1), evaluate=False),
                   sp.Eq(err_rel, distance, evaluate=False))
    return bound, sp.And(sp.Ge(eta_sym, sp.Float(band[0], 3) * eta_c_sym, evaluate=False),
                         sp.Le(eta_sym, sp.Float(band[1], 3) * eta_c_sym, evaluate=False))


_CURVE_STATEMENT, _BAND_HYPOTHESIS = _curve_statement(BAND)
GD_ENDPOINT = Claim(
    id="eos.central_flow.gd_endpoint", paper="eos",
    source="derived (the central flow of Cohen, Damian et al., ICLR 2025, applied to paper 2's toy model)",
    title=f"For η in [1.15, 1.35] η_c GD's endpoint lies on the central flow's curve of endpoints β_CF(η′): its "
          f"distance from the curve, relative to ‖β_CF(η)‖₂, is at most {CURVE_SLOPE:g}·(η/η_c − 1)",
    hypotheses=(_HYPOTHESES_SMALL_INIT, _BAND_HYPOTHESIS), statement=_CURVE_STATEMENT,
    no_closed_form=_NO_CLOSED_FORM, predict=_predict_band(BAND, curve=True), evaluate=_curve_eval,
    tolerance=Tolerance("central_flow_curve_slope", CURVE_SLOPE, CURVE_SLOPE_REASON), domain=CF_DOMAIN,
    negative_control=two_sided(
        "prediction[curve_beta]", CURVE_SLOPE, _scale_curve,
        reason=f"the curve scaled by 1 ± {CONTROL_MULTIPLE:g}·{CURVE_SLOPE:g}·0.35 (twice the bound at the band's top): "
               "off the solution manifold, where GD's endpoints lie"),
    samples={"ci": 8, "thorough": 48},
    notes="Measured (notes/eos.md, 400 draws x 8 eta on the band): GD lands on the curve a little above eta, at "
          "eta'/eta_c - eta/eta_c of median 0.08 (eta/eta_c - 1) (0.011 at 1.15, 0.028 at 1.35 eta_c), and that "
          "shift is what its distance from beta_CF at the same eta measures (median 3.7-5.2 %, worst 11.6 %); off "
          "the curve it lies at median 0.14-0.25 %, 99th percentile 1.9-4.6 %, worst 5.7 % (at 1.35 eta_c). At d = 2 "
          "the solution set is a segment that the curve covers, so only d >= 3 tests the curve. The failing sides of "
          "the distance at the same eta are eos.central_flow.gd_endpoint_near_edge and "
          "eos.central_flow.gd_endpoint_large_eta.",
)


# beta_CF of each counterexample at its band's step sizes, stored (the kernel's values to 12 digits, computed once;
# the solve_ivp reference agrees to 1e-8), so the reference can fail when the flow changes
NEAR_EDGE_BETA = (
    (0.0666337555367, 0.619127622118, 0.0118741904125, 0.403016748492),
    (0.0704398449184, 0.65692695265, 0.0126304186876, 0.389449867561),
    (0.074093767278, 0.693292135673, 0.0133586198377, 0.376399683793),
    (0.0776056431235, 0.728302414679, 0.0140600858734, 0.363837255551),
    (0.0809846252946, 0.762031381006, 0.0147360512223, 0.351735761747),
    (0.0842390314975, 0.794547462818, 0.0153876911065, 0.340070309198),
    (0.087376449716, 0.825914342407, 0.01601612113, 0.328817765448),
    (0.0904038272646, 0.856191354933, 0.0166223984435, 0.317956605224),
)
LARGE_ETA_BETA = (
    (0.00109248703561, 0.116789244725, 0.104476296961, 0.0594060129471, 0.000212634476729),
    (0.000753777822181, 0.108808459198, 0.121978280488, 0.0701717492046, 0.000158131526783),
    (0.000555282984018, 0.101281085865, 0.138103516645, 0.0801045977724, 0.000123356423338),
    (0.000428770669914, 0.094259923758, 0.152976009811, 0.089245695352, 9.96106090531e-05),
    (0.000342775926752, 0.0877340518776, 0.166729406186, 0.0976568674836, 8.25198235896e-05),
    (0.000281289376285, 0.081671315032, 0.179487645884, 0.105402914465, 6.96957654823e-05),
    (0.000235498878027, 0.0760338150955, 0.191360541351, 0.1125454031, 5.97437450231e-05),
    (0.000200236518411, 0.0707838321864, 0.202443912841, 0.119140639551, 5.18033793347e-05),
)


def _measured(params, beta):
    return Reference(params, [list(row) for row in beta], 1e-6,
                     "the counterexample's beta_CF (stored; the solve_ivp reference agrees to 1e-8)",
                     origin="measured")


NEAR_EDGE_CLAIM = _endpoint_claim(
    "eos.central_flow.gd_endpoint_near_edge", NEAR_EDGE,
    "Next to the edge, η in [1.01, 1.15] η_c, GD's endpoint lies within 16 % of the flow's endpoint at the same η, "
    "β_CF(η)",
    "Expected verdict: refuted (the flow's endpoint at the same eta as GD's is not its landing point there). Just "
    "above eta_c the flow sits "
    "on S = 2/eta while GD's endpoint still carries its gradient-flow lag (S_GF - S_GD = C eta below eta_c): over 60 "
    "draws single cases reach 8.6-17 % at 1.025-1.05 eta_c (and 15.5 % at 1.1 eta_c over 300 draws); the "
    "reference case, 38 % at 1.01 eta_c, is a "
    "counterexample, so the verdict does not depend on the seed.",
    references=(_measured(NEAR_EDGE_CASE, NEAR_EDGE_BETA),), samples={"ci": 4, "thorough": 32},
)

LARGE_ETA_CLAIM = _endpoint_claim(
    "eos.central_flow.gd_endpoint_large_eta", LARGE_ETA,
    "At large η, η in [1.5, 2] η_c, GD's endpoint lies within 16 % of the flow's endpoint at the same η, β_CF(η)",
    "Expected verdict: refuted (the flow's endpoint at the same eta is not GD's there). Above ~1.4 eta_c GD reaches "
    "its endpoint through chaotic transients: its endpoint jumps by 10-250 % between neighbouring eta, while "
    "beta_CF(eta) is smooth. The reference case is a counterexample (62 % at 1.79 eta_c), so the verdict does "
    "not depend on the seed.",
    references=(_measured(LARGE_ETA_CASE, LARGE_ETA_BETA),), samples={"ci": 4, "thorough": 32},
)


# ---- the norm curve ------------------------------------------------------------------------------------------
CURVE = (1.0, 1.5)  # eta / eta_c of the 200-point grid (the first point excluded: it is eta_c itself)
N_CURVE = 200
ARGMIN_TOL = 0.02  # |q*_CF - q*_GD|: measured <= 0.013 (40 draws); a grid step is 0.0025
NORM_CURVE_TOL = 1.0


def _curve_predict(params):
    from biasaudit.numerics.eos_central_flow import central_flow_curve

    eta_c = _eta_c(params)
    q = np.linspace(CURVE[0], CURVE[1], N_CURVE + 1)[1:]
    runs = central_flow_curve(params["x"], params["y"], _w0(params), q * eta_c, loss_factor=params.get("c", 0.5))
    norm = np.array([r.norm_l2 for r in runs])
    return {"eta_c": eta_c, "q": q, "norm_l2": norm, "q_min": float(q[int(np.argmin(norm))])}


def _curve_eval(params, predicted):
    from biasaudit.numerics.eos_gd import gd_sweep

    q = np.asarray(predicted["q"], float)
    s = gd_sweep(params["x"], params["y"], _w0(params), q * predicted["eta_c"], loss_factor=params.get("c", 0.5))
    ok = s.converged
    if ok.mean() < 0.9:
        return Observation(None, math.nan, f"GD converged at {int(ok.sum())} of {q.size} eta only", decided=False)
    gd_norm = np.where(ok, s.beta_l2, np.inf)
    q_min_gd = float(q[int(np.argmin(gd_norm))])
    band = ok & (q >= BAND[0]) & (q <= BAND[1])
    norm = np.asarray(predicted["norm_l2"], float)
    gap = float(np.max(np.abs(s.beta_l2[band] - norm[band]) / norm[band]))
    argmin_gap = abs(q_min_gd - float(predicted["q_min"]))
    error = max(gap / ENDPOINT_TOL, argmin_gap / ARGMIN_TOL)
    return Observation({"q_min_gd": q_min_gd, "q_min_cf": predicted["q_min"], "norm_gap": gap}, error,
                       f"||beta||_2 smallest at {q_min_gd:.4g} eta_c (GD) and {predicted['q_min']:.4g} eta_c (flow); "
                       f"worst norm gap in [1.15, 1.35] eta_c {gap:.2%}; error = max(gap/16 %, argmin gap/0.02) = "
                       f"{error:.3g}")


def _shift_argmin(params, predicted, signed):
    """The flow's minimum moved by 2·ARGMIN_TOL (in eta/eta_c) and its norms scaled by 1 ± 2·ENDPOINT_TOL."""
    return params, {**predicted, "q_min": predicted["q_min"] + CONTROL_MULTIPLE * ARGMIN_TOL * np.sign(signed),
                    "norm_l2": np.asarray(predicted["norm_l2"], float) * (1 + CONTROL_MULTIPLE * ENDPOINT_TOL
                                                                          * np.sign(signed))}


NORM_CURVE = Claim(
    id="eos.central_flow.norm_curve", paper="eos",
    source="derived (the central flow of Cohen, Damian et al., ICLR 2025, applied to paper 2's toy model)",
    title="On 200 η in (η_c, 1.5 η_c] the flow's ‖β‖₂(η) has its minimum within 0.02 η_c of GD's, and follows "
          "GD's norm to 16 % on [1.15, 1.35] η_c",
    hypotheses=(_HYPOTHESES_SMALL_INIT,),
    statement=sp.And(sp.Le(sp.Abs(q_min_gd - q_min_cf), sp.Float(ARGMIN_TOL, 2), evaluate=False),
                     sp.Eq(q_min_cf, argmin(norm(beta_cf(eta_sym)), eta_sym) / eta_c_sym, evaluate=False)),
    no_closed_form=_NO_CLOSED_FORM, predict=_curve_predict, evaluate=_curve_eval,
    tolerance=Tolerance("fraction_of_allowance", NORM_CURVE_TOL,
                        "error = max(norm gap / 16 % (the same-eta tolerance of the endpoint claims), "
                        "argmin gap / 0.02 eta_c (measured <= 0.013 over 40 draws; grid step 0.0025)): 1 is the "
                        "edge of both allowances"),
    domain=CF_DOMAIN,
    negative_control=two_sided("prediction[q_min, norm_l2]", ARGMIN_TOL, _shift_argmin,
                               reason="twice each allowance: the minimum moved by 0.04 eta_c, the norms by 32 %"),
    samples={"ci": 4, "thorough": 24},
    references=(Reference(PILOT, 1.1, 0.02, "the pilot toy: ||beta||_2 falls from 0.640 at 1.02 eta_c to 0.593 at "
                          "1.1 eta_c and rises after: smallest near 1.1 eta_c", origin="measured"),
                Reference(ARGMIN_CASE, 1.055, 0.003, "a counterexample: the flow's norm is smallest at 1.055 eta_c, "
                          "GD's at the grid's first point", origin="measured")),
    compare_reference=lambda p, e: abs(p["q_min"] - e),
    notes="Expected verdict: refuted. Measured (notes/eos.md): over 40 draws the flow's minimum sits 0-0.013 eta_c "
          "above GD's (interior minima at 1.03-1.2 eta_c, or both at the grid's first point when the norm only "
          "rises), but a thorough check found a draw (the second reference) where GD's norm is smallest right at "
          "eta_c and the flow's at 1.055 eta_c: near eta_c GD's endpoint carries its gradient-flow lag, as in "
          "eos.central_flow.gd_endpoint_near_edge. The reference makes the verdict independent of the seed.",
)

CLAIMS = (GD_ENDPOINT, NEAR_EDGE_CLAIM, LARGE_ETA_CLAIM, NORM_CURVE)
