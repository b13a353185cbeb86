"""``biasaudit sweep eos``: a learning-rate sweep of GD on paper 2's toy model (numba), with an optional plot."""

from __future__ import annotations

import json
import sys

__all__ = ["register", "run", "PLOT_SUFFIXES"]

PLOT_SUFFIXES = (".png", ".pdf", ".svg")  # matplotlib writes each from the file name


def register(sub) -> None:
    """Add ``biasaudit sweep`` and its target ``eos`` to the subparsers ``sub``."""
    p = sub.add_parser("sweep", help="learning-rate sweeps of GD (paper 2 toy model)")
    targets = p.add_subparsers(dest="target", metavar="MODEL", parser_class=type(p))
    targets.required = True
    e = targets.add_parser("eos", help="GD on f = <w*w, x> at n step sizes: final sharpness, norms, outcome class")
    e.add_argument("--x", required=True, help="data point, comma-separated, all > 0 (magnitudes in [1e-30, 1e30], "
                                              "as for every number below)")
    e.add_argument("--y", required=True, help="label, > 0")
    e.add_argument("--w0", required=True, help="initial weights, comma-separated, non-zero; one number is used for every "
                                               "coordinate (e.g. 0.05)")
    e.add_argument("--eta-min", required=True, help="smallest step size, > 0")
    e.add_argument("--eta-max", required=True, help="largest step size, > eta-min")
    e.add_argument("--n", type=int, default=400, help="number of step sizes (default 400)")
    e.add_argument("--steps", type=int, default=100_000,
                   help="maximum GD steps per run (default 1e5, at most 1e8, and n*steps*(d+2) at most 6e12: "
                        "about an hour); a run that ends still settling is reported 'unsettled'")
    e.add_argument("--loss-factor", default="0.5", help="c in L = c r^2 (default 0.5)")
    e.add_argument("--json", action="store_true", help="print every run as JSON")
    e.add_argument("--plot", metavar="FILE", help="write the sharpness/norm/outcome figure (.png, .pdf or .svg)")
    e.set_defaults(run=run)


def run(args) -> int:
    """Sweep GD on the toy model over ``--n`` step sizes in [eta_min, eta_max] (inputs and memory checked first) and
    print the result as text or JSON; ``--plot`` also saves the figure."""
    from biasaudit.plumbing import (broadcast_vector, finite_scalar, fits_in_memory, parse_float_list, positive_int,
                                    writable_file)

    from biasaudit.plumbing.ranges import ZERO_CHECKED_LATER, in_range, vector_in_range

    x = vector_in_range("x", parse_float_list("x", args.x), zero=ZERO_CHECKED_LATER)
    w0 = vector_in_range("w0", broadcast_vector("w0", parse_float_list("w0", args.w0), len(x), "--x"), zero=ZERO_CHECKED_LATER)
    y = in_range("y", finite_scalar("y", args.y), zero=ZERO_CHECKED_LATER)
    eta_min = finite_scalar("eta_min", args.eta_min)
    eta_max = finite_scalar("eta_max", args.eta_max)
    for name, eta in (("eta_min", eta_min), ("eta_max", eta_max)):
        if eta > 0:  # <= 0: the sweep's own rule ("must be > 0") names it
            in_range(name, eta)
    n = positive_int("n", args.n, minimum=2)
    steps = positive_int("steps", args.steps)
    c = in_range("loss_factor", finite_scalar("loss_factor", args.loss_factor), zero=ZERO_CHECKED_LATER)
    if args.plot is not None:
        writable_file("plot", args.plot, suffix=PLOT_SUFFIXES)  # before the sweep, not after it
    # per step size: final w and beta (d each), ~12 scalar outputs, and the numba work arrays: 8 bytes each
    fits_in_memory("n", n, n * 8.0 * (6 * len(x) + 16))

    from biasaudit.numerics.eos_gd import bounded_steps  # imports numba: only once the cheap checks passed
    from biasaudit.numerics.eos_sweep import sweep_eos

    steps = bounded_steps("steps", steps, n, len(x))  # at most MAX_STEPS, and n*steps*(d+2) <= MAX_WORK

    sweep = sweep_eos(x, y, w0, eta_min, eta_max, n, loss_factor=c, max_steps=steps)
    if args.plot:
        from biasaudit.figures._common import pyplot
        from biasaudit.figures.eos import sweep_figure

        fig = sweep_figure(sweep)
        fig.savefig(args.plot, dpi=120)
        pyplot().close(fig)
        print(f"wrote {args.plot}", file=sys.stderr)
    if args.json:
        print(json.dumps(sweep.to_json(), indent=1))
        return 0
    print(format_sweep(sweep))
    return 0


