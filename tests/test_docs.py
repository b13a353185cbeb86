"""The documentation builds with warnings as errors, its specification pages cover every registered claim and
cite nothing a reader cannot open, and the tutorial notebook runs."""

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAPERS = ("sam", "eos")
# what a reader of the repository cannot open: the internal short name of the specification, a project issue
UNREADABLE = re.compile(r"\bspec\b|\bissues?\s*#?\d+", re.IGNORECASE)


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    out = tmp_path_factory.mktemp("docs") / "html"
    result = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS),
                             str(out)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def _page_text(path: Path) -> str:
    """The words of a built page: its main body without tags, entities resolved."""
    page = path.read_text(encoding="utf-8")
    body = page.split('role="main">', 1)[-1].split('<div class="sphinxsidebar"', 1)[0]
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def test_docs_build_with_warnings_as_errors(built_docs):
    claims = (built_docs / "claims.html").read_text()
    assert "sam.l2.regime3" in claims and "eos.gf.kl_potential" in claims
    assert "sam_regimes" in (built_docs / "api.html").read_text()


@pytest.mark.parametrize("paper", PAPERS)
def test_specification_page_lists_every_claim_of_its_paper(built_docs, paper):
    from biasaudit.registry import all_claims

    page = built_docs / "specification" / f"{paper}.html"
    assert page.exists()
    text = _page_text(page)
    ids = [c.id for c in all_claims() if c.paper == paper]
    assert ids
    missing = [i for i in ids if i not in text]
    assert not missing, f"claims missing from specification/{paper}: {missing}"
    anchors = page.read_text(encoding="utf-8")
    for claim_id in ids:  # each entry has its own anchor, which the claims page links to
        assert 'id="claim-' + re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-") + '"' in anchors
    assert "Reference values and where they come from" in text and "derived here" in text


def test_specification_pages_cite_only_what_a_reader_can_open(built_docs):
    pages = [built_docs / "specification" / f"{p}.html" for p in (*PAPERS, "index")] + [built_docs / "claims.html"]
    for page in pages:
        found = UNREADABLE.findall(_page_text(page))
        assert not found, f"{page.name}: {found}"
    sources = [*sorted((DOCS / "specification").glob("*.md")), DOCS / "claims.md"]
    for source in sources:
        found = UNREADABLE.findall(source.read_text(encoding="utf-8"))
        assert not found, f"{source.name}: {found}"


def test_hand_written_specification_names_only_registered_claims():
    from biasaudit.registry import all_claims

    known = {c.id for c in all_claims()}
    for paper in PAPERS:
        named = set(re.findall(r"`((?:sam|eos)\.[\w.]+)`", (DOCS / "specification" / f"{paper}.md").read_text()))
        assert named and not named - known, f"{paper}.md names unknown claims: {sorted(named - known)}"


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
