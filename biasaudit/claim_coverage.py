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

**Refusals of invalid input.** A line that raises ``InputError`` is left out of the counts (``excluded`` in the
report states the rule and how many lines it took): "the API refuses invalid input" is not a theorem, so no claim
should reach it; the tests do. The condition that guards the refusal still counts.

**Environment handling.** The modules of :data:`ENVIRONMENT` (the numba cache guard, the compile-time intrinsics)
are left out of the counts (``excluded["environment"]`` in the report states the rule and the modules): they run on
the state of numba's disk cache or inside its compiler, never on a claim's inputs.

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

__all__ = ["ENVIRONMENT", "LIBRARY_SURFACE", "LINE_SHARE_TARGET", "MEASURED_PACKAGES", "claim_coverage", "measure", "main"]

LINE_SHARE_TARGET = 0.95  # of the lines of theory/ and numerics/ together that coverage.py can see
MEASURED_PACKAGES = ("theory", "numerics")
JIT_DECORATOR = r"@(numba\.)?n?jit\b"  # a jitted function: its body is numba's, not the interpreter's
# a refusal of invalid input: "the API refuses invalid input" is no theorem, so no claim should reach it; the tests
# do (tests/test_input_ranges.py, tests/test_cli_input_rules.py). The condition that guards it still counts.
INPUT_REFUSAL = r"raise InputError\("
EXCLUSION_RULE = ("lines that raise InputError (a refusal of invalid input: no theorem's verdict path passes "
                  "through one; the tests reach them) are left out of the line and branch counts; the condition "
                  "guarding each still counts")

_REFERENCE = "a plain reference kept for the tests and the bench (the claims run the kernel it checks)"
_FRONT = "the front for the CLI, the figures or the API (sweep, regimes, heatmaps); no claim's verdict reads it"
_SYMBOLIC = ("a symbolic or closed-form helper the tests check the theory "
             "with; the claims evaluate its formula directly")

# Environment handling, left out of the line and branch counts by rule: code that runs on the state of numba's disk
# cache or inside numba's compiler, never on a claim's inputs, so no claim's verdict path can choose to pass through
# it (a run reaches it or not with the cache: the intrinsics' lines counted 17 on a cold cache and 0 on a warm one).
# The tests reach it (tests/test_cache_guard.py, tests/test_heatmap_rk4.py).
ENVIRONMENT: dict[str, str] = {
    "numerics/cache_guard.py": "the numba cache guard: at import it removes numba's cached kernels when their source "
                               "changed, reading the cache folders the environment names",
    "numerics/rsqrt.py": "a numba intrinsic of the rk4 heatmap kernel (sam.l2.heatmap_rk4_matches_reference runs "
                         "the kernel): its Python runs only when numba compiles that kernel, not when it loads "
                         "from the disk cache",
    "numerics/simd.py": "a numba intrinsic (a compile option) of the rk4 heatmap kernel: its Python runs only when "
                        "numba compiles that kernel",
}
ENVIRONMENT_RULE = ("modules that handle the environment (numba's disk cache, numba's compiler) are left out of the "
                    "line and branch counts: they run on the state of the cache, never on a claim's inputs")

