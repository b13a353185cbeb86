r"""The statistics of "minor first, major last", read in normalised time on single runs and seed pairs.

A run of the ladder trains until its training loss reaches a target (or a horizon) and is evaluated densely
early. For a run with evaluation steps t_0 = 0 < t_1 < … < t_K = t_fit (its own time to fit) and a minor-share
curve m(t) (``minor_margin_share``: the minor patch's share of the margin, or ``grad_minor_share``: its share of
the input-gradient mass), in normalised time τ = t / t_fit:

* **early** share: the mean of m over the evaluations with 0 < τ ≤ 1/2 (:data:`EARLY_TAU`);
* **late** share: m at τ = 1.

Per seed pair (SAM and GD on the same seed, data and initialisation):

=====================  ======================================================================================
statistic              value
=====================  ======================================================================================
``did`` (primary)      D = (SAM early − SAM late) − (GD early − GD late): SAM moves from the minor feature to
                       the major one over training more than GD does ("minor first, major last")
``early_difference``   SAM early − GD early: SAM leans on the minor feature more than GD early in training
``dominance``          SAM's early share > 1/2 and late share < 1/2 (counted per seed, reported)
=====================  ======================================================================================

A pair enters only when both runs reached their loss target (status ``ok``); the others are listed with their
outcomes (``collapsed``, ``slow``, ``diverged``) and never imputed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["EARLY_TAU", "METRICS", "STATISTICS", "early_late", "did", "early_difference", "dominance",
           "paired_values"]

EARLY_TAU = 0.5  # "early": 0 < t / t_fit <= 1/2
METRICS = ("minor_margin_share", "grad_minor_share")


def early_late(run: dict, metric: str) -> tuple[float, float]:
    """(early, late) share of ``metric`` in the run's own normalised time τ = t / t_fit (module docstring).

    Parameters
    ----------
    run : dict
        A run's record: ``run["curves"]["step"]`` its evaluation steps (the last is t_fit) and
        ``run["curves"][metric]`` the share at each.
    metric : str
        One of :data:`METRICS`.

    Returns
    -------
    tuple of float
        The mean share over 0 < τ ≤ :data:`EARLY_TAU` (nan without such an evaluation) and the share at τ = 1; (nan,
        nan) with fewer than two evaluations or t_fit <= 0.

    Examples
    --------
    >>> sam = {"curves": {"step": [0, 25, 50, 100], "minor_margin_share": [0.5, 0.7, 0.6, 0.2]}}
    >>> [round(share, 12) for share in early_late(sam, "minor_margin_share")]
    [0.65, 0.2]
    """
    steps = np.asarray(run["curves"]["step"], dtype=float)
    values = np.asarray(run["curves"][metric], dtype=float)
    if steps.size < 2 or steps[-1] <= 0:
        return math.nan, math.nan
    tau = steps / steps[-1]
    window = (tau > 0) & (tau <= EARLY_TAU) & np.isfinite(values)
    early = float(values[window].mean()) if window.any() else math.nan
    return early, float(values[-1])


def did(sam: dict, gd: dict, metric: str) -> float:
    """D = (SAM early − SAM late) − (GD early − GD late).

    Parameters
    ----------
    sam : dict
        The SAM run's record: ``curves`` holds ``step`` (its evaluation steps, ending at t_fit) and ``metric``.
    gd : dict
        The GD run's record on the same seed, the same way.
    metric : str
        One of :data:`METRICS`.

    Returns
    -------
    float
        D (nan where a share is).

    Examples
    --------
    >>> sam = {"curves": {"step": [0, 25, 50, 100], "minor_margin_share": [0.5, 0.7, 0.6, 0.2]}}
    >>> gd = {"curves": {"step": [0, 40, 80], "minor_margin_share": [0.5, 0.3, 0.25]}}
    >>> round(did(sam, gd, "minor_margin_share"), 12)
    0.4
    """
    (se, sl), (ge, gl) = early_late(sam, metric), early_late(gd, metric)
    return (se - sl) - (ge - gl)


def early_difference(sam: dict, gd: dict, metric: str) -> float:
    """SAM early − GD early.

    Parameters
    ----------
    sam : dict
        The SAM run's record: ``curves`` holds ``step`` (its evaluation steps, ending at t_fit) and ``metric``.
    gd : dict
        The GD run's record on the same seed, the same way.
    metric : str
        One of :data:`METRICS`.

    Returns
    -------
    float
        The difference (nan where a share is).

    Examples
    --------
    >>> sam = {"curves": {"step": [0, 25, 50, 100], "minor_margin_share": [0.5, 0.7, 0.6, 0.2]}}
    >>> gd = {"curves": {"step": [0, 40, 80], "minor_margin_share": [0.5, 0.3, 0.25]}}
    >>> round(early_difference(sam, gd, "minor_margin_share"), 12)
    0.35
    """
    return early_late(sam, metric)[0] - early_late(gd, metric)[0]


def dominance(sam: dict, gd: dict, metric: str) -> float:
    """1.0 when SAM's early share exceeds 1/2 and its late share is below 1/2, else 0.0 (GD is not read).

    Parameters
    ----------
    sam : dict
        The SAM run's record: ``curves`` holds ``step`` (its evaluation steps, ending at t_fit) and ``metric``.
    gd : dict
        The GD run's record on the same seed, the same way.
    metric : str
        One of :data:`METRICS`.

    Returns
    -------
    float
        1.0 or 0.0.

    Examples
    --------
    >>> sam = {"curves": {"step": [0, 25, 50, 100], "minor_margin_share": [0.5, 0.7, 0.6, 0.2]}}
    >>> gd = {"curves": {"step": [0, 40, 80], "minor_margin_share": [0.5, 0.3, 0.25]}}
    >>> dominance(sam, gd, "minor_margin_share")
    1.0
    """
    early, late = early_late(sam, metric)
    return float(early > 0.5 and late < 0.5)


STATISTICS: dict[str, Callable[[dict, dict, str], float]] = {
    "did": did, "early_difference": early_difference, "dominance": dominance}


def paired_values(pairs: list[tuple[dict, dict]], statistic: str, metric: str) -> dict:
    """The seed values of ``statistic`` over ``(sam_run, gd_run)`` pairs whose runs both reached their target.

    Parameters
    ----------
    pairs : list of tuple of (dict, dict)
        (SAM run, GD run) records with ``config["seed"]``, ``status`` (``ok`` when the run reached its target) and
        ``curves``.
    statistic : str
        A key of :data:`STATISTICS`.
    metric : str
        One of :data:`METRICS`.

    Returns
    -------
    dict
        ``{"values", "seeds", "missing": [{"seed", "sam", "gd"}]}`` (the outcomes of the pairs left out).

    Examples
    --------
    >>> sam = {"curves": {"step": [0, 25, 50, 100], "minor_margin_share": [0.5, 0.7, 0.6, 0.2]}}
    >>> gd = {"curves": {"step": [0, 40, 80], "minor_margin_share": [0.5, 0.3, 0.25]}}
    >>> ok = {"config": {"seed": 0}, "status": "ok"}
    >>> pairs = [({**sam, **ok}, {**gd, **ok}), ({**sam, "config": {"seed": 1}, "status": "slow"}, {**gd, **ok})]
    >>> out = paired_values(pairs, "did", "minor_margin_share")
    >>> [round(v, 12) for v in out["values"]], out["seeds"], out["missing"]
    ([0.4], [0], [{'seed': 1, 'sam': 'slow', 'gd': 'ok'}])
    """
    function = STATISTICS[statistic]
    values, seeds, missing = [], [], []
    for sam, gd in pairs:
        seed = sam["config"]["seed"]
        if sam["status"] == "ok" and gd["status"] == "ok":
            value = function(sam, gd, metric)
            if math.isfinite(value):
                values.append(float(value))
                seeds.append(seed)
                continue
        missing.append({"seed": seed, "sam": sam["status"], "gd": gd["status"]})
    return {"values": values, "seeds": seeds, "missing": missing}
