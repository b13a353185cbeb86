"""biasaudit's Python API: compute boundaries, run claims and audits from a notebook.

Every function checks its inputs at the edge (an :class:`~biasaudit.plumbing.InputError` names the parameter
and the rule it broke) and returns a dataclass with ``to_json()``; the regime results also render in Jupyter
(``_repr_html_``), and claims and evidence do too (:mod:`biasaudit.ledger`).

* ``sam_regimes(mu, rho, depth=2, norm="l2", normalization="joint", alpha=None)``: :class:`SamRegimes`
  (l2: c, alpha_collapse, alpha_grow, alpha_gd_like, with formulas and why a boundary is absent), or
  :class:`LinfLimit` with ``norm="linf"`` (needs ``alpha``);
* ``linf_limit(mu, alpha, rho, depth=2)``: :class:`LinfLimit`, where l_inf-SAM's beta goes;
* ``eos_regimes(x, y, w0, loss_factor=0.5)``: the toy model of "Conflicting Biases at the Edge of Stability"
  (s_GF, eta_c, minimizers, Pareto front);
* ``eos_sweep(x, y, w0, eta_min, eta_max, n=400)``: a batched GD learning-rate sweep (outcome classes, sharpness);
* ``central_flow(x, y, w0, eta, loss_factor=0.5)``: where the central flow (gradient flow held at S = 2/eta) ends:
  the predicted endpoint of GD at step eta (beta, norms, sharpness, risk, whether it met the edge);
* ``list_claims(pattern=None, paper=None, kind=None)``: :class:`ClaimInfo` rows (id, paper, kind, origin,
  source, title);
* ``check_claim(claim_id, profile="ci", seed=0)``: run one claim (as ``biasaudit check`` does) and return its
  :class:`~biasaudit.ledger.Evidence`;
* ``run_audit(out="biasaudit-report", claims=None, tier="quick", workers=None, resume=False)``:
  :class:`AuditSummary` (verdict counts, the report's paths), as ``biasaudit audit`` (``biasaudit.audit`` is
  the audit package; its engine is :func:`biasaudit.audit.execute_audit`).

Every public name has numpydoc sections; their examples run as doctests in the test suite
(``tests/test_api_doctests.py``).

Examples
--------
l2-SAM at depth 2: the three regimes in alpha.

>>> import biasaudit as ba
>>> r = ba.sam_regimes(mu=(1, 2), rho=1.0)
>>> [round(a, 4) for a in (r.alpha_collapse, r.alpha_grow, r.alpha_gd_like)]
[0.5213, 0.6325, 0.9487]
"""

from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["SamRegimes", "LinfLimit", "ClaimInfo", "AuditSummary", "sam_regimes", "linf_limit", "eos_regimes",
           "eos_sweep", "central_flow", "list_claims", "check_claim", "run_audit"]


def _jsonable(value):
    from biasaudit.plumbing import jsonable

    return jsonable(value)


