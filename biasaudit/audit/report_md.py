"""``report.md``: the audit report in Markdown (problems first, then every claim, then the figures)."""

from __future__ import annotations

from pathlib import Path

from biasaudit.audit.evidence_view import evidence_view
from biasaudit.audit.report_data import HOW_TO_READ, PAPERS, Report, Row, plain_source
from biasaudit.audit.store import atomic_write_text

__all__ = ["write_markdown"]


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


_ORIGIN = {"stated": "stated by the paper", "derived": "derived by us from the paper's statements",
           "reported": "a measurement made here, stated as a claim so that it can be refuted"}


def _md_table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    return (["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
            + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows] + [""])


def _evidence_block(row: Row) -> list[str]:
    r = row.record
    view = evidence_view(r)
    lines = [
        f"### `{r['claim_id']}`: **{r['verdict'].upper()}**",
        "",
        f"Paper {r.get('paper')}, {plain_source(r.get('source'))} "
        f"({_ORIGIN.get(r.get('origin'), r.get('origin') or '?')}): {r.get('title', '')}",
        "",
        view.sentence,
        "",
    ]
    lines += _md_table(("quantity", "predicted", "observed", "tolerance"), view.quantities)
    if view.controls:
        lines += _md_table(("control", "moved or read", "result", "outcome"), view.controls)
    if view.parameters:
        lines += ["Case: " + ", ".join(f"{k} = {v}" for k, v in view.parameters) + ".", ""]
    lines += [f"- {note}" for note in view.notes]
    lines += [f"- run: {view.run}", ""]
    if r.get("traceback"):
        lines += ["```", r["traceback"].rstrip(), "```", ""]
    lines += [f"The raw record is the line of `{r['claim_id']}` in `evidence.jsonl`.", ""]
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
        f"earlier evidence by --resume; claim and figure units: {report.unit_seconds():.1f} s summed worker time; "
        f"{m.runs_sentence()}. "
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
                     f"**{r['verdict']}** | {_cell(evidence_view(r).sentence)} | {figs} |")
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
