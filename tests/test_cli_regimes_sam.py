"""`biasaudit regimes sam`: JSON keys, readable formulas, and one-line errors with exit code 2."""

import json
import math

import pytest

from biasaudit.cli import main


def run(capsys, *argv):
    code = main(["regimes", "sam", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_regimes_sam_l2_json_has_the_boundaries(capsys):
    code, out, err = run(capsys, "--norm", "l2", "--depth", "2", "--mu", "1,2", "--rho", "1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert {"c", "alpha_collapse", "alpha_grow", "alpha_gd_like"} <= set(data)
    assert data["c"] == pytest.approx(1 / math.sqrt(2), rel=1e-15)
    assert data["alpha_collapse"] == pytest.approx(0.5213, abs=5e-5)  # reference value: 0.5213 rho
    assert data["alpha_grow"] == pytest.approx(0.632, abs=5e-4)
    assert data["alpha_gd_like"] == pytest.approx(0.949, abs=5e-4)
    assert data["alpha_collapse_over_c"] == pytest.approx(0.73726, abs=5e-6)


def test_cli_regimes_sam_l2_layer_normalisation_uses_c_equal_rho(capsys):
    code, out, _ = run(capsys, "--mu", "1,2", "--rho", "0.3", "--normalization", "layer", "--json")
    data = json.loads(out)
    assert code == 0 and data["c"] == pytest.approx(0.3)
    assert data["alpha_collapse"] / data["c"] == pytest.approx(0.737259628, rel=1e-9)


def test_cli_regimes_sam_l2_classifies_an_alpha(capsys):
    code, out, _ = run(capsys, "--mu", "1,2", "--rho", "1", "--alpha", "0.3", "--json")
    assert code == 0 and json.loads(out)["alpha_regime"].startswith("regime 1")
    code, out, _ = run(capsys, "--mu", "1,2", "--rho", "1", "--alpha", "0.6", "--json")
    assert json.loads(out)["alpha_regime"].startswith("regime 2")
    code, out, _ = run(capsys, "--mu", "1,2", "--rho", "1", "--alpha", "1.0", "--json")
    assert json.loads(out)["alpha_regime"].startswith("regime 3")


def test_cli_regimes_sam_l2_human_output_pretty_prints_formulas(capsys):
    code, out, _ = run(capsys, "--mu", "1,3,4", "--rho", "0.2")
    assert code == 0
    assert "alpha_collapse" in out and "certificate (collapse)" in out
    assert "─" in out  # sympy's unicode fraction bar: formulas are pretty-printed


def test_cli_regimes_sam_odd_depth_has_no_collapse_boundary(capsys):
    code, out, _ = run(capsys, "--mu", "1,2,3", "--rho", "0.2", "--depth", "3", "--json")
    data = json.loads(out)
    assert code == 0 and data["alpha_collapse"] is None and data["collapses"] is False


def test_cli_regimes_sam_linf_limit_json(capsys):
    pytest.importorskip("biasaudit.theory.sam_linf")
    code, out, err = run(capsys, "--norm", "linf", "--depth", "3", "--mu", "1,2,3", "--rho", "0.1",
                         "--alpha", "0.2,0.14,0.13", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["limit"] == "basis" and data["index"] == 1  # the paper's example: a minor feature wins


@pytest.mark.parametrize("argv, param", [
    (["--mu", "2,1", "--rho", "1"], "mu:"),
    (["--mu", "0,1", "--rho", "1"], "mu:"),
    (["--mu", "1,1", "--rho", "1"], "mu:"),
    (["--mu", "1,nan", "--rho", "1"], "mu:"),
    (["--mu", "1,inf", "--rho", "1"], "mu:"),
    (["--mu", "1,2", "--rho", "0"], "rho:"),
    (["--mu", "1,2", "--rho", "-1"], "rho:"),
    (["--mu", "1,2", "--rho", "nan"], "rho:"),
    (["--mu", "1,2", "--rho", "inf"], "rho:"),
    (["--mu", "1,2", "--rho", "1", "--alpha", "0"], "alpha:"),
    (["--mu", "1,2", "--rho", "1", "--alpha", "-0.5"], "alpha:"),
    (["--mu", "1,2", "--rho", "1", "--alpha", "0.1,0.2,0.3"], "alpha:"),
    (["--mu", "1,2", "--rho", "1", "--alpha", "nan"], "alpha:"),
    (["--mu", "1,2", "--rho", "1", "--depth", "0"], "depth:"),
    (["--mu", "1,2", "--rho", "1", "--norm", "linf"], "alpha:"),
])
def test_cli_regimes_sam_bad_input_exits_2_with_one_line(capsys, argv, param):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith(f"biasaudit: error: {param}")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("argv, needle", [
    (["--mu", "1,2", "--rho", "1", "--norm", "l3"], "--norm: invalid choice: 'l3'"),
    (["--mu", "1,2", "--rho", "abc"], "--rho: invalid float value"),
    (["--mu", "1,2", "--rho", "1", "--depth", "two"], "--depth: invalid int value"),
])
def test_cli_regimes_sam_argparse_errors_exit_2_and_name_the_option(capsys, argv, needle):
    with pytest.raises(SystemExit) as exc:
        main(["regimes", "sam", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_cli_regimes_sam_library_raises_the_same_message():
    from biasaudit.numerics.l2_boundaries import l2_sam_regime_boundaries

    with pytest.raises(ValueError, match="^mu: must be strictly positive and strictly increasing"):
        l2_sam_regime_boundaries([2.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="^rho: must be > 0"):
        l2_sam_regime_boundaries([1.0, 2.0], 0.0)
    with pytest.raises(ValueError, match="^depth: must be an integer >= 1"):
        l2_sam_regime_boundaries([1.0, 2.0], 1.0, depth=0)


def test_cli_regimes_sam_even_depth_has_alpha_collapse_and_classifies_alpha(capsys):
    code, out, err = run(capsys, "--depth", "4", "--mu", "1,2,3", "--rho", "0.5", "--json", "--alpha", "0.1")
    assert code == 0, err
    data = json.loads(out)
    assert data["collapses"] and data["sandwich"][0] < data["alpha_collapse"] < data["sandwich"][1]
    assert data["alpha_regime"].startswith("collapse")
    code, out, _ = run(capsys, "--depth", "4", "--mu", "1,2,3", "--rho", "0.5", "--alpha", "0.05,0.05,0.1")
    assert code == 0 and "per-coordinate alpha: collapse" in out
    code, out, _ = run(capsys, "--depth", "4", "--mu", "1,2,3", "--rho", "0.5", "--alpha", "0.1,0.3,0.1")
    assert code == 0 and "per-coordinate alpha: escape" in out
