r"""Group-sequential seed studies: seeds spent in pre-registered batches while a decision still straddles.

A study of K looks at seed counts :math:`n_1 < \dots < n_K` (the last is the tier's cap) reads its statistic on
the first :math:`n_k` seeds at look k and stops at the first look whose decision is confirmed or refuted. The
level α is spent over the looks by the Lan–DeMets Pocock-type function of the information fraction
:math:`t_k = n_k / n_K`,

.. math::

    \alpha(t) = \alpha \,\ln\!\bigl(1 + (e - 1)\,t\bigr), \qquad \alpha_k = \alpha(t_k) - \alpha(t_{k-1}),

and look k decides at the level :math:`\alpha_k` alone. By the union bound over the looks, the chance that any
look confirms a false claim (or refutes a true one) is at most :math:`\sum_k \alpha_k = \alpha`, whatever the
correlation between looks: the bound does not use it, so it is conservative. The rule, the looks and the cap are
fixed before a claim's seeds run (:data:`LOOKS`).

:func:`sequential_decision` runs the looks on a function that returns the seed values of the first n seeds
(running what is not yet cached); :func:`seeds_to_decide` says how many seeds the decision would need at the
observed mean and spread, the record's statement of power.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from biasaudit.plumbing import InputError

__all__ = ["LOOKS", "SPENDING", "spent_levels", "Look", "SequentialResult", "sequential_decision",
           "seeds_to_decide", "tier_that_decides", "MAX_SEEDS_STATED"]

# Seeds at each look, by tier; the last is the cap. The quick tier starts where the fixed design did (3 seeds) and
# may add 2 (a network seed costs 1-6 CPU-minutes of sweeps on 2 cores: 8 seeds on every architecture would triple
# the main job); the full tier starts at its fixed 5 and goes to 12.
LOOKS = {"quick": (3, 5), "full": (5, 8, 12)}
SPENDING = "Lan-DeMets Pocock-type: alpha ln(1 + (e - 1) n_k/n_K), each look at its increment (union bound)"
MAX_SEEDS_STATED = 1000  # seeds_to_decide searches up to this many; beyond it, "no feasible count"


def spent_levels(level: float, looks) -> tuple[float, ...]:
    r"""The level of each look: the increments of :math:`\alpha\ln(1 + (e - 1) n_k/n_K)` (module docstring).

    Parameters
    ----------
    level : float
        α, in (0, 0.5).
    looks : sequence of int
        The seed counts of the looks, strictly increasing, the first ≥ 2.

    Returns
    -------
    tuple of float
        One level per look; they sum to ``level``.

    Raises
    ------
    InputError
        If ``level`` is not in (0, 0.5) or ``looks`` is not strictly increasing from 2 or more.

    Examples
    --------
    >>> [round(a, 4) for a in spent_levels(0.05, (3, 5, 8))]
    [0.0249, 0.0116, 0.0135]
    >>> [round(a, 4) for a in spent_levels(0.05, (3, 5))]
    [0.0354, 0.0146]
    >>> spent_levels(0.05, (3,))
    (0.05,)
    """
    if not 0 < level < 0.5:
        raise InputError("level", "must lie in (0, 0.5)", level)
    n = [int(k) for k in looks]
    if not n or n[0] < 2 or any(b <= a for a, b in zip(n, n[1:])) or any(k != float(x) for k, x in zip(n, looks)):
        raise InputError("looks", "must be strictly increasing seed counts, the first >= 2", tuple(looks))
    spent = [level * math.log1p((math.e - 1) * k / n[-1]) for k in n]
    spent[-1] = level  # exactly: ln(e) = 1
    return tuple(b - a for a, b in zip([0.0] + spent[:-1], spent))


@dataclass(frozen=True)
class Look:
    """One look: ``n`` seeds, decided at ``level`` (its share of α), with the decision's ``verdict``, ``rule``,
    ``mean`` and ``interval`` (the one the rule read)."""

    n: int
    level: float
    verdict: str
    rule: str
    mean: float
    interval: tuple[float, float]

    def to_json(self) -> dict:
        """A JSON-ready dict of every field.

        Returns
        -------
        dict
            The fields by name.
        """
        return asdict(self)


@dataclass(frozen=True)
class SequentialResult:
    """The looks taken and the decision of the last (``decision``: the final look's
    :class:`~biasaudit.validation.decision.Decision`); ``values`` the seed values it read; ``capped``: undecided
    at the tier's last look; ``seeds_needed``: :func:`seeds_to_decide` at the last planned look's level (None when
    decided)."""

    looks: tuple[Look, ...]
    decision: object
    values: list
    capped: bool
    seeds_needed: int | None

    @property
    def tier_that_decides(self) -> str | None:
        """The first tier whose seed cap reaches :attr:`seeds_needed` (:func:`tier_that_decides`)."""
        return tier_that_decides(self.seeds_needed)

    def to_json(self) -> dict:
        """A JSON-ready dict: the looks, the cap, the seeds a decision would need and the tier whose cap reaches them
        (the decision has its own).

        Returns
        -------
        dict
            ``looks``, ``capped``, ``seeds_needed``, ``tier_that_decides``, ``spending``.
        """
        return {"looks": [look.to_json() for look in self.looks], "capped": self.capped,
                "seeds_needed": self.seeds_needed, "tier_that_decides": self.tier_that_decides, "spending": SPENDING}


def sequential_decision(values_at, decide, looks, *, level: float, go_on=None) -> SequentialResult:
    """Run the looks: at look k, ``decide(values_at(n_k), level_k)``; stop at the first decided look, or when
    ``go_on()`` says no before a further look (a study whose verdict another gate already holds undecided spends no
    more seeds; each look keeps its planned level, so stopping early never raises an error rate).

    Parameters
    ----------
    values_at : callable
        n -> the statistic's values on the first n seeds (a list of length n; NaN where a seed gave none).
    decide : callable
        (values, level) -> :class:`~biasaudit.validation.decision.Decision` (``three_way`` or
        ``equivalence_decision`` at that level).
    looks : sequence of int
        The seed counts (:data:`LOOKS`).
    level : float
        α, spent over the looks by :func:`spent_levels`.
    go_on : callable, optional
        () -> bool, asked before each look after the first (default: always go on).

    Returns
    -------
    SequentialResult
        The looks taken and the last decision; ``capped`` only when every planned look was taken.

    Examples
    --------
    >>> from biasaudit.validation.decision import three_way
    >>> values = [0.30, 0.31, 0.29, 0.30, 0.32, 0.28, 0.30, 0.31]
    >>> r = sequential_decision(lambda n: values[:n], lambda v, a: three_way(v, direction=1, delta=0.05, level=a,
    ...                         adjusted_level=a), (3, 5, 8), level=0.05)
    >>> [look.n for look in r.looks], r.decision.verdict
    ([3], 'confirmed')
    >>> r = sequential_decision(lambda n: [0.0, 0.2, -0.1, 0.3, 0.1][:n], lambda v, a: three_way(
    ...     v, direction=1, delta=0.05, level=a, adjusted_level=a), (3, 5), level=0.05, go_on=lambda: False)
    >>> [look.n for look in r.looks], r.decision.verdict, r.capped
    ([3], 'undecided', False)
    """
    levels = spent_levels(level, looks)
    taken, decision, values = [], None, []
    planned = list(zip(looks, levels))
    for n, a in planned:
        if taken and go_on is not None and not go_on():
            break
        values = list(values_at(int(n)))
        decision = decide(values, a)
        interval = decision.tost_interval if decision.direction == 0 or decision.rule in ("equivalent", "trivial") \
            else decision.interval
        taken.append(Look(int(n), float(a), decision.verdict, decision.rule, float(decision.mean),
                          tuple(float(b) for b in interval)))
        if decision.verdict != "undecided":
            break
    capped = decision.verdict == "undecided" and len(taken) == len(planned)
    needed = None
    if decision.verdict == "undecided":
        needed = seeds_to_decide(values, delta=decision.delta, direction=decision.direction, level=levels[-1])
    return SequentialResult(tuple(taken), decision, values, capped, needed)


def seeds_to_decide(values, *, delta: float, direction: int, level: float) -> int | None:
    r"""The smallest seed count at which the decision would decide if the seed values kept their observed mean
    m and standard deviation s: with :math:`h_n = t_{1-a, n-1}\, s/\sqrt n`, for an equivalence claim
    (``direction`` 0) :math:`|m| + h_n < \delta` (a = level) or :math:`|m| - h_n > \delta` (a = level/2); for a
    signed claim the same equivalence (refuted as trivial) or :math:`|m| - h_n > 0` (a = level/2). None when no
    count up to :data:`MAX_SEEDS_STATED` would, or with fewer than 2 finite values.

    Parameters
    ----------
    values : array_like
        The seed values read so far.
    delta : float
        The margin δ.
    direction : int
        +1 or −1 for a signed claim, 0 for an equivalence claim.
    level : float
        The level a further look would spend.

    Returns
    -------
    int or None
        The seed count, or None.

    Examples
    --------
    >>> seeds_to_decide([0.02, 0.05, 0.08], delta=0.1, direction=1, level=0.0135)   # inside +-delta at 5 seeds
    5
    >>> seeds_to_decide([0.09, 0.10, 0.11], delta=0.1, direction=0, level=0.05) is None   # on the margin: never
    True
    """
    from scipy import stats

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return None
    m, s = abs(float(v.mean())), float(v.std(ddof=1))
    n = np.arange(2, MAX_SEEDS_STATED + 1)
    half_one = stats.t.ppf(1 - level, n - 1) * s / np.sqrt(n)
    half_two = stats.t.ppf(1 - level / 2, n - 1) * s / np.sqrt(n)
    ok = (m + half_one < delta) | ((m - half_two > delta) if direction == 0 else (m - half_two > 0))
    hits = n[ok]
    return int(max(hits[0], v.size + 1)) if hits.size else None


def tier_that_decides(needed: int | None) -> str | None:
    """The first tier of :data:`LOOKS` whose cap reaches ``needed`` seeds (:func:`seeds_to_decide`), or None when no
    tier's does (or ``needed`` is None).

    Examples
    --------
    >>> tier_that_decides(4), tier_that_decides(9), tier_that_decides(40), tier_that_decides(None)
    ('quick', 'full', None, None)
    """
    if needed is None:
        return None
    return next((tier for tier, looks in LOOKS.items() if looks[-1] >= needed), None)
