"""The verdict numbers of the EoS sweeps (E1–E5 and CE): pure functions of sweep dicts.

A sweep dict is :func:`biasaudit.validation.eos_runs.run_sweep`'s ``{"config", "gf", "runs", "dir"}``.

=====================================  =======================================================================
function                               what it measures
=====================================  =======================================================================
:func:`e1_phase_transition`            flow side S ≈ 2/η_c, EoS side ηS/2 ≈ 1, ‖θ‖₁ rising in η
:func:`e2_kink`                        the kink of final S(η), from a two-piece power-law fit
:func:`kink_offset`                    the seed statistic of E2: η̂_kink/η_c − 1 of one sweep (:func:`e2_kink`)
:func:`edge_share`                     the null-grid control: the share of runs below η_c at the edge of stability
:func:`eos_median_gap`                 E1's seed statistic: median over EoS-side runs of ``|1 − ηS/2|``
:func:`flow_plateau_dev`               E1's flow side: max over flow-side runs of ``|S η_c/2 − 1|``
:func:`e3_measures`                    Spearman(η, measure) on the EoS side, per norm and sharpness measure (one
                                       sweep: ``validate eos``)
:func:`l1_growth_rate`                 E3's seed statistic for the norm: d ln‖θ‖₁ / d(η/η_c) on the EoS side
:func:`l1_curvature_share`             E3's "roughly linearly": the quadratic term's share of ‖θ‖₁'s rise
:func:`avg_sharpness_fall_rate`        E3's seed statistics for the sharpness measures: −d ln(measure) / d(η/η_c)
:func:`adaptive_sharpness_fall_rate`
:func:`side_contrast`                  a rate on the EoS side minus the same rate on the flow side (E3's decisions)
:func:`eos_time_gap`                   E4's seed statistic: median ``|ηS_t/2 − 1|`` over the tracked run's EoS phase
:func:`eos_side_balance`               E4's seed statistic: the smaller share of the EoS phase on one side of 2/η
:func:`eos_norm_time_growth`           E4's seed statistic: growth of the 2-step averaged ‖θ‖₁ over that phase
:func:`e4_dynamics`                    S_t around 2/η in the tracked EoS run, 2-step averaged ‖θ‖₁ growing
:func:`u_arm_slopes`                   E5's seed statistic: the two-lines test of a U in test error against ln η
:func:`u_break_multiple`               where E5's two lines meet, found on the other seeds
:func:`flow_side_error_slope`          E5's data control: the error's slope where GD follows the flow
:func:`e5_one_sweep`                   E5 on one sweep (``validate eos``): test errors with Wilson intervals, U
=====================================  =======================================================================

Symbols: η step size, η_c = 2/s_GF, S = max|λ(∇²L)| at the end of a run (L < eps), g = ηS/2 the stability
ratio (g = 1 on the edge of stability), ‖θ‖₁ the paper's norm.
"""

from __future__ import annotations

import math

import numpy as np

from biasaudit.plumbing import choice
from biasaudit.plumbing.jsonable import json_float  # re-exported: the statistics' readers import it here

__all__ = ["SIDE_MARGIN", "EDGE_DELTA", "MEASURES", "json_float", "final_sharpness", "usable_runs",
           "e1_phase_transition", "e2_kink", "e3_measures", "e4_dynamics", "wilson_interval", "u_arm_slopes",
           "u_break_multiple", "flow_side_error_slope", "relative_test_errors", "relative_errors_by_multiple",
           "E5_MIN_ARM", "e5_one_sweep",
           "kink_offset", "edge_share", "example_sweep",
           "NULL_GRID_BELOW", "eos_median_gap",
           "flow_plateau_dev", "l1_growth_rate", "avg_sharpness_fall_rate", "adaptive_sharpness_fall_rate",
           "l1_curvature_share", "E3_MIN_RUNS", "SIDES", "SIDE_MIN_RUNS", "side_contrast", "eos_time_gap", "eos_side_balance", "eos_norm_time_growth", "E4_MIN_POINTS",
           "eos_period2_share", "ZIGZAG_NOISE_SHARE"]

SIDE_MARGIN = 0.05  # runs within ±5 % of the predicted η_c are neither "flow side" nor "EoS side"
SIDES = ("eos", "flow")  # the two sides of η_c a side statistic reads
EDGE_DELTA = 0.05  # a run is at the edge of stability when ηS/2 ≥ 1 − EDGE_DELTA
Z95 = 1.959963984540054  # two-sided 95 % normal quantile


def final_sharpness(run) -> tuple[float, bool]:
    """``(|S|, converged)`` of a stored run's final sharpness ``run["final"]["S"]``; NaN and False when the run has
    none.

    Parameters
    ----------
    run : dict
        A stored run.

    Returns
    -------
    tuple of (float, bool)
        ``|S|`` and whether its eigensolver converged.

    Examples
    --------
    >>> final_sharpness({"final": {"S": {"value": -2.5, "converged": True}}}), final_sharpness({})
    ((2.5, True), (nan, False))
    """
    S = (run.get("final") or {}).get("S") or {}
    return abs(json_float(S.get("value"))), bool(S.get("converged", False))


def usable_runs(sweep) -> tuple[list[dict], list[str]]:
    """Runs with a finite, converged final sharpness; notes for those left out.

    Parameters
    ----------
    sweep : dict
        A stored sweep (``sweep["runs"]``).

    Returns
    -------
    tuple of (list of dict, list of str)
        The usable runs and one note per run left out (diverged, or its eigensolver did not converge).

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> runs, notes = usable_runs({"runs": sweep["runs"] + [{"eta": 3.0, "outcome": "diverged"}]})
    >>> len(runs), notes
    (6, ['eta=3 diverged'])
    """
    ok, notes = [], []
    for r in sweep["runs"]:
        S, conv = final_sharpness(r)
        if r["outcome"] == "diverged":
            notes.append(f"eta={r['eta']:.4g} diverged")
        elif not (conv and math.isfinite(S)):
            res = json_float(((r.get("final") or {}).get("S") or {}).get("residual"))
            notes.append(f"eta={r['eta']:.4g}: eigensolver did not converge (residual {res:.2g})")
        else:
            ok.append(r)
    return ok, notes


def _spearman(x, y) -> float:
    from scipy.stats import spearmanr

    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3 or np.all(y == y[0]):
        return math.nan
    return float(spearmanr(x, y).statistic)


