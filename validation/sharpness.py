"""Sharpness of a network loss: Hessian-vector products, top eigenvalues and the other sharpness measures.

Everything works on a *flat* parameter vector θ ∈ R^p (:class:`FlatLoss`), so the Hessian is a plain
p×p operator and eigensolvers, Lanczos and dense Hessians all see the same object.

Definitions (paper 2, "Measuring sharpness on networks")
-------------------------------------------------------
==========================  ==========================================================================
symbol                      meaning
==========================  ==========================================================================
θ, p                        all trainable parameters, flattened; p = len(θ)
L(θ)                        full-batch training loss (the trainer's convention, see gd_trainer)
H = ∇²L(θ)                  the Hessian; Hv is computed without forming H
S = ‖H‖₂ = max|λ|           *the* sharpness of the paper ("worst case"; eigsh which='LM')
λ_max, λ_min                top and bottom algebraic eigenvalues (eigsh 'LA' / 'SA')
tr H                        Hutchinson estimate E[vᵀHv], v Rademacher
S_avg(ρ)                    average sharpness E_u[L(θ+ρu)] − L(θ), u uniform on the unit sphere S^{p−1}
                            (antithetic pairs ±u; to second order S_avg ≈ ρ² tr H /(2p))
S_ad(ξ)                     adaptive sharpness λ_max(T H T), T = diag(|θ| + ξ) (see below)
==========================  ==========================================================================

HVP. Forward-over-reverse: ``torch.func.jvp(torch.func.grad(L), (θ,), (v,))`` returns (∇L, Hv) in about
the cost of 2–3 gradients. Double backward (``torch.autograd.grad`` twice) is the fallback
(``method="double-backward"``), for modules whose ops have no forward-mode rule. Solvers that take many
HVPs at one θ (eigsh, Lanczos, power iteration, Hutchinson) use :class:`HessianAt`: the gradient graph is
built once and each HVP is one backward pass through it.

Top eigenvalue. ``scipy.sparse.linalg.eigsh`` on a ``LinearOperator`` (k=1, tol 1e−3 by default, warm start
``v0`` = the previous eigenvector). If ARPACK does not converge, the result has ``converged=False`` and
carries its relative residual ‖Hv − λv‖/|λ|: callers report it as *undecided*, never as an exact number.

Adaptive sharpness. ASAM (Kwon et al. 2021) takes the worst case over ‖T⁻¹ε‖₂ ≤ ρ, T = diag(|θ|+ξ):
max L(θ+ε) − L(θ) ≈ ρ²/2 · λ_max(T H T) to second order at a minimum. We report the curvature factor
λ_max(T H T) (no ρ, no ascent loop): it is invariant under the neuron-wise rescalings that leave the
network function unchanged (ξ → 0), and it is computed with the same eigensolver (operator v ↦ T H T v).

Test oracles (used in tests and benchmarks): :func:`lanczos_eigenvalues` (full reorthogonalisation),
:func:`power_iteration` and :func:`dense_hessian` (autograd, tiny networks only).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from biasaudit.plumbing import InputError, choice, positive_int, positive_scalar

__all__ = [
    "FlatLoss",
    "EigenEstimate",
    "hvp",
    "HessianAt",
    "top_eigenvalue",
    "EigenBlock",
    "top_eigenpairs",
    "sharpness_spectrum",
    "lanczos_eigenvalues",
    "power_iteration",
    "dense_hessian",
    "hutchinson_trace",
    "average_sharpness",
    "adaptive_sharpness",
    "EIGSH_TOL",
]

EIGSH_TOL = 1e-3  # tol 1e-3 gives the top eigenvalue to ~1e-3 relative in 20-40 HVPs
NCV = 10  # ARPACK's Lanczos basis size for k = 1 (see top_eigenvalue)
WHICH = ("LM", "LA", "SA")
HVP_METHODS = ("forward-over-reverse", "double-backward")


class FlatLoss:
    """L(θ) of ``model`` on a fixed batch, as a function of the flat parameter vector θ.

    ``loss_fn(outputs, targets) -> scalar``. Buffers (if any) are held fixed. ``theta0`` is the model's
    current parameters, flattened (in the model's dtype and device). ``hvp_method`` is the default of every
    HVP taken through this object (forward-over-reverse; double backward is faster on tiny networks, where
    torch.func's fixed per-call cost of a few ms dominates).
    """

    def __init__(self, model, loss_fn: Callable, X, Y, hvp_method: str = "forward-over-reverse"):
        import torch

        self.hvp_method = choice("hvp_method", hvp_method, HVP_METHODS)
        self.hvp_fallback = ""  # why forward-over-reverse was abandoned for double backward, if it was
        self.model, self.loss_fn, self.X, self.Y = model, loss_fn, X, Y
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        if not named:
            raise InputError("model", "must have trainable parameters", type(model).__name__)
        self.names = [n for n, _ in named]
        self.shapes = [tuple(p.shape) for _, p in named]
        self.numels = [p.numel() for _, p in named]
        self.buffers = dict(model.named_buffers())
        self.theta0 = torch.cat([p.detach().reshape(-1) for _, p in named]).clone()
        self.p = int(self.theta0.numel())
        self.n_hvp = 0

    def unflatten(self, theta) -> dict:
        """θ split back into ``{name: tensor}`` in each parameter's shape (views of ``theta``)."""
        return {n: t.view(s) for n, t, s in zip(self.names, theta.split(self.numels), self.shapes)}

    def outputs(self, theta, X=None):
        """The model's outputs at θ on ``X`` (default: the loss's own batch), buffers held fixed."""
        from torch.func import functional_call

        params = {**self.unflatten(theta), **self.buffers}
        return functional_call(self.model, params, (self.X if X is None else X,))

    def __call__(self, theta):
        """L(θ): ``loss_fn`` of the outputs at θ against the fixed targets."""
        return self.loss_fn(self.outputs(theta), self.Y)

    def value_and_grad(self, theta):
        """(L(θ), ∇L(θ)), both detached."""
        import torch

        with torch.enable_grad():
            t = theta.detach().requires_grad_(True)
            value = self(t)
            (g,) = torch.autograd.grad(value, t)
        return value.detach(), g

    def grad(self, theta):
        """∇L(θ), flat and detached."""
        return self.value_and_grad(theta)[1]

    def hvp(self, theta, v, method: str | None = None):
        """H(θ) v by :func:`hvp` (``method`` None: this loss's ``hvp_method``)."""
        return hvp(self, theta, v, method)

    def load_into(self, theta) -> None:
        """Write θ back into the module's parameters (for saving a state_dict)."""
        import torch

        with torch.no_grad():
            for (n, p), t in zip(((n, p) for n, p in self.model.named_parameters() if p.requires_grad),
                                 theta.split(self.numels)):
                p.copy_(t.view(p.shape))


def hvp(f: FlatLoss, theta, v, method: str | None = None):
    """Hessian-vector product H(θ) v of the flat loss ``f`` (one HVP; increments ``f.n_hvp``).

    ``method``: "forward-over-reverse" or "double-backward"; None takes ``f.hvp_method``.
    """
    import torch

    explicit = method is not None
    method = choice("method", method, HVP_METHODS) if explicit else f.hvp_method
    f.n_hvp += 1
    if method == "forward-over-reverse":
        grad, jvp = _torch_func()
        try:
            _, hv = jvp(grad(f), (theta.detach(),), (v.detach(),))
            return hv.detach()
        except (NotImplementedError, RuntimeError) as exc:
            if explicit:
                raise
            # an op without a forward-mode rule: fall back to double backward for this loss from now on
            f.hvp_method, f.hvp_fallback = "double-backward", f"{type(exc).__name__}: {exc}"
    with torch.enable_grad():
        t = theta.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(f(t), t, create_graph=True)
        (hv,) = torch.autograd.grad(g, t, grad_outputs=v.detach())
    return hv.detach()


class HessianAt:
    """v ↦ H(θ)v at a *fixed* θ, for solvers that take many HVPs at one point (eigsh, Lanczos, power).

    The gradient graph is built once (``create_graph=True``, on the first call) and kept; each HVP is then
    one backward pass through it (``autograd.grad(g, θ, v, retain_graph=True)``): the same arithmetic as
    ``hvp(..., "double-backward")`` without re-running the forward and first backward per HVP. Used when
    ``method`` is None or "double-backward"; an explicit "forward-over-reverse" keeps per-call torch.func
    HVPs, and so does a module whose graph cannot be differentiated twice. Counts HVPs in ``f.n_hvp``.
    """

    def __init__(self, f: FlatLoss, theta, method: str | None = None):
        self.f, self.theta = f, theta
        self.method = choice("method", method, HVP_METHODS) if method is not None else None
        self._t = self._g = None
        self._per_call = self.method == "forward-over-reverse"

    def _build(self) -> None:
        import torch

        with torch.enable_grad():
            t = self.theta.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self.f(t), t, create_graph=True)
        if not g.requires_grad:  # a loss linear in θ: no second-order graph to reuse
            self._per_call = True
            return
        self._t, self._g = t, g

    def __call__(self, v):
        """H(θ) v at the fixed θ (one HVP, counted in ``f.n_hvp``)."""
        import torch

        if self._g is None and not self._per_call:
            try:
                self._build()
            except (NotImplementedError, RuntimeError):
                self._per_call = True
        if self._per_call:
            return hvp(self.f, self.theta, v, self.method)
        self.f.n_hvp += 1
        with torch.enable_grad():
            (hv,) = torch.autograd.grad(self._g, self._t, grad_outputs=v.detach(), retain_graph=True)
        return hv.detach()


def _torch_func():
    """torch.func's grad and jvp. The first jvp imports torch's jvp decompositions, which call the deprecated
    ``torch.jit.script`` (a DeprecationWarning from inside torch, an error under our pytest settings):
    import them once here with that one warning silenced."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*torch\.jit\.script.*", category=DeprecationWarning)
        import torch._decomp.decompositions_for_jvp  # noqa: F401
    from torch.func import grad, jvp

    return grad, jvp


@dataclass(frozen=True)
class EigenEstimate:
    """One eigenvalue estimate. Only ``converged`` estimates may be reported as numbers."""

    value: float
    vector: np.ndarray
    converged: bool
    residual: float  # ‖Hv − λv‖ / max(|λ|, tiny); NaN if not computed
    n_hvp: int
    which: str
    seconds: float

    def as_dict(self) -> dict:
        """The estimate as a JSON-ready dict, without the eigenvector."""
        return {"value": self.value, "converged": self.converged, "residual": self.residual,
                "n_hvp": self.n_hvp, "which": self.which, "seconds": self.seconds}


def _operator(f: FlatLoss, theta, method: str, scale=None):
    """The Hessian (or T H T with T = diag(scale)) as a scipy LinearOperator in float64."""
    import torch
    from scipy.sparse.linalg import LinearOperator

    H = HessianAt(f, theta, method)

    def matvec(x):
        v = torch.as_tensor(np.asarray(x, dtype=np.float64).reshape(-1), dtype=theta.dtype, device=theta.device)
        if scale is not None:
            v = v * scale
        hv = H(v)
        if scale is not None:
            hv = hv * scale
        return hv.double().cpu().numpy()

    return LinearOperator((f.p, f.p), matvec=matvec, dtype=np.float64)


def _residual(op, lam: float, vec: np.ndarray) -> float:
    vec = vec / np.linalg.norm(vec)
    r = op.matvec(vec) - lam * vec
    return float(np.linalg.norm(r) / max(abs(lam), np.finfo(float).tiny))


def top_eigenvalue(f: FlatLoss, theta, which: str = "LM", *, tol: float = EIGSH_TOL, v0=None,
                   maxiter: int | None = None, ncv: int | None = None, method: str | None = None,
                   residual: bool = False, scale=None, seed: int = 0) -> EigenEstimate:
    """One extreme eigenvalue of H(θ) with ``eigsh`` (k=1): 'LM' = max|λ| (the paper's S), 'LA', 'SA'.

    ``v0`` warm-starts ARPACK (pass the previous estimate's ``vector``). ``maxiter`` bounds the restarts;
    on non-convergence the best Ritz pair is returned with ``converged=False`` and its residual.
    ``residual=True`` spends one more HVP to report the residual of a converged pair too.
    """
    from scipy.sparse.linalg import ArpackNoConvergence, eigsh

    choice("which", which, WHICH)
    positive_scalar("tol", tol)
    op = _operator(f, theta, method, scale)
    if v0 is None or np.asarray(v0).shape != (f.p,) or not np.all(np.isfinite(v0)) or not np.any(v0):
        v0 = np.random.default_rng(seed).standard_normal(f.p)
    start_hvp, t0 = f.n_hvp, time.perf_counter()
    # ncv = 10 Lanczos vectors: on the small CNN it met tol 1e-3 in 11-16 HVPs against 21 with ncv = 20 and
    # 19-22 with ncv = 4-6 (benchmarks/validation_eos.py measures it)
    ncv = ncv if ncv is not None else min(f.p, NCV)
    try:
        vals, vecs = eigsh(op, k=1, which=which, tol=tol, v0=np.asarray(v0, dtype=np.float64),
                           maxiter=maxiter, ncv=ncv)
        lam, vec, ok = float(vals[0]), vecs[:, 0], True
    except ArpackNoConvergence as exc:
        if len(exc.eigenvalues):
            lam, vec = float(exc.eigenvalues[0]), exc.eigenvectors[:, 0]
        else:
            lam, vec = math.nan, np.asarray(v0, dtype=np.float64)
        ok = False
    n_hvp = f.n_hvp - start_hvp
    res = math.nan
    if (residual or not ok) and np.all(np.isfinite(vec)) and np.any(vec):
        res = _residual(op, lam, vec) if math.isfinite(lam) else math.inf
    if not math.isfinite(lam):
        ok = False
    return EigenEstimate(lam, vec, ok, res, n_hvp, which, time.perf_counter() - t0)


@dataclass(frozen=True)
class EigenBlock:
    """The k algebraically largest eigenpairs of H(θ): ``values`` descending, ``vectors`` (p, k) orthonormal."""

    values: np.ndarray
    vectors: np.ndarray
    n_hvp: int
    seconds: float
    solver: str  # "eigsh" (cold start) or "lobpcg" (warm start from a previous block)


def top_eigenpairs(f: FlatLoss, theta, k: int, *, block=None, tol: float = EIGSH_TOL, maxiter: int = 20,
                   seed: int = 0) -> EigenBlock:
    """The top-k eigenpairs (algebraic, λ₁ ≥ … ≥ λ_k) of H(θ).

    Cold start: ``eigsh(k, which='LA')``. Warm start (``block``, a previous (p, k) block): LOBPCG from that
    block, at most ``maxiter`` iterations of k HVPs each; along a training path the top eigenspace moves
    slowly, so a few iterations suffice (the gradient-flow proxy's exponential step uses it).
    """
    from scipy.sparse.linalg import eigsh, lobpcg

    k = positive_int("k", k)
    if k >= f.p:
        raise InputError("k", f"must be < the number of parameters p = {f.p}", k)
    op = _operator(f, theta, None)
    start_hvp, t0 = f.n_hvp, time.perf_counter()
    block = None if block is None else np.asarray(block, dtype=np.float64)
    if block is None or block.shape != (f.p, k) or not np.all(np.isfinite(block)):
        v0 = np.random.default_rng(seed).standard_normal(f.p)
        vals, vecs = eigsh(op, k=k, which="LA", tol=tol, v0=v0, ncv=min(f.p, max(2 * k + 1, 20)))
        solver = "eigsh"
    else:
        import warnings

        with warnings.catch_warnings():  # "did not reach tol" is expected: the block is refreshed often
            warnings.simplefilter("ignore")
            vals, vecs = lobpcg(op, block, tol=tol, maxiter=maxiter, largest=True)
        solver = "lobpcg"
    order = np.argsort(vals)[::-1]
    return EigenBlock(np.asarray(vals)[order], np.asarray(vecs)[:, order], f.n_hvp - start_hvp,
                      time.perf_counter() - t0, solver)


def sharpness_spectrum(f: FlatLoss, theta, *, tol: float = EIGSH_TOL, v0=None, **kw) -> dict:
    """S = max|λ| ('LM'), λ_max ('LA') and λ_min ('SA') with their convergence flags and HVP counts."""
    out = {}
    lm = top_eigenvalue(f, theta, "LM", tol=tol, v0=v0, **kw)
    out["S"] = lm
    # λ_max is S itself when the LM eigenvalue is positive (the usual case): reuse it and its vector.
    out["lambda_max"] = lm if lm.converged and lm.value > 0 else top_eigenvalue(f, theta, "LA", tol=tol, **kw)
    out["lambda_min"] = lm if lm.converged and lm.value < 0 else top_eigenvalue(f, theta, "SA", tol=tol, **kw)
    return out


def lanczos_eigenvalues(f: FlatLoss, theta, steps: int, *, seed: int = 0, method: str | None = None,
                        v0=None) -> np.ndarray:
    """Ritz values (ascending) after ``steps`` Lanczos steps with full reorthogonalisation (test oracle).

    Plain numpy/torch, no ARPACK: an independent check of :func:`top_eigenvalue`. With steps = p it is
    exact up to rounding (the Krylov space is all of R^p).
    """
    import torch

    steps = positive_int("steps", steps)
    steps = min(steps, f.p)
    dtype = theta.dtype
    q = (torch.as_tensor(v0, dtype=dtype, device=theta.device) if v0 is not None
         else torch.as_tensor(np.random.default_rng(seed).standard_normal(f.p), dtype=dtype, device=theta.device))
    q = q / q.norm()
    Q = torch.zeros(steps, f.p, dtype=dtype, device=theta.device)
    alpha, beta = np.zeros(steps), np.zeros(max(steps - 1, 0))
    m = steps
    H = HessianAt(f, theta, method)
    for j in range(steps):
        Q[j] = q
        w = H(q)
        alpha[j] = float(q @ w)
        w = w - Q[: j + 1].T @ (Q[: j + 1] @ w)  # full reorthogonalisation (twice is enough)
        w = w - Q[: j + 1].T @ (Q[: j + 1] @ w)
        if j == steps - 1:
            break
        b = float(w.norm())
        if b <= np.finfo(float).eps * max(1.0, abs(alpha[: j + 1]).max()) * 10:
            m = j + 1  # invariant subspace found: the Ritz values are exact
            break
        beta[j] = b
        q = w / b
    T = np.diag(alpha[:m]) + np.diag(beta[: m - 1], 1) + np.diag(beta[: m - 1], -1)
    return np.linalg.eigvalsh(T)


def power_iteration(f: FlatLoss, theta, n_hvp: int, *, seed: int = 0, v0=None,
                    method: str | None = None) -> tuple[float, np.ndarray]:
    """Plain power iteration: ``n_hvp`` HVPs, returns (Rayleigh quotient, history of estimates).

    Converges to the eigenvalue of largest modulus at rate |λ₂/λ₁| per step (test oracle / bench baseline).
    """
    import torch

    n_hvp = positive_int("n_hvp", n_hvp)
    v = (torch.as_tensor(v0, dtype=theta.dtype, device=theta.device) if v0 is not None
         else torch.as_tensor(np.random.default_rng(seed).standard_normal(f.p), dtype=theta.dtype,
                              device=theta.device))
    v = v / v.norm()
    history = np.empty(n_hvp)
    H = HessianAt(f, theta, method)
    for k in range(n_hvp):
        hv = H(v)
        history[k] = float(v @ hv)
        norm = float(hv.norm())
        if not math.isfinite(norm) or norm == 0.0:
            history[k:] = history[k]
            break
        v = hv / norm
    return float(history[-1]), history


def dense_hessian(f: FlatLoss, theta) -> np.ndarray:
    """The full p×p autograd Hessian (tiny networks only: p ≤ 5000), symmetrised, as float64 numpy."""
    import torch

    if f.p > 5000:
        raise InputError("theta", "dense Hessian is for tiny networks only (p <= 5000)", f.p)
    try:  # vmap over the rows: one batched pass instead of p backward passes
        H = torch.autograd.functional.hessian(lambda t: f(t), theta.detach(), vectorize=True)
    except RuntimeError:  # an op without a batching rule: row by row
        H = torch.autograd.functional.hessian(lambda t: f(t), theta.detach())
    H = H.double().cpu().numpy()
    return 0.5 * (H + H.T)


def hutchinson_trace(f: FlatLoss, theta, n_samples: int = 32, *, seed: int = 0) -> tuple[float, float]:
    """Hutchinson estimate of tr H: mean of vᵀHv over Rademacher v; returns (estimate, standard error)."""
    import torch

    n_samples = positive_int("n_samples", n_samples, minimum=2)
    rng = np.random.default_rng(seed)
    vals = np.empty(n_samples)
    H = HessianAt(f, theta)
    for k in range(n_samples):
        v = torch.as_tensor(rng.choice([-1.0, 1.0], size=f.p), dtype=theta.dtype, device=theta.device)
        vals[k] = float(v @ H(v))
    return float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(n_samples))


def average_sharpness(f: FlatLoss, theta, rho: float, n_samples: int = 16, *, seed: int = 0) -> tuple[float, float]:
    """S_avg(ρ) = E_u[L(θ+ρu)] − L(θ), u uniform on the unit sphere; (estimate, standard error).

    Antithetic pairs (u, −u) cancel the odd Taylor terms, so each pair estimates ρ²uᵀHu/2 + O(ρ⁴).
    """
    import torch

    rho = positive_scalar("rho", rho)
    n_samples = positive_int("n_samples", n_samples, minimum=2)
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        base = float(f(theta))
        vals = np.empty(n_samples)
        for k in range(n_samples):
            u = rng.standard_normal(f.p)
            u = torch.as_tensor(u / np.linalg.norm(u), dtype=theta.dtype, device=theta.device)
            vals[k] = 0.5 * (float(f(theta + rho * u)) + float(f(theta - rho * u))) - base
    return float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(n_samples))


def adaptive_sharpness(f: FlatLoss, theta, *, xi: float = 1e-3, tol: float = EIGSH_TOL, v0=None,
                       **kw) -> EigenEstimate:
    """S_ad = λ_max(T H T), T = diag(|θ| + ξ): the curvature of ASAM's adaptive worst case (module doc)."""
    xi = positive_scalar("xi", xi)
    scale = theta.detach().abs() + xi
    return top_eigenvalue(f, theta, "LA", tol=tol, v0=v0, scale=scale, **kw)
