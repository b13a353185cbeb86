r"""Proven enclosures with ball arithmetic (Arb, through python-flint): a theory formula evaluated on balls, the root of
a theory function isolated by an interval Newton step or a Krawczyk step, the top eigenvalue of a matrix of
balls.

A ball :math:`[m \pm r]` contains the exact value of every operation applied to the exact values its inputs
contain, so a ball computed from a sympy expression *encloses* the expression's exact value: nothing is rounded
away. The three tools here:

* :func:`arb_function` prints a sympy expression into Python over balls (one source: the theory's own expression,
  never a retyped copy; rationals stay exact, ``1/3`` becomes the ball of 1/3, not the float 0.333…).
* :func:`newton_root`: for f with a derivative f' (sympy's ``diff`` of the same expression), the interval Newton
  operator :math:`N(X) = m - f(m)/f'(X)`, m the midpoint of X. If :math:`N(X) \subset \operatorname{int} X`,
  then X holds exactly one root of f, and it lies in :math:`N(X)` (the mean value theorem: 0 ∉ f'(X), so f is
  strictly monotone on X). Iterating :math:`X \leftarrow N(X) \cap X` shrinks the enclosure quadratically.
* :func:`krawczyk_root`: the Krawczyk operator :math:`K(X) = m - Y f(m) + (1 - Y f'(X))(X - m)`,
  :math:`Y = 1/f'(m)` (a point preconditioner); :math:`K(X) \subset \operatorname{int} X` proves the same
  (existence by Brouwer's fixed point theorem for the map :math:`x \mapsto x - Y f(x)`, uniqueness because that
  map contracts on X). It needs no division by an interval, so it copes with a derivative ball that is wide but
  away from 0 only at the midpoint's scale.
* :func:`top_eigenvalue`: the largest eigenvalue of a real symmetric matrix of balls, from Arb's rigorous
  eigenvalue enclosure (``acb_mat.eig``, clusters of multiple eigenvalues allowed): every eigenvalue lies in
  its ball, so the largest lies between the largest lower end and the largest upper end.

Every function returns an :class:`Enclosure`: the ball's endpoints rounded outward to floats (so the float
interval contains the ball), how it was proved, and ``proven`` (False where the step did not close: never
reported as certified). :mod:`biasaudit.numerics.certified_iv` is the plain reference beside it (mpmath's ``iv``
context, endpoint intervals), used to cross-check.

Symbols: f the defining function, f' its derivative, X the current interval, m its midpoint, N(X) and K(X) the
Newton and Krawczyk images, Y the preconditioner.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import sympy as sp
from sympy.printing.str import StrPrinter

__all__ = ["WORKING_PREC", "START_REL", "MAX_WIDENINGS", "MAX_HALF_REL", "MAX_STEPS", "widths", "derivative", "Enclosure", "arb_function", "to_ball",
           "enclose", "newton_root", "krawczyk_root", "top_eigenvalue", "relative_width"]

WORKING_PREC = 128  # bits: ~38 digits, so a ball's own rounding (~1e-38 relative) is far below the 1e-12 target and
#                     the float interval it becomes is one ulp wide each side. python-flint's precision is one global
#                     setting: a thread that restores it while another computes leaves that one at 53 bits, which
#                     widens its balls to ~1e-16 relative but never makes them wrong
START_REL = 1e-10  # the first interval around the float estimate: relative half-width 1e-10 (the float value is good
#                    to ~1e-13 relative, measured, so the root is inside; a narrow X keeps f' nearly constant on it,
#                    which a Krawczyk step needs where f is stiff: e^{-4 x_i tau} with x_i = 1e5 varies by e^{0.5}
#                    across a 1e-6 interval)
MAX_WIDENINGS = 10  # if the first interval does not close, widen it x10 up to 10 times, the half-width capped at
MAX_HALF_REL = 0.5  # half the estimate: a wider X reaches 0, where the defining functions in α have their pole
MAX_STEPS = 60  # Newton/Krawczyk steps: quadratic convergence needs ~6 from 1e-6 to 1e-38; 60 is generous


@dataclass(frozen=True)
class Enclosure:
    """A proven float interval ``[lo, hi]`` (``proven``) around the exact value of a quantity, and how.

    Parameters
    ----------
    lo, hi : float
        The endpoints, rounded outward from the ball (``lo`` ≤ exact ≤ ``hi`` when ``proven``).
    method : str
        ``"ball evaluation"``, ``"interval Newton"``, ``"Krawczyk"`` or ``"arb eigenvalues"``.
    proven : bool
        Whether the enclosure is proved (for a root: the Newton or Krawczyk image fell inside X, so the root
        exists and is unique in X).
    detail : str
        Why not, where ``proven`` is False; the number of steps otherwise.
    ball : flint.arb or None
        The ball itself (at the working precision), to carry into a later computation without the float rounding.
    """

    lo: float
    hi: float
    method: str
    proven: bool
    detail: str = ""
    ball: object = field(default=None, compare=False, repr=False)

    @property
    def mid(self) -> float:
        """The midpoint of ``[lo, hi]``."""
        return 0.5 * (self.lo + self.hi)

    def contains(self, value: float) -> bool:
        """Whether ``lo ≤ value ≤ hi``."""
        return self.lo <= value <= self.hi

    def hull(self, value: float) -> "Enclosure":
        """The smallest interval holding this one and ``value`` (still an enclosure: a superset of a proven one)."""
        return Enclosure(min(self.lo, value), max(self.hi, value), self.method, self.proven, self.detail, self.ball)

    def to_json(self) -> list:
        """``[lo, hi]``."""
        return [self.lo, self.hi]


def relative_width(lo: float, hi: float) -> float:
    """``(hi − lo)/max(|lo|, |hi|)`` (0 for the point 0)."""
    scale = max(abs(lo), abs(hi))
    return 0.0 if scale == 0.0 else (hi - lo) / scale


# ---- sympy -> balls ------------------------------------------------------------------------------------------
class _ArbPrinter(StrPrinter):
    """Python source over balls: integers stay Python ints (exact in every ball operation), rationals and floats
    become balls (``arb(p)/q``, ``arb('1.5')``), so no literal is rounded to a double on the way."""

    def _print_Rational(self, expr):
        return f"(arb({expr.p})/{expr.q})"

    def _print_Half(self, expr):
        return "(arb(1)/2)"

    def _print_Float(self, expr):
        return f"arb('{sp.sstr(expr, full_prec=True)}')"

    def _print_Pi(self, expr):
        return "arb.pi()"

    def _print_Exp1(self, expr):
        return "arb.const_e()"


def _namespace():
    from flint import arb

    def ball(z):
        return z if isinstance(z, arb) else arb(z)

    def sign(z):
        z = ball(z)
        if z > 0:
            return arb(1)
        if z < 0:
            return arb(-1)
        if z.is_zero():
            return arb(0)
        return arb(0, 1)  # the sign of a ball that holds 0 and more: one of -1, 0, 1

    return {"arb": arb, "sqrt": lambda z: ball(z).sqrt(), "exp": lambda z: ball(z).exp(),
            "log": lambda z: ball(z).log(), "Abs": lambda z: abs(ball(z)), "abs": lambda z: abs(ball(z)),
            "sign": sign}


@functools.lru_cache(maxsize=256)
def arb_function(expr: sp.Basic, args: tuple):
    """``expr`` printed into a Python function over balls, in the order of ``args`` (cached: printing costs ~1 ms).

    Parameters
    ----------
    expr : sympy.Basic
        The theory's expression.
    args : tuple of sympy.Symbol
        Its call order.

    Returns
    -------
    callable
        ``f(*balls) -> ball``; arguments may be balls, ints or floats (a float is taken as the exact double).

    Examples
    --------
    >>> import sympy as sp
    >>> a = sp.Symbol("a", positive=True)
    >>> f = arb_function(a / 3 + sp.sqrt(2), (a,))
    >>> from flint import arb
    >>> f(arb(1)).contains(arb(1) / 3 + arb(2).sqrt())
    True
    """
    raw = sp.lambdify(args, expr, modules=[_namespace()], printer=_ArbPrinter)

    def function(*values):
        return to_ball(raw(*values))  # a constant expression returns a Python int

    return function


def to_ball(value):
    """The exact ball of a float or int (radius 0), or a ball unchanged."""
    from flint import arb

    return value if isinstance(value, arb) else arb(value)


def _outward(ball) -> tuple[float, float]:
    """``ball``'s endpoints as floats, each moved one ulp outward (``float()`` rounds to nearest)."""
    lo, hi = float(ball.lower()), float(ball.upper())
    return math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)