def e1_phase_transition(sweep: dict, eta_c: float) -> dict:
    r"""E1: flow side (η ≤ (1−m)η_c): S ≈ 2/η_c; EoS side (η ≥ (1+m)η_c): ηS/2 ≈ 1, ‖θ‖₁ rising in η (m =
    :data:`SIDE_MARGIN`).

    error = max(max_flow ``|S η_c/2 − 1|``, median_EoS ``|1 − ηS/2|``, 1 if ‖θ‖₁ does not rise over the EoS
    side).

    Parameters
    ----------
    sweep : dict
        A stored sweep: ``sweep["runs"]``, each run with ``eta``, ``outcome`` and ``final`` (its final measures).
    eta_c : float
        The predicted critical step :math:`\eta_c = 2/s_{GF}`.

    Returns
    -------
    dict
        ``error``, ``decided`` (False with no flow-side run or fewer than 2 EoS-side runs), the run counts, the
        deviations and a one-line ``detail``.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> e1 = e1_phase_transition(sweep, 1.0)
    >>> e1["error"], e1["decided"], e1["n_flow"], e1["n_eos"]
    (0.0, True, 3, 3)
    """
    runs, notes = usable_runs(sweep)
    flow = [r for r in runs if r["eta"] <= (1 - SIDE_MARGIN) * eta_c]
    eos = [r for r in runs if r["eta"] >= (1 + SIDE_MARGIN) * eta_c]
    out = {"eta_c": eta_c, "n_flow": len(flow), "n_eos": len(eos), "notes": notes}
    if not flow or len(eos) < 2:
        return {**out, "error": math.nan, "decided": False,
                "detail": f"too few usable runs: {len(flow)} flow-side, {len(eos)} EoS-side; {'; '.join(notes)}"}
    flow_dev = [abs(final_sharpness(r)[0] * eta_c / 2 - 1) for r in flow]
    gaps = [abs(1 - r["eta"] * final_sharpness(r)[0] / 2) for r in eos]
    l1 = [r["final"]["l1"] for r in eos]
    rho_l1 = _spearman([r["eta"] for r in eos], l1) if len(eos) >= 3 else float(np.sign(l1[-1] - l1[0]))
    norm_violation = 0.0 if rho_l1 > 0 else 1.0
    error = max(max(flow_dev), float(np.median(gaps)), norm_violation)
    l1_rise = l1[-1] / l1[0] - 1
    detail = (f"flow side max|S*eta_c/2-1|={max(flow_dev):.3g} ({len(flow)} runs); EoS side median|1-eta*S/2|="
              f"{np.median(gaps):.3g} ({len(eos)} runs); l1 Spearman vs eta={rho_l1:.2f}, l1 rise "
              f"{l1_rise:+.1%} from eta={eos[0]['eta']:.3g} to {eos[-1]['eta']:.3g}")
    return {**out, "error": error, "decided": True, "flow_dev": flow_dev, "eos_gaps": gaps, "l1_spearman": rho_l1,
            "l1_rise": l1_rise, "detail": detail}


def e2_kink(sweep: dict, eta_kink: float) -> dict:
    """E2: the kink of final S(η) sits at the predicted η (= 2/s_GF).

    The kink is the breakpoint of the two-piece power law S(η) = min(P, c/η) fitted to the usable runs in
    log-log (least squares; the split between plateau and EoS branch is chosen by the smallest residual, P
    and c are the geometric means of S and ηS on either side): η̂ = c/P, where the plateau meets the EoS
    branch. c is free (E1 checks c ≈ 2), so η̂ does not assume the 2/η law. error = ``|η̂/η_kink − 1|``.
    The bracket (last run left of the split, first run right of it) is reported beside it.

    Parameters
    ----------
    sweep : dict
        A stored sweep.
    eta_kink : float
        The predicted kink, 2/s_GF.

    Returns
    -------
    dict
        ``error``, ``decided`` (False below 3 usable runs), ``kink``, ``plateau``, ``eos_constant``, ``bracket``,
        ``rms_log_residual`` and ``detail``.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> e2 = e2_kink(sweep, 1.0)
    >>> round(e2["kink"], 12), e2["bracket"]
    (1.0, (0.9, 1.2))
    """
    runs, notes = usable_runs(sweep)
    if len(runs) < 3:
        return {"error": math.nan, "decided": False, "notes": notes, "detail": f"{len(runs)} usable runs (< 3)"}
    eta = np.array([r["eta"] for r in runs])
    logS = np.log([final_sharpness(r)[0] for r in runs])
    best = None
    for i in range(1, len(runs)):
        logP = logS[:i].mean()
        logc = (np.log(eta[i:]) + logS[i:]).mean()
        pred = np.minimum(logP, logc - np.log(eta))
        sse = float(((logS - pred) ** 2).sum())
        if best is None or sse < best[0]:
            best = (sse, i, math.exp(logP), math.exp(logc))
    sse, i, P, c = best
    kink = c / P
    error = abs(kink / eta_kink - 1)
    bracket = (float(eta[i - 1]), float(eta[i]))
    return {"error": error, "decided": True, "kink": kink, "plateau": P, "eos_constant": c, "bracket": bracket,
            "rms_log_residual": math.sqrt(sse / len(runs)), "notes": notes,
            "detail": f"two-piece fit S=min(P, c/eta): P={P:.4g}, c={c:.4g}, kink c/P={kink:.4g} (split between "
                      f"eta={bracket[0]:.4g} and {bracket[1]:.4g}), predicted {eta_kink:.4g}: "
                      f"{kink / eta_kink - 1:+.2%}"}


# The null grid: runs at eta <= 0.8 eta_c, four kink margins (4 x 5 %) below eta_c, so a kink that a claim could
# still confirm or refute near eta_c does not put them on the edge; at least one run of every quick sweep (0.75).
NULL_GRID_BELOW = 0.8


def kink_offset(sweep: dict, eta_c: float) -> float:
    r"""E2's seed statistic: η̂_kink/η_c − 1, η̂_kink the two-piece fit's breakpoint (:func:`e2_kink`) over every
    usable run of ``sweep``; NaN when the fit is undecided (fewer than 3 usable runs) or η_c is not positive.

    Parameters
    ----------
    sweep : dict
        A stored sweep: ``sweep["runs"]``, each run with ``eta``, ``outcome`` and ``final`` (its final measures).
    eta_c : float
        The predicted critical step :math:`\eta_c = 2/s_{GF}`.

    Returns
    -------
    float
        The relative offset of the kink; NaN when undecided.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> round(kink_offset(sweep, 1.0), 12), round(kink_offset(sweep, 1.25), 12)
    (0.0, -0.2)
    """
    if not (math.isfinite(eta_c) and eta_c > 0):
        return math.nan
    kink = e2_kink(sweep, eta_c)
    return float(kink["kink"] / eta_c - 1) if kink["decided"] else math.nan


def eos_median_gap(sweep: dict, eta_c: float) -> float:
    r"""The median over EoS-side runs (η ≥ (1 + SIDE_MARGIN) η_c) of ``|1 − ηS/2|``; NaN with fewer than 2 of
    them.

    Parameters
    ----------
    sweep : dict
        A stored sweep: ``sweep["runs"]``, each run with ``eta``, ``outcome`` and ``final`` (its final measures).
    eta_c : float
        The predicted critical step :math:`\eta_c = 2/s_{GF}`.

    Returns
    -------
    float
        The median gap; NaN with fewer than 2 EoS-side runs.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> eos_median_gap(sweep, 1.0)
    0.0
    """
    runs, _ = usable_runs(sweep)
    gaps = [abs(1 - r["eta"] * final_sharpness(r)[0] / 2) for r in runs if r["eta"] >= (1 + SIDE_MARGIN) * eta_c]
    return float(np.median(gaps)) if len(gaps) >= 2 else math.nan


