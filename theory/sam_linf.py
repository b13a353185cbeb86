r"""l_inf-SAM on a balanced depth-L diagonal network (paper 1, claims B).

Reduced field (rescaled time tau, sign(0) = 0): ``w_j' = mu_j (w_j - rho sign(w_j^{L-1}))^{L-1}``.

**L = 2.**  ``w_j(tau) = rho + (alpha_j - rho) e^{mu_j tau}`` while w_j > 0:

* alpha_j > rho: w_j grows; alpha_j = rho: unstable equilibrium (the linearisation has rate +mu_j);
* alpha_j < rho: w_j hits 0 at ``tau_0 = ln(rho / (rho - alpha_j)) / mu_j`` and slides at 0 (Filippov:
  the field is -mu_j rho above 0 and +mu_j rho below, sign(0) = 0 makes 0 a fixed point);
* discrete iterates chatter around 0: once ``|w_j| <= h mu_j rho`` it stays there (h mu_j <= 1), so
  ``|w_j| <= h mu_j rho <= 2 h mu_j rho`` (the bound first stated, 2 h mu_j rho, has a factor 2 of slack);
* unbalanced positive init (u, v): ``(u_j + v_j)' = mu_j (u_j + v_j - 2 rho)``, so coordinate j grows iff
  ``u_j(0) + v_j(0) > 2 rho`` (u - v decays like e^{-mu tau}).  The same recursion holds exactly for the
  discrete iterates: ``s_{k+1} - 2 rho = (1 + h_k mu_j)(s_k - 2 rho)``.

**L >= 3.**  ``(w_j - rho)^{2-L} = (alpha_j - rho)^{2-L} - (L-2) mu_j tau`` for alpha_j > rho: blow-up at
``tau_j = (alpha_j - rho)^{2-L} / ((L-2) mu_j)``; the first to blow up, ``k = argmax_j mu_j (alpha_j - rho)^{L-2}``
over G = {alpha_j > rho}, is the limit direction e_k (a minor feature can win).  For alpha_j < rho put
x = rho - w: even L has ``x^{2-L} = x_0^{2-L} - (L-2) mu tau`` and w_j hits 0 at
``tau_0 = ((rho - alpha)^{2-L} - rho^{2-L}) / ((L-2) mu)`` (-> the L = 2 formula as L -> 2), then slides;
odd L has ``x^{2-L} = x_0^{2-L} + (L-2) mu tau``, so w_j increases to rho and never collapses (parity rule).

**Limit rule** (:func:`linf_sam_limit`), with G = {alpha_j > rho}, E = {alpha_j = rho}:

===========  =====================  ==========================================================
depth        case                   limit
===========  =====================  ==========================================================
L = 2        G non-empty            basis e_{max G}
L = 2        G empty, E non-empty   fixed beta = rho^2 1_E (the loss does not -> 0)
L = 2        otherwise              zero
L >= 3       G non-empty            basis e_k, k = argmax_{j in G} mu_j (alpha_j - rho)^{L-2}
L >= 3 even  G empty                fixed rho^L 1_E if E non-empty, else zero
L >= 3 odd   G empty                fixed rho^L 1 (every w_j -> rho: no collapse)
L = 1        d = 1                  basis e_1; d > 1: InputError (the limit direction mu/||mu|| is
                                    not a basis vector; see notes/sam-gd-linf.md)
===========  =====================  ==========================================================

Exact ties in the L >= 3 score have no single basis limit (the direction then tends to a mix with ratios
(mu_k/mu_j)^{L/(L-2)}): :func:`linf_sam_limit` raises InputError for ties within 1e-12 relative.

Symbols (:data:`SYMBOLS`, shared with the claims that state these forms): ``alpha`` initial weight, ``mu`` data
coordinate, ``rho`` radius, ``tau`` rescaled time, ``L`` depth, ``h`` the Euler step of a discrete step. Each
closed form that is evaluated is a :class:`~biasaudit.theory.formula.Formula` (the sympy expression and its
function, lambdified once).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from biasaudit.plumbing import (InputError, as_finite_vector, matching_length, positive_increasing, positive_int,
                                positive_scalar, positive_vector)
from biasaudit.theory.formula import Formula
from biasaudit.theory.sam_fields import w

__all__ = [
    "alpha", "mu", "rho", "tau", "L", "SYMBOLS",
    "LINF_L2", "LINF_FIELD_L2", "LINF_DEPARTURE_RATE", "LINF_ZERO_HIT", "LINF_DEEP_ZERO_HIT", "LINF_ZERO_HIT_TIME",
    "LINF_DEEP_GROW", "LINF_DEEP_BLOWUP", "LINF_DEEP_SCORE", "LINF_DEEP_LOG_SCORE", "LINF_DEEP_BELOW",
    "LINF_ODD_BELOW", "LINF_EVEN_BELOW", "UNBALANCED_SUM", "UNBALANCED_THRESHOLD", "CHATTER_BOUND", "CHATTER_SHARP",
    "LinfLimit", "linf_sam_limit", "linf_l2_weights", "linf_zero_hit_time", "linf_deep_weights",
    "linf_blowup_times", "linf_grows_unbalanced", "linf_chatter_bound", "linf_deep_scores",
    "linf_deep_log_scores",
]

alpha = sp.Symbol("alpha", positive=True)
mu = sp.Symbol("mu", positive=True)
rho = sp.Symbol("rho", positive=True)
tau = sp.Symbol("tau", nonnegative=True)
L = sp.Symbol("L", integer=True, positive=True)
h = sp.Symbol("h", positive=True)
s0 = sp.Symbol("s_0", positive=True)  # u_j(0) + v_j(0)

#: The symbols of the l_inf-SAM statements (``w`` is the coordinate of :mod:`biasaudit.theory.sam_fields`).
SYMBOLS = {
    "alpha": alpha, "mu": mu, "rho": rho, "tau": tau, "L": L, "h": h, "s_0": s0, "w": w,
    "u_0": sp.Symbol("u_0", positive=True), "v_0": sp.Symbol("v_0", positive=True),  # unbalanced init, two layers
    "w(tau)": sp.Function("w")(tau),
    "tau_0": sp.Symbol("tau_0", positive=True),                  # zero-hit time
    "k": sp.Symbol("k", integer=True, positive=True),            # the winning index of the L >= 3 rule
    "beta_limit": sp.Symbol("beta_limit"),                       # lim beta (a direction, a point or 0)
    "grows": sp.Symbol("grows"),                                 # coordinate j grows (unbalanced init)
    "argmax": sp.Function("argmax"),
    "e_max_G": sp.Symbol("e_{max G}"),                           # basis vector of the largest index in G
    "1_E": sp.Symbol("1_E"),                                     # indicator of E = {alpha_j = rho}
    "|G|": sp.Symbol("|G|", integer=True, nonnegative=True),      # the size of G = {j : alpha_j > rho}
    "|E|": sp.Symbol("|E|", integer=True, nonnegative=True),      # the size of E = {j : alpha_j = rho}
}

LINF_L2 = Formula("linf_l2_weights", rho + (alpha - rho) * sp.exp(mu * tau), (mu, alpha, rho, tau))
#: The reduced field at L = 2 above 0 (w > 0), and its slope there: the rate at which w - rho departs from 0.
LINF_FIELD_L2 = mu * (w - rho)
LINF_DEPARTURE_RATE = Formula("linf_departure_rate", sp.diff(LINF_FIELD_L2, w), (mu,))
LINF_ZERO_HIT = sp.log(rho / (rho - alpha)) / mu
LINF_DEEP_ZERO_HIT = ((rho - alpha) ** (2 - L) - rho ** (2 - L)) / ((L - 2) * mu)
#: tau_0 for alpha < rho at L = 2 and at even L >= 4 (the even-L branch tends to the L = 2 one as L -> 2).
LINF_ZERO_HIT_TIME = Formula("linf_zero_hit_time", sp.Piecewise((LINF_ZERO_HIT, sp.Eq(L, 2)),
                                                                (LINF_DEEP_ZERO_HIT, True)), (mu, alpha, rho, L))
LINF_DEEP_GROW = Formula("linf_deep_grow", rho + ((alpha - rho) ** (2 - L) - (L - 2) * mu * tau) ** (1 / (2 - L)),
                         (mu, alpha, rho, tau, L))
LINF_DEEP_BLOWUP = Formula("linf_deep_blowup_time", (alpha - rho) ** (2 - L) / ((L - 2) * mu), (mu, alpha, rho, L))
LINF_DEEP_SCORE = Formula("linf_deep_score", mu * (alpha - rho) ** (L - 2), (mu, alpha, rho, L))
#: log of LINF_DEEP_SCORE, finite for every finite input (the score itself overflows for large L)
LINF_DEEP_LOG_SCORE = Formula("linf_deep_log_score", sp.expand_log(sp.log(LINF_DEEP_SCORE.expr), force=True),
                              (mu, alpha, rho, L))
#: alpha < rho, L >= 3: x = rho - w has x^(2-L) = (rho - alpha)^(2-L) - (-1)^L (L-2) mu tau (odd L: w rises to
#: rho; even L: w hits 0 at tau_0, then slides there)
LINF_DEEP_BELOW = Formula("linf_deep_below",
                          rho - ((rho - alpha) ** (2 - L) - (-1) ** L * (L - 2) * mu * tau) ** (1 / (2 - L)),
                          (mu, alpha, rho, tau, L))
LINF_ODD_BELOW = LINF_DEEP_BELOW.expr.subs((-1) ** L, -1)
LINF_EVEN_BELOW = LINF_DEEP_BELOW.expr.subs((-1) ** L, 1)
UNBALANCED_SUM = 2 * rho + (s0 - 2 * rho) * sp.exp(mu * tau)
#: The growth threshold of s_0: where d/dtau UNBALANCED_SUM vanishes (2 rho).
UNBALANCED_THRESHOLD = Formula("linf_unbalanced_threshold", sp.solve(sp.diff(UNBALANCED_SUM, tau), s0)[0], (rho,),
                               "math")
CHATTER_BOUND = Formula("linf_chatter_bound", 2 * h * mu * rho, (h, mu, rho))
#: The sharp chatter bound (derived here, notes/sam-gd-linf.md): CHATTER_BOUND holds with a factor 2 to spare.
CHATTER_SHARP = h * mu * rho

TIE_RTOL = 1e-12  # relative gap below which two L >= 3 scores count as a tie


@dataclass(frozen=True)
class LinfLimit:
    """Where l_inf-SAM's β goes: ``kind`` in {"basis", "zero", "fixed"}.

    Parameters
    ----------
    kind : str
        ``"basis"`` (β diverges along :math:`e_{index}`), ``"zero"`` (β → 0) or ``"fixed"`` (β tends to a finite
        non-zero limit).
    index : int or None
        The 1-based k of :math:`e_k` (basis only).
    beta_limit : tuple of float or None
        The limit of β for "fixed"/"zero", None for "basis".
    formula : sympy.Basic
        The sympy rule used.
    explanation : str
        The rule in words.
    """

    kind: str
    index: int | None
    beta_limit: tuple | None
    formula: sp.Basic
    explanation: str

    def to_json(self) -> dict:
        """The limit as a JSON-ready dict (``kind`` under the key ``limit``, the formula as a sympy string).

        Returns
        -------
        dict
            ``limit``, ``index``, ``beta_limit`` (a list or None), ``formula`` and ``explanation``.
        """
        return {"limit": self.kind, "index": self.index,
                "beta_limit": None if self.beta_limit is None else list(self.beta_limit),
                "formula": sp.sstr(self.formula), "explanation": self.explanation}


def _mu_alpha(mu_value, alpha_value, increasing: bool = True):
    m = positive_increasing("mu", mu_value) if increasing else positive_vector("mu", mu_value)
    a = positive_vector("alpha", alpha_value)
    if a.size == 1:
        a = np.full(m.size, a[0])
    return m, matching_length("alpha", a, m.size, "mu")


def linf_sam_limit(mu_value, alpha_value, rho_value, depth) -> LinfLimit:
    r"""The limit of l_inf-SAM's β on one point (μ, +1) from the balanced init α (see the module's table).

    With :math:`G = \{j: \alpha_j > \rho\}`: at L = 2, :math:`e_{\max G}`; at L >= 3, the first coordinate to
    blow up, :math:`\arg\max_{j\in G} \mu_j(\alpha_j - \rho)^{L-2}`. With G empty: :math:`\rho^L\mathbf 1`
    at odd L >= 3; :math:`\rho^L\mathbf 1_E` (:math:`E = \{j: \alpha_j = \rho\}`) or 0 at even L.

    Parameters
    ----------
    mu_value : array_like
        The data point μ, strictly positive and strictly increasing.
    alpha_value : float or array_like
        The initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    rho_value : float
        The SAM radius ρ > 0.
    depth : int
        The depth L >= 1 (L = 1 only with d = 1).

    Returns
    -------
    LinfLimit
        The kind of limit, its index or value, the rule and its explanation.

    Raises
    ------
    InputError
        If ``mu_value`` is not strictly positive and increasing, ``alpha_value`` or ``rho_value`` has an entry <= 0,
        the lengths differ, ``depth`` is 1 with d > 1, the L >= 3 scores tie, or :math:`\rho^L` overflows float64.

    Examples
    --------
    >>> linf_sam_limit([1, 2], [0.5, 0.2], 0.3, 2).index
    1
    >>> limit = linf_sam_limit([1, 2], 0.1, 0.3, 2)
    >>> limit.kind, limit.beta_limit
    ('zero', (0.0, 0.0))
    """
    m, a = _mu_alpha(mu_value, alpha_value)
    r = positive_scalar("rho", rho_value)
    depth = positive_int("depth", depth, minimum=1)
    d = m.size
    j = sp.Symbol("j", integer=True, positive=True)
    a_j, mu_j = sp.Symbol("alpha_j", positive=True), sp.Symbol("mu_j", positive=True)
    if depth == 1:
        if d == 1:
            return LinfLimit("basis", 1, None, alpha + mu * tau,
                             "depth 1, d = 1: w = alpha + mu tau grows along e_1")
        raise InputError("depth", "must be >= 2 for the l_inf limit rule (at depth 1 every algorithm's "
                                  "direction tends to mu/||mu||, which is not a basis vector)", depth)
    grow = a > r
    equal = a == r
    if grow.any():
        if depth == 2:
            k = int(np.flatnonzero(grow)[-1]) + 1
            return LinfLimit("basis", k, None, sp.Gt(a_j, rho),
                             f"L = 2, G = {{j : alpha_j > rho}} = {_set(grow)} is non-empty: "
                             f"beta/||beta|| -> e_max G = e_{k}")
        # compared in log space: the score itself overflows (mu (1e30)^30) or underflows for large L, which
        # made every score inf (or 0) and reported a tie that is not there
        log_score = linf_deep_log_scores(m, a, r, depth)
        k0 = int(np.argmax(log_score))
        others = np.delete(log_score, k0)
        if others.size and np.max(others) >= log_score[k0] + np.log1p(-TIE_RTOL):
            raise InputError("alpha", "gives a tie in mu_j (alpha_j - rho)^(L-2) over G: no single basis limit",
                             a)
        return LinfLimit("basis", k0 + 1, None, mu_j * (a_j - rho) ** (depth - 2),
                         f"L = {depth}: the first coordinate to blow up, argmax over G = {_set(grow)} of "
                         f"mu_j (alpha_j - rho)^{depth - 2}, is e_{k0 + 1}")
    if depth >= 3 and depth % 2 == 1:
        beta = tuple(_rho_power(r, depth) for _ in range(d))
        return LinfLimit("fixed", None, beta, rho**depth * sp.Integer(1),
                         f"odd L = {depth}, G empty: every w_j increases to rho, beta -> rho^L 1 (no collapse)")
    if equal.any():
        beta = tuple(_rho_power(r, depth) if e else 0.0 for e in equal)
        return LinfLimit("fixed", None, beta, rho**depth * sp.Function("1_E")(j),
                         f"L = {depth}, G empty, E = {{j : alpha_j = rho}} = {_set(equal)}: beta -> rho^L 1_E "
                         "(the loss does not tend to 0)")
    return LinfLimit("zero", None, tuple(0.0 for _ in range(d)), sp.Lt(a_j, rho),
                     f"L = {depth} even, every alpha_j < rho: each w_j hits 0 in finite tau and slides there")


def linf_deep_scores(mu_value, alpha_value, rho_value, depth: int) -> np.ndarray:
    r""":math:`\mu_j(\alpha_j - \rho)^{L-2}` over :math:`G = \{\alpha_j > \rho\}`, ``-inf`` outside G (L >= 3:
    the largest wins).

    Parameters
    ----------
    mu_value : array_like
        The data point, :math:`\mu_j > 0`, shape (d,).
    alpha_value : float or array_like
        The balanced initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    rho_value : float
        The SAM radius ρ > 0.
    depth : int
        The depth L >= 3.

    Returns
    -------
    numpy.ndarray
        The scores, shape (d,).

    Raises
    ------
    InputError
        If ``mu_value``, ``alpha_value`` or ``rho_value`` has an entry <= 0, or the lengths of ``mu_value`` and
        ``alpha_value`` differ, or ``depth`` < 3.

    Examples
    --------
    >>> linf_deep_scores([1, 2], [2.0, 1.5], 0.5, 3).tolist()
    [1.5, 2.0]
    """
    m, a = _mu_alpha(mu_value, alpha_value, increasing=False)
    r = positive_scalar("rho", rho_value)
    depth = positive_int("depth", depth, minimum=3)
    out = np.full(m.size, -np.inf)
    grow = a > r
    out[grow] = LINF_DEEP_SCORE(m[grow], a[grow], r, depth)
    return out


def linf_deep_log_scores(mu_value, alpha_value, rho_value, depth: int) -> np.ndarray:
    r""":math:`\log\mu_j + (L-2)\log(\alpha_j - \rho)` over :math:`G = \{\alpha_j > \rho\}`, ``-inf`` outside
    G: the log of :func:`linf_deep_scores`, finite for every finite input (the score itself overflows at e.g.
    α = 1e30, L = 32), so the argmax and the tie test stay right.

    Parameters
    ----------
    mu_value : array_like
        The data point, :math:`\mu_j > 0`, shape (d,).
    alpha_value : float or array_like
        The balanced initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    rho_value : float
        The SAM radius ρ > 0.
    depth : int
        The depth L >= 3.

    Returns
    -------
    numpy.ndarray
        The log scores, shape (d,).

    Raises
    ------
    InputError
        If ``mu_value``, ``alpha_value`` or ``rho_value`` has an entry <= 0, or the lengths of ``mu_value`` and
        ``alpha_value`` differ, or ``depth`` < 3.

    Examples
    --------
    >>> import numpy as np
    >>> np.exp(linf_deep_log_scores([1, 2], [2.0, 1.5], 0.5, 3)).round(12).tolist()
    [1.5, 2.0]
    """
    m, a = _mu_alpha(mu_value, alpha_value, increasing=False)
    r = positive_scalar("rho", rho_value)
    depth = positive_int("depth", depth, minimum=3)
    out = np.full(m.size, -np.inf)
    grow = a > r
    out[grow] = LINF_DEEP_LOG_SCORE(m[grow], a[grow], r, depth)
    return out


def _rho_power(r: float, depth: int) -> float:
    """rho^L as a float; InputError naming rho when it is beyond float64 (e.g. rho = 1e30, L = 31)."""
    try:
        return float(r) ** depth
    except OverflowError:
        limit = float(np.finfo(float).max) ** (1.0 / depth)
        raise InputError("rho", f"gives rho^L ~ 1e{depth * np.log10(r):.0f}, beyond float64: at depth L = {depth} "
                                f"rho must be <= {limit:.4g} for the limit beta = rho^L to be representable",
                         r) from None


def _set(mask) -> str:
    return "{" + ", ".join(str(i + 1) for i in np.flatnonzero(mask)) + "}"


def linf_l2_weights(mu_value, alpha_value, rho_value, tau_value) -> np.ndarray:
    r"""L = 2 closed form with sliding: :math:`\max(\rho + (\alpha_j - \rho)e^{\mu_j\tau}, 0)` (0 after
    :math:`\tau_0`).

    Parameters
    ----------
    mu_value : array_like
        The data point, :math:`\mu_j > 0`, shape (d,).
    alpha_value : float or array_like
        The balanced initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    rho_value : float
        The SAM radius ρ > 0.
    tau_value : float or array_like
        Rescaled times τ, finite.

    Returns
    -------
    numpy.ndarray
        :math:`w_j(\tau)`, shape (len(tau), d), squeezed.

    Raises
    ------
    InputError
        If ``mu_value``, ``alpha_value`` or ``rho_value`` has an entry <= 0, or the lengths of ``mu_value`` and
        ``alpha_value`` differ, or ``tau_value`` is not finite.

    Examples
    --------
    >>> linf_l2_weights([1, 2], [0.5, 0.2], 0.3, [0.0, 1.0]).round(6).tolist()
    [[0.5, 0.2], [0.843656, 0.0]]
    """
    m, a = _mu_alpha(mu_value, alpha_value, increasing=False)
    r = positive_scalar("rho", rho_value)
    t = as_finite_vector("tau", tau_value)
    return np.squeeze(np.maximum(LINF_L2(m[None, :], a[None, :], r, t[:, None]), 0.0))


def linf_zero_hit_time(mu_value, alpha_value, rho_value, depth: int = 2) -> np.ndarray:
    r""":math:`\tau_0`, when :math:`w_j` reaches 0, for :math:`\alpha_j < \rho` (inf where :math:`\alpha_j \ge \rho`,
    or for odd L >= 3 where :math:`w_j` never reaches 0).

    Parameters
    ----------
    mu_value : array_like
        The data point, :math:`\mu_j > 0`, shape (d,).
    alpha_value : float or array_like
        The balanced initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    rho_value : float
        The SAM radius ρ > 0.
    depth : int
        The depth L >= 2 (default 2).

    Returns
    -------
    numpy.ndarray
        :math:`\tau_0`, shape (d,).

    Raises
    ------
    InputError
        If ``mu_value``, ``alpha_value`` or ``rho_value`` has an entry <= 0, or the lengths of ``mu_value`` and
        ``alpha_value`` differ, or ``depth`` < 2.

    Examples
    --------
    >>> import numpy as np
    >>> tau0 = linf_zero_hit_time([1, 2], [0.5, 0.2], 0.3)      # L = 2: 0.3 - 0.1 e^(2 tau) = 0
    >>> float(tau0[0]), bool(np.isclose(tau0[1], np.log(3) / 2))
    (inf, True)
    """
    m, a = _mu_alpha(mu_value, alpha_value, increasing=False)
    r = positive_scalar("rho", rho_value)
    depth = positive_int("depth", depth, minimum=2)
    below = a < r
    out = np.full(m.size, np.inf)
    if depth % 2 == 0:  # L = 2 and even L >= 4 (odd L never reaches 0)
        with np.errstate(divide="ignore", invalid="ignore"):  # numpy evaluates both branches; one is taken
            out[below] = LINF_ZERO_HIT_TIME(m[below], a[below], r, depth)
    return out


def linf_blowup_times(mu_value, alpha_value, rho_value, depth: int) -> np.ndarray:
    r""":math:`(\alpha_j - \rho)^{2-L}/((L-2)\mu_j)` for :math:`\alpha_j > \rho` at L >= 3 (inf elsewhere).

    Parameters
    ----------
    mu_value : array_like
        The data point, :math:`\mu_j > 0`, shape (d,).
    alpha_value : float or array_like
        The balanced initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    rho_value : float
        The SAM radius ρ > 0.
    depth : int
        The depth L >= 3.

    Returns
    -------
    numpy.ndarray
        The blow-up times, shape (d,).

    Raises
    ------
    InputError
        If ``mu_value``, ``alpha_value`` or ``rho_value`` has an entry <= 0, or the lengths of ``mu_value`` and
        ``alpha_value`` differ, or ``depth`` < 3.

    Examples
    --------
    >>> linf_blowup_times([1, 2], [2.0, 0.1], 0.5, 3).tolist()
    [0.6666666666666666, inf]
    """
    m, a = _mu_alpha(mu_value, alpha_value, increasing=False)
    r = positive_scalar("rho", rho_value)
    depth = positive_int("depth", depth, minimum=3)
    out = np.full(m.size, np.inf)
    g = a > r
    out[g] = LINF_DEEP_BLOWUP(m[g], a[g], r, depth)
    return out


def linf_deep_weights(mu_value, alpha_value, rho_value, tau_value, depth: int) -> np.ndarray:
    r"""Closed form at L >= 3 for every :math:`\alpha_j` (grow / equilibrium / parity-dependent below ρ), (d,).

    Parameters
    ----------
    mu_value : array_like
        The data point, :math:`\mu_j > 0`, shape (d,).
    alpha_value : float or array_like
        The balanced initial weights :math:`\alpha_j > 0`: one for every coordinate, or shape (d,).
    rho_value : float
        The SAM radius ρ > 0.
    tau_value : float
        One rescaled time τ (the first entry of an array), below every blow-up time.
    depth : int
        The depth L >= 3.

    Returns
    -------
    numpy.ndarray
        :math:`w_j(\tau)`, shape (d,).

    Raises
    ------
    InputError
        If ``mu_value``, ``alpha_value`` or ``rho_value`` has an entry <= 0, or the lengths of ``mu_value`` and
        ``alpha_value`` differ, ``depth`` < 3, or τ reaches a blow-up time (:func:`linf_blowup_times`).

    Examples
    --------
    >>> linf_deep_weights([1, 2], [2.0, 0.5], 0.5, 0.5, 3).round(12).tolist()   # grows; at rho: stays
    [6.5, 0.5]
    """
    m, a = _mu_alpha(mu_value, alpha_value, increasing=False)
    r = positive_scalar("rho", rho_value)
    depth = positive_int("depth", depth, minimum=3)
    t = float(as_finite_vector("tau", tau_value)[0])
    out = np.full(m.size, r)
    g, b = a > r, a < r
    if np.any(t >= linf_blowup_times(m, a, r, depth)):
        raise InputError("tau", "must be below every blow-up time (alpha - rho)^(2-L)/((L-2) mu)", tau_value)
    out[g] = LINF_DEEP_GROW(m[g], a[g], r, t, depth)
    if depth % 2 == 1:
        out[b] = LINF_DEEP_BELOW(m[b], a[b], r, t, depth)
    else:
        hit = linf_zero_hit_time(m, a, r, depth)
        alive = b & (t < hit)
        out[alive] = LINF_DEEP_BELOW(m[alive], a[alive], r, t, depth)
        out[b & ~alive] = 0.0
    return out


def linf_grows_unbalanced(mu_value, u0, v0, rho_value) -> np.ndarray:
    r"""L = 2, positive unbalanced init: coordinate j grows iff :math:`u_j(0) + v_j(0) > 2\rho` (boolean (d,)).

    Parameters
    ----------
    mu_value : array_like
        The data point, :math:`\mu_j > 0`, shape (d,).
    u0, v0 : array_like
        The two layers' initial weights, entries > 0, shape (d,).
    rho_value : float
        The SAM radius ρ > 0.

    Returns
    -------
    numpy.ndarray
        Booleans, shape (d,).

    Raises
    ------
    InputError
        If an entry is <= 0 or the lengths of ``u0`` or ``v0`` differ from ``mu_value``'s.

    Examples
    --------
    >>> linf_grows_unbalanced([1, 2], [0.5, 0.1], [0.2, 0.3], 0.3).tolist()
    [True, False]
    """
    m = positive_vector("mu", mu_value)
    u = matching_length("u0", positive_vector("u0", u0), m.size, "mu")
    v = matching_length("v0", positive_vector("v0", v0), m.size, "mu")
    r = positive_scalar("rho", rho_value)
    return (u + v) > UNBALANCED_THRESHOLD(r)


def linf_chatter_bound(h_value, mu_value, rho_value) -> np.ndarray:
    r"""The chatter bound :math:`2h\mu_j\rho` for discrete iterates sliding at 0 (L = 2): the bound first stated, which
    follows from the sharp :math:`h\mu_j\rho` (:data:`CHATTER_SHARP`).

    Parameters
    ----------
    h_value : float
        The Euler step h > 0 of one discrete step.
    mu_value : array_like
        The data point, :math:`\mu_j > 0`.
    rho_value : float
        The SAM radius ρ > 0.

    Returns
    -------
    numpy.ndarray
        The bound for each coordinate, the shape of ``mu_value``.

    Raises
    ------
    InputError
        If ``h_value``, ``rho_value`` or an entry of ``mu_value`` is <= 0.

    Examples
    --------
    >>> linf_chatter_bound(0.01, [1, 2], 0.3).round(12).tolist()
    [0.006, 0.012]
    """
    hv = positive_scalar("h", h_value)
    m = positive_vector("mu", mu_value)
    return np.asarray(CHATTER_BOUND(hv, m, positive_scalar("rho", rho_value)), dtype=float)
