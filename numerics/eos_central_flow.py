r"""The central flow of the shared-weight model at step η, integrated by a numba kernel (Dormand–Prince 5(4)).

The flow (:mod:`biasaudit.theory.eos_central_flow`): gradient flow :math:`\dot w = -\nabla L` while
S(w) = λ_max(H(w)) < 2/η; on the edge S = 2/η, while ⟨∇S, −∇L⟩ > 0, the projected flow
:math:`\dot w = -\nabla L + \mu\nabla S`, μ = ⟨∇S, ∇L⟩/‖∇S‖².

The kernel :func:`_central_flow` steps w with the adaptive Dormand–Prince 5(4) pair of
:data:`biasaudit.numerics.tableau.DOPRI5` (RMS error norm ``|e_i|/(atol + rtol·max(|w_i|, |w_new_i|))``, the
step factor of :func:`biasaudit.numerics.flows.dp_step_factor`) and handles three events:

* **meeting the edge**: a gradient-flow step that ends with S > 2/η is shortened to the crossing (Illinois
  iteration on the step length until |S − 2/η| ≤ ``EDGE_RTOL``·2/η), and the flow switches to the edge;
* **staying on it**: after each step on the edge, w is projected back onto S = 2/η by Newton steps along ∇S
  (:math:`w \leftarrow w - (S - 2/\eta)\nabla S/\|\nabla S\|^2`, until |S − 2/η| ≤ ``EDGE_RTOL``·2/η), so the
  constraint does not drift over a long run;
* **leaving it**: when μ > 0 (the gradient would lower S) the flow is gradient flow again.

The run ends ``converged`` at |r| ≤ ``R_STOP``·y (what remains of the flow moves β by O(|r|)),
``stalled`` on the edge when ‖ẇ‖ ≤ ``STALL_RTOL``·‖∇L‖ with r ≠ 0 (η > 1/(4cyx_min): no minimum with S ≤ 2/η),
``unstable_start`` when S(w₀) ≥ 2/η (GD is unstable at w₀, the flow is not defined there), or ``max_steps``.

∇S uses v from LAPACK's ``eigh`` of the d×d Hessian and the entries of
:data:`~biasaudit.theory.eos_central_flow.SHARPNESS_GRADIENT` (``16c p x v + 8c m x w``) written out in the kernel;
tests check them against the lambdified formula. The plain reference is
:func:`biasaudit.numerics.eos_central_flow_ivp.central_flow_ivp` (``solve_ivp`` on the theory's numpy field).

Symbols: ``x`` data, ``y`` label, ``w`` weights, ``r`` residual, ``c`` loss factor, ``eta`` step, ``thr`` = 2/η,
``S`` sharpness, ``v`` top eigenvector, ``mu`` the edge multiplier, ``h`` time step.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from numba import njit

from biasaudit.numerics.flows import dp_step_factor
from biasaudit.numerics.tableau import DOPRI5
from biasaudit.plumbing import InputError, as_finite_vector, finite_scalar
from biasaudit.theory.eos_model import eos_problem, hessian_eigenvalues
from biasaudit.theory.eos_risk import bayes_risk

__all__ = ["STATUSES", "CentralFlow", "central_flow", "central_flow_curve", "RTOL", "ATOL", "R_STOP", "EDGE_RTOL",
           "STALL_RTOL", "MAX_STEPS", "validate_etas"]

STATUSES = ("converged", "stalled", "unstable_start", "max_steps")
CONVERGED, STALLED, UNSTABLE_START, MAX_STEPS_HIT = range(4)
RTOL = 1e-10  # DOPRI5 relative tolerance on w
ATOL = 1e-14  # absolute tolerance on w (w never reaches 0 from a non-zero init: the flow is multiplicative)
R_STOP = 1e-9  # stop at |r| <= R_STOP * y: above the integrator's noise on r (~RTOL y); moves beta by O(1e-9)
EDGE_RTOL = 1e-13  # |S - 2/eta| after an edge event or a projection: a few ulps of S
STALL_RTOL = 1e-9  # on the edge, ||wdot|| <= this * ||grad L||: the projected gradient has vanished, r has not
MAX_STEPS = 200_000  # accepted + rejected steps (a converging run takes ~100-600)
_NEWTON_MAX = 8  # projection steps onto S = 2/eta (each squares the error; 2 suffice after a step)
_ILLINOIS_MAX = 80  # iterations locating the edge in a step (superlinear; ~10 are used)
_DP_A, _DP_B, _DP_E = DOPRI5.a, DOPRI5.b, DOPRI5.b_error


# ----------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _top(x, y, w, c, H):
    """(r, λ_max, v): the residual and the top eigenpair of H = 2c(4ggᵀ + 2r diag(x)) (``H`` is d×d scratch)."""
    d = x.shape[0]
    r = -y
    for i in range(d):
        r += x[i] * w[i] * w[i]
    for i in range(d):
        gi = x[i] * w[i]
        for j in range(d):
            H[i, j] = 8.0 * c * gi * x[j] * w[j]
        H[i, i] += 4.0 * c * r * x[i]
    lam, vecs = np.linalg.eigh(H)
    return r, lam[d - 1], vecs[:, d - 1].copy()


@njit(cache=True)
def _grads(x, y, w, c, H, gS, gL):
    """Fill ∇S (v fixed: 16c p x⊙v + 8c m x⊙w) and ∇L (4c r x⊙w); return (r, S)."""
    d = x.shape[0]
    r, S, v = _top(x, y, w, c, H)
    p = 0.0
    m = 0.0
    for i in range(d):
        p += x[i] * w[i] * v[i]
        m += x[i] * v[i] * v[i]
    for i in range(d):
        gS[i] = 16.0 * c * p * x[i] * v[i] + 8.0 * c * m * x[i] * w[i]
        gL[i] = 4.0 * c * r * x[i] * w[i]
    return r, S


@njit(cache=True)
def _field(x, y, w, c, edge, H, gS, gL, out):
    """The velocity into ``out``: −∇L, or on the edge −∇L + μ∇S. Returns μ (0 off the edge)."""
    d = x.shape[0]
    if not edge:
        r = -y
        for i in range(d):
            r += x[i] * w[i] * w[i]
        for i in range(d):
            out[i] = -4.0 * c * r * x[i] * w[i]
        return 0.0
    _grads(x, y, w, c, H, gS, gL)
    inner = 0.0
    norm2 = 0.0
    for i in range(d):
        inner += gS[i] * gL[i]
        norm2 += gS[i] * gS[i]
    mu = inner / norm2
    for i in range(d):
        out[i] = -gL[i] + mu * gS[i]
    return mu


@njit(cache=True)
def _dp_step(x, y, w, c, edge, h, K, H, gS, gL, tmp, out, err):
    """One DOPRI5 step from w (K[0] = the field at w, given): the new point into ``out``, the error estimate into
    ``err``."""
    d = w.shape[0]
    for st in range(1, _DP_A.shape[0]):
        for j in range(d):
            acc = w[j]
            for m in range(st):
                acc += h * _DP_A[st, m] * K[m, j]
            tmp[j] = acc
        _field(x, y, tmp, c, edge, H, gS, gL, K[st])
    for j in range(d):
        acc = w[j]
        e = 0.0
        for m in range(_DP_B.shape[0]):
            if _DP_B[m] != 0.0:
                acc += h * _DP_B[m] * K[m, j]
            e += _DP_E[m] * K[m, j]
        out[j] = acc
        err[j] = h * e


@njit(cache=True)
def _scaled_error(err, w, wn, rtol, atol):
    total = 0.0
    for j in range(w.shape[0]):
        sc = atol + rtol * max(abs(w[j]), abs(wn[j]))
        total += (err[j] / sc) ** 2
    return math.sqrt(total / w.shape[0])


@njit(cache=True)
def _project(x, y, w, c, thr, H, gS, gL):
    """Newton steps along ∇S onto S = thr (in place); returns the final |S − thr|/thr."""
    d = w.shape[0]
    gap = 0.0
    for _ in range(_NEWTON_MAX):
        r, S = _grads(x, y, w, c, H, gS, gL)
        gap = (S - thr) / thr
        if abs(gap) <= EDGE_RTOL:
            return abs(gap)
        norm2 = 0.0
        for i in range(d):
            norm2 += gS[i] * gS[i]
        step = (S - thr) / norm2
        for i in range(d):
            w[i] -= step * gS[i]
    return abs(gap)


@njit(cache=True)
def _central_flow(x, y, w0, eta, c, rtol, atol, r_stop, stall_rtol, max_steps, w_out, info):
    """Integrate from w0 into ``w_out``; ``info`` = [status, met_edge, t_edge, t_end, steps, edge_exits, |S-2/eta|]."""
    d = x.shape[0]
    thr = 2.0 / eta
    w = w0.copy()
    wn = np.empty(d)
    tmp = np.empty(d)
    err = np.empty(d)
    gS = np.empty(d)
    gL = np.empty(d)
    H = np.empty((d, d))
    K = np.empty((_DP_B.shape[0], d))
    info[:] = 0.0
    info[2] = math.nan
    r, S, v = _top(x, y, w, c, H)
    w_out[:] = w
    if S >= thr:
        info[0] = UNSTABLE_START
        return
    edge = False
    t = 0.0
    # initial step: 1 % of the fastest rate, 8c(y + |r|) x_max bounds |d log w/dt| and S
    xmax = 0.0
    for i in range(d):
        xmax = max(xmax, x[i])
    h = 0.01 / (8.0 * c * (y + abs(r)) * xmax + thr)
    _field(x, y, w, c, edge, H, gS, gL, K[0])
    steps = 0
    while True:
        r = -y
        for i in range(d):
            r += x[i] * w[i] * w[i]
        if abs(r) <= r_stop * y:
            info[0] = CONVERGED
            break
        if edge:
            speed = 0.0
            grad = 0.0
            for i in range(d):
                speed += K[0, i] * K[0, i]
                grad += gL[i] * gL[i]
            if speed <= stall_rtol * stall_rtol * grad:
                info[0] = STALLED
                break
        if steps >= max_steps:
            info[0] = MAX_STEPS_HIT
            break
        _dp_step(x, y, w, c, edge, h, K, H, gS, gL, tmp, wn, err)
        steps += 1
        e = _scaled_error(err, w, wn, rtol, atol)
        if not (e == e and e <= 1.0):
            h *= dp_step_factor(e)
            continue
        if not edge:
            _, S_new, v = _top(x, y, wn, c, H)
            if S_new > thr:  # the step crossed the edge: shorten it to the crossing (Illinois)
                a, fa = 0.0, (S - thr) / thr
                b, fb = h, (S_new - thr) / thr
                side = 0
                for _ in range(_ILLINOIS_MAX):
                    hm = (a * fb - b * fa) / (fb - fa)
                    _dp_step(x, y, w, c, edge, hm, K, H, gS, gL, tmp, wn, err)
                    _, Sm, v = _top(x, y, wn, c, H)
                    fm = (Sm - thr) / thr
                    if abs(fm) <= EDGE_RTOL or b - a <= 4e-16 * b:
                        break
                    if fm > 0:
                        b, fb = hm, fm
                        if side == 1:
                            fa *= 0.5
                        side = 1
                    else:
                        a, fa = hm, fm
                        if side == -1:
                            fb *= 0.5
                        side = -1
                t += hm
                _project(x, y, wn, c, thr, H, gS, gL)
                w[:] = wn
                edge = True
                info[1] = 1.0
                info[2] = t
                _field(x, y, w, c, edge, H, gS, gL, K[0])
                continue
            t += h
            S = S_new
            w[:] = wn
            h *= dp_step_factor(e)
            _field(x, y, w, c, edge, H, gS, gL, K[0])
            continue
        t += h
        _project(x, y, wn, c, thr, H, gS, gL)
        w[:] = wn
        h *= dp_step_factor(e)
        mu = _field(x, y, w, c, edge, H, gS, gL, K[0])
        if mu > 0.0:  # the gradient would lower S: leave the edge
            edge = False
            info[5] += 1.0
            _, S, v = _top(x, y, w, c, H)
            _field(x, y, w, c, edge, H, gS, gL, K[0])
    _, S, v = _top(x, y, w, c, H)
    info[3] = t
    info[4] = steps
    info[6] = abs(S - thr) / thr
    w_out[:] = w


# ----------------------------------------------------------------------------------------------- wrappers
def validate_etas(eta) -> np.ndarray:
    """η as a 1-d array of finite values > 0 (InputError naming ``eta`` otherwise).

    Parameters
    ----------
    eta : float or array_like
        One step size or several.

    Returns
    -------
    numpy.ndarray
        Shape (n,), n >= 1.

    Raises
    ------
    InputError
        If an η is not finite or <= 0.

    Examples
    --------
    >>> validate_etas(0.5).tolist(), validate_etas([0.1, 0.2]).tolist()
    ([0.5], [0.1, 0.2])
    """
    etas = np.atleast_1d(as_finite_vector("eta", eta))
    if np.any(etas <= 0):
        raise InputError("eta", "must be > 0", eta)
    return etas


@dataclass(frozen=True)
class CentralFlow:
    r"""Where the central flow at step ``eta`` ends: ``w`` and β = w⊙w, with ``status`` in :data:`STATUSES`,
    whether it ``met_edge`` (else it was gradient flow throughout), the time it met it, and its step count.

    Parameters
    ----------
    x, y, w0, loss_factor
        The model: data point, label, initial weights and c in :math:`L = c r^2`.
    eta : float
        The step size η.
    w : numpy.ndarray
        The endpoint, shape (d,).
    status : str
        One of :data:`STATUSES`.
    met_edge : bool
        Whether the flow reached S = 2/η.
    t_edge : float or None
        The time it did.
    t_end : float
        The time at the end.
    steps : int
        The integrator's steps.
    edge_exits : int
        How often the flow left the edge (the gradient turned S down).
    edge_gap : float
        The drift :math:`|S - 2/\eta|/(2/\eta)` at the end.
    """

    x: np.ndarray
    y: float
    w0: np.ndarray
    loss_factor: float
    eta: float
    w: np.ndarray
    status: str
    met_edge: bool
    t_edge: float | None
    t_end: float
    steps: int
    edge_exits: int
    edge_gap: float  # |S - 2/eta| / (2/eta) at the end (meaningful when met_edge)

    @property
    def beta(self) -> np.ndarray:
        """The endpoint β = w⊙w."""
        return self.w * self.w

    @property
    def norm_l1(self) -> float:
        """‖β‖₁ (= ‖w‖₂²)."""
        return float(self.beta.sum())

    @property
    def norm_l2(self) -> float:
        """‖β‖₂."""
        return float(np.linalg.norm(self.beta))

    @property
    def sharpness(self) -> float:
        """λ_max of the Hessian at the endpoint (2/η on the edge)."""
        return float(hessian_eigenvalues(self.x, self.y, self.w, self.loss_factor)[-1])

    @property
    def residual(self) -> float:
        """r = ⟨x, β⟩ − y at the endpoint."""
        return float(self.x @ self.beta - self.y)

    @property
    def risk(self) -> float:
        """The Bayes risk E R(β) of the endpoint (:func:`biasaudit.theory.eos_risk.bayes_risk`)."""
        return float(bayes_risk(self.x, self.y, self.beta))

    def to_json(self) -> dict:
        """Plain floats, lists and strings; an endpoint that is not one (``unstable_start``) is null, with its
        reason in ``null_reasons``.

        Returns
        -------
        dict
            The fields and the derived quantities (β, its norms, sharpness, residual, risk), JSON-ready.
        """
        from biasaudit.plumbing import jsonable

        ok = self.status != "unstable_start"
        out = {k: v for k, v in asdict(self).items() if k not in ("x", "y", "w0", "loss_factor")}
        out.update(beta=self.beta if ok else None, norm_l1=self.norm_l1 if ok else None,
                   norm_l2=self.norm_l2 if ok else None, sharpness=self.sharpness, risk=self.risk if ok else None,
                   residual=self.residual, sharpness_times_eta_over_2=self.sharpness * self.eta / 2)
        if not ok:
            out["w"] = None
            out["null_reasons"] = {"w, beta, norms, risk": "lambda_max(H(w0)) >= 2/eta: GD is unstable at the "
                                                           "start, where the central flow is not defined"}
        return jsonable(out)


def _run(p, eta: float) -> CentralFlow:
    w = np.empty(p.d)
    info = np.empty(7)
    _central_flow(p.x, p.y, p.w0, eta, p.c, RTOL, ATOL, R_STOP, STALL_RTOL, MAX_STEPS, w, info)
    met = bool(info[1])
    return CentralFlow(p.x, p.y, p.w0, p.c, float(eta), w, STATUSES[int(info[0])], met,
                       float(info[2]) if met else None, float(info[3]), int(info[4]), int(info[5]), float(info[6]))


def _problem(x, y, w0, loss_factor):
    p = eos_problem(x, y, w0, loss_factor=loss_factor)
    if p.w0 is None:
        raise InputError("w0", "is required", w0)
    return p


def central_flow(x, y, w0, eta, *, loss_factor=0.5) -> CentralFlow:
    """The central flow of the toy model at one step size ``eta`` (> 0, finite), from ``w0`` (numba-compiled
    Dormand–Prince; :func:`~biasaudit.numerics.eos_central_flow_ivp.central_flow_ivp` is the solve_ivp reference).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.
    eta : float
        The step size η > 0.
    loss_factor : float
        c in :math:`L = c r^2`, > 0 (default 1/2).

    Returns
    -------
    CentralFlow
        Its endpoint and how it got there.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.theory.eos_model.eos_problem`, ``w0`` is missing, or ``eta``
        is not finite and > 0.
    """
    p = _problem(x, y, w0, loss_factor)
    eta = finite_scalar("eta", eta)
    if eta <= 0:
        raise InputError("eta", "must be > 0", eta)
    return _run(p, eta)


def central_flow_curve(x, y, w0, eta, *, loss_factor=0.5) -> list[CentralFlow]:
    """:func:`central_flow` at every step size in ``eta`` (validated once).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.
    eta : array_like
        The step sizes, finite and > 0.
    loss_factor : float
        c in :math:`L = c r^2`, > 0 (default 1/2).

    Returns
    -------
    list of CentralFlow
        One per η, in order.

    Raises
    ------
    InputError
        As :func:`central_flow`, naming ``eta`` for a bad step size.
    """
    p = _problem(x, y, w0, loss_factor)
    return [_run(p, float(e)) for e in validate_etas(eta)]
