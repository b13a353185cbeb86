"""A tiny Sphinx extension: writes ``claims.md`` (every registered claim, grouped by paper, with its origin,
source, statement and hypotheses in LaTeX) from the registry before the build, so the page cannot go stale."""

from pathlib import Path

PAPER_TITLES = {"sam": 'Paper 1: "Minor First, Major Last" (SAM on deep diagonal linear networks)',
                "eos": 'Paper 2: "Conflicting Biases at the Edge of Stability"'}


def _write(app):
    from biasaudit.audit.report_data import plain_source
    from biasaudit.registry import all_claims

    lines = ["# The claims", "",
             "Every claim biasaudit checks, as registered in this version (``biasaudit list`` prints the same). "
             "The verdicts come from running them: ``biasaudit audit`` writes a report with each verdict and its "
             "evidence (the measured verdicts of the last audit are in ``notes/status.md``). *Origin*: stated by "
             "the paper (or its specification), derived by us from those statements, or reported in an issue "
             "and stated so that it can be refuted.", ""]
    by_paper = {}
    for c in all_claims():
        by_paper.setdefault(c.paper, []).append(c)
    for paper, claims in by_paper.items():
        lines += [f"## {PAPER_TITLES.get(paper, paper)}", ""]
        for c in claims:
            title = c.title.replace("*", "\\*").replace("|", "\\|")
            lines += [f"### `{c.id}`", "", f"{title} ({c.kind}, {c.origin}; {plain_source(c.source)})", "",
                      "$$", c.latex(), "$$", ""]
    target = Path(app.srcdir) / "claims.md"
    text = "\n".join(lines) + "\n"
    if not target.exists() or target.read_text() != text:
        target.write_text(text)


def setup(app):
    app.connect("builder-inited", _write)
    return {"parallel_read_safe": True}
