"""The unit of work of an audit: one claim run, one experiment run, or one figure job.

A unit is a small frozen dataclass of plain values (ids, profile, seed, paths): it pickles cheaply and
names its work instead of carrying it, so any worker (a local process, a thread, a Dask worker on another
machine with the same code installed) looks the claim or figure up in the registry and runs it.
:func:`execute` never raises for a failing check: the exception becomes an ``error`` record with its
message and traceback, and the audit goes on.

Claims come from :func:`biasaudit.registry.load` (this package's, installed plugins', and the unit's
``modules``: extra claim modules named by ``$BIASAUDIT_EXTRA_CLAIM_MODULES``, used by the tests' toy claims so
the production registry stays clean).

A :class:`RunUnit` is one training run an experiment claim reads (one η of a sweep, one seed of a grid): the
claim declares its runs (``Claim.runs``), the audit schedules them before the claim, on any worker, and the
claim then reads them from the run cache (content-addressed, :mod:`biasaudit.plumbing.runcache`). Every
record says how many runs its unit computed and how many it found cached (``runs``).

Progress: when the submitting side installs a reporter with :func:`set_reporter` (inline runs, and each
process of the local pool), :func:`execute` reports ``("start", key, label, total)``, ``("case", key)``
``("status", key, text)`` (one status line: a run starting, a wait for another process's lock) and
``("end", key)`` events; on Dask no events are sent (the bars then move per finished unit).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ClaimUnit", "FigureUnit", "RunUnit", "execute", "find_claim", "claim_record", "error_record",
           "module_error_record",
           "set_reporter", "RECORD_SCHEMA", "TIMING_FIELDS"]

RECORD_SCHEMA = 1
# Fields that differ between two runs of the same configuration (everything else must be identical):
# the time taken, and how many experiment runs were computed or found in the cache.
TIMING_FIELDS = ("elapsed_s", "runs")

_reporter: Callable[[tuple], None] | None = None


def set_reporter(reporter: Callable[[tuple], None] | None) -> None:
    """Install (or remove, with ``None``) the progress-event sink of this process."""
    global _reporter
    _reporter = reporter


def _emit(*event) -> None:
    if _reporter is not None:
        try:
            _reporter(event)
        except Exception:  # noqa: BLE001 - progress must never break a run
            pass


@dataclass(frozen=True)
class ClaimUnit:
    """Run claim ``claim_id`` at ``profile`` with ``seed`` (``run_claim``), on any worker."""

    claim_id: str
    profile: str
    seed: int
    modules: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The unit's key in the evidence store and in progress events: the claim id."""
        return self.claim_id

    @property
    def label(self) -> str:
        """The name shown in the progress output: the claim id."""
        return self.claim_id


@dataclass(frozen=True)
class FigureUnit:
    """Make figure ``figure_id`` for ``tier`` into the directory ``outdir`` (a string path).

    The record lists the files relative to ``outdir``'s parent (the report's ``figures/``).
    """

    figure_id: str
    tier: str
    outdir: str
    modules: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The unit's key in the figure store and in progress events: the figure id."""
        return self.figure_id

    @property
    def label(self) -> str:
        """The name shown in the progress output, ``figure <id>``."""
        return f"figure {self.figure_id}"


@dataclass(frozen=True)
class RunUnit:
    """One experiment run: ``runner`` (``"module:function"``) called with ``args`` on any worker.

    ``run_id`` is the run's content key (two claims that read the same run schedule it once); ``after``
    names runs that must finish first (a sweep's η runs need its gradient-flow proxy); ``resources`` are
    Dask worker resources the run asks for (e.g. ``(("GPU", 1),)``: a mixed cluster places it on a GPU
    worker; the local executor ignores them). The runner caches its result itself; its return value is
    dropped."""

    run_id: str
    label: str
    runner: str
    args: tuple = ()
    after: tuple[str, ...] = ()
    resources: tuple[tuple[str, float], ...] = ()

    @property
    def key(self) -> str:
        """The unit's key in progress events, ``run:<run_id>`` (distinct from any claim or figure id)."""
        return f"run:{self.run_id}"


