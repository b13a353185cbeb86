"""The mutation suite: does every plausible bug move some claim's verdict away from *confirmed*?

``python -m biasaudit.devtools.mutate [--mutants GLOB] [--jobs 2] [--seed 0] [--tests] [--json] [--out FILE]
[--list]``

1. The installed package is copied once into a temporary tree in the wheel layout (``biasaudit/theory`` …),
   numba's on-disk caches included (their stamps are the sources' times, kept by the copy).
2. The *baseline*: every claim any mutant names is run in that pristine copy, profile ``ci``, without the
   reference values (``run_claim(references=False)``), in a child process.
3. Each mutant gets its own copy of the pristine tree with one edit applied (:mod:`biasaudit.devtools.mutants`),
   and its claims run the same way in a child process whose ``biasaudit`` is that copy (checked).
4. A mutant is **killed** when a claim confirmed at baseline is not confirmed under it (refuted, undecided,
   error, or its process crashed or timed out: each is named). Other verdict changes (e.g. refuted →
   confirmed) are reported but kill nothing: the target is that every bug *loses* a confirmation.

Three scores, each killed/total: by the claim **verdicts without references** (the score above, the exit
status's), by the claim **verdicts with references** (a confirmed claim whose reference values no longer
reproduce under the mutant is killed too: :func:`reference_verdict`), and, with ``--tests``, by the **tests**
(the test files that name the edited module, or the mutant's own ``tests``, run with ``pytest -x`` against the
mutated copy). The exit status is 0 only when every mutant is killed by the verdicts without references.

A mutant in ``numerics/`` recompiles the numba kernels it reaches (the stale-cache guard wipes the copy's
caches), so a full run takes minutes (``biasaudit bench --cases mutation`` runs it; a slow test does too).
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from biasaudit.devtools.mutants import MUTANTS, Mutant

__all__ = ["MutantResult", "SuiteResult", "package_folders", "build_tree", "apply_mutant", "run_suite", "main",
           "reference_verdict", "mutant_test_files"]

CHILD_TIMEOUT_S = 1200  # a mutant that makes a claim loop forever is killed by the clock, and says so
SUBPACKAGES = ("theory", "numerics", "validation")


@dataclass
class MutantResult:
    """The outcome of one mutant: ``killed`` when a claim confirmed at baseline is not confirmed under it
    (``killed_by``: claim id → its verdict under the mutant); ``other_changes`` (claim id → ``before -> after``),
    ``crashed`` (why its process failed, if it did) and ``elapsed_s``."""

    name: str
    layer: str
    bug: str
    killed: bool
    killed_by: dict = field(default_factory=dict)  # claim id -> verdict under the mutant (was confirmed)
    other_changes: dict = field(default_factory=dict)  # claim id -> "before -> after"
    crashed: str = ""
    elapsed_s: float = 0.0
    killed_with_references: bool = False  # the same, with the reference values checked too
    killed_by_tests: bool | None = None  # None: the tests were not run (no --tests, or no test file names it)
    tests_detail: str = ""  # the first failing test, or why the tests did not run


@dataclass
class SuiteResult:
    """One run of the suite: the ``seed``, the ``baseline`` verdicts, one :class:`MutantResult` per mutant, and the wall
    time."""

    seed: int
    baseline: dict  # claim id -> verdict without references
    mutants: list
    elapsed_s: float
    baseline_with_references: dict = field(default_factory=dict)  # claim id -> verdict with references

    @property
    def score(self) -> tuple[int, int]:
        """``(killed, total)`` by the claim verdicts without references."""
        return sum(m.killed for m in self.mutants), len(self.mutants)

    @property
    def scores(self) -> dict:
        """The three scores as ``{name: (killed, total)}``: ``verdicts_without_references``, ``verdicts``
        (references checked too) and ``tests`` (over the mutants whose tests ran)."""
        tested = [m for m in self.mutants if m.killed_by_tests is not None]
        return {"verdicts_without_references": self.score,
                "verdicts": (sum(m.killed_with_references for m in self.mutants), len(self.mutants)),
                "tests": (sum(bool(m.killed_by_tests) for m in tested), len(tested))}

    def to_json(self) -> dict:
        """The result as JSON, with the scores and each mutant's result."""
        killed, total = self.score
        return {"seed": self.seed, "killed": killed, "total": total, "elapsed_s": round(self.elapsed_s, 1),
                "scores": {name: {"killed": k, "total": n} for name, (k, n) in self.scores.items()},
                "baseline": self.baseline, "baseline_with_references": self.baseline_with_references,
                "mutants": [asdict(m) for m in self.mutants]}