def flow_plateau_dev(sweep: dict, eta_c: float) -> float:
    r"""E1's flow side as one number: the largest ``|S·η_c/2 − 1|`` over the usable runs at
    η ≤ (1 − SIDE_MARGIN) η_c (0 when the final sharpness sits on the flow's plateau s_GF = 2/η_c); NaN without
    such runs.

    Parameters
    ----------
    sweep : dict
        A stored sweep: ``sweep["runs"]``, each run with ``eta``, ``outcome`` and ``final`` (its final measures).
    eta_c : float
        The predicted critical step :math:`\eta_c = 2/s_{GF}`.

    Returns
    -------
    float
        The largest deviation; NaN without flow-side runs.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> flow_plateau_dev(sweep, 1.0), round(flow_plateau_dev(sweep, 0.8), 12)
    (0.0, 0.2)
    """
    runs, _ = usable_runs(sweep)
    devs = [abs(final_sharpness(r)[0] * eta_c / 2 - 1) for r in runs if r["eta"] <= (1 - SIDE_MARGIN) * eta_c]
    return float(max(devs)) if devs else math.nan


def edge_share(sweep: dict, eta_c: float, below: float = NULL_GRID_BELOW) -> float:
    r"""The null-grid control of the kink: among the usable runs at η ≤ ``below``·η_c (where gradient descent
    must stay off the edge, ηS/2 < 1 − EDGE_DELTA, if η_c is right), the share that sits at the edge. 0 where no
    kink is; a share above 0 means the pipeline sees the edge of stability below its own η_c. NaN without such
    runs.

    Parameters
    ----------
    sweep : dict
        A stored sweep: ``sweep["runs"]``, each run with ``eta``, ``outcome`` and ``final`` (its final measures).
    eta_c : float
        The predicted critical step :math:`\eta_c = 2/s_{GF}`.
    below : float
        The null grid's upper end, in units of η_c (default :data:`NULL_GRID_BELOW`).

    Returns
    -------
    float
        The share in [0, 1]; NaN without runs on the null grid.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> edge_share(sweep, 1.0), edge_share(sweep, 2.0)        # eta_c too large: the edge shows below it
    (0.0, 0.4)
    """
    runs, _ = usable_runs(sweep)
    null = [r for r in runs if r["eta"] <= below * eta_c]
    if not null:
        return math.nan
    return float(np.mean([r["eta"] * final_sharpness(r)[0] / 2 >= 1 - EDGE_DELTA for r in null]))


MEASURES = {  # name -> (how to read it from a run's final measures, expected direction on the EoS side)
    "l1": (lambda f: f["l1"], +1),
    "l2": (lambda f: f["l2"], +1),
    "nuclear_sum": (lambda f: f["nuclear_sum"], +1),
    "S_worst_case": (lambda f: abs(json_float(f["S"]["value"])), -1),
    "avg_sharpness": (lambda f: json_float(f["avg_sharpness"]["value"]), -1),
    "adaptive_sharpness": (lambda f: json_float(f["adaptive_sharpness"]["value"]), -1),
}


def e3_measures(sweep: dict, eta_c: float, directions: dict | None = None) -> dict:
    r"""E3: on the EoS side every norm rises and every sharpness measure falls with η.

    Per measure, ρ = Spearman(η, measure) over EoS-side runs; violation = (1 − direction·ρ)/2 ∈ [0, 1]
    (0: perfectly monotone in the expected direction). error = the largest violation.

    Parameters
    ----------
    sweep : dict
        A stored sweep: ``sweep["runs"]``, each run with ``eta``, ``outcome`` and ``final`` (its final measures).
    eta_c : float
        The predicted critical step :math:`\eta_c = 2/s_{GF}`.
    directions : dict, optional
        The expected sign per measure of :data:`MEASURES` (default: theirs).

    Returns
    -------
    dict
        ``error``, ``decided`` (False below 3 EoS-side runs or where a measure is missing), ``spearman``,
        ``values`` and ``detail``.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> e3 = e3_measures(sweep, 1.0)
    >>> e3["error"], e3["spearman"]["l1"], e3["spearman"]["avg_sharpness"]
    (0.0, 1.0, -1.0)
    """
    directions = directions or {k: d for k, (_, d) in MEASURES.items()}
    runs, notes = usable_runs(sweep)
    eos = [r for r in runs if r["eta"] >= (1 + SIDE_MARGIN) * eta_c]
    if len(eos) < 3:
        return {"error": math.nan, "decided": False, "notes": notes, "detail": f"{len(eos)} EoS-side runs (< 3)"}
    etas = [r["eta"] for r in eos]
    rhos, viol, values = {}, {}, {}
    for name, (read, _) in MEASURES.items():
        try:
            vals = [read(r["final"]) for r in eos]
        except (KeyError, TypeError):
            vals = [math.nan] * len(eos)
        values[name] = vals
        rho = _spearman(etas, vals) if np.all(np.isfinite(vals)) else math.nan
        rhos[name] = rho
        viol[name] = (1 - directions[name] * rho) / 2 if math.isfinite(rho) else math.nan
    if any(math.isnan(v) for v in viol.values()):
        return {"error": math.nan, "decided": False, "spearman": rhos, "values": values, "notes": notes,
                "detail": "a measure could not be computed on every EoS-side run"}
    worst = max(viol, key=viol.get)
    return {"error": viol[worst], "decided": True, "spearman": rhos, "values": values, "etas": etas,
            "notes": notes, "detail": "Spearman(eta, measure) on the EoS side: "
            + ", ".join(f"{k}={v:+.2f}" for k, v in rhos.items()) + f"; worst {worst}"}


def _side_runs(sweep: dict, eta_c: float, read, side: str = "eos") -> tuple[np.ndarray, np.ndarray]:
    """(m = η/η_c, read(final)) over the usable runs of one side with a finite, positive reading: ``"eos"`` the EoS
    side (η ≥ (1 + SIDE_MARGIN) η_c), ``"flow"`` the flow side (η ≤ (1 − SIDE_MARGIN) η_c); empty arrays when η_c
    is not a positive number."""
    choice("side", side, SIDES)
    if not (math.isfinite(eta_c) and eta_c > 0):
        return np.array([]), np.array([])
    runs, _ = usable_runs(sweep)
    on_side = ((lambda eta: eta >= (1 + SIDE_MARGIN) * eta_c) if side == "eos"
               else (lambda eta: eta <= (1 - SIDE_MARGIN) * eta_c))
    pairs = [(r["eta"] / eta_c, json_float(read(r["final"]))) for r in runs if on_side(r["eta"])]
    pairs = [(m, q) for m, q in pairs if math.isfinite(q) and q > 0]
    return np.array([m for m, _ in pairs]), np.array([q for _, q in pairs])


def example_sweep(etas, *, norm=lambda eta: 1 + max(0.0, eta - 1)) -> dict:
    r"""A sweep as the statistics read it, for examples and tests: η_c = 1, every run converged, the final sharpness
    (worst-case, average and adaptive alike) :math:`\min(2, 2/\eta)` and every norm (l1, l2, nuclear sum)
    ``norm(eta)``, by default :math:`1 + \max(0, \eta - 1)`: flat on the flow side, rising on the EoS side.

    Parameters
    ----------
    etas : sequence of float
        The runs' step sizes (multiples of η_c = 1).
    norm : callable, optional
        η -> the run's final norm.

    Returns
    -------
    dict
        ``{"runs": [...]}``, each run with ``eta``, ``outcome`` and ``final``.

    Examples
    --------
    >>> [run["final"]["S"]["value"] for run in example_sweep((0.5, 2.0))["runs"]]
    [2.0, 1.0]
    """
    def run(eta):
        s, q = min(2.0, 2 / eta), float(norm(eta))
        return {"eta": float(eta), "outcome": "converged",
                "final": {"S": {"value": s, "converged": True}, "l1": q, "l2": q, "nuclear_sum": q,
                          "avg_sharpness": {"value": s}, "adaptive_sharpness": {"value": s}}}

    return {"runs": [run(eta) for eta in etas]}


