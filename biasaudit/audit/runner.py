"""``execute_audit``: validate the options, resume from the evidence store, run the units, write the report.

Order of work (each step fails with a clear :class:`~biasaudit.inputs.InputError` before the next):

1. options (tier, seed, executor/scheduler/workers);
2. the output directory is created and test-written (an unwritable ``--out`` fails before any work);
3. the claims are selected (an unknown pattern lists the known ids);
4. the executor is made (Dask: the scheduler must answer within a few seconds);
5. with ``--resume`` the evidence store is read; complete records of this configuration are kept, bad
   lines are reported and their units redone; then every other unit runs, and each finished record is
   written atomically at once (:mod:`biasaudit.audit.store`);
6. experiment runs first: each experiment claim declares the training runs it reads (``Claim.runs``, run
   units); they are scheduled once each (two claims reading one run share it), in waves (a run waits for
   the runs it names in ``after``), beside the theory claims; then the experiment claims, which read their
   runs from the run cache; figure jobs run after every claim (they read the same cached runs);
7. ``report.md`` and ``index.html`` are written from the store.

Tier to profile: ``quick`` runs every claim at profile ``ci`` (theory claims' few samples; experiments
at their quick size), ``full`` at ``thorough``.

Resume rules: a record is complete when its checksum holds, its profile and seed are this run's and its
verdict is not ``error`` (errors are retried: the usual fix is to the code, then ``--resume``). Records of
claims outside ``--claims`` are kept in the store untouched. Without ``--resume`` the store starts empty.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from biasaudit.audit.executor import make_executor, validate_executor
from biasaudit.audit.outlock import LOCK_NAME, hold_out_dir
from biasaudit.audit.progress import AuditProgress
from biasaudit.audit.provenance import code_version
from biasaudit.audit.store import BadLine, EvidenceStore
from biasaudit.audit.units import RECORD_SCHEMA, ClaimUnit, FigureUnit, RunUnit, module_error_record
from biasaudit.plumbing import InputError, writable_dir
from biasaudit.plumbing.runcache import AUDIT_STARTED_VARIABLE
from biasaudit.registry import extra_modules_from_env
from biasaudit.tier import PROFILE_OF_TIER, TIERS

__all__ = ["AuditConfig", "AuditResult", "execute_audit", "prepare_out_dir", "select_audit_claims",
           "EVIDENCE_FILE", "FIGURES_FILE", "FIGURE_DIR"]

EVIDENCE_FILE = "evidence.jsonl"
FIGURES_FILE = "figures.jsonl"
FIGURE_DIR = "figures"


@dataclass(frozen=True)
class AuditConfig:
    """The options of one audit (``biasaudit audit``).

    ``tier`` (quick or full), the report folder ``out``, ``claims`` (globs; None: every claim), ``executor`` (local or
    dask) with its ``scheduler`` and ``workers``, ``resume``, ``seed``, ``figures`` (run the figure jobs),
    ``extra_modules`` (more claim modules; default from ``$BIASAUDIT_EXTRA_CLAIM_MODULES``) and ``run_resources`` (the
    Dask resources each run unit asks for, e.g. ``(("GPU", 1),)``).
    """

    tier: str = "quick"
    out: Path = Path("biasaudit-report")
    claims: str | None = None
    executor: str = "local"
    scheduler: str | None = None
    resume: bool = False
    seed: int = 0
    workers: int | None = None
    figures: bool = True
    extra_modules: tuple[str, ...] = field(default_factory=extra_modules_from_env)
    run_resources: tuple[tuple[str, float], ...] = ()  # Dask resources each run unit asks for, e.g. (("GPU", 1),)

    @property
    def profile(self) -> str:
        """The check profile of the tier: ``ci`` for quick, ``thorough`` for full."""
        return PROFILE_OF_TIER[self.tier]


@dataclass
class AuditResult:
    """What :func:`execute_audit` did: the folder ``out``, the evidence and figure records in report order, the units
    ``ran`` and ``reused`` (kept by ``--resume``), the bad lines of the stores, ``wall_s``, the experiment runs
    (scheduled as units, computed, reused, failed) and the paths of the two reports."""

    out: Path
    records: list[dict]
    figures: list[dict]
    ran: int
    reused: int
    bad_lines: list[BadLine]
    wall_s: float
    run_units: int = 0  # experiment runs scheduled as units of their own
    runs_computed: int = 0  # experiment runs trained by this audit (run units, claims and figures together)
    runs_reused: int = 0  # experiment runs read from the run cache, computed before this audit
    runs_repeated: int = 0  # cache hits of runs this audit computed earlier (a second claim reading a run)
    run_errors: list[str] = field(default_factory=list)
    report_md: Path | None = None
    report_html: Path | None = None

    def counts(self) -> dict[str, int]:
        """The number of claims of each verdict present."""
        out: dict[str, int] = {}
        for record in self.records:
            out[record["verdict"]] = out.get(record["verdict"], 0) + 1
        return out


def prepare_out_dir(out: Path | str) -> Path:
    """Create ``out`` and prove it writable (InputError ``out: ...`` otherwise), before any work."""
    return writable_dir("out", out, make=(FIGURE_DIR,))


def _validate(config: AuditConfig) -> None:
    if config.tier not in TIERS:
        raise InputError("tier", f"must be one of {', '.join(TIERS)}", config.tier)
    if isinstance(config.seed, bool) or not isinstance(config.seed, int) or config.seed < 0:
        raise InputError("seed", "must be an integer >= 0", config.seed)
    validate_executor(config.executor, config.scheduler, config.workers)


def select_audit_claims(pattern: str | None, extra_modules: tuple[str, ...] = ()) -> tuple[list, dict]:
    """(claims, broken modules): the registered claims (plus those of ``extra_modules``) that match
    ``pattern`` (:func:`biasaudit.registry.select_claims`). A claims module from outside this package that
    fails to import is returned in ``broken`` (``{module: message}``) instead of stopping the audit."""
    from biasaudit.registry import load, select_claims

    loaded = load(tuple(extra_modules))
    if not loaded.claims:
        if loaded.broken:
            return [], loaded.broken
        raise InputError("claims", "no claim is registered (no claim module was found)")
    return select_claims(pattern, extra=tuple(extra_modules)), loaded.broken


def _complete_claim(record: dict, profile: str, seed: int) -> bool:
    return (record.get("schema") == RECORD_SCHEMA and record.get("profile") == profile
            and record.get("seed") == seed and record.get("verdict") != "error")


def _complete_figure(record: dict, tier: str, figure_dir: Path) -> bool:
    return (record.get("schema") == RECORD_SCHEMA and record.get("status") == "ok"
            and record.get("tier") == tier and bool(record.get("files"))
            and all((figure_dir / name).is_file() for name in record["files"]))


def execute_audit(config: AuditConfig, progress: AuditProgress | None = None, quiet: bool = False) -> AuditResult:
    """Run the audit described by ``config``; see the module docstring."""
    started = time.perf_counter()
    started_utc = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    _validate(config)
    existed = os.path.lexists(Path(config.out).expanduser())
    out = prepare_out_dir(config.out)
    previous = os.environ.get(AUDIT_STARTED_VARIABLE)
    os.environ[AUDIT_STARTED_VARIABLE] = repr(time.time())  # local workers inherit it (cache-hit accounting)
    try:
        with hold_out_dir(out):  # one audit per folder: a second one stops here (exit 2)
            return _run_audit_held(config, out, started, started_utc, progress, quiet)
    except InputError:
        if not existed:
            _remove_if_unused(out)  # a refused audit (say, an unknown --claims) leaves no folder behind
        raise
    finally:
        if previous is None:
            os.environ.pop(AUDIT_STARTED_VARIABLE, None)
        else:
            os.environ[AUDIT_STARTED_VARIABLE] = previous


def _remove_if_unused(out: Path) -> None:
    """Remove ``out`` if it holds nothing but what :func:`prepare_out_dir` and the lock made (never evidence)."""
    import shutil

    figures = out / FIGURE_DIR
    if set(os.listdir(out)) <= {FIGURE_DIR, LOCK_NAME} and not (figures.is_dir() and any(figures.iterdir())):
        shutil.rmtree(out, ignore_errors=True)


def _run_audit_held(config: AuditConfig, out: Path, started: float, started_utc: str,
                    progress: AuditProgress | None, quiet: bool) -> AuditResult:
    figure_dir = out / FIGURE_DIR
    claims, broken = select_audit_claims(config.claims, config.extra_modules)

    jobs, unavailable = [], []
    if config.figures:
        from biasaudit.figures import figure_available, figures_for_claims

        for job in figures_for_claims([c.id for c in claims], config.extra_modules):
            ok, why = figure_available(job, config.tier)
            (jobs if ok else unavailable).append(job if ok else (job, why))

    from biasaudit.audit.store import folder_key
    from biasaudit.ledger import verdict_inconsistency

    secret = folder_key(out)  # a hand edit of a record (and a recomputed plain hash) fails its HMAC
    evidence = EvidenceStore(out / EVIDENCE_FILE, "claim_id", required=("verdict", "profile", "seed"),
                             secret=secret, check=verdict_inconsistency)
    figures = EvidenceStore(out / FIGURES_FILE, "figure_id", required=("status", "tier"), secret=secret)
    bad_lines: list[BadLine] = []
    for store in (evidence, figures):
        store.remove_stale_temporaries()
        if config.resume:
            bad_lines += store.load()
    # a module that fails to import is an error record of its own (full audits; a pattern names claims)
    module_errors = [] if config.claims else [
        module_error_record(name, message, config.profile, config.seed) for name, message in broken.items()]
    evidence.set_order([r["claim_id"] for r in module_errors] + [c.id for c in claims])
    figures.set_order([j.id for j in jobs])

    claim_units = [ClaimUnit(c.id, config.profile, config.seed, config.extra_modules) for c in claims]
    # one directory per job (figures/<id>/): jobs cannot overwrite each other's files
    figure_units = [FigureUnit(j.id, config.tier, str(figure_dir / j.id), config.extra_modules) for j in jobs]
    kept = [u for u in claim_units if u.key in evidence.records
            and _complete_claim(evidence.records[u.key], config.profile, config.seed)]
    kept += [u for u in figure_units if u.key in figures.records
             and _complete_figure(figures.records[u.key], config.tier, figure_dir)]
    kept_keys = {(type(u), u.key) for u in kept}
    # Two phases: every claim, then every figure (figure jobs may draw from results the claims cached,
    # e.g. the torch experiments). Within the claims, longest first (list scheduling for the pool):
    # experiments (minutes each) before theory claims (seconds). The evidence file's order is unaffected.
    kinds = {c.id: c.kind for c in claims}
    claim_todo = [u for u in claim_units if (ClaimUnit, u.key) not in kept_keys]
    claim_todo.sort(key=lambda u: kinds[u.key] == "theory")  # stable: registry order within a kind
    figure_todo = [u for u in figure_units if (FigureUnit, u.key) not in kept_keys]
    todo_ids = {u.key for u in claim_todo}
    run_waves, declare_errors = _declared_runs([c for c in claims if c.id in todo_ids], config)
    phases = _phases(claim_todo, kinds, run_waves) + [figure_todo]
    run_units = [u for wave in run_waves for u in wave]
    todo = claim_todo + figure_todo + run_units

    own_progress = progress is None
    if progress is None:
        progress = AuditProgress(len(claim_units) + len(figure_units) + len(run_units), quiet=quiet)
    executor = None
    code = code_version()
    computed = reused = repeated = 0
    run_seconds = 0.0
    run_errors: list[str] = []
    aborted = True
    try:
        executor = make_executor(config.executor, config.workers, config.scheduler, reporter=progress.event)
        for line in bad_lines:
            progress.note(f"evidence: dropped {line}; that unit is redone")
        for name, message in broken.items():
            progress.note(f"claims module {name} failed to import, its claims cannot run: {message}")
        for record in module_errors:
            evidence.put({**record, "code": code}, write=False)
        for job, why in unavailable:
            progress.note(f"figure {job.id}: left out, {why}")
        for message in declare_errors:
            progress.note(message)
        if config.resume:
            kept_claims = sum(isinstance(u, ClaimUnit) for u in kept)
            progress.note(f"resume: kept {kept_claims} complete claim records and {len(kept) - kept_claims} figures "
                          f"from {out}; running {len(claim_todo)} claims and {len(figure_todo)} figures (experiment "
                          "runs finished before are read from the run cache, not trained again)")
        for unit in kept:
            record = (evidence if isinstance(unit, ClaimUnit) else figures).records[unit.key]
            progress.skipped(unit.label, record.get("verdict", record.get("status")))
        if kept or bad_lines or module_errors:  # at once: drops bad lines, keeps complete records only
            evidence.write()
            figures.write()
        finished = (pair for phase in phases if phase for pair in executor.run(phase))
        for unit, record in finished:
            counted = record.get("runs") or {}
            computed += counted.get("computed", 0)
            reused += counted.get("reused", 0)
            repeated += counted.get("repeated", 0)
            if isinstance(unit, RunUnit):
                run_seconds += record.get("elapsed_s") or 0.0
                if record.get("status") != "ok":
                    run_errors.append(f"{unit.label}: {record.get('detail')}")
                progress.finished(unit.label, record.get("status", "error"), record.get("elapsed_s"))
                continue
            record["code"] = code
            if isinstance(unit, ClaimUnit):
                evidence.put(record)
                progress.finished(unit.label, record["verdict"], record.get("elapsed_s"))
            else:
                figures.put(record)
                progress.finished(unit.label, record["status"], record.get("elapsed_s"))
        aborted = False
    finally:
        if executor is not None:
            executor.close(abort=aborted)
        if own_progress:
            progress.close()
    if not evidence.path.exists():
        evidence.write()
    if not figures.path.exists():
        figures.write()

    result = AuditResult(out=out, records=evidence.ordered(), figures=figures.ordered(), ran=len(todo),
                         reused=len(kept), bad_lines=bad_lines, wall_s=time.perf_counter() - started,
                         run_units=len(run_units), runs_computed=computed, runs_reused=reused,
                         runs_repeated=repeated, run_errors=run_errors)
    from biasaudit.audit.report_data import ReportMeta, build_report
    from biasaudit.audit.report_html import write_html
    from biasaudit.audit.report_md import write_markdown

    meta = ReportMeta(tier=config.tier, profile=config.profile, seed=config.seed, executor=config.executor,
                      workers=getattr(executor, "workers", None), scheduler=config.scheduler,
                      pattern=config.claims, started_utc=started_utc, wall_s=result.wall_s,
                      ran=result.ran, reused=result.reused, code=code, run_units=result.run_units,
                      runs_computed=computed, runs_reused=reused, runs_repeated=repeated, run_errors=run_errors,
                      run_unit_seconds=run_seconds,
                      bad_lines=[str(b) for b in bad_lines],
                      unavailable_figures=[(job.id, why) for job, why in unavailable])
    report = build_report(result.records, result.figures, meta, config.extra_modules)
    result.report_md = write_markdown(report, out)
    result.report_html = write_html(report, out)
    return result


def _declared_runs(claims: list, config: AuditConfig) -> tuple[list[list[RunUnit]], list[str]]:
    """The run units the experiment claims declare (at this audit's tier), each once, in waves: a unit
    waits for the units its ``after`` names. A claim whose declaration fails runs its own runs (noted)."""
    from biasaudit.tier import tier_of_profile

    units: dict[str, RunUnit] = {}
    errors = []
    for claim in claims:
        if claim.runs is None:
            continue
        try:
            with tier_of_profile(config.profile):
                declared = tuple(claim.runs())
        except Exception as exc:  # noqa: BLE001 - the claim will train what it needs itself
            errors.append(f"{claim.id}: its runs could not be declared ({type(exc).__name__}: {exc}); "
                          "the claim runs them itself")
            continue
        for unit in declared:
            if config.run_resources:
                unit = dataclasses.replace(unit, resources=tuple(config.run_resources))
            units.setdefault(unit.run_id, unit)
    waves, placed = [], set()
    pending = list(units.values())
    while pending:
        wave = [u for u in pending if all(a in placed or a not in units for a in u.after)]
        if not wave:  # a cycle: run the rest in declaration order, one wave each (never hang)
            wave = pending[:1]
        waves.append(wave)
        placed.update(u.run_id for u in wave)
        pending = [u for u in pending if u.run_id not in placed]
    return waves, errors


def _phases(claim_todo: list, kinds: dict, run_waves: list) -> list[list]:
    """Without run units: every claim in one phase (experiments first). With them: the first wave of runs
    beside the theory claims, each later wave, then the experiment claims (their runs are all cached)."""
    if not run_waves:
        return [claim_todo]
    theory = [u for u in claim_todo if kinds[u.key] == "theory"]
    experiments = [u for u in claim_todo if kinds[u.key] != "theory"]
    return [run_waves[0] + theory, *run_waves[1:], experiments]
