"""``index.html``: the audit report as one static page that opens from disk.

Self-contained by construction: inline CSS, no scripts, no fonts, no external URLs; statements are
presentation MathML (rendered natively by current browsers; the Unicode text is the fallback); figures
are ``<img>`` links to the PNGs in ``figures/`` beside the page. All text from records is escaped.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from biasaudit.audit.evidence_view import evidence_view
from biasaudit.audit.prose_math import prose_html
from biasaudit.audit.report_data import HOW_TO_READ, PAPERS, PROBLEM_VERDICTS, Report, Row, plain_source
from biasaudit.audit.store import atomic_write_text

__all__ = ["render_html", "write_html"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1300px;
     padding:0 1em;color:#1d1d1f;line-height:1.4;overflow-wrap:break-word}
h1{margin-bottom:.2em} .meta{color:#555;font-size:.92em}
table{border-collapse:collapse;width:100%;font-size:.9em} th,td{border:1px solid #ccd;padding:.35em .5em;
     vertical-align:top;text-align:left;hyphens:none}
td code{white-space:normal} td .math{max-width:32em}
td.id{min-width:11em} td.id code{overflow-wrap:normal} td.verdict{min-width:7em}
table.claims>thead th{background:#eef1f6;position:sticky;top:0}
table.ev{width:auto;margin:.4em 0;font-size:.88em} table.ev th{background:#f3f5f9}
p.sentence{margin:.5em 0 .2em;font-weight:500} ul.notes{font-size:.9em;margin:.3em 0}
code,pre{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.88em}
pre{background:#f6f7f9;padding:.5em;overflow-x:auto;margin:.3em 0}
details.raw pre{max-height:24em;overflow:auto;white-space:pre-wrap;word-break:break-all}
.v{display:inline-block;padding:.1em .5em;border-radius:.6em;font-weight:600;white-space:nowrap}
.v-confirmed{background:#d7f5dd;color:#135e22}.v-refuted{background:#ffd6d6;color:#8a0000}
.v-error{background:#ffe2c4;color:#7a3a00}.v-undecided{background:#fff3bf;color:#6b5400}
.v-out-of-scope{background:#e6e6e6;color:#444}
.problem{border-left:6px solid #c00;padding:.2em 1em;margin:1em 0;background:#fff8f8}
.problem.v-undecided-box{border-color:#d4a800;background:#fffdf0}
.problem.v-error-box{border-color:#d46b00;background:#fff8f0}
figure{margin:1em 0;padding:.5em;border:1px solid #dde} figure img{max-width:100%;height:auto}
figcaption{font-size:.9em;color:#333} math{font-size:1.05em}
.math{overflow-x:auto;overflow-y:hidden;padding:.15em 0;max-width:100%} td .math math{text-align:left}
.counts span{margin-right:1em}
@media (max-width:700px){
  body{margin:1em auto;padding:0 .6em}
  table.claims,table.claims>tbody,table.claims>tbody>tr,table.claims>tbody>tr>td,
  table.ev,table.ev>tbody,table.ev>tbody>tr,table.ev>tbody>tr>td{display:block;width:auto;min-width:0}
  table.claims>thead,table.ev>thead{display:none}
  table.claims>tbody>tr{border:1px solid #ccd;border-radius:.4em;margin:.8em 0;padding:.3em .5em}
  table.ev>tbody>tr{border-top:1px solid #dde;padding:.2em 0}
  table.claims>tbody>tr>td,table.ev>tbody>tr>td{border:none;padding:.15em 0}
  table.claims>tbody>tr>td::before,table.ev>tbody>tr>td::before{content:attr(data-label);display:block;
    font-size:.8em;color:#666;font-weight:600}
  td .math{max-width:100%}
}
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


def _table(head: tuple[str, ...], rows: list[tuple[str, ...]], cls: str) -> str:
    cells = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f'<td data-label="{_e(h)}">{_e(c)}</td>' for h, c in zip(head, row)) + "</tr>"
                   for row in rows)
    return f'<table class="{cls}"><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>'


def _raw(record: dict) -> str:
    """The stored record, collapsed: one click away, never the first thing read."""
    text = json.dumps(record, indent=1, sort_keys=True, default=str)
    return f'<details class="raw"><summary>raw record</summary><pre>{_e(text)}</pre></details>'


def _evidence_body(record: dict) -> str:
    """The sentence, the table of quantities, the controls, the case's parameters, the check's notes."""
    view = evidence_view(record)
    parts = [f'<p class="sentence">{_e(view.sentence)}</p>',
             _table(("quantity", "predicted", "observed", "tolerance"), view.quantities, "ev")]
    if view.controls:
        parts.append(_table(("control", "moved or read", "result", "outcome"), view.controls, "ev"))
    if view.parameters:
        parts.append('<p class="meta">case: ' + ", ".join(f"{_e(k)} = {_e(v)}" for k, v in view.parameters)
                     + "</p>")
    if view.notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in view.notes) + "</ul>")
    if view.run:
        parts.append(f'<p class="meta">run: {_e(view.run)}</p>')
    return "".join(parts)


def _evidence(row: Row) -> str:
    r = row.record
    tb = f"<pre>{_e(r['traceback'])}</pre>" if r.get("traceback") else ""
    return (f'<div class="problem v-{_e(r["verdict"])}-box" id="problem-{_e(r["claim_id"])}">'
            f'<h3><code>{_e(r["claim_id"])}</code> {_badge(r["verdict"])}</h3>'
            f"<p>{_e(PAPERS.get(r.get('paper'), r.get('paper')))}, {_e(plain_source(r.get('source')))} "
            f"<i>({_e(r.get('origin') or '?')})</i>: {prose_html(r.get('title'))}</p>"
            f"{_math(row.statement_mathml, row.statement_text)}{_evidence_body(r)}{tb}{_raw(r)}</div>")


def _breakable(name: str) -> str:
    """An id with line-break opportunities after its dots and underscores (never inside a word)."""
    return _e(name).replace(".", ".<wbr>").replace("_", "_<wbr>")


def _row(row: Row) -> str:
    r = row.record
    hyps = ""
    if row.hypotheses_text:
        parts = [_math(m, t, block=False) for m, t in zip(row.hypotheses_mathml, row.hypotheses_text)]
        hyps = '<div class="meta">if ' + ", ".join(parts) + "</div>"
    figs = " ".join(f'<a href="#figure-{_e(f)}">{_breakable(f)}</a>' for f in row.figures) or "-"
    more = (f' <a href="#problem-{_e(r["claim_id"])}">evidence above</a>' if row.verdict in PROBLEM_VERDICTS
            else f"<details><summary>evidence</summary>{_evidence_body(r)}{_raw(r)}</details>")
    return (f'<tr id="claim-{_e(r["claim_id"])}"><td class="id" data-label="claim"><code>{_breakable(r["claim_id"])}'
            f'</code></td>'
            f'<td data-label="paper, section">{_e(r.get("paper"))}<br>{_e(plain_source(r.get("source")))}</td>'
            f'<td data-label="statement">{prose_html(r.get("title"))}<div class="math">'
            f"{_math(row.statement_mathml, row.statement_text, block=False)}</div>{hyps}</td>"
            f'<td class="verdict" data-label="verdict">{_badge(r["verdict"])}</td>'
            f'<td data-label="evidence">{_e(evidence_view(r).sentence)}{more}</td>'
            f'<td data-label="figure">{figs}</td></tr>')


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
           + f". Started {_e(m.started_utc)}; wall time {m.wall_s:.1f} s; {m.ran} units run, {m.reused} kept "
           f"by --resume; claim and figure units: {report.unit_seconds():.1f} s summed worker time; "
           f"{_e(m.runs_sentence())}."
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
    parts += ["<h2>All claims</h2>", "<table class=\"claims\"><thead><tr><th>claim</th><th>paper, section</th>"
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
