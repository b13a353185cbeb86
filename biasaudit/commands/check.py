"""``biasaudit check``: run the property-based theorem checks and print a verdict table."""

from __future__ import annotations

import argparse
import json
import math
import sys

__all__ = ["register", "run", "EXIT_STATUS"]

EXIT_STATUS = """exit status:
  0  the checks ran, whatever their verdicts (a refuted, undecided or error claim included: add --strict)
  1  with --strict: some claim is not confirmed; with --stability: a fragile claim; with --tolerance-x10:
     a verdict inconsistent with its stated reason
  2  bad input (one line on stderr)
  130 interrupted"""


def register(sub) -> None:
    """Add ``biasaudit check`` and its options to the subparsers ``sub``."""
    p = sub.add_parser("check", help="run the property-based theorem checks (theory claims)",
                       epilog=EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--profile", choices=("ci", "thorough"),
                   help="ci: a few samples per claim; thorough: many (default: ci; not with --stability, "
                        "--tolerance-x10, --coverage or --list, which choose their own)")
    p.add_argument("--claims", metavar="PATTERN", help="comma-separated globs of claim ids, e.g. 'sam.l2.*', or "
                                                         "a claim module file or folder of your own, e.g. "
                                                         "myclaims/gd_quadratic.py (no packaging needed)")
    p.add_argument("--paper", help="only this paper's claims (sam, eos, or a plugin's paper)")
    p.add_argument("--seed", type=int, help="sampling seed (default: 0; not with --stability, which reads --seeds)")
    p.add_argument("--json", action="store_true", help="print {claims: [...], summary: {...}} as JSON "
                                                       "(not with --list)")
    p.add_argument("--strict", action="store_true", help="exit 1 unless every claim is confirmed (not with "
                                                         "--stability, --tolerance-x10, --coverage or --list)")
    # the modes: each runs the claims its own way, so at most one of them
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true", help="list the claim ids and exit")
    mode.add_argument("--no-references", action="store_true",
                      help="drop the reference values: the sampled cases alone must decide (power check)")
    mode.add_argument("--stability", action="store_true",
                      help="run each claim at profile ci for every --seeds and at thorough for the first seed; "
                           "list the claims whose verdict changes (fragile) and exit 1 if there is one")
    mode.add_argument("--tolerance-x10", action="store_true",
                      help="run each claim (no references) at its tolerance and at 10x it, and once at thorough "
                           "for its slack (tolerance / worst error); exit 1 if a verdict that should turn does "
                           "not, turns where the claim states why it cannot, or a slack above 100 has no reason")
    mode.add_argument("--coverage", action="store_true",
                      help="run each claim at profile ci under coverage.py and report, per module of theory/ and "
                           "numerics/, the share of lines and branches the claims execute, and the public "
                           "functions none reaches; exit 1 below 95 %% of the lines or for an unreached function "
                           "with no listed reason")
    p.add_argument("--seeds", metavar="LIST",
                   help="seeds for --stability only (distinct comma-separated integers, default 0,1,2,3,4)")
    p.set_defaults(run=run)


def run(args) -> int:
    """Check the selected theory claims and print the verdict table (or JSON), or run the power checks ``--stability``
    and ``--tolerance-x10``. Exit status 1 with ``--strict`` unless every claim is confirmed, else 0."""
    from biasaudit.commands.list import select_in_scope
    from biasaudit.ledger import Verdict, run_claim
    from biasaudit.plumbing import InputError, claim_pattern
    from biasaudit.registry import claims_option, extra_modules_from_env

    refuse_ignored_flags(args)
    seed = 0 if args.seed is None else args.seed
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError("seed", "must be an integer >= 0", seed)
    profile = args.profile or "ci"
    seeds = parse_seeds(args.seeds) if args.seeds is not None else None  # None: the stability default
    option = claims_option(claim_pattern("claims", args.claims))
    claims = select_in_scope(option.pattern, paper=args.paper, kind="theory",
                             extra=extra_modules_from_env() + option.files)
    if args.stability:
        return run_stability(claims, args, seeds)
    if args.tolerance_x10:
        return run_tolerance_x10(claims, args, seed)
    if args.coverage:
        return run_coverage(claims, args, seed)
    if args.list:
        for claim in claims:
            print(f"{claim.id:40s} {claim.title}")
        return 0
    results = []
    for i, claim in enumerate(claims, 1):
        if not args.json:
            print(f"[{i}/{len(claims)}] {claim.id} ...", file=sys.stderr, flush=True)
        try:
            results.append(run_claim(claim, profile=profile, seed=seed,
                                     references=not args.no_references).to_json())
        except Exception as exc:  # noqa: BLE001 - a broken check is recorded, never counted as a pass
            results.append({"claim_id": claim.id, "paper": claim.paper, "verdict": str(Verdict.ERROR),
                            "detail": f"{type(exc).__name__}: {exc}"})
    results = [{"id": r["claim_id"], **r} for r in results]  # `id` is the documented key; claim_id kept too
    summary = {v.value: sum(r["verdict"] == v.value for r in results) for v in Verdict}
    summary["total"] = len(results)
    if args.json:
        json.dump({"claims": results, "summary": summary}, sys.stdout, indent=1)
        print()
    else:
        print(format_table(results))
        print(", ".join(f"{k}: {v}" for k, v in summary.items() if v or k == "total"))
    if args.strict and summary["confirmed"] != len(results):
        return 1
    return 0


