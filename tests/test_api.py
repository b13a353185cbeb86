"""The documented Python API: names, keywords, dataclasses with to_json, input errors."""

import json
import subprocess
import sys

import pytest

import biasaudit as ba
from biasaudit import api
from biasaudit.cli import main
from biasaudit.plumbing import InputError


def test_import_biasaudit_stays_light_and_reexports_the_api():
    code = "import sys, biasaudit; print(sorted(m for m in ('numpy', 'sympy', 'torch') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert ba.sam_regimes is api.sam_regimes and set(api.__all__) - {"audit"} <= set(dir(ba))


def test_sam_regimes_matches_the_cli(capsys):
    r = ba.sam_regimes(mu=(1, 2), rho=1.0)
    assert main(["regimes", "sam", "--mu", "1,2", "--rho", "1", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    for key in ("c", "alpha_collapse", "alpha_grow", "alpha_gd_like"):
        assert getattr(r, key) == pytest.approx(cli[key], rel=1e-12)
    assert json.loads(json.dumps(r.to_json()))["mu"] == [1.0, 2.0]
    assert "alpha_collapse" in r._repr_html_()


def test_sam_regimes_explains_missing_boundaries_and_classifies_alpha():
    deep = ba.sam_regimes(mu=(1, 2), rho=1.0, depth=4)
    assert deep.alpha_gd_like is None and "L = 2 only" in deep.null_reasons["alpha_gd_like"]
    r = ba.sam_regimes(mu=(1, 2), rho=1.0, alpha=0.7)
    assert r.alpha_regime.startswith("regime 2")


def test_linf_limit_and_the_norm_switch_agree():
    a = ba.linf_limit(mu=(1, 2, 3), alpha=0.2, rho=0.1)
    b = ba.sam_regimes(mu=(1, 2, 3), rho=0.1, norm="linf", alpha=0.2)
    assert a == b and a.kind in ("basis", "zero", "fixed")


@pytest.mark.parametrize("call, parameter", [
    (lambda: ba.sam_regimes(mu=(2, 1), rho=1.0), "mu"),
    (lambda: ba.sam_regimes(mu=(1, 2), rho=-1.0), "rho"),
    (lambda: ba.sam_regimes(mu=(1, 2), rho=float("nan")), "rho"),
    (lambda: ba.sam_regimes(mu=(1, 2), rho=1.0, norm="l3"), "norm"),
    (lambda: ba.sam_regimes(mu=(1, 2), rho=1.0, norm="linf"), "alpha"),
    (lambda: ba.sam_regimes(mu=(1, 2), rho=1.0, alpha=(0.1, 0.2, 0.3)), "alpha"),
    (lambda: ba.eos_sweep((1.0,), 1.0, (0.1,), eta_min=0.5, eta_max=0.1), "eta_max"),
    (lambda: ba.check_claim("no.such.claim"), "claim"),
    (lambda: ba.check_claim("sam.l2.regime3", profile="fast"), "profile"),
])
def test_bad_input_names_the_parameter(call, parameter):
    with pytest.raises(InputError) as err:
        call()
    assert err.value.name == parameter


def test_eos_regimes_sweep_claims_and_evidence():
    reg = ba.eos_regimes(x=(0.7, 1.3), y=1.0, w0=(0.05, 0.05))
    assert reg.to_json()["eta_c"] > 0
    sweep = ba.eos_sweep((0.7, 1.3), 1.0, (0.05, 0.05), eta_min=0.05, eta_max=0.6, n=16)
    assert len(sweep.eta) == 16
    infos = ba.list_claims("sam.l2.regime*")
    assert infos and all(i.id.startswith("sam.l2.regime") for i in infos)
    ev = ba.check_claim("eos.gf.kl_potential")
    assert str(ev.verdict) == "confirmed" and "confirmed" in ev._repr_html_()


def test_claims_render_latex(capsys):
    from biasaudit.registry import get_claim

    assert get_claim("eos.gf.kl_potential")._repr_latex_().startswith("$\\displaystyle")
    assert main(["list", "--claims", "sam.l2.regime3", "--latex"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("\\begin{itemize}") and "\\item \\texttt{sam.l2.regime3}" in out


def test_audit_from_python(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    summary = ba.run_audit(out=tmp_path / "out", claims="eos.gf.kl_potential", workers=1, figures=False)
    assert summary.counts == {"confirmed": 1}
    assert (tmp_path / "out" / "index.html").is_file() and summary.to_json()["out"] == str(tmp_path / "out")
