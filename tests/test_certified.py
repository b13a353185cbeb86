"""Certified regime boundaries: the ball tools (interval Newton, Krawczyk, the top eigenvalue), the enclosures of
both papers' boundaries against the float values and mpmath's iv intervals, the negative controls (a formula moved
1 % must not certify), the CLI's JSON fields and text marks, the API, and the errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from biasaudit.cli import main
from biasaudit.numerics.certified import (enclose, krawczyk_root, newton_root, relative_width, to_ball,
                                          top_eigenvalue)
from biasaudit.numerics.certified_boundaries import (ALPHA_COLLAPSE_REASON, FLOAT_SLACK_REL, certify_eos, certify_l2,
                                                     certify_linf, l2_defining_functions, reference_eos, reference_l2,
                                                     reference_linf)
from biasaudit.claims.enclosure import WIDTH_TARGET
from biasaudit.numerics.certified_iv import iv_floats, iv_newton_root
from biasaudit.numerics.l2_boundaries import l2_sam_regime_boundaries
from biasaudit.theory.eos_flow import eos_regimes
from biasaudit.theory.sam_l2 import l2_regime_statement


t = sp.Symbol("t", real=True)


def _inside(enclosure, value) -> bool:
    return enclosure.lo <= value <= enclosure.hi


# ---- the tools ----------------------------------------------------------------------------------------------
def test_certified_newton_isolates_a_simple_root_and_proves_it():
    e = newton_root(t**2 - 2, t, (), (), 1.414)
    assert e.proven and e.method == "interval Newton"
    assert e.lo <= math.sqrt(2) <= e.hi and relative_width(e.lo, e.hi) < 1e-15


def test_certified_newton_refuses_a_double_root():
    """f = (t − 1)²: f' holds 0 on every interval around the root, so no step proves uniqueness."""
    e = newton_root((t - 1) ** 2, t, (), (), 1.0)
    assert not e.proven and "f'" in e.detail


def test_certified_krawczyk_refuses_where_there_is_no_root():
    e = krawczyk_root(t**2 + 1, t, (), (), 0.5)
    assert not e.proven


def test_certified_krawczyk_proves_a_fixed_point():
    e = krawczyk_root(sp.exp(-t) - t, t, (), (), 0.567)  # the fixed point of x -> exp(-x)
    assert e.proven and e.lo <= 0.5671432904097838 <= e.hi


def test_certified_printer_keeps_rationals_exact():
    """1/3 is the ball of one third, not the double 0.333…: the ball of 3·(1/3) − 1 holds exactly 0."""
    from flint import ctx

    from biasaudit.numerics.certified import WORKING_PREC, arb_function

    with ctx.workprec(WORKING_PREC):
        f = arb_function(3 * sp.Rational(1, 3) * t - t, (t,))
        assert f(to_ball(1.0)).is_zero()
        third = arb_function(sp.Rational(1, 3) + 0 * t, (t,))(to_ball(0.0))
        assert third.contains(to_ball(1.0) / 3) and not third.contains(to_ball(1 / 3))


def test_certified_top_eigenvalue_of_a_known_matrix():
    e = top_eigenvalue([[2.0, 1.0], [1.0, 3.0]])
    assert e.proven and e.lo <= (5 + math.sqrt(5)) / 2 <= e.hi
    repeated = top_eigenvalue([[1.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]])  # a double top eigenvalue
    assert repeated.proven and repeated.lo <= 4.0 <= repeated.hi


# ---- paper 1 ------------------------------------------------------------------------------------------------
@settings(deadline=None, max_examples=40)
@given(d=st.integers(1, 5), seed=st.integers(0, 10**6), rho=st.floats(1e-6, 1e3), depth=st.sampled_from((2, 3, 4, 7)),
       normalization=st.sampled_from(("joint", "layer")))
