r"""Placebo calibration claims: a family of seed studies' decisions, run on simulated seed values where the answer
is known (:mod:`biasaudit.validation.placebo`), confirm a false claim or refute a true one at most at the rate α.

Each placebo's error rate is resolved to about ±0.03 by its 300 simulated studies, so a claim is decided on the
rates' Wilson 95 % intervals: confirmed when every upper end lies below α + r, refuted when some lower end lies
above α; r (:func:`resolution`) is how far the upper end of a rate at exactly α reaches above α (0.031 at α = 0.05
over 300 studies), so a decision calibrated at α by design, as TOST at its margin is, passes. Its negative control replaces the decisions by the mean alone (no seed interval), which
refutes an effect at its edge about half the time.

:func:`calibration_claim` builds one; ``eos.torch.decision_calibration`` and ``sam.torch.decision_calibration``
state theirs.
"""

from __future__ import annotations

import math
import sys

import sympy as sp

from biasaudit.contract import ExperimentContract
from biasaudit.domain import Domain, Fixed
from biasaudit.ledger import Claim, Observation, Tolerance, broken_hypothesis

__all__ = ["calibration_claim", "placebo_rows", "resolution", "CALIBRATED"]

CALIBRATED = Tolerance(
    "placebo_rate", 0.0,
    "0 when every error rate's Wilson 95 % upper end lies below alpha + r, r the reach above alpha of the upper end "
    "of a rate at exactly alpha (0.031 at alpha 0.05 over 300 simulated studies); otherwise how far the largest "
    "upper end reaches above it, relative to alpha")


_ROUNDING = 1e-12  # a rate at exactly alpha meets level + resolution up to the float rounding of that sum


def resolution(level: float, n_studies: int) -> float:
    """How far the Wilson 95 % upper end of a rate at exactly ``level`` over ``n_studies`` reaches above it.

    Examples
    --------
    >>> round(resolution(0.05, 300), 4)
    0.0308
    """
    from biasaudit.validation.eos_stats import wilson_interval

    return wilson_interval(round(level * n_studies), n_studies)[1] - level

_alpha, _p_confirm, _p_refute = sp.symbols("alpha P_false_confirm P_false_refute", positive=True)


def placebo_rows(placebos, level: float, rule: str, read) -> list[dict]:
    """:func:`~biasaudit.validation.placebo.error_rates` of each placebo, with ``read`` (placebo -> ``"family"`` or
    ``"member"``) naming the rate a claim states: the family-wise one, or each member's alone."""
    from biasaudit.validation.placebo import error_rates

    rows = []
    for p in placebos:
        r = error_rates(p, level=level, rule=rule)
        which = read(p)
        r["reads"] = which
        r["read_rate"], r["read_interval"] = ((r["error_rate"], r["error_interval"]) if which == "family"
                                              else (r["member_error_rate"], r["member_error_interval"]))
        rows.append(r)
    return rows


def _label(p: dict) -> str:
    family = f" (Holm family of {p['family']})" if p["family"] > 1 else ""
    return f"{p['decision']}{family} {p['truth']} {p['law']}"


def calibration_claim(cid: str, paper: str, placebos, *, level: float, title: str, source: str, domain: str,
                      notes: str, read=lambda p: "family") -> Claim:
    """The claim that every placebo's stated error rate (``read``, :func:`placebo_rows`) is at most ``level`` (module
    docstring); defined where this is called (its id's folder)."""
    caller = sys._getframe(1)
    looks = sorted({p.looks for p in placebos})

    def predict(params) -> dict:
        return {"level": level, "rule": "contract"}

    def evaluate(params, predicted) -> Observation:
        level = predicted["level"]
        rows = placebo_rows(placebos, level, predicted["rule"], read)
        upper = max(r["read_interval"][1] for r in rows)
        lower = max(r["read_interval"][0] for r in rows)
        worst = max(rows, key=lambda r: r["read_rate"])
        reach = resolution(level, placebos[0].n_studies)
        decided = upper <= level + reach + _ROUNDING or lower > level
        error = max(0.0, upper - level - reach - _ROUNDING) / level if decided else math.nan
        table = "; ".join(
            f"{_label(r['placebo'])}: wrong {r['read_rate']:.3f} [{r['read_interval'][0]:.3f}, "
            f"{r['read_interval'][1]:.3f}]" + (" per member" if r["reads"] == "member" else "")
            + f", mean seeds {r['mean_seeds']:.1f}" for r in rows)
        detail = (f"decisions by '{predicted['rule']}' over the looks {', '.join(map(str, looks))} at alpha "
                  f"{level:g}, {placebos[0].n_studies} studies each (resolution {reach:.3f}): {table}; worst "
                  f"{_label(worst['placebo'])} at {worst['read_rate']:.3f}")
        return Observation({"rows": rows, "level": level, "resolution": reach}, error, detail, decided=decided)

    return Claim(
        id=cid, paper=paper, kind="experiment", source=source, title=title,
        hypotheses=(sp.Gt(_alpha, 0, evaluate=False),),
        statement=sp.And(sp.Le(_p_confirm, _alpha), sp.Le(_p_refute, _alpha)),
        no_closed_form="error rates of a decision rule, counted over simulated studies",
        predict=predict, evaluate=evaluate, tolerance=CALIBRATED,
        domain=Domain({"looks": Fixed(looks[0] if len(looks) == 1 else tuple(looks))}, description=domain),
        negative_control=broken_hypothesis(
            "the decision's seed interval", lambda p, v: (p, {**v, "rule": "point"}),
            reason="the mean alone decides (no interval): an effect at its edge is refuted about half the time"),
        contract=ExperimentContract(role="cross_check"), samples={"ci": 1, "thorough": 1}, controls=1, notes=notes,
        defined_in=caller.f_globals["__name__"], line=caller.f_lineno)