def _log_rate(sweep: dict, eta_c: float, read, side: str = "eos") -> float:
    """The least-squares slope of ln q against m = η/η_c over one side of the sweep (:func:`_side_runs`): how fast q
    grows per unit of η/η_c, relative to itself; NaN with fewer than :data:`SIDE_MIN_RUNS` runs there."""
    m, q = _side_runs(sweep, eta_c, read, side)
    if m.size < SIDE_MIN_RUNS[side]:
        return math.nan
    return float(np.polyfit(m, np.log(q), 1)[0])


FLAT_NORM = 1e-12  # a rise below this share of the norm is the round-off of a constant's least-squares slope
E3_MIN_RUNS = 3  # EoS-side runs a seed needs for a rate (a line through 2 points has no check on its shape)
# The flow side is the null arm of a rate (side_contrast): its slope only has to be read, not checked for shape, so
# 2 runs do (the quick grid has 0.75 and 0.93 eta_c there; the FCN adds 0.5).
SIDE_MIN_RUNS = {"eos": E3_MIN_RUNS, "flow": 2}


def side_contrast(statistic, sweep: dict, eta_c: float) -> float:
    r"""A rate's contrast between the two sides of η_c: ``statistic(sweep, η_c, side="eos")`` minus the same
    function over the flow side (η ≤ 0.95 η_c), where GD follows the gradient flow and η cannot move the reading.
    A bias of the pipeline that makes the rate non-zero everywhere moves both arms alike and cancels; what is left
    is how much faster the quantity moves with η above η_c than below it. NaN when either arm is.

    Parameters
    ----------
    statistic : callable
        A rate ``f(sweep, eta_c, side=...)`` (:func:`l1_growth_rate`, :func:`avg_sharpness_fall_rate`,
        :func:`adaptive_sharpness_fall_rate`).
    sweep : dict
        A stored sweep.
    eta_c : float
        The predicted critical step.

    Returns
    -------
    float
        The EoS side's rate minus the flow side's.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # flat below eta_c = 1, rising above it
    >>> round(side_contrast(l1_growth_rate, sweep, 1.0), 4), l1_growth_rate(sweep, 1.0, side="flow")
    (0.6321, 0.0)
    """
    return float(statistic(sweep, eta_c, side="eos") - statistic(sweep, eta_c, side="flow"))


def l1_growth_rate(sweep: dict, eta_c: float, side: str = "eos") -> float:
    r"""E3's norm as one number per seed: the slope of :math:`\ln\|\theta\|_1` (the paper's norm, all parameters)
    against :math:`m = \eta/\eta_c` over the usable EoS-side runs (η ≥ 1.05 η_c): the norm's relative growth per
    unit of η/η_c. Positive when the norm rises with η; NaN with fewer than 3 EoS-side runs.

    Parameters
    ----------
    sweep : dict
        A stored sweep: ``sweep["runs"]``, each run with ``eta``, ``outcome`` and ``final`` (its final measures).
    eta_c : float
        The predicted critical step :math:`\eta_c = 2/s_{GF}`.
    side : {"eos", "flow"}
        Which side of η_c the runs come from: ``"flow"`` reads the same slope over η ≤ 0.95 η_c (2 runs do), the
        null arm of :func:`side_contrast`.

    Returns
    -------
    float
        The growth rate; NaN when undecided.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> round(l1_growth_rate(sweep, 1.0), 4), l1_growth_rate(sweep, 1.5)   # only 1 EoS-side run at eta_c = 1.5
    (0.6321, nan)
    """
    return _log_rate(sweep, eta_c, lambda final: final.get("l1"), side)


def avg_sharpness_fall_rate(sweep: dict, eta_c: float, side: str = "eos") -> float:
    r"""E3's average sharpness :math:`E[L(\theta+\rho u)] - L(\theta)` as one number per seed: minus the slope of
    its logarithm against :math:`m = \eta/\eta_c` over the usable EoS-side runs; positive when it falls with η
    (2/η gives :math:`\ln(2/1.07)/0.93 = 0.67` over 1.07-2 η_c); NaN with fewer than 3 EoS-side runs.

    Parameters
    ----------
    sweep : dict
        A stored sweep: ``sweep["runs"]``, each run with ``eta``, ``outcome`` and ``final`` (its final measures).
    eta_c : float
        The predicted critical step :math:`\eta_c = 2/s_{GF}`.
    side : {"eos", "flow"}
        Which side of η_c the runs come from: ``"flow"`` reads the same slope over η ≤ 0.95 η_c (2 runs do), the
        null arm of :func:`side_contrast`.

    Returns
    -------
    float
        The fall rate; NaN when undecided.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> round(avg_sharpness_fall_rate(sweep, 1.0), 4)
    0.6321
    """
    return -_log_rate(sweep, eta_c, lambda final: (final.get("avg_sharpness") or {}).get("value"), side)


def adaptive_sharpness_fall_rate(sweep: dict, eta_c: float, side: str = "eos") -> float:
    r"""E3's adaptive sharpness as one number per seed: minus the slope of its logarithm against
    :math:`m = \eta/\eta_c` over the usable EoS-side runs; positive when it falls with η, negative when it rises;
    NaN with fewer than 3 EoS-side runs.

    Parameters
    ----------
    sweep : dict
        A stored sweep: ``sweep["runs"]``, each run with ``eta``, ``outcome`` and ``final`` (its final measures).
    eta_c : float
        The predicted critical step :math:`\eta_c = 2/s_{GF}`.
    side : {"eos", "flow"}
        Which side of η_c the runs come from: ``"flow"`` reads the same slope over η ≤ 0.95 η_c (2 runs do), the
        null arm of :func:`side_contrast`.

    Returns
    -------
    float
        The fall rate; NaN when undecided.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> round(adaptive_sharpness_fall_rate(sweep, 1.0), 4)
    0.6321
    """
    return -_log_rate(sweep, eta_c, lambda final: (final.get("adaptive_sharpness") or {}).get("value"), side)