def format_table(results: list[dict]) -> str:
    from biasaudit.audit.evidence_view import tidy_prose

    order = {"refuted": 0, "error": 1, "undecided": 2, "out-of-scope": 3, "confirmed": 4}
    rows = sorted(results, key=lambda r: (order.get(r["verdict"], 9), r["claim_id"]))
    width = max([len(r["claim_id"]) for r in rows] + [5])
    lines = [f"{'claim':{width}s}  {'verdict':12s}  {'error':>10s}  {'tol':>8s}  detail"]
    for r in rows:
        err = r.get("error")
        tol = (r.get("tolerance") or {}).get("value")
        detail = tidy_prose((r.get("detail") or "").replace("\n", " "))  # no dict reprs or float noise
        lines.append(f"{r['claim_id']:{width}s}  {r['verdict']:12s}  {_number(err):>10s}  {_number(tol):>8s}  "
                     f"{_clip(detail, DETAIL_WIDTH)}")
    return "\n".join(lines)


DETAIL_WIDTH = 90


def _number(value) -> str:
    """A number that keeps its value: 0.25 stays 0.25 (not 2e-01), 1e-12 stays 1e-12; '-' for none."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "-"
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    return f"{value:.3g}"


def _clip(text: str, width: int) -> str:
    """``text`` cut at a word boundary within ``width`` characters, marked with an ellipsis."""
    if len(text) <= width:
        return text
    cut = text[: width - 1].rsplit(" ", 1)[0]
    return cut + " …"


def refuse_ignored_flags(args) -> None:
    """A flag the chosen mode never reads is an error naming both flags, not silently dropped. (Two modes at
    once are refused by argparse: they are one mutually exclusive group.)"""
    from biasaudit.plumbing import InputError

    mode = ("stability" if args.stability else "tolerance-x10" if args.tolerance_x10
            else "coverage" if args.coverage else "list" if args.list else None)
    if args.seeds is not None and mode != "stability":
        raise InputError("seeds", "applies to --stability only (give --stability, or leave out --seeds)",
                         args.seeds)
    if mode is None:
        return
    ignored = {"profile": args.profile is not None,  # the modes choose their profiles themselves
               "seed": args.seed is not None and mode not in ("tolerance-x10", "coverage"),
               "strict": args.strict,  # the modes have exit statuses of their own
               "json": args.json and mode == "list"}
    for flag, given in ignored.items():
        if given:
            raise InputError(flag, f"not allowed with --{mode} (--{mode} does not read --{flag})")


def parse_seeds(text: str) -> tuple[int, ...]:
    from biasaudit.plumbing import InputError

    try:
        seeds = tuple(int(t) for t in text.split(","))
    except ValueError:
        raise InputError("seeds", "must be comma-separated non-negative integers", text) from None
    if not seeds or any(s < 0 for s in seeds):
        raise InputError("seeds", "must be comma-separated non-negative integers", text)
    repeated = sorted({s for s in seeds if seeds.count(s) > 1})
    if repeated:  # a seed run twice adds nothing to the stability check
        raise InputError("seeds", f"must not repeat a seed ({', '.join(map(str, repeated))} given more than once)",
                         text)
    return seeds


def run_stability(claims, args, seeds: tuple[int, ...] | None) -> int:
    from biasaudit.stability import DEFAULT_SEEDS, verdict_stability

    seeds = seeds or DEFAULT_SEEDS
    progress = None if args.json else (lambda text: print(f"  {text} ...", file=sys.stderr, flush=True))
    rows = verdict_stability(claims, seeds=seeds, progress=progress)
    fragile = [r for r in rows if not r.stable]
    if args.json:
        json.dump({"claims": [r.to_json() for r in rows], "fragile": [r.claim_id for r in fragile]}, sys.stdout,
                  indent=1)
        print()
    else:
        width = max([len(r.claim_id) for r in rows] + [5])
        plan = ", ".join(f"{p}/{s}" for p, s, _, _ in rows[0].runs) if rows else ""
        print(f"{'claim':{width}s}  stable  verdicts ({plan})")
        for r in sorted(rows, key=lambda r: (r.stable, r.claim_id)):
            print(f"{r.claim_id:{width}s}  {'yes' if r.stable else 'NO':6s}  {' '.join(v for _, _, v, _ in r.runs)}")
        print(f"fragile: {len(fragile)} of {len(rows)}")
    return 1 if fragile else 0


def run_tolerance_x10(claims, args, seed: int) -> int:
    from biasaudit.ledger import MAX_SLACK
    from biasaudit.stability import tolerance_sensitivity

    progress = None if args.json else (lambda text: print(f"  {text} ...", file=sys.stderr, flush=True))
    rows = tolerance_sensitivity(claims, seed=seed, progress=progress)
    bad = [r for r in rows if not r.consistent]
    if args.json:
        json.dump({"claims": [r.to_json() for r in rows], "inconsistent": [r.claim_id for r in bad]}, sys.stdout,
                  indent=1)
        print()
    else:
        width = max([len(r.claim_id) for r in rows] + [5])
        print(f"{'claim':{width}s}  {'tol':>8s}  {'worst':>8s}  {'slack':>8s}  {'control':>8s}  {'verdict':10s}  "
              f"{'at 10x':10s}  ok   why 10x changes nothing")

        def num(v):
            return f"{v:8.1e}" if isinstance(v, (int, float)) else f"{'-':>8s}"

        for r in sorted(rows, key=lambda r: (r.consistent, not r.changes, r.claim_id)):
            why = r.at_10x if r.at_10x else ("(turns: the tolerance decides)" if r.changes else "(no reason stated)")
            if r.slack_unexplained:
                why = f"slack above {MAX_SLACK:g} with no reason stated; " + why
            print(f"{r.claim_id:{width}s}  {r.tolerance:8.1e}  {num(r.worst_case_error)}  {num(r.slack)}  "
                  f"{num(r.weakest_control_error)}  {r.verdict:10s}  {r.loosened_verdict:10s}  "
                  f"{'yes' if r.consistent else 'NO':4s} {why[:70]}")
        turned = sum(r.changes for r in rows)
        print(f"10x tolerance turns {turned} of {len(rows)} verdicts; inconsistent with the stated reasons: "
              f"{len(bad)}")
    return 1 if bad else 0


def run_coverage(claims, args, seed: int) -> int:
    import importlib.util

    from biasaudit.claim_coverage import LINE_SHARE_TARGET, claim_coverage, problems
    from biasaudit.plumbing import InputError

    if importlib.util.find_spec("coverage") is None:
        raise InputError("coverage", "needs coverage.py (pip install 'coverage>=7.6', or the test extras)")
    if not args.json:
        print(f"running {len(claims)} claims (profile ci) under coverage.py ...", file=sys.stderr, flush=True)
    report = claim_coverage([c.id for c in claims], seed=seed)
    failing = problems(report)
    if args.json:
        json.dump({**report, "target": LINE_SHARE_TARGET, "problems": failing}, sys.stdout, indent=1)
        print()
    else:
        width = max([len(m) for m in report["modules"]] + [6])
        print(f"{'module':{width}s}  {'lines':>6s}  {'run':>6s}  {'share':>6s}  {'branches':>8s}  {'share':>6s}")
        for name, row in report["modules"].items():
            print(f"{name:{width}s}  {row['lines']:6d}  {row['executed']:6d}  {_share_text(row['line_share'])}  "
                  f"{row['branches']:8d}  {_share_text(row['branch_share'])}")
        kernels = report["kernels"]
        print(f"lines: {_share_text(report['line_share'])} of {report['lines']} (target {LINE_SHARE_TARGET:.0%}); "
              f"branches: {_share_text(report['branch_share'])}; numba kernels reached: {kernels['reached']} of "
              f"{kernels['total']} ({report['jit']})")
        print(f"excluded: {report['excluded']['lines']} lines, {report['excluded']['rule']}")
        environment = report["excluded"]["environment"]
        print(f"excluded: {', '.join(environment['modules'])}: {environment['rule']}")
        for row in report["unreached"]:
            print(f"unreached {row['function']}: {row['reason'] or 'NO REASON LISTED'}")
        for text in failing:
            print(f"problem: {text}")
    return 1 if failing else 0


def _share_text(share) -> str:
    return f"{'-':>6s}" if share is None else f"{share:6.1%}"
