"""The claim ledger: claims are data, running one gives Evidence with a verdict.

A :class:`Claim` states one derived statement of a paper:

* ``hypotheses`` and ``statement`` are sympy objects over symbols with assumptions (for reading and for the
  symbolic tests);
* ``predict(params)`` evaluates the statement numerically (a lambdified sympy expression, or a boundary
  computed from one);
* ``evaluate(params, predicted)`` runs *independent* numerics and returns an :class:`Observation` whose
  ``error`` is compared with the named :class:`Tolerance`;
* ``negative_control(params, predicted)`` returns a *wrong* prediction (a boundary moved by 1 %, a hypothesis
  broken): evaluating it must fail, otherwise the check has no power and the verdict is ``undecided``;
* ``domain`` is the valid parameter region for the property checks, ``references`` are the spec's own numbers.

:func:`run_claim` runs the references and ``n`` sampled cases and returns one :class:`Evidence`:

=============  ==================================================================================
verdict        rule
=============  ==================================================================================
confirmed      every case within tolerance, and every negative control failed
refuted        some case (or a spec reference value) outside tolerance: the first counterexample
undecided      numerics could not decide a case, or a negative control passed (no power)
out-of-scope   ``predict`` raised :class:`OutOfScope`: the claim's hypotheses do not apply
error          the check itself raised (recorded by the audit, never counted as a pass)
=============  ==================================================================================
"""

from __future__ import annotations

import enum
import functools
import hashlib
import math
import platform
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from biasaudit.domain import Domain, Params
from biasaudit.plumbing import jsonable

__all__ = [
    "Verdict",
    "Tolerance",
    "Observation",
    "Reference",
    "Claim",
    "Evidence",
    "OutOfScope",
    "run_claim",
    "jsonable",
    "claim_seed",
    "PROFILES",
]

PROFILES = ("ci", "thorough")