def _as_enclosure(ball, method: str, proven: bool, detail: str) -> Enclosure:
    if not ball.is_finite():
        return Enclosure(-math.inf, math.inf, method, False, detail or "the ball is not finite")
    lo, hi = _outward(ball)
    return Enclosure(lo, hi, method, proven and math.isfinite(lo) and math.isfinite(hi), detail, ball)


# ---- the three tools -----------------------------------------------------------------------------------------
def enclose(expr: sp.Basic, args: tuple, values: tuple, *, prec: int = WORKING_PREC) -> Enclosure:
    """The ball of a closed form at exact inputs: a proven enclosure of its exact value.

    Parameters
    ----------
    expr : sympy.Basic
        The closed form.
    args : tuple of sympy.Symbol
        Its arguments.
    values : tuple
        One float, int or ball per argument.
    prec : int
        Working precision in bits.

    Returns
    -------
    Enclosure
        ``method="ball evaluation"``.

    Examples
    --------
    >>> import sympy as sp
    >>> r = sp.Symbol("r", positive=True)
    >>> e = enclose(r / sp.sqrt(2), (r,), (0.2,))
    >>> e.proven, e.contains(0.2 / 2 ** 0.5), e.hi - e.lo < 1e-16
    (True, True, True)
    """
    from flint import ctx

    with ctx.workprec(prec):
        ball = arb_function(expr, tuple(args))(*map(to_ball, values))
        return _as_enclosure(ball, "ball evaluation", True, "")


