"""``biasaudit list``: every registered claim (theory and experiment) with its paper, source, kind and origin.

``biasaudit list [--claims PATTERN] [--paper sam|eos] [--kind theory|experiment] [--json | --latex]``. The origin
says who states the claim: ``stated`` (by the paper; the source names the section), ``derived`` (by us,
from those statements) or ``reported`` (a measurement made here, stated so that it can be refuted).
"""

from __future__ import annotations

import json

__all__ = ["register", "run"]


def register(sub) -> None:
    """Add ``biasaudit list`` and its options to the subparsers ``sub``."""
    p = sub.add_parser("list", help="list every claim (theory and experiment) with its source and origin")
    p.add_argument("--claims", metavar="PATTERN", help="comma-separated globs of claim ids, e.g. 'sam.l2.*', or "
                                                         "a claim module file or folder of your own")
    p.add_argument("--paper", help="only this paper's claims (sam, eos, or a plugin's paper)")
    p.add_argument("--kind", choices=("theory", "experiment"), help="only this kind of claim")
    output = p.add_mutually_exclusive_group()  # one output format at a time
    output.add_argument("--json", action="store_true",
                        help="print a JSON list of {id, paper, kind, origin, source, title, module, line} (module: "
                             "the file that defines the claim, relative to the repository root)")
    output.add_argument("--latex", action="store_true",
                        help="print every statement with its hypotheses as a LaTeX itemize list (needs amsmath)")
    p.set_defaults(run=run)


def rows(claims) -> list[dict]:
    return [{"id": c.id, "paper": c.paper, "kind": c.kind, "origin": c.origin, "source": c.source, "title": c.title,
             "module": c.module_path(), "line": c.line} for c in claims]


def select_in_scope(pattern: str | None, paper: str | None = None, kind: str | None = None,
                    extra: tuple[str, ...] = ()) -> list:
    """``select_claims`` (with the ``extra`` claim modules), but a pattern that matches nothing under a
    ``paper``/``kind`` filter says so and names the closest ids of that selection."""
    from biasaudit.plumbing import InputError
    from biasaudit.registry import did_you_mean, select_claims

    try:
        return select_claims(pattern, paper=paper, kind=kind, extra=extra)
    except InputError as exc:
        if exc.name != "claims" or (paper is None and kind is None):
            raise
    scope = " and ".join(f"{what} {value}" for what, value in (("paper", paper), ("kind", kind)) if value)
    scoped = select_claims(None, paper=paper, kind=kind, extra=extra)
    raise InputError("claims", f"matches no registered claim of {scope}; {did_you_mean(pattern, scoped)}", pattern)


def run(args) -> int:
    """Print the selected claims: a table with counts by kind and origin, JSON (``--json``) or a LaTeX list
    (``--latex``)."""
    from biasaudit.plumbing import claim_pattern
    from biasaudit.registry import claims_option, extra_modules_from_env

    option = claims_option(claim_pattern("claims", args.claims))
    claims = select_in_scope(option.pattern, paper=args.paper, kind=args.kind,
                             extra=extra_modules_from_env() + option.files)
    if args.latex:
        print("\\begin{itemize}")
        for c in claims:
            title = c.title.replace("\\", "\\textbackslash{}")
            for ch in "&%$#_{}":
                title = title.replace(ch, "\\" + ch)
            print(f"  \\item \\texttt{{{c.id.replace('_', chr(92) + '_')}}} ({c.origin}): {title}\\\\")
            print(f"    $\\displaystyle {c.latex()}$")
        print("\\end{itemize}")
        return 0
    table = rows(claims)
    if args.json:
        print(json.dumps(table, indent=1, ensure_ascii=False))
        return 0
    width = max(len(r["id"]) for r in table)
    for r in table:
        print(f"{r['id']:{width}s}  {r['paper']:3s}  {r['kind']:10s}  {r['origin']:8s}  {r['source']}")
    counts = {}
    for r in table:
        counts[(r["kind"], r["origin"])] = counts.get((r["kind"], r["origin"]), 0) + 1
    print(f"\n{len(table)} claims: " + ", ".join(f"{n} {kind} {origin}" for (kind, origin), n in sorted(counts.items())))
    return 0
