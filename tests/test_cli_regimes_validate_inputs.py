"""Input handling of ``regimes sam|eos`` and ``validate sam|eos`` (red-team findings): empty list items and
repeated values are refused naming the parameter, the l_inf tie test does not overflow, messages state the
rule that applies, diverged runs show ``-`` and the figures cope with them, the help agrees with the checks.

``validate`` is only called with arguments refused before training: the experiments are replaced by a stub
that fails the test if training starts."""

import json
import math
import re
import warnings

import pytest

from biasaudit.cli import main
from biasaudit.plumbing import InputError, parse_float_list


def run(capsys, *argv):
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def refused(capsys, param, *argv):
    """Exit 2 with one line ``biasaudit: error: <param>: ...`` (no traceback, no warning); returns the line."""
    code, _, err = run(capsys, *argv)
    assert code == 2, (argv, err)
    assert err.startswith(f"biasaudit: error: {param}: "), (argv, err)
    assert err.count("\n") == 1 and "Traceback" not in err and "Warning" not in err, err
    return err


@pytest.fixture
def no_training(monkeypatch):
    """Fail loudly (not after minutes) if a validate call gets as far as training."""
    from biasaudit.validation import eos_runs, sam_experiments, sam_regimes

    def stub(*args, **kwargs):
        raise AssertionError("training started: the input should have been refused first")

    for module, name in ((sam_experiments, "minor_mass_experiment"), (sam_experiments, "synthetic_patch_experiment"),
                         (sam_regimes, "regime_experiment"), (eos_runs, "run_sweep")):
        monkeypatch.setattr(module, name, stub)


# ------------------------------------------------------------------------------ 1. empty list items

@pytest.mark.parametrize("text,item", [("1,,3", 2), (",1,3", 1), ("1,3,", 3), (",", 1), ("1, ,3", 2)])
def test_parse_float_list_refuses_empty_items(text, item):
    with pytest.raises(InputError, match=rf"^mu: item {item} is empty"):
        parse_float_list("mu", text)


@pytest.mark.parametrize("text", ["", "   "])
def test_parse_float_list_refuses_an_empty_list(text):
    with pytest.raises(InputError, match="^mu: must not be empty"):
        parse_float_list("mu", text)


def test_parse_float_list_still_parses_and_names_bad_items():
    assert parse_float_list("mu", " 1 , 2.5,3").tolist() == [1.0, 2.5, 3.0]
    with pytest.raises(InputError, match=r"^mu: must be a comma-separated list of numbers \(item 2"):
        parse_float_list("mu", "1,abc")


@pytest.mark.parametrize("argv,param", [
    (["regimes", "sam", "--mu", "1,,3", "--rho", "0.1"], "mu"),
    (["regimes", "sam", "--mu", "1,3,", "--rho", "0.1"], "mu"),
    (["regimes", "sam", "--mu", "1,3", "--rho", "0.1", "--alpha", "0.2,,0.3"], "alpha"),
    (["regimes", "eos", "--x", "1,,2,3", "--y", "1", "--w0", "1,1,1"], "x"),
    (["regimes", "eos", "--x", "1,2,3", "--y", "1", "--w0", "1,1,1,"], "w0"),
])
def test_regimes_refuse_empty_list_items(capsys, argv, param):
    err = refused(capsys, param, *argv)
    assert re.search(r"item \d is empty", err)


@pytest.mark.parametrize("argv,param", [
    (["validate", "sam", "--init-scales", "1,,2"], "init_scales"),
    (["validate", "eos", "--eta-grid", "1,,2"], "eta_grid"),
    (["validate", "eos", "--eta-grid", "1,2,"], "eta_grid"),
])
def test_validate_refuses_empty_list_items_before_training(capsys, no_training, argv, param):
    assert "item" in refused(capsys, param, *argv)


# ------------------------------------------------------------------------------ 2. repeated values

