"""``report.md``: the audit report in Markdown (problems first, then every claim, then the figures)."""

from __future__ import annotations

import json
from pathlib import Path

from biasaudit.audit.report_data import HOW_TO_READ, PAPERS, Report, Row, _show, error_text, plain_source
from biasaudit.audit.store import atomic_write_text

__all__ = ["write_markdown"]


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


_ORIGIN = {"stated": "stated by the paper", "derived": "derived by us from the paper's statements",
           "reported": "a measurement made here, stated as a claim so that it can be refuted"}


def _evidence_block(row: Row) -> list[str]:
    r = row.record
    tol = r.get("tolerance") or {}
    lines = [
        f"### `{r['claim_id']}`: **{r['verdict'].upper()}**",
        "",
        f"- paper {r.get('paper')}, {plain_source(r.get('source'))} ({_ORIGIN.get(r.get('origin'), r.get('origin') or '?')}): "
        f"{r.get('title', '')}",
        f"- evidence: {row.summary or '-'}",
        f"- parameters: `{_show(r.get('params'), 400, precise=True)}`",
        f"- predicted: `{_show(r.get('predicted'), 400, precise=True)}`",
        f"- observed: `{_show(r.get('observed'), 400, precise=True)}`",
        f"- error: `{error_text(r)}` against tolerance `{tol.get('name')}` = `{tol.get('value')}` "
        f"({tol.get('reason', '')})",
    ]
    controls = (r.get("negative_control") or {}).get("runs")
    if controls:
        lines.append(f"- negative controls: `{json.dumps(controls)[:400]}`")
    lines.append(f"- seed {r.get('seed')}, profile {r.get('profile')}, {r.get('n_cases')} cases, "
                 f"{r.get('elapsed_s')} s")
    if r.get("traceback"):
        lines += ["", "```", r["traceback"].rstrip(), "```"]
    lines.append("")
    return lines


def _render_markdown(report: Report) -> str:
    """The report as Markdown: the header, the problems with their evidence, every claim, the figures."""
    m = report.meta
    counts = report.counts()
    code = m.code or {}
    lines = [
        "# biasaudit report",
        "",
        f"Tier **{m.tier}** (profile `{m.profile}`), seed {m.seed}, executor {m.executor}"
        + (f" ({m.workers} workers)" if m.workers else "") + (f" at {m.scheduler}" if m.scheduler else "")
        + (f", claims `{m.pattern}`" if m.pattern else "") + ".",
        f"Started {m.started_utc}; wall time {m.wall_s:.1f} s; {m.ran} units run, {m.reused} kept from "
        f"earlier evidence; {m.runs_sentence()}; the units' own times sum to {report.unit_seconds():.1f} s. "
        f"Code: biasaudit {code.get('biasaudit')}, commit {code.get('git_commit') or 'unknown'}"
        + (" (with uncommitted changes)" if code.get("git_dirty") else "") + ".",
        "",
        "**Verdicts:** " + ", ".join(f"{k}: {v}" for k, v in counts.items()) + f" (total {len(report.rows)}).",
        "",
    ]
    lines += ["<details><summary>How to read this report</summary>", ""]
    lines += [f"- **{term}**: {text}" for term, text in HOW_TO_READ] + ["", "</details>", ""]
    if m.run_errors:
        lines += ["**Experiment runs that failed** (their claims report the error again):", ""]
        lines += [f"- {text}" for text in m.run_errors] + [""]
    for bad in m.bad_lines:
        lines.append(f"> evidence.jsonl {bad}: dropped and redone.")
    problems = report.problems
    lines += ["## Refuted, error and undecided claims", ""]
    if problems:
        for row in problems:
            lines += _evidence_block(row)
    else:
        lines += ["None: every claim was confirmed or is out of scope.", ""]

    lines += ["## All claims", "",
              "| claim | paper, section | statement | verdict | evidence | figure |",
              "| --- | --- | --- | --- | --- | --- |"]
    for row in report.rows:
        r = row.record
        math = row.statement_text.replace("\n", " ⏎ ") if "\n" in row.statement_text else row.statement_text
        figs = ", ".join(f"[{f}](#figure-{f})" for f in row.figures) or "-"
        lines.append(f"| `{r['claim_id']}` | {_cell(r.get('paper'))} {_cell(plain_source(r.get('source')))} | "
                     f"{_cell(r.get('title', ''))}<br>`{_cell(r.get('statement', '') or math)}` | "
                     f"**{r['verdict']}** | {_cell(row.summary)} | {figs} |")
    lines.append("")

    lines += ["## Statements", ""]
    for row in sorted(report.rows, key=lambda r: r.claim_id):
        lines += [f"**`{row.claim_id}`** ({row.record.get('title', '')})", "", "```",
                  row.statement_text.rstrip(), "```"]
        if row.hypotheses_text:
            lines += ["Hypotheses: " + "; ".join(f"`{_cell(h)}`" for h in row.hypotheses_text)]
        lines.append("")

    lines += ["## Figures", ""]
    papers = list(PAPERS) + sorted({f.get("paper") for f in report.figures} - set(PAPERS) - {None})
    for paper in papers:
        figs = report.figures_of_paper(paper)
        if not figs:
            continue
        lines += [f"### {PAPERS.get(paper, paper)}", ""]
        for fig in figs:
            lines += [f"#### Figure {fig['figure_id']}", "", f"<a id=\"figure-{fig['figure_id']}\"></a>", "",
                      f"{fig.get('title', '')}. Illustrates: {', '.join(fig.get('claims') or [])}.", ""]
            if fig.get("status") == "ok":
                lines += [f"![{fig['figure_id']}](figures/{name})" for name in fig.get("files", [])]
                if fig.get("caption"):
                    lines += ["", fig["caption"]]
            else:
                lines += [f"**Figure job failed:** {fig.get('detail')}"]
            lines.append("")
    for fig_id, why in m.unavailable_figures:
        lines.append(f"- figure `{fig_id}` left out: {why}")
    lines.append("")
    return "\n".join(lines)


def write_markdown(report: Report, out: Path) -> Path:
    """Write the Markdown report to ``out/report.md`` atomically; return that path."""
    path = Path(out) / "report.md"
    atomic_write_text(path, _render_markdown(report))
    return path
