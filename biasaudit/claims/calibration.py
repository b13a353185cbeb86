r"""Placebo calibration claims: a family of seed studies' decisions, run on simulated seed values where the answer
is known (:mod:`biasaudit.validation.placebo`), confirm a false claim or refute a true one at most at the rate α.

A rate over n simulated studies (300 each) is a binomial count, so a decision calibrated at α by design (TOST at
its margin is) reads α ± 0.013 at 300 studies. Each rate is read against α with a tolerance fixed here, two binomial
standard errors of a rate at α over its own count (:func:`rate_tolerance`: 0.025 over 300 studies, 0.018 over
600 members of Holm pairs). A rate is *within* α when it is at most α plus that tolerance, and *above* α when its
Wilson 95 % lower end exceeds α (:func:`rate_reading`). A rule at exactly α reads within 98 % of the time, and one
at 2α (0.10) reads above α about 90 % of the time at 300 studies. A claim that every rate is at most α is
confirmed when every rate reads within α, refuted when one reads above, and undecided otherwise. Its negative
control replaces the decisions by the mean alone (no seed interval), which refutes an effect at its edge about half
the time.

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

__all__ = ["calibration_claim", "placebo_rows", "rate_tolerance", "rate_reading", "CALIBRATED"]

CALIBRATED = Tolerance(
    "placebo_rate", 0.0,
    "0 when every error rate is at most alpha plus two binomial standard errors of a rate at alpha over its count "
    "(0.025 over 300 simulated studies); otherwise how far the largest reaches above that, relative to alpha")


def rate_tolerance(level: float, n: int) -> float:
    r"""Two binomial standard errors of a rate at ``level`` over ``n`` trials, :math:`2\sqrt{\alpha(1-\alpha)/n}`.

    Examples
    --------
    >>> round(rate_tolerance(0.05, 300), 4), round(rate_tolerance(0.05, 600), 4)
    (0.0252, 0.0178)
    """
    return 2.0 * math.sqrt(level * (1.0 - level) / n)


def rate_reading(rate: float, lower: float, n: int, level: float) -> str:
    """``"above"`` when the Wilson lower end ``lower`` exceeds ``level``, else ``"within"`` when ``rate`` is at most
    ``level`` + :func:`rate_tolerance`, else ``"unresolved"`` (module docstring).

    Examples
    --------
    >>> rate_reading(0.05, 0.031, 300, 0.05), rate_reading(0.10, 0.071, 300, 0.05), rate_reading(0.08, 0.05, 300, 0.05)
    ('within', 'above', 'unresolved')
    """
    if lower > level:
        return "above"
    return "within" if rate <= level + rate_tolerance(level, n) else "unresolved"


_alpha, _p_confirm, _p_refute = sp.symbols("alpha P_false_confirm P_false_refute", positive=True)


def placebo_rows(placebos, level: float, rule: str, read) -> list[dict]:
    """:func:`~biasaudit.validation.placebo.error_rates` of each placebo, with ``read`` (placebo -> ``"family"`` or
    ``"member"``) naming the rate a claim states: the family-wise one, or each member's alone; each row gains the
    rate read, its interval, count, :func:`rate_tolerance` and :func:`rate_reading`."""
    from biasaudit.validation.placebo import error_rates

    rows = []
    for p in placebos:
        r = error_rates(p, level=level, rule=rule)
        which = read(p)
        r["reads"] = which
        r["read_rate"], r["read_interval"] = ((r["error_rate"], r["error_interval"]) if which == "family"
                                              else (r["member_error_rate"], r["member_error_interval"]))
        r["read_count"] = p.n_studies * (1 if which == "family" else p.family)
        r["tolerance"] = rate_tolerance(level, r["read_count"])
        r["reading"] = rate_reading(r["read_rate"], r["read_interval"][0], r["read_count"], level)
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
        readings = {r["reading"] for r in rows}
        worst = max(rows, key=lambda r: r["read_rate"] - r["tolerance"])
        decided = readings == {"within"} or "above" in readings
        error = max(0.0, worst["read_rate"] - level - worst["tolerance"]) / level if decided else math.nan
        table = "; ".join(
            f"{_label(r['placebo'])}: wrong {r['read_rate']:.3f} [{r['read_interval'][0]:.3f}, "
            f"{r['read_interval'][1]:.3f}]" + (" per member" if r["reads"] == "member" else "")
            + f" ({r['reading']}), mean seeds {r['mean_seeds']:.1f}" for r in rows)
        detail = (f"decisions by '{predicted['rule']}' over the looks {', '.join(map(str, looks))} at alpha "
                  f"{level:g}, {placebos[0].n_studies} studies each (within: at most alpha + "
                  f"{rate_tolerance(level, placebos[0].n_studies):.3f}): {table}; worst {_label(worst['placebo'])} "
                  f"at {worst['read_rate']:.3f}")
        return Observation({"rows": rows, "level": level}, error, detail, decided=decided)

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
