r"""Placebo calibration: how often a decision, with its looks, confirms or refutes where the answer is known.

A seed study's decision (:mod:`biasaudit.validation.decision`, with the looks of
:mod:`biasaudit.validation.sequential`) is run many times on *null* seed values, drawn where the claim is false
at the edge of its null (a signed claim: true mean 0; an equivalence claim: true mean exactly ±δ), and on values
where it is true at the edge (a signed claim: true mean δ, the smallest effect that matters; an equivalence
claim: true mean 0). The share of studies that confirm in the first case is the **false-confirm rate**, the share
that refute in the second the **false-refute rate**; both must stay at or below the level α the decision states.
The seed values are drawn from a normal law and from a Student t law with 3 degrees of freedom (heavy tails: a
seed that trains oddly), each scaled to the spread ``sigma``; a rate's uncertainty is its Wilson interval over the
studies.

:func:`error_rates` runs one such placebo; :data:`PLACEBOS` lists the ones the audit states
(``eos.torch.decision_calibration``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from biasaudit.plumbing import InputError
from biasaudit.validation.sequential import LOOKS

__all__ = ["Placebo", "PLACEBOS", "LAWS", "RULES", "error_rates"]

LAWS = ("normal", "t3")  # the seed values' law: normal, or Student t with 3 degrees of freedom (unit variance)


@dataclass(frozen=True)
class Placebo:
    """One placebo: the decision (``"positive"`` or ``"equivalence"``), where the true mean sits (``"null"``: the
    claim is false at the edge of its null; ``"effect"``: it is true at the edge), the law of the seed values, the
    spread ``sigma`` in units of δ, the looks and the number of simulated studies."""

    decision: str
    truth: str
    law: str
    sigma: float
    looks: tuple[int, ...]
    n_studies: int

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
                 for decision in ("positive", "equivalence") for truth in ("null", "effect") for law in LAWS)
RULES = ("contract", "point")  # the contract's decisions; "point": the mean alone, no interval (a control)


def _draw(rng, law: str, n: int) -> np.ndarray:
    if law == "normal":
        return rng.standard_normal(n)
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
    rule : {"contract", "point"}
        The contract's decisions, or the mean alone with no interval (:data:`RULES`; a miscalibrated control).

    Returns
    -------
    dict
        ``placebo`` (its fields), ``rates`` (share of each verdict), ``error_rate`` (the share with
        :meth:`Placebo.wrong_verdict`), ``error_interval`` (its 95 % Wilson interval) and ``mean_seeds`` (the seeds a
        study used on average).

    Raises
    ------
    InputError
        If the decision, truth, law or rule is unknown, or ``sigma`` is not positive.

    Examples
    --------
    >>> r = error_rates(Placebo("positive", "null", "normal", 1.0, (3, 5), 50))
    >>> r["error_rate"] <= 0.05, sorted(r["rates"])
    (True, ['confirmed', 'refuted', 'undecided'])
    """
    from biasaudit.validation.decision import equivalence_decision, three_way
    from biasaudit.validation.eos_stats import wilson_interval
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
    direction = 1 if placebo.decision == "positive" else 0
    if rule == "point":
        def decide(values, a):
            return _point_decision(values, direction=direction, delta=1.0, level=a)
    elif direction:
        def decide(values, a):
            return three_way(values, direction=1, delta=1.0, level=a, adjusted_level=a)
    else:
        def decide(values, a):
            return equivalence_decision(values, delta=1.0, level=a)
    rng = np.random.default_rng(seed)
    counts = {"confirmed": 0, "refuted": 0, "undecided": 0}
    seeds = 0
    mean = placebo.true_mean()
    for _ in range(placebo.n_studies):
        values = mean + placebo.sigma * _draw(rng, placebo.law, placebo.looks[-1])
        result = sequential_decision(lambda n: values[:n].tolist(), decide, placebo.looks, level=level)
        counts[result.decision.verdict] += 1
        seeds += result.looks[-1].n
    wrong = counts[placebo.wrong_verdict()]
    return {"placebo": asdict(placebo), "rates": {k: v / placebo.n_studies for k, v in counts.items()},
            "error_rate": wrong / placebo.n_studies, "error_interval": list(wilson_interval(wrong, placebo.n_studies)),
            "mean_seeds": seeds / placebo.n_studies}
