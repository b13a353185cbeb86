"""``biasaudit bench``: the speed targets of every issue, measured as ratios in one run."""

from __future__ import annotations

import fnmatch
import json
import sys

__all__ = ["register", "run"]


def register(sub) -> None:
    """Add ``biasaudit bench`` and its options to the subparsers ``sub``."""
    p = sub.add_parser("bench", help="run the benchmarks and print ratios against their targets")
    p.add_argument("--cases", metavar="PATTERN",
                   help="comma-separated globs of case names, e.g. 'audit.*' (default, or an empty value: every case)")
    p.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run; targets still judged)")
    p.add_argument("--json", action="store_true",
                   help="print {case: {timings_s, targets, notes}} as JSON instead of the text report "
                        "(not with --list)")
    p.add_argument("--list", action="store_true",
                   help="list the selected case names with their descriptions and exit, running nothing")
    p.set_defaults(run=run)


def run(args) -> int:
    """Run the selected benchmark cases and print their timings and targets (text or JSON), or list them (``--list``);
    the exit status is 0 whether or not a target is met."""
    from biasaudit.benchmarks import all_cases
    from biasaudit.plumbing import InputError

    for flag, given in (("json", args.json), ("quick", args.quick)):
        if args.list and given:
            raise InputError(flag, f"not allowed with --list (--list runs nothing and does not read --{flag})")
    cases = all_cases()
    if args.cases:
        globs = [g.strip() for g in args.cases.split(",") if g.strip()]
        cases = [c for c in cases if any(fnmatch.fnmatchcase(c.name, g) for g in globs)]
        if not cases:
            raise InputError("cases", f"matches no benchmark; known: {', '.join(c.name for c in all_cases())}",
                             args.cases)
    if args.list:
        for case in cases:
            print(f"{case.name:32s} {case.description}")
        return 0
    report = {}
    for case in cases:
        print(f"bench {case.name} ...", file=sys.stderr, flush=True)
        result = case.run(args.quick)
        report[case.name] = result.to_json()
        if not args.json:
            print(f"\n== {case.name}: {case.description}")
            for name, seconds in result.timings.items():
                print(f"  {name:44s} {seconds * 1e3:12.3f} ms (median)")
            for t in result.targets:
                status = "met" if t.met else "NOT MET"
                print(f"  {t.name:44s} {t.value:12.4g} {t.unit}  target {t.op} {t.bound:g}  [{status}]")
            for note in result.notes:
                print(f"  note: {note}")
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
    return 0