@pytest.mark.parametrize("argv,param", [
    (["validate", "sam", "--init-scales", "1,1"], "init_scales"),
    (["validate", "sam", "--init-scales", "0.5,1,0.5"], "init_scales"),
    (["validate", "eos", "--eta-grid", "1,1"], "eta_grid"),
    (["validate", "eos", "--absolute", "--eta-grid", "0.1,0.2,0.10"], "eta_grid"),
])
def test_validate_refuses_repeated_values_before_training(capsys, no_training, argv, param):
    assert "must not repeat" in refused(capsys, param, *argv)


# ------------------------------------------------------------------------------ 3. l_inf limit without overflow

def _linf(capsys, *extra):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning (overflow in power) fails the test
        return run(capsys, "regimes", "sam", "--norm", "linf", *extra)


@pytest.mark.parametrize("mu,alpha,rho,depth,index", [
    ("1,3,4", "1e30", "0.1", 32, 3),               # mu_j (alpha - rho)^30 overflows: no tie, mu_3 wins
    ("1,3,4", "1e-30,2e-30,1.5e-30", "1e-30", 32, 2),  # (alpha - rho)^30 underflows to 0: no tie either
    ("1,2", "1e30,2e29", "1", 20, 1),
])
def test_linf_limit_compares_scores_without_overflow(capsys, mu, alpha, rho, depth, index):
    code, out, err = _linf(capsys, "--mu", mu, "--alpha", alpha, "--rho", rho, "--depth", depth, "--json")
    assert code == 0 and err == "", err
    data = json.loads(out)
    assert data["limit"] == "basis" and data["index"] == index


def test_linf_limit_a_true_tie_is_still_refused(capsys):
    code, _, err = _linf(capsys, "--mu", "1,2", "--alpha", "0.3,0.2", "--rho", "0.1", "--depth", "3")
    assert code == 2 and err.startswith("biasaudit: error: alpha: gives a tie"), err


