"""The documented valid ranges of the CLI's numeric inputs, checked at the edge before any work.

Every magnitude a user types (a data vector μ or x, a label y, a radius ρ, an init α or w0, a step size η or
learning rate, a loss factor or threshold eps) must lie in ``[MAGNITUDE_MIN, MAGNITUDE_MAX]`` = [1e-30, 1e30] (zero only where a rule says so).
Why these bounds: the formulas multiply up to ~8 such numbers (e.g. 8 c y x_max · w0², sharpness · η), and
1e30^8 = 1e240 stays inside float64 (1.8e308), as does 1e-30^8 = 1e-240 above its smallest normal number
(2.2e-308); subnormal inputs (1e-320) made the flows crawl. Inside the range the answers are finite and,
where the theory has an exact symmetry (α_c ∝ ρ, α_c/c invariant to scaling μ, η_c ∝ 1/k² when x and y scale
by k), they obey it (tests at both ends: ``tests/test_input_ranges.py``).

``MU_MAX_SPREAD`` = 1e4: the ratio μ_d/μ_1 of SAM's data point. The l2 bisection integrates to a horizon
~60/μ_1 with steps ~1/μ_d, so its cost grows with the spread: measured at d = 3, L = 2 on 2 cores 6.6 s at 1e4,
11.8 s at 1e5, 52 s at 1e6, and no answer within 60 s at 1e8 (a fuzz test found 1e26 hanging).

``MAX_DEPTH`` = 32: the deep l2 flow's certificate bisection resolves α_c up to L = 32 (measured: L = 48
leaves the bisection undecided, L = 1000 divided by zero).

Sizes of the torch experiments (``validate``): ``MAX_STEPS`` = 10^7 training steps (the full tiers use at
most 2·10^5; 10^7 full-batch steps of the smallest model is more than a day on 2 cores), ``MAX_SEEDS`` = 1000
paired seeds (the full tiers use 32), ``MAX_EXAMPLES`` = 10^6 training or test examples (above every data
set this package loads: MNIST has 70 000; the loader names the actual limit of the chosen data set).
"""

from __future__ import annotations

import numpy as np

from biasaudit.plumbing.inputs import InputError

__all__ = ["MAGNITUDE_MIN", "MAGNITUDE_MAX", "MAX_DEPTH", "MU_MAX_SPREAD", "MAX_STEPS", "MAX_SEEDS",
           "MAX_EXAMPLES", "ZERO_CHECKED_LATER", "in_range", "vector_in_range", "depth_in_range",
           "spread_in_range", "count_in_range"]

MAGNITUDE_MIN = 1e-30
MAGNITUDE_MAX = 1e30
MAX_DEPTH = 32
MU_MAX_SPREAD = 1e4
MAX_STEPS = 10_000_000
MAX_SEEDS = 1000
MAX_EXAMPLES = 1_000_000
_RULE = f"must have magnitude in [{MAGNITUDE_MIN:g}, {MAGNITUDE_MAX:g}]"


#: ``zero=`` value for a parameter whose 0 is refused by a later, more specific rule (e.g. ``y: must be > 0
#: (...)``): 0 passes the range check, and the range message does not claim that 0 is accepted.
ZERO_CHECKED_LATER = "checked later"


def _zero_mode(zero) -> tuple[bool, str]:
    """(does 0 pass this check, the text the range message appends for 0)."""
    if isinstance(zero, str):
        if zero != ZERO_CHECKED_LATER:
            raise ValueError(f"zero must be a bool or ZERO_CHECKED_LATER, got {zero!r}")
        return True, ""
    return bool(zero), " or be 0" if zero else ""


def in_range(name: str, value: float, *, zero: bool | str = False) -> float:
    """``value`` with ``MAGNITUDE_MIN <= |value| <= MAGNITUDE_MAX``; exactly 0 also passes when ``zero`` is
    True (0 is accepted: the message says "or be 0") or :data:`ZERO_CHECKED_LATER` (a later rule refuses 0
    with its own reason: the message says nothing about 0)."""
    zero, or_zero = _zero_mode(zero)
    value = float(value)
    if zero and value == 0:
        return value
    if not MAGNITUDE_MIN <= abs(value) <= MAGNITUDE_MAX:
        raise InputError(name, _RULE + or_zero, value)
    return value


def vector_in_range(name: str, values, *, zero: bool | str = False) -> np.ndarray:
    """Every entry in range (see :func:`in_range`)."""
    zero, or_zero = _zero_mode(zero)
    arr = np.asarray(values, dtype=float)
    mag = np.abs(arr)
    ok = (mag >= MAGNITUDE_MIN) & (mag <= MAGNITUDE_MAX)
    if zero:
        ok |= arr == 0
    if not ok.all():
        raise InputError(name, "every entry " + _RULE + or_zero, arr)
    return arr


def depth_in_range(name: str, depth: int) -> int:
    """``depth`` unchanged when 1 <= depth <= :data:`MAX_DEPTH`; else :class:`InputError` naming ``name`` (the caller
    checks that it is an integer first)."""
    if not 1 <= depth <= MAX_DEPTH:
        raise InputError(name, f"must be an integer in [1, {MAX_DEPTH}]", depth)
    return depth


def spread_in_range(name: str, values, max_spread: float = MU_MAX_SPREAD) -> np.ndarray:
    """A positive vector whose largest/smallest entry is at most ``max_spread``."""
    arr = np.asarray(values, dtype=float)
    spread = float(arr.max() / arr.min())
    if spread > max_spread:
        raise InputError(name, f"must have max/min <= {max_spread:g} (the bisection's cost grows with it)",
                         f"max/min = {spread:.3g}")
    return arr


def count_in_range(name: str, value, maximum: int) -> int:
    """A positive integer count (steps, seeds, examples) no larger than ``maximum``."""
    from biasaudit.plumbing.inputs import positive_int

    value = positive_int(name, value)
    if value > maximum:
        raise InputError(name, f"must be an integer in [1, {maximum:,}]", value)
    return value
