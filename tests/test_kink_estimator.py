"""One estimator per quantity: the kink of S_final(η) that the claims, the figures and ``sweep eos`` show is
one function's value (numerics.eos_sweep.measured_kink), so one setting never shows three kinks."""

import pytest

from biasaudit.figures.eos import EOS_W0, EOS_X, EOS_Y
from biasaudit.numerics import eos_sweep
from biasaudit.registry import get_claim
from biasaudit.theory.eos_flow import eos_regimes


@pytest.fixture(scope="module")
def kink():
    value = eos_sweep.measured_kink(EOS_X, EOS_Y, EOS_W0, eos_regimes(EOS_X, EOS_Y, EOS_W0).eta_c)
    assert type(value) is float
    return value


def test_the_claims_and_the_sweep_show_the_same_kink(kink):
    params = {"x": EOS_X, "y": EOS_Y, "w0": EOS_W0}
    for cid in ("eos.gd.kink_location", "eos.gd.kink_fixed_point"):
        claim = get_claim(cid)
        observed = claim.evaluate(params, claim.predict(params)).observed
        assert observed["kink"] == kink and observed["by_resolution"]["1201"] == kink, cid
    # a coarse sweep of its own still reports the claims' kink, not a refit of its own points
    assert eos_sweep.sweep_eos(EOS_X, EOS_Y, EOS_W0, 0.1, 0.5, n=40).kink == kink


def test_the_figures_mark_the_estimators_value(monkeypatch, tmp_path):
    """Negative control: a planted estimator value is what the figure's label shows."""
    from biasaudit.figures import eos as figures

    planted = 0.2471828
    monkeypatch.setattr(eos_sweep, "measured_kink", lambda *a, **k: planted)
    seen = []
    monkeypatch.setattr(figures, "_save", lambda fig, path: seen.append(
        [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]) or path)
    figures.eos_sharpness(tmp_path, "quick")
    assert any("measured kink η = 0.24718" in label for label in seen[0])


def test_the_kink_is_fitted_to_the_converged_runs_only(monkeypatch):
    """Runs that did not converge (here every 25th, marked unsettled with a far-off final iterate) are left out of
    every resolution's fit: the estimate equals the fit to the converged runs alone."""
    import dataclasses

    import numpy as np

    from biasaudit.numerics import eos_gd

    spoiled = {}

    def sweep_with_unconverged_runs(*args, **kwargs):
        s = eos_gd.gd_sweep(*args, **kwargs)
        bad = np.arange(s.eta.size) % 25 == 0
        outcome, w = s.outcome.copy(), s.w.copy()
        outcome[bad] = eos_gd.OUTCOMES.index("unsettled")
        w[bad] *= 1.5
        spoiled["sweep"] = dataclasses.replace(s, outcome=outcome, w=w)
        return spoiled["sweep"]

    monkeypatch.setattr(eos_sweep, "gd_sweep", sweep_with_unconverged_runs)
    eta_c = eos_regimes(EOS_X, EOS_Y, EOS_W0).eta_c
    kinks = eos_sweep.kink_estimates(EOS_X, EOS_Y, EOS_W0, eta_c)
    s = spoiled["sweep"]
    for label, view in eos_sweep.KINK_RESOLUTIONS.items():
        ok = s.converged[view]
        assert not ok.all()
        assert kinks[label] == eos_sweep.kink_location(s.eta[view][ok], s.lambda_max[view][ok])
