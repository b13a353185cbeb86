r"""The statistic of SAM's collapse boundary: a run's outcome read as a signature, contrasted across alpha.

Each run trains until its training loss reaches the design's target or its horizon (at least 4 times GD's time
to fit) and ends with one outcome (:func:`biasaudit.validation.sam_training.run_outcome`): ``ok`` (reached the
target), ``collapsed`` (the loss stayed at its initial value over the second half of the horizon and the output
scale did not grow), ``slow`` (neither: still moving) or ``diverged``. Write c = 1 for collapsed and c = 0 for
ok. With a treated arm T (SAM) and a reference arm R (GD) on the same seed, at an alpha below SAM's boundary
(``below``) and one well above it (``above``), the seed's **collapse contrast** is

    C = [c(T, below) − c(R, below)] − [c(T, above) − c(R, above)].

Regime 1 of the theory gives C = 1 on every seed (SAM collapses below alpha_c, GD fits on both sides, SAM fits
above); C = 0 when SAM has no boundary (it collapses on both sides, or on neither) or when GD collapses where
SAM does. A seed with a ``slow`` or ``diverged`` run among its four enters no value: it is listed with its
outcomes and counted, never imputed as collapsed or as fitted.

Across the SAM radius at one alpha between SAM's boundaries for a small rho_lo and a large rho_hi (the theory's
alpha_c is proportional to rho), the seed's **rho contrast** (:func:`rho_contrast`) is

    S = c(T, rho_hi) − c(T, rho_lo),

1 on every seed where the boundary moves with rho as the theory says, 0 where it does not move across alpha; the
same rule for slow and diverged runs.
"""

from __future__ import annotations

import math

__all__ = ["OUTCOMES", "POINTS", "MAX_MISSING_SHARE", "collapse_indicator", "collapse_contrast", "paired_contrast",
           "rho_contrast", "arm_readings", "study_verdict", "positive_control_record"]

OUTCOMES = ("ok", "collapsed", "slow", "diverged")  # every outcome a run can end with
POINTS = ("below", "above")  # the two alphas of a design: below SAM's boundary, and well above it
MAX_MISSING_SHARE = 0.25  # more seeds than this with a slow or diverged run: the study is undecided
_INDICATOR = {"ok": 0.0, "collapsed": 1.0}


def collapse_indicator(outcome: str) -> float:
    """1 for ``collapsed``, 0 for ``ok``, nan for an outcome that is neither (``slow``, ``diverged``).

    Parameters
    ----------
    outcome : str
        A run's outcome, one of :data:`OUTCOMES`.

    Returns
    -------
    float
        c, the run's collapse indicator.

    Examples
    --------
    >>> collapse_indicator("collapsed"), collapse_indicator("ok"), math.isnan(collapse_indicator("slow"))
    (1.0, 0.0, True)
    """
    return _INDICATOR.get(outcome, math.nan)


def collapse_contrast(treated_below: str, reference_below: str, treated_above: str, reference_above: str) -> float:
    """C = [c(T, below) − c(R, below)] − [c(T, above) − c(R, above)] from the four runs' outcomes (module
    docstring); nan when any outcome is neither ``ok`` nor ``collapsed``.

    Parameters
    ----------
    treated_below, reference_below, treated_above, reference_above : str
        The outcomes of the treated arm (SAM, or a control arm in SAM's place) and of GD, below and above.

    Returns
    -------
    float
        C, in {−2, −1, 0, 1, 2}; nan where a run was slow or diverged.

    Examples
    --------
    >>> collapse_contrast("collapsed", "ok", "ok", "ok")
    1.0
    >>> collapse_contrast("collapsed", "collapsed", "ok", "ok"), collapse_contrast("collapsed", "ok", "collapsed", "ok")
    (0.0, 0.0)
    """
    c = [collapse_indicator(o) for o in (treated_below, reference_below, treated_above, reference_above)]
    return (c[0] - c[1]) - (c[2] - c[3])


