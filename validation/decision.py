r"""The three-way decision of an experiment claim, and the data controls that gate it.

An experiment claim reads one statistic per seed (a paired SAM − GD value, a kink location, ...). With the
seed values v_1 … v_n, a predicted sign s ∈ {+1, −1}, an equivalence margin δ > 0 fixed before any claim seed
ran, and a level α (Holm-adjusted to α_H within a family of claims):

=============  ==============================================================================================
verdict        rule (:func:`three_way`)
=============  ==============================================================================================
refuted        the (1 − 2α) interval lies inside (−δ, δ): the effect is absent (``equivalent``, two one-sided
               tests, TOST) or smaller than the smallest effect that matters (``trivial``: significant, but
               inside the margin); checked first, so δ keeps the meaning it was given
confirmed      otherwise, the (1 − α_H) seed-level interval of the mean lies beyond 0 on the predicted side
refuted        the (1 − α_H) interval lies beyond 0 on the other side (``opposite``)
undecided      otherwise, or fewer than ``min_seeds`` finite seed values
=============  ==============================================================================================

A claim that a statistic *equals* a value t to within ±δ (the kink of final sharpness at η_c, say) is decided
by :func:`equivalence_decision`: confirmed when the (1 − 2α) interval lies inside (t − δ, t + δ), refuted when
the (1 − α) interval lies wholly outside it, undecided otherwise (``direction`` 0 in its record).

A *data control* (:func:`equivalence_control`) is the same statistic read on runs where no effect should be
(the same optimizer twice on other seeds, a random perturbation in SAM's place, features of equal strength,
...). It passes when its (1 − 2α) interval lies inside (−δ, δ); a control that fails shows the pipeline finds
an effect where there is none. :func:`gated_verdict` keeps the claim undecided unless its positive control is
confirmed and every data control passes.

The seed-level interval is the hull of a percentile bootstrap over seeds and the Student-t interval
(:func:`seed_interval`): the bootstrap alone under-covers at a few seeds.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from biasaudit.plumbing import InputError

__all__ = ["Decision", "ControlResult", "seed_interval", "three_way", "equivalence_decision", "equivalence_control",
           "no_effect_control", "gated_verdict",
           "VERDICTS", "DEFAULT_LEVEL", "MIN_SEEDS", "N_BOOT"]

VERDICTS = ("confirmed", "refuted", "undecided")
DEFAULT_LEVEL = 0.05  # α: two-sided level of the decision interval; the TOST interval is (1 − 2α)
MIN_SEEDS = 3  # fewer finite seed values than this: undecided
N_BOOT = 10_000  # bootstrap resamples of a seed-level mean


def _finite(values) -> np.ndarray:
    v = np.asarray(values, dtype=float).ravel()
    return v[np.isfinite(v)]


def seed_interval(values, coverage: float) -> tuple[float, float]:
    """Two-sided ``coverage`` interval of the mean of ``values``: the hull of the percentile bootstrap (fixed
    generator, :data:`N_BOOT` resamples) and the Student-t interval; ``(nan, nan)`` below two values.

    Parameters
    ----------
    values : array_like
        The seed values (non-finite ones are dropped).
    coverage : float
        The interval's coverage, in (0, 1).

    Returns
    -------
    tuple of float
        (low, high).

    Raises
    ------
    InputError
        If ``coverage`` is not in (0, 1).

    Examples
    --------
    >>> low, high = seed_interval([1.0, 1.2, 0.9, 1.1, 1.05], 0.95)
    >>> round(low, 6), round(high, 6)
    (0.911178, 1.188822)
    >>> seed_interval([1.0], 0.95)
    (nan, nan)
    """
    from scipy import stats

    v = _finite(values)
    if not 0 < coverage < 1:
        raise InputError("coverage", "must lie in (0, 1)", coverage)
    if v.size < 2:
        return (math.nan, math.nan)
    q = (1 - coverage) / 2
    boot = v[np.random.default_rng(0).integers(0, v.size, size=(N_BOOT, v.size))].mean(axis=1)
    half = stats.t.ppf(1 - q, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    return (float(min(np.quantile(boot, q), v.mean() - half)), float(max(np.quantile(boot, 1 - q), v.mean() + half)))


@dataclass(frozen=True)
class Decision:
    """The three-way decision on one statistic's seed values.

    Parameters
    ----------
    verdict : str
        One of :data:`VERDICTS`.
    rule : str
        ``predicted side``, ``opposite``, ``equivalent``, ``straddles`` or ``too few seeds``
        (:func:`equivalence_decision`: ``equivalent``, ``outside the margin``, ``straddles the margin``).
    mean : float
        The mean of the finite seed values.
    interval : tuple of float
        The (1 − ``adjusted_level``) interval.
    tost_interval : tuple of float
        The (1 − 2·``level``) interval.
    delta : float
        The equivalence margin δ.
    level : float
        α.
    adjusted_level : float
        The Holm-adjusted level of the claim within its family.
    direction : int
        The predicted sign, +1 or −1 (0 for :func:`equivalence_decision`).
    n : int
        The number of finite seed values.
    error : float
        0 when confirmed, else how far the interval reaches onto the wrong side of 0 (the ledger compares it with a
        tolerance of 0); nan below ``min_seeds``.
    """

    verdict: str
    rule: str
    mean: float
    interval: tuple[float, float]
    tost_interval: tuple[float, float]
    delta: float
    level: float
    adjusted_level: float
    direction: int
    n: int
    error: float

    def to_json(self) -> dict:
        """A JSON-ready dict of every field.

        Returns
        -------
        dict
            The fields by name.
        """
        return asdict(self)


def _check(delta: float, level: float) -> None:
    if not (isinstance(delta, (int, float)) and math.isfinite(delta) and delta > 0):
        raise InputError("delta", "must be a finite number > 0 (the equivalence margin)", delta)
    if not 0 < level < 0.5:
        raise InputError("level", "must lie in (0, 0.5)", level)


def three_way(values, *, direction: int, delta: float, level: float = DEFAULT_LEVEL,
              adjusted_level: float | None = None, min_seeds: int = MIN_SEEDS) -> Decision:
    """Confirmed, refuted or undecided from the seed values of one statistic (module docstring).

    refuted when the (1 − 2·level) interval lies inside (−δ, δ) (no effect that matters: ``equivalent``, or
    ``trivial`` when it is also significant); else confirmed when the (1 − ``adjusted_level``) interval lies on
    the predicted side of 0, refuted when it lies on the opposite side; undecided otherwise.

    Parameters
    ----------
    values : array_like
        The seed values of the statistic (non-finite ones are dropped).
    direction : int
        The predicted sign, +1 or −1.
    delta : float
        The equivalence margin δ > 0.
    level : float
        α, in (0, 0.5) (default :data:`DEFAULT_LEVEL`).
    adjusted_level : float, optional
        The Holm-adjusted level of this claim within its family, in (0, ``level``] (default ``level``).
    min_seeds : int
        Fewer finite values than this: undecided (default :data:`MIN_SEEDS`).

    Returns
    -------
    Decision
        The verdict, the rule that gave it, the intervals and the error.

    Raises
    ------
    InputError
        If ``delta`` is not a finite number > 0, ``level`` is not in (0, 0.5), ``direction`` is not ±1, or
        ``adjusted_level`` is not in (0, ``level``].

    Examples
    --------
    >>> d = three_way([1.0, 1.2, 0.9, 1.1, 1.05], direction=1, delta=0.1)
    >>> d.verdict, d.rule, d.error
    ('confirmed', 'predicted side', 0.0)
    >>> three_way([0.01, -0.01, 0.0, 0.005], direction=1, delta=0.1).rule
    'equivalent'
    >>> three_way([0.020, 0.021, 0.022, 0.021], direction=1, delta=0.1).rule   # a real rise, but under delta
    'trivial'
    """
    _check(delta, level)
    if direction not in (1, -1):
        raise InputError("direction", "must be +1 or -1", direction)
    adj = level if adjusted_level is None else float(adjusted_level)
    if not 0 < adj <= level:
        raise InputError("adjusted_level", f"must lie in (0, level = {level}]", adjusted_level)
    v = _finite(values)
    mean = float(v.mean()) if v.size else math.nan
    interval = seed_interval(v, 1 - adj) if v.size >= 2 else (math.nan, math.nan)
    tost = seed_interval(v, 1 - 2 * level) if v.size >= 2 else (math.nan, math.nan)

    def decision(verdict, rule, error):
        return Decision(verdict, rule, mean, interval, tost, float(delta), float(level), adj, direction,
                        int(v.size), float(error))

    if v.size < min_seeds:
        return decision("undecided", "too few seeds", math.nan)
    lo, hi = sorted((direction * interval[0], direction * interval[1]))
    if -delta < tost[0] and tost[1] < delta:  # smaller than the smallest effect that matters, significant or not
        return decision("refuted", "trivial" if lo > 0 else "equivalent", max(-lo, 1e-12))
    if lo > 0:
        return decision("confirmed", "predicted side", 0.0)
    if hi < 0:
        return decision("refuted", "opposite", -hi)
    return decision("undecided", "straddles", -lo)


def equivalence_decision(values, *, delta: float, target: float = 0.0, level: float = DEFAULT_LEVEL,
                         min_seeds: int = MIN_SEEDS) -> Decision:
    """Confirmed, refuted or undecided for a claim of the form "the statistic equals ``target`` to within ±δ".

    confirmed: the (1 − 2·level) seed interval lies inside (target − δ, target + δ) (TOST: equivalent);
    refuted: the (1 − level) seed interval lies wholly outside that band (the statistic differs from the target by
    more than δ); undecided otherwise, or below ``min_seeds`` finite values. The values are read as offsets from
    ``target``; ``error`` is how far the wider interval reaches outside the band, relative to δ (0 when inside).

    Parameters
    ----------
    values : array_like
        The seed values of the statistic.
    delta : float
        The margin δ > 0.
    target : float
        The value the statistic should equal (default 0).
    level : float
        α, in (0, 0.5) (default :data:`DEFAULT_LEVEL`).
    min_seeds : int
        Fewer finite values than this: undecided (default :data:`MIN_SEEDS`).

    Returns
    -------
    Decision
        With ``direction`` 0 and the intervals in the units of ``values``.

    Raises
    ------
    InputError
        If ``delta`` is not a finite number > 0 or ``level`` is not in (0, 0.5).

    Examples
    --------
    >>> d = equivalence_decision([2.01, 1.99, 2.0, 2.005], delta=0.1, target=2.0)
    >>> d.verdict, d.rule
    ('confirmed', 'equivalent')
    """
    _check(delta, level)
    v = _finite(values) - float(target)
    mean = float(v.mean()) + float(target) if v.size else math.nan
    interval = seed_interval(v, 1 - level) if v.size >= 2 else (math.nan, math.nan)
    tost = seed_interval(v, 1 - 2 * level) if v.size >= 2 else (math.nan, math.nan)
    shifted = tuple(float(b) + float(target) for b in interval)
    shifted_tost = tuple(float(b) + float(target) for b in tost)

    def decision(verdict, rule, error):
        return Decision(verdict, rule, mean, shifted, shifted_tost, float(delta), float(level), float(level), 0,
                        int(v.size), float(error))

    if v.size < min_seeds:
        return decision("undecided", "too few seeds", math.nan)
    reach = max(abs(interval[0]), abs(interval[1]))
    if -delta < tost[0] and tost[1] < delta:
        return decision("confirmed", "equivalent", 0.0)
    if interval[0] > delta or interval[1] < -delta:
        return decision("refuted", "outside the margin", reach / delta - 1)
    return decision("undecided", "straddles the margin", reach / delta - 1)


@dataclass(frozen=True)
class ControlResult:
    """A data control: the claim's statistic on runs where no effect should be (``reads`` says which).

    Parameters
    ----------
    name : str
        The control's name.
    reads : str
        What runs it reads.
    mean : float
        The mean of the finite seed values.
    interval : tuple of float
        The (1 − 2·level) interval.
    margin : float
        The equivalence margin.
    n : int
        The number of finite seed values.
    equivalent : bool
        Whether the interval lies inside (−``margin``, ``margin``) (and n >= ``min_seeds``).
    """

    name: str
    reads: str
    mean: float
    interval: tuple[float, float]
    margin: float
    n: int
    equivalent: bool

    def to_json(self) -> dict:
        """A JSON-ready dict of every field.

        Returns
        -------
        dict
            The fields by name.
        """
        return asdict(self)

    def summary(self) -> str:
        """``name mean [lo, hi]``, with ``NOT within`` appended when the control failed (a record's detail).

        Returns
        -------
        str
            One line, three decimals.
        """
        lo, hi = self.interval
        return f"{self.name} {self.mean:+.3f} [{lo:+.3f}, {hi:+.3f}]" + ("" if self.equivalent else " NOT within")


def equivalence_control(name: str, values, *, margin: float, reads: str = "",
                        level: float = DEFAULT_LEVEL, min_seeds: int = MIN_SEEDS) -> ControlResult:
    """The TOST equivalence of a control's seed values to 0 within ±``margin`` (fails below ``min_seeds``).

    Parameters
    ----------
    name : str
        The control's name.
    values : array_like
        Its seed values.
    margin : float
        The equivalence margin, > 0.
    reads : str
        What runs it reads (shown in the report).
    level : float
        α, in (0, 0.5) (default :data:`DEFAULT_LEVEL`).
    min_seeds : int
        Fewer finite values than this: undecided (default :data:`MIN_SEEDS`).

    Returns
    -------
    ControlResult
        The interval and whether it is equivalent to 0.

    Raises
    ------
    InputError
        If ``margin`` is not a finite number > 0 or ``level`` is not in (0, 0.5).

    Examples
    --------
    >>> c = equivalence_control("shuffled labels", [0.01, -0.01, 0.0, 0.005], margin=0.1)
    >>> c.equivalent, c.n
    (True, 4)
    """
    return _control(name, values, margin, reads, level, min_seeds, lambda lo, hi: -margin < lo and hi < margin)


def no_effect_control(name: str, values, *, margin: float, reads: str = "",
                      level: float = DEFAULT_LEVEL, min_seeds: int = MIN_SEEDS) -> ControlResult:
    """A one-sided data control: passes when the upper end of the (1 − 2·level) seed interval lies below
    ``margin`` (the statistic shows no effect of the predicted sign, as where the effect cannot be; an effect of
    the other sign is no failure). ``equivalent`` reports that pass.

    Parameters
    ----------
    name : str
        The control's name.
    values : array_like
        Its seed values.
    margin : float
        The claim's margin δ, > 0.
    reads : str
        What runs it reads (shown in the report).
    level : float
        α, in (0, 0.5) (default :data:`DEFAULT_LEVEL`).
    min_seeds : int
        Fewer finite values than this: the control fails (default :data:`MIN_SEEDS`).

    Returns
    -------
    ControlResult
        The interval and whether its upper end lies below ``margin``.

    Examples
    --------
    >>> no_effect_control("hockey stick", [-0.5, -0.3, -0.4, -0.6], margin=0.05).equivalent
    True
    >>> no_effect_control("hockey stick", [0.2, 0.3, 0.25], margin=0.05).equivalent
    False
    """
    return _control(name, values, margin, reads, level, min_seeds, lambda lo, hi: hi < margin)


def _control(name, values, margin, reads, level, min_seeds, passes) -> ControlResult:
    """A data control's (1 − 2·level) seed interval and whether ``passes(lo, hi)`` holds on it (never below
    ``min_seeds`` finite values)."""
    _check(margin, level)
    v = _finite(values)
    interval = seed_interval(v, 1 - 2 * level) if v.size >= 2 else (math.nan, math.nan)
    ok = bool(v.size >= min_seeds and passes(*interval))
    return ControlResult(name, reads, float(v.mean()) if v.size else math.nan, interval, float(margin),
                         int(v.size), ok)


def gated_verdict(decision: Decision, controls: list[ControlResult],
                  positive_control: str | None) -> tuple[str, str]:
    """(verdict, why): the decision's verdict when ``positive_control`` (its verdict, ``None`` for a claim
    that is itself a positive control) is ``"confirmed"`` and every data control is equivalent to 0;
    otherwise undecided, saying which gate failed.

    Parameters
    ----------
    decision : Decision
        The claim's decision.
    controls : list of ControlResult
        Its data controls.
    positive_control : str or None
        The verdict of its positive control, ``None`` where it is one itself.

    Returns
    -------
    tuple of str
        The verdict and the reason.

    Examples
    --------
    >>> d = three_way([1.0, 1.2, 0.9, 1.1, 1.05], direction=1, delta=0.1)
    >>> c = equivalence_control("shuffled labels", [0.01, -0.01, 0.0, 0.005], margin=0.1)
    >>> gated_verdict(d, [c], "confirmed")
    ('confirmed', 'predicted side')
    >>> gated_verdict(d, [c], "undecided")
    ('undecided', 'the positive control is undecided, not confirmed')
    """
    if positive_control is not None and positive_control != "confirmed":
        return "undecided", f"the positive control is {positive_control}, not confirmed"
    failed = [c.name for c in controls if not c.equivalent]
    if failed:
        return "undecided", f"data control(s) not equivalent to 0 within the margin: {', '.join(failed)}"
    return decision.verdict, f"{decision.rule}"
