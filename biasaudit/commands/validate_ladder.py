"""``biasaudit validate ladder``: "minor first, major last" on one model of the ladder, with its three-way decision.

Trains (or reads from the run cache) SAM and GD at the chosen multiple of SAM's boundary α_50 with the data-control
arms, and prints the seed-level decision of one statistic with its data controls: what the claims
``sam.torch.minor_first_major_last.*`` read, with the seeds, horizon, statistic, controls and margin open to change.
Every input is checked before any training (exit 2, one line naming the parameter). torch is imported inside ``run``.
"""

from __future__ import annotations

import json
import sys

__all__ = ["register", "run"]


def register(sub) -> None:
    """Add ``ladder`` and its options to the targets ``sub`` of ``biasaudit validate``."""
    p = sub.add_parser("ladder", help="minor first, major last on the diagonal net, the gated CNN, the CNN or the gated CNN on "
                                      "planted MNIST: the "
                                      "seed-level decision of one statistic with its data controls")
    p.add_argument("--model", default="diag", help="diag | gated_cnn | cnn | mnist_planted (default: diag, the positive control)")
    p.add_argument("--tier", default="quick", help="quick | full (default: quick)")
    p.add_argument("--multiple", default="primary",
                   help="where to read, in units of alpha_50: near (1.1), primary (1.5), gd_like (3) (default: primary)")
    p.add_argument("--statistic", default="did",
                   help="did (difference-in-differences, the claims') | early_difference | dominance (default: did)")
    p.add_argument("--metric", default="minor_margin_share",
                   help="minor_margin_share | grad_minor_share (default: minor_margin_share)")
    p.add_argument("--controls", default=None,
                   help="comma-separated data controls among aa, randsam, equal, swapped (default: the model's: "
                        "all four on the patch images, aa and randsam on mnist_planted)")
    p.add_argument("--delta", type=float, default=None, help="equivalence margin > 0 (default: the claims', 0.024)")
    p.add_argument("--seeds", type=int, default=None, help="number of paired seeds, at least 3 (default: the tier's)")
    p.add_argument("--horizon", type=int, default=None,
                   help="most steps per run; must cover the evaluation schedule (default: the model's)")
    p.add_argument("--direction", type=int, default=1, help="predicted side of the statistic, +1 or -1 (default: +1)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    """Check every input, then train or read the runs and print the decision (exit 0 whatever the verdict)."""
    from biasaudit.claims.sam.torch.ladder import DELTA, ladder_decision
    from biasaudit.plumbing import InputError, jsonable
    from biasaudit.validation.decision import gated_verdict

    controls = None
    if args.controls is not None:
        controls = [c.strip() for c in args.controls.split(",")]
        if not all(controls):
            raise InputError("controls", "must be comma-separated names with no empty item", args.controls)
    if args.direction not in (1, -1):
        raise InputError("direction", "must be +1 or -1", args.direction)
    seeds = None if args.seeds is None else tuple(range(args.seeds))
    r = ladder_decision(args.model, args.tier, multiple=args.multiple, direction=args.direction,
                        statistic=args.statistic, metric=args.metric, controls=controls,
                        delta=DELTA if args.delta is None else args.delta, seeds=seeds, horizon=args.horizon)
    decision = r["decision"]
    verdict, why = gated_verdict(decision, r["controls"], None)
    if args.json:
        out = {**{k: v for k, v in r.items() if k not in ("decision", "controls")},
               "decision": decision.to_json(), "controls": [c.to_json() for c in r["controls"]],
               "verdict": verdict, "why": why}
        json.dump(jsonable(out), sys.stdout, indent=1)
        print()
        return 0
    lo, hi = decision.interval
    print(f"validate ladder: {r['model']} at alpha = {r['alpha']:.4g} ({r['multiple']}), tier {args.tier}, "
          f"horizon {r['horizon']} steps")
    print(f"  {r['statistic']} of {r['metric']}: {decision.mean:+.4f} [{lo:+.4f}, {hi:+.4f}] over {decision.n} "
          f"seeds ({len(r['missing'])} pairs without a fitted run); {decision.verdict} by '{decision.rule}' "
          f"(delta {r['delta']:g})")
    for c in r["controls"]:
        print(f"  control {c.name} ({c.reads}): {c.mean:+.4f} [{c.interval[0]:+.4f}, {c.interval[1]:+.4f}] "
              f"{'within' if c.equivalent else 'NOT within'} +-{c.margin:g}")
    print(f"  verdict: {verdict} ({why}); power at delta {r['power_at_delta']:.0%}")
    return 0
