r"""mpmath references (≥ 30 digits) for l2-SAM at L = 2 near the collapse threshold.

The same scalar ODE as :mod:`biasaudit.numerics.l2_reduction`, A' = 1/S with

.. math::  \ln S(τ, A) = \tfrac12 \ln \sum_j μ_j^2 α_j^2 e^{2(μ_j τ - c μ_j^2 A)},

but integrated with an *independent* method: Gragg–Bulirsch–Stoer extrapolation (modified midpoint rule
with the step sequence n = 2, 4, 6, …, Aitken–Neville extrapolation in h², error control on the last two
diagonal entries) in mpmath arithmetic at ``dps`` digits (default 40). Nothing here shares code with the
float64 RK4 kernel, so agreement between the two is evidence, not a tautology.

Public:

* :func:`mp_classify` — collapse / escape / undecided by the two certificates (S ≤ cμ₁; max_j w_j > c);
* :func:`mp_alpha_collapse` — α_c/c for a uniform α by bisection started from a (float64) bracket;
* :func:`mp_A_at` — A(τ) at given times (for the switch times and α_c(1 + 1e−8) trajectories);
* :func:`mp_switch_times` — roots of τ = c(μ_j + μ_{j+1}) A(τ) along a trajectory.

Symbols: μ (``mu``), α (``alpha``), c (``c``), τ (``tau``), A, S as in :mod:`biasaudit.numerics.l2_reduction`.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath

from biasaudit.plumbing import positive_increasing, positive_scalar

__all__ = ["mp_classify", "mp_alpha_collapse", "mp_A_at", "mp_switch_times", "MpClassification"]

DEFAULT_DPS = 40


@dataclass(frozen=True)
class MpClassification:
    """The result of :func:`mp_classify`.

    Parameters
    ----------
    code : int
        −1 collapse (S <= cμ₁), +1 escape (max_j w_j > c), 0 undecided at the horizon.
    tau : mpmath.mpf
        The rescaled time of the decision.
    A : mpmath.mpf
        A(τ) there.
    """

    code: int  # −1 collapse, +1 escape, 0 undecided
    tau: object
    A: object


class _Field:
    """A' = f(τ, A) in mpmath, for a uniform or per-coordinate α."""

    def __init__(self, mu, alpha, c):
        self.mu = [mpmath.mpf(m) for m in mu]
        alpha = list(alpha) if hasattr(alpha, "__len__") else [alpha] * len(self.mu)
        self.alpha = [mpmath.mpf(a) for a in alpha]
        self.c = mpmath.mpf(c)
        self.log_mu_alpha = [mpmath.log(m * a) for m, a in zip(self.mu, self.alpha)]
        self.log_alpha = [mpmath.log(a) for a in self.alpha]

    def exponents(self, tau, A):
        return [lma + m * tau - self.c * m * m * A for lma, m in zip(self.log_mu_alpha, self.mu)]

    def log_S(self, tau, A):
        x = self.exponents(tau, A)
        top = max(x)
        return top + mpmath.log(mpmath.fsum(mpmath.exp(2 * (xi - top)) for xi in x)) / 2

    def rhs(self, tau, A):
        return mpmath.exp(-self.log_S(tau, A))

    def max_log_w(self, tau, A):
        return max(la + m * tau - self.c * m * m * A for la, m in zip(self.log_alpha, self.mu))


def _gbs_step(f, t, y, H, tol, kmax=12):
    """One GBS macro step of size H; returns (y_new, error_estimate)."""
    table = []
    for k in range(1, kmax + 1):
        n = 2 * k
        h = H / n
        z0, z1 = y, y + h * f(t, y)
        for m in range(1, n):
            z0, z1 = z1, z0 + 2 * h * f(t + m * h, z1)
        row = [(z1 + z0 + h * f(t + H, z1)) / 2]
        for j in range(1, k):  # Neville in h²: T_{k,j+1} = T_{k,j} + (T_{k,j} − T_{k−1,j})/((n_k/n_{k−j})² − 1)
            ratio = (mpmath.mpf(n) / (2 * (k - j))) ** 2
            row.append(row[j - 1] + (row[j - 1] - table[-1][j - 1]) / (ratio - 1))
        if k > 2:
            err = abs(row[-1] - table[-1][-1])
            if err <= tol * (1 + abs(row[-1])):
                return row[-1], err
        table.append(row)
    return row[-1], err