@dataclass(frozen=True)
class SamRegimes:
    """l2-SAM's predicted regimes for a uniform init alpha ("Minor First, Major Last"), returned by
    :func:`sam_regimes`: collapse below ``alpha_collapse``, every coordinate grows above ``alpha_grow``,
    GD-like from ``alpha_gd_like`` (depth 2 only). A boundary that does not exist is None, with its reason in
    ``null_reasons``. Every number is a plain Python float.

    Parameters
    ----------
    mu : tuple of float
        The data point, strictly positive and increasing.
    rho : float
        The SAM radius.
    depth : int
        The depth L of the diagonal network.
    normalization : str
        ``"joint"`` or ``"layer"``: how the ascent step is normalized.
    c : float
        The effective radius c_L of l2-SAM on the balanced state (c = rho/sqrt(2) at L = 2, joint).
    alpha_collapse, alpha_grow, alpha_gd_like : float or None
        The regime boundaries in alpha (None where absent, see ``null_reasons``).
    null_reasons : dict
        Boundary name -> why it is absent.
    certified : dict
        Boundary name -> ``[lo, hi]``, a proven enclosure of its exact value (Arb ball arithmetic, from the theory's
        formula; :mod:`biasaudit.numerics.certified_boundaries`).
    certified_how : dict
        Boundary name -> how its enclosure was proved.
    not_certified : dict
        Boundary name -> why it has no enclosure (``alpha_collapse``: a bisection over simulations).
    float_outside_rel : dict
        Boundary name -> how far (relative) its float value lies outside its enclosure, where it does not lie inside
        (the float computation's rounding: an ulp or two).
    alpha : tuple of float or None
        The init that ``alpha_regime`` classifies, when one was given.
    alpha_regime : str or None
        The regime of ``alpha``, in words.
    formulas : dict
        Boundary name -> its sympy expression (and the certificates the numerics use).
    notes : str
        How the boundaries were computed.
    """

    mu: tuple
    rho: float
    depth: int
    normalization: str
    c: float
    alpha_collapse: float | None
    alpha_grow: float | None
    alpha_gd_like: float | None
    null_reasons: dict
    certified: dict = field(default_factory=dict)
    certified_how: dict = field(default_factory=dict)
    not_certified: dict = field(default_factory=dict)
    float_outside_rel: dict = field(default_factory=dict)  # field -> the float value's relative gap outside
    alpha: tuple | None = None
    alpha_regime: str | None = None
    formulas: dict = field(default_factory=dict, repr=False)  # name -> sympy expression
    notes: str = ""

    def to_json(self) -> dict:
        """The regimes as a JSON-ready dict.

        Returns
        -------
        dict
            Every field; the formulas as strings.
        """
        out = {k: v for k, v in asdict(self).items() if k != "formulas"}
        out["formulas"] = {k: str(v) for k, v in self.formulas.items()}
        return _jsonable(out)

    def _repr_html_(self) -> str:
        import sympy as sp

        rows = "".join(f"<tr><td>{name}</td><td>{'none: ' + html.escape(self.null_reasons.get(name, '')) if v is None else f'{v:.10g}'}</td></tr>"
                       for name, v in (("c", self.c), ("alpha_collapse", self.alpha_collapse),
                                       ("alpha_grow", self.alpha_grow), ("alpha_gd_like", self.alpha_gd_like)))
        formulas = "".join(f"<li>{html.escape(k)}: $${sp.latex(v)}$$</li>" for k, v in self.formulas.items())
        extra = (f"<p>alpha = {self.alpha}: {html.escape(self.alpha_regime)}</p>" if self.alpha_regime else "")
        return (f"<p><b>l2-SAM</b>, depth {self.depth}, {self.normalization} normalization, mu = {list(self.mu)}, "
                f"rho = {self.rho:g}</p><table>{rows}</table>{extra}<ul>{formulas}</ul>")


@dataclass(frozen=True)
class LinfLimit:
    """Where l_inf-SAM's beta goes from the balanced init alpha, returned by :func:`linf_limit`.

    Parameters
    ----------
    mu, alpha : tuple of float
        The data point and the init (one value per coordinate).
    rho : float
        The SAM radius.
    depth : int
        The depth L.
    kind : str
        ``"basis"`` (beta grows along e_index), ``"zero"`` or ``"fixed"`` (beta tends to ``beta_limit``).
    index : int or None
        The 1-based coordinate beta grows along (``kind == "basis"``).
    beta_limit : tuple of float or None
        The limit of beta (``kind`` ``"zero"`` or ``"fixed"``).
    formula : str
        The rule used.
    explanation : str
        Why, in words.
    thresholds : dict
        ``alpha_threshold`` (rho, the edge of G = {alpha_j > rho}) and, at L = 2, ``unbalanced_threshold`` (2 rho).
    certified, certified_how, not_certified, float_outside_rel : dict
        Threshold -> a proven ``[lo, hi]``, how it was proved, or why not; the float value's gap outside it.
    """

    mu: tuple
    alpha: tuple
    rho: float
    depth: int
    kind: str
    index: int | None
    beta_limit: tuple | None
    formula: str
    explanation: str
    thresholds: dict = field(default_factory=dict)
    certified: dict = field(default_factory=dict)
    certified_how: dict = field(default_factory=dict)
    not_certified: dict = field(default_factory=dict)
    float_outside_rel: dict = field(default_factory=dict)  # field -> the float value's relative gap outside

    def to_json(self) -> dict:
        """The limit as a JSON-ready dict.

        Returns
        -------
        dict
            Every field.
        """
        return _jsonable(asdict(self))

    def _repr_html_(self) -> str:
        where = f"e_{self.index}" if self.kind == "basis" else f"beta = {self.beta_limit}"
        return (f"<p><b>l_inf-SAM</b>, depth {self.depth}, mu = {list(self.mu)}, alpha = {list(self.alpha)}, "
                f"rho = {self.rho:g}: limit <b>{html.escape(self.kind)}</b> ({html.escape(where)})</p>"
                f"<p>{html.escape(self.explanation)}</p>")


