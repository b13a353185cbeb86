"""The report's layout on a wide and a narrow screen (1400 and 420 px), as headless Chromium lays it out.

A probe script measures, after load: how far the page overflows sideways, the formulas and images whose
box is empty or starts off-screen, the verdict badges off-screen, and the words of the claims table that a
line break split in two (a word: a run of letters and digits; a break at a hyphen, a slash or a bracket is an
ordinary line break). Each check is shown to fire on a planted fault.

Needs Chromium (Debian's ``chromium`` package, /usr/bin/chromium); skipped where it is not installed.
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

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium (/usr/bin/chromium) is not installed")

SAMPLE = Path(__file__).parent / "data" / "evidence_sample.jsonl"

PROBE = """<script>
window.addEventListener('load', () => {
  const W = document.documentElement.clientWidth;
  const off = el => { const r = el.getBoundingClientRect(); return r.width < 1 || r.height < 1 || r.left < -1
                      || r.left > W - 1; };
  const shown = el => el.closest('details:not([open])') === null;
  const maths = Array.from(document.querySelectorAll('math')).filter(shown);
  const split = [];
  for (const cell of document.querySelectorAll('table.claims > tbody > tr > td')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement.closest('math, pre, details:not([open])')) continue;
      for (const m of n.data.matchAll(/[\\p{L}\\p{N}]+/gu)) {  // a word: letters and digits
        const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
        const lines = new Set(Array.from(r.getClientRects()).filter(b => b.width > 0).map(b => Math.round(b.top)));
        if (lines.size > 1) split.push(m[0]);
      }
    }
  }
  const pre = document.createElement('pre'); pre.id = 'probe';
  pre.textContent = JSON.stringify({
    overflow: document.documentElement.scrollWidth - W,
    maths: maths.length, hidden_maths: maths.filter(off).length,
    images: document.images.length, hidden_images: Array.from(document.images).filter(off).length,
    hidden_verdicts: Array.from(document.querySelectorAll('table.claims .v')).filter(off).length,
    split});
  document.body.appendChild(pre);
});
</script>"""


def _png(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([0, 1], [0, 1])
    fig.savefig(path)
    plt.close(fig)


def _report(folder: Path) -> str:
    """Every registered claim (spread over the verdicts), the evidence sample's records, one figure."""
    (folder / "figures").mkdir(parents=True, exist_ok=True)
    _png(folder / "figures" / "probe.png")
    verdicts = ("confirmed", "refuted", "undecided", "error")
    records = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    for i, claim in enumerate(all_claims()):
        verdict = verdicts[i % 4]
        records.append({"claim_id": claim.id, "paper": claim.paper, "source": claim.source, "title": claim.title,
                        "verdict": verdict, "error": {"confirmed": 0.25, "refuted": 3.0}.get(verdict),
                        "tolerance": {"name": claim.tolerance.name, "value": claim.tolerance.value},
                        "detail": "planted record for the layout test", "n_cases": 3})
    figures = [{"figure_id": "probe", "status": "ok", "files": ["probe.png"], "title": "probe", "caption": "",
                "claims": [records[-1]["claim_id"]], "paper": records[-1]["paper"]}]
    meta = ReportMeta(tier="quick", profile="ci", seed=0, executor="inline", workers=None, scheduler=None,
                      pattern=None, started_utc="2026-01-01T00:00:00Z", wall_s=1.0, ran=len(records), reused=0,
                      code={})
    return render_html(build_report(records, figures, meta))


def _layout(folder: Path, html: str, width: int) -> dict:
    page = folder / f"index-{width}.html"
    page.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--allow-file-access-from-files",
             f"--user-data-dir={folder / 'profile'}", "--virtual-time-budget=5000", f"--window-size={width},2000"]
    dom = subprocess.run(flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180,
                         check=True).stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, "the probe script did not run"
    return json.loads(found.group(1).replace("&quot;", '"'))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("layout")
    return folder, _report(folder)


@pytest.mark.parametrize("width", [1400, 420])
def test_the_page_fits_its_screen_and_shows_every_formula_and_figure(report, width):
    folder, html = report
    probe = _layout(folder, html, width)
    assert probe["overflow"] <= 1, f"the page is {probe['overflow']} px wider than a {width} px screen"
    assert probe["maths"] > 50 and probe["hidden_maths"] == 0
    assert probe["images"] >= 1 and probe["hidden_images"] == 0
    assert probe["hidden_verdicts"] == 0
    assert probe["split"] == [], f"words split across lines: {probe['split'][:10]}"


def test_the_checks_fire_on_a_page_that_overflows_and_splits_words(tmp_path):
    """Negative control: a fixed-width table, a formula pushed off-screen and a word broken anywhere."""
    html = ("<!DOCTYPE html><html><head><meta name='viewport' content='width=device-width'></head><body>"
            "<div style='width:900px'>wide</div><table class='claims'><tbody><tr>"
            "<td style='width:40px;max-width:40px;overflow-wrap:anywhere'>specification</td></tr></tbody></table>"
            "<div style='margin-left:1200px'><math><mi>x</mi></math></div></body></html>")
    probe = _layout(tmp_path, html, 420)
    assert probe["overflow"] > 100 and probe["hidden_maths"] == 1 and "specification" in probe["split"]


def test_figure_ids_in_the_claims_table_can_break_at_their_dots():
    """A real quick-tier report's figure column (ids like sam.torch.minor_first_major_last) pushed the claims
    table 53 px past a 1400 px screen: the ids break after their dots and underscores, never inside a word."""
    from biasaudit.audit.report_html import _breakable

    assert _breakable("sam.torch.minor_first_major_last") == "sam.<wbr>torch.<wbr>minor_<wbr>first_<wbr>major_<wbr>last"