# Public functions of theory/ and numerics/ that no claim's verdict reaches, each with the reason it exists.
# The one place such a function is listed: `check --coverage` gives any other unreached function the reason "".
LIBRARY_SURFACE: dict[str, str] = {
    "numerics.eos_central_flow.CentralFlow.norm_l1": _FRONT,
    "numerics.eos_central_flow.CentralFlow.residual": _FRONT,
    "numerics.eos_central_flow.CentralFlow.risk": _FRONT,
    "numerics.eos_central_flow.CentralFlow.to_json": _FRONT,
    "numerics.l2_reduction.Classification.kind": _FRONT,
    "numerics.tableau.ButcherTableau.b_embedded": ("the embedded weights of a tableau; the tests check them, the "
                                                   "claims' integrators use their own step control"),
    "theory.eos_risk.fixed_teacher_risk_curve": _FRONT,
    "theory.formula.traced": "the tests' tracer of which formulas a prediction evaluates (tests/test_statements.py)",
    "theory.sam_l2.deep_perturbed_weights": _SYMBOLIC,
    "theory.sam_linf.linf_chatter_bound": _SYMBOLIC,
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


def _is_kernel(target) -> bool:
    return hasattr(target, "signatures") and hasattr(target, "py_func")


def _kernels_reached(module_names: list[str]) -> set[str]:
    """Qualified names (``module.function``) of the kernels a claim reached: those whose dispatcher holds a
    compiled signature, and every kernel one of those calls by name (numba compiles a callee with its caller;
    one loaded from numba's disk cache leaves its callees' dispatchers empty)."""
    import ast
    import inspect

    kernels = {}
    for module_name in module_names:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if _is_kernel(value):
                kernels.setdefault(id(value), (f"{value.py_func.__module__}.{value.py_func.__qualname__}", value))
    by_name = {full: value for full, value in kernels.values()}
    reached = [full for full, value in by_name.items() if value.signatures]
    seen = set(reached)
    while reached:
        value = by_name[reached.pop()]
        module = sys.modules[value.py_func.__module__]
        tree = ast.parse(inspect.getsource(value.py_func).lstrip())
        for node in ast.walk(tree):
            callee = getattr(module, node.id, None) if isinstance(node, ast.Name) else None
            if _is_kernel(callee):
                full = f"{callee.py_func.__module__}.{callee.py_func.__qualname__}"
                if full not in seen:
                    seen.add(full)
                    reached.append(full)
    return seen


def measure(claim_ids: list[str], seed: int = 0, profile: str = "ci") -> dict:
    """Run ``claim_ids`` (theory claims) under coverage.py in this process and return the report (see
    :func:`claim_coverage`). Call it before anything imports ``biasaudit.theory`` or ``biasaudit.numerics``:
    definitions executed before the measurement starts would count as missed."""
    import coverage

    already = [sub for sub in MEASURED_PACKAGES if f"biasaudit.{sub}" in sys.modules]
    if already:
        raise RuntimeError(f"measure: biasaudit.{already[0]} was imported before the measurement started")
    dirs = _package_dirs()
    omit = [str(dirs[rel.split("/")[0]] / rel.split("/", 1)[1]) for rel in ENVIRONMENT]
    cov = coverage.Coverage(data_file=None, branch=True, source=[str(d) for d in dirs.values()], omit=omit)
    cov.exclude(JIT_DECORATOR)
    cov.exclude(INPUT_REFUSAL)
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
    files = {path: _where(path, dirs) for path in data["files"]}
    files = {path: where for path, where in files.items() if where is not None}
    kernels_reached = set() if jit_off else _kernels_reached([module for _, _, module in files.values()])
    modules, unreached = {}, []
    kernels = {"reached": 0, "total": 0, "unreached": []}
    totals = {"lines": 0, "executed": 0, "branches": 0, "branches_taken": 0}
    refusals = sum(_refusal_lines(path, data["files"][path].get("excluded_lines", [])) for path in files)
    for path, (sub, rel, module_name) in sorted(files.items()):
        info = data["files"][path]
        name = f"{sub}/{rel}"
        summary = info["summary"]
        row = {"lines": summary["num_statements"], "executed": summary["covered_lines"],
               "branches": summary.get("num_branches", 0), "branches_taken": summary.get("covered_branches", 0),
               "missing_lines": info.get("missing_lines", [])}
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
            if _is_kernel(target) and not jit_off:  # every kernel counts here, private ones too
                reached = f"{module_name}.{qualname}" in kernels_reached
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
        "excluded": {"rule": EXCLUSION_RULE, "lines": refusals,
                     "environment": {"rule": ENVIRONMENT_RULE, "modules": dict(ENVIRONMENT)}},
        "line_share": _share(totals["executed"], totals["lines"]),
        "branch_share": _share(totals["branches_taken"], totals["branches"]),
        "lines": totals["lines"],
        "executed": totals["executed"],
        "modules": modules,
        "kernels": kernels,
        "unreached": [{"function": f, "reason": LIBRARY_SURFACE.get(f, "")} for f in unreached],
        "listed_but_reached": sorted(set(LIBRARY_SURFACE) - set(unreached)),
    }


def _refusal_lines(path: str, excluded: list[int]) -> int:
    """How many of a file's excluded lines start a refusal of invalid input (:data:`INPUT_REFUSAL`)."""
    import re

    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return sum(bool(re.search(INPUT_REFUSAL, lines[n - 1])) for n in excluded if 0 < n <= len(lines))


def _where(path: str, dirs: dict[str, Path]) -> tuple[str, str, str] | None:
    """(package, file relative to it, module name) of a measured file; None outside theory/ and numerics/."""
    resolved = Path(path).resolve()
    for sub, folder in dirs.items():
        if resolved.is_relative_to(folder):
            rel = resolved.relative_to(folder).as_posix()
            return sub, rel, f"biasaudit.{sub}." + rel[:-3].replace("/", ".")
    return None


def _share(part: int, whole: int) -> float | None:
    return None if whole == 0 else round(part / whole, 4)


def claim_coverage(claim_ids: list[str], seed: int = 0, profile: str = "ci") -> dict:
    """Run ``claim_ids`` under coverage.py in a child process (so that nothing this process imported counts)
    and return ``{"line_share", "branch_share", "modules": {file: {lines, executed, line_share, branches,
    branches_taken, branch_share, missing_lines}}, "kernels": {reached, total, unreached} (private kernels
    included), "unreached": [{function, reason}], "listed_but_reached", "verdicts", "jit"}``."""
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