def _plain(value: float | None) -> float | None:
    """A numpy scalar as a plain Python float (None stays None)."""
    return None if value is None else float(value)


def _mu_rho_depth(mu, rho, depth):
    import numpy as np

    from biasaudit.plumbing import positive_increasing, positive_int, positive_scalar
    from biasaudit.plumbing.ranges import depth_in_range, in_range, spread_in_range, vector_in_range

    mu = spread_in_range("mu", vector_in_range("mu", positive_increasing("mu", np.atleast_1d(np.asarray(mu, float)))))
    rho = in_range("rho", positive_scalar("rho", rho))
    depth = depth_in_range("depth", positive_int("depth", depth, minimum=1))
    return mu, rho, depth


def _alpha_vector(alpha, d: int):
    import numpy as np

    from biasaudit.plumbing import InputError
    from biasaudit.plumbing.ranges import vector_in_range

    a = np.atleast_1d(np.asarray(alpha, float))
    if a.ndim != 1 or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise InputError("alpha", "must be strictly positive and finite", alpha)
    vector_in_range("alpha", a)
    if a.size not in (1, d):
        raise InputError("alpha", f"must have length 1 (uniform) or {d} (the length of mu)", alpha)
    return a


def null_reasons(depth: int) -> dict:
    """Why a boundary is absent (None) at this depth."""
    return {
        "alpha_collapse": ("depth 1: SAM's limit direction is GD's; no collapse boundary" if depth == 1 else
                           "odd L: beta never collapses (the small-alpha field is positive)"),
        "alpha_gd_like": ("the regime-3 (GD-like) boundary c(mu_(d-1) + mu_d)/‖mu‖ is stated at L = 2 only; "
                          "no regime-3 boundary is derived for L > 2" if depth > 2 else "depth 1: no regimes"),
    }


def classify_alpha(regimes, mu, alpha) -> str:
    """The regime of one init: uniform alpha by comparison with the boundaries, per-coordinate alpha by the
    certificates of the numerics."""
    import numpy as np

    if regimes.depth == 1:
        return "depth 1: no regimes"
    if regimes.depth % 2:
        return "odd L: never collapses (every coordinate is nondecreasing)"
    uniform = alpha.size == 1 or bool(np.all(alpha == alpha[0]))
    if regimes.depth > 2:
        from biasaudit.numerics.l2_deep import classify_deep_trajectory

        if uniform:
            return ("collapse (beta -> 0, loss -> ln 2)" if float(alpha[0]) < regimes.alpha_collapse else
                    "escape (beta grows; no regime-3 boundary is stated at L > 2)")
        cls = classify_deep_trajectory(mu, np.broadcast_to(alpha, mu.shape) / regimes.c, regimes.depth)
        return f"per-coordinate alpha: {cls.name} (certificate at sigma = {cls.sigma:.6g}, units of c_L)"
    if uniform:
        a = float(alpha[0])
        if a < regimes.alpha_collapse:
            return "regime 1 (collapse: beta -> 0, loss -> ln 2)"
        if a >= regimes.alpha_gd_like:
            return "regime 3 (GD-like: j_dagger = d for all tau)"
        return "regime 2 (sequential amplification with a loss plateau)"
    from biasaudit.numerics.l2_reduction import classify_l2_trajectory

    cls = classify_l2_trajectory(mu, alpha, regimes.c)
    return f"per-coordinate alpha: {cls.kind} (certificate at tau = {cls.tau:.6g})"


