"""The documentation reads offline: every formula is MathML made at build time (no MathJax, no CDN), and no
page loads a script, a style sheet or a font from outside the build. Headless Chromium lays out a page of
formulas and every one of them has a box (that part skips where Chromium is not installed). Each check is
shown to fire on a planted fault."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser")) if p), None)

_REFERENCES = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""", re.I)
_CSS_URLS = re.compile(r"""url\(\s*["']?([^"')]+)["']?\s*\)|@import\s+["']([^"']+)["']""", re.I)
_RAW_TEX = re.compile(r"\\\(|\\\[|\$\$|(?<![\w$])\$[^$\s][^$]*\$|\\(?:frac|mathrm|alpha|beta|mu|sum|left|right)\b")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("sphinx")
    pytest.importorskip("latex2mathml")
    out = tmp_path_factory.mktemp("docs") / "html"
    result = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS),
                             str(out)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def outside_references(root: Path) -> list[str]:
    """Every script, style sheet, image, frame, CSS url() or @import of the built pages that points outside the
    build folder (a URL, or a path that does not resolve to a file in it)."""
    found = []
    for page in [*root.rglob("*.html"), *root.rglob("*.css")]:
        text = page.read_text(encoding="utf-8", errors="replace")
        refs = _REFERENCES.findall(text) if page.suffix == ".html" else []
        refs += [a or b for a, b in _CSS_URLS.findall(text)]
        for ref in refs:
            target = ref.split("#", 1)[0].split("?", 1)[0]
            if re.match(r"^(?:[a-z]+:)?//", ref, re.I) or (target and ref.lower().startswith(("http:", "https:"))):
                found.append(f"{page.relative_to(root)}: {ref}")
            elif target and not target.startswith("data:"):
                resolved = (page.parent / target).resolve()
                if not resolved.is_file() or root.resolve() not in resolved.parents:
                    found.append(f"{page.relative_to(root)}: {ref}")
    return found


def raw_latex(page: str) -> list[str]:
    """LaTeX left as text on a page: outside <math> (its alttext included), <code>, <pre> and <script>."""
    body = re.sub(r"<(math|code|pre|script|style)\b.*?</\1>", " ", page, flags=re.S | re.I)
    text = re.sub(r"<[^>]+>", " ", body)
    return [m.group(0) for m in _RAW_TEX.finditer(text)]


def test_no_page_loads_anything_from_outside_the_build(built):
    assert outside_references(built) == []
    for page in built.rglob("*.html"):
        assert "mathjax" not in page.read_text(encoding="utf-8").lower().replace("mathjax_ignore", ""), page.name


def test_every_formula_is_mathml(built):
    spec = (built / "specification" / "sam.html").read_text(encoding="utf-8")
    assert spec.count("<math") > 100
    for page in built.rglob("*.html"):
        assert raw_latex(page.read_text(encoding="utf-8")) == [], page.name


def test_the_checks_fire_on_planted_faults(tmp_path):
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "ok.js").write_text("")
    (tmp_path / "_static" / "x.css").write_text("@font-face{src:url(https://fonts.example/a.woff2)}")
    (tmp_path / "index.html").write_text(
        '<script src="_static/ok.js"></script><script src="https://cdn.example/mathjax.js"></script>'
        '<link rel="stylesheet" href="_static/x.css"><img src="../outside.png">')
    assert outside_references(tmp_path) == ["index.html: https://cdn.example/mathjax.js",
                                            "index.html: ../outside.png",
                                            "_static/x.css: https://fonts.example/a.woff2"]
    assert raw_latex(r"<p>\[w(\tau) = \alpha\]</p><p>where $x_i$ and \frac{1}{2}</p>") == [r"\[", r"\alpha", "$x_i$",
                                                                                          r"\frac"]
    assert raw_latex('<p><math alttext="\\alpha"><mi>α</mi></math> and <code>$x$ \\frac</code></p>') == []


PROBE = """<script>
window.addEventListener('load', () => {
  const maths = Array.from(document.querySelectorAll('math'));
  const empty = maths.filter(m => { const r = m.getBoundingClientRect(); return r.width < 1 || r.height < 1; });
  const pre = document.createElement('pre'); pre.id = 'probe';
  pre.textContent = JSON.stringify({maths: maths.length, empty: empty.map(m => m.getAttribute('alttext'))});
  document.body.appendChild(pre);
});
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium (/usr/bin/chromium) is not installed")
@pytest.mark.parametrize("page", ["specification/sam.html", "specification/eos.html"])
def test_chromium_lays_out_every_formula(built, tmp_path, page):
    source = built / page
    probed = source.with_name(f"probed-{source.name}")
    probed.write_text(source.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path}",
             "--virtual-time-budget=5000", "--window-size=1200,2000"]
    dom = subprocess.run(flags + ["--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=180,
                         check=True).stdout
    shot = tmp_path / "shot.png"
    subprocess.run(flags + [f"--screenshot={shot}", probed.as_uri()], capture_output=True, timeout=180, check=True)
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, "the probe script did not run"
    probe = json.loads(found.group(1).replace("&quot;", '"'))
    assert probe["maths"] > 50 and probe["empty"] == []

    from PIL import Image

    lo, hi = Image.open(shot).convert("L").getextrema()
    assert hi - lo > 100  # a page, not a blank screen


def test_powers_and_indices_in_claim_prose_are_formulas(built):
    """A title such as "blows up at tau_j = alpha_j^{2-L} / ..." shows alpha_j^{2-L} as a formula, not as text."""
    page = (built / "specification" / "sam.html").read_text(encoding="utf-8")
    assert 'alttext="\\alpha _j^{2-L}"' in page
    text = re.sub(r"<(math|code|pre)\b.*?</\1>", " ", page, flags=re.S)
    assert "^{" not in re.sub(r"<[^>]+>", " ", text)
