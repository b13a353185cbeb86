"""The CLI's documented numeric ranges (biasaudit.plumbing.ranges): outside them exit 2 naming the parameter;
at both ends of them the answers are finite and obey the theory's exact symmetries."""

import json
import math

import pytest

from biasaudit.cli import main
from biasaudit.plumbing.ranges import MAGNITUDE_MAX, MAGNITUDE_MIN, MAX_DEPTH


def _run_json(capsys, argv):
    assert main(argv) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    assert "Warning" not in captured.err and "warn" not in captured.err.lower()
    return json.loads(captured.out)


def _non_finite(value, path=""):
    """Paths of NaN/inf anywhere in a JSON value (as floats or as the strings jsonable writes)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _non_finite(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _non_finite(v, f"{path}[{i}]")]
    if isinstance(value, float) and not math.isfinite(value):
        return [path]
    if isinstance(value, str) and value.lower() in ("nan", "inf", "-inf", "infinity", "-infinity"):
        return [path]
    return []


@pytest.mark.parametrize("argv,param", [
    (["regimes", "sam", "--mu", "1,2", "--rho", "1", "--depth", str(MAX_DEPTH + 1)], "depth: must be an integer in"),
    (["regimes", "sam", "--mu", "1e-320,1", "--rho", "1"], "mu: every entry must have magnitude"),
    (["regimes", "sam", "--mu", "1,1e308", "--rho", "1"], "mu: every entry must have magnitude"),
    (["regimes", "sam", "--mu", "1,2", "--rho", "1e308"], "rho: must have magnitude"),
    (["regimes", "sam", "--mu", "1e-26,1e-23,1", "--rho", "1"], "mu: must have max/min <= 10000"),
    (["regimes", "sam", "--mu", "1,2", "--rho", "1", "--alpha", "1e-40"], "alpha: every entry must have magnitude"),
    (["regimes", "eos", "--x", "1,2", "--y", "1e308", "--w0", "0.1,0.1"], "y: must have magnitude"),
    (["regimes", "eos", "--x", "1e308,1e308", "--y", "1", "--w0", "0.1,0.1"], "x: every entry must have magnitude"),
    (["regimes", "eos", "--x", "1e-320,1", "--y", "1", "--w0", "0.1,0.1"], "x: every entry must have magnitude"),
    (["sweep", "eos", "--x", "1,2", "--y", "1", "--w0", "0.1,0.1", "--eta-min", "1e-320", "--eta-max", "0.5"],
     "eta_min: must have magnitude"),
    (["sweep", "eos", "--x", "1,2", "--y", "1", "--w0", "0.1,0.1", "--eta-min", "0.1", "--eta-max", "1e308"],
     "eta_max: must have magnitude"),
])
def test_outside_the_range_is_one_line_naming_the_parameter(capsys, argv, param):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"biasaudit: error: {param}") and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("scale", [MAGNITUDE_MIN, MAGNITUDE_MAX / 2])
def test_sam_boundaries_at_the_range_ends_obey_scale_invariance(capsys, scale):
    """alpha_c/c does not change when mu is scaled, and alpha_c is proportional to rho (exact)."""
    base = _run_json(capsys, ["regimes", "sam", "--mu", "1,2", "--rho", "1", "--json"])
    mu_scaled = _run_json(capsys, ["regimes", "sam", "--mu", f"{scale!r},{2 * scale!r}", "--rho", "1", "--json"])
    rho_scaled = _run_json(capsys, ["regimes", "sam", "--mu", "1,2", "--rho", repr(scale), "--json"])
    for out in (base, mu_scaled, rho_scaled):
        assert _non_finite(out) == []
    for key in ("alpha_collapse", "alpha_grow", "alpha_gd_like"):
        assert mu_scaled[key] == pytest.approx(base[key], rel=1e-9)
        assert rho_scaled[key] == pytest.approx(base[key] * scale, rel=1e-9)


def test_sam_deepest_documented_depth_answers(capsys):
    out = _run_json(capsys, ["regimes", "sam", "--mu", "1,2", "--rho", "1", "--depth", str(MAX_DEPTH), "--json"])
    assert out["alpha_collapse"] > 0 and _non_finite(out) == []


@pytest.mark.parametrize("k", [1e-10, 1e10])
def test_eos_eta_c_scales_as_one_over_k_squared_at_the_range_ends(capsys, k):
    """x -> kx, y -> ky with w0 fixed: r -> k r, the Hessian -> k² H, so s_GF -> k² s_GF and eta_c -> eta_c/k²."""
    base = _run_json(capsys, ["regimes", "eos", "--x", "1,2", "--y", "1", "--w0", "0.1,0.1", "--json"])
    scaled = _run_json(capsys, ["regimes", "eos", "--x", f"{k!r},{2 * k!r}", "--y", repr(k), "--w0", "0.1,0.1",
                                "--json"])
    assert _non_finite(base) == [] and _non_finite(scaled) == []
    assert scaled["eta_c"] == pytest.approx(base["eta_c"] / k**2, rel=1e-9)
    assert scaled["s_gf"] == pytest.approx(base["s_gf"] * k**2, rel=1e-9)


def test_eos_sweep_json_has_no_nan_or_inf_even_when_runs_diverge(capsys):
    out = _run_json(capsys, ["sweep", "eos", "--x", "1,2", "--y", "1", "--w0", "0.1,0.1", "--eta-min", "0.1",
                             "--eta-max", repr(MAGNITUDE_MAX), "--n", "20", "--json"])
    assert _non_finite(out) == [] and "diverged" in out["outcome"]
    assert any(v is None for v in out["sharpness"]) and out["null_reasons"]


@pytest.mark.parametrize("argv", [["check", "--claims", ""], ["check", "--claims", ","],
                                  ["audit", "--claims", " , "], []])
def test_an_empty_pattern_or_no_command_is_an_error_not_everything(capsys, argv, tmp_path):
    assert main(argv + (["--out", str(tmp_path)] if argv[:1] == ["audit"] else [])) == 2
    err = capsys.readouterr().err
    assert err.startswith("biasaudit: error: ") and err.count("\n") == 1


def test_validate_json_is_strict_json_with_null_reasons():
    """validate's summaries pass through finite_json: NaN/inf become null, listed with a reason."""
    import json

    from biasaudit.commands.validate_eos import _public as eos_public
    from biasaudit.commands.validate_sam import _public as sam_public

    for public in (eos_public, sam_public):
        out = public({"checks": {"E5": {"curvature": float("nan")}}, "runs": [{"S": float("inf")}, {"S": 1.0}]})
        text = json.dumps(out, allow_nan=False)  # raises on NaN/inf
        assert "nan" not in text.lower().replace("null_fields", "")
        assert set(out["null_fields"]) == {"checks.E5.curvature", "runs[0].S"} and out["runs"][1]["S"] == 1.0
