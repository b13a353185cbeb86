r"""Implementation cross-checks: a numba kernel against the plain reference written beside it.

Such a claim states no theorem of a paper: it vouches that the fast code a theorem's claims run computes what its
readable reference computes, so that a verdict read from the kernel is the reference's verdict. Its id says so
(``…matches_reference``; the heatmap methods' agreement ``…methods_agree``). The prediction is the kernel's output
(flattened), the observation the reference's, and the error the largest relative gap

.. math:: e = \max_i \frac{|k_i - r_i|}{\max(|r_i|, f)}

with ``f`` a floor at the scale of the compared quantity (so entries near 0 are compared absolutely). Controls:
the kernel's output moved by ±1 % (the power rule) and by ±20 times the tolerance (the tolerance guards the scale
of the measured gap, not a whole percent).
"""

from __future__ import annotations

import sys

import numpy as np
import sympy as sp

from biasaudit.ledger import AT_10X_PRECISION, Claim, Observation, Tolerance, shifted_prediction

__all__ = ["CONTROL_MULTIPLE", "KERNEL", "REFERENCE", "SOURCE", "crosscheck_claim", "precision_tolerance",
           "relative_gap"]

KERNEL, REFERENCE = sp.Symbol("k_numba"), sp.Symbol("r_reference")
SOURCE = "implementation cross-check (a numba kernel against its plain reference)"  # names: no_closed_form
CONTROL_MULTIPLE = 20.0  # the tight controls move the kernel's output by this many tolerances


def relative_gap(kernel, reference, floor: float) -> float:
    """max_i |k_i - r_i| / max(|r_i|, floor) over matching arrays (equal entries, infinities and NaN on both sides
    included, agree); inf when the shapes differ or one side alone is NaN."""
    k, r = np.asarray(kernel, dtype=float), np.asarray(reference, dtype=float)
    if k.shape != r.shape:
        return float("inf")
    if k.size == 0:
        return 0.0
    with np.errstate(invalid="ignore"):
        # equal infinities (ln S = -inf after a collapse) agree exactly; so does NaN on both sides (a loss that
        # overflows at a diverging run's last state)
        same = (k == r) | (np.isnan(k) & np.isnan(r))
        gap = np.where(same, 0.0, np.abs(k - r) / np.maximum(np.abs(r), floor))
    return float(np.max(np.where(np.isnan(gap), np.inf, gap)))


def crosscheck_claim(*, id: str, paper: str, title: str, kernel: str, reference: str, run_kernel, run_reference,
                     floor: float, tolerance: Tolerance, domain, hypotheses: tuple = (), samples=None,
                     notes: str = "", compare=None, slack_reason: str = "") -> Claim:
    """A claim that ``run_kernel(params)`` (numba) matches ``run_reference(params)`` (plain numpy/scipy), both
    returning a 1-d array (or anything :func:`relative_gap` reads), to ``tolerance`` in the relative gap with
    ``floor``; ``hypotheses`` (sympy relations in the theory's symbols) bound the sampled domain. ``compare(kernel, reference) -> (error, detail)`` replaces the gap where the outputs mix exact
    decisions (indices, statuses) with numbers; ``slack_reason`` says why the tolerance may exceed 100 times the
    profile's worst gap."""
    def predict(params):
        return tuple(np.ravel(np.asarray(run_kernel(params), dtype=float)))

    seen: dict = {}  # the reference's output by case: the controls evaluate each case again with a moved prediction

    def reference_of(params):
        key = repr(sorted(params.items()))
        if key not in seen:
            if len(seen) >= 64:
                seen.clear()
            seen[key] = np.ravel(np.asarray(run_reference(params), dtype=float))
        return seen[key]

    def evaluate(params, predicted):
        ref = reference_of(params)
        if compare is not None:
            error, detail = compare(np.asarray(predicted, dtype=float), ref)
        else:
            error = relative_gap(predicted, ref, floor)
            detail = f"{ref.size} values: max |kernel - reference| / max(|reference|, {floor:g}) = {error:.3g}"
        return Observation(float(np.max(np.abs(ref))) if ref.size else 0.0, error, f"{reference} vs {kernel}: {detail}")

    tight = CONTROL_MULTIPLE * tolerance.value
    controls = shifted_prediction(0.01) + shifted_prediction(
        tight, reason=f"the kernel's output moved by {CONTROL_MULTIPLE:g} tolerances: the reference must see a gap "
                      f"at the tolerance's scale")
    caller = sys._getframe(1)  # the claim is defined where this is called (its folder names its id)
    return Claim(
        id=id, paper=paper, source=SOURCE,
        title=title, hypotheses=tuple(hypotheses), statement=sp.Eq(KERNEL, REFERENCE),
        no_closed_form=f"an implementation cross-check: the prediction is the output of the numba kernel {kernel}, "
                       f"the observation that of the plain reference {reference}",
        predict=predict, evaluate=evaluate, tolerance=tolerance, domain=domain, negative_control=controls,
        samples=samples or {"ci": 4, "thorough": 32}, notes=notes, slack_reason=slack_reason,
        defined_in=caller.f_globals.get("__name__", ""), line=caller.f_lineno,
    )


def precision_tolerance(name: str, value: float, measured: str) -> Tolerance:
    """A cross-check's tolerance: the power of ten at least 10x the worst gap measured (``measured`` says it)."""
    return Tolerance(name, value, f"the same arithmetic in another order (numba vs numpy): {measured}; the "
                                  "tolerance is the power of ten at least 10x the worst gap measured over the "
                                  "thorough profile", at_10x=AT_10X_PRECISION)
