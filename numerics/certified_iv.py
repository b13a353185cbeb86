r"""The plain reference beside :mod:`biasaudit.numerics.certified`: the same enclosures in mpmath's ``iv`` context
(endpoint intervals [a, b] with outward rounding), written as simply as possible, to cross-check the balls.

The same sympy expression is printed into Python over mpmath intervals (``iv.mpf``); a root is refined by the
interval Newton step :math:`N(X) = m - f(m)/f'(X)` from the same start, and proved unique by
:math:`N(X) \subset \operatorname{int} X`. No Krawczyk and no eigenvalues here: the reference covers the closed
forms and the one-dimensional roots, which is every certified quantity but the top Hessian eigenvalue at a large
init (cross-checked against numpy's ``eigvalsh`` instead).

Symbols: f, f', X, m and N(X) as in :mod:`biasaudit.numerics.certified`.
"""

from __future__ import annotations

import contextlib
import functools
import math

import sympy as sp
from sympy.printing.str import StrPrinter

__all__ = ["IV_DPS", "iv_function", "iv_enclose", "iv_newton_root", "iv_floats"]

IV_DPS = 40  # decimal digits: well past the ~38 of the balls, so the reference is never the looser of the two


class _IvPrinter(StrPrinter):
    """Python source over mpmath intervals: rationals as ``mpf(p)/q``, floats as the interval of their decimal."""

    def _print_Rational(self, expr):
        return f"(mpf({expr.p})/{expr.q})"

    def _print_Half(self, expr):
        return "(mpf(1)/2)"

    def _print_Float(self, expr):
        return f"mpf('{sp.sstr(expr, full_prec=True)}')"


@functools.lru_cache(maxsize=256)
def iv_function(expr: sp.Basic, args: tuple):
    """``expr`` printed into a Python function over ``mpmath.iv`` intervals (cached).

    Parameters
    ----------
    expr : sympy.Basic
        The theory's expression.
    args : tuple of sympy.Symbol
        Its call order.

    Returns
    -------
    callable
        ``f(*intervals) -> interval``.
    """
    from mpmath import iv

    namespace = {"mpf": iv.mpf, "sqrt": iv.sqrt, "exp": iv.exp, "log": iv.log, "Abs": abs, "abs": abs}
    raw = sp.lambdify(args, expr, modules=[namespace], printer=_IvPrinter)

    def function(*values):
        return _interval(raw(*values))  # a constant expression returns a Python int

    return function


@contextlib.contextmanager
def _digits(dps: int):
    """``iv.dps`` set to ``dps`` inside the block (the iv context has no ``workdps``)."""
    from mpmath import iv

    saved = iv.dps
    iv.dps = dps
    try:
        yield
    finally:
        iv.dps = saved


def _interval(value):
    from mpmath import iv

    return value if isinstance(value, type(iv.mpf(0))) else iv.mpf(value)


def iv_enclose(expr: sp.Basic, args: tuple, values: tuple):
    """The interval of a closed form at exact inputs (:data:`IV_DPS` digits).

    Returns
    -------
    mpmath.iv.mpf
        The interval.

    Examples
    --------
    >>> import sympy as sp
    >>> r = sp.Symbol("r", positive=True)
    >>> x = iv_enclose(r / sp.sqrt(2), (r,), (0.2,))
    >>> lo, hi = iv_floats(x)
    >>> lo <= 0.2 / 2 ** 0.5 <= hi
    True
    """

    with _digits(IV_DPS):
        return iv_function(expr, tuple(args))(*map(_interval, values))


def iv_newton_root(f_expr: sp.Basic, var: sp.Symbol, args: tuple, values: tuple, estimate: float, *,
                   start_rel: float = 1e-10, steps: int = 60):
    r"""The root of f near ``estimate`` by interval Newton in ``mpmath.iv``: ``(interval, proven)``.

    Starts at :math:`X = \text{estimate}(1 \pm \text{start\_rel})`, widened as the balls' search is
    (:func:`biasaudit.numerics.certified.widths`) while the first step does not land inside X; ``proven`` once :math:`N(X) \subset \operatorname{int} X`.

    Returns
    -------
    tuple of (mpmath.iv.mpf, bool)
        The final X and whether a step proved it.

    Examples
    --------
    >>> import sympy as sp
    >>> t = sp.Symbol("t")
    >>> X, proven = iv_newton_root(t**2 - 2, t, (), (), 1.41)
    >>> lo, hi = iv_floats(X)
    >>> proven, lo <= 2 ** 0.5 <= hi, hi - lo < 1e-15
    (True, True, True)
    """
    from mpmath import iv, mpf

    from biasaudit.numerics.certified import derivative, widths

    full = (var, *tuple(args))
    f, df = iv_function(f_expr, full), iv_function(derivative(f_expr, var), full)
    with _digits(IV_DPS):
        vals = tuple(map(_interval, values))
        for rel in widths(start_rel):
            half = abs(mpf(estimate)) * rel or rel
            X = iv.mpf([mpf(estimate) - half, mpf(estimate) + half])
            proven = False
            for _ in range(steps):
                m = iv.mpf(X.mid)
                d = df(X, *vals)
                if d.a <= 0 <= d.b:
                    break
                image = m - f(m, *vals) / d
                inside = X.a < image.a and image.b < X.b
                if not proven and not inside:
                    break
                proven = True
                new = iv.mpf([max(X.a, image.a), min(X.b, image.b)])
                if new.delta >= X.delta:
                    return new, True
                X = new
            if proven:
                return X, True
        return iv.mpf(estimate), False


def iv_floats(x) -> tuple[float, float]:
    """An interval's endpoints as floats, each moved one ulp outward (so the float pair holds the interval)."""
    return math.nextafter(float(x.a), -math.inf), math.nextafter(float(x.b), math.inf)
