r"""Learning-rate sweeps of GD on the shared-weight model: the kink, the refined predictor, the EoS gap.

Measured quantities (all from :func:`biasaudit.numerics.eos_gd.gd_sweep`, independent of the theory's closed forms):

* **Kink** of :math:`S_{final}(\eta)` (:func:`kink_location`): on a fine grid of converged runs (the one
  estimator, :func:`measured_kink`: 301 step sizes in η_c(1 ± 10 %); every claim, figure and sweep that
  shows a kink reads it), the breakpoint
  of the best least-squares fit by a line :math:`a + b\eta` left of it and :math:`k/\eta` right of it (the
  flow-aligned branch and the EoS branch :math:`S \approx 2(1-\text{gap})/\eta`).
* **Refined predictor** (:func:`flow_fixed_point`): fit the flow-aligned branch
  :math:`S_{GD}(\eta)\approx A - C\eta` on runs with η ∈ [0.5, 0.95]·η_c only, and solve
  :math:`\eta = 2/S_{GD}(\eta)` — the step at which the flow-aligned sharpness meets the stability limit.
* **EoS tracking gap** :math:`1 - \eta S/2` of converged runs above the kink (:func:`tracking_gap`).
* **Flow-aligned deviation** :math:`S_{GF} - S_{GD}(\eta) \approx C\eta` (:func:`flow_aligned_deviation`).
* **Norm along one EoS run** (:func:`norm_path`): raw ‖β_k‖₁, its 2-step average, and the ‖β‖₁ of the
  gradient-flow projection of each iterate (the flow's limit started from w_k).
* **Pareto excess** :math:`\|\beta\|_1/N^*(S(\beta)) - 1` of converged endpoints (:func:`pareto_excess`).

Symbols: ``eta`` step, ``S`` final sharpness (λ_max), ``eta_c`` = 2/s_GF.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from biasaudit.numerics.eos_gd import GdSweep, gd_path, gd_sweep
from biasaudit.plumbing import InputError, finite_scalar, positive_int, positive_scalar
from biasaudit.theory.eos_flow import EosRegimes, eos_regimes, gf_tau
from biasaudit.theory.eos_minimizers import pareto_front

__all__ = ["EosSweep", "sweep_eos", "kink_location", "measured_kink", "kink_estimates", "KINK_POINTS", "KINK_WINDOW", "KINK_RESOLUTIONS", "flow_fixed_point", "tracking_gap", "flow_aligned_deviation",
           "norm_path", "pareto_excess", "eta_grid"]


def eta_grid(eta_min, eta_max, n) -> np.ndarray:
    """``n`` evenly spaced step sizes in [eta_min, eta_max] (validated: 0 < eta_min < eta_max).

    Parameters
    ----------
    eta_min : float
        The smallest step size, > 0.
    eta_max : float
        The largest, > ``eta_min``.
    n : int
        The number of step sizes, >= 2.

    Returns
    -------
    numpy.ndarray
        Shape (n,).

    Raises
    ------
    InputError
        If ``eta_min`` <= 0, ``eta_max`` <= ``eta_min`` or ``n`` < 2.

    Examples
    --------
    >>> eta_grid(0.1, 0.2, 3).tolist()
    [0.1, 0.15000000000000002, 0.2]
    """
    lo = finite_scalar("eta_min", eta_min)
    hi = finite_scalar("eta_max", eta_max)
    if lo <= 0:
        raise InputError("eta_min", "must be > 0", eta_min)
    if hi <= lo:
        raise InputError("eta_max", f"must be > eta_min ({lo:g})", eta_max)
    n = positive_int("n", n, minimum=2)
    return np.linspace(lo, hi, n)


def kink_location(eta: np.ndarray, S: np.ndarray) -> float:
    r"""Breakpoint of the best fit line-then-hyperbola to S(eta) (needs >= 8 points, sorted by eta).

    Each split k (3 points at least on either side) fits a line :math:`a + b\eta` left of it and :math:`c/\eta` right
    of it by least squares; the split with the smallest summed squared residual wins.

    Parameters
    ----------
    eta : array_like
        The step sizes, ascending, at least 8.
    S : array_like
        The final sharpness at each.

    Returns
    -------
    float
        The first step size of the hyperbola's side.

    Raises
    ------
    InputError
        If fewer than 8 points are given.

    Examples
    --------
    >>> import numpy as np
    >>> eta = np.linspace(0.5, 2.0, 16)
    >>> kink_location(eta, np.where(eta < 1.0, 1.6 + 0.4 * eta, 2 / eta))
    1.0
    """
    eta, S = np.asarray(eta, float), np.asarray(S, float)
    if eta.size < 8:
        raise InputError("eta", "needs at least 8 converged runs to locate a kink", eta.size)
    best, best_k = np.inf, -1
    for k in range(3, eta.size - 3):
        A = np.column_stack([np.ones(k), eta[:k]])
        coef = np.linalg.lstsq(A, S[:k], rcond=None)[0]
        sse = float(np.sum((A @ coef - S[:k]) ** 2))
        u = 1.0 / eta[k:]
        kk = float(u @ S[k:]) / float(u @ u)
        sse += float(np.sum((kk * u - S[k:]) ** 2))
        if sse < best:
            best, best_k = sse, k
    return float(eta[best_k])


KINK_POINTS = 1201  # step sizes of the kink's own grid: spacing 0.017 % of eta_c
KINK_WINDOW = 0.1  # the grid spans eta_c (1 ± KINK_WINDOW)
KINK_MIN_CONVERGED = 0.9  # fewer converged runs on the grid: no kink
KINK_MAX_STEPS = 100_000
# The kink read at coarser resolutions of the same sweep (views of its KINK_POINTS step sizes), and with the window
# halved: an estimate whose verdict moves between them is not resolved.
KINK_RESOLUTIONS = {"301": slice(None, None, 4), "601": slice(None, None, 2), "1201": slice(None),
                    "601 in ±5%": slice(300, 901)}
KINK_FINEST = "1201"


def kink_estimates(x, y, w0, eta_c, *, loss_factor=0.5) -> dict | None:
    r"""The kink of :math:`S_{final}(\eta)` (:func:`kink_location`) at each resolution of :data:`KINK_RESOLUTIONS`,
    from one GD sweep of :data:`KINK_POINTS` step sizes in :math:`\eta_c(1 \pm` :data:`KINK_WINDOW`:math:`)`;
    None when fewer than 90 % of the runs converge.

    Parameters
    ----------
    x, y, w0 : the toy model's data point (all > 0), label (> 0) and initial weights (non-zero).
    eta_c : float
        The predicted transition 2/s_GF, the centre of the grid.
    loss_factor : float
        c in L = c r².

    Returns
    -------
    dict or None
        ``{resolution label: kink}``, plain Python floats; :data:`KINK_FINEST` is :func:`measured_kink`.
    """
    eta_c = positive_scalar("eta_c", eta_c)
    eta = np.linspace((1 - KINK_WINDOW) * eta_c, (1 + KINK_WINDOW) * eta_c, KINK_POINTS)
    s = gd_sweep(x, y, w0, eta, loss_factor=loss_factor, max_steps=KINK_MAX_STEPS)
    if s.converged.sum() < KINK_MIN_CONVERGED * KINK_POINTS:
        return None
    out = {}
    for label, view in KINK_RESOLUTIONS.items():
        ok = s.converged[view]
        out[label] = kink_location(eta[view][ok], s.lambda_max[view][ok])
    return out


def measured_kink(x, y, w0, eta_c, *, loss_factor=0.5) -> float | None:
    r"""The kink of :math:`S_{final}(\eta)` at the finest resolution of :func:`kink_estimates` (:data:`KINK_POINTS`
    step sizes in :math:`\eta_c(1 \pm` :data:`KINK_WINDOW`:math:`)`), or None when fewer than 90 % of them
    converge.

    The one estimator of the kink: the claims ``eos.gd.kink_location`` and ``eos.gd.kink_fixed_point``, the
    toy-model outcome claim, the figures and ``biasaudit sweep eos`` all show this value (a figure drawn on a
    coarser grid still marks the claim's kink, not a refit of its own points).

    Parameters
    ----------
    x, y, w0 : the toy model's data point (all > 0), label (> 0) and initial weights (non-zero).
    eta_c : float
        The predicted transition 2/s_GF, the centre of the grid.
    loss_factor : float
        c in L = c r².

    Returns
    -------
    float or None
        The step size at the breakpoint, a plain Python float.
    """
    estimates = kink_estimates(x, y, w0, eta_c, loss_factor=loss_factor)
    return None if estimates is None else estimates[KINK_FINEST]


def flow_fixed_point(x, y, w0, eta_c, *, loss_factor=0.5, n=20, max_steps=100_000) -> float:
    r"""Solve :math:`\eta = 2/S_{GD}(\eta)` with :math:`S_{GD}` the line fitted to GD runs at η in
    [0.5, 0.95] η_c (:func:`~biasaudit.numerics.eos_gd.gd_sweep`, numba).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.
    eta_c : float
        The predicted η_c.
    loss_factor : float
        c in :math:`L = c r^2` (default 1/2).
    n : int
        The number of GD runs (default 20).
    max_steps : int
        The step limit of each run.

    Returns
    -------
    float
        The smallest positive root; NaN with fewer than 3 converged runs or no positive root.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.numerics.eos_gd.gd_sweep`.
    """
    eta = np.linspace(0.5 * eta_c, 0.95 * eta_c, n)
    s = gd_sweep(x, y, w0, eta, loss_factor=loss_factor, max_steps=max_steps)
    ok = s.converged
    if ok.sum() < 3:
        return float("nan")
    slope, intercept = np.polyfit(eta[ok], s.lambda_max[ok], 1)
    roots = np.roots([slope, intercept, -2.0])  # eta (A + slope eta) = 2
    roots = roots[np.isreal(roots)].real
    roots = roots[roots > 0]
    return float(roots.min()) if roots.size else float("nan")


def tracking_gap(s: GdSweep, eta_from: float, eta_to: float | None = None) -> np.ndarray:
    r""":math:`1 - \eta\lambda_{max}/2` of the converged runs with eta_from < η <= eta_to.

    Parameters
    ----------
    s : GdSweep
        A GD sweep.
    eta_from : float
        The lower end (excluded).
    eta_to : float, optional
        The upper end (included; default none).

    Returns
    -------
    numpy.ndarray
        One gap per run in the range, in the order of ``s.eta``.

    Examples
    --------
    >>> from biasaudit.numerics.eos_gd import gd_sweep_numpy
    >>> sweep = gd_sweep_numpy([1, 2], 1, [0.1, 0.1], [0.1, 0.2, 0.3], max_steps=5000)
    >>> tracking_gap(sweep, 0.15).round(4).tolist()
    [0.2343, 0.012]
    """
    m = s.converged & (s.eta > eta_from)
    if eta_to is not None:
        m &= s.eta <= eta_to
    return 1.0 - s.eta[m] * s.lambda_max[m] / 2.0


def flow_aligned_deviation(x, y, w0, eta, s_gf, *, loss_factor=0.5, max_steps=100_000) -> np.ndarray:
    r""":math:`S_{GF} - S_{GD}(\eta)` for each η (NaN where GD did not converge;
    :func:`~biasaudit.numerics.eos_gd.gd_sweep`, numba).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.
    eta : array_like
        The step sizes.
    s_gf : float
        :math:`s_{GF}`.
    loss_factor : float
        c in :math:`L = c r^2` (default 1/2).
    max_steps : int
        The step limit of each run.

    Returns
    -------
    numpy.ndarray
        One value per η.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.numerics.eos_gd.gd_sweep`.
    """
    s = gd_sweep(x, y, w0, eta, loss_factor=loss_factor, max_steps=max_steps)
    return np.where(s.converged, s_gf - s.lambda_max, np.nan)


def norm_path(x, y, w0, eta, steps, *, loss_factor=0.5) -> dict:
    r""":math:`\|\beta_k\|_1` along one run: raw, 2-step average, and of the gradient-flow projection of each iterate
    (:func:`~biasaudit.numerics.eos_gd.gd_path`, numba).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.
    eta : float
        The step size.
    steps : int
        The number of steps.
    loss_factor : float
        c in :math:`L = c r^2` (default 1/2).

    Returns
    -------
    dict
        ``raw`` (steps + 1,), ``avg2`` (steps,), ``projected`` (the ℓ1 norm of the gradient flow's limit from each
        iterate) and ``r`` (the residual at each iterate).

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.numerics.eos_gd.gd_path`, or the run diverges.
    """
    w = gd_path(x, y, w0, eta, steps, loss_factor=loss_factor)
    if not np.all(np.isfinite(w)):
        raise InputError("eta", "gives a diverging run; the norm path needs a bounded one", eta)
    beta = w * w
    xv = np.asarray(x, float)
    raw = beta.sum(axis=1)
    proj = np.array([np.sum(b * np.exp(-4 * xv * gf_tau(xv, float(y), b))) for b in beta])
    return {"raw": raw, "avg2": 0.5 * (raw[1:] + raw[:-1]), "projected": proj,
            "r": beta @ xv - float(y)}


def pareto_excess(s: GdSweep) -> np.ndarray:
    r""":math:`\|\beta\|_1/N^*(S(\beta)) - 1` for converged endpoints (S the on-manifold sharpness of the endpoint).

    Parameters
    ----------
    s : GdSweep
        A GD sweep.

    Returns
    -------
    numpy.ndarray
        One value per converged run (0 on the Pareto front).

    Examples
    --------
    >>> from biasaudit.numerics.eos_gd import gd_sweep_numpy
    >>> sweep = gd_sweep_numpy([1, 2], 1, [0.1, 0.1], [0.1, 0.2, 0.3], max_steps=5000)
    >>> bool(np.all(np.abs(pareto_excess(sweep)) < 1e-9))   # at d = 2 every point of P is on the front
    True
    """
    m = s.converged
    beta = s.beta[m]
    S = 8 * s.loss_factor * beta @ (s.x**2)
    return beta.sum(axis=1) / pareto_front(s.x, s.y, S, s.loss_factor) - 1.0


@dataclass(frozen=True)
class EosSweep:
    r"""A learning-rate sweep with its theory predictions and the measured kink.

    Parameters
    ----------
    regimes : EosRegimes
        The theory at the sweep's (x, y, w0).
    gd : GdSweep
        GD's final state at each η.
    kink : float or None
        :func:`measured_kink`: None when fewer than 90 % of its runs converge.
    gap_median : float or None
        The median :math:`1 - \eta S/2` of the converged runs above 1.05 η_c (None without any).
    """

    regimes: EosRegimes
    gd: GdSweep
    kink: float | None  # measured_kink: None when fewer than 90 % of its runs converge
    gap_median: float | None  # median 1 - eta S/2 of converged runs above 1.05 eta_c

    def to_json(self) -> dict:
        """The sweep as JSON: the regimes, then per η the outcome, steps, final sharpness, eigenvalues, norms and
        residual (null for a diverged run, the reason in ``null_reasons``), the outcome counts and the kink.

        Returns
        -------
        dict
            JSON-ready (plain Python numbers and lists).
        """
        from biasaudit.plumbing import jsonable

        s = self.gd
        diverged = np.array([name == "diverged" for name in s.outcome_names()])

        def final(values):  # a diverged run's final state means nothing: null, with the reason below
            return [None if bad else v for v, bad in zip(np.asarray(values, float).tolist(), diverged)]

        reasons = {}
        if diverged.any():
            reasons["sharpness, lambda_*, beta_*, w_*, residual"] = (
                f"null for the {int(diverged.sum())} diverged runs: the iterate left |w| <= {s.bound:g} before "
                "converging, so its last state is not a quantity of the sweep")
        if self.kink is None:
            reasons["kink"] = (f"fewer than 90 % of the kink's runs ({KINK_POINTS} step sizes in eta_c (1 +- 10 %)) "
                               "converged: no kink to fit")
        if self.gap_median is None:
            reasons["gap_median_above_1.05_eta_c"] = "no converged run above 1.05 eta_c"
        return jsonable({
            "regimes": self.regimes.to_json(), "eta": s.eta, "outcome": s.outcome_names(), "steps": s.steps,
            "sharpness": final(s.sharpness), "lambda_max": final(s.lambda_max),
            "lambda_min": final(s.eigenvalues[:, 0]), "beta_l1": final(s.beta_l1), "beta_l2": final(s.beta_l2),
            "w_l1": final(s.w_l1), "w_l2": final(s.w_l2), "residual": final(s.r),
            "counts": s.counts(), "kink": self.kink, "gap_median_above_1.05_eta_c": self.gap_median,
            "tol": s.tol, "bound": s.bound, "max_steps": s.max_steps, "null_reasons": reasons,
        })


def sweep_eos(x, y, w0, eta_min, eta_max, n=400, *, loss_factor=0.5, max_steps=100_000) -> EosSweep:
    """Run GD at ``n`` step sizes in [eta_min, eta_max] and summarize (kink, gap) against the theory
    (:func:`~biasaudit.numerics.eos_gd.gd_sweep`, numba).

    Parameters
    ----------
    x : array_like
        The data point, shape (d,), entries > 0.
    y : float
        The label, > 0.
    w0 : array_like
        The initial weights :math:`w_0`, shape (d,), non-zero entries.
    eta_min, eta_max : float
        The range of step sizes, 0 < eta_min < eta_max.
    n : int
        The number of step sizes (default 400).
    loss_factor : float
        c in :math:`L = c r^2` (default 1/2).
    max_steps : int
        The step limit of each run.

    Returns
    -------
    EosSweep
        The regimes, the sweep, the measured kink and the tracking gap.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`eta_grid`, :func:`~biasaudit.theory.eos_flow.eos_regimes` or
        :func:`~biasaudit.numerics.eos_gd.gd_sweep`.
    """
    eta = eta_grid(eta_min, eta_max, n)
    reg = eos_regimes(x, y, w0, loss_factor=loss_factor)
    positive_scalar("max_steps", max_steps)
    s = gd_sweep(x, y, w0, eta, loss_factor=loss_factor, max_steps=max_steps)
    kink = measured_kink(x, y, w0, reg.eta_c, loss_factor=loss_factor)  # its own grid: the claims' value
    gap = tracking_gap(s, 1.05 * reg.eta_c)
    return EosSweep(reg, s, kink, float(np.median(gap)) if gap.size else None)