def sam_regimes(mu, rho, depth: int = 2, norm: str = "l2", normalization: str = "joint", alpha=None):
    """Predicted l2-SAM regime boundaries, or the l_inf-SAM limit (as ``biasaudit regimes sam``).

    Parameters
    ----------
    mu : sequence of float
        The data point (mu, +1), strictly positive and increasing.
    rho : float
        The SAM radius, > 0.
    depth : int, default 2
        The depth L of the diagonal network, 1 to 32.
    norm : {"l2", "linf"}, default "l2"
        The ascent norm.
    normalization : {"joint", "layer"}, default "joint"
        How l2-SAM normalizes its ascent step (l2 only).
    alpha : float or sequence of float, optional
        An init to classify (l2) or to follow (linf, required there): one value or one per coordinate.

    Returns
    -------
    SamRegimes or LinfLimit
        :class:`SamRegimes` for ``norm="l2"``, :class:`LinfLimit` for ``norm="linf"``.

    Raises
    ------
    biasaudit.plumbing.InputError
        A bad input, naming the parameter and the rule (``mu: must be strictly positive and strictly
        increasing``).

    Examples
    --------
    >>> import biasaudit as ba
    >>> r = ba.sam_regimes(mu=(1, 2), rho=1.0, alpha=0.8)
    >>> round(r.c, 6), type(r.alpha_collapse).__name__
    (0.707107, 'float')
    >>> r.alpha_regime
    'regime 2 (sequential amplification with a loss plateau)'
    >>> ba.sam_regimes(mu=(2, 1), rho=1.0)
    Traceback (most recent call last):
    ...
    biasaudit.plumbing.inputs.InputError: mu: must be strictly positive and strictly increasing, got [2.0, 1.0]
    """
    from biasaudit.plumbing import InputError, choice

    choice("norm", norm, ("l2", "linf"))
    choice("normalization", normalization, ("joint", "layer"))
    mu, rho, depth = _mu_rho_depth(mu, rho, depth)
    if norm == "linf":
        if alpha is None:
            raise InputError("alpha", "is required for norm='linf' (the limit depends on the init alpha)")
        if normalization != "joint":
            raise InputError("normalization", "applies to norm='l2' only (l_inf-SAM uses sign(grad))", normalization)
        return linf_limit(mu, alpha, rho, depth)
    from biasaudit.numerics.l2_boundaries import l2_sam_regime_boundaries

    from biasaudit.numerics.certified_boundaries import certify_l2

    regimes = l2_sam_regime_boundaries(mu, rho, depth=depth, normalization=normalization)
    cert = certify_l2(regimes).to_json()
    reasons = null_reasons(depth)
    a = None if alpha is None else _alpha_vector(alpha, mu.size)
    return SamRegimes(
        mu=tuple(mu.tolist()), rho=float(rho), depth=int(depth), normalization=normalization, c=float(regimes.c),
        alpha_collapse=_plain(regimes.alpha_collapse), alpha_grow=_plain(regimes.alpha_grow),
        alpha_gd_like=_plain(regimes.alpha_gd_like),
        null_reasons={k: v for k, v in reasons.items() if getattr(regimes, k) is None}, **cert,
        alpha=None if a is None else tuple(a.tolist()),
        alpha_regime=None if a is None else classify_alpha(regimes, mu, a),
        formulas={**regimes.formulas, **{f"certificate ({k})": v for k, v in regimes.certificates.items()}},
        notes=regimes.notes)


def linf_limit(mu, alpha, rho, depth: int = 2) -> LinfLimit:
    """The limit of l_inf-SAM's beta on one point (mu, +1) from the balanced init alpha.

    Parameters
    ----------
    mu : sequence of float
        The data point, strictly positive and increasing.
    alpha : float or sequence of float
        The init: one value, or one per coordinate; each > 0.
    rho : float
        The SAM radius, > 0.
    depth : int, default 2
        The depth L, 1 to 32.

    Returns
    -------
    LinfLimit
        The kind of limit, its coordinate or value, the rule and an explanation.

    Raises
    ------
    biasaudit.plumbing.InputError
        A bad input, naming the parameter and the rule.

    Examples
    --------
    >>> import biasaudit as ba
    >>> lim = ba.linf_limit(mu=(1, 2), alpha=0.5, rho=0.1)
    >>> lim.kind, lim.index
    ('basis', 2)
    """
    import numpy as np

    from biasaudit.numerics.certified_boundaries import certify_linf
    from biasaudit.theory.sam_linf import linf_sam_limit

    mu, rho, depth = _mu_rho_depth(mu, rho, depth)
    a = _alpha_vector(alpha, mu.size)
    a = np.full(mu.size, a[0]) if a.size == 1 else a
    lim = linf_sam_limit(mu, a, rho, depth)
    thresholds, cert = certify_linf(mu, rho, depth)
    beta = getattr(lim, "beta_limit", None)
    return LinfLimit(mu=tuple(mu.tolist()), alpha=tuple(a.tolist()), rho=float(rho), depth=int(depth), kind=lim.kind,
                     index=None if lim.index is None else int(lim.index),
                     beta_limit=None if beta is None else tuple(np.asarray(beta, float).tolist()),
                     formula=str(getattr(lim, "formula", "")), explanation=getattr(lim, "explanation", ""),
                     thresholds=thresholds, **cert.to_json())


