"""Parameter domains of claims: one description, two samplers.

A :class:`Domain` maps parameter names to specs (:class:`Real`, :class:`Integer`, :class:`Vector`,
:class:`Choice`, :class:`Fixed`). It draws parameter dicts from a numpy ``Generator`` (used by
``biasaudit check``) and builds the equivalent hypothesis strategy (used by ``tests/``), so the property
tests and the CLI explore the same region. Coupled hypotheses go in ``where`` (a predicate on the whole
dict, hypothesis ``assume``-style); values computed from others go in ``derive``.

Vectors are returned as tuples of floats so that parameter dicts stay hashable and JSON-friendly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Real", "Integer", "Vector", "Choice", "Fixed", "Domain", "DomainExhausted"]

Params = dict[str, Any]


class DomainExhausted(RuntimeError):
    """``where`` rejected every draw: the domain is (nearly) empty."""


@dataclass(frozen=True)
class Real:
    """A real scalar in ``[lo, hi]``; ``log=True`` samples log-uniformly (needs ``lo > 0``)."""

    lo: float
    hi: float
    log: bool = False

    def __post_init__(self):
        if not self.lo <= self.hi or (self.log and self.lo <= 0):
            raise ValueError(f"bad Real domain [{self.lo}, {self.hi}] log={self.log}")

    def sample(self, rng: np.random.Generator, params: Params) -> float:
        """A uniform draw from [lo, hi] (log-uniform when ``log``)."""
        if self.log:
            return float(math.exp(rng.uniform(math.log(self.lo), math.log(self.hi))))
        return float(rng.uniform(self.lo, self.hi))

    def strategy(self, params: Params):
        """The hypothesis strategy over [lo, hi] (drawn in log space when ``log``)."""
        from hypothesis import strategies as st

        if self.log:
            return st.floats(math.log(self.lo), math.log(self.hi)).map(
                lambda u: min(max(math.exp(u), self.lo), self.hi)
            )
        return st.floats(self.lo, self.hi, allow_nan=False, allow_infinity=False)


@dataclass(frozen=True)
class Integer:
    """An integer in ``[lo, hi]``, both ends included."""

    lo: int
    hi: int

    def sample(self, rng: np.random.Generator, params: Params) -> int:
        """A uniform draw from lo, …, hi."""
        return int(rng.integers(self.lo, self.hi + 1))

    def strategy(self, params: Params):
        """The hypothesis strategy of the integers in [lo, hi]."""
        from hypothesis import strategies as st

        return st.integers(self.lo, self.hi)


@dataclass(frozen=True)
class Choice:
    """One of ``options``, each equally likely."""

    options: tuple

    def sample(self, rng: np.random.Generator, params: Params):
        """A uniform draw from ``options``."""
        return self.options[int(rng.integers(len(self.options)))]

    def strategy(self, params: Params):
        """The hypothesis strategy sampling from ``options``."""
        from hypothesis import strategies as st

        return st.sampled_from(self.options)


@dataclass(frozen=True)
class Fixed:
    """A parameter that always takes ``value`` (recorded in the evidence like a drawn one)."""

    value: Any

    def sample(self, rng: np.random.Generator, params: Params):
        """Always ``value`` (the generator and the earlier draws are unused)."""
        return self.value

    def strategy(self, params: Params):
        """The hypothesis strategy that always gives ``value``."""
        from hypothesis import strategies as st

        return st.just(self.value)


@dataclass(frozen=True)
class Vector:
    """A vector of floats.

    ``length`` is an int or the name of an earlier Integer parameter. Entries lie in ``[lo, hi]``
    (log-uniform if ``log``). With ``increasing=(gmin, gmax)`` the vector is built as
    ``v_1 ∈ [lo, hi]``, ``v_{i+1} = v_i + g_i`` with ``g_i ∈ [gmin, gmax]`` (so it is strictly
    increasing; ``hi`` bounds only the first entry).
    """

    length: int | str
    lo: float
    hi: float
    log: bool = False
    increasing: tuple[float, float] | None = None

    def _n(self, params: Params) -> int:
        return int(params[self.length]) if isinstance(self.length, str) else int(self.length)

    def sample(self, rng: np.random.Generator, params: Params) -> tuple[float, ...]:
        """A tuple of n floats, n = ``length`` or the value of the earlier parameter it names: independent draws in
        [lo, hi], or with ``increasing`` the first draw plus cumulative gaps."""
        n = self._n(params)
        first = Real(self.lo, self.hi, self.log)
        if self.increasing is None:
            return tuple(first.sample(rng, params) for _ in range(n))
        gmin, gmax = self.increasing
        gaps = rng.uniform(gmin, gmax, size=n - 1)
        return tuple(float(v) for v in first.sample(rng, params) + np.concatenate([[0.0], np.cumsum(gaps)]))

    def strategy(self, params: Params):
        """The hypothesis strategy of the same vectors."""
        from hypothesis import strategies as st

        n = self._n(params)
        first = Real(self.lo, self.hi, self.log).strategy(params)
        if self.increasing is None:
            return st.lists(first, min_size=n, max_size=n).map(tuple)
        gmin, gmax = self.increasing
        gaps = st.lists(st.floats(gmin, gmax), min_size=n - 1, max_size=n - 1)
        return st.tuples(first, gaps).map(
            lambda fg: tuple(float(v) for v in fg[0] + np.concatenate([[0.0], np.cumsum(fg[1])]))
        )


@dataclass(frozen=True)
class Domain:
    """Named parameter specs, sampled in order (so a Vector may refer to an earlier Integer)."""

    params: Mapping[str, Any]
    where: Callable[[Params], bool] | None = None
    derive: Callable[[Params], Params] | None = None
    description: str = ""
    max_tries: int = field(default=2000, compare=False)

    def _finish(self, params: Params) -> Params | None:
        if self.derive is not None:
            params = {**params, **self.derive(params)}
        if self.where is not None and not self.where(params):
            return None
        return params

    def sample(self, rng: np.random.Generator) -> Params:
        """One admissible parameter dict: each spec drawn in order, ``derive`` added, ``where`` checked;
        :class:`DomainExhausted` after ``max_tries`` rejected draws."""
        for _ in range(self.max_tries):
            params: Params = {}
            for name, spec in self.params.items():
                params[name] = spec.sample(rng, params)
            done = self._finish(params)
            if done is not None:
                return done
        raise DomainExhausted(f"no admissible draw in {self.max_tries} tries: {self.description}")

    def strategy(self):
        """The hypothesis strategy of admissible parameter dicts."""
        from hypothesis import strategies as st

        items = list(self.params.items())

        @st.composite
        def draw_params(draw):
            params: Params = {}
            for name, spec in items:
                params[name] = draw(spec.strategy(params))
            return params

        return draw_params().map(self._finish).filter(lambda p: p is not None)
