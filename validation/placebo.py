r"""Placebo calibration: how often a decision, with its looks, confirms or refutes where the answer is known.

A seed study's decision (:mod:`biasaudit.validation.decision`, with the looks of
:mod:`biasaudit.validation.sequential`) is run many times on *null* seed values, drawn where the claim is false
at the edge of its null (a signed claim: true mean 0; an equivalence claim: true mean exactly ±δ), and on values
where it is true at the edge (a signed claim: true mean δ, the smallest effect that matters; an equivalence
claim: true mean 0). The share of studies that confirm in the first case is the **false-confirm rate**, the share
that refute in the second the **false-refute rate**; both must stay at or below the level α the decision states.
The seed values are drawn from a normal law, from a Student t law with 3 degrees of freedom (heavy tails: a
seed that trains oddly) and from a ternary law (−1, 0, +1 with probabilities 1/4, 1/2, 1/4: a statistic that
takes few distinct values, with ties, as SAM's collapse contrast does; shifted by the true mean), each scaled to the spread ``sigma``; a rate's uncertainty is its
Wilson interval over the studies.

A placebo with ``family`` = m > 1 simulates a Holm family of m independent studies at the same truth, each read at
its Holm level (:func:`biasaudit.validation.sam_stats.holm_levels`, as SAM's ladder reads its two networks); its
error rate is family-wise: the share of families in which any member gives the wrong verdict.

:func:`error_rates` runs one such placebo; :data:`PLACEBOS` lists the ones ``eos.torch.decision_calibration``
states, :data:`SAM_PLACEBOS` those of ``sam.torch.decision_calibration``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from biasaudit.plumbing import InputError
from biasaudit.validation.sequential import LOOKS

__all__ = ["Placebo", "PLACEBOS", "SAM_PLACEBOS", "LAWS", "RULES", "error_rates"]

LAWS = ("normal", "t3", "ternary")  # the seed values' law (module docstring), each of unit variance


@dataclass(frozen=True)
class Placebo:
    """One placebo: the decision (``"positive"`` or ``"equivalence"``), where the true mean sits (``"null"``: the
    claim is false at the edge of its null; ``"effect"``: it is true at the edge), the law of the seed values, the
    spread ``sigma`` in units of δ, the looks, the number of simulated studies and the size of the Holm family
    (1: a study alone; more: one look only)."""

    decision: str
    truth: str
    law: str
    sigma: float
    looks: tuple[int, ...]
    n_studies: int
    family: int = 1

    def true_mean(self) -> float:
        """The seed values' mean in units of δ: a signed claim 0 (null) or 1 (effect); an equivalence claim 1
        (null: on the margin) or 0 (effect)."""
        return float((self.truth == "null") == (self.decision == "equivalence"))

    def wrong_verdict(self) -> str:
        """The verdict that is an error here: ``confirmed`` on null data, ``refuted`` on data with the effect."""
        return "confirmed" if self.truth == "null" else "refuted"


# The quick tier's looks, a spread of one delta (the networks' seeds spread 0.3-2 delta in E3, 1-10 delta in E2's
# kinks; with the t interval the rates hardly depend on it), 300 studies each (a rate of 0.02 has the Wilson 95 %
# interval [0.009, 0.043]).
PLACEBOS = tuple(Placebo(decision, truth, law, 1.0, LOOKS["quick"], 300)
                 for decision in ("positive", "equivalence") for truth in ("null", "effect") for law in ("normal", "t3"))
# SAM's network studies: one look at the quick tier's 12 seeds (the ladder's and the collapse designs'), the
# ladder's two networks a Holm family of 2 and every other study alone; the equivalence decision is the data
# controls' (TOST within delta). The ternary law has few distinct values and ties, as the collapse contrast has.
SAM_QUICK_SEEDS = 12
SAM_PLACEBOS = tuple(Placebo(decision, truth, law, 1.0, (SAM_QUICK_SEEDS,), 300, family)
                     for decision, family in (("positive", 1), ("positive", 2), ("equivalence", 1))
                     for truth in ("null", "effect") for law in LAWS)
# the contract's decisions; "point": the mean alone, no interval (a control); "split": a Holm family's members each
# decided whole (both sides) at alpha / (2m), Bonferroni at half the level, so the family-wise rates lie at most at
# alpha / 2, below alpha by more than 300 studies resolve (the control of the family-wise refutation rate)
RULES = ("contract", "point", "split")


def _draw(rng, law: str, n: int) -> np.ndarray:
    if law == "normal":
        return rng.standard_normal(n)
    if law == "ternary":
        return math.sqrt(2.0) * rng.choice((-1.0, 0.0, 1.0), size=n, p=(0.25, 0.5, 0.25))  # unit variance
    return rng.standard_t(3, n) / math.sqrt(3.0)  # unit variance


def _point_decision(values, *, direction: int, delta: float, level: float):
    """A decision that ignores the seeds' spread (the calibration claim's negative control): the verdict of the
    mean alone, as :func:`~biasaudit.validation.decision.three_way` or ``equivalence_decision`` would give it with
    an interval of width 0."""
    from biasaudit.validation.decision import equivalence_decision, three_way

    v = np.asarray(values, dtype=float)
    m = float(v.mean())
    point = [m - 1e-12, m + 1e-12, m]  # three values spread 1e-12 about the mean: the interval is the mean
    if direction == 0:
        return equivalence_decision(point, delta=delta, level=level)
    return three_way(point, direction=direction, delta=delta, level=level, adjusted_level=level)


def error_rates(placebo: Placebo, *, level: float = 0.05, seed: int = 0, rule: str = "contract") -> dict:
    """Simulate ``placebo.n_studies`` sequential studies (:func:`~biasaudit.validation.sequential.sequential_decision`
    with the real decision functions) and count their verdicts.

    Parameters
    ----------
    placebo : Placebo
        What to simulate.
    level : float
        α, spent over the looks.
    seed : int
        The generator's seed (the same rates on every run).
    rule : {"contract", "point", "split"}
        The contract's decisions, the mean alone with no interval (a miscalibrated control), or a family's members
        each decided at α/(2m) on both sides (:data:`RULES`).

    Returns
    -------
    dict
        ``placebo`` (its fields), ``rates`` (share of each verdict over the studies, or a family's members),
        ``error_rate`` (the share of studies, or of families, with :meth:`Placebo.wrong_verdict`),
        ``error_interval`` (its 95 % Wilson interval), ``member_error_rate`` and ``member_error_interval`` (the
        same over a family's members, each read alone; a study alone: the same as the study's) and ``mean_seeds``
        (the seeds a study, or a family's member, used on average).

    Raises
    ------
    InputError
        If the decision, truth, law or rule is unknown, ``sigma`` is not positive, or ``family`` is not an integer
        ≥ 1 (more than 1: a signed decision at one look).

    Examples
    --------
    >>> r = error_rates(Placebo("positive", "null", "normal", 1.0, (3, 5), 50))
    >>> r["error_rate"] <= 0.05, sorted(r["rates"])
    (True, ['confirmed', 'refuted', 'undecided'])
    """
    from biasaudit.validation.decision import equivalence_decision, three_way
    from biasaudit.validation.eos_stats import wilson_interval
    from biasaudit.validation.sam_stats import holm_levels
    from biasaudit.validation.sequential import sequential_decision

    if placebo.decision not in ("positive", "equivalence"):
        raise InputError("decision", "must be 'positive' or 'equivalence'", placebo.decision)
    if placebo.truth not in ("null", "effect"):
        raise InputError("truth", "must be 'null' or 'effect'", placebo.truth)
    if placebo.law not in LAWS:
        raise InputError("law", f"must be one of {LAWS}", placebo.law)
    if not (math.isfinite(placebo.sigma) and placebo.sigma > 0):
        raise InputError("sigma", "must be a finite number > 0", placebo.sigma)
    if rule not in RULES:
        raise InputError("rule", f"must be one of {RULES}", rule)
    if not (isinstance(placebo.family, int) and placebo.family >= 1):
        raise InputError("family", "must be an integer >= 1", placebo.family)
    if placebo.family > 1 and (len(placebo.looks) != 1 or placebo.decision != "positive"):
        raise InputError("family", "a Holm family reads a signed decision at one look only", placebo.family)
    direction = 1 if placebo.decision == "positive" else 0

    def decide(values, a, adjusted=None):  # adjusted: a Holm member's level (the signed interval's)
        if rule == "point":
            return _point_decision(values, direction=direction, delta=1.0, level=a)
        if rule == "split":
            a = adjusted = a / (2 * placebo.family)
        if direction:
            return three_way(values, direction=1, delta=1.0, level=a, adjusted_level=adjusted or a)
        return equivalence_decision(values, delta=1.0, level=a)

    rng = np.random.default_rng(seed)
    counts = {"confirmed": 0, "refuted": 0, "undecided": 0}
    seeds = wrong = wrong_members = 0
    mean = placebo.true_mean()
    for _ in range(placebo.n_studies):
        members = [mean + placebo.sigma * _draw(rng, placebo.law, placebo.looks[-1]) for _ in range(placebo.family)]
        holm = holm_levels(dict(enumerate(members)), level) if placebo.family > 1 else {0: None}
        results = [sequential_decision(lambda n, v=v: v[:n].tolist(), lambda x, a, h=holm[i]: decide(x, a, h),
                                       placebo.looks, level=level) for i, v in enumerate(members)]
        verdicts = [r.decision.verdict for r in results]
        for v in verdicts:
            counts[v] += 1
        wrong += placebo.wrong_verdict() in verdicts
        wrong_members += verdicts.count(placebo.wrong_verdict())
        seeds += sum(r.looks[-1].n for r in results)
    n_members = placebo.n_studies * placebo.family
    return {"placebo": asdict(placebo), "rates": {k: v / n_members for k, v in counts.items()},
            "error_rate": wrong / placebo.n_studies, "error_interval": list(wilson_interval(wrong, placebo.n_studies)),
            "member_error_rate": wrong_members / n_members,
            "member_error_interval": list(wilson_interval(wrong_members, n_members)), "mean_seeds": seeds / n_members}