def eos_regimes(x, y, w0, loss_factor: float = 0.5):
    """The shared-weight toy model of "Conflicting Biases at the Edge of Stability" on one point (x, y) from w0
    (as ``biasaudit regimes eos``).

    Parameters
    ----------
    x : sequence of float
        The data point, every entry > 0.
    y : float
        The label, > 0.
    w0 : sequence of float
        The initial weights, non-zero, as many as ``x``.
    loss_factor : float, default 0.5
        c in L = c r², > 0.

    Returns
    -------
    biasaudit.theory.eos_flow.EosRegimes
        s_GF, eta_c = 2/s_GF, the thresholds of the stable minima, the minimal-norm and minimal-sharpness
        minimizers, beta_GF and the Pareto front (``to_json()`` for a dict).

    Raises
    ------
    biasaudit.plumbing.InputError
        A bad input, naming the parameter and the rule.

    Examples
    --------
    >>> import biasaudit as ba
    >>> reg = ba.eos_regimes(x=(1, 2), y=1, w0=(0.1, 0.1))
    >>> reg.init_regime, round(reg.s_gf, 4), round(reg.eta_c, 4)
    ('small', 7.727, 0.2588)
    """
    import numpy as np

    from biasaudit.plumbing import finite_scalar
    from biasaudit.plumbing.ranges import ZERO_CHECKED_LATER as LATER, in_range, vector_in_range
    from biasaudit.theory.eos_flow import eos_regimes as _eos_regimes

    x = vector_in_range("x", np.atleast_1d(np.asarray(x, float)), zero=LATER)
    w0 = vector_in_range("w0", np.atleast_1d(np.asarray(w0, float)), zero=LATER)
    y = in_range("y", finite_scalar("y", y), zero=LATER)
    import dataclasses

    from biasaudit.numerics.certified_boundaries import certify_eos

    reg = _eos_regimes(x, y, w0, loss_factor=in_range("loss_factor", finite_scalar("loss_factor", loss_factor),
                                                          zero=LATER))
    return dataclasses.replace(reg, **certify_eos(reg).to_json())


def eos_sweep(x, y, w0, eta_min: float, eta_max: float, n: int = 400, **options):
    """A batched GD learning-rate sweep of the toy model (numba), as ``biasaudit sweep eos``.

    Parameters
    ----------
    x, y, w0 : as in :func:`eos_regimes`
        The data point, the label and the initial weights.
    eta_min, eta_max : float
        The smallest and largest step size, 0 < eta_min < eta_max.
    n : int, default 400
        The number of step sizes, evenly spaced, >= 2.
    **options
        Passed to :func:`biasaudit.numerics.eos_gd.gd_sweep` (``loss_factor``, ``max_steps``, ``tol``,
        ``bound``).

    Returns
    -------
    biasaudit.numerics.eos_gd.GdSweep
        The final state of GD at each step size: outcome class, final weights, sharpness and norms.

    Raises
    ------
    biasaudit.plumbing.InputError
        A bad input, naming the parameter and the rule.

    Examples
    --------
    >>> import biasaudit as ba
    >>> sweep = ba.eos_sweep(x=(1, 2), y=1, w0=(0.1, 0.1), eta_min=0.1, eta_max=0.2, n=5)
    >>> sweep.counts()["converged"]
    5
    """
    import numpy as np

    from biasaudit.numerics.eos_gd import gd_sweep
    from biasaudit.plumbing import InputError, positive_int, positive_scalar
    from biasaudit.plumbing.ranges import in_range

    eta_min = in_range("eta_min", positive_scalar("eta_min", eta_min))
    eta_max = in_range("eta_max", positive_scalar("eta_max", eta_max))
    if eta_max <= eta_min:
        raise InputError("eta_max", "must exceed eta_min", (eta_min, eta_max))
    etas = np.linspace(eta_min, eta_max, positive_int("n", n, minimum=2))
    return gd_sweep(np.asarray(x, float), float(y), np.asarray(w0, float), etas, **options)