def find_claim(claim_id: str, modules: tuple[str, ...] = ()):
    """The claim with this id, from the registry or the extra ``modules`` (:func:`biasaudit.registry.get_claim`)."""
    from biasaudit.registry import get_claim

    return get_claim(claim_id, tuple(modules))


def execute(unit: ClaimUnit | FigureUnit | RunUnit) -> dict:
    """Run one unit and return its record (a JSON-ready dict). Never raises for a failing check.

    The record's ``runs`` counts the experiment runs the unit computed and those it found cached; status
    lines of the work (:func:`biasaudit.plumbing.status.status`) become ``("status", key, text)`` events.

    Every unit starts from the same process state, whatever the worker ran before it (a run that flushed
    denormals, a test that changed torch's threads): torch's thread count pinned to
    :func:`~biasaudit.validation.device.default_threads` and no flush of denormals
    (:func:`~biasaudit.validation.device.torch_settings`, restored afterwards). Without that, a claim that
    computes with torch or with subnormal floats would read differently on a resumed audit or a Dask worker
    than in the process that trained its runs."""
    from biasaudit.plumbing.runcache import reset_run_counts, run_counts
    from biasaudit.plumbing.status import set_status_sink
    from biasaudit.validation.device import torch_settings

    kinds = {ClaimUnit: _execute_claim, FigureUnit: _execute_figure, RunUnit: _execute_run}
    if type(unit) not in kinds:
        raise TypeError(f"not an audit unit: {unit!r}")
    reset_run_counts()
    if _reporter is not None:
        set_status_sink(functools.partial(_emit, "status", unit.key))
    try:
        with torch_settings(flush_denormal=False):
            record = kinds[type(unit)](unit)
    finally:
        set_status_sink(None)
    record["runs"] = run_counts()
    return record


def _execute_run(unit: RunUnit) -> dict:
    start = time.perf_counter()
    record: dict[str, Any] = {"record": "run", "schema": RECORD_SCHEMA, "run_id": unit.run_id, "label": unit.label,
                              "runner": unit.runner}
    _emit("start", unit.key, unit.label, 1)
    try:
        module, _, name = unit.runner.partition(":")
        getattr(importlib.import_module(module), name)(*unit.args)
        record.update(status="ok", detail="")
    except Exception as exc:  # noqa: BLE001 - a failed run is an error record; its claim reports it again
        record.update(status="error", **_failure_fields(exc))
    finally:
        _emit("end", unit.key)
    return _stamped(record, start)


