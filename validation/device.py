"""Device, dtype and thread policy for the torch validation experiments.

Every experiment runs inside :func:`torch_settings` (or a CLI process calls :func:`setup_torch` once) and
uses :func:`pick_device` to choose where to run.

Policy
------
* ``pick_device("auto")`` is cuda when ``torch.cuda.is_available()``, else cpu. Asking for ``"cuda"`` where
  there is none raises :class:`~biasaudit.inputs.InputError` naming ``device`` (before any training).
* Threads: torch's default thread pool oversubscribes small shared machines; :func:`setup_torch` sets the
  intra-op thread count explicitly (``BIASAUDIT_THREADS``, default 1: see :func:`default_threads`).
* Denormals: near-zero losses produce denormal floats that slowed CPU runs by up to 50x (notes/validation-sam.md, "Traps we
  measured"); :func:`setup_torch` calls ``torch.set_flush_denormal(True)``. Flushing changes results only
  below ``np.finfo(np.float32).tiny`` ~ 1.2e-38 (float64: 2.2e-308), far under every tolerance we use.
* Mixed precision (:func:`autocast`): bf16 autocast on cuda only (bf16 keeps float32's exponent range, so
  no loss scaling is needed). The CPU path always runs in full precision, so CPU results are the reference.
  float64 experiments (the diagonal network) never autocast.
"""

from __future__ import annotations

import contextlib
import os

from biasaudit.plumbing import InputError, positive_int

__all__ = ["DEVICES", "pick_device", "setup_torch", "torch_settings", "flush_denormal_enabled", "autocast",
           "default_threads"]

DEVICES = ("auto", "cpu", "cuda")


def default_threads() -> int:
    """Threads for torch: ``$BIASAUDIT_THREADS`` if set, else 1.

    One thread is the default on purpose: the experiments' models are tiny, and on a loaded 2-core machine
    a 2-thread OpenMP pool spins at its barriers. Measured (small CNN, batch 1000 of 8x8, load ~10 on 2
    cores): 77 ms per SGD step with 1 thread, 840 ms with 2. Set ``BIASAUDIT_THREADS`` on an idle or bigger
    machine.
    """
    env = os.environ.get("BIASAUDIT_THREADS")
    if env:
        return positive_int("BIASAUDIT_THREADS", int(env) if env.isdigit() else env)
    return 1


def setup_torch(threads: int | None = None) -> None:
    """Flush denormals to zero and set torch's intra-op thread count explicitly (idempotent)."""
    import torch

    n = _thread_count(threads)
    torch.set_flush_denormal(True)
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)


def flush_denormal_enabled() -> bool:
    """Whether denormal floats are flushed to zero in this thread now (torch has no getter: a probe).

    The flag is the CPU's (MXCSR's flush-to-zero and denormals-are-zero), so it holds for numpy, numba and
    ``math`` in the thread as much as for torch: half the smallest normal float64 reads 0 when it is on.
    """
    import torch

    return float(torch.tensor([2.2250738585072014e-308], dtype=torch.float64) / 4) == 0.0


def _thread_count(threads: int | None) -> int:
    """``threads``, validated, or :func:`default_threads` when None."""
    return default_threads() if threads is None else positive_int("threads", threads)


@contextlib.contextmanager
def torch_settings(threads: int | None = None, *, flush_denormal: bool = True):
    """Torch's thread count (:func:`default_threads` unless ``threads``) and the flush of denormals
    (``flush_denormal``, default on as :func:`setup_torch`) for the duration of a block, then back to what the
    block found (so the context nests).

    Both are state of the calling thread (the flush is the CPU's control register; the count is OpenMP's, which a
    thread sets for itself and a new thread takes from the one that set it last), and left changed they change
    every later computation there: another thread count sums in another order; flush-to-zero also rounds numpy's,
    numba's and ``math``'s subnormals to 0, and hypothesis refuses to generate floats under it. Library code
    (``train_run``, the EoS sweeps' runs) therefore uses this context; only a CLI process may call
    :func:`setup_torch` for good. The audit runs every unit inside ``torch_settings(flush_denormal=False)``, so a
    unit computes the same thing whatever ran before it in the same worker.
    """
    import torch

    flush_before, threads_before = flush_denormal_enabled(), torch.get_num_threads()
    n = _thread_count(threads)
    torch.set_flush_denormal(bool(flush_denormal))
    if threads_before != n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_flush_denormal(flush_before)
        if torch.get_num_threads() != threads_before:
            torch.set_num_threads(threads_before)


def pick_device(device: str = "auto"):
    """``"auto"`` | ``"cpu"`` | ``"cuda"`` (or ``"cuda:N"``) -> ``torch.device``; cuda absent -> InputError."""
    import torch

    if not isinstance(device, str):
        raise InputError("device", f"must be one of {', '.join(DEVICES)}", device)
    name = device.strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or name.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise InputError("device", "cuda was requested but torch finds no CUDA device "
                             "(use --device auto or cpu)", device)
        dev = torch.device(name)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise InputError("device", f"cuda index must be < {torch.cuda.device_count()}", device)
        return dev
    raise InputError("device", f"must be one of {', '.join(DEVICES)}", device)


def autocast(device, enabled: bool = True):
    """bf16 autocast on cuda (where supported); a no-op context on cpu or when disabled."""
    import torch

    if enabled and getattr(device, "type", str(device)) == "cuda" and torch.cuda.is_bf16_supported():
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()