def _integrate(field, tau0, A0, tau1, tol, H):
    t, A = tau0, A0
    while t < tau1:
        h = min(H, tau1 - t)
        A_new, err = _gbs_step(field.rhs, t, A, h, tol)
        if err > tol * (1 + abs(A_new)):
            H = H / 2
            continue
        t, A = t + h, A_new
    return A


def _check(mu, c):
    mu = positive_increasing("mu", mu)
    c = positive_scalar("c", c)
    return [float(m) for m in mu], c


def mp_classify(mu, alpha, c, *, tau_max=None, dps: int = DEFAULT_DPS, H=None, tol=None) -> MpClassification:
    """Classify the trajectory from α (uniform or per coordinate) by the certificates, at ``dps`` digits.

    Certificates are tested after every macro step H (default 1/μ_d). ``tol``: local error tolerance of a
    GBS step (default 10^(5−dps)); classifying α_c(1 ± r) needs only tol ≪ r.

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    alpha : float or sequence
        The initial weights α > 0: one for every coordinate, or one per coordinate.
    c : float
        :math:`c_L` > 0.
    tau_max : optional
        The horizon (default 60/μ₁ + 60/μ_d).
    dps : int
        The working precision in decimal digits (default :data:`DEFAULT_DPS`).
    H : optional
        The macro step.
    tol : optional
        The local error tolerance.

    Returns
    -------
    MpClassification
        The certificate that fired, and when.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing, or ``c`` <= 0.

    Examples
    --------
    >>> mp_classify([1.0, 2.0], 0.01, 1.0, dps=20).code, mp_classify([1.0, 2.0], 2.0, 1.0, dps=20).code
    (-1, 1)
    """
    mu, c = _check(mu, c)
    with mpmath.workdps(dps):
        field = _Field(mu, alpha, c)
        H = mpmath.mpf(1) / field.mu[-1] if H is None else mpmath.mpf(H)
        tau_max = mpmath.mpf(60) / field.mu[0] + mpmath.mpf(60) / field.mu[-1] if tau_max is None else tau_max
        tol = mpmath.mpf(10) ** (-dps + 5) if tol is None else mpmath.mpf(tol)
        log_c_mu1, log_c = mpmath.log(field.c * field.mu[0]), mpmath.log(field.c)
        tau, A = mpmath.mpf(0), mpmath.mpf(0)
        while True:
            if field.log_S(tau, A) <= log_c_mu1:
                return MpClassification(-1, tau, A)
            if field.max_log_w(tau, A) > log_c:
                return MpClassification(1, tau, A)
            if tau >= tau_max:
                return MpClassification(0, tau, A)
            A = _integrate(field, tau, A, tau + H, tol, H)
            tau = tau + H


def mp_alpha_collapse(mu, lo_over_c, hi_over_c, *, rel_tol=1e-15, dps: int = DEFAULT_DPS):
    """α_c/c by bisection inside the bracket [lo, hi] (units of c; c = 1 w.l.o.g.: only α/c matters).

    The bracket is first *verified* (lo must collapse, hi must escape); a ValueError says otherwise.

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    lo_over_c, hi_over_c : float
        The bracket, in units of c.
    rel_tol : float
        Stop once hi − lo ≤ ``rel_tol``·hi.
    dps : int
        The working precision in decimal digits (default :data:`DEFAULT_DPS`).

    Returns
    -------
    tuple of mpmath.mpf
        (lo, hi) with hi − lo ≤ rel_tol·hi.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing.
    ValueError
        If the bracket's ends do not collapse and escape, or a midpoint is undecided within the horizon.

    Examples
    --------
    >>> lo, hi = mp_alpha_collapse([1.0, 2.0], 0.3, 0.9, rel_tol=1e-6, dps=20)
    >>> round(float(lo), 5), float(hi - lo) <= 1e-6 * float(hi)
    (0.73726, True)
    """
    mu, _ = _check(mu, 1.0)
    with mpmath.workdps(dps):
        lo, hi = mpmath.mpf(lo_over_c), mpmath.mpf(hi_over_c)
        if mp_classify(mu, lo, 1, dps=dps).code != -1:
            raise ValueError(f"alpha: the lower end {lo} of the bracket does not collapse")
        if mp_classify(mu, hi, 1, dps=dps).code != 1:
            raise ValueError(f"alpha: the upper end {hi} of the bracket does not escape")
        while hi - lo > rel_tol * hi:
            mid = (lo + hi) / 2
            code = mp_classify(mu, mid, 1, dps=dps).code
            if code == 1:
                hi = mid
            elif code == -1:
                lo = mid
            else:
                raise ValueError(f"alpha: undecided at {mid} within the horizon")
        return lo, hi