def _failure_fields(exc: BaseException) -> dict:
    """``detail`` and the last six traceback frames of a failed run or figure."""
    return {"detail": f"{type(exc).__name__}: {exc}",
            "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])}


def _stamped(record: dict, start: float) -> dict:
    from biasaudit.audit.provenance import record_versions

    record["elapsed_s"] = round(time.perf_counter() - start, 6)
    record["versions"] = record_versions()
    return record


def _counting(claim, key: str):
    """The same claim whose ``evaluate`` reports one progress event per call (results unchanged)."""
    evaluate = claim.evaluate

    def counted(params, predicted):
        try:
            return evaluate(params, predicted)
        finally:
            _emit("case", key)

    return dataclasses.replace(claim, evaluate=counted)


def _execute_claim(unit: ClaimUnit) -> dict:
    from biasaudit.ledger import run_claim
    from biasaudit.tier import tier_of_profile

    start = time.perf_counter()
    claim = None
    try:
        claim = find_claim(unit.claim_id, unit.modules)
        total = len(claim.references) + claim.samples.get(unit.profile, 0) + len(claim.negative_control)
        _emit("start", unit.key, unit.label, total)
        claim = _counting(claim, unit.key)  # always: the same call stack (tracebacks) on every executor
        with tier_of_profile(unit.profile):  # experiments run at the audit's tier on every worker
            evidence = run_claim(claim, profile=unit.profile, seed=unit.seed)
        return claim_record(claim, evidence.to_json())
    except Exception as exc:  # noqa: BLE001 - a broken check is an error record, never a crash
        return error_record(unit, claim, exc, time.perf_counter() - start)
    finally:
        _emit("end", unit.key)


def _statement_text(claim) -> str:
    try:
        return claim.statement_text()
    except Exception:  # noqa: BLE001 - a statement sympy cannot print is shown as str()
        return str(claim.statement)


def _claim_fields(claim) -> dict:
    return {
        "kind": claim.kind,
        "origin": claim.origin,
        "source": claim.source,
        "title": claim.title,
        "statement": _statement_text(claim),
        "hypotheses": [str(h) for h in claim.hypotheses],
    }


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _without_addresses(value: Any) -> Any:
    """Drop `` at 0x7f…`` from object reprs (a function in a prediction): they differ between runs."""
    if isinstance(value, str):
        return _ADDRESS.sub("", value)
    if isinstance(value, dict):
        return {k: _without_addresses(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_addresses(v) for v in value]
    return value


def claim_record(claim, evidence: dict) -> dict:
    """An Evidence record plus the claim's description and the library versions.

    Object reprs lose their memory addresses, so the same seed and configuration give the same record.
    """
    from biasaudit.audit.provenance import record_versions

    record = {"record": "claim", "schema": RECORD_SCHEMA, **_without_addresses(evidence), **_claim_fields(claim)}
    record["versions"] = {**record_versions(), **evidence.get("versions", {})}
    return record


def error_record(unit: ClaimUnit, claim, exc: BaseException, elapsed: float) -> dict:
    """The record of a claim whose check raised: verdict ``error``, the message and the traceback."""
    from biasaudit.audit.provenance import record_versions
    from biasaudit.plumbing import jsonable

    tol = {}
    if claim is not None:
        tol = {"name": claim.tolerance.name, "value": claim.tolerance.value, "reason": claim.tolerance.reason}
    record = {
        "record": "claim", "schema": RECORD_SCHEMA, "claim_id": unit.claim_id,
        "paper": getattr(claim, "paper", None), "verdict": "error", "params": None, "predicted": None,
        "observed": None, "error": None, "tolerance": tol, "n_cases": 0, "negative_control": {},
        "detail": f"{type(exc).__name__}: {exc}",
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:]),
        "seed": unit.seed, "profile": unit.profile, "elapsed_s": round(elapsed, 6),
        "versions": record_versions(),
    }
    if claim is not None:
        record.update(_claim_fields(claim))
    return jsonable(record)


def _relative(path: Path, outdir: Path) -> str:
    try:
        return path.resolve().relative_to(outdir.resolve()).as_posix()
    except ValueError:
        raise RuntimeError(f"figure file {path} is not inside the figure directory {outdir}") from None


def module_error_record(module: str, message: str, profile: str, seed: int) -> dict:
    """The ``error`` record of a claims module that failed to import (its claims could not run)."""
    from biasaudit.audit.provenance import record_versions

    return {
        "record": "claim", "schema": RECORD_SCHEMA, "claim_id": f"import:{module}", "paper": None,
        "kind": "module", "source": module, "title": f"claims module {module} failed to import",
        "statement": "", "hypotheses": [], "verdict": "error", "params": None, "predicted": None,
        "observed": None, "error": None, "tolerance": {}, "n_cases": 0, "negative_control": {},
        "detail": f"{message} (none of this module's claims ran)", "seed": seed, "profile": profile,
        "elapsed_s": 0.0, "versions": record_versions(),
    }


def _execute_figure(unit: FigureUnit) -> dict:
    start = time.perf_counter()
    record: dict[str, Any] = {"record": "figure", "schema": RECORD_SCHEMA, "figure_id": unit.figure_id,
                              "tier": unit.tier}
    _emit("start", unit.key, unit.label, 1)
    try:
        from biasaudit.figures import get_figure

        job = get_figure(unit.figure_id, unit.modules)
        record.update(paper=job.paper, title=job.title, claims=list(job.claims), caption=job.caption)
        outdir = Path(unit.outdir)
        outdir.mkdir(parents=True, exist_ok=True)
        paths = [Path(p) for p in job.make(outdir, unit.tier)]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing or not paths:
            raise RuntimeError(f"figure job returned no file or missing files: {missing}")
        record.update(status="ok", files=[_relative(p, outdir.parent) for p in paths], detail="")
    except Exception as exc:  # noqa: BLE001 - a broken figure is an error record, never a crash
        record.update(status="error", files=[], **_failure_fields(exc))
    finally:
        _emit("end", unit.key)
    return _stamped(record, start)