def l1_curvature_share(sweep: dict, eta_c: float) -> float:
    r"""E3's "the norm rises roughly linearly" as one number per seed: the least-squares quadratic
    :math:`\|\theta\|_1 \approx a + b\,m + c\,m^2` over the usable EoS-side runs (:math:`m = \eta/\eta_c`), and the
    share of its rise across them that the quadratic term makes,
    :math:`\kappa = c\,(m_{max}-m_{min})^2 / (q(m_{max}) - q(m_{min}))`. 0 for a straight line, positive when the
    growth speeds up, negative when it slows down (a norm growing as :math:`(m-1)^2` from 1.07 η_c gives 0.87 on
    the quick grid 1.07, 1.25, 2 η_c). NaN when the fitted norm does not rise across the runs (no rise to share),
    and with fewer than 3 EoS-side runs.

    Parameters
    ----------
    sweep : dict
        A stored sweep: ``sweep["runs"]``, each run with ``eta``, ``outcome`` and ``final`` (its final measures).
    eta_c : float
        The predicted critical step :math:`\eta_c = 2/s_{GF}`.

    Returns
    -------
    float
        The curvature share; NaN when undecided.

    Examples
    --------
    >>> sweep = example_sweep((0.5, 0.7, 0.9, 1.2, 1.5, 2.0))   # eta_c = 1; every norm 1 + max(0, eta - 1)
    >>> round(l1_curvature_share(sweep, 1.0), 12)                  # the norm 1 + (eta - 1) is a line
    0.0
    >>> bent = example_sweep((1.2, 1.5, 2.0), norm=lambda eta: 1 + (eta - 1) ** 2)
    >>> round(l1_curvature_share(bent, 1.0), 3)
    0.667
    """
    m, q = _side_runs(sweep, eta_c, lambda final: final.get("l1"))
    if m.size < E3_MIN_RUNS:
        return math.nan
    c, b, a = np.polyfit(m, q, 2)
    lo, hi = float(m.min()), float(m.max())
    rise = (a + b * hi + c * hi**2) - (a + b * lo + c * lo**2)
    if not rise > FLAT_NORM * float(np.abs(q).mean()):
        return math.nan
    return float(c * (hi - lo) ** 2 / rise)


def _eos_phase(sweep: dict):
    """(tracked run, its sharpness path's converged points from the first at the edge, ηS/2 ≥ 1 − EDGE_DELTA, on)
    of ``sweep``; (None, []) without a tracked run that reached the edge and did not diverge."""
    run = next((r for r in sweep["runs"] if r.get("tracked")), None)
    if run is None or run["outcome"] == "diverged":
        return None, []
    path = [p for p in run["sharpness_path"] if p.get("converged") and math.isfinite(json_float(p["S"]))]
    start = next((i for i, p in enumerate(path) if run["eta"] * abs(json_float(p["S"])) / 2 >= 1 - EDGE_DELTA), None)
    return (run, path[start:]) if start is not None else (None, [])


E4_MIN_POINTS = 3  # sharpness measurements an EoS phase needs for a median


def eos_time_gap(sweep: dict, eta_c: float) -> float:
    r"""E4's "the sharpness stays around 2/η in time" as one number per seed: in the sweep's tracked run (one η above
    η_c, sharpness measured every few steps), the median over its EoS phase (from the first measurement with
    :math:`\eta S_t/2 \ge 0.95` to the end) of :math:`|\eta S_t/2 - 1|`. NaN without a tracked run that reached
    the edge, or with fewer than 3 measurements in the phase. ``eta_c`` is not read (the run's own η sets the level).

    Parameters
    ----------
    sweep : dict
        A stored sweep with one run marked ``tracked`` (its ``sharpness_path``).
    eta_c : float
        The predicted critical step (unused: the signature of every seed statistic).

    Returns
    -------
    float
        The median gap in time; NaN when undecided.

    Examples
    --------
    >>> path = [{"step": k, "S": s, "converged": True} for k, s in enumerate([1.5, 1.9, 2.04, 1.98, 2.03, 1.99])]
    >>> tracked = {"eta": 1.0, "tracked": True, "outcome": "converged", "steps": 8, "sharpness_path": path,
    ...            "l1": [1.0, 1.0, 1.01, 1.02, 1.03, 1.04, 1.05]}
    >>> round(eos_time_gap({"runs": [tracked]}, 0.5), 12)
    0.015
    """
    _, phase = _eos_phase(sweep)
    if len(phase) < E4_MIN_POINTS:
        return math.nan
    eta = next(r for r in sweep["runs"] if r.get("tracked"))["eta"]
    return float(np.median([abs(eta * abs(json_float(p["S"])) / 2 - 1) for p in phase]))


def eos_side_balance(sweep: dict, eta_c: float) -> float:
    r"""E4's "the sharpness oscillates around 2/η" as one number per seed: in the sweep's tracked run, over its EoS
    phase (as :func:`eos_time_gap`) from the first measurement with :math:`\eta S_t/2 \ge 1` on (the approach
    from below is not a crossing), the smaller of the shares of measurements with :math:`\eta S_t/2 > 1` and
    with :math:`\eta S_t/2 < 1`: 0 for a path that stays on one side (a monotone approach, a plateau above), up
    to 1/2 for one that spends equal time on both. Measured every few steps, a path that is noisy about 2/η also
    reads high: the criterion is "both sides of 2/η", not a period-2 alternation (which needs S_t at every step).
    NaN as :func:`eos_time_gap`.

    Parameters
    ----------
    sweep : dict
        A stored sweep with one run marked ``tracked`` (its ``sharpness_path``).
    eta_c : float
        The predicted critical step (unused: the signature of every seed statistic).

    Returns
    -------
    float
        The balance, in [0, 1/2]; NaN when undecided.

    Examples
    --------
    >>> path = [{"step": k, "S": s, "converged": True} for k, s in enumerate([1.5, 1.9, 2.04, 1.98, 2.03, 1.99])]
    >>> tracked = {"eta": 1.0, "tracked": True, "outcome": "converged", "steps": 8, "sharpness_path": path}
    >>> eos_side_balance({"runs": [tracked]}, 0.5)   # from 2.04 on: 2 of 4 above 2/eta, 2 below
    0.5
    >>> plateau = [{"step": k, "S": s, "converged": True} for k, s in enumerate([1.92, 2.04, 2.06, 2.06, 2.08])]
    >>> eos_side_balance({"runs": [{**tracked, "sharpness_path": plateau}]}, 0.5)  # an approach, then above
    0.0
    """
    run, phase = _eos_phase(sweep)
    g = np.array([run["eta"] * abs(json_float(p["S"])) / 2 for p in phase]) if phase else np.array([])
    reached = np.flatnonzero(g >= 1)
    if len(phase) < E4_MIN_POINTS:
        return math.nan
    if reached.size == 0:  # never reached 2/eta: the path stays on one side
        return 0.0
    g = g[reached[0]:]  # from the first measurement at or above 2/eta: the approach from below is not a crossing
    return float(min(np.mean(g > 1), np.mean(g < 1)))


ZIGZAG_NOISE_SHARE = 5 / 12  # of 4 exchangeable continuous values, 10 of the 24 orders zigzag (Euler's A_4 = 5, twice)
BURST = 4  # consecutive measurements a burst needs: three differences, two sign changes