def package_folders() -> dict[str, Path]:
    """Where the installed package and its three sub-packages live (a checkout or site-packages)."""
    out = {"biasaudit": Path(importlib.util.find_spec("biasaudit").submodule_search_locations[0])}
    for sub in SUBPACKAGES:
        out[sub] = Path(importlib.util.find_spec(f"biasaudit.{sub}").submodule_search_locations[0])
    return out


def build_tree(dest: Path) -> Path:
    """Copy the installed package into ``dest/biasaudit`` in the wheel layout; return ``dest``."""
    folders = package_folders()
    ignore = shutil.ignore_patterns("*.pyc", ".pytest_cache")
    shutil.copytree(folders["biasaudit"], dest / "biasaudit", ignore=ignore)
    for sub in SUBPACKAGES:
        target = dest / "biasaudit" / sub
        if not target.exists():  # editable install: the sub-package sits beside biasaudit/
            shutil.copytree(folders[sub], target, ignore=shutil.ignore_patterns("*.pyc"))
    return dest


def _source(tree: Path, mutant: Mutant) -> tuple[Path, str]:
    """The file ``mutant`` edits in ``tree`` and its text; ``mutant.old`` must occur there exactly once."""
    path = tree / "biasaudit" / mutant.path
    text = path.read_text(encoding="utf-8")
    count = text.count(mutant.old)
    if count != 1:
        raise ValueError(f"mutant {mutant.name}: expected 1 occurrence of {mutant.old!r} in {mutant.path}, "
                         f"found {count}")
    return path, text


def apply_mutant(tree: Path, mutant: Mutant) -> None:
    """Edit one file of ``tree``; ``mutant.old`` must occur exactly once."""
    path, text = _source(tree, mutant)
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")


def _selected_ids(globs: tuple[str, ...], experiments: tuple[str, ...]) -> list[str]:
    from biasaudit.registry import all_claims

    ids = [c.id for c in all_claims() if c.kind == "theory" and any(fnmatch.fnmatchcase(c.id, g) for g in globs)]
    known = {c.id for c in all_claims()}
    missing = [e for e in experiments if e not in known]
    if missing:
        raise ValueError(f"unknown experiment claims: {missing}")
    return ids + list(experiments)


def _child_run(tree: Path, claim_ids: list[str], seed: int) -> tuple[dict, str]:
    """Run ``claim_ids`` with the ``biasaudit`` of ``tree`` in a child process: ({id: (verdict without
    references, verdict with them)}, crash text)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(tree)
    env["BIASAUDIT_CACHE_DIR"] = str(tree / ".cache")
    cmd = [sys.executable, "-m", "biasaudit.devtools.mutate", "--child", "--seed", str(seed),
           "--claim-ids", ",".join(claim_ids)]
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {}, f"timed out after {CHILD_TIMEOUT_S} s"
    verdicts = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            verdicts[row["claim"]] = (row["verdict"], row["with_references"])
    crash = ""
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        crash = f"exit {proc.returncode}: {tail[0][:200]}"
    return verdicts, crash


def _judge(mutant: Mutant, baseline: dict, verdicts: dict, crash: str, ids: list[str], elapsed: float
           ) -> MutantResult:
    result = MutantResult(mutant.name, mutant.layer, mutant.bug, False, crashed=crash, elapsed_s=round(elapsed, 1))
    missing = "missing (process crashed)" if crash else "missing"
    for cid in ids:
        before, before_refs = baseline.get(cid, (None, None))
        after, after_refs = verdicts.get(cid, (missing, missing))
        if before == "confirmed" and after != "confirmed":
            result.killed_by[cid] = after
        elif before != after:
            result.other_changes[cid] = f"{before} -> {after}"
        if before_refs == "confirmed" and after_refs != "confirmed":
            result.killed_with_references = True
    result.killed = bool(result.killed_by)
    return result


# tests that never count as killing a mutant: the suite's own (they check each mutant's text in the installed
# copy, and fail under any mutant) and the packaging tests (they build the checkout, not the mutated copy)
SUITE_TESTS = ("test_mutation.py", "test_packaging.py")


def mutant_test_files(mutant: Mutant, tests_dir: Path) -> list[Path]:
    """The test files that can see ``mutant``: its own ``tests`` (names under ``tests_dir``), else every test
    file whose text names the edited module (its file name without ``.py``) or imports a module beside it that
    imports from it (:func:`_reexporters`), the suite's own tests aside."""
    if mutant.tests:
        return [tests_dir / name for name in mutant.tests]
    names = [Path(mutant.path).stem, *_reexporters(mutant)]
    return sorted(f for f in tests_dir.glob("test_*.py")
                  if f.name not in SUITE_TESTS and any(name in f.read_text(encoding="utf-8") for name in names))


