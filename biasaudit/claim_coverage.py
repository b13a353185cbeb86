"""Claim coverage: the share of theory/ and numerics/ that the claims' verdict paths execute.

``biasaudit check --coverage [--json]`` runs every selected theory claim at profile ``ci`` (references
included, as ``check`` runs them) in a child process under coverage.py, measuring lines and branches of
``biasaudit.theory`` and ``biasaudit.numerics`` only: what the tests run does not count, what the claims call
(the plain-numpy and mpmath references included) does. The child starts measuring before it imports either
package, so a module's definitions count once a claim imports it.

**numba.** coverage.py cannot see inside a jitted function: numba compiles its body. A function decorated
with ``@njit``/``@jit`` is therefore left out of the line and branch counts (``kernels`` reports it instead)
and counts as *reached* when a claim called it: after the run its dispatcher holds a compiled signature
(a kernel called only from another kernel gets one too). Run with ``NUMBA_DISABLE_JIT=1`` in the
environment and the kernels run as Python: then their bodies are counted as lines like any other (slow).

**Unreached functions.** A public function (no ``_`` in its qualified name) that no claim reaches is either
listed in :data:`LIBRARY_SURFACE` with the reason it exists (a reference kept for the tests, a benchmark
baseline, a front for the CLI), or a defect: ``unreached`` gives it the reason ``""`` and the exit status is 1.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["LIBRARY_SURFACE", "LINE_SHARE_TARGET", "MEASURED_PACKAGES", "claim_coverage", "measure", "main"]

LINE_SHARE_TARGET = 0.95  # of the lines of theory/ and numerics/ together that coverage.py can see
MEASURED_PACKAGES = ("theory", "numerics")
JIT_DECORATOR = r"@(numba\.)?n?jit\b"  # a jitted function: its body is numba's, not the interpreter's

# Public functions of theory/ and numerics/ that no claim's verdict reaches, each with the reason it exists.
# The one place such a function is listed: `check --coverage` gives any other unreached function the reason "".
LIBRARY_SURFACE: dict[str, str] = {
}


def _package_dirs() -> dict[str, Path]:
    """The folders of ``biasaudit.theory`` and ``biasaudit.numerics``, found without importing them."""
    out = {}
    for sub in MEASURED_PACKAGES:
        spec = importlib.util.find_spec(f"biasaudit.{sub}")
        out[sub] = Path(next(iter(spec.submodule_search_locations))).resolve()
    return out


def _public(qualname: str) -> bool:
    return bool(qualname) and not any(part.startswith("_") for part in qualname.split("."))


def _attribute(module_name: str, qualname: str):
    """``module.qualname`` (a function or a method; None for a function nested in another one). A module no
    claim imported is imported now, after the measurement."""
    target = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return target


def _dispatcher_reached(target) -> bool | None:
    """Whether the numba dispatcher ``target`` holds a compiled signature (None: not a dispatcher)."""
    if not hasattr(target, "signatures") or not hasattr(target, "py_func"):
        return None
    return bool(target.signatures)


def measure(claim_ids: list[str], seed: int = 0, profile: str = "ci") -> dict:
    """Run ``claim_ids`` (theory claims) under coverage.py in this process and return the report (see
    :func:`claim_coverage`). Call it before anything imports ``biasaudit.theory`` or ``biasaudit.numerics``:
    definitions executed before the measurement starts would count as missed."""
    import coverage

    already = [sub for sub in MEASURED_PACKAGES if f"biasaudit.{sub}" in sys.modules]
    if already:
        raise RuntimeError(f"measure: biasaudit.{already[0]} was imported before the measurement started")
    dirs = _package_dirs()
    cov = coverage.Coverage(data_file=None, branch=True, source=[str(d) for d in dirs.values()])
    cov.exclude(JIT_DECORATOR)
    cov.erase()
    cov.start()
    try:
        verdicts = _run_claims(claim_ids, seed, profile)
    finally:
        cov.stop()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "coverage.json"
        cov.json_report(outfile=str(out))
        data = json.loads(out.read_text())
    return _summarise(data, dirs, verdicts, profile)


def _run_claims(claim_ids: list[str], seed: int, profile: str) -> dict:
    from biasaudit.ledger import run_claim
    from biasaudit.registry import get_claim

    verdicts = {}
    for claim_id in claim_ids:
        try:
            verdicts[claim_id] = str(run_claim(get_claim(claim_id), profile=profile, seed=seed).verdict)
        except Exception as exc:  # noqa: BLE001 - a broken check reached what it reached; its verdict says so
            verdicts[claim_id] = f"error: {type(exc).__name__}: {exc}"
    return verdicts


def _summarise(data: dict, dirs: dict[str, Path], verdicts: dict, profile: str) -> dict:
    import numba

    jit_off = bool(numba.config.DISABLE_JIT)
    modules, unreached = {}, []
    kernels = {"reached": 0, "total": 0, "unreached": []}
    totals = {"lines": 0, "executed": 0, "branches": 0, "branches_taken": 0}
    for path, info in sorted(data["files"].items()):
        resolved = Path(path).resolve()
        sub = next((s for s, d in dirs.items() if resolved.is_relative_to(d)), None)
        if sub is None:
            continue
        rel = resolved.relative_to(dirs[sub]).as_posix()
        name = f"{sub}/{rel}"
        module_name = f"biasaudit.{sub}." + rel[:-3].replace("/", ".")
        summary = info["summary"]
        row = {"lines": summary["num_statements"], "executed": summary["covered_lines"],
               "branches": summary.get("num_branches", 0), "branches_taken": summary.get("covered_branches", 0)}
        row["line_share"] = _share(row["executed"], row["lines"])
        row["branch_share"] = _share(row["branches_taken"], row["branches"])
        modules[name] = row
        for key in totals:
            totals[key] += row[key]
        for qualname, fn in (info.get("functions") or {}).items():
            if not qualname:
                continue
            full = f"{sub}.{rel[:-3].replace('/', '.')}.{qualname}"
            target = _attribute(module_name, qualname)
            if target is None:  # a function nested in another one: its enclosing function answers for it
                continue
            reached = _dispatcher_reached(target)
            if reached is not None and not jit_off:  # every kernel counts here, private ones too
                kernels["total"] += 1
                kernels["reached"] += reached
                if not reached:
                    kernels["unreached"].append(full)
            else:
                reached = fn["summary"]["covered_lines"] > 0 or fn["summary"]["num_statements"] == 0
            if _public(qualname) and not reached:
                unreached.append(full)
    return {
        "profile": profile,
        "claims": len(verdicts),
        "verdicts": verdicts,
        "jit": ("off (NUMBA_DISABLE_JIT=1): kernels run as Python and their lines count" if jit_off else
                "on: jitted bodies are left out of the line counts; a kernel is reached when a claim called it "
                "(its dispatcher holds a compiled signature)"),
        "line_share": _share(totals["executed"], totals["lines"]),
        "branch_share": _share(totals["branches_taken"], totals["branches"]),
        "lines": totals["lines"],
        "executed": totals["executed"],
        "modules": modules,
        "kernels": kernels,
        "unreached": [{"function": f, "reason": LIBRARY_SURFACE.get(f, "")} for f in unreached],
        "listed_but_reached": sorted(set(LIBRARY_SURFACE) - set(unreached)),
    }


def _share(part: int, whole: int) -> float | None:
    return None if whole == 0 else round(part / whole, 4)


def claim_coverage(claim_ids: list[str], seed: int = 0, profile: str = "ci") -> dict:
    """Run ``claim_ids`` under coverage.py in a child process (so that nothing this process imported counts)
    and return ``{"line_share", "branch_share", "modules": {file: {lines, executed, line_share, branches,
    branches_taken, branch_share}}, "kernels": {reached, total, unreached} (private kernels included), "unreached": [{function, reason}],
    "listed_but_reached", "verdicts", "jit"}``."""
    with tempfile.TemporaryDirectory() as tmp:
        ids_file = Path(tmp) / "claims.txt"
        ids_file.write_text("\n".join(claim_ids))
        out = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "biasaudit.claim_coverage", "--ids-file", str(ids_file), "--seed", str(seed),
               "--profile", profile, "--out", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"the coverage run failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
        return json.loads(out.read_text())


def problems(report: dict) -> list[str]:
    """Why a coverage report misses its target: a line share below :data:`LINE_SHARE_TARGET`, an unreached
    public function with no reason, a listed function that a claim does reach (the list is stale)."""
    out = []
    if report["line_share"] is None or report["line_share"] < LINE_SHARE_TARGET:
        out.append(f"line share {report['line_share']} below {LINE_SHARE_TARGET}")
    out += [f"{row['function']}: no claim reaches it and no reason is listed" for row in report["unreached"]
            if not row["reason"]]
    out += [f"{name}: listed as unreached, but a claim reaches it" for name in report["listed_but_reached"]]
    return out


def main(argv: list[str] | None = None) -> int:
    """The child process: ``python -m biasaudit.claim_coverage --ids-file F --out REPORT [--seed N]``."""
    parser = argparse.ArgumentParser(prog="python -m biasaudit.claim_coverage")
    parser.add_argument("--ids-file", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", default="ci")
    args = parser.parse_args(argv)
    ids = [line for line in Path(args.ids_file).read_text().splitlines() if line.strip()]
    report = measure(ids, seed=args.seed, profile=args.profile)
    Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