@example(d=3, seed=0, rho=0.2, depth=2, normalization="joint")
def test_certified_l2_enclosures_hold_the_float_and_the_mpmath_values(d, seed, rho, depth, normalization):
    mu = np.cumsum(np.random.default_rng(seed).uniform(0.05, 2.0, d))
    reg = l2_regime_statement(mu, rho, depth=depth, normalization=normalization)
    cert = certify_l2(reg)
    expected = {"c", "alpha_grow", "alpha_shrink_all"} | ({"alpha_gd_like"} if depth == 2 else set())
    assert expected <= set(cert.certified)
    reference = reference_l2(reg)
    for name in expected:
        enc = cert.certified[name]
        assert enc is cert.tight[name] and cert.gaps[name] <= FLOAT_SLACK_REL, (name, enc, getattr(reg, name))
        lo, hi = reference[name]
        assert lo <= cert.tight[name].hi and hi >= cert.tight[name].lo, (name, reference[name], cert.tight[name])
        assert relative_width(enc.lo, enc.hi) <= WIDTH_TARGET


def test_certified_l2_alpha_collapse_is_not_certified_and_says_why():
    cert = certify_l2(l2_sam_regime_boundaries([1.0, 3.0, 4.0], 0.2))
    assert "alpha_collapse" not in cert.certified
    assert cert.not_certified["alpha_collapse"] == ALPHA_COLLAPSE_REASON
    assert "validated ODE integration" in ALPHA_COLLAPSE_REASON
    one = certify_l2(l2_sam_regime_boundaries([2.0], 0.2))  # d = 1: alpha_c = c exactly
    assert one.certified["alpha_collapse"].contains(0.2 / math.sqrt(2))


def test_certified_l2_widths_at_the_defaults():
    cert = certify_l2(l2_sam_regime_boundaries([1.0, 3.0, 4.0], 0.2))
    assert all(relative_width(e.lo, e.hi) <= WIDTH_TARGET for e in cert.certified.values())


@pytest.mark.parametrize("name", ["alpha_grow", "alpha_shrink_all", "alpha_gd_like"])
def test_certified_l2_a_formula_moved_one_percent_does_not_certify(name):
    """The negative control: the defining function with c moved 1 % has its root 1 % away, and its enclosure
    misses the float boundary (so does the float boundary moved 1 % miss the true enclosure)."""
    reg = l2_regime_statement([1.0, 3.0, 4.0], 0.2)
    f, var, args = l2_defining_functions()[name]
    c_sym = args[0]
    wrong = f.subs(c_sym, c_sym * sp.Rational(101, 100))
    mus = {"alpha_grow": (4.0,), "alpha_shrink_all": (1.0,), "alpha_gd_like": (3.0, 4.0)}[name]
    norm = to_ball(1.0 + 9.0 + 16.0).sqrt()
    value = getattr(reg, name)
    moved = newton_root(wrong, var, args, (reg.c, *mus, norm), value)
    assert moved.proven and not _inside(moved, value)
    right = certify_l2(reg).tight[name]
    assert not _inside(right, value * 1.01) and not _inside(right, value * 0.99)


def test_certified_linf_thresholds():
    values, cert = certify_linf([1.0, 2.0], 0.1, 2)
    assert cert.certified["alpha_threshold"].contains(0.1) and cert.certified["unbalanced_threshold"].contains(0.2)
    ref = reference_linf([1.0, 2.0], 0.1, 2)
    assert ref["unbalanced_threshold"][0] <= 0.2 <= ref["unbalanced_threshold"][1]
    values3, cert3 = certify_linf([1.0, 2.0], 0.1, 3)
    assert set(cert3.certified) == {"alpha_threshold"} and "unbalanced_threshold" not in values3


# ---- paper 2 ------------------------------------------------------------------------------------------------
@settings(deadline=None, max_examples=40)
@given(d=st.integers(1, 4), seed=st.integers(0, 10**6), scale=st.floats(1e-3, 3.0), c=st.sampled_from((0.5, 1.0, 0.3)))
@example(d=3, seed=0, scale=0.05, c=0.5)
def test_certified_eos_enclosures_hold_the_float_and_the_mpmath_values(d, seed, scale, c):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0.2, 3.0, d), float(rng.uniform(0.2, 3.0))
    reg = eos_regimes(x, y, scale * rng.uniform(0.5, 1.5, d), loss_factor=c)
    cert = certify_eos(reg)
    for name in ("tau", "sharpness_gf", "lambda_max_init", "s_gf", "eta_c", "eta_stable_max", "min_sharpness"):
        enc = cert.certified[name]  # the proven enclosure itself, never widened to the float value
        assert enc is cert.tight[name] and cert.gaps[name] <= FLOAT_SLACK_REL, (name, enc, getattr(reg, name))
        assert relative_width(enc.lo, enc.hi) <= WIDTH_TARGET, (name, enc)
    for name, (lo, hi) in reference_eos(reg).items():
        assert lo <= cert.tight[name].hi and hi >= cert.tight[name].lo, (name, (lo, hi), cert.tight[name])
    assert "central_flow" in cert.not_certified