@functools.lru_cache(maxsize=256)
def derivative(f_expr: sp.Basic, var: sp.Symbol) -> sp.Basic:
    """f' = ∂f/∂var (cached), factored where f is algebraic: a difference of terms sharing the unknown,
    c μ_d²/(α²‖μ‖) − c μ_{d−1}²/(α²‖μ‖), loses its sign to the dependency problem of interval arithmetic on a wide X;
    one product keeps it. A sum of exponentials (τ's Σ x_i β0_i e^{−4x_iτ} − y) is left as ``diff`` gives it:
    factoring splits it into products of huge and tiny exponentials that blow up a ball on a wide X, and sympy's
    ``factor`` on it grows steeply with d (77 s at d = 20)."""
    df = sp.diff(f_expr, var)
    return df if df.has(sp.exp, sp.log) else sp.factor(df)


def widths(start_rel: float) -> list[float]:
    """The relative half-widths tried, in order: ``start_rel`` × 10^k, capped at :data:`MAX_HALF_REL`."""
    out = []
    for k in range(MAX_WIDENINGS + 1):
        out.append(min(start_rel * 10.0**k, MAX_HALF_REL))
        if out[-1] == MAX_HALF_REL:
            break
    return out


def _start(estimate: float, start_rel: float):
    from flint import arb

    half = abs(estimate) * start_rel if estimate != 0.0 else start_rel
    return arb(estimate, half)


def _root(kind: str, f_expr, var, args, values, estimate, prec, start_rel, target_rel):
    from flint import arb, ctx

    args = tuple(args)
    full = (var, *args)
    f = arb_function(f_expr, full)
    df = arb_function(derivative(f_expr, var), full)
    method = "interval Newton" if kind == "newton" else "Krawczyk"
    with ctx.workprec(prec):
        vals = tuple(map(to_ball, values))
        reason = ""
        for half in widths(start_rel):
            X = _start(float(estimate), half)
            proven = False
            for step in range(MAX_STEPS):
                m = arb(X.mid())
                fm, dX = f(m, *vals), df(X, *vals)
                if kind == "newton":
                    if dX.contains(0):
                        reason = "f' holds 0 on X: no Newton step (a root of higher multiplicity, or X too wide)"
                        break
                    image = m - fm / dX
                else:
                    dm = df(m, *vals)
                    if dm.contains(0):
                        reason = "f'(m) holds 0: no preconditioner"
                        break
                    Y = arb(1) / arb(dm.mid())
                    image = m - Y * fm + (1 - Y * dX) * (X - m)
                if not image.is_finite():
                    reason = "the image is not finite"
                    break
                inside = X.contains_interior(image)
                if not proven and not inside:
                    if not image.overlaps(X):
                        reason = "the image misses X: no root in X"
                    else:
                        reason = "the image is not inside X"
                    break
                proven = True
                new = image.intersection(X) if not inside else image
                if new.rad() >= X.rad() or new.rad() <= abs(new.mid()) * target_rel:
                    X = new
                    return _as_enclosure(X, method, True, f"{step + 1} steps, start half-width "
                                                          f"{half:g} relative")
                X = new
            if proven:
                return _as_enclosure(X, method, True, f"{MAX_STEPS} steps")
        return _as_enclosure(arb(float(estimate)), method, False, reason or "did not close")