def central_flow(x, y, w0, eta: float, loss_factor: float = 0.5):
    """The central flow of the toy model at step ``eta``: gradient flow until the sharpness reaches 2/eta, then
    gradient flow held at S = 2/eta; its endpoint predicts where GD with step ``eta`` lands.

    Parameters
    ----------
    x : array_like
        The data point, all entries > 0 (d >= 2).
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights, non-zero, the length of ``x``.
    eta : float
        GD's step, > 0 and finite.
    loss_factor : float
        c in L = c r² (default 1/2).

    Returns
    -------
    CentralFlow
        :class:`~biasaudit.numerics.eos_central_flow.CentralFlow`: ``beta``, ``norm_l1``, ``norm_l2``,
        ``sharpness``, ``risk``, ``met_edge`` (whether the flow reached S = 2/eta), ``status`` and ``to_json()``,
        with plain Python floats.

    Raises
    ------
    InputError
        Naming the parameter: a non-finite or non-positive ``eta``, ``y`` or entry of ``x``, lengths that differ.

    Examples
    --------
    >>> from biasaudit import central_flow
    >>> above = central_flow([0.7, 1.3, 2.1], 1.5, [0.05, 0.05, 0.05], eta=0.2)
    >>> above.met_edge, round(above.sharpness, 6)
    (True, 10.0)
    >>> central_flow([0.7, 1.3, 2.1], 1.5, [0.05, 0.05, 0.05], eta=0.05).met_edge
    False
    """
    import numpy as np

    from biasaudit.numerics.eos_central_flow import central_flow as _central_flow
    from biasaudit.plumbing import finite_scalar
    from biasaudit.plumbing.ranges import ZERO_CHECKED_LATER as LATER, in_range, vector_in_range

    x = vector_in_range("x", np.atleast_1d(np.asarray(x, float)), zero=LATER)
    w0 = vector_in_range("w0", np.atleast_1d(np.asarray(w0, float)), zero=LATER)
    y = in_range("y", finite_scalar("y", y), zero=LATER)
    eta = in_range("eta", finite_scalar("eta", eta), zero=LATER)
    c = in_range("loss_factor", finite_scalar("loss_factor", loss_factor), zero=LATER)
    return _central_flow(x, y, w0, eta, loss_factor=c)


@dataclass(frozen=True)
class ClaimInfo:
    """One row of :func:`list_claims`.

    Parameters
    ----------
    id : str
        The claim's id, e.g. ``sam.l2.regime3``.
    paper : str
        ``sam``, ``eos`` or a plugin's paper.
    kind : str
        ``theory`` or ``experiment``.
    origin : str
        ``stated`` by the paper, ``derived`` by us from its statements, or ``reported`` (a measurement made here,
        stated so that it can be refuted).
    source : str
        Where it comes from (paper, section, equation).
    title : str
        The claim in one line.
    """

    id: str
    paper: str
    kind: str
    origin: str
    source: str
    title: str

    def to_json(self) -> dict:
        """The row as a dict.

        Returns
        -------
        dict
            Every field.
        """
        return asdict(self)


def list_claims(pattern: str | None = None, paper: str | None = None, kind: str | None = None) -> list[ClaimInfo]:
    """Registered claims (ours and installed plugins'), filtered by id globs, paper and kind.

    Parameters
    ----------
    pattern : str, optional
        Comma-separated globs of claim ids (``"sam.l2.*"``); None: every claim.
    paper : str, optional
        Only this paper's claims.
    kind : {"theory", "experiment"}, optional
        Only this kind of claim.

    Returns
    -------
    list of ClaimInfo
        In registry order.

    Raises
    ------
    biasaudit.plumbing.InputError
        An unknown paper, or a pattern that matches no claim (with the three closest ids).

    Examples
    --------
    >>> import biasaudit as ba
    >>> [c.id for c in ba.list_claims("sam.depth1.svm_*")]
    ['sam.depth1.svm_direction', 'sam.depth1.svm_direction_linf']
    """
    from biasaudit.registry import select_claims

    return [ClaimInfo(c.id, c.paper, c.kind, c.origin, c.source, c.title)
            for c in select_claims(pattern, paper=paper, kind=kind)]