def test_certified_eos_large_init_s_gf_is_the_top_eigenvalue():
    reg = eos_regimes([0.7, 1.3, 2.1], 1.5, [1.0, 1.0, 1.0])
    assert reg.init_regime == "large"
    cert = certify_eos(reg)
    assert cert.certified["s_gf"].contains(reg.lambda_max_init) and "lambda_max" in cert.methods["s_gf"]


def test_certified_eos_a_root_equation_moved_one_percent_does_not_certify():
    from biasaudit.numerics.certified_boundaries import gf_root_function

    reg = eos_regimes([0.7, 1.3, 2.1], 1.5, [0.05, 0.05, 0.05])
    expr, tau, args = gf_root_function(3)
    y = args[-1]
    wrong = expr.subs(y, y * sp.Rational(101, 100))  # the label moved 1 %
    b0 = [to_ball(0.05) ** 2] * 3
    moved = krawczyk_root(wrong, tau, args, (0.7, 1.3, 2.1, *b0, 1.5), reg.tau)
    assert moved.proven and not _inside(moved, reg.tau)


def test_certified_iv_reference_agrees_with_the_balls():
    X, proven = iv_newton_root(t**3 - 2, t, (), (), 1.26)
    ball = newton_root(t**3 - 2, t, (), (), 1.26)
    lo, hi = iv_floats(X)
    assert proven and lo <= ball.hi and hi >= ball.lo


def test_certified_enclose_is_a_ball_evaluation():
    r = sp.Symbol("r", positive=True)
    e = enclose(r / sp.sqrt(2), (r,), (0.2,))
    assert e.proven and e.method == "ball evaluation" and e.lo <= 0.2 / math.sqrt(2) <= e.hi


# ---- the CLI, the API and the errors ----------------------------------------------------------------------
def _cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_certified_cli_regimes_sam_json_carries_the_certified_map(capsys):
    code, out, err = _cli(capsys, "regimes", "sam", "--mu", "1,3,4", "--rho", "0.2", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data["certified"]) == {"c", "alpha_grow", "alpha_shrink_all", "alpha_gd_like"}
    for name, (lo, hi) in data["certified"].items():
        assert lo <= data[name] <= hi and data["certified_how"][name]
    assert "alpha_collapse" in data["not_certified"] and data["alpha_collapse"] is not None


def test_certified_cli_regimes_sam_text_marks_the_values(capsys):
    code, out, _ = _cli(capsys, "regimes", "sam", "--mu", "1,3,4", "--rho", "0.2")
    lines = {line.split("=")[0].strip(): line for line in out.splitlines() if line.startswith("  alpha") or
             line.startswith("  c ")}
    assert code == 0 and "[certified" in lines["alpha_grow"] and "[not certified]" in lines["alpha_collapse"]
    assert "Certified (Arb ball arithmetic" in out


def test_certified_cli_regimes_linf_json(capsys):
    code, out, _ = _cli(capsys, "regimes", "sam", "--norm", "linf", "--mu", "1,2,3", "--rho", "0.1", "--alpha",
                        "0.2,0.14,0.13", "--json")
    data = json.loads(out)
    assert code == 0 and data["thresholds"]["alpha_threshold"] == 0.1
    assert set(data["certified"]) == {"alpha_threshold", "unbalanced_threshold"}


