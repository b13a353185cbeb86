"""GD sweep outcome classes: out of steps is "unsettled" unless the orbit oscillates with a stationary envelope;
the sweep summary, the relative convergence tolerance, the bounds on --steps, no raw numpy warnings."""

import json
import warnings

import numpy as np
import pytest

from biasaudit.cli import main
from biasaudit.numerics.eos_gd import (CHAOTIC, CONVERGED, DIVERGED, MAX_STEPS, OUTCOMES, PERIOD2, UNSETTLED,
                                       default_tol, gd_sweep, gd_sweep_numpy)
from biasaudit.numerics.eos_mpmath import gd_run_mpmath
from biasaudit.plumbing import InputError

TOY = dict(x=[1.0, 2.0], y=1.0, w0=[0.1, 0.1])
RED = dict(x=[1.0, 2.0], y=1.0, w0=[1.0, 1.0])  # the red-team sweep: large init, eta in [0.05, 0.5]
RED_ETA = np.linspace(0.05, 0.5, 200)
CHAOTIC_ETA = [0.475, 0.48, 0.485, 0.49, 0.495]  # toy: chaotic at 2e3, 1e5 and 1e6 steps alike
SWEEP = ["sweep", "eos", "--x", "1,2", "--y", "1", "--w0", "1,1", "--eta-min", "0.05", "--eta-max", "0.5"]


def test_codes_are_appended_not_renumbered():
    assert OUTCOMES == ("converged", "period-2", "bounded-chaotic", "diverged", "unsettled")
    assert (CONVERGED, PERIOD2, CHAOTIC, DIVERGED, UNSETTLED) == (0, 1, 2, 3, 4)


def test_running_out_of_steps_while_converging_is_unsettled():
    short = gd_sweep(**RED, eta=RED_ETA, max_steps=2000)
    assert not np.any(short.outcome == CHAOTIC)
    unsettled = short.outcome == UNSETTLED
    assert unsettled.sum() == 11
    assert RED_ETA[unsettled].min() == pytest.approx(0.249, abs=1e-3)
    assert RED_ETA[unsettled].max() == pytest.approx(0.2716, abs=1e-3)
    long = gd_sweep(**RED, eta=RED_ETA, max_steps=100_000)  # more steps decide: 10 converge, 1 period-2
    assert np.sum(long.outcome[unsettled] == CONVERGED) == 10 and np.sum(long.outcome[unsettled] == PERIOD2) == 1
    assert not np.any(long.outcome == UNSETTLED)


@pytest.mark.parametrize("steps", [2000, 100_000])
def test_genuinely_chaotic_runs_stay_chaotic(steps):
    s = gd_sweep(**TOY, eta=CHAOTIC_ETA, max_steps=steps)
    assert np.all(s.outcome == CHAOTIC)


def test_one_step_and_a_barely_moving_run_are_unsettled():
    assert np.all(gd_sweep(**RED, eta=RED_ETA, max_steps=1).outcome == UNSETTLED)
    assert np.all(gd_sweep(**RED, eta=[1e-30, 2e-30], max_steps=2000).outcome == UNSETTLED)
    assert np.all(gd_sweep_numpy(**RED, eta=[1e-30, 2e-30], max_steps=2000).outcome == UNSETTLED)
    # w hits 0 exactly (1 - 2 eta r0 x_1 = 0 at eta = 0.25): r = -y forever, it never oscillates
    assert gd_sweep(**RED, eta=[0.25], max_steps=1000).outcome[0] == UNSETTLED


@pytest.mark.parametrize("steps", [2000, 5000])
def test_numba_numpy_and_mpmath_agree_on_all_five_outcomes(steps):
    eta = [1e-6, 0.1, 0.48, 0.49, 0.5, 0.53, 0.6]
    want = [UNSETTLED, CONVERGED, CHAOTIC, CHAOTIC, UNSETTLED, PERIOD2, DIVERGED]
    a = gd_sweep(**TOY, eta=eta, max_steps=steps)
    b = gd_sweep_numpy(**TOY, eta=eta, max_steps=steps)
    m = [gd_run_mpmath(**TOY, eta=e, max_steps=steps, tol=a.tol).outcome for e in eta]
    assert a.outcome.tolist() == b.outcome.tolist() == m == want


