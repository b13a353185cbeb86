r"""The central flow of a network: gradient flow held at the edge of stability S = 2/η (Cohen, Damian et al.,
"Understanding Optimization in Deep Learning with Central Flows", ICLR 2025).

Notation as in :mod:`biasaudit.validation.sharpness`: θ the flat parameters, L(θ) the full-batch loss,
H = ∇²L, λ₁ ≥ … ≥ λ_k its top algebraic eigenvalues with unit eigenvectors v_i, S_i = λ_i.

The flow. While every λ_i < 2/η it is gradient flow θ̇ = −∇L. The eigenvalues at the edge
(λ_i ≥ (1 − :data:`EDGE_RTOL`)·2/η) form the active set A, with G = [∇S_i]_{i∈A} and

    θ̇ = −∇L − Σ_{i∈A} c_i ∇S_i,   c = argmin_{c ≥ 0} ‖∇L + G c‖²

(a non-negative least-squares solve, :func:`scipy.optimize.nnls`). Its optimality conditions are the
complementarity problem of the central flow: c_i ≥ 0, Ṡ_i = ⟨∇S_i, θ̇⟩ ≤ 0 and c_i Ṡ_i = 0, so no eigenvalue at
the edge rises and an eigenvalue whose gradient flow would fall leaves the set (c_i = 0). With one eigenvalue
c = max(0, −⟨∇S, ∇L⟩/‖∇S‖²): the toy model's field θ̇ = −∇L + μ∇S with μ = −c
(:mod:`biasaudit.theory.eos_central_flow`). GD oscillating as θ = θ̄ + x v_i has the averaged step
θ̄ ← θ̄ − η(∇L + ½E[x²]∇S_i), so the oscillation's variance is σ_i² = 2c_i, and GD's loss averaged over it is
predicted as L + ½ Σ σ_i² λ_i = L + Σ c_i λ_i (``loss_avg``; on the edge λ_i = 2/η).

Each step builds the gradient's graph once (``create_graph``) and uses it three ways: ∇L; the top-k eigenpairs
by ``lobpcg_iters`` block steps warm-started from the previous step's vectors (LOBPCG's first iteration:
Rayleigh–Ritz on span(V, HV − VΛ), the 2k Hessian-vector products as two batched back-propagations; a cold
eigsh at the start, a dense Hessian when p ≤ 2k + 1); and ∇S_i = ∇(v_iᵀ H v_i) by back-propagating v_iᵀ(Hv_i)
once more (double back-propagation of vᵀHv; Hellmann–Feynman: v_i held fixed),
an explicit Euler step θ ← θ + h θ̇ with h = ``step_fraction``·η, and a Newton projection back onto S_i = 2/η for
the eigenvalues that bind (c_i > 0) or overshoot: θ ← θ − G_J (G_Jᵀ G_J)⁺ (λ_J − 2/η). The constraint is read
before each step, so the drift max_{i∈A} |λ_i − 2/η|/(2/η) seen there (``edge_drift``) is what one step leaves.

:func:`flow_path` runs the flow over [0, T]; :func:`gd_path` runs GD with the same η over the same time (T/η steps)
and records its loss, norm and sharpness; :func:`window_errors` compares them window by window.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from biasaudit.plumbing import InputError, positive_int, positive_scalar
from biasaudit.validation.gd_trainer import Problem
from biasaudit.validation.sharpness import top_eigenpairs, top_eigenvalue

__all__ = ["EDGE_RTOL", "FlowPath", "GDPath", "flow_path", "gd_path", "edge_multipliers", "window_errors",
           "QUANTITIES", "toy_reference_path", "path_errors", "tracking_error"]

EDGE_RTOL = 1e-3  # λ_i within 0.1 % of 2/η counts as at the edge (a step's overshoot is O(h²); see edge_drift)
QUANTITIES = ("loss", "sharpness", "norm")


def edge_multipliers(grad_loss: np.ndarray, grads_s: np.ndarray) -> np.ndarray:
    r"""The central flow's multipliers c = argmin_{c ≥ 0} ‖∇L + G c‖² (G = ``grads_s``, one column per
    eigenvalue at the edge).

    Parameters
    ----------
    grad_loss : numpy.ndarray
        ∇L, shape (p,).
    grads_s : numpy.ndarray
        The columns ∇S_i, shape (p, m).

    Returns
    -------
    numpy.ndarray
        c, shape (m,), entries ≥ 0.

    Examples
    --------
    One eigenvalue: c = max(0, −⟨∇S, ∇L⟩/‖∇S‖²).

    >>> import numpy as np
    >>> edge_multipliers(np.array([1.0, -2.0]), np.array([[0.0], [1.0]])).tolist()
    [2.0]
    >>> edge_multipliers(np.array([1.0, 2.0]), np.array([[0.0], [1.0]])).tolist()
    [0.0]
    """
    from scipy.optimize import nnls

    G = np.asarray(grads_s, dtype=float)
    if G.shape[1] == 0:
        return np.zeros(0)
    scale = float(np.linalg.norm(G)) or 1.0  # nnls works on a well-scaled system
    c, _ = nnls(G / scale, -np.asarray(grad_loss, dtype=float))
    return c / scale


@dataclass
class FlowPath:
    """The central flow at step ``eta`` recorded at every step: times ``t``, ``loss`` L(θ(t)), ``loss_avg`` (the
    prediction of GD's averaged loss, module docstring), ``sharpness`` λ₁, ``norm`` ‖θ‖₂, ``n_edge`` (eigenvalues at
    the edge), the time ``t_edge`` it first met the edge (None: never), ``edge_drift`` (the largest
    |λ₁ − 2/η|/(2/η) read at the start of a step on the edge), ``n_hvp`` and ``n_grad`` (Hessian-vector products and
    gradient graphs), ``seconds`` and the endpoint ``theta``. ``edge_drift`` is read at the steps where no eigenvalue
