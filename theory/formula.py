r"""A theory formula: one sympy expression and the function lambdified from it, so that what a claim shows is
what its prediction runs.

A module of :mod:`biasaudit.theory` states a closed form once, as a :class:`Formula`::

    GD_L2 = Formula("gd_l2_weights", alpha * sp.exp(mu * tau), (mu, alpha, tau))
    GD_L2(mu_array, alpha_array, tau_array)      # the lambdified function (numpy), evaluated
    GD_L2.expr                                   # the sympy expression a claim's statement is built from

A claim that predicts from a formula names it (``Claim.formulas``) and builds its ``statement`` from
``formula.expr`` (e.g. ``sp.Eq(w(tau), GD_L2.expr)``): a change to the formula changes what the report shows
and what the check computes together. :func:`traced` records which formulas a block of code evaluated; the
test suite uses it to prove that every claim's prediction evaluates the formulas its statement shows.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import sympy as sp

__all__ = ["Formula", "traced"]

_trace = threading.local()


class Formula:
    """``expr`` (a sympy expression) lambdified once over ``args`` (a tuple of its symbols).

    Parameters
    ----------
    name : str
        A short identifier (e.g. ``"alpha_grow"``), shown in reprs and in test failures.
    expr : sympy.Basic
        The closed form, over the theory module's own symbols.
    args : tuple of sympy.Symbol
        The call order of the lambdified function.
    modules : str
        ``"numpy"`` (arrays broadcast) or ``"math"`` (scalars, faster), as for :func:`sympy.lambdify`.
    """

    __slots__ = ("name", "expr", "args", "modules", "_function")

    def __init__(self, name: str, expr: sp.Basic, args: tuple, modules: str = "numpy"):
        missing = sp.sympify(expr).free_symbols - set(args)
        if missing:
            raise ValueError(f"formula {name}: symbols {sorted(map(str, missing))} are not among its args")
        self.name, self.expr, self.args, self.modules = name, sp.sympify(expr), tuple(args), modules
        self._function = sp.lambdify(self.args, self.expr, modules)

    def __call__(self, *values: Any) -> Any:
        """Evaluate the lambdified ``expr`` at ``values``, in the order of ``args`` (inside :func:`traced` the call is
        recorded)."""
        seen = getattr(_trace, "seen", None)
        if seen is not None:
            seen.append(self)
        return self._function(*values)

    def __repr__(self) -> str:
        return f"Formula({self.name!r}: {sp.sstr(self.expr)})"

    def eq(self, lhs: sp.Basic) -> sp.Eq:
        """``lhs = expr`` as an unevaluated equation (a claim's statement).

        Parameters
        ----------
        lhs : sympy.Basic
            The left side (e.g. ``w(tau)``).

        Returns
        -------
        sympy.Eq
            ``Eq(lhs, expr)``, unevaluated.

        Examples
        --------
        >>> import sympy as sp
        >>> a, b = sp.symbols("a b")
        >>> f = Formula("sum", a + b, (a, b))
        >>> f.eq(sp.Symbol("s")), f(1.0, 2.0)
        (Eq(s, a + b), 3.0)
        """
        return sp.Eq(lhs, self.expr, evaluate=False)


@contextlib.contextmanager
def traced() -> Iterator[list[Formula]]:
    """Collect the formulas evaluated inside the block (this thread), in call order, repeats included.

    Returns
    -------
    contextlib.AbstractContextManager of list of Formula
        A context manager; its ``as`` target is the list, filled while the block runs (an enclosing ``traced``
        block sees the calls too).

    Examples
    --------
    >>> import sympy as sp
    >>> a = sp.Symbol("a")
    >>> double = Formula("double", 2 * a, (a,), "math")
    >>> with traced() as seen:
    ...     _ = double(1.0) + double(2.0)
    >>> [f.name for f in seen]
    ['double', 'double']
    """
    previous = getattr(_trace, "seen", None)
    _trace.seen = seen = []
    try:
        yield seen
    finally:
        _trace.seen = previous
        if previous is not None:
            previous.extend(seen)
