r"""The l_inf-SAM flow at depth 1 on several points, with Filippov sliding on the switching surfaces.

Depth 1, data X (n × d), labels y, logistic loss L(β) = (1/n) Σ_i ℓ(y_i⟨x_i, β⟩). l_inf-SAM's flow is

.. math::

    \dot β = -∇L(β + ε),\qquad ε = ρ\,\mathrm{sign}(g),\qquad g = ∇L(β),

written in log time s = ln t (β grows like β_svm ln t) as dβ/ds = e^s (1/n) Σ_i σ(−m̃_i) y_i x_i,
m̃_i = y_i⟨x_i, β + ε⟩ (log-sigmoid form: nothing under- or overflows at margins of order s).

The field jumps on the surfaces g_k = 0. A trajectory reaching g_k = 0 either **crosses** (the fields on
both sides carry it through: ε_k flips) or **slides** (both point into the surface). Sliding is what the
discrete algorithm does when its k-th gradient sign chatters: its average velocity is Filippov's convex
combination. With a set K of sliding coordinates the velocity is the multilinear combination of the 2^|K|
one-sided fields

.. math::

    F(λ) = \sum_{σ ∈ \{±\}^K} \prod_{k∈K} λ_k^{[σ_k=+]} (1-λ_k)^{[σ_k=-]}\, F(ε_K = ρσ),

(each coordinate chatters independently, as in the discrete iteration), with λ ∈ (0, 1)^K fixed by
tangency. Tangency is imposed on the *direction* ĝ = g/‖g‖ (‖g‖ decays like 1/t, so an absolute
constraint g_k = 0 would lose relative accuracy like e^s), with Baumgarte stabilisation:

.. math::

    \frac{d ĝ_k}{ds} = -γ\,ĝ_k \iff (H F)_k - ĝ_k\,(ĝ · H F) = -γ\,ĝ_k\,‖g‖,\qquad H = ∇^2 L(β),

solved by Newton in λ (multilinear, so Newton is exact for |K| = 1). A sliding coordinate leaves the
surface when its λ_k reaches 0 or 1 (one side's field turns tangent, then points away): ε_k = −ρ or +ρ.
Crossing and sliding are decided at the crossing point by solving the enlarged system: slide iff the
solution has λ_k ∈ (0, 1). Coordinates whose ĝ_j is at roundoff level there reached their surface at the same
time (one event fires first): they enter the enlarged system together.

The integration is piecewise: scipy DOP853 between mode changes, with terminal events on ĝ_k (free k,
direction-aware so a fresh crossing does not re-trigger) and on λ_k, 1 − λ_k (sliding k). A run that
switches modes more than ``max_switches`` times is reported as ``"zeno"`` (never a silent result).

Checked (tests): without sliding it equals the frozen-sign flow; with sliding the discrete l_inf-SAM
iterates converge to it at O(η); ĝ_k of sliding coordinates stays at round-off level.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from biasaudit.plumbing import InputError, as_finite_vector, positive_int, positive_scalar

__all__ = ["FilippovResult", "linf_sam_filippov_flow", "STABILISATION_RATE"]

STABILISATION_RATE = 5.0  # γ, per unit of log time: drift of ĝ_k off the surface decays like e^{−γ s}
_NEWTON_TOL = 1e-13
_EVENT_RTOL = 1e-12
# |ĝ_j| at or below this where another coordinate's event fires: j reached its surface at the same time (the two
# events are one root up to the event location's error); the enlarged system decides whether both slide
_TOGETHER_TOL = 1e-8


@dataclass(frozen=True)
class FilippovResult:
    """``s`` (m,) log times, ``beta`` (m, d); ``modes``: (s, signs, sliding set) at each mode change.

    Parameters
    ----------
    s : numpy.ndarray
        The log times s = ln t, shape (m,).
    beta : numpy.ndarray
        β at each, shape (m, d).
    status : str
        ``"ok"``, ``"zeno"`` (more than ``max_switches`` mode changes) or ``"failed"``.
    modes : list
        (s, signs, sliding set) at each mode change.
    message : str
        What went wrong, if anything.
    """

    s: np.ndarray
    beta: np.ndarray
    status: str                    # "ok", "zeno" or "failed"
    modes: list
    message: str = ""

    @property
    def slid(self) -> set:
        """Coordinates that slid at some time."""
        return set().union(*(set(k) for _, _, k in self.modes)) if self.modes else set()


class _Problem:
    """Field, gradient and Hessian at depth 1, in the stable log-sigmoid forms."""

    def __init__(self, X, y, rho):
        self.X, self.y, self.rho = X, y, rho
        self.n, self.d = X.shape

    def _log_weights(self, beta):
        """Margins m and log σ(−m)."""
        m = self.y * (self.X @ beta)
        return m, -np.logaddexp(0.0, m)

    def gradient(self, beta):
        """g up to a positive factor: its direction, for signs and ĝ."""
        _, log_w = self._log_weights(beta)
        return -(np.exp(log_w - log_w.max()) * self.y) @ self.X / self.n

    def grad_and_hessian(self, beta):
        """(g, H) up to one common positive factor; only ĝ and ratios matter (see module docstring)."""
        m, log_w = self._log_weights(beta)
        log_v = log_w - np.logaddexp(0.0, -m)  # log σ(−m)σ(m)
        top = max(log_w.max(), log_v.max())
        w, v = np.exp(log_w - top), np.exp(log_v - top)
        g = -(w * self.y) @ self.X / self.n
        H = (self.X.T * v) @ self.X / self.n
        return g, H

    def field(self, s, beta, eps):
        m_tilde = self.y * (self.X @ (beta + eps))
        coef = np.exp(s - np.logaddexp(0.0, m_tilde)) / self.n
        return (coef * self.y) @ self.X


def _corner_fields(prob, s, beta, signs, K):
    """The 2^|K| one-sided fields (rows), their sign patterns over K."""
    patterns = list(itertools.product((1.0, -1.0), repeat=len(K)))
    fields = []
    for pat in patterns:
        eps = prob.rho * signs.copy()
        for k, sk in zip(K, pat):
            eps[k] = prob.rho * sk
        fields.append(prob.field(s, beta, eps))
    return np.array(patterns), np.array(fields)


def _weights(lam, patterns):
    """Multilinear weights of each corner and their derivatives in λ: (P,), (P, |K|)."""
    p = np.where(patterns > 0, lam, 1.0 - lam)            # (P, K)
    w = np.prod(p, axis=1)
    dw = np.empty_like(p)
    for k in range(patterns.shape[1]):
        others = np.prod(np.delete(p, k, axis=1), axis=1) if patterns.shape[1] > 1 else np.ones(len(p))
        dw[:, k] = np.where(patterns[:, k] > 0, 1.0, -1.0) * others
    return w, dw


def _solve_lambda(prob, s, beta, signs, K, lam0=None):
    """λ ∈ R^K with stabilised tangency (Newton); returns (λ, velocity) or (None, None) if singular."""
    K = list(K)
    patterns, fields = _corner_fields(prob, s, beta, signs, K)
    g, H = prob.grad_and_hessian(beta)
    gnorm = float(np.linalg.norm(g))
    ghat = g / gnorm
    HF = fields @ H  # (P, d): H F for each corner (H symmetric)
    P = np.eye(prob.d) - np.outer(ghat, ghat)  # d ĝ/ds ∝ (I − ĝĝᵀ) H F
    proj = HF @ P.T  # (P, d)
    target = -STABILISATION_RATE * ghat[K] * gnorm
    lam = np.full(len(K), 0.5) if lam0 is None else np.clip(np.asarray(lam0, float), 1e-3, 1 - 1e-3)
    for _ in range(50):
        w, dw = _weights(lam, patterns)
        resid = w @ proj[:, K] - target
        J = dw.T @ proj[:, K]  # (K, K): row k = ∂/∂λ_k
        try:
            step = np.linalg.solve(J.T, resid)
        except np.linalg.LinAlgError:
            return None, None
        lam = lam - step
        if np.max(np.abs(step)) < _NEWTON_TOL:
            break
    w, _ = _weights(lam, patterns)
    return lam, w @ fields


def _signs_of(prob, beta):
    return np.where(prob.gradient(beta) >= 0, 1.0, -1.0)


def linf_sam_filippov_flow(X, y, rho: float, s_grid, *, beta0=None, rtol: float = 1e-11, atol: float = 1e-12,
                           max_switches: int = 10_000) -> FilippovResult:
    """Integrate the depth-1 l_inf-SAM flow in log time s = ln t through ``s_grid`` (increasing) from
    ``beta0`` (default 0) at ``s_grid[0]``, with Filippov sliding. See the module docstring.

    Parameters
    ----------
    X : array_like
        The data, shape (n, d), finite.
    y : array_like
        One label in {-1, +1} per row of ``X``.
    rho : float
        The SAM radius ρ > 0.
    s_grid : array_like
        The output log times, increasing.
    beta0 : array_like, optional
        β at ``s_grid[0]`` (default 0).
    rtol, atol : float
        solve_ivp's tolerances.
    max_switches : int
        The most mode changes before the run is called ``"zeno"``.

    Returns
    -------
    FilippovResult
        β on ``s_grid`` and the mode changes.

    Raises
    ------
    InputError
        If ``X`` is not a finite (n, d) array, ``y`` is not ±1 per row, ``rho`` <= 0, or another input breaks its
        rule.

    Examples
    --------
    >>> import numpy as np
    >>> flow = linf_sam_filippov_flow(np.array([[1.0, 2.0]]), np.array([1.0]), 0.1, np.linspace(0.0, 3.0, 4))
    >>> flow.status, (flow.beta[-1] / flow.beta[-1, 0]).round(6).tolist(), flow.slid
    ('ok', [1.0, 2.0], set())
    """
    from scipy.integrate import solve_ivp

    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise InputError("X", "must be a finite (n, d) array", X)
    y = as_finite_vector("y", y)
    if y.size != X.shape[0] or not np.all(np.isin(y, (-1.0, 1.0))):
        raise InputError("y", "must hold one label in {-1, +1} per row of X", y)
    rho = positive_scalar("rho", rho)
    s_grid = as_finite_vector("s_grid", s_grid)
    if s_grid.size < 2 or np.any(np.diff(s_grid) <= 0):
        raise InputError("s_grid", "must be increasing with at least two points", s_grid)
    max_switches = positive_int("max_switches", max_switches)
    prob = _Problem(X, y, rho)
    beta = np.zeros(X.shape[1]) if beta0 is None else as_finite_vector("beta0", beta0)
    signs = _signs_of(prob, beta)
    K: tuple = ()
    lam = None
    s_now = float(s_grid[0])
    out_s, out_b = [s_now], [beta.copy()]
    modes = [(s_now, signs.copy(), K)]

    for _ in range(max_switches):
        last = {}  # this mode's (λ, velocity) at the last point asked: rhs and the λ events share one solve

        def sliding(s, b):
            key = (s, b.tobytes())
            if key not in last:
                last.clear()
                last[key] = _solve_lambda(prob, s, b, signs, K, lam)
            return last[key]

        def rhs(s, b):
            return prob.field(s, b, rho * signs) if not K else sliding(s, b)[1]

        events, info = [], []  # info[i] = (kind, k) of events[i]
        for k in range(X.shape[1]):
            if k in K:
                def low(s, b, k=k):
                    lam_k, _ = sliding(s, b)
                    return 1.0 if lam_k is None else lam_k[K.index(k)]

                def high(s, b, k=k):
                    lam_k, _ = sliding(s, b)
                    return 1.0 if lam_k is None else 1.0 - lam_k[K.index(k)]

                low.terminal = high.terminal = True
                low.direction = high.direction = -1
                events += [low, high]
                info += [("low", k), ("high", k)]
            else:
                def cross(s, b, k=k):
                    g = prob.gradient(b)
                    return signs[k] * g[k] / np.linalg.norm(g)

                cross.terminal = True
                cross.direction = -1
                events.append(cross)
                info.append(("cross", k))
        todo = s_grid[s_grid > s_now]
        sol = solve_ivp(rhs, (s_now, float(s_grid[-1])), beta, method="DOP853", rtol=rtol, atol=atol,
                        t_eval=todo, events=events)
        if len(sol.t):
            out_s += list(sol.t)
            out_b += list(np.asarray(sol.y).reshape(X.shape[1], -1).T)
        if sol.status == -1:
            return FilippovResult(np.array(out_s), np.array(out_b), "failed", modes, sol.message)
        if sol.status == 0:
            return _result(s_grid, out_s, out_b, "ok", modes)
        # a mode change: the first event that fired
        fired = [(t[0], i) for i, t in enumerate(sol.t_events) if t.size]
        s_now, which = min(fired)
        beta = sol.y_events[which][0].copy()
        kind, k = info[which]
        if kind == "cross":  # a free coordinate reached g_k = 0: slide or cross
            g = prob.gradient(beta)
            together = tuple(j for j in range(X.shape[1]) if j not in K and j != k
                             and abs(g[j]) <= _TOGETHER_TOL * np.linalg.norm(g))  # reached 0 at the same time
            for trial in dict.fromkeys((tuple(sorted(K + (k,) + together)), tuple(sorted(K + (k,))))):
                lam_t, _ = _solve_lambda(prob, s_now, beta, signs, trial, None)
                if lam_t is not None and np.all((lam_t > 0) & (lam_t < 1)):
                    K, lam = trial, lam_t
                    break
            else:
                signs[k] = -signs[k]
        else:  # a sliding coordinate's λ reached 0 (leaves on the − side) or 1 (+ side)
            signs[k] = -1.0 if kind == "low" else 1.0
            K = tuple(j for j in K if j != k)
            lam = None
            if K:
                lam, _ = _solve_lambda(prob, s_now, beta, signs, K, None)
        modes.append((s_now, signs.copy(), K))
    return _result(s_grid, out_s, out_b, "zeno", modes, f"more than {max_switches} mode changes")


def _result(s_grid, out_s, out_b, status, modes, message=""):
    s = np.array(out_s)
    b = np.array(out_b)
    keep = np.isin(s, s_grid)  # the requested grid (event points are internal)
    _, first = np.unique(s[keep], return_index=True)
    return FilippovResult(s[keep][first], b[keep][first], status, modes, message)