def eos_period2_share(sweep: dict, eta_c: float) -> float:
    r"""E4's "the sharpness oscillates" as one number per seed: in the sweep's tracked run, whose sharpness is measured
    in bursts of consecutive steps (``SweepConfig.track_burst``), the share of the EoS phase's bursts (as
    :func:`eos_time_gap`'s phase) whose :data:`BURST` values zigzag, :math:`(S_{k+1}-S_k)(S_{k+2}-S_{k+1}) < 0`
    and :math:`(S_{k+2}-S_{k+1})(S_{k+3}-S_{k+2}) < 0`: a period-2 alternation from one step to the next. A
    longer run of consecutive measured steps is cut into disjoint blocks of :data:`BURST` (a path measured at every
    step is one long run); a sampling in bursts shorter than that gives no reading.
    A monotone path gives 0, a period-2 one 1, and noise without memory :data:`ZIGZAG_NOISE_SHARE` = 5/12, so a
    sampled path that is merely noisy about 2/η does not read as alternating. NaN with fewer than
    :data:`E4_MIN_POINTS` bursts in the phase. ``eta_c`` is not read.

    Parameters
    ----------
    sweep : dict
        A stored sweep with one run marked ``tracked`` (its ``sharpness_path`` in bursts of consecutive steps).
    eta_c : float
        The predicted critical step (unused: the signature of every seed statistic).

    Returns
    -------
    float
        The share of zigzag bursts, in [0, 1]; NaN when undecided.

    Examples
    --------
    >>> def run(values, every=5):
    ...     path = [{"step": every * b + j, "S": s, "converged": True}
    ...             for b, burst in enumerate(values) for j, s in enumerate(burst)]
    ...     return {"runs": [{"eta": 1.0, "tracked": True, "outcome": "converged", "sharpness_path": path}]}
    >>> eos_period2_share(run([[2.0, 2.1, 2.0, 2.1], [2.02, 1.98, 2.03, 1.97], [2.0, 2.01, 2.02, 2.03]]), 0.5)
    0.6666666666666666
    >>> eos_period2_share(run([[1.96, 1.97, 1.98, 1.99], [2.0, 2.01, 2.02, 2.03], [2.04, 2.05, 2.06, 2.07]]), 0.5)
    0.0
    """
    _, phase = _eos_phase(sweep)
    runs, current = [], []  # maximal runs of consecutive measured steps
    for point in phase:
        if current and int(point["step"]) != int(current[-1]["step"]) + 1:
            runs.append(current)
            current = []
        current.append(point)
    runs.append(current)
    # each run cut into disjoint blocks of BURST (a path measured at every step is one long run)
    bursts = [run[i:i + BURST] for run in runs for i in range(0, len(run) - BURST + 1, BURST)]
    if len(bursts) < E4_MIN_POINTS:
        return math.nan
    steps = [np.diff([json_float(p["S"]) for p in b]) for b in bursts]
    return float(np.mean([bool(np.all(d[:-1] * d[1:] < 0)) for d in steps]))


def eos_norm_time_growth(sweep: dict, eta_c: float, side: str = "eos") -> float:
    r"""E4's "the norm grows over time" as one number per seed: in the sweep's tracked run, the relative growth of
    the two-step average :math:`(\|\theta_k\|_1 + \|\theta_{k+1}\|_1)/2` over its EoS phase (first step at
    the edge, :math:`k_0`, to the end, K; the average removes the period-2 swing). NaN without a tracked run that
    reached the edge, or with fewer than 3 steps in the phase. ``eta_c`` is not read on the EoS side.

    ``side="flow"`` reads the same growth where the effect cannot be: on the flow side's usable run nearest η_c (the
    largest η ≤ 0.95 η_c), from the first step at which its training loss is at or below the tracked run's loss at
    :math:`k_0` to its end (NaN when that run has no per-step norm and loss, starts below that loss, or never
    reaches it): how much the norm grows from the same point of training on when GD follows the gradient
    flow (the null arm of :func:`side_contrast`). The flow run's per-step norm grows while it fits the data; matching
    on the loss, not on the step, compares the two runs from the same amount of fitting left.

    Parameters
    ----------
    sweep : dict
        A stored sweep with one run marked ``tracked`` (its ``sharpness_path`` and per-step ``l1``); for
        ``side="flow"`` also its per-step ``loss``, and a flow-side run with per-step ``l1`` and ``loss``.
    eta_c : float
        The predicted critical step (read on the flow side only, to find the flow-side run).
    side : {"eos", "flow"}
        The tracked run's EoS phase, or the flow-side run nearest η_c from the same training loss on.

    Returns
    -------
    float
        The relative growth over the phase; NaN when undecided.

    Examples
    --------
    >>> path = [{"step": k, "S": s, "converged": True} for k, s in enumerate([1.5, 1.9, 2.04, 1.98, 2.03, 1.99])]
    >>> tracked = {"eta": 1.0, "tracked": True, "outcome": "converged", "steps": 8, "sharpness_path": path,
    ...            "l1": [1.0, 1.0, 1.01, 1.02, 1.03, 1.04, 1.05], "loss": [1.0, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05]}
    >>> round(eos_norm_time_growth({"runs": [tracked]}, 0.5), 6)   # from step 1, (1.0 + 1.01)/2, to (1.04 + 1.05)/2
    0.039801
    >>> flow = {"eta": 0.4, "outcome": "converged", "steps": 6, "final": {"S": {"value": 2.0, "converged": True}},
    ...         "l1": [0.5, 0.8, 1.0, 1.0, 1.0, 1.01, 1.01], "loss": [2.0, 0.9, 0.5, 0.3, 0.1, 0.06, 0.05]}
    >>> round(eos_norm_time_growth({"runs": [flow, tracked]}, 0.5, side="flow"), 6)   # from step 2 (loss 0.5 <= 0.5)
    0.01
    """
    choice("side", side, SIDES)
    run, phase = _eos_phase(sweep)
    if run is None:
        return math.nan
    k0 = int(phase[0]["step"])
    if side == "flow":
        flow = [r for r in usable_runs(sweep)[0] if math.isfinite(eta_c) and eta_c > 0 and not r.get("tracked")
                and r["eta"] <= (1 - SIDE_MARGIN) * eta_c]
        if not flow or not run.get("loss"):
            return math.nan
        nearest = max(flow, key=lambda r: r["eta"])
        if not (nearest.get("l1") and nearest.get("loss")):
            return math.nan  # not a farther run in its place
        loss = np.asarray(nearest["loss"], float)
        target = float(run["loss"][k0])
        reached = np.flatnonzero(loss <= target)
        if loss[0] < target or not reached.size:
            return math.nan  # the edge began above the flow run's initial loss (a catapult), or it never got there
        run, k0 = nearest, int(reached[0])
    l1 = np.asarray(run["l1"], float)
    avg = 0.5 * (l1[k0:-1] + l1[k0 + 1:])
    if avg.size < E4_MIN_POINTS or not np.all(np.isfinite(avg)):
        return math.nan
    return float(avg[-1] / avg[0] - 1)


