"""``biasaudit validate eos``: full-batch GD learning-rate sweep with sharpness, and the E1–E5 numbers.

Every input is checked before any training (exit 2, one line): eta <= 0 or an empty grid, eps <= 0, an
unknown architecture, loss or dataset, cuda asked for where there is none. torch is imported inside ``run``.
Finished runs are stored atomically under ``--out`` (default: the cache dir), so a rerun resumes.
"""

from __future__ import annotations

import json
import math
import sys

__all__ = ["register", "run"]


def register(sub) -> None:
    """Add ``eos`` and its options to the targets ``sub`` of ``biasaudit validate``."""
    p = sub.add_parser("eos", help="full-batch GD eta sweep: sharpness vs 2/eta, norms, test error (paper 2)")
    p.add_argument("--arch", default="fcn",
                   help="fcn | cnn | resnet | vit | fcn_relu | resnet_nobn | resnet_fixednorm (default: fcn): the "
                        "tier's E2 sweep of that architecture (biasaudit.validation.eos_config.ARCH_SWEEP_CONFIGS; "
                        "fcn_relu: the FCN with ReLU; resnet_nobn: the ResNet without BatchNorm; resnet_fixednorm: "
                        "with its normalisation statistics fixed at the initialisation's); with ce, the FCN runs the "
                        "tier's cross-entropy sweep and the others their E2 setting with cross-entropy")
    p.add_argument("--loss", default="mse", help="mse | ce (default: mse)")
    p.add_argument("--dataset", default=None,
                   help="mnist5k | digits | fashion-mnist | mnist | cifar10 | svhn | teacher (default: the tier's)")
    p.add_argument("--data-dir", default=None, help="directory holding the dataset's files (mnist, cifar10, svhn)")
    p.add_argument("--tier", default="quick", choices=("quick", "full"), help="sweep size (default: quick)")
    p.add_argument("--eta-grid", default=None,
                   help="comma-separated multiples of the measured eta_c = 2/s_GF, each > 0 and given once "
                        "(default: the tier's coarse + fine grid); with --absolute, step sizes")
    p.add_argument("--absolute", action="store_true", help="--eta-grid holds step sizes, not multiples of eta_c")
    p.add_argument("--eps", type=float, default=None, help="loss threshold at which training stops (default: "
                   "the tier's: 1e-2 for mse)")
    p.add_argument("--gf-method", default=None,
                   help="gradient-flow proxy: gd | rk4 | exp | rkc (default: gd; exp steps the top eigenpairs "
                        "exactly; rkc is Runge-Kutta-Chebyshev, whose step is not capped by 2/S)")
    p.add_argument("--n-train", type=int, default=None)
    p.add_argument("--n-test", type=int, default=None)
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--dtype", default=None, help="float32 | float64 (default: float32)")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda (default: auto)")
    p.add_argument("--seeds", type=int, default=None,
                   help="run a seed study instead of one sweep: the sweeps of init seeds 0..N-1 (N >= 3; each its "
                        "own init, data subset and eta_c) and the audit's kink, tracking and plateau statistics with "
                        "their seed-level decisions (default: one sweep, seed 0)")
    p.add_argument("--out", default=None, help="directory for the runs (JSON), summary.json and the figures")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    """Run (or resume) the learning-rate sweep of the chosen architecture and loss and print s_GF, η_c, one row per run
    and the E1–E5 checks (or JSON); with ``--out`` also write ``summary.json`` and the figures."""
    from biasaudit.plumbing import atomic_write_text
    from biasaudit.plumbing import InputError, choice, parse_float_list, positive_scalar

    from biasaudit.validation.eos_config import ARCHS_E2

    choice("arch", args.arch, ARCHS_E2)
    choice("loss", args.loss, ("mse", "ce"))
    overrides: dict = {}  # the network comes from the architecture's E2 setting
    if args.dataset is not None:
        choice("dataset", args.dataset, ("mnist5k", "digits", "fashion-mnist", "mnist", "cifar10", "svhn",
                                         "teacher"))
        overrides["dataset"] = args.dataset
    if args.eps is not None:
        from biasaudit.plumbing.ranges import in_range

        overrides["eps"] = in_range("eps", positive_scalar("eps", args.eps))
    if args.eta_grid is not None:
        from biasaudit.plumbing.inputs import distinct_values
        from biasaudit.plumbing.ranges import ZERO_CHECKED_LATER, vector_in_range

        grid = parse_float_list("eta_grid", args.eta_grid)
        vector_in_range("eta_grid", grid, zero=ZERO_CHECKED_LATER)  # <= 0 is named by the rule below
        if (grid <= 0).any():
            raise InputError("eta", "every step size (or multiple of eta_c) must be > 0", args.eta_grid)
        distinct_values("eta_grid", grid)  # a repeated eta would be one run listed twice
        if (grid[1:] <= grid[:-1]).any():  # a sweep is read in order of eta: say so rather than reorder silently
            raise InputError("eta_grid", "must be increasing", args.eta_grid)
        overrides.update(coarse=tuple(float(g) for g in grid), fine=(), absolute=bool(args.absolute))
    elif args.absolute:
        raise InputError("absolute", "needs --eta-grid with the step sizes")
    from biasaudit.plumbing.ranges import MAX_EXAMPLES, MAX_STEPS, count_in_range

    for name, maximum in (("n_train", MAX_EXAMPLES), ("n_test", MAX_EXAMPLES), ("max_steps", MAX_STEPS)):
        value = getattr(args, name)
        if value is not None:
            overrides[name] = count_in_range(name, value, maximum)
    n_seeds = None
    if args.seeds is not None:
        from biasaudit.plumbing.ranges import MAX_SEEDS

        n_seeds = count_in_range("seeds", args.seeds, MAX_SEEDS)
        if n_seeds < 3:
            raise InputError("seeds", "a seed study needs at least 3 init seeds (its intervals are over seeds)",
                             args.seeds)
    if args.gf_method is not None:
        from biasaudit.validation.gf_proxy import METHODS

        overrides["gf_method"] = choice("gf_method", args.gf_method, METHODS)
        if args.gf_method == "exp":
            # exp is accurate in the bulk only at h <= 0.25*2/lambda_(k+1), and its block must stay fresh
            overrides.update(gf_fraction=0.25, gf_every=20)
    if args.dtype is not None:
        overrides["dtype"] = choice("dtype", args.dtype, ("float32", "float64"))
    if args.data_dir is not None:
        overrides["data_dir"] = args.data_dir

    from biasaudit.validation import eos_config, eos_runs, eos_stats
    from biasaudit.validation.device import pick_device

    device = pick_device(args.device)
    overrides["device"] = str(device)
    import dataclasses

    # one sweep of the FCN with cross-entropy: the tier's cross-entropy sweep; a seed study: the audit's E2 setting
    e1_ce = (args.arch, args.loss) == ("fcn", "ce") and n_seeds is None
    base = eos_config.tier_config(args.tier, "ce") if e1_ce else eos_config.arch_config(args.tier, args.arch, args.loss)
    config = dataclasses.replace(base, **overrides)  # validates eta/eps/arch/loss again
    if config.dataset != "teacher":
        from biasaudit.validation.data import require_dataset

        require_dataset(config.dataset, config.data_dir)
    if args.out is not None:  # before any training, after the input checks (an empty path is refused)
        from biasaudit.plumbing import writable_dir

        writable_dir("out", args.out, make=("figures",))
    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr, flush=True))
    if n_seeds is not None:
        return _seed_study(config, n_seeds, args, progress)
    sweep = eos_runs.run_sweep(config, args.out, progress=progress)
    eta_c = eos_stats.json_float(sweep["gf"]["eta_c"])
    summary = {"config": sweep["config"], "dir": sweep["dir"], "s_gf": sweep["gf"]["s_gf"], "eta_c": eta_c,
               "gf_reached_eps": sweep["gf"]["reached_eps"], "eps_sensitivity": sweep["gf"]["sensitivity"],
               "runs": [{"eta": r["eta"], "multiple": r.get("multiple"), "outcome": r["outcome"],
                         "steps": r["steps"], **_final_numbers(r)} for r in sweep["runs"]],
               "checks": {}}
    for name, fn in (("E1", eos_stats.e1_phase_transition), ("E2", eos_stats.e2_kink), ("E3", eos_stats.e3_measures)):
        summary["checks"][name] = fn(sweep, eta_c)
    summary["checks"]["E4"] = eos_stats.e4_dynamics(sweep)
    summary["checks"]["E5"] = eos_stats.e5_one_sweep(sweep, eta_c)
    if args.out:
        from pathlib import Path

        summary["figures"] = _figures(sweep, Path(args.out) / "figures")
        atomic_write_text(Path(args.out) / "summary.json", json.dumps(_public(summary)))
    if args.json:
        json.dump(_public(summary), sys.stdout, indent=1)
        print()
        return 0
    print(f"s_GF = {summary['s_gf']:.4g}, eta_c = 2/s_GF = {eta_c:.4g} (eps = {config.eps:g}; "
          f"eta_c at 4eps/2eps/eps: " + ", ".join(f"{eos_stats.json_float(v['eta_c']):.4g}"
                                                   for v in sweep['gf']['sensitivity'].values()) + ")")
    print(f"{'eta':>10s} {'x eta_c':>8s} {'outcome':>11s} {'steps':>7s} {'S':>9s} {'eta*S/2':>8s} {'l1':>9s} "
          f"{'test err':>8s}")
    for r in summary["runs"]:
        print(format_run_row(r, eta_c))
    for name, check in summary["checks"].items():
        state = "undecided" if not check.get("decided") else f"error {check['error']:.3g}"
        print(f"{name}: {state}: {check['detail']}")
    return 0


