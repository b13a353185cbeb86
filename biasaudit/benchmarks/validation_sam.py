"""Benchmarks of the torch SAM validation.

* ``sam_torch.step``: one l2-SAM step (two forward/backward passes plus the perturbation) against one GD
  step on the same small CNN and batch; target ratio <= 2.2.
* ``sam_torch.gradcam``: Grad-CAM for a batch of 64 MNIST-size images on the small CNN; target < 1 s on the
  CPU (an absolute bound, as the target states one).
* ``sam_torch.run_cost``: the CNN collapse design's GD and SAM runs below SAM's boundary, through the whole
  pipeline (data, training to the loss target or the horizon, evaluations), against its pure training arithmetic
  (the steps each run took x the measured GD or SAM step time on the same model and batch); target
  wall / arithmetic <= 2. The breakdown (data, evaluations, the rest) is in the timings.
* ``sam_torch.quick_tier``: the whole ``sam.torch.*`` quick tier as ``biasaudit audit``
  runs it (2 workers, figures included), with a fresh private run cache so every run is trained; target
  wall <= 15 minutes on 2 cores (an absolute bound, as the target states one). ``--quick``: the positive
  control alone (the diagonal-net grid), which checks the plumbing, not the target.
"""

from __future__ import annotations

import statistics

from biasaudit.benchmarks import BenchCase, BenchResult, Target, median_time, timed_audit

__all__ = ["CASES"]


def _setup(batch: int, width: int = 16):
    import torch

    from biasaudit.validation.models import make_model

    model = make_model("cnn", num_classes=10, in_channels=1, image_size=28, width=width, seed=0)
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(batch, 1, 28, 28, generator=gen)
    y = torch.randint(0, 10, (batch,), generator=gen)
    return model, x, y


def _closure(opt, model, x, y):
    """The full-batch cross-entropy closure that ``opt.step`` calls (SAM calls it twice)."""
    import torch.nn.functional as F

    def closure():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss
    return closure


def _bench_step(quick: bool) -> BenchResult:
    import torch

    from biasaudit.validation.sam import SAM

    batch = 64 if quick else 128
    model, x, y = _setup(batch)
    gd = torch.optim.SGD(model.parameters(), lr=1e-3)
    sam = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=1e-3, model=model)

    gd_closure, sam_closure = _closure(gd, model, x, y), _closure(sam, model, x, y)
    repeats = 7 if quick else 21
    for _ in range(2):  # warm-up (allocator, oneDNN primitive caches)
        gd.step(gd_closure), sam.step(sam_closure)
    t_gd, t_sam = [], []
    for _ in range(repeats):  # interleaved, so machine-load drift hits both alike
        t_gd.append(median_time(lambda: gd.step(gd_closure), repeats=1, warmup=0))
        t_sam.append(median_time(lambda: sam.step(sam_closure), repeats=1, warmup=0))
    t_gd, t_sam = statistics.median(t_gd), statistics.median(t_sam)
    return BenchResult(
        timings={"gd_step": t_gd, "sam_step": t_sam},
        targets=[Target("sam_step / gd_step", t_sam / t_gd, 2.2, op="<=")],
        notes=[f"small CNN (width 16), batch {batch} of 1x28x28, SGD base, l2 joint SAM; medians of "
               f"{repeats} interleaved GD/SAM steps; the floor is 2 (two forward/backward passes)"],
    )


def _bench_gradcam(quick: bool) -> BenchResult:
    from biasaudit.validation.gradcam import grad_cam

    model, x, y = _setup(64)
    t = median_time(lambda: grad_cam(model, x, target=y), repeats=3 if quick else 9, warmup=1)
    return BenchResult(
        timings={"gradcam_batch64": t},
        targets=[Target("gradcam batch 64 (s)", t, 1.0, op="<=", unit="s")],
        notes=["small CNN (width 16) on 64 images 1x28x28; forward + one autograd.grad + bilinear upsampling"],
    )