def test_certified_cli_regimes_eos_json_and_text(capsys):
    argv = ("regimes", "eos", "--x", "0.7,1.3,2.1", "--y", "1.5", "--w0", "0.05,0.05,0.05")
    code, out, _ = _cli(capsys, *argv, "--json")
    data = json.loads(out)
    assert code == 0
    for name in ("s_gf", "eta_c", "tau"):  # the float value inside, or its rounding gap stated beside it
        lo, hi = data["certified"][name]
        assert lo <= data[name] <= hi or 0 < data["float_outside_rel"][name] <= FLOAT_SLACK_REL, name
    assert "central_flow" in data["not_certified"]
    code, out, _ = _cli(capsys, *argv)
    assert all(f"note: the float value of {name} lies" in out for name in data["float_outside_rel"])
    s_line = next(line for line in out.splitlines() if line.strip().startswith("s_GF ="))
    assert code == 0 and "[certified" in s_line


def test_certified_api_returns_what_the_cli_prints(capsys):
    import biasaudit as ba

    _, out, _ = _cli(capsys, "regimes", "sam", "--mu", "1,3,4", "--rho", "0.2", "--json")
    assert ba.sam_regimes(mu=(1, 3, 4), rho=0.2).certified == json.loads(out)["certified"]
    _, out, _ = _cli(capsys, "regimes", "eos", "--x", "1,2", "--y", "1", "--w0", "0.1", "--json")
    assert ba.eos_regimes(x=(1, 2), y=1, w0=(0.1, 0.1)).certified == json.loads(out)["certified"]
    assert set(ba.linf_limit(mu=(1, 2), alpha=0.5, rho=0.1).certified) == {"alpha_threshold", "unbalanced_threshold"}


@pytest.mark.parametrize("argv, name", [
    (("regimes", "sam", "--mu", "1,3,4", "--rho", "-0.2", "--json"), "rho"),
    (("regimes", "sam", "--mu", "3,1", "--rho", "0.2", "--json"), "mu"),
    (("regimes", "eos", "--x", "0.7,-1", "--y", "1.5", "--w0", "0.05", "--json"), "x"),
    (("regimes", "eos", "--x", "0.7,1", "--y", "nan", "--w0", "0.05", "--json"), "y"),
])
def test_certified_bad_input_is_one_line_exit_2(capsys, argv, name):
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and name in err and "Traceback" not in err


def test_certified_api_bad_input_raises_input_error():
    import biasaudit as ba
    from biasaudit.plumbing import InputError

    with pytest.raises(InputError, match="^rho: "):
        ba.sam_regimes(mu=(1, 2), rho=0.0)
    with pytest.raises(InputError, match="^y: "):
        ba.eos_regimes(x=(1, 2), y=-1, w0=(0.1, 0.1))


def test_certified_report_marks_the_enclosed_values():
    """The report's table of quantities shows each proven enclosure as ``certified [lo, hi]``."""
    from biasaudit.audit.evidence_view import certified_text, evidence_view
    from biasaudit.ledger import run_claim
    from biasaudit.registry import all_claims

    (claim,) = [c for c in all_claims() if c.id == "eos.certified.s_gf"]
    record = json.loads(json.dumps(run_claim(claim).to_json(), default=str))
    rows = {q[0]: q for q in evidence_view(record).quantities}
    assert rows["s_gf"][2].startswith("certified [") and rows["eta_c"][2].startswith("certified [")
    assert certified_text([0.1, 0.2]) is None and certified_text({"certified": [0.1, 0.2]}) == "certified [0.1, 0.2]"


def test_certified_claims_refute_their_one_percent_controls():
    from biasaudit.ledger import Verdict, run_claim
    from biasaudit.registry import all_claims

    for claim in [c for c in all_claims() if ".certified." in c.id]:
        evidence = run_claim(claim)
        assert evidence.verdict is Verdict.CONFIRMED, (claim.id, evidence.detail)
        runs = evidence.to_json()["negative_control"]["runs"]
        assert runs and all(r["failed"] for r in runs), claim.id


def test_certified_tau_is_proved_on_stiff_inputs_and_fast_at_d_20():
    import time

    reg = eos_regimes([1e30, 1e-30], 1e-30, [1e30, 1e30])
    assert "tau" in certify_eos(reg).certified  # the factored derivative lost this one
    x = np.linspace(0.2, 3.0, 20)
    start = time.perf_counter()
    cert = certify_eos(eos_regimes(x, 1.5, np.full(20, 0.05)))
    assert {"tau", "s_gf", "eta_c"} <= set(cert.certified) and time.perf_counter() - start < 20.0  # 77 s factored