def mp_A_at(mu, alpha, c, taus, *, dps: int = DEFAULT_DPS, H=None):
    """A(τ) at the increasing times ``taus`` (mpf list), integrated at ``dps`` digits (up to a collapse, where A grows
    without bound as S → 0).

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    alpha : float or sequence
        The initial weights α > 0: one for every coordinate, or one per coordinate.
    c : float
        :math:`c_L` > 0.
    taus : sequence of float
        Increasing times.
    dps : int
        The working precision in decimal digits (default :data:`DEFAULT_DPS`).
    H : optional
        The macro step (default 1/(4μ_d)).

    Returns
    -------
    list of mpmath.mpf
        A at each time.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing, or ``c`` <= 0.

    Examples
    --------
    >>> [round(float(A), 9) for A in mp_A_at([1.0, 2.0], 0.5, 1.0, [0.5, 1.0], dps=20)]
    [0.721872006, 4.268599151]
    """
    mu, c = _check(mu, c)
    with mpmath.workdps(dps):
        field = _Field(mu, alpha, c)
        H = mpmath.mpf(0.25) / field.mu[-1] if H is None else mpmath.mpf(H)
        tol = mpmath.mpf(10) ** (-dps + 5)
        out, tau, A = [], mpmath.mpf(0), mpmath.mpf(0)
        for t in taus:
            t = mpmath.mpf(t)
            A = _integrate(field, tau, A, t, tol, H)
            tau = t
            out.append(+A)
        return out


def mp_switch_times(mu, alpha, c, tau_guesses, *, dps: int = DEFAULT_DPS, window: float = 0.5):
    """Roots τ of τ − c(μ_j + μ_{j+1})A(τ) = 0 for j = 1..len(guesses) (1-based pairs), guesses increasing.

    A is integrated once up to ``guess − window`` (a checkpoint), then each root is found by the secant
    method, integrating only from the checkpoint.

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    alpha : float or sequence
        The initial weights α > 0: one for every coordinate, or one per coordinate.
    c : float
        :math:`c_L` > 0.
    tau_guesses : sequence of float
        A guess of each root, increasing.
    dps : int
        The working precision in decimal digits (default :data:`DEFAULT_DPS`).
    window : float
        How far before each guess the checkpoint sits.

    Returns
    -------
    list of mpmath.mpf
        The roots, one per guess.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing, or ``c`` <= 0.
    """
    mu, c = _check(mu, c)
    roots = []
    with mpmath.workdps(dps):
        field = _Field(mu, alpha, c)
        H = mpmath.mpf(1) / field.mu[-1]
        tol = mpmath.mpf(10) ** (-dps + 5)
        cm = mpmath.mpf(c)
        t0, A0 = mpmath.mpf(0), mpmath.mpf(0)
        for j, guess in enumerate(tau_guesses):
            pair = field.mu[j] + field.mu[j + 1]
            start = mpmath.mpf(guess) - window
            A0 = _integrate(field, t0, A0, start, tol, H)
            t0 = start

            def g(t, pair=pair, t0=t0, A0=A0):
                return t - cm * pair * _integrate(field, t0, A0, t, tol, H)

            roots.append(mpmath.findroot(g, (mpmath.mpf(guess), mpmath.mpf(guess) + mpmath.mpf(window) / 10),
                                         solver="secant", tol=mpmath.mpf(10) ** (-2 * dps + 10)))
    return roots