def _bench_run_cost(quick: bool) -> BenchResult:
    import time
    from dataclasses import replace

    import torch

    from biasaudit.validation import sam_training as tr
    from biasaudit.validation.models import make_model
    from biasaudit.validation.sam import SAM
    from biasaudit.validation.sam_regimes import AA_OFFSET, design_settings, regime_configs

    settings = design_settings("cnn", "quick")
    n_seeds = 2 if quick else 6
    alpha = settings["alphas"][0]  # below SAM's boundary: the design's costliest runs (SAM runs its whole horizon)
    configs = [c for c in regime_configs("cnn", "quick") if c.init_scale == alpha and c.seed < n_seeds
               and c.optimizer in ("gd", "sam") and c.seed < AA_OFFSET]
    t0 = time.perf_counter()
    tr._DATA_MEMO.clear()
    ds = tr._dataset(configs[0])
    t_data = time.perf_counter() - t0

    model = make_model("cnn", num_classes=10, in_channels=1, image_size=ds.image_size, width=settings["width"],
                       init_scale=alpha, seed=0)
    x, y = ds.X_train[:settings["batch_size"]], ds.y_train[:settings["batch_size"]]
    gd = torch.optim.SGD(model.parameters(), lr=1e-4)
    sam = SAM(model.parameters(), torch.optim.SGD, rho=settings["rho"], lr=1e-4, model=model)

    gd_c, sam_c = _closure(gd, model, x, y), _closure(sam, model, x, y)
    for _ in range(3):
        gd.step(gd_c), sam.step(sam_c)
    t_gd, t_sam = [], []
    for _ in range(30 if quick else 60):
        t_gd.append(median_time(lambda: gd.step(gd_c), repeats=1, warmup=0))
        t_sam.append(median_time(lambda: sam.step(sam_c), repeats=1, warmup=0))
    t_step = {"gd": statistics.median(t_gd), "sam": statistics.median(t_sam)}

    ev = {"X": ds.X_train[:settings["n_eval"]], "y": ds.y_train[:settings["n_eval"]],
          "probe": ds.X_test[:settings["n_probe"]], "probe_y": ds.y_test[:settings["n_probe"]], "probe_on": False}
    ev["low"] = tr._low_intensity_mask(ev["probe"], configs[0].low_threshold)
    t_eval = median_time(lambda: tr._evaluate(model, ev, 0), repeats=9, warmup=2)

    t0 = time.perf_counter()
    runs = [tr.train_run(replace(cfg, device="cpu")) for cfg in configs]
    wall = time.perf_counter() - t0 + t_data
    arithmetic = sum(r["curves"]["step"][-1] * t_step[r["config"]["optimizer"]] for r in runs)
    evals = sum(len(r["curves"]["step"]) for r in runs) * t_eval
    outcomes = {o: sum(r["status"] == o for r in runs) for o in ("ok", "collapsed", "slow")}
    return BenchResult(
        timings={"pipeline_wall": wall, "training_arithmetic": arithmetic, "gd_step": t_step["gd"],
                 "sam_step": t_step["sam"], "evaluations_estimate": evals, "data_load": t_data,
                 "rest": max(0.0, wall - arithmetic - evals - t_data)},
        targets=[Target("pipeline wall / training arithmetic", wall / arithmetic, 2.0, op="<=")],
        notes=[f"CNN collapse design (quick): width {settings['width']}, batch {settings['batch_size']} of 1x14x14, "
               f"alpha = {alpha} (below SAM's boundary), {n_seeds} seeds of GD and SAM, each to loss "
               f"{settings['loss_target']} or {settings['steps']} steps (outcomes: "
               + ", ".join(f"{k} {o}" for o, k in outcomes.items()) + f"); evaluation every "
               f"{settings['eval_every']} steps on {settings['n_eval']} training images ({t_eval * 1e3:.1f} ms each)"],
    )


QUICK_TIER_MINUTES = 15.0  # the whole sam.torch.* quick tier from a cold cache, 2 cores


def _bench_quick_tier(quick: bool) -> BenchResult:
    import tempfile
    from pathlib import Path

    pattern = "sam.torch.minor_first_major_last.diag" if quick else "sam.torch.*"
    with tempfile.TemporaryDirectory(prefix="biasaudit-sam-quick-tier-") as tmp:
        wall, result = timed_audit(pattern, Path(tmp), "audit", workers=2, figures=True)
    counts = result.counts()
    out_of_scope = [r["claim_id"] for r in result.records if r["verdict"] == "out-of-scope"]
    return BenchResult(
        timings={"audit wall": wall},
        targets=[Target("sam.torch.* quick tier wall (min)", wall / 60, QUICK_TIER_MINUTES, op="<=", unit="min")],
        notes=[f"{len(result.records)} claims ({', '.join(f'{n} {v}' for v, n in sorted(counts.items()))}), "
               f"{result.runs_computed} runs trained (the claims and figures then read them from the run cache "
               f"{result.runs_reused} times), "
               f"{len(result.figures)} figures, 2 workers",
               "out of scope (their runs are not in the wall time): " + (", ".join(out_of_scope) or "none")],
    )


def _scoped(fn):
    """Run a case with the experiments' torch settings (1 thread, flush-to-zero), restored afterwards."""
    def run(quick: bool) -> BenchResult:
        from biasaudit.validation.device import torch_settings

        with torch_settings():
            return fn(quick)
    return run


CASES = (
    BenchCase("sam_torch.step", "one torch SAM step vs one GD step (small CNN, same batch)", _scoped(_bench_step)),
    BenchCase("sam_torch.gradcam", "Grad-CAM for a batch of 64 on the small CNN (CPU)", _scoped(_bench_gradcam)),
    BenchCase("sam_torch.run_cost", "the CNN collapse design's runs: pipeline wall vs pure training arithmetic",
              _scoped(_bench_run_cost)),
    BenchCase("sam_torch.quick_tier", "the whole sam.torch.* quick tier through the audit, fresh cache, 2 workers",
              _bench_quick_tier),
)
