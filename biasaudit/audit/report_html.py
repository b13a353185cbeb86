"""``index.html``: the audit report as one static page that opens from disk.

Self-contained by construction: inline CSS, no scripts, no fonts, no external URLs; statements are
presentation MathML (rendered natively by current browsers; the Unicode text is the fallback); figures
are ``<img>`` links to the PNGs in ``figures/`` beside the page. All text from records is escaped.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from biasaudit.audit.report_data import HOW_TO_READ, PAPERS, Report, Row, _show, error_text, plain_source
from biasaudit.audit.store import atomic_write_text

__all__ = ["render_html", "write_html"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1300px;
     padding:0 1em;color:#1d1d1f;line-height:1.4}
h1{margin-bottom:.2em} .meta{color:#555;font-size:.92em}
table{border-collapse:collapse;width:100%;font-size:.9em} th,td{border:1px solid #ccd;padding:.35em .5em;
     vertical-align:top;text-align:left;overflow-wrap:anywhere}
li code,td code{overflow-wrap:anywhere;white-space:normal} td .math{max-width:32em}
td.id{min-width:11em} td.id code{overflow-wrap:normal} td:last-child{min-width:7em}
th{background:#eef1f6;position:sticky;top:0}
code,pre{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.88em}
pre{background:#f6f7f9;padding:.5em;overflow-x:auto;margin:.3em 0}
.v{display:inline-block;padding:.1em .5em;border-radius:.6em;font-weight:600;white-space:nowrap}
.v-confirmed{background:#d7f5dd;color:#135e22}.v-refuted{background:#ffd6d6;color:#8a0000}
.v-error{background:#ffe2c4;color:#7a3a00}.v-undecided{background:#fff3bf;color:#6b5400}
.v-out-of-scope{background:#e6e6e6;color:#444}
.problem{border-left:6px solid #c00;padding:.2em 1em;margin:1em 0;background:#fff8f8}
.problem.v-undecided-box{border-color:#d4a800;background:#fffdf0}
.problem.v-error-box{border-color:#d46b00;background:#fff8f0}
figure{margin:1em 0;padding:.5em;border:1px solid #dde} figure img{max-width:100%;height:auto}
figcaption{font-size:.9em;color:#333} math{font-size:1.05em}
.math{overflow-x:auto;overflow-y:hidden;padding:.15em 0} td .math math{text-align:left}
.counts span{margin-right:1em}
"""


def _e(text) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _badge(verdict: str) -> str:
    return f'<span class="v v-{_e(verdict)}">{_e(verdict)}</span>'


def _math(mathml: str | None, text: str, block: bool = True) -> str:
    if mathml:
        inner = mathml if mathml.startswith("<math") else f"<math>{mathml}</math>"
        if block:
            inner = inner.replace("<math", '<math display="block"', 1)
        return f'<div class="math" title="{_e(text)}">{inner}</div>' if block else inner
    return f"<pre>{_e(text)}</pre>" if block else f"<code>{_e(text)}</code>"


def _evidence(row: Row) -> str:
    r = row.record
    tol = r.get("tolerance") or {}
    items = [
        ("evidence", _e(row.summary or "-")),
        ("parameters", f"<code>{_e(_show(r.get('params'), 600, precise=True))}</code>"),
        ("predicted", f"<code>{_e(_show(r.get('predicted'), 600, precise=True))}</code>"),
        ("observed", f"<code>{_e(_show(r.get('observed'), 600, precise=True))}</code>"),
        ("error / tolerance", f"<code>{_e(error_text(r))}</code> against <code>{_e(tol.get('name'))}</code> = "
                              f"<code>{_e(tol.get('value'))}</code>: {_e(tol.get('reason'))}"),
    ]
    controls = (r.get("negative_control") or {}).get("runs")
    if controls:
        items.append(("negative controls", f"<code>{_e(json.dumps(controls)[:600])}</code>"))
    items.append(("run", f"seed {_e(r.get('seed'))}, profile {_e(r.get('profile'))}, {_e(r.get('n_cases'))} "
                         f"cases, {_e(r.get('elapsed_s'))} s"))
    body = "".join(f"<li><b>{name}:</b> {value}</li>" for name, value in items)
    tb = f"<pre>{_e(r['traceback'])}</pre>" if r.get("traceback") else ""
    return (f'<div class="problem v-{_e(r["verdict"])}-box" id="problem-{_e(r["claim_id"])}">'
            f'<h3><code>{_e(r["claim_id"])}</code> {_badge(r["verdict"])}</h3>'
            f"<p>{_e(PAPERS.get(r.get('paper'), r.get('paper')))}, {_e(plain_source(r.get('source')))} "
            f"<i>({_e(r.get('origin') or '?')})</i>: {_e(r.get('title'))}</p>"
            f"{_math(row.statement_mathml, row.statement_text)}<ul>{body}</ul>{tb}</div>")


