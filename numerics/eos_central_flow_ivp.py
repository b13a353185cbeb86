r"""The central flow by ``scipy.integrate.solve_ivp``: the plain reference beside the numba kernel of
:mod:`biasaudit.numerics.eos_central_flow`.

Independent of the kernel in everything but the flow's definition: the field is the theory's numpy one
(:func:`biasaudit.theory.eos_central_flow.central_velocity`, the lambdified formulas with ``numpy.linalg.eigh``),
DOP853 at ``rtol`` = 1e-11, the edge met by solve_ivp's event location on S − 2/η (no projection: on the edge the
field is tangent to the level set, so S drifts only by the integration error, which the result reports), the
edge left by an event on μ, and the run stopped at |r| = ``r_stop``·y. A run still moving at ``t_max`` (a stalled
flow, η > 1/(4cyx_min)) ends with ``status`` "t_max".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

from biasaudit.numerics.eos_central_flow import validate_etas
from biasaudit.theory.eos_central_flow import (central_velocity, edge_multiplier, loss_gradient, sharpness_gradient,
                                               top_eigenpair)
from biasaudit.theory.eos_model import eos_problem, residual

__all__ = ["CentralFlowIvp", "central_flow_ivp"]

RTOL, ATOL = 1e-11, 1e-14


@dataclass(frozen=True)
class CentralFlowIvp:
    """The reference's endpoint ``w`` (β = w⊙w), ``status`` ("converged", "t_max" or "unstable_start"),
    ``met_edge``, the time it met the edge, and the drift ``|S − 2/η|/(2/η)`` at the end.

    Parameters
    ----------
    w : numpy.ndarray
        The endpoint, shape (d,).
    status : str
        ``"converged"`` (``|r| <= r_stop·y``), ``"t_max"`` or ``"unstable_start"`` (S(w0) > 2/η).
    met_edge : bool
        Whether the flow reached S = 2/η.
    t_edge : float or None
        The time it did.
    t_end : float
        The time at the end.
    edge_gap : float
        The drift at the end.
    path_t : numpy.ndarray
        The times of ``t_eval`` the run reached (empty without ``t_eval``).
    path_w : numpy.ndarray
        w at those times, shape (len(path_t), d).
    """

    w: np.ndarray
    status: str
    met_edge: bool
    t_edge: float | None
    t_end: float
    edge_gap: float
    path_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    path_w: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def beta(self) -> np.ndarray:
        """The endpoint β = w⊙w."""
        return self.w * self.w


def central_flow_ivp(x, y, w0, eta, *, loss_factor=0.5, r_stop=1e-10, t_max=None, t_eval=None) -> CentralFlowIvp:
    r"""Integrate the central flow at one ``eta`` with solve_ivp (gradient flow, then the edge, phase by phase).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.
    eta : float
        The step size η > 0 (the first entry of an array).
    loss_factor : float
        c in :math:`L = c r^2`, > 0 (default 1/2).
    r_stop : float
        Stop once :math:`|r| \le` ``r_stop``·y (default 1e-10).
    t_max : float, optional
        The time limit (default: long enough for the slow decay of r on the edge).
    t_eval : array_like, optional
        Increasing times at which w is also recorded (``path_t``, ``path_w``; solve_ivp's dense output).

    Returns
    -------
    CentralFlowIvp
        The endpoint and how it got there.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.theory.eos_model.eos_problem` or η is not finite and > 0.

    Examples
    --------
    >>> flow = central_flow_ivp([1, 2], 1, [0.1, 0.1], 0.3)   # on the edge: S = 8c(β_1 + 4β_2) = 2/η
    >>> flow.status, flow.met_edge, flow.beta.round(6).tolist()
    ('converged', True, [0.333333, 0.333333])
    """
    p = eos_problem(x, y, w0, loss_factor=loss_factor)
    eta = float(validate_etas(eta)[0])
    xv, yv, c = p.x, p.y, p.c
    thr = 2.0 / eta
    if t_max is None:  # on the edge r decays slowly (8c g'P g, measured down to ~1e-3 of 8cyx_min): 1e5 time units
        rate = 8 * c * yv * xv.min()
        t_max = (1e5 + 10.0 * float(np.max(np.abs(np.log(p.beta0 * xv / yv))))) / rate

    def done(t, w):
        return abs(float(residual(xv, yv, w))) - r_stop * yv

    done.terminal = True

    def meets_edge(t, w):
        return top_eigenpair(xv, yv, w, c)[0] - thr

    meets_edge.terminal, meets_edge.direction = True, 1

    def leaves_edge(t, w):
        return edge_multiplier(sharpness_gradient(xv, yv, w, c)[1], loss_gradient(xv, yv, w, c))

    leaves_edge.terminal, leaves_edge.direction = True, 1

    w, t = p.w0.copy(), 0.0
    grid = np.zeros(0) if t_eval is None else np.asarray(t_eval, dtype=float)
    path_t, path_w = [], []
    if top_eigenpair(xv, yv, w, c)[0] >= thr:
        return CentralFlowIvp(w, "unstable_start", False, None, 0.0, float("nan"))
    met, t_edge, edge, converged = False, None, False, False
    while t < t_max and not converged:
        if edge:
            sol = solve_ivp(lambda s, u: central_velocity(xv, yv, u, c), (t, t_max), w, method="DOP853",
                            rtol=RTOL, atol=ATOL, events=(done, leaves_edge), dense_output=grid.size > 0)
        else:
            sol = solve_ivp(lambda s, u: -loss_gradient(xv, yv, u, c), (t, t_max), w, method="DOP853",
                            rtol=RTOL, atol=ATOL, events=(done, meets_edge), dense_output=grid.size > 0)
        if grid.size:
            here = grid[(grid >= t) & (grid <= sol.t[-1])]
            path_t.extend(here.tolist())
            path_w.extend(sol.sol(here).T.tolist())
            grid = grid[grid > sol.t[-1]]
        w, t = sol.y[:, -1].copy(), float(sol.t[-1])
        converged = len(sol.t_events[0]) > 0
        if sol.status != 1 or converged:
            break
        edge = not edge
        if edge and not met:
            met, t_edge = True, t
    status = "converged" if converged else "t_max"
    gap = abs(top_eigenpair(xv, yv, w, c)[0] - thr) / thr
    return CentralFlowIvp(w, status, met, t_edge, t, float(gap), np.asarray(path_t),
                          np.asarray(path_w).reshape(len(path_t), len(w)))
