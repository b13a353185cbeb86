"""Claims from other packages: the example plugin, installed with pip, is listed, checked
and audited; ``biasaudit new-claim`` writes a template whose test passes; a broken plugin hides nothing."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from biasaudit import registry
from biasaudit.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(ROOT / "examples" / "plugin")], check=True, capture_output=True)
    return site


def _cli(args, site, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "BIASAUDIT_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "biasaudit.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def test_an_installed_plugin_is_listed_checked_and_audited(plugin_site, tmp_path):
    listed = _cli(["list", "--claims", "example.*", "--json"], plugin_site, tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [r["id"] for r in json.loads(listed.stdout)] == ["example.gd_quadratic.stability_threshold"]
    checked = _cli(["check", "--claims", "example.*", "--json"], plugin_site, tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "confirmed" in checked.stdout
    audited = _cli(["audit", "--claims", "example.*", "--out", str(tmp_path / "out"), "--no-figures", "--workers", "1"],
                   plugin_site, tmp_path)
    assert audited.returncode == 0, audited.stderr
    records = [json.loads(line) for line in (tmp_path / "out" / "evidence.jsonl").read_text().splitlines()]
    assert [(r["claim_id"], r["verdict"]) for r in records] == [("example.gd_quadratic.stability_threshold",
                                                                  "confirmed")]
    assert "example.gd_quadratic.stability_threshold" in (tmp_path / "out" / "index.html").read_text()


def test_without_the_plugin_its_claims_are_unknown(tmp_path):
    assert main(["list", "--claims", "sam.l2.regime3"]) == 0
    assert main(["list", "--claims", "example.*"]) == 2  # InputError: matches no registered claim


def test_new_claim_writes_a_template_whose_test_passes(tmp_path):
    assert main(["new-claim", "my_theorem", "--out", str(tmp_path)]) == 0
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert main(["new-claim", "my_theorem", "--out", str(tmp_path)]) == 2  # never overwrites
    assert main(["new-claim", "class"]) == 2


def test_a_broken_plugin_is_skipped_with_one_line(monkeypatch, capsys):
    monkeypatch.setattr(registry, "plugin_modules", lambda: ("no_such_plugin_module_xyz",))
    registry.load.cache_clear()
    try:
        claims = registry.all_claims()
    finally:
        registry.load.cache_clear()
    assert any(c.id == "sam.l2.regime3" for c in claims)
    assert "no_such_plugin_module_xyz" in capsys.readouterr().err
