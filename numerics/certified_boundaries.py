r"""Certified regime boundaries: a proven enclosure of each boundary of paper 1 and paper 2 that is a closed form or
the root of an explicit theory function, and the reason for each that is not.

Every enclosure is computed in ball arithmetic (:mod:`biasaudit.numerics.certified`) from the theory's own sympy
expression (printed into balls, never retyped), at the exact float inputs.

Paper 1 (l2-SAM at uniform α, units of α; c = c_L):

=====================  =====================================================================  ===============
boundary               defining function (theory expression)                                  proof
=====================  =====================================================================  ===============
c                      c_L = ρ/√L (joint) or ρ (per layer)                                    ball evaluation
alpha_grow             root in α of w̃_d = α − c μ_d/‖μ‖ (``DEEP_PERTURBED_WEIGHT``, j = d)    interval Newton
alpha_shrink_all       root in α of w̃_1 = α − c μ_1/‖μ‖ (j = 1); the sandwich's lower end     interval Newton
alpha_gd_like (L = 2)  root in α of the tie of the j† scores μ_j − cμ_j²/H of j = d − 1 and    interval Newton
                       j = d at τ = 0, H = S(0) = α‖μ‖ (``JDAGGER_UNIFORM``)
alpha_collapse         **not certified** (see :data:`ALPHA_COLLAPSE_REASON`); at d = 1 it is c
=====================  =====================================================================  ===============

Each root is checked beside the closed form the theory states for it (``ALPHA_GROW``, ``SANDWICH_LOWER``,
``ALPHA_GD_LIKE``): two theory expressions, one enclosure.

l_inf-SAM: the threshold ρ of G = {j : α_j > ρ} (root in w of the L = 2 departure field μ(w − ρ),
``LINF_FIELD_L2``; the limit rule's G has the same threshold at every depth) and, at L = 2, the growth threshold
2ρ of an unbalanced init u_j(0) + v_j(0) (root in s₀ of the initial slope of ``UNBALANCED_SUM``).

Paper 2 (the shared-weight toy model): τ, the Krawczyk-isolated root of
:math:`\sum_i x_i\beta_{0,i}e^{-4x_i\tau} = y` (``GF_ROOT_TERM``; interval Newton where the Krawczyk step does not
close); :math:`\beta_{GF} = \beta_0 e^{-4x\tau}`
(``GF_LIMIT``), its ℓ1 norm and sharpness :math:`8c\sum x_i^2\beta_{GF,i}` (``SHARPNESS``) on the τ ball;
:math:`\lambda_{max}(H(w_0))` from Arb's eigenvalue enclosure of ``HESSIAN`` at w₀; s_GF (the sharpness at the
flow's limit for r₀ ≤ 0, λ_max(H(w₀)) for r₀ > 0; the hull of both where the ball of r₀ holds 0);
:math:`\eta_c = 2/s_{GF}` (``ETA_C``); the stable-minima thresholds (``STABLE_ETA``), the minimal norm
(``VERTEX_NORM``) and the minimal sharpness (``VERTEX_SHARPNESS``). Not certified: the central flow's endpoints
(:data:`CENTRAL_FLOW_REASON`) and the identification of s_GF with the largest λ_max *along the path*
(:data:`S_GF_PATH_NOTE`: a theorem of the model taken as given, not a numerical proof).

Symbols: μ (data, increasing), ρ (SAM radius), c = c_L, α (uniform init), L (depth), j† the dominant index, H the
harmonic mean of S; x, y, w₀, β₀ = w₀², c (loss factor), τ (flow time in β-units), r₀ the initial residual.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from biasaudit.numerics.certified import Enclosure, enclose, krawczyk_root, newton_root, to_ball, top_eigenvalue

__all__ = ["FLOAT_SLACK_REL", "ALPHA_COLLAPSE_REASON", "CENTRAL_FLOW_REASON", "S_GF_PATH_NOTE", "Certificates", "certify_l2",
           "certify_linf", "certify_eos", "l2_defining_functions", "reference_l2", "reference_linf", "reference_eos"]

# The float value reported beside an enclosure is the library's own float computation, good to its rounding: a few
# ulp for a closed form; brentq's rtol 4 eps plus the conditioning near tau = 0 for the root tau (measured up to
# 1.3e-14 relative on 1000 random draws of the claims' domain, x and y in [0.2, 3], w0 in [1e-3, 3]; it grows like
# 16 x |tau| eps, so a w0 of 1e-30 gives 3e-14). The enclosure reported is the tight one; a float value outside it
# is stated (``float_outside_rel``), and the claims require it within this distance. 10x below the width target.
FLOAT_SLACK_REL = 1e-13

ALPHA_COLLAPSE_REASON = (
    "not certified: alpha_collapse is no closed form and no root of an explicit function; it is where simulated "
    "trajectories switch from the collapse certificate to the escape certificate, found by bisection over float "
    "integrations (RK4 at L = 2, adaptive at even L >= 4). Proving one classification needs a validated ODE "
    "integration of the reduced flow up to its certificate, which the toolkit does not have; its sandwich "
    "[alpha_shrink_all, alpha_grow] is certified.")
CENTRAL_FLOW_REASON = ("not certified: the central flow's endpoint is the end of an ODE integration (gradient flow held "
                       "at S = 2/eta); an enclosure needs a validated ODE integration")
S_GF_PATH_NOTE = ("s_GF is enclosed as the quantity the theory states it equals: S(beta_GF) for r0 <= 0 (the "
                  "sharpness rises monotonically along the flow), lambda_max(H(w0)) for r0 > 0 (largest at the "
                  "start); that the maximum along the path is attained there is the model's theorem, not checked on "
                  "a validated integration of the path")


@dataclass(frozen=True)
class Certificates:
    """What could be proved about one set of regime values.

    Parameters
    ----------
    certified : dict
        Field -> :class:`~biasaudit.numerics.certified.Enclosure` (``proven`` True).
    not_certified : dict
        Field -> why it has no enclosure.
    methods : dict
        Field -> how its enclosure was proved (the defining function and the step).
    tight : dict
        Field -> the enclosure as proved, before any widening to its float value.
    gaps : dict
        Field -> the relative distance of the float value outside the tight enclosure (0 when inside), before the
        enclosure is reported as proven, not widened; ``to_json`` states every non-zero gap.
    """

    certified: dict
    not_certified: dict
    methods: dict
    tight: dict = field(default_factory=dict)
    gaps: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """``{"certified": {field: [lo, hi]}, "certified_how": {field: method}, "not_certified": {field: reason},
        "float_outside_rel": {field: gap}}`` (the last: the float value's relative distance outside its enclosure,
        where it is not inside)."""
        return {"certified": {k: e.to_json() for k, e in self.certified.items()},
                "certified_how": dict(self.methods), "not_certified": dict(self.not_certified),
                "float_outside_rel": {k: g for k, g in self.gaps.items() if g > 0}}


def float_gap(enclosure: Enclosure, value: float) -> float:
    """How far ``value`` lies outside ``enclosure``, relative to ``|value|`` (0 inside)."""
    outside = max(enclosure.lo - value, value - enclosure.hi, 0.0)
    return outside / abs(value) if value != 0.0 else outside


class _Collector:
    """Fills a :class:`Certificates`: each proven enclosure is kept as proven, with its float value's relative gap
    outside it; each failure becomes a reason."""

    def __init__(self, values):
        self.values = values  # field -> the float value reported beside it (or None)
        self.certified, self.not_certified, self.methods, self.tight, self.gaps = {}, {}, {}, {}, {}

    def add(self, name: str, enclosure: Enclosure, how: str) -> None:
        if not enclosure.proven:
            self.not_certified[name] = f"the {enclosure.method} step did not close: {enclosure.detail}"
            return
        self.tight[name] = enclosure
        value = self.values(name)
        if value is not None:
            self.gaps[name] = float_gap(enclosure, float(value))
        self.certified[name] = enclosure
        self.methods[name] = f"{how} ({enclosure.method}; {enclosure.detail})" if enclosure.detail else \
            f"{how} ({enclosure.method})"

    def result(self) -> "Certificates":
        return Certificates(self.certified, self.not_certified, self.methods, self.tight, self.gaps)


# ---- paper 1: l2-SAM -----------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def l2_defining_functions() -> dict:
    """The defining functions of the l2 boundaries, from :mod:`biasaudit.theory.sam_l2`'s expressions: name ->
    ``(f, unknown, args)``, each boundary a root of f in α (see the module's table)."""
    from biasaudit.theory import sam_l2 as t

    s = t.SYMBOLS
    score = t.JDAGGER_UNIFORM.expr.subs(t.H, s["alpha"] * s["norm_mu"])  # H = S(0) = α‖μ‖ at τ = 0
    tie = score.subs(s["mu_j"], s["mu_d"]) - score.subs(s["mu_j"], s["mu_dm1"])
    weight = t.DEEP_PERTURBED_WEIGHT.expr
    return {
        "alpha_grow": (weight.subs(s["mu_j"], s["mu_d"]), s["alpha"], (s["c"], s["mu_d"], s["norm_mu"])),
        "alpha_shrink_all": (weight.subs(s["mu_j"], s["mu_1"]), s["alpha"], (s["c"], s["mu_1"], s["norm_mu"])),
        "alpha_gd_like": (tie, s["alpha"], (s["c"], s["mu_dm1"], s["mu_d"], s["norm_mu"])),
    }


def _c_expr(depth: int, normalization: str):
    from biasaudit.theory import sam_l2 as t

    key = "c_joint" if normalization == "joint" else "c_layer"
    return t.FORMULAS[key].subs(t.L, depth), (t.rho,)


def certify_l2(regimes) -> Certificates:
    r"""Enclosures of the l2-SAM boundaries of ``regimes`` (an :class:`~biasaudit.theory.sam_l2.L2Regimes`, from
    :func:`~biasaudit.numerics.l2_boundaries.l2_sam_regime_boundaries`).

    Parameters
    ----------
    regimes : L2Regimes
        The computed boundaries (their floats seed the root searches).

    Returns
    -------
    Certificates
        ``c``, ``alpha_grow``, ``alpha_shrink_all`` and (L = 2, d ≥ 2) ``alpha_gd_like`` certified;
        ``alpha_collapse`` not certified with :data:`ALPHA_COLLAPSE_REASON` (at d = 1 it is c, certified).

    Examples
    --------
    >>> from biasaudit.numerics.l2_boundaries import l2_sam_regime_boundaries
    >>> cert = certify_l2(l2_sam_regime_boundaries([1, 3, 4], 0.2))
    >>> sorted(cert.certified), list(cert.not_certified)
    (['alpha_gd_like', 'alpha_grow', 'alpha_shrink_all', 'c'], ['alpha_collapse'])
    >>> cert.certified["alpha_grow"].contains(0.2 / 2 ** 0.5 * 4 / 26 ** 0.5)
    True
    """
    col = _Collector(lambda name: getattr(regimes, name, None))
    mu = np.asarray(regimes.mu, float)
    c_expr, c_args = _c_expr(regimes.depth, regimes.normalization)
    c_enc = enclose(c_expr, c_args, (regimes.rho,))
    col.add("c", c_enc, f"c_L = {sp.sstr(c_expr)}")
    from flint import arb, ctx

    from biasaudit.numerics.certified import WORKING_PREC

    with ctx.workprec(WORKING_PREC):
        c_ball = arb_from_expr(c_expr, c_args, (regimes.rho,))
        norm_ball = sum((to_ball(float(m)) ** 2 for m in mu), arb(0)).sqrt()
    funcs = l2_defining_functions()
    for name, mu_values, estimate in (("alpha_grow", (mu[-1],), regimes.alpha_grow),
                                      ("alpha_shrink_all", (mu[0],), regimes.alpha_shrink_all)):
        f, var, _args = funcs[name]
        enc = newton_root(f, var, _args, (c_ball, *map(float, mu_values), norm_ball), estimate)
        col.add(name, enc, f"root in alpha of {sp.sstr(f)}")
    if regimes.alpha_gd_like is not None:
        if mu.size > 1:
            f, var, _args = funcs["alpha_gd_like"]
            enc = newton_root(f, var, _args, (c_ball, float(mu[-2]), float(mu[-1]), norm_ball), regimes.alpha_gd_like)
            col.add("alpha_gd_like", enc,
                    f"root in alpha of the tie of the j-dagger scores of j = d-1 and d at tau = 0: {sp.sstr(f)} = 0")
        else:
            col.add("alpha_gd_like", c_enc, "d = 1: alpha_gd_like = c")
    if regimes.collapses:
        if mu.size == 1:
            col.add("alpha_collapse", c_enc, "d = 1: alpha_collapse = c (the "
                 "unstable point)")
        else:
            col.not_certified["alpha_collapse"] = ALPHA_COLLAPSE_REASON
    return col.result()


def arb_from_expr(expr, args, values):
    """The ball of ``expr`` at ``values`` (the current working precision)."""
    from biasaudit.numerics.certified import arb_function

    return arb_function(expr, tuple(args))(*map(to_ball, values))


# ---- paper 1: l_inf-SAM --------------------------------------------------------------------------------------
def certify_linf(mu, rho_value: float, depth: int) -> tuple[dict, Certificates]:
    r"""The l_inf-SAM thresholds and their enclosures: ``alpha_threshold`` (ρ, the edge of G = {α_j > ρ}) and, at
    L = 2, ``unbalanced_threshold`` (2ρ, the edge of growth from an unbalanced init u_j(0) + v_j(0)).

    Parameters
    ----------
    mu : array_like
        The data point (validated; μ₁ enters the departure field, whose root does not depend on it).
    rho_value : float
        The SAM radius ρ.
    depth : int
        The depth L.

    Returns
    -------
    tuple of (dict, Certificates)
        The float values (from the theory's formulas) and their enclosures.

    Examples
    --------
    >>> values, cert = certify_linf([1, 2], 0.1, 2)
    >>> values["alpha_threshold"], values["unbalanced_threshold"], cert.certified["unbalanced_threshold"].contains(0.2)
    (0.1, 0.2, True)
    """
    from biasaudit.theory import sam_linf as t
    from biasaudit.theory.sam_fields import w

    mu1 = float(np.asarray(mu, float)[0])
    values = {"alpha_threshold": float(rho_value)}  # G = {alpha_j > rho}: the threshold is rho itself
    if depth == 2:
        values["unbalanced_threshold"] = float(t.UNBALANCED_THRESHOLD(float(rho_value)))
    col = _Collector(values.get)
    enc = newton_root(t.LINF_FIELD_L2, w, (t.mu, t.rho), (mu1, float(rho_value)), values["alpha_threshold"])
    col.add("alpha_threshold", enc,
            f"root in w of the L = 2 departure field {sp.sstr(t.LINF_FIELD_L2)} (G = {{alpha_j > rho}} at every L)")
    if depth == 2:
        slope = sp.diff(t.UNBALANCED_SUM, t.tau).subs(t.tau, 0)
        enc = newton_root(slope, t.s0, (t.mu, t.rho), (mu1, float(rho_value)), values["unbalanced_threshold"])
        col.add("unbalanced_threshold", enc,
                f"root in s_0 of the initial slope {sp.sstr(slope)} of u_j + v_j")
    return values, col.result()


# ---- paper 2: the toy model ----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=32)
def gf_root_function(d: int):
    r""":math:`\sum_i x_i\beta_{0,i}e^{-4x_i\tau} - y` at dimension d, from ``GF_ROOT_TERM``: ``(f, τ, args)``
    with args ``(x_1..x_d, β_{0,1}..β_{0,d}, y)``."""
    from biasaudit.theory import eos_flow as f
    from biasaudit.theory.eos_model import xs, y_sym

    x = xs(d)
    b0 = sp.symbols(f"beta0_1:{d + 1}", positive=True)
    expr = sum(f.GF_ROOT_TERM.subs({f.x_i: xi, f.beta0_i: bi}) for xi, bi in zip(x, b0)) - y_sym
    return expr, f.tau_sym, (*x, *b0, y_sym)


def certify_eos(regimes) -> Certificates:
    r"""Enclosures of the toy model's flow quantities and thresholds for ``regimes`` (an
    :class:`~biasaudit.theory.eos_flow.EosRegimes`; its floats seed the root).

    Parameters
    ----------
    regimes : EosRegimes
        The summary of :func:`~biasaudit.theory.eos_flow.eos_regimes`.

    Returns
    -------
    Certificates
        ``tau``, ``beta_gf_l1``, ``sharpness_gf``, ``lambda_max_init``, ``s_gf``, ``eta_c``, ``eta_stable_max``,
        ``eta_min_norm_stable_max``, ``min_norm_beta_l1`` and ``min_sharpness`` certified; ``central_flow`` not.

    Examples
    --------
    >>> from biasaudit.theory.eos_flow import eos_regimes
    >>> reg = eos_regimes([1, 2], 1, [0.1, 0.1])
    >>> cert = certify_eos(reg)
    >>> cert.certified["s_gf"].contains(reg.s_gf), cert.certified["eta_c"].contains(reg.eta_c)
    (True, True)
    """
    from flint import arb, ctx

    from biasaudit.numerics.certified import WORKING_PREC
    from biasaudit.theory import eos_flow as f
    from biasaudit.theory import eos_minimizers as mins
    from biasaudit.theory import eos_model as m

    col = _Collector(lambda name: getattr(regimes, name, None))
    x = [float(v) for v in regimes.x]
    w0 = [float(v) for v in regimes.w0]
    y, c = float(regimes.y), float(regimes.loss_factor)
    d = len(x)
    with ctx.workprec(WORKING_PREC):
        b0 = [to_ball(v) ** 2 for v in w0]  # exact: a double squared fits in 128 bits
        expr, tau, args = gf_root_function(d)
        tau_enc = krawczyk_root(expr, tau, args, (*x, *b0, y), regimes.tau)
        if not tau_enc.proven:  # Krawczyk's point preconditioner fails where f' varies a lot on X; Newton divides
            tau_enc = newton_root(expr, tau, args, (*x, *b0, y), regimes.tau)
        col.add("tau", tau_enc,
                f"root in tau of {sp.sstr(f.GF_ROOT_TERM)} summed over i, minus y")
        small = large = None
        if tau_enc.proven:
            tau_ball = tau_enc.ball
            beta = [arb_from_expr(f.GF_LIMIT.expr, f.GF_LIMIT.args, (xi, bi, tau_ball)) for xi, bi in zip(x, b0)]
            l1 = sum(beta, arb(0))
            sharp = sum((arb_from_expr(m.SHARPNESS.expr, m.SHARPNESS.args, (xi, bi, c)) for xi, bi in zip(x, beta)),
                        arb(0))
            for name, ball, how in (("beta_gf_l1", l1, "sum of beta_GF = beta0 exp(-4 x tau) on the tau ball"),
                                    ("sharpness_gf", sharp, "8c sum x_i^2 beta_GF,i on the tau ball")):
                col.add(name, _ball_enclosure(ball), how)
            small = sharp
        else:
            for name in ("beta_gf_l1", "sharpness_gf"):
                col.not_certified[name] = "the root tau was not isolated"
        g = [to_ball(xi) * to_ball(wi) for xi, wi in zip(x, w0)]
        r0 = sum((to_ball(xi) * bi for xi, bi in zip(x, b0)), arb(0)) - y
        entry = functools.partial(arb_from_expr, m.HESSIAN.expr, m.HESSIAN.args)
        rows = [[entry((g[j], g[k], r0, x[j], int(j == k), c)) for k in range(d)] for j in range(d)]
        lam = top_eigenvalue(rows)
        col.add("lambda_max_init", lam, "top eigenvalue of the Hessian at w0")
        if lam.proven:
            large = arb(lam.lo).union(arb(lam.hi))
        # s_GF: S(beta_GF) from a small init (r0 <= 0), lambda_max(H(w0)) from a large one; both where the sign of r0
        # is not decided by its ball (the exact value is one of the two)
        branches = [b for b, keep in ((small, not (r0 > 0)), (large, not (r0 <= 0))) if keep]
        if any(b is None for b in branches):
            col.not_certified["s_gf"] = "a branch it needs was not enclosed"
            col.not_certified["eta_c"] = "s_GF was not enclosed"
        else:
            s_ball = branches[0] if len(branches) == 1 else branches[0].union(branches[1])
            which = ("S(beta_GF), r0 <= 0" if r0 <= 0 else "lambda_max(H(w0)), r0 > 0" if r0 > 0 else
                     "hull of S(beta_GF) and lambda_max(H(w0)): the ball of r0 holds 0")
            col.add("s_gf", _ball_enclosure(s_ball), which + "; " + S_GF_PATH_NOTE)
            eta_ball = arb_from_expr(f.ETA_C.expr, f.ETA_C.args, (s_ball,))
            col.add("eta_c", _ball_enclosure(eta_ball), f"eta_c = {sp.sstr(f.ETA_C.expr)}")
    for name, formula, vals in (("eta_stable_max", mins.STABLE_ETA, (min(x), y, c)),
                                ("eta_min_norm_stable_max", mins.STABLE_ETA, (max(x), y, c)),
                                ("min_norm_beta_l1", mins.VERTEX_NORM, (max(x), y)),
                                ("min_sharpness", mins.VERTEX_SHARPNESS, (min(x), y, c))):
        col.add(name, enclose(formula.expr, formula.args, vals),
                f"{sp.sstr(formula.expr)}")
    col.not_certified["central_flow"] = CENTRAL_FLOW_REASON
    return col.result()


def _ball_enclosure(ball) -> Enclosure:
    from biasaudit.numerics.certified import _as_enclosure

    return _as_enclosure(ball, "ball evaluation", True, "")


# ---- the mpmath-iv references --------------------------------------------------------------------------------
def reference_l2(regimes) -> dict:
    """The l2 roots of :func:`certify_l2` again, in mpmath's ``iv`` context (same defining functions, same
    estimates): field -> ``(lo, hi)`` floats, for the proven ones only."""
    from mpmath import iv

    from biasaudit.numerics.certified_iv import IV_DPS, _digits, iv_enclose, iv_floats, iv_newton_root

    mu = np.asarray(regimes.mu, float)
    c_expr, c_args = _c_expr(regimes.depth, regimes.normalization)
    out = {"c": iv_floats(iv_enclose(c_expr, c_args, (regimes.rho,)))}
    with _digits(IV_DPS):
        c_iv = iv_enclose(c_expr, c_args, (regimes.rho,))
        norm_iv = iv.sqrt(sum(iv.mpf(float(m)) ** 2 for m in mu))
    funcs = l2_defining_functions()
    todo = [("alpha_grow", (float(mu[-1]),), regimes.alpha_grow),
            ("alpha_shrink_all", (float(mu[0]),), regimes.alpha_shrink_all)]
    if regimes.alpha_gd_like is not None and mu.size > 1:
        todo.append(("alpha_gd_like", (float(mu[-2]), float(mu[-1])), regimes.alpha_gd_like))
    elif regimes.alpha_gd_like is not None:  # d = 1: alpha_gd_like = c
        out["alpha_gd_like"] = out["c"]
    for name, mus, estimate in todo:
        f, var, args = funcs[name]
        X, proven = iv_newton_root(f, var, args, (c_iv, *mus, norm_iv), estimate)
        if proven:
            out[name] = iv_floats(X)
    return out


def reference_linf(mu, rho_value: float, depth: int) -> dict:
    """The l_inf thresholds of :func:`certify_linf` in mpmath's ``iv`` context: field -> ``(lo, hi)``."""
    from biasaudit.numerics.certified_iv import iv_floats, iv_newton_root
    from biasaudit.theory import sam_linf as t
    from biasaudit.theory.sam_fields import w

    mu1 = float(np.asarray(mu, float)[0])
    out = {}
    X, proven = iv_newton_root(t.LINF_FIELD_L2, w, (t.mu, t.rho), (mu1, float(rho_value)), float(rho_value))
    if proven:
        out["alpha_threshold"] = iv_floats(X)
    if depth == 2:
        slope = sp.diff(t.UNBALANCED_SUM, t.tau).subs(t.tau, 0)
        X, proven = iv_newton_root(slope, t.s0, (t.mu, t.rho), (mu1, float(rho_value)), 2.0 * float(rho_value))
        if proven:
            out["unbalanced_threshold"] = iv_floats(X)
    return out


def reference_eos(regimes) -> dict:
    """τ, S(β_GF), and from a small init s_GF and η_c, in mpmath's ``iv`` context (interval Newton on the same root
    function): field -> ``(lo, hi)``. The large-init s_GF (a top eigenvalue) has no iv reference here."""
    from mpmath import iv

    from biasaudit.numerics.certified_iv import IV_DPS, _digits, iv_enclose, iv_floats, iv_newton_root
    from biasaudit.theory import eos_flow as f
    from biasaudit.theory import eos_model as m

    x = [float(v) for v in regimes.x]
    y, c = float(regimes.y), float(regimes.loss_factor)
    out = {}
    with _digits(IV_DPS):
        b0 = [iv.mpf(float(v)) ** 2 for v in regimes.w0]
        expr, tau, args = gf_root_function(len(x))
        X, proven = iv_newton_root(expr, tau, args, (*x, *b0, y), regimes.tau)
        if not proven:
            return out
        out["tau"] = iv_floats(X)
        beta = [iv_enclose(f.GF_LIMIT.expr, f.GF_LIMIT.args, (xi, bi, X)) for xi, bi in zip(x, b0)]
        sharp = sum(iv_enclose(m.SHARPNESS.expr, m.SHARPNESS.args, (xi, bi, c)) for xi, bi in zip(x, beta))
        out["sharpness_gf"] = iv_floats(sharp)
        r0 = sum(iv.mpf(xi) * bi for xi, bi in zip(x, b0)) - y
        if r0.b <= 0:  # a small init: s_GF = S(beta_GF)
            out["s_gf"] = out["sharpness_gf"]
            out["eta_c"] = iv_floats(iv_enclose(f.ETA_C.expr, f.ETA_C.args, (sharp,)))
    return out
