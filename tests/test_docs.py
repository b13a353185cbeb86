"""The documentation builds with warnings as errors, and the tutorial notebook runs (issue 18 item 5)."""

import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_docs_build_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    result = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS),
                             str(tmp_path / "html")], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    claims = (tmp_path / "html" / "claims.html").read_text()
    assert "sam.l2.regime3" in claims and "eos.gf.kl_potential" in claims
    assert "sam_regimes" in (tmp_path / "html" / "api.html").read_text()


def test_tutorial_notebook_runs(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel draws inline
    nb = nbformat.read(DOCS / "tutorial.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert any(o.get("output_type") == "display_data" and "image/png" in o.get("data", {})
               for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def test_one_stated_run_time():
    from biasaudit.cli import build_parser
    from biasaudit.tier import QUICK_AUDIT_MINUTES

    readme = (DOCS.parent / "README.md").read_text()
    assert f"about {QUICK_AUDIT_MINUTES} minutes on 2 cores" in readme
    audit = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices and "audit" in a.choices)
    help_text = audit.choices["audit"].format_help()
    assert f"about {QUICK_AUDIT_MINUTES}" in " ".join(help_text.split())
    for stale in ("5–10 minutes", "< 15 min"):
        assert stale not in readme and stale not in help_text