def _seed_study(config, n_seeds: int, args, progress) -> int:
    """The sweeps of seeds 0..n_seeds-1 of ``config`` and, for each of the audit's E2 families (kink, tracking,
    plateau: :mod:`biasaudit.claims.eos.torch.architectures`), its value per seed and the equivalence decision
    over seeds with the family's δ (the audit's effect claims add a positive control and data controls). As in
    the audit, a seed whose gradient-flow proxy cannot be trusted makes every decision undecided."""
    import dataclasses
    from pathlib import Path

    from biasaudit.claims.eos.torch._study import LEVEL
    from biasaudit.claims.eos.torch.architectures import FAMILIES
    from biasaudit.claims.eos.torch.sweeps import _eta_c, _gf_problem
    from biasaudit.plumbing import atomic_write_text
    from biasaudit.validation import eos_runs
    from biasaudit.validation.decision import equivalence_decision

    sweeps = []
    for seed in range(n_seeds):
        out = None if args.out is None else str(Path(args.out) / f"seed{seed}")
        sweeps.append(eos_runs.run_sweep(dataclasses.replace(config, seed=seed), out, progress=progress))
    eta_cs = [_eta_c(sw) for sw in sweeps]  # as the audit reads them
    per_seed = [{"seed": i, "s_gf": sw["gf"]["s_gf"], "eta_c": ec} for i, (sw, ec) in enumerate(zip(sweeps, eta_cs))]
    problems = [f"seed {i}: {p}" for i, sw in enumerate(sweeps) if (p := _gf_problem(sw))]
    statistics = {}
    for family in FAMILIES:
        values = family.readings(sweeps, eta_cs)
        decision = equivalence_decision(values, delta=family.delta, level=LEVEL).to_json()
        if problems:
            decision.update(verdict="undecided", rule="the gradient-flow proxy cannot be trusted")
        name = family.statistic.split(":")[1]
        statistics[name] = {"symbol": family.symbol, "delta": family.delta, "values": values, "decision": decision}
        for row, value in zip(per_seed, values):
            row[name] = value
    summary = {"config": sweeps[0]["config"], "seeds": list(range(n_seeds)), "per_seed": per_seed,
               "statistics": statistics, "problems": problems}
    if args.out:
        atomic_write_text(Path(args.out) / "summary.json", json.dumps(_public(summary)))
    if args.json:
        json.dump(_public(summary), sys.stdout, indent=1)
        print()
        return 0
    for row in per_seed:
        print(f"seed {row['seed']}: s_GF = {_number(row['s_gf'], '.4g')}, "
              f"eta_c = {_number(row['eta_c'], '.4g')}; " + ", ".join(f"{s['symbol']} = {_number(row[name])}" for name, s in statistics.items()))
    for problem in problems:
        print(f"undecided: {problem}")
    for name, s in statistics.items():
        d = s["decision"]
        lo, hi = d["tost_interval"]
        print(f"{name} ({s['symbol']}): mean {_number(d['mean'])}, 90 % seed interval [{_number(lo)}, "
              f"{_number(hi)}] over {d['n']} seeds: {d['verdict']} by '{d['rule']}' (|{s['symbol']}| < {s['delta']:g})")
    return 0