def _reexporters(mutant: Mutant) -> list[str]:
    """``"<package>.<module> import"`` for each module beside the edited one that imports from it (a test that
    imports ``biasaudit.theory.eos`` sees ``theory/eos_flow.py`` through it)."""
    head, _, rest = mutant.path.rpartition("/")
    folders = package_folders()
    folder = folders.get(head) if head in folders else (folders["biasaudit"] / head if head else None)
    if folder is None or not folder.is_dir():
        return []
    dotted = "biasaudit." + head.replace("/", ".") if head else "biasaudit"
    stem = Path(rest).stem
    return [f"{dotted}.{f.stem} import" for f in folder.glob("*.py")
            if f.stem != stem and f"{dotted}.{stem} import" in f.read_text(encoding="utf-8")]


def _tests_run(tree: Path, files: list[Path], tests_dir: Path) -> tuple[bool | None, str]:
    """Run ``files`` with pytest (``-x``, not the slow tests) against the ``biasaudit`` of ``tree``: (killed, the
    first failure or why they did not run). The child's working directory is ``tree``, so it imports the copy."""
    if not files:
        return None, "no test file names the edited module"
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(tree)
    env["BIASAUDIT_CACHE_DIR"] = str(tree / ".cache-tests")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--rootdir", str(tests_dir.parent),
           "-c", str(tests_dir.parent / "pyproject.toml"), *map(str, files)]
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return True, f"the tests timed out after {CHILD_TIMEOUT_S} s"
    failed = [line for line in proc.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    if proc.returncode == 0:
        return False, f"{len(files)} files passed"
    return True, (failed[0] if failed else f"pytest exit {proc.returncode}")[:200]


def run_suite(mutants: tuple[Mutant, ...] = MUTANTS, *, jobs: int = 2, seed: int = 0, workdir: Path | None = None,
              progress=None, tests: bool = False) -> SuiteResult:
    """Build the pristine tree, run the baseline, then every mutant (``jobs`` child processes at a time); with
    ``tests``, also each mutant's test files (:func:`mutant_test_files`) from the checkout's ``tests/`` folder."""
    start = time.perf_counter()
    say = progress or (lambda text: None)
    per_mutant = {m.name: _selected_ids(m.claims, m.experiments) for m in mutants}
    all_ids = sorted({cid for ids in per_mutant.values() for cid in ids})
    own_tmp = workdir is None
    root = Path(tempfile.mkdtemp(prefix="biasaudit-mutate-")) if own_tmp else Path(workdir)
    try:
        pristine = build_tree(root / "pristine")
        for mutant in mutants:  # fail before any work when a mutant no longer applies
            _source(pristine, mutant)
        say(f"baseline: {len(all_ids)} claims in the pristine copy ...")
        pairs, crash = _child_run(pristine, all_ids, seed)
        baseline = {cid: without for cid, (without, _) in pairs.items()}
        tests_dir = package_folders()["biasaudit"].parent / "tests"
        if tests and not tests_dir.is_dir():
            raise RuntimeError(f"--tests needs a checkout: no tests folder at {tests_dir}")
        if crash or set(baseline) != set(all_ids):
            raise RuntimeError(f"the baseline run failed ({crash or 'claims missing'}): nothing to compare with")
        say(f"baseline: {sum(v == 'confirmed' for v in baseline.values())} of {len(all_ids)} confirmed")

        def one(mutant: Mutant) -> MutantResult:
            t0 = time.perf_counter()
            tree = root / f"m-{mutant.name}"
            shutil.copytree(pristine, tree, symlinks=True)
            apply_mutant(tree, mutant)
            verdicts, crash = _child_run(tree, per_mutant[mutant.name], seed)
            result = _judge(mutant, pairs, verdicts, crash, per_mutant[mutant.name], 0.0)
            if tests:
                files = mutant_test_files(mutant, tests_dir)
                result.killed_by_tests, result.tests_detail = _tests_run(tree, files, tests_dir)
            shutil.rmtree(tree, ignore_errors=True)
            result.elapsed_s = round(time.perf_counter() - t0, 1)
            return result

        results = []
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for i, res in enumerate(pool.map(one, mutants), 1):
                results.append(res)
                status = ("killed by " + ", ".join(f"{k} ({v})" for k, v in list(res.killed_by.items())[:3])
                          if res.killed else "SURVIVED")
                say(f"[{i}/{len(mutants)}] {res.name}: {status} ({res.elapsed_s:.0f} s)")
        return SuiteResult(seed, baseline, results, time.perf_counter() - start,
                           {cid: with_refs for cid, (_, with_refs) in pairs.items()})
    finally:
        if own_tmp:
            shutil.rmtree(root, ignore_errors=True)


def _child_main(claim_ids: list[str], seed: int) -> int:
    """In the child: refuse to run unless ``biasaudit`` is imported from the current directory's copy."""
    import biasaudit

    here = Path.cwd().resolve()
    if here not in Path(biasaudit.__file__).resolve().parents:
        print(f"biasaudit imported from {biasaudit.__file__}, not from the mutated copy {here}", file=sys.stderr)
        return 3
    from biasaudit.ledger import run_claim
    from biasaudit.registry import get_claim

    for cid in claim_ids:
        try:
            claim = get_claim(cid)
            verdict = str(run_claim(claim, "ci", seed, references=False).verdict)
            with_references = verdict if verdict != "confirmed" else reference_verdict(claim)
        except Exception as exc:  # a crash in a check is an outcome of the mutant, recorded as "error"
            verdict = with_references = f"error ({type(exc).__name__})"
        print(json.dumps({"claim": cid, "verdict": verdict, "with_references": with_references}), flush=True)
    return 0


def reference_verdict(claim) -> str:
    """The verdict of ``claim``'s reference values alone, checked as :func:`biasaudit.ledger.run_claim` checks
    them before its sampled cases (so a claim confirmed without references is confirmed with them exactly
    when this is ``confirmed``): ``predict`` must reproduce each expected value, and ``evaluate`` must agree."""
    import math

    from biasaudit.ledger import OutOfScope, _default_compare

    compare = claim.compare_reference or _default_compare
    for ref in claim.references:
        try:
            predicted = claim.predict(ref.params)
            if not compare(predicted, ref.expected) <= ref.tolerance:
                return "refuted"
            obs = claim.evaluate(ref.params, predicted)
        except OutOfScope:
            return "out-of-scope"
        if not obs.decided or (isinstance(obs.error, float) and math.isnan(obs.error)):
            return "undecided"
        if not obs.error <= claim.tolerance.value:
            return "refuted"
    return "confirmed"


def _format(result: SuiteResult) -> str:
    killed, total = result.score
    lines = [f"{'mutant':34s} {'layer':10s} {'outcome':9s} evidence"]
    for m in result.mutants:
        evidence = ", ".join(f"{k}: {v}" for k, v in list(m.killed_by.items())[:3])
        more = len(m.killed_by) - 3
        evidence += f" (+{more} more)" if more > 0 else ""
        if m.crashed:
            evidence += f" [process: {m.crashed}]"
        lines.append(f"{m.name:34s} {m.layer:10s} {'killed' if m.killed else 'SURVIVED':9s} {evidence}")
    scores = result.scores
    lines.append(f"mutation score: {killed}/{total} killed ({result.elapsed_s:.0f} s, seed {result.seed}, profile ci, "
                 "no references)")
    k, n = scores["verdicts"]
    lines.append(f"killed by claim verdicts with references: {k}/{n}")
    k, n = scores["tests"]
    lines.append(f"killed by tests: {k}/{n}" + ("" if n else " (not run: --tests)"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """The command line of the suite (module docstring): exit status 0 when every mutant is killed, 1 when one survives,
    2 for a bad option."""
    parser = argparse.ArgumentParser(prog="python -m biasaudit.devtools.mutate", description=__doc__.split("\n")[0])
    parser.add_argument("--mutants", metavar="PATTERN", help="comma-separated globs of mutant names")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--out", type=Path, help="also write the JSON result to this file (atomically)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--tests", action="store_true",
                        help="also run each mutant's test files against the mutated copy (the tests score)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--claim-ids", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child_main([c for c in args.claim_ids.split(",") if c], args.seed)
    mutants = MUTANTS
    if args.mutants:
        globs = [g.strip() for g in args.mutants.split(",") if g.strip()]
        mutants = tuple(m for m in MUTANTS if any(fnmatch.fnmatchcase(m.name, g) for g in globs))
        if not mutants:
            print(f"biasaudit: error: mutants: {args.mutants!r} matches no mutant (see --list)", file=sys.stderr)
            return 2
    if args.jobs < 1:
        print(f"biasaudit: error: jobs: must be >= 1, got {args.jobs}", file=sys.stderr)
        return 2
    if args.list:
        for m in mutants:
            print(f"{m.name:34s} {m.layer:10s} {m.path:28s} {m.bug}")
        return 0
    if args.out is not None and args.out.exists() and args.out.is_dir():
        print(f"biasaudit: error: out: {args.out} is a directory", file=sys.stderr)
        return 2
    result = run_suite(mutants, jobs=args.jobs, seed=args.seed, tests=args.tests,
                       progress=lambda text: print(text, file=sys.stderr, flush=True))
    if args.out is not None:
        from biasaudit.plumbing import atomic_write_text

        atomic_write_text(args.out, json.dumps(result.to_json(), indent=1))
    print(json.dumps(result.to_json(), indent=1) if args.json else _format(result))
    killed, total = result.score
    return 0 if killed == total else 1


if __name__ == "__main__":
    sys.exit(main())
