"""``biasaudit regimes eos`` and ``biasaudit sweep eos``: JSON keys, independent agreement, bad input."""

import json

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import linprog

from biasaudit.cli import main

ARGS = ["regimes", "eos", "--x", "0.7,1.3,2.1", "--y", "1.5", "--w0", "0.05,0.05,0.05"]


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_eos_cli_regimes_json_keys(capsys):
    out = _json(capsys, ARGS + ["--json"])
    for key in ("s_gf", "eta_c", "eta_stable_max", "min_norm_vertex", "min_sharpness_vertex", "beta_gf",
                "sharpness_gf", "pareto_front", "init_regime"):
        assert key in out
    assert out["min_norm_vertex"] == 3 and out["min_sharpness_vertex"] == 1  # 1-based
    assert out["eta_c"] == pytest.approx(2 / out["s_gf"], rel=1e-15)


@pytest.mark.parametrize("x,y,w0,c", [((0.7, 1.3, 2.1), 1.5, (0.05, 0.05, 0.05), 0.5),
                                      ((0.4, 3.0), 0.8, (0.2, -0.1), 1.0),
                                      ((2.5, 0.3, 1.1, 0.9), 2.2, (0.3, 0.1, 0.2, 0.05), 0.5)])
def test_eos_cli_regimes_agree_with_independent_numerics(capsys, x, y, w0, c):
    argv = ["regimes", "eos", "--x", ",".join(map(str, x)), "--y", str(y), "--w0", ",".join(map(str, w0)),
            "--loss-factor", str(c), "--json"]
    out = _json(capsys, argv)
    xv, w = np.array(x), np.array(w0)
    # gradient flow by RK45 on w itself (a different integrator and coordinates from the claims')
    sol = solve_ivp(lambda t, v: -4 * c * (xv @ (v * v) - y) * xv * v, (0, 400), w, rtol=1e-11, atol=1e-13)
    beta = sol.y[:, -1] ** 2
    assert np.allclose(out["beta_gf"], beta, rtol=1e-7, atol=1e-12)
    S = 8 * c * xv**2 @ beta
    assert out["sharpness_gf"] == pytest.approx(S, rel=1e-7)
    # s_GF: max of the dense Hessian's top eigenvalue along the path (small init here)
    ts = np.linspace(0, sol.t[-1], 50)
    assert out["init_regime"] == "small"
    assert out["s_gf"] == pytest.approx(S, rel=1e-7)
    # minimizers and stability limit by LP
    lp_n = linprog(np.ones_like(xv), A_eq=xv[None], b_eq=[y], bounds=(0, None))
    lp_s = linprog(8 * c * xv**2, A_eq=xv[None], b_eq=[y], bounds=(0, None))
    assert out["min_norm_vertex"] == int(np.argmax(lp_n.x)) + 1
    assert out["min_sharpness_vertex"] == int(np.argmax(lp_s.x)) + 1
    assert out["eta_stable_max"] == pytest.approx(2 / lp_s.fun, rel=1e-9)
    assert out["pareto_front"][-1][1] == pytest.approx(lp_n.fun, rel=1e-9)
    del ts


def test_eos_cli_regimes_human_output_has_formulas(capsys):
    assert main(ARGS) == 0
    out = capsys.readouterr().out
    assert "eta_c = 2 / s_GF" in out and "1/(4c y x_min)" in out and "vertex 3" in out