def paired_contrast(grid: dict, treated: str, reference: str = "gd") -> dict:
    """The seed values of C with ``treated`` in SAM's place, over the seeds of a design's runs.

    Parameters
    ----------
    grid : dict
        ``{point: {arm: [run, ...]}}`` for both :data:`POINTS`, each arm's runs in seed order; a run is a record
        with ``config["seed"]`` and ``status`` (its outcome).
    treated, reference : str
        The arms compared (``"sam"``, ``"aa"``, ``"randsam"`` against ``"gd"``).

    Returns
    -------
    dict
        ``{"values", "seeds", "missing": [{"seed", "<arm>@<point>": outcome, ...}]}``; a missing seed lists the
        outcomes of its four runs.

    Examples
    --------
    >>> run = lambda seed, status: {"config": {"seed": seed}, "status": status}
    >>> grid = {"below": {"sam": [run(0, "collapsed"), run(1, "slow")], "gd": [run(0, "ok"), run(1, "ok")]},
    ...         "above": {"sam": [run(0, "ok"), run(1, "ok")], "gd": [run(0, "ok"), run(1, "ok")]}}
    >>> out = paired_contrast(grid, "sam")
    >>> out["values"], out["seeds"], out["missing"][0]["sam@below"]
    ([1.0], [0], 'slow')
    """
    values, seeds, missing = [], [], []
    runs = {(arm, p): grid[p][arm] for p in POINTS for arm in (treated, reference)}
    for i, run in enumerate(runs[treated, "below"]):
        four = {f"{arm}@{p}": runs[arm, p][i]["status"] for p in POINTS for arm in (treated, reference)}
        value = collapse_contrast(four[f"{treated}@below"], four[f"{reference}@below"], four[f"{treated}@above"],
                                  four[f"{reference}@above"])
        seed = run["config"]["seed"]
        if math.isfinite(value):
            values.append(value)
            seeds.append(seed)
        else:
            missing.append({"seed": seed, **four})
    return {"values": values, "seeds": seeds, "missing": missing}


def rho_contrast(high: list, low: list) -> dict:
    """The seed values of S = c(T, rho_hi) − c(T, rho_lo) (module docstring), the i-th run of ``high`` paired with
    the i-th of ``low``.

    Parameters
    ----------
    high, low : list
        The runs of the arm at the large and at the small radius (or, for the A/A control, the small radius from
        other seeds and the small radius), in seed order; a run is a record with ``config["seed"]`` and ``status``.

    Returns
    -------
    dict
        ``{"values", "seeds", "missing": [{"seed", "high", "low"}]}``: the seed of ``low`` names the pair; a missing
        pair (a slow or diverged run) lists both outcomes.

    Examples
    --------
    >>> run = lambda seed, status: {"config": {"seed": seed}, "status": status}
    >>> out = rho_contrast([run(0, "collapsed"), run(1, "collapsed"), run(2, "ok")],
    ...                    [run(0, "ok"), run(1, "slow"), run(2, "ok")])
    >>> out["values"], out["seeds"], out["missing"]
    ([1.0, 0.0], [0, 2], [{'seed': 1, 'high': 'collapsed', 'low': 'slow'}])
    """
    if len(high) != len(low):
        raise ValueError(f"rho_contrast pairs runs seed by seed: {len(high)} high against {len(low)} low")
    values, seeds, missing = [], [], []
    for h, lo in zip(high, low):
        value = collapse_indicator(h["status"]) - collapse_indicator(lo["status"])
        seed = lo["config"]["seed"]
        if math.isfinite(value):
            values.append(value)
            seeds.append(seed)
        else:
            missing.append({"seed": seed, "high": h["status"], "low": lo["status"]})
    return {"values": values, "seeds": seeds, "missing": missing}


