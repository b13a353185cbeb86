r"""The runs of "minor first, major last" and the seed values the claims read.

:func:`cached_ladder_run` trains (or reads from the run cache) one run of :mod:`~biasaudit.validation.
sam_ladder_config`; it is the audit's run unit. :func:`ladder_values` reads every run of a model and returns,
for each statistic of :mod:`~biasaudit.validation.sam_ladder_stats` and each minor-share metric, the seed values
of the primary comparison (SAM against GD at 1.5 α_50), of the dose-response (every multiple) and of the four
data controls at the primary multiple:

=============  =======================================================================================
control        seed value of the statistic
=============  =======================================================================================
``aa``         GD on seed s + 5000 in SAM's place, against GD on seed s (the same optimizer twice)
``randsam``    RandSAM (a random perturbation of norm ρ) in SAM's place, against GD
``equal``      SAM against GD on the equal-intensity layout (no minor and no major feature)
``swapped``    (SAM against GD on the swapped layout) − (SAM against GD on the standard layout): the effect
               follows the feature's strength, not its position
=============  =======================================================================================

``equal`` and ``swapped`` exist on the patch images only (:func:`model_controls`).
"""

from __future__ import annotations

import functools
import math

from biasaudit.validation.sam_ladder_config import (LAYOUT_ARMS, LadderRun, control_arms, ladder_runs, ladder_settings,
                                                    multiples, run_config)
from biasaudit.validation.sam_ladder_stats import METRICS, STATISTICS, paired_values

__all__ = ["CONTROLS", "model_controls", "cached_ladder_run", "ladder_values", "outcome_counts"]

CONTROLS = ("aa", "randsam", "equal", "swapped")


def model_controls(model: str) -> tuple[str, ...]:
    """The data controls of ``model`` (:data:`CONTROLS` less the patch layouts' where its task has none)."""
    layouts = set(LAYOUT_ARMS) <= set(control_arms(model))
    return tuple(c for c in CONTROLS if layouts or c not in ("equal", "swapped"))


def cached_ladder_run(run: LadderRun, tier: str, device: str = "auto", *, horizon=None) -> dict:
    """One ladder run's record (:func:`biasaudit.validation.sam_runs.cached_run`): trained once, then read."""
    from biasaudit.validation.sam_runs import cached_run

    return cached_run(run_config(run, tier, device=device, horizon=horizon))


@functools.cache
def _records(model: str, tier: str, seeds: tuple | None = None, horizon: int | None = None) -> dict:
    return {(r.multiple, r.arm, r.seed): cached_ladder_run(r, tier, horizon=horizon)
            for r in ladder_runs(model, tier, seeds=seeds)}


def _pairs(records: dict, multiple: str, sam_arm: str, gd_arm: str, seeds) -> list[tuple[dict, dict]]:
    return [(records[(multiple, sam_arm, s)], records[(multiple, gd_arm, s)]) for s in seeds]


def ladder_values(model: str, tier: str, *, seeds=None, horizon=None) -> dict:
    """``{metric: {statistic: {"primary": paired, "dose": {multiple: paired}, "controls": {name: paired}}}}``,
    each ``paired`` as :func:`~biasaudit.validation.sam_ladder_stats.paired_values` returns it; ``seeds`` and
    ``horizon`` replace the tier's (:func:`~biasaudit.validation.sam_ladder_config.ladder_settings`)."""
    settings = ladder_settings(model, tier, seeds=seeds, horizon=horizon)
    records = _records(model, tier, _seeds(seeds), horizon)
    seeds = settings["seeds"]
    out: dict = {}
    for metric in METRICS:
        out[metric] = {}
        for statistic in STATISTICS:
            def paired(multiple, sam_arm, gd_arm, statistic=statistic, metric=metric):
                return paired_values(_pairs(records, multiple, sam_arm, gd_arm, seeds), statistic, metric)

            main = paired("primary", "sam", "gd")
            controls = {"aa": paired("primary", "aa", "gd"), "randsam": paired("primary", "randsam", "gd")}
            if "equal" in model_controls(model):
                swapped = paired("primary", "sam_swapped", "gd_swapped")
                by_seed = dict(zip(main["seeds"], main["values"]))
                diff = [v - by_seed[s] for s, v in zip(swapped["seeds"], swapped["values"]) if s in by_seed]
                diff_seeds = [s for s in swapped["seeds"] if s in by_seed]
                controls["equal"] = paired("primary", "sam_equal", "gd_equal")
                controls["swapped"] = {"values": diff, "seeds": diff_seeds,
                                       "missing": [{"seed": s, "note": "a swapped or standard pair left out"}
                                                   for s in seeds if s not in diff_seeds]}
            out[metric][statistic] = {
                "primary": main,
                "dose": {m: paired(m, "sam", "gd") for m in multiples(model, tier)},
                "controls": controls,
            }
    return out


def outcome_counts(model: str, tier: str, *, seeds=None, horizon=None) -> dict:
    """``{multiple: {arm: {outcome: count}}}`` over every run of the model (runs that fail to fit are counted)."""
    counts: dict = {}
    for (multiple, arm, _), record in _records(model, tier, _seeds(seeds), horizon).items():
        by_arm = counts.setdefault(multiple, {}).setdefault(arm, {})
        by_arm[record["status"]] = by_arm.get(record["status"], 0) + 1
    return counts


def median_fit_steps(model: str, tier: str, multiple: str, arm: str, *, seeds=None, horizon=None) -> float:
    """The median number of steps to the loss target of the runs of one arm that reached it (NaN if none)."""
    import numpy as np

    steps = [r["curves"]["step"][-1] for (m, a, _), r in _records(model, tier, _seeds(seeds), horizon).items()
             if m == multiple and a == arm and r["status"] == "ok"]
    return float(np.median(steps)) if steps else math.nan


def _seeds(seeds) -> tuple | None:
    return None if seeds is None else tuple(int(s) for s in seeds)