def format_run_row(r: dict, eta_c: float) -> str:
    """One row of the human table. ``x eta_c`` is the run's multiple (with --absolute, eta/eta_c); a quantity
    that does not exist is ``-``, never ``nan``: every quantity of a diverged run (as ``biasaudit sweep eos``
    shows them), and S (so eta*S/2) where the sharpness did not converge."""
    multiple = r.get("multiple")
    if multiple is None and math.isfinite(eta_c) and eta_c > 0:
        multiple = r["eta"] / eta_c
    diverged = r["outcome"] == "diverged"

    def cell(value, fmt: str, width: int) -> str:
        return f"{_number(None if diverged else value, fmt):>{width}s}"

    mult = f"{multiple:.3g}" if multiple is not None and math.isfinite(multiple) else "-"
    return (f"{r['eta']:10.4g} {mult:>8s} {r['outcome']:>11s} {r['steps']:7d} {cell(r['S'], '.4g', 9)} "
            f"{cell(r['eta'] * r['S'] / 2, '.3f', 8)} {cell(r['l1'], '.4g', 9)} {cell(r['test_error'], '.3f', 8)}")


def _number(value, fmt: str = "+.4f") -> str:
    """``value`` in ``fmt``, or ``-`` where there is no finite number (never ``nan``)."""
    from biasaudit.validation.eos_stats import json_float

    value = json_float(value)
    return format(value, fmt) if math.isfinite(value) else "-"


def _final_numbers(run) -> dict:
    final = run.get("final") or {}
    S = final.get("S") or {}
    try:
        s_value = abs(float(S.get("value", "nan")))
    except (TypeError, ValueError):
        s_value = float("nan")
    return {"S": s_value if S.get("converged") else float("nan"), "S_converged": bool(S.get("converged")),
            "l1": float(final.get("l1", float("nan"))), "test_error": float(final.get("test_error", float("nan")))}


def _figures(sweep, outdir) -> list:
    try:
        from biasaudit.figures.eos_torch import make_sweep_figures

        return make_sweep_figures(outdir, sweep=sweep)
    except Exception as exc:  # noqa: BLE001 - a failed plot must not lose the sweep's numbers
        print(f"biasaudit: warning: figures failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return []


def _public(summary: dict) -> dict:
    """The summary as strict JSON: non-finite numbers are null, listed under ``null_fields`` with the reason."""
    from biasaudit.plumbing import finite_json

    out, nulled = finite_json(summary)
    out["null_fields"] = nulled
    return out
