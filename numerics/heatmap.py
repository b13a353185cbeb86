r"""The dominant-index heatmap j†(time, α) of balanced l2-SAM at depth 2, with GD as the baseline.

For each initial scale α (uniform α·1, or one row per coordinate) the balanced depth-2 trajectory is
followed and j† = argmax_j β_j = argmax_j w_j is recorded on a time grid, together with the loss
ℓ(⟨β, μ⟩) = ln(1 + e^{−⟨β, μ⟩}) (the plateau) and ln S. Time is either

* ``time="tau"``: the rescaled time τ of the flow w_j' = μ_j w_j (1 − cμ_j/S), or
* ``time="iterations"``: iterations k of discrete logistic l2-SAM with step η. One step is exactly
  explicit Euler on the rescaled field with step h_k = η σ(−z̃_k), z̃ the perturbed margin, so
  dτ/dk ≈ η e^{−margin} late in training; the τ reached at each recorded iteration is returned too.

This module is the front: :class:`Heatmap` and :func:`dominant_index_heatmap`, which validates and dispatches
to one module per method:

=====================  ==========  ===================================================  =========================
``method``             ``time``    what (module)                                        keywords that apply
=====================  ==========  ===================================================  =========================
``"reduction"``        tau         the exact log-linear reduction: one scalar ODE for   ``rtol``, ``atol``,
                                   A(τ) per α, adaptive Dormand–Prince 5(4), then       ``normalization``
                                   ln w_j = ln α_j + μ_j τ − cμ_j² A
                                   (:mod:`~biasaudit.numerics.heatmap_reduction`)
``"reduction-fixed"``  tau         the same reduction with fixed-step RK4               ``steps_per_output``,
                                                                                        ``normalization``
``"rk4"``              tau         fixed-step RK4 on the full d-dimensional flow, a     ``steps_per_output``,
                                   batch of α at once                                   ``normalization``
                                   (:mod:`~biasaudit.numerics.heatmap_rk4`)
``"gd"``               tau         gradient flow (ρ = 0) in closed form,                none
                                   ln w_j = ln α_j + μ_j τ
                                   (:mod:`~biasaudit.numerics.heatmap_gd`)
``"sam"``              iterations  discrete logistic l2-SAM                             ``eta``, ``normalization``
                                   (:mod:`~biasaudit.numerics.heatmap_discrete`)
``"gd"``               iterations  discrete GD (the same map with c = 0)                ``eta``
=====================  ==========  ===================================================  =========================

A keyword that does not apply to the chosen method and time is refused (``InputError`` naming it), never
ignored. The bench's other contenders for the τ heatmap (scipy's ``solve_ivp`` per α, the plain-numpy RK4)
live in :mod:`biasaudit.benchmarks.heatmap_baselines` and :func:`biasaudit.numerics.heatmap_rk4.rk4_heatmap_reference`.

Overflow: e^{μτ} overflows float64 near τ ≈ 700/μ_d, so the full-flow kernels carry w = e^m v with a
per-α log scale m, renormalising v by a power of two whenever max v > 2^{400} (exact, no rounding); the
reduction works in log space.

Collapse: once the certificate S ≤ cμ₁ fires, β → 0 in finite τ: later entries get j† = 0, the loss its
limit ln 2, ln S = −inf and ``status`` −1. Status +1: the escape certificate max_j w_j > c fired; 0:
neither by the end of the grid (undecided).

Symbols
=======
=========  =====================================================================
``mu``     μ (data point, increasing)
``alpha``  α, balanced initialisation
``c``      ρ/√2 joint, ρ per layer
``eta``    η, step of discrete SAM
``m``      log scale of the state, w = e^m v
``kappa``  κ = c e^{−m}, the SAM radius seen by v
=========  =====================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from biasaudit.numerics.heatmap_discrete import discrete_alpha_collapse, discrete_heatmap
from biasaudit.numerics.heatmap_gd import gd_flow_heatmap
from biasaudit.numerics.heatmap_reduction import reduction_heatmap
from biasaudit.numerics.heatmap_rk4 import rk4_heatmap
from biasaudit.numerics.l2_reduction import DEFAULT_STEP_MU_D
from biasaudit.plumbing import (InputError, as_finite_vector, choice, matching_length, positive_increasing,
                                positive_int, positive_scalar)

__all__ = ["Heatmap", "dominant_index_heatmap", "discrete_alpha_collapse", "METHODS", "TIMES", "LN2",
           "APPLIES", "DEFAULT_ETA"]

TIMES = ("tau", "iterations")
METHODS = {"tau": ("reduction", "reduction-fixed", "rk4", "gd"), "iterations": ("sam", "gd")}
# the keywords each (time, method) reads; any other one given is an error
APPLIES = {
    ("tau", "reduction"): ("rtol", "atol", "normalization"),
    ("tau", "reduction-fixed"): ("steps_per_output", "normalization"),
    ("tau", "rk4"): ("steps_per_output", "normalization"),
    ("tau", "gd"): (),
    ("iterations", "sam"): ("eta", "normalization"),
    ("iterations", "gd"): ("eta",),
}
DEFAULT_ETA = 0.01
DEFAULT_RTOL, DEFAULT_ATOL = 1e-12, 1e-14  # adaptive reduction: max |ln S| error ≈ 1e−9, that of the fixed step
LN2 = math.log(2.0)


@dataclass(frozen=True)
class Heatmap:
    r"""j†(α, time) (1-based; 0 = collapsed), the loss and ln S on the same grid, and per-α status.

    Parameters
    ----------
    alphas : numpy.ndarray
        The initial weights, (n_alpha,) uniform or (n_alpha, d) per coordinate.
    times : numpy.ndarray
        (n_t,) τ values, or iteration counts.
    time : str
        ``"tau"`` or ``"iterations"``.
    j_dagger : numpy.ndarray
        (n_alpha, n_t) int: 1-based :math:`\arg\max_j\beta_j`, 0 once collapsed.
    loss : numpy.ndarray
        (n_alpha, n_t) the logistic loss.
    log_S : numpy.ndarray
        (n_alpha, n_t) ln S; −inf after collapse.
    status : numpy.ndarray
        (n_alpha,) −1 collapse, +1 escape, 0 undecided at the end.
    tau : numpy.ndarray or None
        (n_alpha, n_t) τ reached at each iteration (``time="iterations"``).
    method : str
        One of :data:`METHODS` for ``time``.
    c : float
        :math:`c_L`.
    mu : numpy.ndarray
        The data point, (d,).
    steps : numpy.ndarray or None
        (n_alpha, 2) accepted/rejected steps (``method="reduction"`` only).
    """

    alphas: np.ndarray          # (n_alpha,) or (n_alpha, d)
    times: np.ndarray           # (n_t,) τ values, or iteration counts
    time: str                   # "tau" or "iterations"
    j_dagger: np.ndarray        # (n_alpha, n_t) int
    loss: np.ndarray            # (n_alpha, n_t)
    log_S: np.ndarray           # (n_alpha, n_t); −inf after collapse
    status: np.ndarray          # (n_alpha,) −1 collapse, +1 escape, 0 undecided at the end
    tau: np.ndarray | None      # (n_alpha, n_t) τ reached at each iteration (time="iterations")
    method: str
    c: float
    mu: np.ndarray
    steps: np.ndarray | None = None  # (n_alpha, 2) accepted/rejected steps (method="reduction" only)

    def sequences(self) -> list[list[int]]:
        """The j† sequence of each α row, runs collapsed, ignoring the tie at τ = 0.

        Returns
        -------
        list of list of int
            One sequence per row of ``alphas``.
        """
        out = []
        for row in self.j_dagger:
            row = row[1:] if self.times[0] == 0 else row
            seq = [int(row[0])]
            for x in row[1:]:
                if x != seq[-1]:
                    seq.append(int(x))
            out.append(seq)
        return out


# ----------------------------------------------------------------------------------------------------------
# the front: validate, refuse keywords that do not apply, dispatch
# ----------------------------------------------------------------------------------------------------------
def _check_grid(times, time):
    times = as_finite_vector("times", times)
    if times[0] != 0 or np.any(np.diff(times) <= 0):
        raise InputError("times", "must start at 0 and be strictly increasing", times)
    spacing = np.diff(times)
    if not np.allclose(spacing, spacing[0], rtol=1e-9, atol=0):
        raise InputError("times", "must be uniformly spaced (e.g. np.linspace(0, T, n))", times)
    if time == "iterations" and not np.all(times == np.round(times)):
        raise InputError("times", "must be whole iteration counts for time='iterations'", times)
    return times


def _refuse_inapplicable(time: str, method: str, given: dict) -> None:
    applies = APPLIES[time, method]
    for name, value in given.items():
        if value is not None and name not in applies:
            reads = ", ".join(applies) if applies else "none of them"
            raise InputError(name, f"does not apply to method={method!r} with time={time!r} (it reads: {reads})",
                             value)


def dominant_index_heatmap(mu, rho, alphas, times, *, method: str | None = None, time: str = "tau",
                           eta: float | None = None, steps_per_output: int | None = None,
                           normalization: str | None = None, rtol: float | None = None,
                           atol: float | None = None) -> Heatmap:
    """The j†(α, time) heatmap with loss curves, for uniform (1-d ``alphas``) or per-coordinate (2-d) α.

    ``times``: a uniform grid starting at 0 (τ values, or iteration counts for ``time="iterations"``).
    ``method``: see the module docstring (default ``"reduction"`` for τ, ``"sam"`` for iterations). The
    keywords, each refused (``InputError``) where the method/time does not read it:

    * ``steps_per_output``: RK4 steps between outputs (``rk4``, ``reduction-fixed``; default dt ≤ 2e−3/μ_d);
    * ``rtol``/``atol``: the adaptive ``reduction`` (default 1e−12/1e−14: max ``|ln S|`` error ≈ 1e−9, that of
      the default fixed step);
    * ``eta``: the step of the discrete iterations (default 0.01);
    * ``normalization``: ``"joint"`` (c = ρ/√2, default) or ``"layer"`` (c = ρ), every method with c > 0.

    Parameters
    ----------
    mu : array_like
        The data point μ, strictly positive and strictly increasing.
    rho : float
        The SAM radius ρ.
    alphas : array_like
        The initial weights: (n_alpha,) uniform or (n_alpha, d) per coordinate, > 0.
    times : array_like
        The output grid.
    method : str, optional
        One of :data:`METHODS` for ``time``.
    time : str
        ``"tau"`` (the default) or ``"iterations"``.
    eta, steps_per_output, normalization, rtol, atol : optional
        As above.

    Returns
    -------
    Heatmap
        j†, loss, ln S and the status on the grid.

    Raises
    ------
    InputError
        If an input breaks its rule, or a keyword is given that the method and time do not read.

    Examples
    --------
    >>> heatmap = dominant_index_heatmap([1.0, 2.0], 0.1, [0.1, 0.5], [0.0, 1.0, 2.0], method="gd")
    >>> heatmap.j_dagger.tolist(), heatmap.sequences()
    ([[1, 2, 2], [1, 2, 2]], [[2], [2]])
    """
    from biasaudit.theory.sam_l2 import c_L

    choice("time", time, TIMES)
    method = ("reduction" if time == "tau" else "sam") if method is None else method
    if method not in METHODS[time]:
        other = next(t for t in TIMES if t != time)
        hint = f" ({method!r} is a method of time={other!r})" if method in METHODS[other] else ""
        raise InputError("method", f"must be one of {', '.join(METHODS[time])} for time={time!r}{hint}", method)
    _refuse_inapplicable(time, method, {"eta": eta, "steps_per_output": steps_per_output,
                                        "normalization": normalization, "rtol": rtol, "atol": atol})
    mu = positive_increasing("mu", mu)
    rho = positive_scalar("rho", rho)
    c = 0.0 if method == "gd" else c_L(rho, 2, "joint" if normalization is None else normalization)
    alphas_in = np.asarray(alphas, dtype=float)
    alphas = as_finite_vector("alphas", alphas_in, ndim=alphas_in.ndim if alphas_in.ndim in (1, 2) else 1)
    if np.any(alphas <= 0):
        raise InputError("alphas", "must be strictly positive", alphas)
    if alphas.ndim == 2:
        matching_length("alphas", alphas, mu.size, "mu")
    batch = np.repeat(alphas[:, None], mu.size, axis=1) if alphas.ndim == 1 else alphas
    batch = np.ascontiguousarray(batch, dtype=float)
    times = _check_grid(times, time)
    n_t = times.size

    if time == "iterations":
        eta = positive_scalar("eta", DEFAULT_ETA if eta is None else eta)
        stride = int(round(times[1] - times[0])) if n_t > 1 else 1
        jd, loss, logS, tau, status = discrete_heatmap(batch, mu, c, eta, stride, n_t)
        return Heatmap(alphas, times, time, jd, loss, logS, status, tau, method, c, mu)
    if method == "gd":
        jd, loss, logS, status = gd_flow_heatmap(batch, mu, times)
        return Heatmap(alphas, times, time, jd, loss, logS, status, None, method, c, mu)
    if method == "reduction":
        jd, loss, logS, status, steps = reduction_heatmap(
            np.log(batch), mu, c, times, adaptive=True,
            rtol=positive_scalar("rtol", DEFAULT_RTOL if rtol is None else rtol),
            atol=positive_scalar("atol", DEFAULT_ATOL if atol is None else atol))
        return Heatmap(alphas, times, time, jd, loss, logS, status, None, method, c, mu, steps)
    spacing = times[1] - times[0] if n_t > 1 else 0.0
    if steps_per_output is None:
        steps_per_output = max(1, int(math.ceil(spacing / (DEFAULT_STEP_MU_D / mu[-1])))) if n_t > 1 else 1
    stride = positive_int("steps_per_output", steps_per_output)
    if method == "rk4":
        dt = spacing / stride if n_t > 1 else 0.0
        jd, loss, logS, status = rk4_heatmap(batch, mu, c, dt, stride, n_t)
    else:  # reduction-fixed
        jd, loss, logS, status, _ = reduction_heatmap(np.log(batch), mu, c, times, adaptive=False, stride=stride)
    return Heatmap(alphas, times, time, jd, loss, logS, status, None, method, c, mu)
