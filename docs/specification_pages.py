"""A small Sphinx extension: the generated parts of the documentation, written from the claim registry before
each build (``builder-inited``), so that they cannot go stale.

It writes

* ``specification/_generated_<paper>.md`` for each paper in :data:`PAPERS`: every registered claim of that
  paper, grouped as the paper groups its results, with its id, title, kind, origin, where it comes from, its
  statement and hypotheses in LaTeX (``claim.latex()``), its named tolerance and the reason for it, and its
  reference values (``claim.references``) with their provenance. The hand-written pages
  ``specification/<paper>.md`` include these files;
* ``claims.md``: one table of every registered claim (plugins included), each id linked to its entry.

Only the public registry API is used (``biasaudit.registry.all_claims()`` and the attributes of a claim), so
moving a claim between modules changes nothing here. The registry's prose is shown as it is: it names only what
a reader of the repository can open (the papers' sections, notes/ files); tests/test_docs.py checks that.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

PAPERS = {
    "sam": 'Paper 1: "Minor First, Major Last" (SAM on deep diagonal linear networks)',
    "eos": 'Paper 2: "Conflicting Biases at the Edge of Stability"',
}

# Claim groups in the order of each page, matched by the longest id prefix; a claim that matches none lands in
# the paper's last group ("Other claims"), so a new claim always appears.
GROUPS = {
    "sam": (
        ("Setting: the exact facts and the discrete algorithms", ("sam.flow.", "sam.discrete.")),
        ("A. Depth one", ("sam.depth1.",)),
        ("Gradient descent, the baseline", ("sam.gd.",)),
        ("B. l∞-SAM at depth two and more", ("sam.linf.",)),
        ("C. l2-SAM at depth two", ("sam.l2.",)),
        ("l2-SAM at depth L > 2", ("sam.l2.deep_",)),
        ("D. Experiments on networks", ("sam.torch.",)),
        ("Other claims", ()),
    ),
    "eos": (
        ("The Hessian on and off the solution set", ("eos.hessian.",)),
        ("Minimizers and the Pareto front", ("eos.min_norm.", "eos.min_sharpness.", "eos.minimizers.",
                                             "eos.pareto.")),
        ("Linearly stable minima", ("eos.stable_minima.",)),
        ("Gradient flow", ("eos.gf.",)),
        ("The gradient-flow sharpness s_GF and the critical step", ("eos.s_gf.",)),
        ("Gradient descent on the toy model", ("eos.gd.",)),
        ("Risk", ("eos.risk.",)),
        ("Deep shared weights", ("eos.deep.",)),
        ("Experiments on networks (E1 to E5)", ("eos.torch.",)),
        ("Other claims", ()),
    ),
}

ORIGINS = {
    "stated": "stated by the paper",
    "derived": "derived here from the paper's statements",
    "reported": "reported (a measurement made here, stated so that it can be refuted)",
}

PROVENANCE_WORDS = {"derived": "derived here", "stated": "stated by the paper", "measured": "measured here"}

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|$#~])")


def md_text(text: str | None) -> str:
    """Registry prose as literal Markdown (every character that Markdown or MyST would read escaped), its powers and
    indices (``alpha_j^{2-L}``, :mod:`biasaudit.audit.prose_math`) as inline math that the build renders."""
    from biasaudit.audit.prose_math import script_tex, split_scripts

    return "".join(f"${script_tex(piece)}$" if is_script else _MD_SPECIAL.sub(r"\\\1", piece)
                   for is_script, piece in split_scripts((text or "").strip()))


def _number(value) -> str:
    value = float(value)
    if value == 0:
        return "0"
    if math.isinf(value) or math.isnan(value):
        return str(value)
    return f"{value:.10g}"


def _tolerance(value) -> str:
    value = float(value)
    return "0" if value == 0 else f"{value:.3g}"


def _value(value) -> str:
    """A parameter or expected value in plain, short text."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, dict):
        return ", ".join(f"{k} = {_value(v)}" for k, v in value.items())
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_value(v) for v in value) + ")"
    if hasattr(value, "tolist"):
        return _value(value.tolist())
    return str(value)


def _code(text: str) -> str:
    """Inline code that is safe inside a Markdown table."""
    text = text.replace("|", "\\|").replace("`", "'")
    return f"`{text}`"


def label(claim_id: str) -> str:
    """The Sphinx label of a claim's entry (``claim-sam-l2-regime3``)."""
    return "claim-" + re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")