newly met the edge. ``unstable_start``: λ₁(θ₀) was already at or above the edge, where GD is unstable from its
first step and the central flow is not defined (the path then starts with a projection onto S = 2/η)."""

    eta: float
    t: np.ndarray
    loss: np.ndarray
    loss_avg: np.ndarray
    sharpness: np.ndarray
    norm: np.ndarray
    n_edge: np.ndarray
    t_edge: float | None
    edge_drift: float
    n_hvp: int
    n_grad: int
    seconds: float
    theta: object = None
    unstable_start: bool = False

    def to_json(self) -> dict:
        """The path as JSON (arrays as lists, without θ)."""
        from biasaudit.plumbing import jsonable

        return jsonable({k: v for k, v in self.__dict__.items() if k != "theta"})


def _eigen_block(f, theta, k: int, seed: int):
    """The top-k eigenpairs at θ from scratch: eigsh, or a dense Hessian for tiny p (values descending, vectors
    p × k)."""
    if f.p <= 2 * k + 1:  # too few parameters for eigsh/LOBPCG: a dense Hessian (the 3-parameter toy)
        from biasaudit.validation.sharpness import dense_hessian

        lam, vec = np.linalg.eigh(dense_hessian(f, theta))
        return lam[::-1][:k], vec[:, ::-1][:, :k]
    pairs = top_eigenpairs(f, theta, k, seed=seed)
    return pairs.values, pairs.vectors


def _ritz_step(f, g, w, V):
    """One block step from the eigenvector block V (k × p, orthonormal rows) at θ = ``w``: Rayleigh–Ritz on
    span(V, HV − VΛ) (LOBPCG's first iteration; HV and H of the residuals as two batched Hessian-vector products
    through the gradient's graph ``g``). Returns the top-k Ritz values (descending), their vectors U (k × p,
    detached) and HU (k × p, still on the graph, for ∇(uᵀHu))."""
    import torch

    k = V.shape[0]
    (HV,) = torch.autograd.grad(g, w, grad_outputs=V, is_grads_batched=True, create_graph=True)
    theta_v = (HV.detach() * V).sum(dim=1)
    R = HV.detach() - theta_v[:, None] * V
    R = R - (R @ V.T) @ V
    (HR,) = torch.autograd.grad(g, w, grad_outputs=R, is_grads_batched=True, create_graph=True)
    f.n_hvp += 2 * k
    B, HB = torch.cat([V, R]), torch.cat([HV, HR])
    gram = (B @ B.T).double()
    gl, ge = torch.linalg.eigh(gram)
    keep = gl > 1e-12 * gl.max()  # a converged residual adds no direction
    W = (ge[:, keep] / gl[keep].sqrt()).to(V.dtype)
    M = W.T @ (B @ HB.detach().T) @ W
    ml, me = torch.linalg.eigh(0.5 * (M + M.T))
    Y = (W @ me)[:, torch.argsort(ml, descending=True)[:k]]
    U = Y.T @ B
    HU = Y.T @ HB
    lam = (U * HU.detach()).sum(dim=1)
    return lam.detach().cpu().numpy(), U.detach(), HU


def flow_path(problem: Problem, eta: float, t_end: float, *, k: int = 1, step_fraction: float = 0.5,
              lobpcg_iters: int = 2, seed: int = 0) -> FlowPath:
    """The central flow of ``problem`` at step ``eta`` from its initialisation over [0, ``t_end``] (module docstring).

    Parameters
    ----------
    problem : Problem
        The network, its initialisation and loss (:func:`biasaudit.validation.gd_trainer.make_problem`).
    eta : float
        GD's step η > 0: the edge is S = 2/η.
    t_end : float
        The flow's end time (GD's t_end/η steps), > 0.
    k : int
        How many top eigenvalues are tracked (and may be at the edge at once).
    step_fraction : float
        The Euler step h as a fraction of η, in (0, 1].
    lobpcg_iters : int
        Block Rayleigh–Ritz steps per flow step from the previous eigenvectors.
    seed : int
        The cold eigensolver's start vector.

    Returns
    -------
    FlowPath
        The path recorded at every step.

    Raises
    ------
    InputError
        Naming the parameter of a bad input.
    """
    import torch

    eta = positive_scalar("eta", eta)
    t_end = positive_scalar("t_end", t_end)
    k = positive_int("k", k)
    step_fraction = positive_scalar("step_fraction", step_fraction)
    if step_fraction > 1:
        raise InputError("step_fraction", "must be <= 1 (the Euler step is at most eta)", step_fraction)
    lobpcg_iters = positive_int("lobpcg_iters", lobpcg_iters)
    f = problem.train_loss
    if k >= f.p:
        raise InputError("k", f"must be < the number of parameters p = {f.p}", k)
    t0, hvp0 = time.perf_counter(), f.n_hvp
    thr, h = 2.0 / eta, step_fraction * eta
    n_steps = int(math.ceil(t_end / h - 1e-9))
    theta = problem.theta_init.clone()
    rec = {q: np.full(n_steps + 1, np.nan) for q in ("loss", "loss_avg", "sharpness", "norm")}
    n_edge = np.zeros(n_steps + 1, dtype=int)
    block, t_edge, drift, n_grad, unstable_start = None, None, 0.0, 0, False
    for step in range(n_steps + 1):
        with torch.enable_grad():
            w = theta.detach().requires_grad_(True)
            value = f(w)
            (g,) = torch.autograd.grad(value, w, create_graph=True)
            n_grad += 1
            HU = None
            if f.p <= 2 * k + 1 or block is None:  # dense (tiny p) or the cold start
                lam, vectors = _eigen_block(f, theta, k, seed)
                block = torch.as_tensor(np.ascontiguousarray(vectors.T), dtype=theta.dtype, device=theta.device)
            else:
                for _ in range(lobpcg_iters):
                    lam, block, HU = _ritz_step(f, g, w, block)
            active = [i for i in range(k) if lam[i] >= (1 - EDGE_RTOL) * thr]
            G = None
            if active:
                V = block[active]
                if HU is None:
                    (HVa,) = torch.autograd.grad(g, w, grad_outputs=V, is_grads_batched=True, create_graph=True)
                    f.n_hvp += len(active)
                else:
                    HVa = HU[active]
                s_active = (HVa * V).sum(dim=1)  # v_iᵀHv_i on the graph: one batched back-propagation gives all ∇S_i
                eye = torch.eye(len(active), dtype=theta.dtype, device=theta.device)
                (G,) = torch.autograd.grad(s_active, w, grad_outputs=eye, is_grads_batched=True, retain_graph=True)
                G = G.detach().T
        g = g.detach()
        c = np.zeros(0)
        velocity = -g
        correction = torch.zeros_like(theta)
        if active:
            if t_edge is None:
                t_edge, unstable_start = step * h, step == 0
            if step and len(active) <= n_edge[step - 1]:  # a step where an eigenvalue meets the edge overshoots
                drift = max(drift, max(abs(lam[i] - thr) / thr for i in active))  # by up to h·dS/dt: not drift
            c = edge_multipliers(g.double().cpu().numpy(), G.double().cpu().numpy())
            velocity = -g - G @ torch.as_tensor(c, dtype=theta.dtype, device=theta.device)
            bind = [j for j, i in enumerate(active) if c[j] > 0 or lam[i] > thr]
            if bind:
                GJ = G[:, bind].double()
                gap = torch.as_tensor([lam[active[j]] - thr for j in bind], dtype=torch.float64,
                                      device=theta.device)
                correction = -(GJ @ (torch.linalg.pinv(GJ.T @ GJ) @ gap)).to(theta.dtype)
        lv = float(value.detach())
        rec["loss"][step], rec["sharpness"][step], rec["norm"][step] = lv, lam[0], float(theta.norm())
        rec["loss_avg"][step] = lv + sum(c[j] * lam[i] for j, i in enumerate(active))
        n_edge[step] = len(active)
        if not math.isfinite(lv):
            break
        if step < n_steps:
            theta = theta + h * velocity + correction
    return FlowPath(eta, np.arange(n_steps + 1) * h, rec["loss"], rec["loss_avg"], rec["sharpness"], rec["norm"],
                    n_edge, t_edge, drift, f.n_hvp - hvp0, n_grad, time.perf_counter() - t0, theta, unstable_start)


@dataclass
class GDPath:
    """GD at step ``eta`` over ``steps`` steps: ``loss`` and ``norm`` ‖θ‖₂ at every step, the sharpness λ₁
    (``sharpness``) at the steps ``sharpness_steps``, ``seconds`` (GD alone) and ``sharpness_seconds``."""

    eta: float
    steps: int
    loss: np.ndarray
    norm: np.ndarray
    sharpness_steps: np.ndarray
    sharpness: np.ndarray
    seconds: float
    sharpness_seconds: float

    def to_json(self) -> dict:
        """The path as JSON (arrays as lists)."""
        from biasaudit.plumbing import jsonable

        return jsonable(dict(self.__dict__))


def gd_path(problem: Problem, eta: float, steps: int, *, sharpness_every: int = 1, seed: int = 0) -> GDPath:
    """Full-batch GD θ_{j+1} = θ_j − η∇L(θ_j) for ``steps`` steps from ``problem``'s initialisation, with its
    top algebraic eigenvalue λ₁ every ``sharpness_every`` steps (LOBPCG/eigsh warm-started along the path).

    Parameters
    ----------
    problem : Problem
        The network, its initialisation and loss.
    eta : float
        The step η > 0.
    steps : int
        How many steps.
    sharpness_every : int
        λ₁ at every this many steps.
    seed : int
        The eigensolver's first start vector.

    Returns
    -------
    GDPath
        Loss and norm at every step, λ₁ at every ``sharpness_every`` steps.
    """
    eta = positive_scalar("eta", eta)
    steps = positive_int("steps", steps)
    every = positive_int("sharpness_every", sharpness_every)
    f = problem.train_loss
    theta = problem.theta_init.clone()
    loss, norm = np.full(steps + 1, np.nan), np.full(steps + 1, np.nan)
    s_steps, s_vals = [], []
    block = None
    gd_seconds = s_seconds = 0.0
    for j in range(steps + 1):
        t0 = time.perf_counter()
        value, g = f.value_and_grad(theta)
        loss[j], norm[j] = float(value), float(theta.norm())
        gd_seconds += time.perf_counter() - t0
        if not math.isfinite(loss[j]):
            break
        if j % every == 0:
            t0 = time.perf_counter()
            if f.p <= 3:
                lam, _ = _eigen_block(f, theta, 1, seed)
                s_vals.append(float(lam[0]))
            else:
                est = top_eigenvalue(f, theta, "LA", v0=block, seed=seed)
                block = est.vector
                s_vals.append(est.value)
            s_steps.append(j)
            s_seconds += time.perf_counter() - t0
        if j < steps:
            t0 = time.perf_counter()
            theta = theta - eta * g
            gd_seconds += time.perf_counter() - t0
    return GDPath(eta, steps, loss, norm, np.asarray(s_steps), np.asarray(s_vals), gd_seconds, s_seconds)


def window_errors(gd: GDPath, flow: FlowPath, window: int, *, t_from: float = 0.0) -> dict:
    r"""GD's loss, sharpness and norm averaged over windows of ``window`` steps against the flow's averaged over the
    same time, as relative errors |GD − flow|/|flow| per window, for the windows that start at or after ``t_from``.

    The flow's loss is its prediction of GD's averaged loss (``loss_avg``: L + Σ c_iλ_i).

    Parameters
    ----------
    gd : GDPath
        GD's path.
    flow : FlowPath
        The flow's path at the same η, over at least GD's time.
    window : int
        GD steps per window.
    t_from : float
        The first window's earliest start time.

    Returns
    -------
    dict
        ``t`` (window centres) and, per quantity of :data:`QUANTITIES`, the list of relative errors.
    """
    window = positive_int("window", window)
    eta = gd.eta
    out = {"t": [], **{q: [] for q in QUANTITIES}}
    for start in range(0, gd.steps + 1 - window, window):
        if start * eta < t_from - 1e-12:
            continue
        lo, hi = start * eta, (start + window) * eta
        fmask = (flow.t >= lo - 1e-12) & (flow.t < hi - 1e-12)
        smask = (gd.sharpness_steps >= start) & (gd.sharpness_steps < start + window)
        if not fmask.any() or not smask.any():
            continue
        pairs = {"loss": (gd.loss[start:start + window].mean(), flow.loss_avg[fmask].mean()),
                 "sharpness": (gd.sharpness[smask].mean(), flow.sharpness[fmask].mean()),
                 "norm": (gd.norm[start:start + window].mean(), flow.norm[fmask].mean())}
        out["t"].append(0.5 * (lo + hi))
        for q, (a, b) in pairs.items():
            out[q].append(abs(a - b) / abs(b))
    return out


def toy_reference_path(x, y, w0, eta: float, t, *, loss_factor: float = 0.5) -> FlowPath:
    r"""The theory model's central flow at the times ``t``, without torch: the solve_ivp reference
    (:func:`biasaudit.numerics.eos_central_flow_ivp.central_flow_ivp`) on the theory's field, read as a
    :class:`FlowPath` (``loss_avg`` = L + cλ₁ on the edge, c = −μ the theory's multiplier).

    Parameters
    ----------
    x, y, w0 : array_like, float, array_like
        The data point, label and initialisation of the theory model.
    eta : float
        The step η.
    t : array_like
        Increasing times from 0.
    loss_factor : float
        c in L = c r² (default ½).

    Returns
    -------
    FlowPath
        The path at ``t`` (counts and seconds 0; ``theta`` the last w).
    """
    from biasaudit.numerics.eos_central_flow_ivp import central_flow_ivp
    from biasaudit.theory.eos_central_flow import edge_multiplier, loss_gradient, sharpness_gradient, top_eigenpair

    t = np.asarray(t, dtype=float)
    x, w0 = np.asarray(x, dtype=float), np.asarray(w0, dtype=float)
    ref = central_flow_ivp(x, y, w0, eta, loss_factor=loss_factor, t_max=float(t[-1]), t_eval=t)
    thr, n = 2.0 / eta, len(ref.path_t)
    rec = {q: np.full(len(t), np.nan) for q in ("loss", "loss_avg", "sharpness", "norm")}
    n_edge = np.zeros(len(t), dtype=int)
    for j in range(n):
        w = ref.path_w[j]
        r = float(x @ (w * w) - y)
        lam = top_eigenpair(x, y, w, loss_factor)[0]
        on_edge = ref.met_edge and ref.path_t[j] >= ref.t_edge and lam >= (1 - EDGE_RTOL) * thr
        c = 0.0
        if on_edge:
            mu = edge_multiplier(sharpness_gradient(x, y, w, loss_factor)[1], loss_gradient(x, y, w, loss_factor))
            c = max(0.0, -mu)
        rec["loss"][j], rec["sharpness"][j], rec["norm"][j] = loss_factor * r * r, lam, float(np.linalg.norm(w))
        rec["loss_avg"][j] = rec["loss"][j] + c * lam
        n_edge[j] = int(on_edge and c > 0)
    return FlowPath(float(eta), t, rec["loss"], rec["loss_avg"], rec["sharpness"], rec["norm"], n_edge,
                    ref.t_edge if ref.met_edge else None, float("nan"), 0, 0, 0.0, ref.path_w[-1] if n else None)


def path_errors(gd: GDPath, flow: FlowPath, window: int) -> dict:
    """The median over the windows after the flow met the edge of each quantity's relative error
    (:func:`window_errors`); NaN where the flow never met the edge, started on it (``unstable_start``) or no
    window follows.

    Parameters
    ----------
    gd : GDPath
        GD's path.
    flow : FlowPath
        The flow's path at the same η.
    window : int
        GD steps per window.

    Returns
    -------
    dict
        Quantity (:data:`QUANTITIES`) -> median relative error, and ``windows``: how many windows.
    """
    if flow.t_edge is None or flow.unstable_start:
        return {**{q: math.nan for q in QUANTITIES}, "windows": 0}
    errors = window_errors(gd, flow, window, t_from=flow.t_edge)
    out = {q: float(np.median(errors[q])) if errors[q] else math.nan for q in QUANTITIES}
    out["windows"] = len(errors["t"])
    return out


def tracking_error(errors: list[dict]) -> float:
    """The seed statistic: the largest median relative error (:func:`path_errors`) over the quantities and the
    step sizes of one seed (NaN if any is NaN: a flow that never met the edge says nothing about it).

    Parameters
    ----------
    errors : list of dict
        :func:`path_errors` at each step size.

    Returns
    -------
    float
        max over η and quantity.

    Examples
    --------
    >>> tracking_error([{"loss": 0.02, "sharpness": 0.05, "norm": 0.01}, {"loss": 0.03, "sharpness": 0.04,
    ...                                                                   "norm": 0.02}])
    0.05
    """
    values = [e[q] for e in errors for q in QUANTITIES]
    return math.nan if not values or any(not math.isfinite(v) for v in values) else float(max(values))
