"""Running an EoS sweep: the gradient-flow proxy (η_c = 2/s_GF) and one full-batch GD run per η, each cached.

Pipeline (one :class:`~biasaudit.validation.eos_config.SweepConfig`):

1. data and a :class:`~biasaudit.validation.gd_trainer.Problem` with one fixed init
   (:func:`biasaudit.validation.eos_data.build_problem`);
2. s_GF and η_c = 2/s_GF from the gradient-flow proxy (:mod:`biasaudit.validation.gf_proxy`), up to the same eps
   (:func:`sweep_gf`);
3. full-batch GD (:func:`biasaudit.validation.gd_trainer.train_gd`) at η = m·η_c for a coarse grid of multiples m
   plus a fine grid within ±10 % of η_c; the run at ``track_multiple`` records sharpness every
   ``track_every`` steps (E4) (:func:`sweep_eta_run`);
4. the verdict numbers, pure functions of the sweep dict: :mod:`biasaudit.validation.eos_stats`.

Every finished piece (the GF result, each (arch, η) run) is written atomically as JSON under the run
directory (``out`` or the cache dir ``$BIASAUDIT_CACHE_DIR/validation-eos/<key>``) by the one cached-JSON
helper (:func:`biasaudit.plumbing.jsoncache.cached_json`): an interrupted sweep resumes, a finished run is never
recomputed. The key is content-addressed (:meth:`~biasaudit.validation.eos_config.SweepConfig.key`): a code
edit recomputes. Results are also memoised in-process, so all claims of a tier share one sweep.

Symbols: η step size, η_c = 2/s_GF, S = max|λ(∇²L)| at the end of a run (L < eps).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable
from pathlib import Path

from biasaudit.plumbing import atomic_write_text, cache_root, jsonable
from biasaudit.plumbing.jsoncache import cached_json
from biasaudit.validation.eos_config import SweepConfig
from biasaudit.validation.eos_data import build_problem
from biasaudit.plumbing.jsonable import json_float

__all__ = ["cache_dir", "run_sweep", "sweep_gf", "sweep_eta_run"]


def cache_dir() -> Path:
    """``$BIASAUDIT_CACHE_DIR/validation-eos`` (default ``~/.cache/biasaudit/validation-eos``)."""
    return cache_root() / "validation-eos"


def _write_json(path: Path, data) -> None:
    atomic_write_text(path, json.dumps(jsonable(data)))


_MEMO: dict[str, dict] = {}


def run_sweep(config: SweepConfig, out: str | os.PathLike | None = None, *, progress: Callable | None = None,
              threads: int | None = None) -> dict:
    """Run (or resume, or load) the sweep of ``config``; returns ``{"config", "gf", "runs", "dir"}``.

    A sweep is the gradient-flow proxy (:func:`sweep_gf`, which gives η_c) and one GD run per multiple of η_c
    (:func:`sweep_eta_run`). Each is cached on its own file under its own lock, so the audit can schedule
    them as separate run units on several workers (``biasaudit.claims.eos.torch.sweeps.sweep_run_units``) and this
    call then only reads."""
    run_dir = Path(out) if out is not None else cache_dir() / config.key()
    memo_key = f"{config.key()}@{run_dir}"
    if memo_key in _MEMO:
        return _MEMO[memo_key]
    gf = sweep_gf(config, run_dir, progress=progress, threads=threads)
    eta_c = json_float(gf["eta_c"])
    runs = []
    if math.isfinite(eta_c) or config.absolute:
        runs = [_eta_run(config, m, eta_c, run_dir, progress, threads) for m in config.multiples()]
    result = {"config": dataclasses.asdict(config), "gf": gf, "runs": sorted(runs, key=lambda r: r["eta"]),
              "dir": str(run_dir)}
    _MEMO[memo_key] = result
    return result


def _sweep_dir(config: SweepConfig, run_dir) -> Path:
    run_dir = Path(run_dir) if run_dir is not None else cache_dir() / config.key()
    if not (run_dir / "config.json").is_file():
        _write_json(run_dir / "config.json", {"key": config.key(), **dataclasses.asdict(config)})
    return run_dir


def sweep_gf(config: SweepConfig, run_dir=None, *, progress: Callable | None = None, threads: int | None = None
             ) -> dict:
    """The sweep's gradient-flow proxy (``gf.json``: s_GF, η_c = 2/s_GF), computed once and cached."""
    from biasaudit.validation.device import torch_settings

    say = progress or (lambda msg: None)
    run_dir = _sweep_dir(config, run_dir)

    def compute():
        from biasaudit.validation.gf_proxy import gradient_flow_sharpness

        with torch_settings(threads):
            say(f"gradient-flow proxy ({config.arch}, {config.loss}, eps={config.eps:g}) ...")
            res = gradient_flow_sharpness(build_problem(config), config.eps, method=config.gf_method,
                                          fraction=config.gf_fraction, every=config.gf_every, seed=config.seed,
                                          progress=say)
            return res.to_json()

    return cached_json(run_dir / "gf.json", compute, key=config.key(), encode=jsonable)


def sweep_eta_run(config: SweepConfig, multiple: float, run_dir=None, *, progress: Callable | None = None,
                  threads: int | None = None) -> dict:
    """One GD run of the sweep at η = ``multiple`` · η_c (or at η = ``multiple`` when ``config.absolute``); reads
    (or computes) the sweep's gradient-flow proxy for η_c first. An audit run unit."""
    eta_c = json_float(sweep_gf(config, run_dir, progress=progress, threads=threads)["eta_c"])
    return _eta_run(config, multiple, eta_c, run_dir, progress, threads)


def _eta_run(config: SweepConfig, multiple: float, eta_c: float, run_dir, progress: Callable | None,
             threads: int | None) -> dict:
    from biasaudit.validation.device import torch_settings

    say = progress or (lambda msg: None)
    run_dir = _sweep_dir(config, run_dir)
    eta = multiple if config.absolute else multiple * eta_c
    if not math.isfinite(eta):
        raise ValueError(f"sweep_eta_run: no finite eta_c for {config.key()} (the GF proxy failed)")

    def compute():
        from biasaudit.validation.gd_trainer import train_gd

        tracked = not config.absolute and config.track_every and math.isclose(multiple, config.track_multiple)
        # with --absolute the grid holds step sizes: the multiple is eta/eta_c (left out when eta_c is unknown)
        times = (eta / eta_c if eta_c else math.nan) if config.absolute else multiple
        say(f"GD eta={eta:.4g}" + (f" ({times:.4g} x eta_c)" if math.isfinite(times) else "") + " ...")
        with torch_settings(threads):
            run = train_gd(build_problem(config), eta, eps=config.eps, max_steps=config.max_steps,
                           sharpness_every=config.track_every if tracked else 0, sharpness_burst=config.track_burst,
                           seed=config.seed)
        say(f"  {run.outcome} after {run.steps} steps, {run.seconds:.1f} s")
        return {"multiple": None if config.absolute else multiple, "tracked": bool(tracked), **run.to_json()}

    return cached_json(run_dir / f"run_eta_{eta:.8e}.json", compute, key=config.key(), encode=jsonable)