def _row(row: Row) -> str:
    r = row.record
    hyps = ""
    if row.hypotheses_text:
        parts = [_math(m, t, block=False) for m, t in zip(row.hypotheses_mathml, row.hypotheses_text)]
        hyps = '<div class="meta">if ' + ", ".join(parts) + "</div>"
    figs = " ".join(f'<a href="#figure-{_e(f)}">{_e(f)}</a>' for f in row.figures) or "-"
    breakable = _e(r["claim_id"]).replace(".", ".<wbr>").replace("_", "_<wbr>")
    return (f'<tr id="claim-{_e(r["claim_id"])}"><td class="id"><code>{breakable}</code></td>'
            f"<td>{_e(r.get('paper'))}<br>{_e(plain_source(r.get('source')))}</td>"
            f"<td>{_e(r.get('title'))}<div class=\"math\">"
            f"{_math(row.statement_mathml, row.statement_text, block=False)}</div>{hyps}</td>"
            f"<td>{_badge(r['verdict'])}</td><td>{_e(row.summary)}</td><td>{figs}</td></tr>")


def _figure(fig: dict) -> str:
    fid = _e(fig["figure_id"])
    claims = ", ".join(f"<code>{_e(c)}</code>" for c in fig.get("claims") or [])
    if fig.get("status") == "ok":
        imgs = "".join(f'<img src="figures/{_e(name)}" alt="{fid}">' for name in fig.get("files", []))
    else:
        imgs = f'<p class="problem v-error-box"><b>figure job failed:</b> {_e(fig.get("detail"))}</p>'
    return (f'<figure id="figure-{fid}">{imgs}<figcaption><b>{fid}</b>: {_e(fig.get("title"))}. '
            f"{_e(fig.get('caption'))} Illustrates {claims}.</figcaption></figure>")


def render_html(report: Report) -> str:
    """The report as one HTML page: its style inline, statements as MathML, images from ``figures/``."""
    m = report.meta
    code = m.code or {}
    counts = "".join(f"<span>{_badge(k)} {v}</span>" for k, v in report.counts().items())
    run = (f"Tier <b>{_e(m.tier)}</b> (profile <code>{_e(m.profile)}</code>), seed {_e(m.seed)}, executor "
           f"{_e(m.executor)}" + (f" ({_e(m.workers)} workers)" if m.workers else "")
           + (f" at <code>{_e(m.scheduler)}</code>" if m.scheduler else "")
           + (f", claims <code>{_e(m.pattern)}</code>" if m.pattern else "")
           + f". Started {_e(m.started_utc)}; wall time {m.wall_s:.1f} s; {m.ran} units run, {m.reused} kept; "
           f"{_e(m.runs_sentence())}; "
           f"the units' own times sum to {report.unit_seconds():.1f} s."
           + f" Code: biasaudit {_e(code.get('biasaudit'))}, commit "
           f"<code>{_e(code.get('git_commit') or 'unknown')}</code>"
           + (" (uncommitted changes)" if code.get("git_dirty") else "") + ".")
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>biasaudit report</title>", f"<style>{_CSS}</style></head><body>",
        "<h1>biasaudit report</h1>", f'<p class="meta">{run}</p>', f'<p class="counts">{counts} '
        f"total {len(report.rows)}</p>",
    ]
    parts.append('<details open><summary><b>How to read this report</b></summary><dl>'
                 + "".join(f"<dt>{_e(term)}</dt><dd>{_e(text)}</dd>" for term, text in HOW_TO_READ)
                 + "</dl></details>")
    for bad in m.bad_lines:
        parts.append(f'<p class="problem">evidence.jsonl {_e(bad)}: dropped and redone.</p>')
    parts.append("<h2>Refuted, error and undecided claims</h2>")
    problems = report.problems
    parts += [_evidence(row) for row in problems] or ["<p>None: every claim was confirmed or is out of scope.</p>"]
    parts += ["<h2>All claims</h2>", "<table><thead><tr><th>claim</th><th>paper, section</th>"
              "<th>statement</th><th>verdict</th><th>evidence</th><th>figure</th></tr></thead><tbody>"]
    parts += [_row(row) for row in report.rows]
    parts.append("</tbody></table>")
    parts.append("<h2>Figures</h2>")
    papers = list(PAPERS) + sorted({f.get("paper") for f in report.figures} - set(PAPERS) - {None})
    for paper in papers:
        figs = report.figures_of_paper(paper)
        if figs:
            parts.append(f"<h3>{_e(PAPERS.get(paper, paper))}</h3>")
            parts += [_figure(f) for f in figs]
    if m.unavailable_figures:
        parts.append("<ul>" + "".join(f"<li>figure <code>{_e(i)}</code> left out: {_e(w)}</li>"
                                      for i, w in m.unavailable_figures) + "</ul>")
    if not report.figures and not m.unavailable_figures:
        parts.append("<p>No figure illustrates the selected claims.</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_html(report: Report, out: Path) -> Path:
    """Write :func:`render_html` to ``out/index.html`` atomically; return that path."""
    path = Path(out) / "index.html"
    atomic_write_text(path, render_html(report))
    return path
