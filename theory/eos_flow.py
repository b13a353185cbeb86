r"""Gradient flow on the shared-weight model: its limit, s_GF, η_c = 2/s_GF and the regime summary.

Gradient flow :math:`\dot w = -\nabla L = -4c\,r\,x\odot w` integrates to

.. math:: w(t) = w_0\odot e^{-4c\,x\,s(t)},\quad s(t)=\int_0^t r,\qquad \beta(t) = \beta_0\odot e^{-4x\tau(t)},\ \tau = 2c\,s,

and :math:`\dot r = -2c\|\nabla r\|^2 r` with :math:`\|\nabla r\|^2 = 4\sum x_i^2\beta_i`, so r keeps its sign.
The limit is :math:`\beta_{GF} = \beta_0\odot e^{-4x\tau}` with τ the unique root of

.. math:: \sum_i x_i\beta_{0,i}e^{-4x_i\tau} = y

(the left side is strictly decreasing in τ). Equivalently :math:`\beta_{GF}` minimizes the KL-type potential
:math:`\Phi(\beta) = \sum_i[\beta_i\log(\beta_i/\beta_{0,i}) - \beta_i]` over P (stationarity:
:math:`\log(\beta_i/\beta_{0,i}) = \mu x_i`, μ = −4τ). The limit does not depend on c (time rescaling).

s_GF is the largest top eigenvalue :math:`\lambda_{max}(H)` along the flow path, :math:`\eta_c = 2/s_{GF}`.

* Small init (r₀ < 0): β grows in every coordinate and the sharpness rises monotonically, so
  :math:`s_{GF} = S(\beta_{GF}) = 8c\sum x_i^2\beta_{GF,i}`.
* As α → 0 with w₀ = α·1: :math:`S_{GF}\to 8c\,y\,x_{max}` from below, at the rate
  :math:`O(\alpha^{2(1-x_{(d-1)}/x_{max})})` (x_(d−1) the largest entry strictly below x_max). Derivation:
  with :math:`u = e^{-4\tau}\to\infty`, :math:`\beta_i=\alpha^2u^{x_i}`, the constraint gives
  :math:`u\approx(y/(x_{max}\alpha^2))^{1/x_{max}}` and :math:`S - 8cyx_{max} = -8c\sum_i x_i(x_{max}-x_i)\beta_i`,
  whose largest term is :math:`\propto\alpha^2 u^{x_{(d-1)}}\propto\alpha^{2(1-x_{(d-1)}/x_{max})}`.
* Large init (r₀ > 0): the sharpness is largest at the start, :math:`s_{GF} = \lambda_{max}(H(w_0))`; GD with
  η a little above 2/s_GF catapults instead of tracking 2/η, so the 2/s_GF prediction fails there (the claim
  ``eos.s_gf.large_init`` records it).

Symbols (beside those of :mod:`biasaudit.theory.eos_model`): ``tau_sym`` flow time in β-units (τ = 2c∫r),
``beta0_i`` and ``beta_gf_i`` β at the init and at the flow's limit, ``alpha`` init scale, ``x_next`` the largest
entry of x below x_max, ``s_gf_sym`` and ``eta_c_sym`` s_GF and η_c, ``rate_sym`` the rate exponent p,
``t_sym``, ``r_of_t`` and ``r_0`` time, the residual along the flow and at its start. The symbols of what GD is
seen to do (the statements of the ``eos.gd.*`` claims) follow them.

Formulas: :data:`GF_LIMIT` (β_GF's coordinate), :data:`KL` (one summand of Φ), :data:`ALPHA_RATE`,
:data:`ETA_C` and :data:`RESIDUAL_SIGN`. τ itself is a root (:func:`gf_tau`, brentq on the log of
:data:`GF_ROOT_TERM`'s sum), and s_GF at a large init the top eigenvalue of :data:`~biasaudit.theory.eos_model.HESSIAN`
at w₀: neither has a closed form.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import sympy as sp
from scipy.optimize import brentq

from biasaudit.plumbing import InputError
from biasaudit.theory.eos_minimizers import (VERTEX_NORM, VERTEX_SHARPNESS, min_l2_beta, min_norm_face,
                                             min_norm_stable_eta_max, min_sharpness_face, minimizers_disjoint,
                                             pareto_breakpoints, stable_eta_max)
from biasaudit.theory.eos_model import (EosProblem, beta_i, eos_problem, hessian_eigenvalues, on_manifold_sharpness,
                                        x_i, x_max)
from biasaudit.theory.formula import Formula

__all__ = [
    "tau_sym", "beta0_i", "beta_gf_i", "x_next", "alpha", "s_gf_sym", "eta_c_sym", "rate_sym", "t_sym", "r_of_t", "r_0",
    "eta_edge", "eta_kink", "C_sym", "S_gd", "N_proj", "k_step", "median", "median_gap", "q_sym", "converged",
    "err_rel", "max_excess",
    "GF_LIMIT", "GF_BETA", "GF_ROOT_TERM", "KL", "KL_TERM", "ALPHA_RATE", "ALPHA_RATE_EXPONENT", "ETA_C",
    "RESIDUAL_SIGN", "gf_tau", "gradient_flow_limit", "kl_potential", "s_gf",
    "small_alpha_exponent", "EosRegimes", "eos_regimes",
]

# ---- symbols (the rest in eos_model) -------------------------------------------------------------------------
tau_sym = sp.Symbol("tau", real=True)  # τ = 2c∫r: negative from a small init (r < 0), positive from a large one
beta0_i = sp.Symbol("beta_0i", positive=True)  # β at the init, β_0 = w_0⊙w_0
beta_gf_i = sp.Symbol("beta_GF_i", positive=True)  # the flow's limit
x_next = sp.Symbol("x_next", positive=True)  # the largest entry of x strictly below x_max
alpha = sp.Symbol("alpha", positive=True)  # init scale, w_0 = α·1
s_gf_sym = sp.Symbol("s_GF", positive=True)  # the largest λ_max(H) along the flow
eta_c_sym = sp.Symbol("eta_c", positive=True)  # η_c = 2/s_GF
rate_sym = sp.Symbol("p", positive=True)  # 8cyx_max − S_GF = O(α^p) as α → 0
t_sym = sp.Symbol("t", nonnegative=True)  # flow time
r_of_t = sp.Function("r", real=True)(t_sym)  # the residual along the flow
r_0 = sp.Symbol("r_0", real=True)  # the residual at the init

# What GD is seen to do: the symbols of the statements of the eos.gd.* and eos.s_gf.large_init* claims.
eta_edge = sp.Symbol("eta_edge", positive=True)  # the step where GD at the flow's limit turns unstable
eta_kink = sp.Symbol("eta_kink", positive=True)  # the kink of GD's final sharpness against η
C_sym = sp.Symbol("C", positive=True)  # the slope of s_GF − S_GD(η) ≈ Cη on the flow side
S_gd = sp.Function("S_GD", positive=True)  # GD's final sharpness at step η
N_proj = sp.Function("N_proj", positive=True)  # ‖β‖₁ of the flow's limit started from GD's iterate k
k_step = sp.Symbol("k", integer=True, nonnegative=True)  # GD's iteration
median = sp.Function("median")  # the median over the η of a sweep
median_gap = sp.Function("median_gap")  # median of 1 − ηS/2 over η in [1.05, 2] η_c, at the init q
q_sym = sp.Symbol("q", positive=True)  # the init w_0 = α·1 as q = α²Σx/y (r_0 = (q − 1) y)
converged = sp.Symbol("converged")  # GD's run converged
err_rel = sp.Symbol("err_rel", nonnegative=True)  # relative difference of two runs' final β
max_excess = sp.Symbol("max_excess")  # the largest ‖β‖₁/N*(S) − 1 over GD's converged endpoints

# Internal names kept for the symbolic tests: β, β_0 and x of one coordinate.
_x, _b, _b0 = x_i, beta_i, beta0_i

#: β_GF coordinate, :math:`\beta_{GF,i} = \beta_{0,i}e^{-4x_i\tau}`.
GF_LIMIT = Formula("gf_limit", beta0_i * sp.exp(-4 * x_i * tau_sym), (x_i, beta0_i, tau_sym))
GF_BETA = GF_LIMIT.expr
#: One summand of the root equation Σ x_i β0_i exp(-4 x_i τ) = y (:func:`gf_tau` solves it in log-sum-exp form).
GF_ROOT_TERM = x_i * GF_BETA
#: One summand of the KL potential Φ(β) = Σ β log(β/β0) − β.
KL = Formula("kl_term", beta_i * sp.log(beta_i / beta0_i) - beta_i, (beta_i, beta0_i))
KL_TERM = KL.expr
#: Rate exponent of S_GF → 8 c y x_max as α → 0.
ALPHA_RATE = Formula("small_alpha_rate", 2 * (1 - x_next / x_max), (x_next, x_max), "math")
ALPHA_RATE_EXPONENT = ALPHA_RATE.expr
#: The critical step η_c = 2/s_GF.
ETA_C = Formula("eta_c", 2 / s_gf_sym, (s_gf_sym,), "math")
#: Along the flow :math:`\dot r = -2c\|\nabla r\|^2 r`, so r keeps the sign of r_0.
RESIDUAL_SIGN = Formula("gf_residual_sign", sp.sign(r_0), (r_0,))


def gf_tau(x: np.ndarray, y: float, beta0: np.ndarray) -> float:
    r"""The root τ of :math:`\sum_i x_i\beta_{0,i}e^{-4x_i\tau} = y` (log-sum-exp form, brentq).

    Parameters
    ----------
    x : numpy.ndarray
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    beta0 : numpy.ndarray
        :math:`\beta_0 = w_0\odot w_0`, shape (d,), entries > 0.

    Returns
    -------
    float
        τ (brentq to a relative tolerance of 4ε): < 0 from a small init (:math:`r_0 < 0`), > 0 from a large one.

    Examples
    --------
    >>> import numpy as np
    >>> x, beta0 = np.array([1.0, 2.0]), np.array([0.01, 0.01])
    >>> tau = gf_tau(x, 1.0, beta0)
    >>> round(tau, 6), round(float(np.sum(x * beta0 * np.exp(-4 * x * tau))), 12)
    (-0.480166, 1.0)
    """
    logc = np.log(x * beta0)
    logy = math.log(y)

    def h(t: float) -> float:  # strictly decreasing, log of the left side minus log y
        z = logc - 4 * x * t
        m = z.max()
        return float(m + math.log(np.exp(z - m).sum()) - logy)

    lo, hi = -1.0, 1.0
    while h(lo) < 0:
        lo *= 2
    while h(hi) > 0:
        hi *= 2
    return float(brentq(h, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500))


def gradient_flow_limit(x, y, w0) -> np.ndarray:
    r""":math:`\beta_{GF} = \beta_0\odot e^{-4x\tau}` (:data:`GF_LIMIT` at τ = :func:`gf_tau`; validated inputs).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.

    Returns
    -------
    numpy.ndarray
        :math:`\beta_{GF}`, shape (d,), a point of P (:math:`\langle x, \beta_{GF}\rangle = y`).

    Raises
    ------
    InputError
        If ``x``, ``y`` or ``w0`` breaks a rule of :func:`~biasaudit.theory.eos_model.eos_problem`.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(gradient_flow_limit([1, 2], 1, [0.1, 0.1]), 6).tolist()
    [0.068255, 0.465873]
    """
    p = eos_problem(x, y, w0)
    return GF_LIMIT(p.x, p.beta0, gf_tau(p.x, p.y, p.beta0))


def kl_potential(beta, beta0) -> float:
    r""":math:`\Phi(\beta) = \sum_i[\beta_i\log(\beta_i/\beta_{0,i}) - \beta_i]` (0 log 0 = 0).

    Parameters
    ----------
    beta : array_like
        β, shape (d,), entries >= 0.
    beta0 : array_like
        :math:`\beta_0`, shape (d,), entries > 0.

    Returns
    -------
    float
        Φ(β).

    Examples
    --------
    >>> round(kl_potential([0.5, 0.25], [0.01, 0.01]), 6)
    2.01073
    >>> kl_potential([0.0, 1.0], [1.0, 1.0])
    -1.0
    """
    beta = np.asarray(beta, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(beta > 0, KL(np.where(beta > 0, beta, 1.0), beta0), 0.0)
    return float(np.sum(terms))


def s_gf(p: EosProblem) -> float:
    r""":math:`s_{GF}`: :math:`S(\beta_{GF})` for a small init (:math:`r_0 \le 0`), :math:`\lambda_{max}(H(w_0))` for a
    large init (:math:`r_0 > 0`).

    Parameters
    ----------
    p : EosProblem
        The validated problem (with ``w0``).

    Returns
    -------
    float
        :math:`s_{GF}`, the largest :math:`\lambda_{max}` along the gradient flow from :math:`w_0`.

    Examples
    --------
    >>> from biasaudit.theory.eos_model import eos_problem
    >>> round(s_gf(eos_problem([1, 2], 1, [0.1, 0.1])), 6)
    7.726981
    """
    if p.r0 <= 0:
        tau = gf_tau(p.x, p.y, p.beta0)
        return float(on_manifold_sharpness(p.x, GF_LIMIT(p.x, p.beta0, tau), p.c))
    return float(hessian_eigenvalues(p.x, p.y, p.w0, p.c)[-1])


def small_alpha_exponent(x) -> float:
    r""":math:`2(1 - x_{(d-1)}/x_{max})` with :math:`x_{(d-1)}` the largest entry strictly below :math:`x_{max}`: the
    rate p of :math:`8cyx_{max} - s_{GF} = O(\alpha^p)` as α → 0 (:data:`ALPHA_RATE`).

    Parameters
    ----------
    x : array_like
        The data point, with at least two distinct entries.

    Returns
    -------
    float
        The exponent p.

    Raises
    ------
    InputError
        If ``x`` has fewer than two distinct entries.

    Examples
    --------
    >>> small_alpha_exponent([1, 2, 4])
    1.0
    """
    xu = np.unique(np.asarray(x, float))
    if xu.size < 2:
        raise InputError("x", "needs two distinct entries for the small-alpha rate", x)
    return float(ALPHA_RATE(xu[-2], xu[-1]))


@dataclass(frozen=True)
class EosRegimes:
    """Everything ``biasaudit regimes eos`` reports, returned by :func:`eos_regimes` and
    :func:`biasaudit.eos_regimes` (vertex indices are 1-based; every number a plain float).

    Parameters
    ----------
    x, y, w0, loss_factor
        The model: data point, label, initial weights and c in L = c r².
    r0 : float
        The initial residual ⟨x, w0⊙w0⟩ − y.
    init_regime : str
        ``"small"`` (r0 ≤ 0: sharpness rises along the flow) or ``"large"`` (r0 > 0: GD catapults).
    tau : float
        The flow's time parameter at its limit.
    beta_gf, beta_gf_l1, sharpness_gf : tuple, float, float
        The gradient flow's limit β_GF, its ℓ1 norm and its on-manifold sharpness 8c Σ x_i² β_i.
    lambda_max_init : float
        λ_max of the Hessian at w0.
    s_gf : float
        s_GF, the largest λ_max along the flow.
    eta_c : float
        η_c = 2/s_GF, the predicted edge of stability.
    eta_stable_max, eta_min_norm_stable_max : float
        The largest η with a linearly stable minimum, and with the minimal-norm one stable.
    min_norm_vertex, min_norm_face, min_norm_beta_l1
        The minimal-ℓ1 minimizer (vertex, face, norm).
    min_sharpness_vertex, min_sharpness_face, min_sharpness
        The minimal-sharpness minimizer.
    min_l2_beta : tuple
        The minimal-ℓ2 minimizer.
    minimizers_disjoint : bool
        Whether the minimal-norm and minimal-sharpness minimizers differ.
    pareto_front : tuple
        The breakpoints (s, N*) of the Pareto front min ‖β‖₁ s.t. S ≤ s, sorted by s.
    small_alpha_exponent : float or None
        The rate exponent of 8cy x_max − S_GF as α → 0 (w0 = α 1).
    certified, certified_how, not_certified, float_outside_rel : dict
        Empty here; :func:`biasaudit.eos_regimes` and ``biasaudit regimes eos`` fill them from
        :func:`biasaudit.numerics.certified_boundaries.certify_eos`: field -> proven [lo, hi], how, or why not.
    """

    x: tuple
    y: float
    w0: tuple
    loss_factor: float
    r0: float
    init_regime: str  # "small" (r0 <= 0: sharpness rises along the flow) or "large" (r0 > 0: catapults)
    tau: float
    beta_gf: tuple
    beta_gf_l1: float
    sharpness_gf: float  # S(beta_GF) = 8c sum x^2 beta_GF, the on-manifold sharpness at the flow's limit
    lambda_max_init: float
    s_gf: float  # max of lambda_max(H) along the flow
    eta_c: float  # 2 / s_gf
    eta_stable_max: float  # 1/(4 c y x_min): largest eta with a linearly stable minimum
    eta_min_norm_stable_max: float  # 1/(4 c y x_max)
    min_norm_vertex: int
    min_norm_face: tuple
    min_norm_beta_l1: float
    min_sharpness_vertex: int
    min_sharpness_face: tuple
    min_sharpness: float
    min_l2_beta: tuple
    minimizers_disjoint: bool
    pareto_front: tuple  # breakpoints (s, N*) of the front, sorted by s
    small_alpha_exponent: float | None
    certified: dict = field(default_factory=dict)  # field -> [lo, hi], a proven enclosure (numerics fills it)
    certified_how: dict = field(default_factory=dict)
    not_certified: dict = field(default_factory=dict)
    float_outside_rel: dict = field(default_factory=dict)  # field -> the float value's relative gap outside

    def to_json(self) -> dict:
        """The fields as a JSON-ready dict.

        Returns
        -------
        dict
            Every field, numpy values converted by :func:`~biasaudit.plumbing.jsonable`.
        """
        from biasaudit.plumbing import jsonable

        return jsonable(asdict(self))


def eos_regimes(x, y, w0, *, loss_factor: float = 0.5) -> EosRegimes:
    r"""The regime summary of the toy model at ``(x, y, w0)``; raises :class:`InputError` on bad input.

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

    Returns
    -------
    EosRegimes
        The flow's limit, :math:`s_{GF}`, :math:`\eta_c = 2/s_{GF}`, the minimizers and the Pareto front.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.theory.eos_model.eos_problem`.

    Examples
    --------
    >>> r = eos_regimes([1, 2], 1, [0.1, 0.1])
    >>> r.init_regime, round(r.s_gf, 6), round(r.eta_c, 6), r.min_norm_vertex
    ('small', 7.726981, 0.258833, 2)
    """
    p = eos_problem(x, y, w0, loss_factor=loss_factor)
    tau = gf_tau(p.x, p.y, p.beta0)
    beta = GF_LIMIT(p.x, p.beta0, tau)
    sgf = s_gf(p)
    xu = np.unique(p.x)
    return EosRegimes(
        x=tuple(p.x.tolist()), y=p.y, w0=tuple(p.w0.tolist()), loss_factor=p.c, r0=p.r0,
        init_regime="small" if p.r0 <= 0 else "large", tau=tau, beta_gf=tuple(beta.tolist()),
        beta_gf_l1=float(beta.sum()), sharpness_gf=float(on_manifold_sharpness(p.x, beta, p.c)),
        lambda_max_init=float(hessian_eigenvalues(p.x, p.y, p.w0, p.c)[-1]), s_gf=sgf, eta_c=ETA_C(sgf),
        eta_stable_max=stable_eta_max(p.x, p.y, p.c), eta_min_norm_stable_max=min_norm_stable_eta_max(p.x, p.y, p.c),
        min_norm_vertex=min_norm_face(p.x)[0], min_norm_face=min_norm_face(p.x),
        min_norm_beta_l1=float(VERTEX_NORM(p.x.max(), p.y)), min_sharpness_vertex=min_sharpness_face(p.x)[0],
        min_sharpness_face=min_sharpness_face(p.x), min_sharpness=float(VERTEX_SHARPNESS(p.x.min(), p.y, p.c)),
        min_l2_beta=tuple(min_l2_beta(p.x, p.y).tolist()), minimizers_disjoint=minimizers_disjoint(p.x),
        pareto_front=tuple(tuple(row) for row in pareto_breakpoints(p.x, p.y, p.c).tolist()),
        small_alpha_exponent=small_alpha_exponent(p.x) if xu.size > 1 else None,
    )