def group_of(claim, paper: str) -> str:
    best, best_len = GROUPS[paper][-1][0], -1
    for title, prefixes in GROUPS[paper]:
        for prefix in prefixes:
            if claim.id.startswith(prefix) and len(prefix) > best_len:
                best, best_len = title, len(prefix)
    return best


def claim_lines(claim) -> tuple[list[str], list[str]]:
    """The Markdown of one claim's entry, and the problems found (a reference with no provenance)."""
    problems = []
    lines = [f"({label(claim.id)})=", f"#### `{claim.id}`", "", f"*{md_text(claim.title)}*", "",
             f"**Kind:** {claim.kind}. **Origin:** {ORIGINS.get(claim.origin, claim.origin)}. "
             f"**Where it comes from:** {md_text(claim.source)}.", "",
             "$$", claim.latex(), "$$", "",
             f"**Tolerance:** `{claim.tolerance.name}` = {_tolerance(claim.tolerance.value)}: "
             f"{md_text(claim.tolerance.reason)}", ""]
    if claim.notes:
        lines += [f"**Notes:** {md_text(claim.notes)}", ""]
    if claim.references:
        lines += ["**Reference values** (the check runs each one besides its sampled cases):", "",
                  "| parameters | expected | within | from | note |", "| --- | --- | --- | --- | --- |"]
        for index, ref in enumerate(claim.references):
            prov = ref.origin
            if prov not in PROVENANCE_WORDS:
                problems.append(f"{claim.id}: reference {index + 1} states no origin (Reference(origin=...))")
            lines.append(f"| {_code(_value(ref.params))} | {_code(_value(ref.expected))} | "
                         f"{_tolerance(ref.tolerance)} | {PROVENANCE_WORDS.get(prov, 'not stated')} | "
                         f"{md_text(ref.note)} |")
        lines.append("")
    else:
        lines += ["No reference values: its sampled cases and negative controls decide.", ""]
    return lines, problems


def paper_page(claims, paper: str) -> tuple[str, list[str]]:
    mine = [c for c in claims if c.paper == paper]
    groups: dict[str, list] = {title: [] for title, _ in GROUPS[paper]}
    for claim in mine:
        groups[group_of(claim, paper)].append(claim)
    n_theory = sum(c.kind == "theory" for c in mine)
    lines = ["<!-- Generated by docs/specification_pages.py from the claim registry at each build; do not edit. -->",
             "", "## Every claim of this paper, as registered", "",
             f"{len(mine)} claims: {n_theory} theory, {len(mine) - n_theory} experiment. Each entry below is "
             "written from the claim registry at each build of these pages.", ""]
    problems = []
    for title, members in groups.items():
        if not members:
            continue
        lines += [f"### {title}", ""]
        for claim in members:
            more, found = claim_lines(claim)
            lines += more
            problems += found
    return "\n".join(lines) + "\n", problems


def claims_index(claims) -> str:
    lines = ["# Every claim", "",
             "Every claim biasaudit checks, as registered in this version (`biasaudit list` prints the same), "
             "each linked to its entry in the [specification](specification/index.md) with its statement, "
             "tolerance and reference values. The verdicts come from running them: `biasaudit audit` writes a "
             "report with each verdict and its evidence (the verdicts of the last audit are in "
             "`notes/status.md`). *Origin*: stated by the paper, derived here from the paper's statements, or "
             "reported (a measurement made while building this project, stated so that it can be refuted).", ""]
    by_paper: dict[str, list] = {}
    for claim in claims:
        by_paper.setdefault(claim.paper, []).append(claim)
    for paper, members in by_paper.items():
        lines += [f"## {PAPERS.get(paper, paper)}", "", "| claim | kind | origin | title |", "| --- | --- | --- | --- |"]
        for claim in members:
            name = f"{{ref}}`{claim.id} <{label(claim.id)}>`" if paper in PAPERS else f"`{claim.id}`"
            lines.append(f"| {name} | {claim.kind} | {claim.origin} | {md_text(claim.title)} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def _write_if_changed(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


def _write(app):
    from sphinx.util import logging

    from biasaudit.registry import all_claims

    logger = logging.getLogger(__name__)
    claims = all_claims()
    src = Path(app.srcdir)
    for paper in PAPERS:
        text, problems = paper_page(claims, paper)
        for problem in problems:
            logger.warning(problem)
        _write_if_changed(src / "specification" / f"_generated_{paper}.md", text)
    _write_if_changed(src / "claims.md", claims_index(claims))


def setup(app):
    app.connect("builder-inited", _write)
    return {"parallel_read_safe": True}