def test_summary_claims_no_boundary_from_unsettled_runs(capsys):
    assert main(SWEEP + ["--n", "200", "--steps", "2000"]) == 0
    out = capsys.readouterr().out
    assert "unsettled: 11" in out and "bounded-chaotic: 0" in out
    assert "GD converges for every eta below" not in out
    assert "11 runs ran out of steps while still settling (unsettled" in out and "raise --steps" in out
    assert main(SWEEP + ["--n", "200", "--steps", "100000"]) == 0
    out = capsys.readouterr().out
    assert "GD converges for every eta below 0.251256 (first non-converged run: period-2)" in out
    assert "ran out of steps" not in out


def test_convergence_tolerance_is_relative_to_y(capsys):
    eps = np.finfo(float).eps
    assert default_tol(1.0) == 1e3 * eps and default_tol(1e-30) == pytest.approx(1e3 * eps * 1e-30, rel=1e-15)
    tiny = ["sweep", "eos", "--x", "1e-30,1e-30", "--y", "1e-30", "--w0", "1e-30,1e-30", "--eta-min", "0.01",
            "--eta-max", "1", "--n", "3", "--steps", "1000", "--json"]
    assert main(tiny) == 0
    out = json.loads(capsys.readouterr().out)
    assert "converged" not in out["outcome"]  # ||beta||_1 = 2e-60 is not a solution (it needs ~1)
    s = gd_sweep([1.0, 2.0], 1e-4, [1e-3, 1e-3], [50.0, 100.0, 500.0])  # y << 1 that does converge
    assert np.all(s.converged) and np.all(np.abs(s.beta @ s.x - 1e-4) < 1e3 * eps * 1e-4)


@pytest.mark.parametrize("steps,rule", [("100000000000000000000000", "steps: must be an integer in [1, 100,000,000]"),
                                        ("1000000000000", "steps: must be an integer in [1, 100,000,000]"),
                                        ("0", "steps: must be an integer >= 1")])
def test_steps_is_bounded(capsys, steps, rule):
    assert main(SWEEP + ["--n", "20", "--steps", steps]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"biasaudit: error: {rule}") and "Traceback" not in err


def test_work_is_bounded(capsys):
    assert main(SWEEP + ["--n", "100000", "--steps", str(MAX_STEPS)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("biasaudit: error: steps: gives n*steps*(d+2)") and "about an hour" in err
    with pytest.raises(InputError, match="max_steps"):
        gd_sweep(**TOY, eta=[0.1], max_steps=MAX_STEPS + 1)
    with pytest.raises(InputError, match="max_steps"):
        gd_sweep_numpy(**TOY, eta=np.linspace(0.1, 0.2, 100_000), max_steps=MAX_STEPS)
    with pytest.raises(InputError, match="max_steps"):
        gd_run_mpmath(**TOY, eta=0.1, max_steps=10**23)


def test_diverged_runs_raise_no_numpy_warnings(capsys):
    huge = ["sweep", "eos", "--x", "1e30,1e30", "--y", "1e30", "--w0", "1e30,1e30", "--eta-min", "1e-30",
            "--eta-max", "1e30", "--n", "5"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(huge) == 0
        assert "diverged: 5" in capsys.readouterr().out
        assert main(huge + ["--json"]) == 0
        assert json.loads(capsys.readouterr().out)["outcome"] == ["diverged"] * 5
    assert capsys.readouterr().err == ""
    with np.errstate(all="raise"):  # the library's errstate is local to the post-processing of the final state
        s = gd_sweep([1e30, 1e30], 1e30, [1e30, 1e30], [1e-30, 1e30])
        for values in (s.sharpness, s.lambda_max, s.beta_l1, s.beta_l2, s.w_l1, s.w_l2):
            assert values.shape == (2,)
    assert np.all(s.outcome == DIVERGED)


def test_the_sweep_figure_has_a_style_for_every_drawn_outcome():
    from biasaudit.figures.eos import outcome_style

    style = outcome_style()
    assert style[UNSETTLED][0].startswith("unsettled")
    assert set(style) == set(range(len(OUTCOMES))) - {DIVERGED}  # diverged runs are not drawn
