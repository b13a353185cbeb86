"""Benchmarks of the torch SAM validation (issue 5).

* ``sam_torch.step``: one l2-SAM step (two forward/backward passes plus the perturbation) against one GD
  step on the same small CNN and batch; target ratio <= 2.2.
* ``sam_torch.gradcam``: Grad-CAM for a batch of 64 MNIST-size images on the small CNN; target < 1 s on the
  CPU (an absolute bound, as the issue states one).
"""

from __future__ import annotations

import statistics

from biasaudit.benchmarks import BenchCase, BenchResult, Target, median_time

__all__ = ["CASES"]


def _setup(batch: int, width: int = 16):
    import torch

    from biasaudit.validation.models import make_model

    model = make_model("cnn", num_classes=10, in_channels=1, image_size=28, width=width, seed=0)
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(batch, 1, 28, 28, generator=gen)
    y = torch.randint(0, 10, (batch,), generator=gen)
    return model, x, y


def _bench_step(quick: bool) -> BenchResult:
    import torch
    import torch.nn.functional as F

    from biasaudit.validation.sam import SAM

    batch = 64 if quick else 128
    model, x, y = _setup(batch)
    gd = torch.optim.SGD(model.parameters(), lr=1e-3)
    sam = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=1e-3, model=model)

    def closure_for(opt):
        def closure():
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            return loss
        return closure

    gd_closure, sam_closure = closure_for(gd), closure_for(sam)
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
)
