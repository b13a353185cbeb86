"""``biasaudit validate sam``: GD vs SAM on a trained CNN/ResNet, Grad-CAM minor-feature mass, with a verdict.

Every input is checked before any training (exit 2, one line): unknown model or dataset, a missing or
malformed data file (named), rho < 0, cuda asked for where there is none. torch is imported inside ``run``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["register", "run"]


def register(sub) -> None:
    """Add ``sam`` and its options to the targets ``sub`` of ``biasaudit validate``."""
    p = sub.add_parser("sam", help="GD vs SAM on a trained CNN/ResNet: Grad-CAM mass on low-intensity pixels")
    p.add_argument("--model", default="cnn",
                   help="cnn | resnet | diag2 | gated_cnn | resnet_nobn | resnet_fixednorm (diag2: the diagonal "
                        "linear network u*v; gated_cnn: the CNN behind an elementwise input gate; resnet_nobn: the "
                        "ResNet without BatchNorm; resnet_fixednorm: the ResNet with its normalisation statistics "
                        "fixed at the initialisation's) (default: cnn)")
    p.add_argument("--dataset", default="mnist5k",
                   help="mnist5k | digits | fashion-mnist | mnist | cifar10 | svhn | synthetic-patches | "
                        "synthetic-patches-swapped | synthetic-patches-equal | mnist5k-planted")
    p.add_argument("--data-dir", default=None, help="directory holding the dataset's files (mnist, cifar10, svhn)")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda (default: auto)")
    p.add_argument("--out", default=None, help="directory for results.json and the figures")
    p.add_argument("--tier", default="quick", choices=("quick", "full"), help="experiment size (default: quick)")
    p.add_argument("--seeds", type=int, default=None, help="number of paired seeds (default: the tier's)")
    p.add_argument("--steps", type=int, default=None, help="training steps per run (default: the tier's)")
    p.add_argument("--rho", type=float, default=None, help="SAM radius (default: the tier's, 0.05)")
    p.add_argument("--lr", type=float, default=None, help="learning rate (default: the tier's)")
    p.add_argument("--init-scales", default=None,
                   help="comma-separated init scales alpha, each once, e.g. 0.5,1,2 (no empty items)")
    p.add_argument("--design", default=None, choices=("cnn", "resnet", "patch", "diag", "fashion", "cifar10", "svhn"),
                   help="run a collapse design of the audit instead: SAM, GD, RandSAM and GD on other seeds at an "
                        "alpha below SAM's boundary and one above it, each run to its loss target or horizon, read "
                        "as fitted / collapsed / slow, and the collapse contrast with its data controls (cnn: MNIST "
                        "CNN; patch: patch images; diag: the positive control; fashion, cifar10, svhn: on files "
                        "found in --data-dir; resnet: the ResNet without BatchNorm). resnet, cifar10 and svhn run at "
                        "--tier full only (they have no quick tier)")
    p.add_argument("--no-cache", action="store_true", help="recompute every run (ignore the run cache)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    """Train GD and SAM on the chosen model and data set (or a ``--design`` grid) and print the minor-feature effects
    with their verdicts (or JSON); with ``--out`` also write ``results.json`` and the figures."""
    from biasaudit.plumbing import atomic_write_text
    from biasaudit.plumbing import InputError, choice, nonnegative_scalar, parse_float_list
    from biasaudit.validation import sam_experiments as ex
    from biasaudit.validation.data import DATASETS
    from biasaudit.validation.sam_stats import summary_line, verdict_from_interval
    from biasaudit.validation.device import pick_device
    from biasaudit.validation.models import MODELS

    # Every check before training: names and numbers here; data files when the experiment loads its data
    # (sam_runs.run_grid validates every run's config and loads the data before the first step).
    choice("model", args.model, MODELS)
    choice("dataset", args.dataset, DATASETS)
    device = pick_device(args.device)
    if args.design is not None:
        return _run_design(args, device)
    overrides = {"model": args.model, "dataset": args.dataset}
    from biasaudit.plumbing import positive_scalar
    from biasaudit.plumbing.ranges import in_range, vector_in_range

    if args.rho is not None:
        overrides["rho"] = in_range("rho", nonnegative_scalar("rho", args.rho), zero=True)
    if args.lr is not None:
        overrides["lr"] = in_range("lr", positive_scalar("lr", args.lr))
    from biasaudit.plumbing.ranges import MAX_SEEDS, MAX_STEPS, count_in_range

    if args.steps is not None:
        overrides["steps"] = count_in_range("steps", args.steps, MAX_STEPS)
    if args.seeds is not None:
        overrides["seeds"] = tuple(range(count_in_range("seeds", args.seeds, MAX_SEEDS)))
    if args.init_scales is not None:
        from biasaudit.plumbing.inputs import distinct_values

        scales = vector_in_range("init_scales", parse_float_list("init_scales", args.init_scales))
        distinct_values("init_scales", scales)  # a repeat would train its GD/SAM pairs twice
        overrides["init_scales"] = tuple(float(a) for a in scales)
    if args.dataset not in ("mnist5k", "synthetic-patches"):
        overrides["downsample"] = 1  # only the quick MNIST-5k setting is pooled to 14 x 14
    from biasaudit.validation.data import BUNDLED_DATASETS

    if args.data_dir is not None and args.dataset in BUNDLED_DATASETS:
        raise InputError("data_dir", f"is not used by the embedded dataset {args.dataset!r}", args.data_dir)

    if args.out is not None:  # before any training, not after it (an empty path is refused)
        from biasaudit.plumbing import writable_dir

        writable_dir("out", args.out)
    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr, flush=True))
    if args.dataset == "synthetic-patches":
        result = ex.synthetic_patch_experiment(args.tier, device=str(device), progress=progress,
                                               use_cache=not args.no_cache,
                                               **{k: v for k, v in overrides.items() if k != "dataset"})
        metrics = ("minor_reliance", "cam_minor_share")
    else:
        result = ex.minor_mass_experiment(args.tier, device=str(device), data_dir=args.data_dir,
                                          progress=progress, use_cache=not args.no_cache, **overrides)
        metrics = ("cam_low", "grad_low")
    summary = {"tier": args.tier, "device": str(device), "settings": result["settings"], "effects": {}}
    for alpha, per in result["per_scale"].items():
        summary["effects"][alpha] = {}
        for metric in metrics:
            effect = per[metric]
            verdict, _ = verdict_from_interval(effect["matched_ci"], +1, len(effect["seeds"]))
            summary["effects"][alpha][metric] = {**effect, "verdict": verdict}
        summary["effects"][alpha]["status"] = per["status"]
        for key in ("lead_sam", "lead_gd"):
            if key in per:
                summary["effects"][alpha][key] = per[key]
    if args.out:
        from pathlib import Path

        from biasaudit.figures.sam_torch import plot_curves, plot_overlays

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "results.json", json.dumps(_public(summary)))
        if args.dataset == "synthetic-patches":
            figs = [plot_overlays(result, out / "gradcam_overlays.png"),
                    plot_curves(result, "minor_reliance", out / "minor_reliance.png", "minor reliance")]
        else:
            figs = [plot_overlays(result, out / "gradcam_overlays.png"),
                    plot_curves(result, "cam_low", out / "minor_mass_gradcam.png", "Grad-CAM low-intensity mass"),
                    plot_curves(result, "grad_low", out / "minor_mass_inputgrad.png",
                                "|input grad| low-intensity mass")]
        summary["figures"] = [str(f) for f in figs]
    if args.json:
        json.dump(_public(summary), sys.stdout, indent=1)
        print()
        return 0
    print(f"validate sam: {args.model} on {args.dataset}, tier {args.tier}, device {device}")
    for alpha, per in summary["effects"].items():
        print(f"  init scale alpha = {alpha}: runs {per['status']}")
        for metric in metrics:
            print("    " + summary_line(per[metric]))
        for key, name in (("lead_sam", "SAM"), ("lead_gd", "GD")):
            if key in per:
                lo, hi = per[key]["ci"]
                print(f"    {name} patch order t_major - t_minor (steps, > 0 = faint patch first): "
                      f"{per[key]['mean']:+.1f} [{lo:+.1f}, {hi:+.1f}], per seed {per[key]['values']}")
    for fig in summary.get("figures", []):
        print(f"  figure: {fig}")
    return 0


_DESIGN_FIXES = ("model", "dataset", "seeds", "steps", "rho", "lr", "init_scales")


def _design_data_dir(args, settings: dict) -> str | None:
    """The folder the design's data are read from, checked (and the data loaded once) before any training:
    ``--data-dir`` must exist, must hold the design's data set (no fallback elsewhere when it is given), is
    refused for bundled data, and must hold enough images for the design."""
    from biasaudit.plumbing import InputError
    from biasaudit.validation.data import BUNDLED_DATASETS, dataset_location, load_dataset

    dataset, given = settings["dataset"], args.data_dir
    if given is not None and (not str(given).strip() or not Path(given).expanduser().is_dir()):
        raise InputError("data_dir", "must be an existing directory", given)
    if dataset in BUNDLED_DATASETS:
        if given is not None:
            raise InputError("data_dir", f"is not used by design {args.design!r} (bundled {dataset} data)", given)
        return None
    found = dataset_location(dataset, None if given is None else Path(given).expanduser())
    if found is None or (given is not None and Path(given).expanduser().resolve() not in
                         (found.resolve(), *found.resolve().parents)):
        rule = (f"holds no {dataset} files (looked in DIR/<name> and DIR)" if given else
                f"is required by design {args.design!r} (the folder holding the {dataset} files)")
        raise InputError("data_dir", rule, given)
    try:
        load_dataset(dataset, data_dir=found, n_train=settings["n_train"], n_test=settings["n_test"])
    except InputError as exc:
        if exc.name in ("n_train", "n_test"):
            raise InputError("data_dir", f"holds too few {dataset} images for design {args.design!r} "
                             f"(n_train = {settings['n_train']}, n_test = {settings['n_test']})", str(found)) from None
        raise
    return str(found)


def _run_design(args, device) -> int:
    """``--design``: the audit's regime grid, from the same run cache as the claims."""
    from biasaudit.plumbing import InputError, atomic_write_text, writable_dir
    from biasaudit.validation import sam_regimes as sr

    defaults = {"model": "cnn", "dataset": "mnist5k"}
    for name in _DESIGN_FIXES:
        value = getattr(args, name)
        if value is not None and value != defaults.get(name):
            raise InputError(name, "is fixed by --design (the design is pre-registered); leave it out", value)
    if args.out is not None:
        writable_dir("out", args.out)
    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr, flush=True))
    tiers = tuple(sr.DESIGNS[args.design])
    if args.tier not in tiers:
        raise InputError("tier", f"design {args.design!r} runs at --tier {' or '.join(tiers)} only "
                                 f"(add --tier {tiers[-1]})", args.tier)
    settings = sr.design_settings(args.design, args.tier)
    data_dir = _design_data_dir(args, settings)
    res = sr.regime_experiment(args.design, args.tier, device=str(device), data_dir=data_dir,
                               progress=progress, use_cache=not args.no_cache)
    from biasaudit.claims.sam.torch.regimes import collapse_decision

    decided = collapse_decision(args.design, args.tier, result=res)
    summary = {k: res[k] for k in ("design", "tier", "settings", "alphas", "outcomes", "collapsed", "fit_steps")}
    summary["contrast"] = {"values": decided["values"], "seeds": decided["seeds"], "missing": decided["missing"],
                           "decision": decided["decision"].to_json(),
                           "data_controls": [c.to_json() for c in decided["controls"]]}
    if args.out:
        from pathlib import Path

        out = Path(args.out)
        atomic_write_text(out / "results.json", json.dumps(_public(summary)))
        from biasaudit.figures.sam_torch import plot_regime_figure

        summary["figures"] = [str(plot_regime_figure(res, out, f"regimes_{args.design}.png"))]
    if args.json:
        json.dump(_public(summary), sys.stdout, indent=1)
        print()
        return 0
    d = decided["decision"]
    print(f"validate sam --design {args.design}: tier {args.tier}, device {device}, rho = {res['settings']['rho']}, "
          f"{len(res['settings']['seeds'])} paired seeds, horizon {res['settings']['steps']} steps")
    print(f"  outcomes: {sr.outcome_text(res)}")
    print(f"  collapse contrast C = {d.mean:+.3f} [{d.interval[0]:+.3f}, {d.interval[1]:+.3f}] over {d.n} seeds "
          f"({len(decided['missing'])} with a slow or diverged run): {d.verdict} ({d.rule}, delta {d.delta})")
    print("  data controls: " + "; ".join(c.summary() for c in decided["controls"]))
    for fig in summary.get("figures", []):
        print(f"  figure: {fig}")
    return 0


def _public(summary: dict) -> dict:
    """The summary as strict JSON: non-finite numbers are null, listed under ``null_fields`` with the reason."""
    from biasaudit.plumbing import finite_json

    out, nulled = finite_json(summary)
    out["null_fields"] = nulled
    return out