def format_sweep(sweep) -> str:
    import numpy as np

    from biasaudit.numerics.eos_gd import OUTCOMES, UNSETTLED

    s, reg = sweep.gd, sweep.regimes
    lines = [
        f"GD sweep on f = <w*w, x>, L = {s.loss_factor:g} r^2: {s.eta.size} step sizes in "
        f"[{s.eta.min():.6g}, {s.eta.max():.6g}], at most {s.max_steps} steps, converged when |r| < {s.tol:.2g}",
        f"  theory: s_GF = {reg.s_gf:.6g}, eta_c = 2/s_GF = {reg.eta_c:.6g} ({reg.init_regime} init), "
        f"stable minima up to eta = {reg.eta_stable_max:.6g}",
        "  outcomes: " + ", ".join(f"{k}: {v}" for k, v in s.counts().items()),
    ]
    unsettled = s.outcome == UNSETTLED
    if s.converged.any():
        if not (~s.converged).any():
            lines.append("  GD converges at every eta of the sweep")
        else:  # a boundary only from a run that settled on not converging, with nothing unsettled below it
            first = int(np.argmin(np.where(s.converged, np.inf, s.eta)))
            if s.outcome[first] != UNSETTLED:
                lines.append(f"  GD converges for every eta below {s.eta[first]:.6g} "
                             f"(first non-converged run: {OUTCOMES[s.outcome[first]]})")
            else:
                lines.append(f"  no convergence boundary: the first non-converged run (eta = {s.eta[first]:.6g}) "
                             "is unsettled, more steps may make it converge")
    if unsettled.any():
        lines.append(f"  {int(unsettled.sum())} runs ran out of steps while still settling (unsettled, eta in "
                     f"[{s.eta[unsettled].min():.6g}, {s.eta[unsettled].max():.6g}]): raise --steps "
                     f"(now {s.max_steps}) to classify them")
    if sweep.kink is not None:
        lines.append(f"  measured kink of S_final(eta): {sweep.kink:.6g} ({sweep.kink / reg.eta_c - 1:+.2%} from eta_c)")
    if sweep.gap_median is not None:
        lines.append(f"  median 1 - eta S/2 of converged runs above 1.05 eta_c: {sweep.gap_median:.4f}")
    lines.append("")
    lines.append(f"  {'eta':>10s}  {'outcome':16s}  {'sharpness':>11s}  {'2/eta':>9s}  {'||beta||_1':>11s}  {'steps':>7s}")
    idx = np.unique(np.linspace(0, s.eta.size - 1, min(s.eta.size, 25)).astype(int))
    sharp, l1 = s.sharpness, s.beta_l1
    for i in idx:
        name = OUTCOMES[s.outcome[i]]
        shown = f"{sharp[i]:11.5g}" if name != "diverged" else f"{'-':>11s}"
        norm = f"{l1[i]:11.6g}" if name != "diverged" else f"{'-':>11s}"
        lines.append(f"  {s.eta[i]:10.6g}  {name:16s}  {shown}  {2 / s.eta[i]:9.5g}  {norm}  {s.steps[i]:7d}")
    return "\n".join(lines)