def e4_dynamics(sweep: dict, level_factor: float = 1.0) -> dict:
    """E4: in the tracked EoS run S_t oscillates around ``level_factor``·2/η; the 2-step averaged ‖θ‖₁ grows.

    EoS phase: from the first measurement with ηS/2 ≥ 1 − EDGE_DELTA to the end. error = max(median over the
    phase of ``|S_t/level − 1|`` (how far from the level S_t sits), 1 if S_t does not oscillate (monotone
    over the phase), 1 if the 2-step averaged ‖θ‖₁ does not grow over the phase). The fractions of measurements
    above and below the level are reported: "around" is read as "centred within the tolerance", not as
    "equally often on both sides" (measured: S_t sits mostly slightly above 2/η).

    Parameters
    ----------
    sweep : dict
        A stored sweep with one run marked ``tracked`` (its ``sharpness_path`` and per-step ``l1``).
    level_factor : float
        The level in units of 2/η (default 1).

    Returns
    -------
    dict
        ``error``, ``decided``, ``median_dev``, ``oscillates``, ``frac_above``, ``frac_below``, ``l1_growth_avg2``,
        ``phase_start_step`` and ``detail``.

    Examples
    --------
    >>> path = [{"step": k, "S": s, "converged": True} for k, s in enumerate([1.5, 1.9, 2.04, 1.98, 2.03, 1.99])]
    >>> tracked = {"eta": 1.0, "tracked": True, "outcome": "oscillating", "steps": 8, "sharpness_path": path,
    ...            "l1": [1.0, 1.0, 1.01, 1.02, 1.03, 1.04, 1.05]}
    >>> e4 = e4_dynamics({"runs": [tracked]})
    >>> round(e4["error"], 12), e4["oscillates"], e4["phase_start_step"]
    (0.015, True, 1)
    """
    tracked = [r for r in sweep["runs"] if r.get("tracked")]
    if not tracked:
        return {"error": math.nan, "decided": False, "detail": "no tracked run in this sweep"}
    r = tracked[0]
    eta, level = r["eta"], level_factor * 2.0 / r["eta"]
    path = [p for p in r["sharpness_path"] if p.get("converged")]
    if r["outcome"] == "diverged" or len(path) < 4:
        return {"error": math.nan, "decided": False, "eta": eta,
                "detail": f"tracked run {r['outcome']} with {len(path)} converged sharpness points"}
    S = np.array([abs(json_float(p["S"])) for p in path])
    steps = np.array([p["step"] for p in path])
    at_edge = np.nonzero(eta * S / 2 >= 1 - EDGE_DELTA)[0]
    if len(at_edge) == 0:
        if r["outcome"] == "oscillating":  # stopped by max_steps: the horizon was too short to tell
            return {"error": math.nan, "decided": False, "eta": eta,
                    "detail": f"sharpness had not reached 2/eta when max_steps={r['steps']} stopped the run"}
        return {"error": 1.0, "decided": True, "eta": eta, "detail": "sharpness never reached 2/eta before L < eps"}
    start = at_edge[0]
    phase = S[start:]
    dev = float(np.median(np.abs(phase / level - 1)))
    above, below = float(np.mean(phase > level)), float(np.mean(phase < level))
    l1 = np.asarray(r["l1"], float)
    avg = 0.5 * (l1[:-1] + l1[1:])  # two-step average removes the period-2 swing
    k0 = int(steps[start])
    growth = avg[-1] / avg[min(k0, len(avg) - 1)] - 1 if len(avg) else math.nan
    raw_up = float(np.mean(np.diff(l1[k0:]) > 0)) if len(l1) - k0 > 2 else math.nan
    steps_dS = np.diff(phase)
    oscillates = bool(np.any(steps_dS > 0) and np.any(steps_dS < 0))
    error = max(dev, 0.0 if oscillates else 1.0, 0.0 if growth > 0 else 1.0)
    return {"error": error, "decided": True, "eta": eta, "level": level, "median_dev": dev, "oscillates": oscillates,
            "frac_above": above,
            "frac_below": below, "l1_growth_avg2": growth, "raw_l1_increasing_fraction": raw_up,
            "phase_start_step": k0, "steps": r["steps"],
            "detail": f"eta={eta:.4g}: EoS from step {k0} of {r['steps']}; median|S/(2/eta)-1|={dev:.3g}, "
                      f"{above:.0%} above / {below:.0%} below 2/eta; 2-step-averaged l1 {growth:+.2%} over the "
                      f"phase (raw l1 rises on {raw_up:.0%} of steps)"}


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion k/n.

    Parameters
    ----------
    k : int
        Successes.
    n : int
        Trials (NaNs for n <= 0).
    z : float
        The normal quantile (default the two-sided 95 % one).

    Returns
    -------
    tuple of float
        (low, high).

    Examples
    --------
    >>> [round(b, 6) for b in wilson_interval(5, 10)], wilson_interval(0, 0)
    ([0.236593, 0.763407], (nan, nan))
    """
    if n <= 0:
        return (math.nan, math.nan)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


E5_MIN_ARM = 2  # runs each arm of the U needs: a line through them


def relative_test_errors(sweep: dict, eta_c: float) -> tuple[np.ndarray, np.ndarray]:
    r"""(m = η/η_c, e) over the runs that converged (reached eps) with a finite test error, sorted by m, with e the
    test error relative to its mean over those runs (so a slope reads "share of the error per e-fold of η").

    Parameters
    ----------
    sweep : dict
        A stored sweep; each run's ``final`` holds ``test_error``.
    eta_c : float
        The sweep's critical step :math:`\eta_c`.

    Returns
    -------
    tuple of numpy.ndarray
        m and the relative error; empty when η_c is not a positive number or the mean error is not positive.

    Examples
    --------
    >>> runs = [{"eta": m, "outcome": "converged", "final": {"test_error": e}} for m, e in ((2, 0.3), (1, 0.1))]
    >>> m, e = relative_test_errors({"runs": runs + [{"eta": 4, "outcome": "diverged"}]}, 1.0)
    >>> m.tolist(), e.round(3).tolist()
    ([1.0, 2.0], [0.5, 1.5])
    """
    if not (math.isfinite(eta_c) and eta_c > 0):
        return np.array([]), np.array([])
    pairs = sorted((r["eta"] / eta_c, json_float((r.get("final") or {}).get("test_error")))
                   for r in sweep["runs"] if r["outcome"] == "converged")  # a run cut at max_steps is undertrained
    pairs = [(m, e) for m, e in pairs if math.isfinite(e)]
    m, e = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    if e.size == 0 or not e.mean() > 0:
        return np.array([]), np.array([])
    return m, e / e.mean()


def u_break_multiple(sweeps, eta_cs) -> float:
    r"""Where E5's two lines meet, chosen on *other* seeds' sweeps: the interior grid multiple m = η/η_c (neither
    the smallest nor the largest of the runs that did not diverge) at which the mean relative test error over
    ``sweeps`` is lowest. A seed's statistic (:func:`u_arm_slopes`) reads the break found on the other seeds, so the
    test noise that places the break cannot also make the arms (cross-fitting); NaN when no multiple is interior.

    Parameters
    ----------
    sweeps : list of dict
        The other seeds' sweeps (the same grid of multiples).
    eta_cs : list of float
        Their critical steps.

    Returns
    -------
    float
        The break's multiple.

    Examples
    --------
    >>> def sweep(errors):
    ...     return {"runs": [{"eta": m, "outcome": "converged", "final": {"test_error": e}} for m, e in errors.items()]}
    >>> u_break_multiple([sweep({0.5: 0.3, 1.0: 0.22, 2.0: 0.2, 4.0: 0.3}),
    ...                   sweep({0.5: 0.3, 1.0: 0.25, 2.0: 0.2, 4.0: 0.3})], [1.0, 1.0])
    2.0
    """
    table = relative_errors_by_multiple(sweeps, eta_cs)
    interior = sorted(table)[1:-1]
    if not interior:
        return math.nan
    return min(interior, key=lambda mi: float(np.mean(table[mi])))


def relative_errors_by_multiple(sweeps, eta_cs) -> dict[float, list[float]]:
    r"""The relative test errors (:func:`relative_test_errors`) of several seeds' sweeps, gathered by grid multiple
    m = η/η_c (rounded to 3 decimals, so the seeds' grids meet): what :func:`u_break_multiple` averages and the E5
    figure draws.

    Parameters
    ----------
    sweeps : list of dict
        The seeds' sweeps.
    eta_cs : list of float
        Their critical steps.

    Returns
    -------
    dict
        m -> the seeds' relative errors there.

    Examples
    --------
    >>> def sweep(errors):
    ...     return {"runs": [{"eta": m, "outcome": "converged", "final": {"test_error": e}} for m, e in errors.items()]}
    >>> relative_errors_by_multiple([sweep({1.0: 0.25, 2.0: 0.75}), sweep({1.0: 0.5, 2.0: 0.5})], [1.0, 1.0])
    {1.0: [0.5, 1.0], 2.0: [1.5, 1.0]}
    """
    table: dict[float, list[float]] = {}
    for sw, ec in zip(sweeps, eta_cs):
        m, e = relative_test_errors(sw, ec)
        for mi, ei in zip(np.round(m, 3), e):
            table.setdefault(float(mi), []).append(float(ei))
    return table


def u_arm_slopes(sweep: dict, eta_c: float, break_multiple: float) -> float:
    r"""E5's seed statistic, the two-lines test of a U. With :math:`e` the test error relative to its mean
    (:func:`relative_test_errors`), :math:`u = \ln(\eta/\eta_c)` and the break :math:`m_b` (found on the other seeds,
    :func:`u_break_multiple`), :math:`b_L` and :math:`b_R` are the least-squares slopes of e against u over the runs
    with :math:`m \le m_b` and with :math:`m \ge m_b` (the run at the break, or the one nearest it, in both):

    .. math:: U = \min(-b_L,\; b_R).

    U > 0 when the error falls into the break and rises after it (a U with its best η inside); U < 0 when either
    arm goes the other way (a monotone curve, a bump); U ≈ 0 when an arm is flat (a hockey stick: flat, then rising,
    is not a U, though a quadratic fitted to it has a minimum inside). Units: the share of the mean error per
    e-fold of η. NaN when an arm has fewer than :data:`E5_MIN_ARM` runs.

    Parameters
    ----------
    sweep : dict
        A stored sweep; each run's ``final`` holds ``test_error``.
    eta_c : float
        The sweep's critical step.
    break_multiple : float
        :math:`m_b`.

    Returns
    -------
    float
        U.

    Examples
    --------
    >>> def sweep(errors):
    ...     return {"runs": [{"eta": m, "outcome": "converged", "final": {"test_error": e}} for m, e in errors.items()]}
    >>> u = sweep({0.5: 0.30, 1.0: 0.22, 2.0: 0.20, 4.0: 0.30})
    >>> round(u_arm_slopes(u, 1.0, 2.0), 3) > 0, u_arm_slopes(sweep({0.5: .3, 1: .25, 2: .2, 4: .15}), 1.0, 2.0) < 0
    (True, True)
    >>> abs(round(u_arm_slopes(sweep({0.5: 0.2, 1.0: 0.2, 2.0: 0.2, 4.0: 0.3}), 1.0, 1.0), 12))  # a hockey stick
    0.0
    """
    m, e = relative_test_errors(sweep, eta_c)
    if m.size == 0 or not math.isfinite(break_multiple):
        return math.nan
    b = m[int(np.argmin(np.abs(np.log(m / break_multiple))))]
    u = np.log(m)
    left, right = m <= b, m >= b
    if left.sum() < E5_MIN_ARM or right.sum() < E5_MIN_ARM:
        return math.nan
    slope_left = float(np.polyfit(u[left], e[left], 1)[0])
    slope_right = float(np.polyfit(u[right], e[right], 1)[0])
    return min(-slope_left, slope_right)


def flow_side_error_slope(sweep: dict, eta_c: float) -> float:
    r"""E5's data control: the least-squares slope of the relative test error (:func:`relative_test_errors`) against
    :math:`\ln(\eta/\eta_c)` over the flow side (η ≤ (1 − SIDE_MARGIN) η_c), where GD follows the gradient flow
    and η should not change what the network learns; NaN with fewer than 2 runs there.

    Parameters
    ----------
    sweep : dict
        A stored sweep.
    eta_c : float
        The sweep's critical step.

    Returns
    -------
    float
        The slope, in the units of :func:`u_arm_slopes`.

    Examples
    --------
    >>> def sweep(errors):
    ...     return {"runs": [{"eta": m, "outcome": "converged", "final": {"test_error": e}} for m, e in errors.items()]}
    >>> abs(flow_side_error_slope(sweep({0.5: 0.2, 0.8: 0.2, 1.5: 0.1, 2: 0.1}), 1.0)) < 1e-12  # flat below eta_c
    True
    >>> flow_side_error_slope(sweep({0.8: 0.2, 1.5: 0.1}), 1.0)   # one run below eta_c: no slope
    nan
    """
    m, e = relative_test_errors(sweep, eta_c)
    flow = m <= 1 - SIDE_MARGIN
    if flow.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(m[flow]), e[flow], 1)[0])


def e5_one_sweep(sweep: dict, eta_c: float) -> dict:
    """E5 on one sweep (``biasaudit validate eos``): the test errors with their 95 % Wilson intervals, and the
    two-lines U (:func:`u_arm_slopes`) with the break at this sweep's own lowest interior error. That break is
    not cross-fitted (the test noise that places it also shapes the arms), and one seed decides nothing: the seed
    studies ``eos.torch.e5.u_shape.*`` decide; here ``decided`` is always False.

    Parameters
    ----------
    sweep : dict
        A stored sweep; each run's ``final`` holds ``test_error`` and ``n_test``.
    eta_c : float
        The sweep's critical step.

    Returns
    -------
    dict
        ``U``, ``break_multiple``, ``etas``, ``test_error``, ``ci95``, ``n_test``, ``decided``, ``error`` (NaN) and
        ``detail``.

    Examples
    --------
    >>> errors = {0.5: 0.30, 1.0: 0.22, 2.0: 0.20, 4.0: 0.30}
    >>> runs = [{"eta": m, "outcome": "converged", "final": {"test_error": e, "n_test": 1000}}
    ...         for m, e in errors.items()]
    >>> res = e5_one_sweep({"runs": runs}, 1.0)
    >>> res["break_multiple"], res["U"] > 0, res["decided"]
    (2.0, True, False)
    """
    runs = [r for r in sweep["runs"] if r["outcome"] == "converged"  # the runs relative_test_errors reads
            and math.isfinite(json_float((r.get("final") or {}).get("test_error")))]
    errs = [json_float(r["final"]["test_error"]) for r in runs]
    n = int(runs[0]["final"].get("n_test", 0)) if runs else 0
    b = u_break_multiple([sweep], [eta_c])
    u = u_arm_slopes(sweep, eta_c, b)
    detail = (f"test error {min(errs):.3f}..{max(errs):.3f} (n={n}) over {len(runs)} runs; two-lines U = {u:+.4f} "
              f"with the break at {b:.3g} eta_c (found on this sweep: not cross-fitted; one seed decides nothing)"
              if runs else "no run with a test error")
    return {"U": u, "break_multiple": b, "etas": [r["eta"] for r in runs], "test_error": errs,
            "ci95": [wilson_interval(round(e * n), n) for e in errs], "n_test": n, "decided": False,
            "error": math.nan, "detail": detail}