@pytest.mark.parametrize("alpha,depth", [("1e29", 31), ("1e30", 32)])
def test_linf_fixed_limit_beyond_float_names_rho(capsys, alpha, depth):
    """rho^L for the fixed limit is refused naming rho and its representable range (was an OverflowError)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        err = refused(capsys, "rho", "regimes", "sam", "--norm", "linf", "--mu", "1,3,4", "--alpha", alpha,
                      "--rho", "1e30", "--depth", depth)
    assert "rho must be <=" in err


# ------------------------------------------------------------------------------ 4. the disjointness line

def test_regimes_eos_disjoint_line_states_the_true_relation(capsys):
    code, out, err = run(capsys, "regimes", "eos", "--x", "1,1,1", "--y", "1", "--w0", "1,1,1")
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if "solution sets are" in ln)
    assert "NOT disjoint" in line and "x_max = x_min" in line and "x_max > x_min" not in line
    code, out, _ = run(capsys, "regimes", "eos", "--x", "1,2", "--y", "1", "--w0", "1,1")
    line = next(ln for ln in out.splitlines() if "solution sets are" in ln)
    assert code == 0 and "are disjoint (x_max > x_min)" in line


# ------------------------------------------------------------------------------ 5. diverged runs

def test_validate_eos_table_shows_dash_for_a_diverged_run():
    from biasaudit.commands.validate_eos import format_run_row

    diverged = {"eta": 1e30, "multiple": None, "outcome": "diverged", "steps": 1, "S": math.nan,
                "l1": 2.1e31, "test_error": 0.45}
    row = format_run_row(diverged, 0.2459)
    assert "nan" not in row and row.split()[1] == f"{1e30 / 0.2459:.3g}"  # the true multiple of eta_c
    assert row.split()[-4:] == ["-", "-", "-", "-"]
    converged = {"eta": 0.1, "multiple": 0.5, "outcome": "converged", "steps": 40, "S": math.nan, "l1": 1.5,
                 "test_error": 0.1}
    row = format_run_row(converged, 0.2)  # S not converged: '-', the other numbers shown
    assert "nan" not in row and row.split()[1] == "0.5" and row.split()[-4:] == ["-", "-", "1.5", "0.100"]


def test_eos_figures_cope_with_every_run_diverging(tmp_path):
    from biasaudit.figures.eos_torch import make_sweep_figures

    sweep = {"gf": {"eta_c": 0.2459, "s_gf": 8.13},
             "runs": [{"eta": 1e30, "multiple": None, "outcome": "diverged", "steps": 1, "tracked": False,
                       "final": {}}]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # e.g. matplotlib's "no artists with labels"
        paths = make_sweep_figures(tmp_path, sweep=sweep)
    assert len(paths) == 4
    for p in paths:
        with open(p, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_cli_validate_eos_absolute_diverged_run(tmp_path, capsys):
    """The smallest sweep that diverges: 20 teacher examples, one step size 1e30, 5 steps (a few seconds)."""
    import torch

    code, out, err = run(capsys, "validate", "eos", "--absolute", "--eta-grid", "1e30", "--dataset", "teacher",
                         "--n-train", "20", "--n-test", "20", "--max-steps", "5", "--device", "cpu",
                         "--out", tmp_path / "run")
    torch.set_flush_denormal(False)  # run_sweep's setup_torch; other tests' float strategies need it off
    assert code == 0, err
    assert "figures failed" not in err and "(1e+30 x eta_c)" not in err, err
    row = next(ln for ln in out.splitlines() if ln.split()[:1] == ["1e+30"])
    assert "diverged" in row and "nan" not in row.lower() and row.split()[-4:] == ["-", "-", "-", "-"]
    assert len(list((tmp_path / "run" / "figures").glob("*.png"))) == 4


# ------------------------------------------------------------------------------ 6. range messages

@pytest.mark.parametrize("argv,param", [
    (["--x", "1", "--y", "1e-31", "--w0", "1"], "y"),
    (["--x", "1", "--y", "1", "--w0", "1e-31"], "w0"),
    (["--x", "1e-31", "--y", "1", "--w0", "1"], "x"),
    (["--x", "1", "--y", "1", "--w0", "1", "--loss-factor", "1e-31"], "loss_factor"),
])
def test_regimes_eos_range_message_does_not_offer_zero(capsys, argv, param):
    err = refused(capsys, param, "regimes", "eos", *argv)
    assert "magnitude in [1e-30, 1e+30]" in err and "or be 0" not in err
    # ... because 0 is then refused by the parameter's own rule
    zero = ["0" if argv[i - 1] == "--" + param.replace("_", "-") else a for i, a in enumerate(argv)]
    refused(capsys, param, "regimes", "eos", *zero)


def test_validate_range_messages_offer_zero_only_where_it_is_accepted(capsys, no_training):
    err = refused(capsys, "eta_grid", "validate", "eos", "--eta-grid", "1e-31")
    assert "or be 0" not in err
    refused(capsys, "eta", "validate", "eos", "--eta-grid", "0")
    assert "or be 0" in refused(capsys, "rho", "validate", "sam", "--rho", "1e-31")  # rho = 0 is GD: accepted


# ------------------------------------------------------------------------------ 7. help texts

def _help(capsys, *argv) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--help"])
    assert exc.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_validate_sam_help_lists_every_accepted_model(capsys, no_training):
    from biasaudit.validation.models import MODELS

    text = _help(capsys, "validate", "sam")
    listed = re.search(r"--model MODEL (.*?) \(", text).group(1)
    assert [m.strip() for m in listed.split("|")] == list(MODELS)
    err = refused(capsys, "model", "validate", "sam", "--model", "nope")
    assert ", ".join(MODELS) in err


def test_validate_sam_design_tier_message_and_help(capsys, no_training):
    from biasaudit.validation.sam_regimes import DESIGNS

    full_only = [d for d, tiers in DESIGNS.items() if "quick" not in tiers]
    assert full_only  # cifar10, svhn
    text = _help(capsys, "validate", "sam")
    design_help = text[text.rindex("--design {"):text.rindex("--no-cache")]  # the options section, not usage
    assert f"{', '.join(full_only[:-1])} and {full_only[-1]} run at --tier full only" in design_help
    for design in full_only:
        err = refused(capsys, "tier", "validate", "sam", "--design", design)
        assert f"design '{design}' runs at --tier full only" in err, err