def arm_readings(runs: dict) -> tuple[dict, dict, dict]:
    """What a design's arms did, read off their runs: per arm the count of each outcome, the collapsed share with its
    95 % Clopper-Pearson interval, and the median steps of the runs that reached the target (None without one).

    Parameters
    ----------
    runs : dict
        arm -> its runs (one per seed), each a record with ``status`` and ``curves["step"]``.

    Returns
    -------
    tuple of dict
        ``outcomes`` ({arm: {outcome: count}}), ``collapsed`` ({arm: [share, [lo, hi]]}) and ``fit_steps``
        ({arm: median steps or None}).

    Examples
    --------
    >>> run = lambda status, steps: {"status": status, "curves": {"step": [0, steps]}}
    >>> outcomes, collapsed, fit_steps = arm_readings({"sam": [run("collapsed", 90), run("ok", 40), run("ok", 60)]})
    >>> outcomes["sam"]["collapsed"], round(collapsed["sam"][0], 3), fit_steps["sam"]
    (1, 0.333, 50.0)
    """
    import numpy as np

    from biasaudit.validation.sam_stats import clopper_pearson

    outcomes = {arm: {o: sum(r["status"] == o for r in rs) for o in OUTCOMES} for arm, rs in runs.items()}
    collapsed = {arm: [c["collapsed"] / len(runs[arm]), list(clopper_pearson(c["collapsed"], len(runs[arm])))]
                 for arm, c in outcomes.items()}
    fit_steps = {arm: (float(np.median([r["curves"]["step"][-1] for r in rs if r["status"] == "ok"]))
                       if any(r["status"] == "ok" for r in rs) else None) for arm, rs in runs.items()}
    return outcomes, collapsed, fit_steps


def study_verdict(study: dict, positive_control: str | None, runs: str = "run") -> tuple[str, str]:
    """(verdict, why) of a seed study of collapse outcomes (the boundary and the ρ claims): the contract's gated
    verdict (:func:`biasaudit.validation.decision.gated_verdict`), undecided when more than
    :data:`MAX_MISSING_SHARE` of the seeds had a slow or diverged run (those seeds are left out, not imputed).

    Parameters
    ----------
    study : dict
        ``decision``, ``controls``, ``values``, ``missing`` and ``missing_share`` of the study.
    positive_control : str or None
        The positive control's verdict (``None`` for a claim that is its own positive control).
    runs : str
        Which runs a missing seed lacks, in words (default ``"run"``; the ρ study reads only SAM's).

    Returns
    -------
    tuple of str
        The verdict and the reason.

    Examples
    --------
    >>> from biasaudit.validation.decision import equivalence_control, three_way
    >>> study = {"decision": three_way([1.0] * 12, direction=1, delta=0.25), "values": [1.0] * 12, "missing": [],
    ...          "missing_share": 0.0, "controls": [equivalence_control("aa", [0.0] * 12, margin=0.25)]}
    >>> study_verdict(study, "confirmed")[0], study_verdict({**study, "missing_share": 0.3}, "confirmed")[0]
    ('confirmed', 'undecided')
    """
    from biasaudit.validation.decision import gated_verdict

    verdict, why = gated_verdict(study["decision"], study["controls"], positive_control)
    if study["missing_share"] > MAX_MISSING_SHARE:
        n = len(study["values"]) + len(study["missing"])
        verdict, why = "undecided", (f"{len(study['missing'])} of {n} seeds had a slow or diverged {runs} (more "
                                     f"than {MAX_MISSING_SHARE:.0%})")
    return verdict, why


def positive_control_record(study: dict, claim: str, statistic: str) -> dict:
    """The ``positive_control`` field of an effect claim's record, from its control's seed study.

    Parameters
    ----------
    study : dict
        The positive control's study (as :func:`study_verdict` reads it).
    claim : str
        The positive control's claim id.
    statistic : str
        The statistic both claims read.

    Returns
    -------
    dict
        ``claim``, ``statistic``, ``effect``, ``interval`` and ``verdict``.

    Examples
    --------
    >>> from biasaudit.validation.decision import equivalence_control, three_way
    >>> study = {"decision": three_way([1.0] * 12, direction=1, delta=0.25), "values": [1.0] * 12, "missing": [],
    ...          "missing_share": 0.0, "controls": [equivalence_control("aa", [0.0] * 12, margin=0.25)]}
    >>> positive_control_record(study, "x.diag", "m:f")["verdict"]
    'confirmed'
    """
    return {"claim": claim, "statistic": statistic, "effect": study["decision"].mean,
            "interval": list(study["decision"].interval), "verdict": study_verdict(study, None)[0]}

