r"""Butcher tableaus: every explicit Runge–Kutta method of the package, as data.

An explicit s-stage method with tableau (a, b, c) steps y' = f(t, y) by

.. math::

    k_i = f\bigl(t + c_i h,\; y + h \textstyle\sum_{m<i} a_{im} k_m\bigr),\qquad
    y^+ = y + h \textstyle\sum_i b_i k_i ,

and an embedded pair also gives the local error estimate h Σ_i (b_i − b̂_i) k_i (``b_error`` = b − b̂).

==========  ================================================================================================
``RK4``     the classical Runge–Kutta method, order 4 (Kutta 1901)
``DOPRI5``  Dormand–Prince 5(4) (Dormand & Prince 1980; Hairer–Nørsett–Wanner I, Table II.5.2): order 5
            with an embedded order-4 solution, FSAL (the last stage is f at the new point)
==========  ================================================================================================

The coefficients are written once, as exact rationals, and rounded to float64 once; the invariants below
are checked when a :class:`ButcherTableau` is built. The numba kernels read the arrays as module-level
constants (numba freezes a global array into the compiled code), either with a loop over stages or in an
unrolled stage sequence whose coefficients are read from here; :func:`explicit_rk_step` is the plain
reference (numpy arrays, floats or torch tensors). The order conditions and the measured convergence order
of each tableau are tested in ``tests/test_tableau.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from biasaudit.plumbing import InputError

__all__ = ["ButcherTableau", "RK4", "DOPRI5", "TABLEAUS", "explicit_rk_step", "SUM_TOL"]

# Σ_m a_im = c_i, Σ b_i = 1 and Σ (b_i − b̂_i) = 0 hold exactly for the rationals; after rounding each
# coefficient to float64 a sum of n terms of size ≤ M is off by ≤ ~n·eps·M. 16 eps per unit of Σ|terms|
# covers n ≤ 7 stages with margin, and a coefficient off by more than ~1e-14 relative is caught.
SUM_TOL = 16 * float(np.finfo(float).eps)


def _float_array(name: str, value, ndim: int) -> np.ndarray:
    arr = np.array(value, dtype=float)
    if arr.ndim != ndim:
        raise InputError(name, f"must be a {ndim}-d array", value)
    if not np.all(np.isfinite(arr)):
        raise InputError(name, "must be finite (no NaN or inf)", value)
    arr.setflags(write=False)
    return arr


def _sums_to(values: np.ndarray, target: float) -> bool:
    return abs(float(np.sum(values)) - target) <= SUM_TOL * max(1.0, float(np.sum(np.abs(values))))


@dataclass(frozen=True)
class ButcherTableau:
    r"""An explicit Runge–Kutta method as data: ``a`` (s, s), ``b`` (s,), ``c`` (s,), and for an embedded pair
    ``b_error`` = b − b̂ (s,) with the embedded solution's order ``error_order``.

    Checked at construction: ``a`` strictly lower triangular (explicit), row sums of ``a`` equal ``c``,
    ``b`` sums to 1, ``b_error`` sums to 0 (the embedded weights b̂ sum to 1 too), each within :data:`SUM_TOL` per
    unit of the sum of the terms' sizes. The arrays are read-only float64 copies.

    Parameters
    ----------
    name : str
        The method's short name (``"rk4"``, ``"dopri5"``).
    order : int
        Its order p >= 1.
    a : array_like
        The stage coefficients :math:`a_{im}`, shape (s, s), strictly lower triangular.
    b : array_like
        The weights :math:`b_i`, shape (s,).
    c : array_like
        The nodes :math:`c_i = \sum_m a_{im}`, shape (s,).
    b_error : array_like, optional
        :math:`b - \hat b` of an embedded pair, shape (s,).
    error_order : int, optional
        The embedded solution's order, in [1, p − 1]; given together with ``b_error``.

    Raises
    ------
    InputError
        If any check above fails, naming the coefficient (``a``, ``b``, ``b_error``, ``order``, ``error_order``).

    Examples
    --------
    >>> RK4.stages, RK4.fsal, DOPRI5.fsal
    (4, False, True)
    >>> ButcherTableau("euler", 1, [[0.0]], [0.5], [0.0])
    Traceback (most recent call last):
    ...
    biasaudit.plumbing.inputs.InputError: b: must sum to 1, got [0.5]
    """

    name: str
    order: int
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    b_error: np.ndarray | None = None
    error_order: int | None = None

    def __post_init__(self):
        a = _float_array("a", self.a, 2)
        b = _float_array("b", self.b, 1)
        c = _float_array("c", self.c, 1)
        s = b.size
        if a.shape != (s, s) or c.size != s:
            raise InputError("a", f"must be ({s}, {s}) with c of length {s} (b has {s} stages)", a.shape)
        if np.any(np.triu(a) != 0.0):
            raise InputError("a", "must be strictly lower triangular (an explicit method)", a)
        for i in range(s):
            if not _sums_to(np.append(a[i], -c[i]), 0.0):
                raise InputError("a", f"row {i} must sum to c[{i}] = {c[i]!r}", a[i])
        if not _sums_to(b, 1.0):
            raise InputError("b", "must sum to 1", b)
        if not isinstance(self.order, int) or self.order < 1:
            raise InputError("order", "must be a positive integer", self.order)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "c", c)
        if (self.b_error is None) != (self.error_order is None):
            raise InputError("b_error", "and error_order go together (an embedded pair has both)", self.b_error)
        if self.b_error is not None:
            b_error = _float_array("b_error", self.b_error, 1)
            if b_error.size != s:
                raise InputError("b_error", f"must have {s} entries", b_error)
            if not _sums_to(b_error, 0.0):
                raise InputError("b_error", "must sum to 0 (the embedded weights sum to 1)", b_error)
            if not isinstance(self.error_order, int) or not 1 <= self.error_order < self.order:
                raise InputError("error_order", f"must be an integer in [1, {self.order - 1}]", self.error_order)
            object.__setattr__(self, "b_error", b_error)

    @property
    def stages(self) -> int:
        """The number of stages s (the length of ``b``)."""
        return int(self.b.size)

    @property
    def b_embedded(self) -> np.ndarray:
        """b̂ = b − b_error, the weights of the embedded (lower-order) solution."""
        if self.b_error is None:
            raise InputError("b_error", f"{self.name} has no embedded solution", None)
        return self.b - self.b_error

    @property
    def fsal(self) -> bool:
        """First same as last: the last stage is f at the new point (last row of a = b, c_s = 1)."""
        return bool(self.c[-1] == 1.0 and np.array_equal(self.a[-1], self.b))

    @property
    def a_subdiagonal(self) -> np.ndarray:
        """a_{i,i−1} for i = 1 … s−1, for a method whose every stage reads only the stage before (RK4): what an
        unrolled low-storage kernel uses. ValueError for any other a."""
        sub = np.diag(self.a, -1).copy()
        if np.any(np.tril(self.a, -2) != 0.0):
            raise InputError("a", f"{self.name}: a stage reads more than the stage before it", self.a)
        sub.setflags(write=False)
        return sub


def _rational(rows: Sequence) -> list:
    return [[float(Fraction(x)) for x in row] if isinstance(row, (list, tuple)) else float(Fraction(row))
            for row in rows]


RK4 = ButcherTableau(
    name="rk4",
    order=4,
    a=_rational([[0, 0, 0, 0],
                 ["1/2", 0, 0, 0],
                 [0, "1/2", 0, 0],
                 [0, 0, 1, 0]]),
    b=_rational(["1/6", "1/3", "1/3", "1/6"]),
    c=_rational([0, "1/2", "1/2", 1]),
)

_DP_B = ["35/384", 0, "500/1113", "125/192", "-2187/6784", "11/84", 0]
_DP_B_HAT = ["5179/57600", 0, "7571/16695", "393/640", "-92097/339200", "187/2100", "1/40"]

DOPRI5 = ButcherTableau(
    name="dopri5",
    order=5,
    a=_rational([[0, 0, 0, 0, 0, 0, 0],
                 ["1/5", 0, 0, 0, 0, 0, 0],
                 ["3/40", "9/40", 0, 0, 0, 0, 0],
                 ["44/45", "-56/15", "32/9", 0, 0, 0, 0],
                 ["19372/6561", "-25360/2187", "64448/6561", "-212/729", 0, 0, 0],
                 ["9017/3168", "-355/33", "46732/5247", "49/176", "-5103/18656", 0, 0],
                 _DP_B[:6] + [0]]),
    b=_rational(_DP_B),
    c=_rational([0, "1/5", "3/10", "4/5", "8/9", 1, 1]),
    # b − b̂ of the two float64 weight vectors (within 1 ulp of the published rationals e_i = b_i − b̂_i; this
    # way b − b_error gives back b̂ exactly, and the step-size sequences are those of the kernels before)
    b_error=np.array(_rational(_DP_B)) - np.array(_rational(_DP_B_HAT)),
    error_order=4,
)

TABLEAUS: dict[str, ButcherTableau] = {t.name: t for t in (RK4, DOPRI5)}


def explicit_rk_step(f: Callable, t: float, y, h: float, tableau: ButcherTableau, k1=None):
    r"""One explicit Runge–Kutta step of y' = f(t, y): returns ``(y_next, error, ks)``.

    The plain reference beside the numba kernels; ``y`` may be a float, a numpy array or a torch tensor
    (only ``+`` and scalar ``*`` are used). Stage inputs are :math:`y + \sum_m (h a_{im}) k_m` and the new point
    :math:`y + h\sum_i b_i k_i`, skipping zero coefficients (RK4 costs 4 evaluations and no wasted terms).

    Parameters
    ----------
    f : callable
        ``f(t, y)``, the right-hand side.
    t : float
        The time of ``y``.
    y : float, numpy.ndarray or torch.Tensor
        The state.
    h : float
        The step.
    tableau : ButcherTableau
        The method.
    k1 : optional
        f(t, y) when the caller has it already (FSAL, or a gradient computed for another purpose).

    Returns
    -------
    tuple
        ``y_next``; ``error`` = :math:`h\sum_i (b_i - \hat b_i) k_i` for an embedded pair, else None; ``ks``, the list
        of the s stage derivatives.

    Examples
    --------
    >>> import math
    >>> y, error, ks = explicit_rk_step(lambda t, y: -y, 0.0, 1.0, 0.1, RK4)
    >>> abs(y - math.exp(-0.1)) < 1e-7, error, len(ks)
    (True, None, 4)
    >>> y, error, ks = explicit_rk_step(lambda t, y: -y, 0.0, 1.0, 0.1, DOPRI5)
    >>> abs(y - math.exp(-0.1)) < 1e-9 < error < 1e-8
    True
    """
    a, b, c = tableau.a, tableau.b, tableau.c
    ks = []
    for i in range(tableau.stages):
        if i == 0 and k1 is not None:
            ks.append(k1)
            continue
        x = y
        for m in range(i):
            if a[i, m] != 0.0:
                x = x + (h * float(a[i, m])) * ks[m]
        ks.append(f(t + float(c[i]) * h, x))
    y_next = y + h * _weighted(b, ks)
    error = None if tableau.b_error is None else h * _weighted(tableau.b_error, ks)
    return y_next, error, ks


def _weighted(weights: np.ndarray, ks: list):
    total = None
    for w, k in zip(weights, ks):
        if w != 0.0:
            total = float(w) * k if total is None else total + float(w) * k
    return total
