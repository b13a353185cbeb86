r"""Gradient flow on the shared-weight model by ``scipy.integrate.solve_ivp`` (independent of the closed form).

In log coordinates :math:`u = \log\beta` the flow :math:`\dot w = -4c\,r\,x\odot w` reads

.. math:: \dot u = -8c\,r\,x,\qquad r = \sum_i x_i e^{u_i} - y,

which stays smooth for tiny initializations (β₀ = α², α → 0). The run stops at the terminal event
:math:`|r| =` ``r_stop`` (default 1e-12·y; the integrator's own noise on r is ~1e-13·y, so a smaller stop
may never trigger): what remains of the flow moves β by at most :math:`\beta\cdot 8c\,x\,r_{stop}/S`
(relative). ``t_max`` defaults to a bound from the rates: the growth phase takes about
:math:`|\log\beta_0|/(8c\,y\,x_{min})` and the final phase contracts r at rate :math:`S\ge 8c\,y\,x_{min}`;
a run that reaches it has ``sol.status == 0`` (callers treat that as undecided).

Symbols: ``u`` = log β, ``r`` residual, ``c`` loss factor, ``t`` time.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from biasaudit.theory.eos_model import eos_problem

__all__ = ["flow_ode"]

RTOL = 1e-12  # DOP853 relative tolerance on u = log(beta)
ATOL = 1e-13  # absolute tolerance on u (u is O(1..20))


def flow_ode(x, y, w0, *, loss_factor=0.5, r_stop=None, t_max=None, dense=False):
    r"""Integrate the flow until ``|r| <= r_stop``. Returns (sol, beta_end, t_end); sol has ``.sol`` if dense.

    The gradient flow in :math:`u = \log\beta`, :math:`\dot u = -8c\,r\,x`, by DOP853.

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.
    loss_factor : float
        c in :math:`L = c r^2`, > 0 (default 1/2).
    r_stop : float, optional
        Stop once ``|r| <= r_stop`` (default 1e-12·y).
    t_max : float, optional
        The time limit (default: ample for the slowest coordinate).
    dense : bool
        Keep the dense output.

    Returns
    -------
    tuple
        ``(sol, beta_end, t_end)``: solve_ivp's result (None when ``w0`` already is on M), β at the end, shape (d,),
        and the time at the end.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.theory.eos_model.eos_problem`.

    Examples
    --------
    >>> from biasaudit.theory.eos_flow import gradient_flow_limit
    >>> sol, beta, t_end = flow_ode([1, 2], 1, [0.1, 0.1])
    >>> bool(np.allclose(beta, gradient_flow_limit([1, 2], 1, [0.1, 0.1]), rtol=1e-9))
    True
    """
    p = eos_problem(x, y, w0, loss_factor=loss_factor)
    r_stop = 1e-12 * p.y if r_stop is None else float(r_stop)
    xv, yv, c = p.x, p.y, p.c
    if t_max is None:
        rate = 8 * c * yv * xv.min()
        t_max = (100.0 + 10.0 * float(np.max(np.abs(np.log(p.beta0 * xv / yv))))) / rate

    def rhs(t, u):
        return -8 * c * (xv @ np.exp(u) - yv) * xv

    def event(t, u):
        return abs(xv @ np.exp(u) - yv) - r_stop

    event.terminal = True
    u0 = np.log(p.beta0)
    if abs(p.r0) <= r_stop:
        return None, p.beta0.copy(), 0.0
    sol = solve_ivp(rhs, (0.0, t_max), u0, method="DOP853", rtol=RTOL, atol=ATOL, events=event,
                    dense_output=dense)
    return sol, np.exp(sol.y[:, -1]), float(sol.t[-1])
