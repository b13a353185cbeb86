"""``biasaudit audit``: run every registered claim and write the report directory.

``biasaudit audit [--tier quick|full] [--out DIR] [--claims PATTERN] [--executor local|dask]
[--scheduler ADDR] [--run-resources GPU=1] [--resume] [--seed N] [--workers N] [--data-dir DIR]
[--cache-dir DIR | --no-cache]``. See :mod:`biasaudit.audit` for the design.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

__all__ = ["register", "run"]


def _terminate(signum, frame):
    raise KeyboardInterrupt


def register(sub) -> None:
    """Add ``biasaudit audit`` and its options to the subparsers ``sub``."""
    from biasaudit.tier import QUICK_AUDIT_MINUTES

    p = sub.add_parser("audit", help="run every claim (theory, simulations, experiments) and write the report",
                       description="Run every registered claim and write evidence.jsonl, report.md, "
                                   "index.html and the figures into --out.")
    p.add_argument("--tier", choices=("quick", "full"), default="quick",
                   help=f"quick: theory at profile ci, experiments at quick size (about {QUICK_AUDIT_MINUTES} "
                        "minutes on 2 cores); full: profile thorough, full sizes, meant for a GPU (default: quick)")
    p.add_argument("--out", default="biasaudit-report", metavar="DIR",
                   help="report directory (default: ./biasaudit-report)")
    p.add_argument("--claims", metavar="PATTERN", help="comma-separated globs of claim ids, e.g. 'sam.l2.*', or "
                                                         "a claim module file or folder of your own, e.g. "
                                                         "myclaims/gd_quadratic.py (no packaging needed)")
    p.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="local: this machine's cores; dask: an existing cluster at --scheduler")
    p.add_argument("--scheduler", metavar="ADDR", help="Dask scheduler address, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--run-resources", metavar="NAME=N[,...]",
                   help="Dask worker resources every experiment run unit asks for, e.g. GPU=1: a mixed cluster "
                        "places training on the workers started with --resources GPU=1 (dask only)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local worker processes (default: the usable CPUs; 1 runs inline)")
    p.add_argument("--resume", action="store_true",
                   help="keep complete evidence already in --out and run only the rest")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-figures", action="store_true", help="skip the figure jobs")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--strict", action="store_true", help="exit 1 unless every claim is confirmed")
    p.add_argument("--data-dir", metavar="DIR",
                   help="folder with data sets that cannot be bundled (Fashion-MNIST, CIFAR-10, SVHN; each in DIR or "
                        "a subfolder named after it): the experiments on them run, else they are out of scope")
    cache = p.add_mutually_exclusive_group()
    cache.add_argument("--cache-dir", metavar="DIR",
                       help="where training runs are cached (default: $BIASAUDIT_CACHE_DIR, "
                            "else ~/.cache/biasaudit); local workers inherit it, remote Dask workers keep their own")
    cache.add_argument("--no-cache", action="store_true",
                       help="reuse nothing: a fresh temporary cache for this run, removed at the end")
    p.set_defaults(run=run)


def run(args) -> int:
    """Run the audit (:func:`biasaudit.audit.execute_audit`) with ``--data-dir`` and the cache folder set in the
    environment; ``--no-cache`` uses a temporary cache, removed at the end. Exit status 1 with ``--strict`` unless every
    claim is confirmed, else 0."""
    import shutil
    import tempfile

    from biasaudit.plumbing import InputError, writable_dir
    from biasaudit.tier import DATA_DIR_VARIABLE

    settings = {}  # environment variables read at every use; local pool workers inherit them
    out = directory_path("out", args.out)
    if args.resume:
        check_resumable(out)
    if args.data_dir is not None:
        data_dir = Path(args.data_dir).expanduser()
        if not str(args.data_dir).strip() or not os.path.isdir(data_dir):  # os.path: a too-long name is False
            raise InputError("data-dir", "must be an existing directory", args.data_dir)
        settings[DATA_DIR_VARIABLE] = str(data_dir.resolve())
    if args.cache_dir is not None or args.no_cache:  # `--cache-dir ''` is refused, never "the default"
        chosen = (writable_dir("cache-dir", directory_path("cache-dir", args.cache_dir)) if not args.no_cache
                  else tempfile.mkdtemp(prefix="biasaudit-nocache-"))
        settings["BIASAUDIT_CACHE_DIR"] = str(chosen)
    try:
        with _environment(settings):
            return _run(args)
    finally:
        if args.no_cache:
            shutil.rmtree(settings["BIASAUDIT_CACHE_DIR"], ignore_errors=True)


def directory_path(name: str, value: str) -> Path:
    """``value`` as a folder path the OS can look up: not empty, not too long, no file in its way
    (InputError naming ``name``); the folder itself need not exist."""
    from biasaudit.plumbing import InputError

    if not str(value).strip():
        raise InputError(name, "must name a directory (an empty path is not one)", value)
    path = Path(value).expanduser()
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        pass  # missing (created later) or under a file (refused later, with the rule that applies)
    except OSError as exc:
        raise InputError(name, f"must be a usable directory path ({exc.strerror or exc})", value) from None
    return path


def check_resumable(out: Path) -> None:
    """``--resume`` needs an existing folder (the audit makes it at its start, so a missing one is a mistyped
    path: refused); one with no evidence of an earlier audit starts a fresh audit, and says so (a run killed
    during its first claim has written no record yet, so that is not an error)."""
    from biasaudit.audit.runner import EVIDENCE_FILE, FIGURES_FILE
    from biasaudit.plumbing import InputError

    if not os.path.isdir(out):  # os.path: a too-long name is False, not an OSError
        raise InputError("out", "--resume needs the folder of an earlier audit, and there is none at that path",
                         str(out))
    if not any(os.path.isfile(out / name) for name in (EVIDENCE_FILE, FIGURES_FILE)):
        print(f"note: no claim evidence to keep in {out} (no {EVIDENCE_FILE} of an earlier audit): every claim "
              "runs; experiment runs finished before are still read from the run cache", file=sys.stderr)


@contextlib.contextmanager
def _environment(settings: dict[str, str]):
    previous = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _run(args) -> int:
    from biasaudit.audit import AuditConfig, execute_audit

    from biasaudit.plumbing import claim_pattern
    from biasaudit.registry import claims_option, extra_modules_from_env

    option = claims_option(claim_pattern("claims", args.claims))
    config = AuditConfig(tier=args.tier, out=Path(args.out), claims=option.pattern,
                         extra_modules=extra_modules_from_env() + option.files, executor=args.executor,
                         scheduler=args.scheduler, resume=args.resume, seed=args.seed, workers=args.workers,
                         figures=not args.no_figures,
                         run_resources=parse_resources(args.run_resources, args.executor))
    previous = signal.signal(signal.SIGTERM, _terminate)  # SIGTERM: stop the workers too, like Ctrl-C
    try:
        result = execute_audit(config, quiet=args.quiet)
    finally:
        signal.signal(signal.SIGTERM, previous)
    counts = result.counts()
    if not args.quiet:
        summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        failed = [f["figure_id"] for f in result.figures if f.get("status") != "ok"]
        print(f"{summary} (total {len(result.records)}) in {result.wall_s:.1f} s wall time; experiment runs: "
              f"{result.runs_computed} computed in this audit, {result.runs_reused} reused from the run cache, "
              f"{result.runs_repeated} cache hits of runs computed earlier in this audit"
              + (f"; figures failed: {', '.join(failed)} (their errors are in the report)" if failed else ""),
              file=sys.stderr)
    print(result.report_html)
    if args.strict and counts.get("confirmed", 0) != len(result.records):
        return 1
    return 0


def parse_resources(text: str | None, executor: str) -> tuple[tuple[str, float], ...]:
    """``"GPU=1,MEM=2"`` -> ``(("GPU", 1.0), ("MEM", 2.0))``; InputError naming ``run-resources`` otherwise."""
    from biasaudit.plumbing import InputError

    if not text:
        return ()
    if executor != "dask":
        raise InputError("run-resources", "applies to --executor dask only (worker resources)", text)
    out = []
    for item in text.split(","):
        name, sep, value = item.strip().partition("=")
        try:
            amount = float(value)
        except ValueError:
            amount = float("nan")
        if not sep or not name.strip() or not amount > 0:
            raise InputError("run-resources", "must be NAME=N[,NAME=N...] with N > 0, e.g. GPU=1", text)
        out.append((name.strip(), amount))
    return tuple(out)