def check_claim(claim_id: str, profile: str = "ci", seed: int = 0):
    """Check one claim (any kind) by id, as ``biasaudit check --claims ID`` does.

    Parameters
    ----------
    claim_id : str
        A registered claim id (see :func:`list_claims`).
    profile : {"ci", "thorough"}, default "ci"
        How many random cases to sample.
    seed : int, default 0
        The sampling seed.

    Returns
    -------
    biasaudit.ledger.Evidence
        The verdict with the case it rests on: parameters, predicted and observed values, the error against
        the named tolerance, the negative controls (:func:`biasaudit.ledger.run_claim` runs a
        :class:`~biasaudit.ledger.Claim` object instead of an id).

    Raises
    ------
    biasaudit.plumbing.InputError
        An unknown claim id or profile.

    Examples
    --------
    >>> import biasaudit as ba
    >>> evidence = ba.check_claim("sam.depth1.svm_direction")
    >>> str(evidence.verdict), evidence.error < evidence.tolerance["value"]
    ('confirmed', True)
    """
    from biasaudit.ledger import run_claim as _run_claim
    from biasaudit.plumbing import choice
    from biasaudit.registry import get_claim

    choice("profile", profile, ("ci", "thorough"))
    return _run_claim(get_claim(claim_id), profile=profile, seed=seed)


@dataclass(frozen=True)
class AuditSummary:
    """What :func:`run_audit` returns.

    Parameters
    ----------
    counts : dict
        Verdict -> number of claims.
    out : str
        The report folder.
    index_html, report_md, evidence : str
        The paths of ``index.html``, ``report.md`` and ``evidence.jsonl`` in it.
    """

    counts: dict
    out: str
    index_html: str
    report_md: str
    evidence: str

    def to_json(self) -> dict:
        """The summary as a dict.

        Returns
        -------
        dict
            Every field.
        """
        return asdict(self)

    def _repr_html_(self) -> str:
        counts = ", ".join(f"{k}: {v}" for k, v in self.counts.items())
        return f'<p>biasaudit audit: {html.escape(counts)}; report <a href="{html.escape(self.index_html)}">index.html</a></p>'


def run_audit(out: str | Path = "biasaudit-report", claims: str | None = None, tier: str = "quick",
          workers: int | None = None, resume: bool = False, figures: bool = True,
          progress: bool = False) -> AuditSummary:
    """Run the audit, as ``biasaudit audit`` does, and return its verdict counts and report paths.

    Parameters
    ----------
    out : str or Path, default "biasaudit-report"
        The report folder (created if missing).
    claims : str, optional
        Comma-separated globs of claim ids; None: every claim.
    tier : {"quick", "full"}, default "quick"
        The experiments' size (quick fits a 2-core CPU).
    workers : int, optional
        Local worker processes (default: the usable CPUs; 1 runs inline).
    resume : bool, default False
        Keep complete evidence already in ``out`` and run only the rest.
    figures : bool, default True
        Run the figure jobs.
    progress : bool, default False
        Print the progress lines.

    Returns
    -------
    AuditSummary
        The verdict counts and the paths of the report.

    Raises
    ------
    biasaudit.plumbing.InputError
        A bad option, an unknown pattern, or a folder another live audit holds.

    Examples
    --------
    >>> import tempfile, biasaudit as ba
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     summary = ba.run_audit(folder, claims="sam.depth1.svm_direction", workers=1, figures=False)
    >>> summary.counts
    {'confirmed': 1}
    """
    from biasaudit.audit.runner import AuditConfig, execute_audit

    config = AuditConfig(tier=tier, out=Path(out), claims=claims, workers=workers, resume=resume, figures=figures)
    execute_audit(config, quiet=not progress)
    out = Path(out)
    counts: dict[str, int] = {}
    for line in (out / "evidence.jsonl").read_text().splitlines():
        verdict = json.loads(line).get("verdict")
        counts[verdict] = counts.get(verdict, 0) + 1
    return AuditSummary(counts=counts, out=str(out), index_html=str(out / "index.html"),
                        report_md=str(out / "report.md"), evidence=str(out / "evidence.jsonl"))

