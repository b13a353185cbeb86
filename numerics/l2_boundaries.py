r"""α_c, the l2-SAM collapse threshold, and the regime boundaries that include it.

:mod:`biasaudit.theory.sam_l2` states what α_c is — the point of the sandwich c_Lμ₁/‖μ‖ ≤ α_c ≤ c_Lμ_d/‖μ‖
where the certificates switch from collapse (S ≤ cμ₁ at L = 2; every w̃_j ≤ 0 at even L ≥ 4) to escape
(max_j w_j > c_L) — but α_c has no closed form, so it is computed here, by bisection on the certificates,
and :func:`l2_sam_regime_boundaries` returns the theory's statement with it filled in. (Layers import
downwards: theory never calls numerics; see ``notes/conventions.md``.)

Symbols: μ (data, increasing), ρ (SAM radius), c = c_L (:func:`biasaudit.theory.sam_l2.c_L`), α (uniform
initial scale), L (depth).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from biasaudit.numerics.l2_deep import classify_deep_trajectory
from biasaudit.numerics.l2_reduction import COLLAPSE, ESCAPE, _classify, default_horizon, default_step
from biasaudit.plumbing import InputError, positive_scalar
from biasaudit.theory.sam_l2 import L2Regimes, c_L, l2_regime_statement, validate_regime_inputs

__all__ = ["DEEP_MIN_DIGITS", "DEEP_FLOOR_DIGITS", "alpha_collapse", "l2_sam_regime_boundaries"]

DEEP_MIN_DIGITS = 10  # even L ≥ 4, μ_d/μ_1 ≤ 4 (the claims' domain): the bracket reaches 10 significant digits
DEEP_FLOOR_DIGITS = 6  # even L ≥ 4 in general: an undecided midpoint stops the bisection with the bracket it has
#                        once that is ≤ 10^−6 of α_c; earlier it is an error. The deep field vanishes to order
#                        L − 1 at the saddle c·e_1, so a trajectory within ~1e-7 of the separatrix stalls there
#                        for longer than any horizon: measured μ = (1, 10), L = 4 stops at 7.7 digits
#                        (the bracket is returned and the CLI reports it)


def alpha_collapse(mu, rho_value: float, *, depth: int = 2, normalization: str = "joint",
                   rel_tol: float = 1e-12, dt: float | None = None, return_bracket: bool = False):
    r""":math:`\alpha_c` for uniform α at depth 2 or any even depth, by bisection between the sandwich bounds driven by
    the two certificates (numba kernels).

    L = 2: each bisection step integrates the reduced A-ODE (:func:`biasaudit.numerics.l2_reduction._classify`)
    until S ≤ cμ₁ (collapse) or max_j w_j > c (escape). Even L ≥ 4: the flow u' = μ ũ^{L−1} in units of c_L,
    adaptive, until every w̃_j ≤ 0 (collapse) or max_j w_j > c_L (escape) (:mod:`biasaudit.numerics.l2_deep`);
    there the separatrix ends on a degenerate equilibrium, trajectories within ~1e−11 of α_c stay undecided
    within the horizon (~1e−7 at μ = (1, 10)), and the bisection stops with that bracket (RuntimeError if
    it is wider than :data:`DEEP_FLOOR_DIGITS` significant digits allow; ``return_bracket`` gives it). Works in
    units of c (only α/c matters) and stops when the bracket is narrower than ``rel_tol`` relative. d = 1:
    α_c = c exactly (the unstable point). Odd L never collapses: :class:`InputError`.

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    rho_value : float
        The SAM radius ρ > 0.
    depth : int
        The depth L (default 2).
    normalization : str
        ``"joint"`` (the default) or ``"layer"``.
    rel_tol : float
        Stop the bisection once the bracket is narrower than this, relative.
    dt : float, optional
        The RK4 step at L = 2 (default :func:`~biasaudit.numerics.l2_reduction.default_step`).
    return_bracket : bool
        Also return the final bracket.

    Returns
    -------
    float or tuple
        :math:`\alpha_c`, or ``(alpha_c, (lo, hi))`` with ``return_bracket``.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.theory.sam_l2.validate_regime_inputs`, or ``depth`` is odd.
    RuntimeError
        If an even L >= 4 leaves a bracket wider than :data:`DEEP_FLOOR_DIGITS` allow undecided.
    """
    mu, rho_value, depth = validate_regime_inputs(mu, rho_value, depth, normalization)
    if depth % 2:
        raise InputError("depth", "must be even: at odd L the small-alpha field is positive and beta never "
                         "collapses, so there is no alpha_collapse", depth)
    rel_tol = positive_scalar("rel_tol", rel_tol)
    cv = c_L(rho_value, depth, normalization)
    if mu.size == 1:
        return (cv, (cv, cv)) if return_bracket else cv
    norm = float(np.linalg.norm(mu))
    lo, hi = mu[0] / norm, mu[-1] / norm  # units of c
    if depth == 2:
        dt = default_step(mu) if dt is None else positive_scalar("dt", dt)
        horizon = default_horizon(mu)
        out = np.zeros(3)
        log_alpha = np.empty(mu.size)

        def classify(a):
            log_alpha[:] = np.log(a)
            _classify(log_alpha, mu, 1.0, dt, horizon, out)
            return out[0]
    else:
        def classify(a):
            return classify_deep_trajectory(mu, a, depth).code
    while hi - lo > rel_tol * hi:
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:  # float spacing reached
            break
        code = classify(mid)
        if code == ESCAPE:
            hi = mid
        elif code == COLLAPSE:
            lo = mid
        elif depth > 2 and 0.5 * (hi - lo) <= 10.0 ** -DEEP_FLOOR_DIGITS * hi:
            break  # on the separatrix to within what the stalling flow resolves: keep the decided bracket
        else:
            raise RuntimeError(f"alpha_collapse: undecided at alpha/c={mid!r} (depth {depth}) with the bracket "
                               f"[{lo!r}, {hi!r}] still wider than the target")
    value = cv * 0.5 * (lo + hi)
    return (value, (cv * lo, cv * hi)) if return_bracket else value


def l2_sam_regime_boundaries(mu, rho_value: float, *, depth: int = 2, normalization: str = "joint",
                             rel_tol: float = 1e-12) -> L2Regimes:
    r"""Predicted regime boundaries of l2-SAM for uniform α (see :class:`~biasaudit.theory.sam_l2.L2Regimes`):
    the closed forms of :func:`~biasaudit.theory.sam_l2.l2_regime_statement`, plus :math:`\alpha_c` and its bisection
    bracket from :func:`alpha_collapse` where a collapse boundary exists (L = 2 and every even L).

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    rho_value : float
        The SAM radius ρ > 0.
    depth : int
        The depth L (default 2).
    normalization : str
        ``"joint"`` (the default) or ``"layer"``.
    rel_tol : float
        Stop the bisection once the bracket is narrower than this, relative.

    Returns
    -------
    L2Regimes
        The statement with ``alpha_collapse`` and ``alpha_collapse_bracket`` filled in where they exist.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.theory.sam_l2.validate_regime_inputs`.
    """
    statement = l2_regime_statement(mu, rho_value, depth=depth, normalization=normalization)
    if not statement.collapses:
        return statement
    value, bracket = alpha_collapse(mu, rho_value, depth=depth, normalization=normalization, rel_tol=rel_tol,
                                    return_bracket=True)
    return dataclasses.replace(statement, alpha_collapse=value, alpha_collapse_bracket=bracket)