def newton_root(f_expr: sp.Basic, var: sp.Symbol, args: tuple, values: tuple, estimate: float, *,
                prec: int = WORKING_PREC, start_rel: float = START_REL, target_rel: float = 2.0**-110) -> Enclosure:
    r"""The root of :math:`f(\cdot, \text{args})` near ``estimate``, isolated and proved unique by interval Newton.

    Starts from :math:`X = \text{estimate}\,(1 \pm \text{start\_rel})` (widened by :func:`widths` while the step does not close) and iterates :math:`X \leftarrow N(X) \cap X`; the first
    :math:`N(X) \subset \operatorname{int} X` proves existence and uniqueness in X.

    Parameters
    ----------
    f_expr : sympy.Basic
        f, over ``var`` and ``args``.
    var : sympy.Symbol
        The unknown.
    args : tuple of sympy.Symbol
        The other symbols of ``f_expr``.
    values : tuple
        Their values (floats, ints or balls).
    estimate : float
        A float estimate of the root (from the library's own solver).
    prec : int
        Working precision in bits.
    start_rel : float
        The first interval's relative half-width.
    target_rel : float
        Stop once the ball's radius is below this, relative.

    Returns
    -------
    Enclosure
        ``method="interval Newton"``; ``proven`` False (and ``detail`` why) if no step closed.

    Examples
    --------
    >>> import sympy as sp
    >>> t = sp.Symbol("t")
    >>> e = newton_root(t**2 - 2, t, (), (), 1.41)
    >>> e.proven, e.contains(2 ** 0.5)
    (True, True)
    """
    return _root("newton", f_expr, var, args, values, estimate, prec, start_rel, target_rel)


def krawczyk_root(f_expr: sp.Basic, var: sp.Symbol, args: tuple, values: tuple, estimate: float, *,
                  prec: int = WORKING_PREC, start_rel: float = START_REL,
                  target_rel: float = 2.0**-110) -> Enclosure:
    r"""The root of f near ``estimate``, proved unique by the Krawczyk operator: the fixed point of the contraction
    :math:`x \mapsto x - Y f(x)` on X (same parameters and returns as :func:`newton_root`, ``method="Krawczyk"``).

    Examples
    --------
    >>> import sympy as sp
    >>> t = sp.Symbol("t")
    >>> e = krawczyk_root(sp.exp(-t) - t, t, (), (), 0.567)
    >>> e.proven, e.lo <= 0.5671432904097838 <= e.hi
    (True, True)
    """
    return _root("krawczyk", f_expr, var, args, values, estimate, prec, start_rel, target_rel)


def top_eigenvalue(rows, *, prec: int = WORKING_PREC) -> Enclosure:
    """The largest eigenvalue of a real symmetric matrix given as rows of balls (or floats), from Arb's rigorous
    eigenvalue enclosures (clusters allowed): between the largest lower end and the largest upper end of the balls.

    Parameters
    ----------
    rows : sequence of sequence
        The matrix, row by row (balls, floats or ints).
    prec : int
        Working precision in bits.

    Returns
    -------
    Enclosure
        ``method="arb eigenvalues"``.

    Examples
    --------
    >>> e = top_eigenvalue([[2.0, 1.0], [1.0, 3.0]])
    >>> e.proven, e.contains((5 + 5 ** 0.5) / 2)
    (True, True)
    """
    from flint import acb_mat, arb_mat, ctx

    with ctx.workprec(prec):
        matrix = arb_mat([[to_ball(v) for v in row] for row in rows])
        try:
            values = acb_mat(matrix).eig(multiple=True, algorithm="rump")
        except ValueError as exc:  # Arb could not isolate the eigenvalues
            return Enclosure(-math.inf, math.inf, "arb eigenvalues", False, f"no enclosure: {exc}")
        # every eigenvalue lies in its ball (a symmetric matrix: real parts; the imaginary parts enclose 0), so the
        # largest lies between the largest lower end and the largest upper end, clusters or not (arb's max is
        # rigorous: no float comparison decides which end is largest)
        reals = [v.real for v in values]
        lo = functools.reduce(lambda a, b: a.max(b), (r.lower() for r in reals))
        hi = functools.reduce(lambda a, b: a.max(b), (r.upper() for r in reals))
        ball = lo.union(hi)
        return _as_enclosure(ball, "arb eigenvalues", True, f"{len(values)} eigenvalues enclosed")
