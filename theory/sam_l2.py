r"""l2-SAM on a balanced diagonal linear network: the L = 2 theory (and what changes at L > 2).

Setting (paper 1, §C "l2-SAM at L = 2"): one example (μ, +1), 0 < μ₁ < … < μ_d, balanced init w^(l)(0) = α,
rescaled time τ. At depth 2, β_j = w_j² and the l2-SAM flow is

.. math::

    w_j' = μ_j w_j \left(1 - \frac{c μ_j}{S}\right), \qquad S = \|μ ⊙ w\|_2,

with c = ρ/√2 (joint normalisation of the ascent direction over all 2d parameters, the default) or c = ρ
(per-layer normalisation). In general c_L = ρ/√L (joint) or ρ (per layer).

Derived statements encoded here (each a sympy expression; those evaluated are
:class:`~biasaudit.theory.formula.Formula` objects, lambdified once at import):

* **log-linear reduction** ln(w_j/α_j) = μ_j τ − c μ_j² A(τ), A' = 1/S;
* **dominant index** j†(τ) = argmax_j [ln α_j + μ_j τ − c μ_j² A]; uniform α: argmax_j [μ_j − cμ_j²/H],
  H = τ/A the harmonic mean of S on [0, τ];
* **fixed points** c·e_k, Jacobian diag: μ_k at j = k and μ_j(1 − μ_j/μ_k) at j ≠ k;
* **certificates** S ≤ cμ₁ ⇒ shrink forever (collapse); max_j w_j > c ⇒ escape;
* **sandwich** cμ₁/‖μ‖ ≤ α_c ≤ cμ_d/‖μ‖; **α_grow** = cμ_d/‖μ‖; **regime 3** α ≥ c(μ_{d−1}+μ_d)/‖μ‖;
* **switch times** τ = c(μ_j + μ_{j+1}) A(τ) (β_j = β_{j+1});
* **plateau** β ≈ c² e₁ (= (ρ²/2) e₁ joint), exit time (1/μ₁) ln(1/δ) + O(1), δ = α/α_c − 1;
* **asymptotics** A_∞ < ∞, β/‖β‖ → e_d, ln(w_j/w_j^GD) → −cμ_j² A_∞;
* **L > 2** w̃_j = α − c_L μ_j/‖μ‖ (uniform α); small-α field → (−1)^{L−1} c_L^{L−1} μ_j^L/‖μ‖^{L−1}:
  even L collapses at small α, odd L never collapses (starts major-first).

α_c has no closed form. This module states it (the point in the sandwich where the certificates switch,
:func:`l2_regime_statement`); :mod:`biasaudit.numerics.l2_boundaries` computes it by bisection between the
sandwich bounds, classifying each trajectory by the two certificates, to ``rel_tol`` (default 1e−12).

Where L > 2 differs (see :func:`l2_regime_statement`): the log-linear reduction is an L = 2 fact. At
even L ≥ 4 the small-α field is negative (collapse exists) and the certificates generalise (every
w̃_j ≤ 0 ⇒ collapse; max_j w_j > c_L or every w̃_j ≥ 0 ⇒ escape; at L = 2 the first is S ≤ cμ₁, see
:mod:`biasaudit.numerics.l2_deep`), so ``alpha_collapse`` is again a certificate-driven bisection inside the same
sandwich c_Lμ₁/‖μ‖ ≤ α_c ≤ c_Lμ_d/‖μ‖; at odd L there is no collapse boundary (``collapses=False``).

Symbols
=======
=============  ====================================================
``mu_j``       μ_j, data coordinates (increasing)
``alpha``      α, balanced initial scale (uniform or per coordinate)
``rho``        ρ, SAM radius
``c``          c_L: ρ/√L joint, ρ per layer
``tau``        rescaled time τ
``A``          A(τ) = ∫ ds/S
``S``          ‖μ ⊙ w‖₂ (T = ‖μ ⊙ w^{L−1}‖₂ at depth L)
``H``          τ/A, the harmonic mean of S
``L``          depth
=============  ====================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from biasaudit.plumbing import choice, positive_increasing, positive_int, positive_scalar
from biasaudit.theory.formula import Formula
from biasaudit.theory.sam_fields import effective_radius

__all__ = [
    "NORMALIZATIONS",
    "c_L",
    "L2Regimes",
    "l2_regime_statement",
    "validate_regime_inputs",
    "rescaled_field_l2",
    "jacobian_at_fixed_point",
    "jacobian_spectrum",
    "switch_time_residual",
    "jdagger_uniform",
    "jdagger_general",
    "deep_perturbed_weights",
    "deep_small_alpha_field",
    "SYMBOLS",
    "FORMULAS",
    "ALPHA_GROW",
    "SANDWICH_LOWER",
    "ALPHA_GD_LIKE",
    "LOG_LINEAR",
    "JDAGGER_UNIFORM",
    "JACOBIAN_OTHER",
    "SWITCH_TIME",
    "PLATEAU_EXIT_TIME",
    "PLATEAU_EXIT_SLOPE",
    "DEEP_PERTURBED_WEIGHT",
    "DEEP_SMALL_ALPHA_FIELD",
]

NORMALIZATIONS = ("joint", "layer")

# ---- symbols -------------------------------------------------------------------------------------------
tau, A, H = sp.symbols("tau A H", positive=True)
rho, c, alpha = sp.symbols("rho c alpha", positive=True)
S, T = sp.symbols("S T", positive=True)
L = sp.Symbol("L", integer=True, positive=True)
mu_j, mu_k, mu_1, mu_d, mu_dm1 = sp.symbols("mu_j mu_k mu_1 mu_d mu_{d-1}", positive=True)
mu_jp1 = sp.Symbol("mu_{j+1}", positive=True)
w_j, alpha_j = sp.symbols("w_j alpha_j", positive=True)
norm_mu = sp.Symbol("‖μ‖", positive=True)
delta = sp.Symbol("delta", positive=True)
A_inf = sp.Symbol("A_inf", positive=True)
alpha_c = sp.Symbol("alpha_c", positive=True)

#: The symbols of the l2-SAM statements: those of the formulas below, and the names of the quantities the claims
#: state (alpha_c, the j† sequence, ...).
SYMBOLS = {"tau": tau, "A": A, "H": H, "rho": rho, "c": c, "alpha": alpha, "S": S, "T": T, "L": L,
           "mu_j": mu_j, "mu_k": mu_k, "mu_1": mu_1, "mu_d": mu_d, "mu_dm1": mu_dm1, "mu_jp1": mu_jp1,
           "norm_mu": norm_mu, "w_j": w_j, "alpha_j": alpha_j, "delta": delta, "A_inf": A_inf, "alpha_c": alpha_c,
           "alpha_grow": sp.Symbol("alpha_grow", positive=True),
           "alpha_R3": sp.Symbol("alpha_R3", positive=True),         # the regime-3 (GD-like) boundary
           "alpha_c(eta)": sp.Symbol("alpha_c(eta)", positive=True),  # separatrix of discrete SAM at step eta
           "alpha_c(h)": sp.Symbol("alpha_c(h)", positive=True),      # separatrix of explicit Euler at step h
           "eta": sp.Symbol("eta", positive=True), "h": sp.Symbol("h", positive=True),
           "s": sp.Symbol("s", positive=True),                        # a scale of mu
           "d": sp.Symbol("d", integer=True, positive=True),          # the number of coordinates
           "w_j'": sp.Symbol("w_j'"), "A'": sp.Symbol("A'"),
           "w_j^GD": sp.Symbol("w_j^GD", positive=True),              # GD's coordinate from the same init
           "lambda_j": sp.Symbol("lambda_j"), "lambda_k": sp.Symbol("lambda_k"),  # Jacobian eigenvalues at c e_k
           "j_dagger": sp.Symbol("j_dagger", integer=True, positive=True),   # argmax_j beta_j (1-based)
           "j_dagger(0+)": sp.Symbol("j_dagger(0+)", integer=True, positive=True),
           "j_dagger(inf)": sp.Symbol("j_dagger(inf)", integer=True, positive=True),
           "j_dagger_sequence": sp.Symbol("j_dagger_sequence"),
           "j_dagger(tau, alpha)": sp.Function("j_dagger")(tau, alpha),
           "argmax": sp.Function("argmax"),
           "loss(tau)": sp.Function("loss")(tau), "tau_star": sp.Symbol("tau_star", positive=True),
           "tau_exit": sp.Symbol("tau_exit", positive=True),
           "T_half^SAM": sp.Symbol("T_half^SAM", positive=True), "T_half^GD": sp.Symbol("T_half^GD", positive=True),
           "ratio_mid_regime_2": sp.Symbol("ratio_mid_regime_2", positive=True),
           "delta_4x": sp.Symbol("delta_4x", positive=True),
           "delta_4": sp.Symbol("delta_4", positive=True),  # the largest delta at which T_half^SAM >= 4 T_half^GD
           "max_k |ln S_k - ln S(tau_k)|": sp.Symbol("max_k |ln S_k - ln S(tau_k)|", nonnegative=True),
           "collapse": sp.Symbol("collapse"), "escape": sp.Symbol("escape"),
           "bisect": sp.Function("bisect"), "certificates": sp.Symbol("certificates"),
           "alpha_c(mu, c)": sp.Function("alpha_c")}

# ---- formulas ------------------------------------------------------------------------------------------
# each closed form that is evaluated is a Formula (the expression and its function, lambdified once)
ALPHA_GROW = Formula("alpha_grow", c * mu_d / norm_mu, (c, mu_d, norm_mu), "math")
SANDWICH_LOWER = Formula("sandwich_lower", c * mu_1 / norm_mu, (c, mu_1, norm_mu), "math")
ALPHA_GD_LIKE = Formula("alpha_gd_like", c * (mu_dm1 + mu_d) / norm_mu, (c, mu_dm1, mu_d, norm_mu), "math")
LOG_LINEAR = Formula("log_linear", sp.log(alpha_j) + mu_j * tau - c * mu_j**2 * A, (alpha_j, mu_j, tau, c, A))
JDAGGER_UNIFORM = Formula("jdagger_score_uniform", mu_j - c * mu_j**2 / H, (mu_j, c, H))  # argmax_j, H = τ/A
JACOBIAN_OTHER = Formula("jacobian_other", mu_j * (1 - mu_j / mu_k), (mu_j, mu_k))
SWITCH_TIME = Formula("switch_time", c * (mu_j + mu_jp1) * A, (c, mu_j, mu_jp1, A))  # β_j = β_{j+1} at τ = this
PLATEAU_EXIT_TIME = sp.log(1 / delta) / mu_1                                          # + O(1)
#: d τ_exit / d ln(1/δ): the slope of the plateau law
PLATEAU_EXIT_SLOPE = Formula("plateau_exit_slope", sp.simplify(-delta * sp.diff(PLATEAU_EXIT_TIME, delta)), (mu_1,),
                             "math")
DEEP_PERTURBED_WEIGHT = Formula("deep_perturbed_weight", alpha - c * mu_j / norm_mu, (alpha, c, mu_j, norm_mu))
DEEP_SMALL_ALPHA_FIELD = Formula("deep_small_alpha_field",
                                 (-1) ** (L - 1) * c ** (L - 1) * mu_j**L / norm_mu ** (L - 1), (c, mu_j, norm_mu, L))

FORMULAS = {
    "c_joint": effective_radius(rho, L, "joint"),
    "c_layer": effective_radius(rho, L, "layer"),
    "field": mu_j * w_j * (1 - c * mu_j / S),                       # w_j' at L = 2
    "field_deep": mu_j * (w_j - c * mu_j * w_j ** (L - 1) / T) ** (L - 1),  # w_j' at depth L, uniform w > 0
    "log_growth_rate": mu_j - c * mu_j**2 / S,                       # (ln w_j)'
    "log_linear": LOG_LINEAR.expr,                                   # ln w_j(τ)
    "A_prime": 1 / S,
    "jdagger_score_uniform": JDAGGER_UNIFORM.expr,                   # argmax_j, H = τ/A
    "jdagger_score_general": LOG_LINEAR.expr,
    "fixed_point": c,                                                # w = c e_k
    "jacobian_own": mu_k,
    "jacobian_other": JACOBIAN_OTHER.expr,
    "certificate_collapse": sp.Lt(S, c * mu_1),
    "certificate_escape": sp.Gt(w_j, c),
    "sandwich_lower": SANDWICH_LOWER.expr,
    "sandwich_upper": ALPHA_GROW.expr,                               # the upper bound is alpha_grow
    "alpha_grow": ALPHA_GROW.expr,
    "alpha_gd_like": ALPHA_GD_LIKE.expr,
    "switch_time": SWITCH_TIME.eq(tau),
    "plateau_beta": c**2,                                            # β ≈ c² e₁ = (ρ²/2) e₁ joint
    "plateau_exit_time": PLATEAU_EXIT_TIME,                          # + O(1)
    "asymptotic_log_ratio_to_gd": -c * mu_j**2 * A_inf,
    "deep_perturbed_weight": DEEP_PERTURBED_WEIGHT.expr,             # w̃_j at uniform α, any L
    "certificate_collapse_deep": sp.Le(T, c * mu_j * w_j ** (L - 2)),  # for every j ⟺ every w̃_j ≤ 0
    "certificate_grow_deep": sp.Ge(T, c * mu_j * w_j ** (L - 2)),      # for every j ⟺ every w̃_j ≥ 0
    "deep_small_alpha_field": DEEP_SMALL_ALPHA_FIELD.expr,
}


def c_L(rho_value: float, depth: int = 2, normalization: str = "joint") -> float:
    r""":math:`c_L = \rho/\sqrt L` (joint normalisation over all L·d parameters) or ρ (per layer).

    Parameters
    ----------
    rho_value : float
        The SAM radius ρ > 0.
    depth : int
        The depth L >= 1 (default 2).
    normalization : str
        ``"joint"`` (the default) or ``"layer"``.

    Returns
    -------
    float
        :math:`c_L`.

    Raises
    ------
    InputError
        If ``rho_value`` <= 0, ``depth`` < 1, or ``normalization`` is neither ``"joint"`` nor ``"layer"``.

    Examples
    --------
    >>> c_L(0.5, 4), c_L(0.5, 4, "layer")
    (0.25, 0.5)
    """
    rho_value = positive_scalar("rho", rho_value)
    depth = positive_int("depth", depth)
    choice("normalization", normalization, NORMALIZATIONS)
    return float(effective_radius(rho_value, depth, normalization))


def rescaled_field_l2(w: np.ndarray, mu: np.ndarray, c_value: float) -> np.ndarray:
    r""":math:`w' = \mu\odot w\odot(1 - c\mu/S)`, :math:`S = \|\mu\odot w\|_2`, at L = 2; the zero vector maps to 0
    (ε = 0 at zero gradient).

    Parameters
    ----------
    w : numpy.ndarray
        The balanced weights, shape (d,).
    mu : numpy.ndarray
        The data point μ, shape (d,).
    c_value : float
        :math:`c_L`.

    Returns
    -------
    numpy.ndarray
        w', shape (d,).

    Examples
    --------
    >>> import numpy as np
    >>> rescaled_field_l2(np.array([1.0, 1.0]), np.array([3.0, 4.0]), 1.0).round(12).tolist()
    [1.2, 0.8]
    """
    s = float(np.linalg.norm(mu * w))
    if s == 0.0:
        return np.zeros_like(w)
    return mu * w * (1.0 - c_value * mu / s)


def jacobian_at_fixed_point(d: int, k: int) -> sp.Matrix:
    r"""Exact sympy Jacobian of the L = 2 field at :math:`w = c\,e_k` (k 0-based) for symbolic :math:`\mu_1..\mu_d`.

    Parameters
    ----------
    d : int
        The number of coordinates.
    k : int
        The fixed point's coordinate, 0-based.

    Returns
    -------
    tuple of (sympy.Matrix, tuple of sympy.Symbol)
        The d×d Jacobian (simplified) and the symbols :math:`\mu_1, …, \mu_d` it is written in.

    Examples
    --------
    >>> J, mus = jacobian_at_fixed_point(2, 1)
    >>> J
    Matrix([
    [mu_1*(-mu_1 + mu_2)/mu_2,    0],
    [                       0, mu_2]])
    """
    mus = sp.symbols(f"mu_1:{d + 1}", positive=True)
    ws = sp.symbols(f"w_1:{d + 1}", positive=True)
    s_expr = sp.sqrt(sum(m**2 * w**2 for m, w in zip(mus, ws)))
    field_vec = sp.Matrix([m * w * (1 - c * m / s_expr) for m, w in zip(mus, ws)])
    J = field_vec.jacobian(sp.Matrix(ws))
    at = {w: (c if i == k else 0) for i, w in enumerate(ws)}
    return sp.simplify(J.subs(at)), mus


def jacobian_spectrum(mu, k: int) -> np.ndarray:
    r"""Predicted eigenvalues at :math:`c\,e_k` (k 0-based): :math:`\mu_k` at j = k, :math:`\mu_j(1 - \mu_j/\mu_k)`
    otherwise (:data:`JACOBIAN_OTHER`).

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    k : int
        The fixed point's coordinate, 0-based.

    Returns
    -------
    numpy.ndarray
        The eigenvalues, shape (d,), in coordinate order.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and strictly increasing.

    Examples
    --------
    >>> jacobian_spectrum([1, 2], 1).tolist()
    [0.5, 2.0]
    """
    mu = positive_increasing("mu", mu)
    out = JACOBIAN_OTHER(mu, mu[k])
    out[k] = mu[k]
    return out


def switch_time_residual(tau_value, A_value, mu_a, mu_b, c_value):
    r""":math:`\tau - c(\mu_a + \mu_b)A` (:data:`SWITCH_TIME`): zero exactly when :math:`\beta_a = \beta_b` (uniform α).

    Parameters
    ----------
    tau_value : float or numpy.ndarray
        The rescaled time τ.
    A_value : float or numpy.ndarray
        :math:`A(\tau)`, the integral in the log-linear reduction :data:`LOG_LINEAR`.
    mu_a, mu_b : float
        The two data coordinates.
    c_value : float
        :math:`c_L`.

    Returns
    -------
    float or numpy.ndarray
        The residual.

    Examples
    --------
    >>> switch_time_residual(3.0, 1.0, 1.0, 2.0, 1.0)
    0.0
    """
    return tau_value - SWITCH_TIME(c_value, mu_a, mu_b, A_value)


def jdagger_uniform(mu, c_value: float, H_value) -> np.ndarray:
    r"""1-based :math:`\arg\max_j [\mu_j - c\mu_j^2/H]` for uniform α (H = τ/A, array-valued allowed; the first j on a
    tie).

    Parameters
    ----------
    mu : array_like
        The data point μ, shape (d,).
    c_value : float
        :math:`c_L`.
    H_value : float or array_like
        H = τ/A, any shape.

    Returns
    -------
    numpy.ndarray
        j†, 1-based, the shape of ``H_value``.

    Examples
    --------
    >>> jdagger_uniform([1, 2, 3], 1.0, [1.0, 10.0]).tolist()
    [1, 3]
    """
    H_value = np.asarray(H_value, dtype=float)[..., None]
    return np.argmax(JDAGGER_UNIFORM(np.asarray(mu, float), c_value, H_value), axis=-1) + 1


def jdagger_general(mu, alpha_vec, c_value: float, tau_value, A_value) -> np.ndarray:
    r"""1-based :math:`\arg\max_j [\ln\alpha_j + \mu_j\tau - c\mu_j^2 A]` (any per-coordinate α; :data:`LOG_LINEAR`).

    Parameters
    ----------
    mu : array_like
        The data point μ, shape (d,).
    alpha_vec : array_like
        The initial weights :math:`\alpha_j > 0`, shape (d,).
    c_value : float
        :math:`c_L`.
    tau_value : float or array_like
        Rescaled times τ.
    A_value : float or array_like
        :math:`A(\tau)`, broadcast with ``tau_value``.

    Returns
    -------
    numpy.ndarray
        j†, 1-based, the broadcast shape of ``tau_value`` and ``A_value``.

    Examples
    --------
    >>> jdagger_general([1, 2, 3], [1.0, 1.0, 1.0], 1.0, [1.0, 10.0], 1.0).tolist()
    [1, 3]
    """
    tau_value = np.asarray(tau_value, float)[..., None]
    A_value = np.asarray(A_value, float)[..., None]
    return np.argmax(LOG_LINEAR(np.asarray(alpha_vec, float), np.asarray(mu, float), tau_value, c_value,
                                 A_value), axis=-1) + 1


def deep_perturbed_weights(mu, alpha_value: float, c_value: float) -> np.ndarray:
    r""":math:`\tilde w_j = \alpha - c_L\mu_j/\|\mu\|` at uniform α, any depth (:data:`DEEP_PERTURBED_WEIGHT`).

    Parameters
    ----------
    mu : array_like
        The data point μ, shape (d,).
    alpha_value : float
        The uniform initial weight α.
    c_value : float
        :math:`c_L`.

    Returns
    -------
    numpy.ndarray
        :math:`\tilde w`, shape (d,).

    Examples
    --------
    >>> deep_perturbed_weights([3, 4], 1.0, 1.0).round(12).tolist()
    [0.4, 0.2]
    """
    mu = np.asarray(mu, float)
    return DEEP_PERTURBED_WEIGHT(alpha_value, c_value, mu, float(np.linalg.norm(mu)))


def deep_small_alpha_field(mu, c_value: float, depth: int) -> np.ndarray:
    r""":math:`\lim_{\alpha\to0}` of the depth-L field at uniform α:
    :math:`(-1)^{L-1}c_L^{L-1}\mu^L/\|\mu\|^{L-1}` (:data:`DEEP_SMALL_ALPHA_FIELD`).

    Parameters
    ----------
    mu : array_like
        The data point μ, shape (d,).
    c_value : float
        :math:`c_L`.
    depth : int
        The depth L.

    Returns
    -------
    numpy.ndarray
        The field, shape (d,): negative at even L (collapse), positive at odd L.

    Examples
    --------
    >>> [deep_small_alpha_field([3.0, 4.0], 1.0, depth).round(12).tolist() for depth in (2, 3)]
    [[-1.8, -3.2], [1.08, 2.56]]
    """
    mu = np.asarray(mu, float)
    return DEEP_SMALL_ALPHA_FIELD(c_value, mu, float(np.linalg.norm(mu)), depth)


# ---- regime boundaries ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class L2Regimes:
    r"""Regime boundaries of l2-SAM at uniform α (all in units of α).

    Parameters
    ----------
    mu : tuple of float
        The data point μ (increasing).
    rho : float
        The SAM radius ρ.
    depth : int
        The depth L.
    normalization : str
        ``"joint"`` or ``"layer"``.
    c : float
        :math:`c_L`.
    alpha_collapse : float or None
        :math:`\alpha_c`: below it β → 0 (regime 1), at L = 2 and every even L; ``None`` where there is no collapse at
        all (odd L, ``collapses=False``; depth 1), and ``None`` in the bare statement of :func:`l2_regime_statement`
        (no closed form: numerics computes it).
    alpha_collapse_bracket : tuple or None
        The bisection's final bracket of :math:`\alpha_c` (numerics fills it in).
    alpha_grow : float
        :math:`c_L\mu_d/\|\mu\|`: above it every coordinate grows from τ = 0 (L = 2: monotonically for all τ).
    alpha_gd_like : float or None
        The regime 3 boundary :math:`c_L(\mu_{d-1} + \mu_d)/\|\mu\|` (L = 2 only; ``None`` otherwise).
    sandwich : tuple or None
        :math:`(c_L\mu_1/\|\mu\|, c_L\mu_d/\|\mu\|)`, the bounds of :math:`\alpha_c` (even L).
    collapses : bool
        Whether a collapse boundary exists (even L).
    alpha_shrink_all : float
        :math:`c_L\mu_1/\|\mu\|`: below it every coordinate shrinks at τ = 0.
    formulas : dict
        The closed forms stated, as sympy expressions.
    certificates : dict
        The collapse and escape certificates, as sympy relations.
    notes : str
        How the boundaries are obtained.
    """

    mu: tuple
    rho: float
    depth: int
    normalization: str
    c: float
    alpha_collapse: float | None
    alpha_collapse_bracket: tuple | None
    alpha_grow: float
    alpha_gd_like: float | None
    sandwich: tuple | None
    collapses: bool
    alpha_shrink_all: float
    formulas: dict = field(default_factory=dict)
    certificates: dict = field(default_factory=dict)
    notes: str = ""

    def to_json(self) -> dict:
        r"""The boundaries as a JSON-ready dict, with :math:`\alpha_c/c`, the sandwich, the bracket, and the formulas
        and certificates as sympy strings.

        Returns
        -------
        dict
            The fields above (numbers as plain floats) and ``alpha_collapse_over_c``.
        """
        from biasaudit.plumbing import jsonable

        out = {k: getattr(self, k) for k in ("c", "alpha_collapse", "alpha_grow", "alpha_gd_like", "depth",
                                             "normalization", "rho", "mu", "collapses", "alpha_shrink_all")}
        out["alpha_collapse_over_c"] = None if self.alpha_collapse is None else self.alpha_collapse / self.c
        out["sandwich"] = self.sandwich
        out["alpha_collapse_bracket"] = self.alpha_collapse_bracket
        out["formulas"] = {k: sp.sstr(v) for k, v in self.formulas.items()}
        out["certificates"] = {k: sp.sstr(v) for k, v in self.certificates.items()}
        out["notes"] = self.notes
        return jsonable(out)


def validate_regime_inputs(mu, rho_value, depth, normalization):
    """(μ positive and increasing, ρ > 0, depth ≥ 1, a known normalisation) or :class:`InputError`.

    Parameters
    ----------
    mu : array_like
        The data point μ.
    rho_value : float
        The SAM radius ρ.
    depth : int
        The depth L.
    normalization : str
        ``"joint"`` or ``"layer"``.

    Returns
    -------
    tuple of (numpy.ndarray, float, int)
        μ as floats, ρ and L.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and strictly increasing, ``rho_value`` <= 0, ``depth`` < 1, or
        ``normalization`` is neither ``"joint"`` nor ``"layer"``.

    Examples
    --------
    >>> mu, rho, depth = validate_regime_inputs([1, 2], 0.5, 2, "joint")
    >>> mu.tolist(), rho, depth
    ([1.0, 2.0], 0.5, 2)
    >>> validate_regime_inputs([2, 1], 0.5, 2, "joint")
    Traceback (most recent call last):
    ...
    biasaudit.plumbing.inputs.InputError: mu: must be strictly positive and strictly increasing, got [2, 1]
    """
    mu = positive_increasing("mu", mu)
    rho_value = positive_scalar("rho", rho_value)
    depth = positive_int("depth", depth)
    choice("normalization", normalization, NORMALIZATIONS)
    return mu, rho_value, depth


def l2_regime_statement(mu, rho_value: float, *, depth: int = 2, normalization: str = "joint") -> L2Regimes:
    r"""What theory states about the l2-SAM regimes at uniform α: every closed form (:math:`c_L`, :math:`\alpha_{grow}`,
    :math:`\alpha_{gd\text{-}like}` at L = 2, the sandwich), the certificates, and whether a collapse boundary exists.

    :math:`\alpha_c` itself has no closed form: it is stated here as the point inside the sandwich
    :math:`c_L\mu_1/\|\mu\| \le \alpha_c \le c_L\mu_d/\|\mu\|` where the certificates switch from collapse to escape,
    and left ``None``. :func:`biasaudit.numerics.l2_boundaries.l2_sam_regime_boundaries` computes it by bisection and
    returns this statement with ``alpha_collapse`` filled in.

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    rho_value : float
        The SAM radius ρ > 0.
    depth : int
        The depth L >= 1 (default 2).
    normalization : str
        ``"joint"`` (the default) or ``"layer"``.

    Returns
    -------
    L2Regimes
        The statement, ``alpha_collapse`` ``None``.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`validate_regime_inputs`.

    Examples
    --------
    >>> r = l2_regime_statement([1, 2, 3], 0.5)
    >>> round(r.c, 12), round(r.alpha_grow, 12), round(r.alpha_gd_like, 12), r.collapses, r.alpha_collapse
    (0.353553390593, 0.283473354757, 0.472455591262, True, None)
    """
    mu, rho_value, depth = validate_regime_inputs(mu, rho_value, depth, normalization)
    cv = c_L(rho_value, depth, normalization)
    norm = float(np.linalg.norm(mu))
    grow = ALPHA_GROW(cv, float(mu[-1]), norm)
    shrink_all = SANDWICH_LOWER(cv, float(mu[0]), norm)
    formulas = {"c": FORMULAS["c_joint"].subs(L, depth) if normalization == "joint" else FORMULAS["c_layer"],
                "alpha_grow": FORMULAS["alpha_grow"]}
    deep = {"w_tilde": FORMULAS["deep_perturbed_weight"], "small_alpha_field": FORMULAS["deep_small_alpha_field"]}
    if depth % 2:  # depth 1 and odd L: no collapse boundary
        note = ("depth 1: the field is mu for every algorithm; no regimes (w = alpha + mu tau)" if depth == 1 else
                "odd L: the small-alpha field is +c_L^(L-1) mu^L/|mu|^(L-1) > 0, so beta never collapses; "
                "no collapse boundary. Very small alpha starts major-first, then opens a minor window.")
        return L2Regimes(tuple(mu.tolist()), rho_value, depth, normalization, cv, None, None, grow, None, None,
                         False, shrink_all, {**formulas, **deep}, {}, note)
    bisection = {"alpha_collapse (no closed form; bisection inside the sandwich)": sp.Interval(
        FORMULAS["sandwich_lower"], FORMULAS["sandwich_upper"])}
    if depth == 2:
        gd_like = ALPHA_GD_LIKE(cv, float(mu[-2]), float(mu[-1]), norm) if mu.size > 1 else cv
        formulas.update({
            "flow": sp.Eq(sp.Symbol("w_j'"), FORMULAS["field"]),
            "reduction": sp.Eq(sp.log(w_j / alpha_j), FORMULAS["log_linear"] - sp.log(alpha_j)),
            "A'": sp.Eq(sp.Symbol("A'"), FORMULAS["A_prime"]),
            **bisection,
            "alpha_gd_like": FORMULAS["alpha_gd_like"],
            "switch_time": FORMULAS["switch_time"],
        })
        certificates = {"collapse": FORMULAS["certificate_collapse"], "escape": FORMULAS["certificate_escape"]}
        note = ("alpha_collapse by certificate-driven bisection (no closed form); "
                "regime 1 below it, regime 2 between, regime 3 (GD-like) at or above alpha_gd_like")
    else:
        gd_like = None
        formulas.update({**deep, **bisection})
        certificates = {"collapse (every j)": FORMULAS["certificate_collapse_deep"],
                        "escape": FORMULAS["certificate_escape"],
                        "escape (every j)": FORMULAS["certificate_grow_deep"]}
        note = ("even L >= 4: small alpha collapses like L = 2; alpha_collapse by certificate-driven bisection "
                "(collapse: every w~_j <= 0; escape: max w_j > c_L or every w~_j >= 0). The separatrix ends on "
                "the degenerate interior equilibrium u*_j = mu_j^(-1/(L-2))/|mu^(-1/(L-2))| (units of c_L), so "
                "near-threshold runs are decided after algebraically long times (adaptive steps).")
    return L2Regimes(tuple(mu.tolist()), rho_value, depth, normalization, cv, None, None, grow, gd_like,
                     (shrink_all, grow), True, shrink_all, formulas, certificates, note)


def rescaled_field_deep(w: np.ndarray, mu: np.ndarray, c_value: float, depth: int) -> np.ndarray:
    """Balanced depth-L l2-SAM field w' = μ ⊙ w̃^{L−1}, w̃ = w − c_L μ ⊙ w^{L−1}/T, T = ‖μ ⊙ w^{L−1}‖₂.

    (The reduced field of :mod:`biasaudit.theory.sam_fields`, ``FORMULAS["field_deep"]``, valid for w > 0.)
    T = 0 (zero gradient) gives ε = 0: w̃ = w.
    """
    p = w ** (depth - 1)
    t_norm = float(np.linalg.norm(mu * p))
    w_tilde = w if t_norm == 0.0 else w - c_value * mu * p / t_norm
    return mu * w_tilde ** (depth - 1)
