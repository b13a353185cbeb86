"""The HTML report as a browser shows it: every statement of every registered claim, rendered
by headless Chromium; a probe script reports images that did not load and formulas that laid out empty, and
the dumped DOM is checked for subscripts built out of prose. Each check is shown to fire on a planted fault.

Needs Chromium (Debian's ``chromium`` package); skipped where it is not installed.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from biasaudit.audit.report_data import ReportMeta, build_report
from biasaudit.audit.report_html import render_html
from biasaudit.registry import all_claims

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")

# Names that may stand as a multi-letter base of a subscript (function names); any other word of >= 4
# letters under <msub> is prose that MathML split into a broken subscript.
MATH_NAMES = {"exp", "log", "ln", "max", "min", "sgn", "sign", "tanh", "sin", "cos", "det", "tr", "arg", "sup", "inf",
              "lim", "argmax", "argmin"}

PROBE = """<script>
window.addEventListener('load', () => {
  const broken = Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'));
  const empty = Array.from(document.querySelectorAll('math')).filter(m => {
    const r = m.getBoundingClientRect(); return r.width < 1 || r.height < 1; }).length;
  const pre = document.createElement('pre'); pre.id = 'probe';
  pre.textContent = JSON.stringify({broken, empty, maths: document.querySelectorAll('math').length,
                                    images: document.images.length});
  document.body.appendChild(pre);
});
</script>"""


def _png(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, 1], [0, 1])
    fig.savefig(path)
    plt.close(fig)


def _report_html(folder: Path) -> str:
    """The report of every registered claim (verdicts spread over all four kinds) with one real figure."""
    (folder / "figures").mkdir(parents=True)
    _png(folder / "figures" / "probe.png")
    verdicts = ("confirmed", "refuted", "undecided", "error")
    records = []
    for i, claim in enumerate(all_claims()):
        verdict = verdicts[i % 4]
        records.append({"claim_id": claim.id, "paper": claim.paper, "source": claim.source, "title": claim.title,
                        "verdict": verdict, "error": {"confirmed": 0.25, "refuted": 3.0}.get(verdict),
                        "tolerance": {"name": claim.tolerance.name, "value": claim.tolerance.value},
                        "detail": "planted record for the browser test", "n_cases": 3})
    figures = [{"figure_id": "probe", "status": "ok", "files": ["probe.png"], "title": "probe", "caption": "",
                "claims": [records[0]["claim_id"]], "paper": records[0]["paper"]}]
    meta = ReportMeta(tier="quick", profile="ci", seed=0, executor="inline", workers=None, scheduler=None,
                      pattern=None, started_utc="2026-01-01T00:00:00Z", wall_s=1.0, ran=len(records), reused=0,
                      code={})
    return render_html(build_report(records, figures, meta))


def _browse(folder: Path, html: str) -> tuple[dict, str]:
    """(probe result, the DOM after load) from headless Chromium; a screenshot is left at folder/shot.png."""
    page = folder / "index.html"
    page.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
             "--virtual-time-budget=5000", "--window-size=1280,2400"]
    dom = subprocess.run(flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    subprocess.run(flags + [f"--screenshot={folder / 'shot.png'}", page.as_uri()], capture_output=True,
                   timeout=120, check=True)
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, "the probe script did not run"
    return json.loads(found.group(1).replace("&quot;", '"')), dom


def _prose_subscripts(dom: str) -> list[str]:
    bases = re.findall(r"<msub>\s*<mi[^>]*>([^<]*)</mi>", dom)
    return [b for b in bases if len(b) >= 4 and b.isalpha() and b.isascii() and b not in MATH_NAMES]


@pytest.fixture(scope="module")
def browsed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    return _browse(folder, _report_html(folder)) + (folder,)


def test_every_image_loads_and_every_formula_has_a_box(browsed):
    probe, _, _ = browsed
    assert probe["images"] >= 1 and probe["broken"] == []
    assert probe["maths"] > 50 and probe["empty"] == 0


def test_no_subscript_is_built_out_of_prose(browsed):
    _, dom, _ = browsed
    assert "<math" in dom and _prose_subscripts(dom) == []


def test_the_screenshot_shows_a_page(browsed):
    from PIL import Image

    *_, folder = browsed
    shot = Image.open(folder / "shot.png").convert("L")
    lo, hi = shot.getextrema()
    assert shot.size == (1280, 2400) and hi - lo > 100  # not blank: text on a background


def test_the_checks_fire_on_planted_faults(tmp_path):
    """Negative control: a missing image, an empty formula and a prose subscript are all caught."""
    (tmp_path / "figures").mkdir()
    html = ("<!DOCTYPE html><html><body><img src='figures/missing.png'><math></math>"
            "<math><msub><mi>median</mi><mi>gap</mi></msub></math></body></html>")
    probe, dom = _browse(tmp_path, html)
    assert probe["broken"] == ["figures/missing.png"] and probe["empty"] == 1
    assert _prose_subscripts(dom) == ["median"]