class Verdict(str, enum.Enum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    UNDECIDED = "undecided"
    OUT_OF_SCOPE = "out-of-scope"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


class OutOfScope(Exception):
    """Raised by ``predict``/``evaluate`` when the claim's hypotheses do not cover these parameters."""


@dataclass(frozen=True)
class Tolerance:
    """A named tolerance and why it has that size (e.g. ``rk4_global``: ``1e-8``, 'RK4 at h=1e-3 ...')."""

    name: str
    value: float
    reason: str

    def __post_init__(self):
        if not (self.value >= 0 and math.isfinite(self.value)):
            raise ValueError(f"tolerance {self.name} must be finite and >= 0, got {self.value}")


@dataclass(frozen=True)
class Observation:
    """What the independent numerics saw. ``error`` is compared with the claim's tolerance.

    ``decided=False`` means the numerics could not tell (solver failure, horizon too short): it yields an
    ``undecided`` verdict, never a pass.
    """

    observed: Any
    error: float
    detail: str = ""
    decided: bool = True


@dataclass(frozen=True)
class Reference:
    """A value stated in the spec: ``predict(params)`` must match ``expected`` within ``tolerance``."""

    params: Params
    expected: Any
    tolerance: float
    note: str = ""


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    source: str
    title: str
    hypotheses: tuple
    statement: Any
    predict: Callable[[Params], Any]
    evaluate: Callable[[Params, Any], Observation]
    tolerance: Tolerance
    domain: Domain
    negative_control: Callable[[Params, Any], Any]
    references: tuple[Reference, ...] = ()
    kind: str = "theory"
    samples: Mapping[str, int] = field(default_factory=lambda: {"ci": 8, "thorough": 64})
    controls: int = 2
    compare_reference: Callable[[Any, Any], float] | None = None
    notes: str = ""

    def __post_init__(self):
        if not self.id or " " in self.id:
            raise ValueError(f"claim id must be a non-empty dotted name, got {self.id!r}")
        if set(self.samples) != set(PROFILES):
            raise ValueError(f"{self.id}: samples must give a count for each profile {PROFILES}")
        if any(h is True or h is False or type(h).__name__ in ("BooleanTrue", "BooleanFalse")
               for h in self.hypotheses):
            # sympy evaluates Gt(mu, 0) to True when mu is positive: the hypothesis would vanish from the
            # ledger and the report. Build relations with evaluate=False.
            raise ValueError(f"{self.id}: a hypothesis evaluated to a constant; build it with evaluate=False")

    def statement_text(self) -> str:
        import sympy

        return sympy.sstr(self.statement)


@dataclass(frozen=True)
class Evidence:
    claim_id: str
    paper: str
    verdict: Verdict
    params: Any
    predicted: Any
    observed: Any
    error: float | None
    tolerance: dict
    n_cases: int
    negative_control: dict
    detail: str
    seed: int
    profile: str
    elapsed_s: float
    versions: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        out = asdict(self)
        out["verdict"] = str(self.verdict)
        return jsonable(out)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Evidence":
        values = dict(data)
        values["verdict"] = Verdict(values["verdict"])
        return cls(**values)


def claim_seed(claim_id: str, seed: int) -> np.random.SeedSequence:
    """A stream per (claim, seed) that does not depend on the order claims run in."""
    digest = int.from_bytes(hashlib.sha256(claim_id.encode()).digest()[:8], "little")
    return np.random.SeedSequence([seed, digest])


@functools.cache
def library_versions() -> dict:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for dist in ("biasaudit", "numpy", "numba", "sympy", "mpmath", "scipy"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = None
    return out


def _failed(obs: Observation, tol: float) -> bool:
    return not (obs.error <= tol)  # NaN counts as failed


def run_claim(claim: Claim, profile: str = "ci", seed: int = 0, n: int | None = None) -> Evidence:
    """Run the references, ``n`` sampled cases and the negative controls of one claim."""
    if profile not in PROFILES:
        raise ValueError(f"profile: must be one of {', '.join(PROFILES)}, got {profile!r}")
    start = time.perf_counter()
    rng = np.random.default_rng(claim_seed(claim.id, seed))
    n_samples = claim.samples[profile] if n is None else n
    tol = claim.tolerance.value
    tol_info = {"name": claim.tolerance.name, "value": tol, "reason": claim.tolerance.reason}
    compare_ref = claim.compare_reference or _default_compare

    def evidence(verdict, params, predicted, observed, error, n_cases, control, detail):
        return Evidence(
            claim_id=claim.id,
            paper=claim.paper,
            verdict=verdict,
            params=jsonable(params),
            predicted=jsonable(predicted),
            observed=jsonable(observed),
            error=None if error is None else float(error),
            tolerance=tol_info,
            n_cases=n_cases,
            negative_control=jsonable(control),
            detail=detail,
            seed=seed,
            profile=profile,
            elapsed_s=round(time.perf_counter() - start, 6),
            versions=library_versions(),
        )

    cases: list[tuple[str, Params]] = [("reference", ref.params) for ref in claim.references]
    cases += [("sample", claim.domain.sample(rng)) for _ in range(n_samples)]
    worst: tuple | None = None
    undecided: tuple | None = None
    passed_cases: list[tuple[Params, Any]] = []
    for index, (origin, params) in enumerate(cases):
        try:
            predicted = claim.predict(params)
        except OutOfScope as exc:
            return evidence(Verdict.OUT_OF_SCOPE, params, None, None, None, index + 1, {}, str(exc))
        if origin == "reference":
            ref = claim.references[index]
            ref_error = compare_ref(predicted, ref.expected)
            if not ref_error <= ref.tolerance:
                detail = f"spec reference value not reproduced ({ref.note}): expected {ref.expected!r}"
                return evidence(Verdict.REFUTED, params, predicted, ref.expected, ref_error, index + 1, {}, detail)
        try:
            obs = claim.evaluate(params, predicted)
        except OutOfScope as exc:
            return evidence(Verdict.OUT_OF_SCOPE, params, predicted, None, None, index + 1, {}, str(exc))
        if not obs.decided or (isinstance(obs.error, float) and math.isnan(obs.error)):
            undecided = undecided or (params, predicted, obs)
            continue
        if _failed(obs, tol):
            detail = f"counterexample ({origin} case {index + 1} of {len(cases)}): {obs.detail}"
            return evidence(Verdict.REFUTED, params, predicted, obs.observed, obs.error, index + 1, {}, detail)
        passed_cases.append((params, predicted))
        if worst is None or obs.error > worst[2].error:
            worst = (params, predicted, obs)

    control = _run_controls(claim, passed_cases)
    if undecided is not None:
        params, predicted, obs = undecided
        return evidence(Verdict.UNDECIDED, params, predicted, obs.observed, obs.error, len(cases), control,
                        f"numerics could not decide: {obs.detail}")
    if worst is None:
        return evidence(Verdict.UNDECIDED, {}, None, None, None, 0, control, "no case was run")
    params, predicted, obs = worst
    if not control["all_failed"]:
        return evidence(Verdict.UNDECIDED, params, predicted, obs.observed, obs.error, len(cases), control,
                        "a negative control passed: the check cannot tell a wrong prediction from a right one")
    detail = f"worst of {len(cases)} cases: {obs.detail}" if obs.detail else f"worst of {len(cases)} cases"
    return evidence(Verdict.CONFIRMED, params, predicted, obs.observed, obs.error, len(cases), control, detail)


def _run_controls(claim: Claim, passed_cases: list[tuple[Params, Any]]) -> dict:
    """Evaluate shifted predictions on the first passing cases; each one must fail."""
    runs = []
    for params, predicted in passed_cases[: max(claim.controls, 0)]:
        shifted = claim.negative_control(params, predicted)
        obs = claim.evaluate(params, shifted)
        runs.append({
            "shifted_prediction": jsonable(shifted),
            "error": jsonable(obs.error),
            "failed": bool(obs.decided and _failed(obs, claim.tolerance.value)),
        })
    return {"runs": runs, "all_failed": bool(runs) and all(run["failed"] for run in runs)}


def _default_compare(predicted: Any, expected: Any) -> float:
    """Max relative error for numbers/arrays; 0/inf for anything compared by equality."""
    try:
        p = np.asarray(predicted, dtype=float)
        e = np.asarray(expected, dtype=float)
    except (TypeError, ValueError):
        return 0.0 if predicted == expected else math.inf
    if p.shape != e.shape:
        return math.inf
    scale = np.maximum(np.abs(e), np.finfo(float).tiny)
    return float(np.max(np.abs(p - e) / scale)) if p.size else 0.0