@pytest.mark.parametrize("argv,param", [
    (["--x", "0.7,-1.3", "--y", "1", "--w0", "0.1,0.1"], "x: must be strictly positive (mixed signs"),
    (["--x", "0.7,0", "--y", "1", "--w0", "0.1,0.1"], "x: must be strictly positive"),
    (["--x", "0.7,1.3", "--y", "-1", "--w0", "0.1,0.1"], "y: must be > 0"),
    (["--x", "0.7,1.3", "--y", "0", "--w0", "0.1,0.1"], "y: must be > 0"),
    (["--x", "0.7,nan", "--y", "1", "--w0", "0.1,0.1"], "x: must be finite"),
    (["--x", "0.7,1.3", "--y", "nan", "--w0", "0.1,0.1"], "y: must be finite"),
    (["--x", "0.7,1.3", "--y", "1", "--w0", "0.1,0.1,0.1"], "w0: must have 1 or 2 items"),  # one is broadcast
])
def test_eos_cli_regimes_bad_input_exits_2(capsys, argv, param):
    assert main(["regimes", "eos", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"biasaudit: error: {param}") and "Traceback" not in err
    assert err.count("\n") == 1


SWEEP = ["sweep", "eos", "--x", "1,2", "--y", "1", "--w0", "0.1,0.1"]


@pytest.mark.parametrize("extra,param", [
    (["--eta-min", "0", "--eta-max", "0.5"], "eta_min: must be > 0"),
    (["--eta-min", "-0.1", "--eta-max", "0.5"], "eta_min: must be > 0"),
    (["--eta-min", "0.5", "--eta-max", "0.5"], "eta_max: must be > eta_min"),
    (["--eta-min", "0.5", "--eta-max", "0.1"], "eta_max: must be > eta_min"),
    (["--eta-min", "nan", "--eta-max", "0.1"], "eta_min: must be finite"),
    (["--eta-min", "0.1", "--eta-max", "0.5", "--n", "1"], "n: must be an integer >= 2"),
    (["--eta-min", "0.1", "--eta-max", "0.5", "--n", "1000000000"], "n: needs about"),
    (["--eta-min", "0.1", "--eta-max", "0.5", "--plot", "/"], "plot: must be a .png or .pdf or .svg file name"),
    (["--eta-min", "0.1", "--eta-max", "0.5", "--plot", "/proc/no/x.png"], "plot: must be a writable directory"),
])
def test_eos_cli_sweep_bad_input_exits_2(capsys, extra, param):
    assert main(SWEEP + extra) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"biasaudit: error: {param}") and "Traceback" not in err


def test_eos_cli_sweep_bad_x_exits_2(capsys):
    assert main(["sweep", "eos", "--x", "1,-2", "--y", "1", "--w0", "0.1,0.1", "--eta-min", "0.1",
                 "--eta-max", "0.5"]) == 2
    assert "x: must be strictly positive" in capsys.readouterr().err


def test_eos_cli_sweep_json_and_plot(capsys, tmp_path):
    png = tmp_path / "sweep.png"
    out = _json(capsys, SWEEP + ["--eta-min", "0.05", "--eta-max", "0.6", "--n", "120", "--json", "--plot", str(png)])
    assert png.stat().st_size > 10_000
    assert len(out["eta"]) == 120 and set(out["outcome"]) <= {"converged", "period-2", "bounded-chaotic", "diverged", "unsettled"}
    assert "diverged" in out["outcome"]
    assert all(isinstance(v, float) if o != "diverged" else v is None for v, o in zip(out["sharpness"], out["outcome"]))
    assert "diverged runs" in out["null_reasons"]["sharpness, lambda_*, beta_*, w_*, residual"]
    assert out["regimes"]["eta_c"] == pytest.approx(0.2588, abs=5e-5)
    assert 1.0 < out["kink"] / out["regimes"]["eta_c"] < 1.04


def test_eos_cli_sweep_human_output(capsys):
    assert main(SWEEP + ["--eta-min", "0.05", "--eta-max", "0.6", "--n", "60"]) == 0
    out = capsys.readouterr().out
    assert "eta_c = 2/s_GF = 0.258833" in out and "outcomes:" in out


def test_eos_cli_sweep_checks_the_plot_path_before_computing(capsys, tmp_path, monkeypatch):
    import biasaudit.numerics.eos_sweep as es

    monkeypatch.setattr(es, "sweep_eos", lambda *a, **k: pytest.fail("computed before checking --plot"))
    (tmp_path / "a.png").mkdir()
    assert main(SWEEP + ["--eta-min", "0.1", "--eta-max", "0.5", "--plot", str(tmp_path / "a.png")]) == 2
    assert "plot: must be a file name (a directory of that name exists)" in capsys.readouterr().err
