"""The claim ledger: claims are data, running one gives Evidence with a verdict.

A :class:`Claim` states one derived statement of a paper:

* ``hypotheses`` and ``statement`` are sympy objects over symbols with assumptions (for reading and for the
  symbolic tests);
* ``predict(params)`` evaluates the statement numerically (a lambdified sympy expression, or a boundary
  computed from one);
* ``evaluate(params, predicted)`` runs *independent* numerics and returns an :class:`Observation` whose
  ``error`` is compared with the named :class:`Tolerance`;
* ``negative_control`` is a tuple of :class:`Control`: each makes a *wrong* prediction (the prediction moved by
  ±1 %, a parameter moved across the boundary, a hypothesis broken). The *sampled* cases alone (never the
  reference values) must refute every control, otherwise the check has no power and the verdict is
  ``undecided``. A control records its side and size; :func:`control_flags` names a set of controls that is
  one-sided or wider than :data:`MAX_CONTROL_SIZE` (the report shows the flags). A plain callable
  ``(params, predicted) -> wrong prediction`` is accepted as one control of unknown side and size;
* ``domain`` is the valid parameter region for the property checks, ``references`` are reference values (each with
  its origin: derived here, stated by the paper, or measured here).

:func:`run_claim` runs the references and ``n`` sampled cases and returns one :class:`Evidence`:

=============  ==================================================================================
verdict        rule
=============  ==================================================================================
confirmed      every case within tolerance, and every negative control failed
refuted        some case (or a reference value) outside tolerance: the first counterexample
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
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from biasaudit.domain import Domain, Params
from biasaudit.plumbing import jsonable
from biasaudit.plumbing.runcache import library_versions

__all__ = [
    "Verdict",
    "Tolerance",
    "Observation",
    "Reference",
    "Claim",
    "Control",
    "shifted_prediction",
    "two_sided",
    "one_side",
    "broken_hypothesis",
    "control_flags",
    "MAX_CONTROL_SIZE",
    "AT_10X_EXACT",
    "AT_10X_PRECISION",
    "Evidence",
    "OutOfScope",
    "run_claim",
    "loosened",
    "jsonable",
    "claim_seed",
    "PROFILES",
    "REFERENCE_ORIGINS",
    "MAX_SLACK",
    "slack_of",
]

PROFILES = ("ci", "thorough")


class Verdict(str, enum.Enum):
    """The outcome of a check (a ``str`` enum: compares equal to its value).

    ``confirmed``; ``refuted`` (a counterexample); ``undecided`` (the numerics could not tell, or the negative control
    was not refuted: never a pass); ``out-of-scope`` (the hypotheses do not cover the case); ``error`` (the check itself
    broke).
    """

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
    """A named tolerance and why it has that size (e.g. ``rk4_global``: ``1e-8``, 'RK4 at h=1e-3 ...').

    ``at_10x``: why a ten times looser tolerance would change no verdict of its claim (e.g. it bounds float64
    roundoff far below the errors the ±1 % controls make), or ``""`` where it would. ``biasaudit check
    --tolerance-x10`` runs every claim at 10× its tolerance and holds each claim to the side it states.
    """

    name: str
    value: float
    reason: str
    at_10x: str = ""

    def __post_init__(self):
        if not (self.value >= 0 and math.isfinite(self.value)):
            raise ValueError(f"tolerance {self.name} must be finite and >= 0, got {self.value}")


@dataclass(frozen=True)
class Observation:
    """What the independent numerics saw. ``error`` is compared with the claim's tolerance.

    ``decided=False`` means the numerics could not tell (solver failure, horizon too short): it yields an
    ``undecided`` verdict, never a pass. ``resolutions``: for a quantity estimated from a grid or a window, the
    error at each resolution (e.g. ``{"301": e1, "601": e2, "1201": e3}``, ``error`` being the finest); the
    case is decided only when the tolerance in force puts all of them on the same side.
    """

    observed: Any
    error: float
    detail: str = ""
    decided: bool = True
    resolutions: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Reference:
    """A reference value: ``predict(params)`` must match ``expected`` within ``tolerance``.

    ``origin`` says where the value comes from: ``"derived"`` (derived here, by algebra from the paper's
    statements or by computing exactly a quantity they define), ``"stated"`` (stated by the paper) or
    ``"measured"`` (read off a simulation here); the specification pages of the docs show it."""

    params: Params
    expected: Any
    tolerance: float
    note: str = ""
    origin: str = ""

    def __post_init__(self):
        if self.origin not in REFERENCE_ORIGINS:
            raise ValueError(f"a reference states its origin, one of {REFERENCE_ORIGINS} (Reference(..., "
                             f"origin=...)), got {self.origin!r}")


REFERENCE_ORIGINS = ("derived", "stated", "measured")

AT_10X_EXACT = ("an exact decision (a class, index, sign, order or set): 10 x 0 = 0, and a wrong decision is off "
                "by a whole unit")
AT_10X_PRECISION = ("bounds roundoff or solver error: every case sits below it and every refuting control (a 1 % "
                    "move) at least 10x above it, so 10x changes no verdict (check --tolerance-x10 prints the "
                    "margins)")
MAX_CONTROL_SIZE = 0.02  # a control moved by more than 2 % is flagged: it says nothing about a 1 % error
# a tolerance more than 100x the worst error its claim saw guards nothing the error could reach: the claim states
# why (Claim.slack_reason) or the tolerance is set from the measured error's scale
MAX_SLACK = 100.0
SIDES = ("+", "-", "broken", "unknown")


@dataclass(frozen=True)
class Control:
    """A negative control: a wrong prediction that the sampled cases must refute.

    ``make(params, predicted) -> (params', wrong)``: the check evaluates ``wrong`` at ``params'``.
    ``side``: ``"+"``/``"-"`` (the prediction, or ``target`` parameter, moved up/down), ``"broken"`` (a
    hypothesis broken: no side), ``"unknown"`` (a legacy callable). ``size``: the relative move (0.01 = 1 %),
    ``None`` where it has none. ``reason``: why the size, where it is not 1 % (e.g. the claim's resolution).
    """

    side: str
    size: float | None
    target: str
    make: Callable[[Params, Any], tuple[Params, Any]]
    reason: str = ""

    def __post_init__(self):
        if self.side not in SIDES:
            raise ValueError(f"control side must be one of {SIDES}, got {self.side!r}")
        if self.size is not None and not (self.size > 0 and math.isfinite(self.size)):
            raise ValueError(f"control size must be > 0 and finite, got {self.size!r}")

    def describe(self) -> dict:
        """The control as JSON: ``side``, ``size``, ``target`` and ``reason``."""
        return {"side": self.side, "size": self.size, "target": self.target, "reason": self.reason}


def _scaled(value: Any, factor: float, key: str | None) -> Any:
    """``value`` × factor: a number, tuples/lists/arrays element-wise, a dict's ``key`` entry, or (``key``
    None) every float or sequence entry of a dict (bools, ints and strings are labels, kept)."""
    if key is not None:
        return {**value, key: _scaled(value[key], factor, None)}
    if isinstance(value, Mapping):
        return {k: _scaled(v, factor, None) if isinstance(v, (float, np.floating, tuple, list, np.ndarray)) else v
                for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_scaled(v, factor, None) for v in value)
    if isinstance(value, np.ndarray):
        return value * factor
    return float(value) * factor


def one_side(side: str, target: str, size: float, move: Callable[[Params, Any, float], tuple[Params, Any]], *,
             reason: str = "") -> Control:
    """One control from ``move(params, predicted, signed_size) -> (params', wrong)``, called with ``+size``
    (side ``"+"``) or ``−size`` (side ``"-"``): the tight side of a bound, or one of :func:`two_sided`'s pair."""
    if side not in ("+", "-"):
        raise ValueError(f"side: must be '+' or '-', got {side!r}")
    signed = size if side == "+" else -size
    return Control(side, size, target, functools.partial(_signed_move, move=move, signed=signed), reason)


def two_sided(target: str, size: float, move: Callable[[Params, Any, float], tuple[Params, Any]], *,
              reason: str = "") -> tuple[Control, ...]:
    """Two controls from ``move(params, predicted, signed_size) -> (params', wrong)``, called with
    ``+size`` and ``−size`` (e.g. a direction rotated by ±size radians, a threshold moved by ×(1 ± size))."""
    return tuple(one_side(side, target, size, move, reason=reason) for side in ("+", "-"))


def _signed_move(params, predicted, *, move, signed):
    return move(params, predicted, signed)


def shifted_prediction(size: float = 0.01, *, key: str | None = None, reason: str = "") -> tuple[Control, ...]:
    """Two controls: the prediction × (1 + size) and × (1 − size) (numbers; tuples and arrays element-wise;
    ``key``: only that entry of a dict prediction)."""
    target = "prediction" if key is None else f"prediction[{key}]"
    return two_sided(target, size, functools.partial(_scaled_prediction, key=key), reason=reason)


def _scaled_prediction(params, predicted, signed, *, key):
    return params, _scaled(predicted, 1 + signed, key)


def broken_hypothesis(target: str, make_wrong: Callable[[Params, Any], tuple[Params, Any]], *,
                      reason: str = "") -> Control:
    """A control that breaks a hypothesis (no side, no size): ``make_wrong(params, predicted)``."""
    return Control("broken", None, target, make_wrong, reason)


def _legacy_control(make_wrong: Callable[[Params, Any], Any]) -> Control:
    return Control("unknown", None, "prediction", lambda params, predicted: (params, make_wrong(params, predicted)),
                   "a single wrong prediction (side and size not stated)")


def control_flags(controls: tuple[Control, ...] | list[dict], inequality: str = "") -> list[str]:
    """Why a set of controls is weak: ``one-sided`` (no move up or no move down: a broken hypothesis alone
    does not make a check two-sided), ``wider than 2%`` (a move larger than :data:`MAX_CONTROL_SIZE`),
    ``size not stated``. Up and down may act on different targets: the two boundaries of a regime, or the
    bold sides of two sufficient conditions. A claim that states a bound (``inequality``, e.g. 'upper bound')
    needs only its tight side: a looser bound is never refuted, by nature, and that is not a weakness."""
    rows = [c.describe() if isinstance(c, Control) else c for c in controls]
    flags = []
    sides = {row["side"] for row in rows}
    if not ({"+", "-"} <= sides or (inequality and sides & {"+", "-"})):
        flags.append("one-sided")
    if any(row["size"] is not None and row["size"] > MAX_CONTROL_SIZE + 1e-12 for row in rows):
        flags.append(f"wider than {MAX_CONTROL_SIZE:.0%}")
    if any(row["size"] is None and row["side"] != "broken" for row in rows):
        flags.append("size not stated")
    return flags


@dataclass(frozen=True)
class Claim:
    """A registered claim: a statement of a paper, with everything needed to check it.

    ``id`` (dotted, e.g. ``sam.l2.alpha_collapse``), ``paper``, ``source`` (section and equation, or
    "derived …" / "measured …"), ``title``; ``hypotheses`` (sympy relations) and ``statement`` (the theory's sympy
    object); ``predict(params)``, computed from ``formulas`` (or ``no_closed_form`` says why there are none);
    ``evaluate(params, predicted)`` -> :class:`Observation`, the independent numerics; ``tolerance``; ``domain``, the
    region sampled (``samples`` cases per profile); ``negative_control`` (:class:`Control` objects, at most
    ``controls`` cases each); ``references`` (known values); ``kind`` (``theory`` or ``experiment``); ``inequality``
    (for a bound, its tight side); ``compare_reference``; ``notes``; ``runs``, the training runs an experiment claim
    reads. ``defined_in`` and ``line`` record where it was built.
    """

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
    negative_control: tuple[Control, ...] | Control | Callable[[Params, Any], Any]
    references: tuple[Reference, ...] = ()
    kind: str = "theory"
    samples: Mapping[str, int] = field(default_factory=lambda: {"ci": 8, "thorough": 64})
    controls: int | None = None  # at most this many sampled cases per control (None: every sampled case)
    inequality: str = ""  # a bound: which side is tight ("upper bound: ..."); its controls move only that side
    compare_reference: Callable[[Any, Any], float] | None = None
    notes: str = ""
    # experiment claims: the training runs the check reads, as audit run units (biasaudit.audit.units.RunUnit),
    # declared at the experiment tier in force; the audit runs them first, on any worker, then the claim
    runs: Callable[[], tuple] | None = None
    # what the reader sees is what runs: the theory formulas (biasaudit.theory.formula.Formula) that ``predict``
    # evaluates, each shown in ``statement``; or, for a prediction with no closed form (a bisection, an
    # integration), why not, in words (tests/test_statements.py checks both)
    formulas: tuple = ()
    no_closed_form: str = ""
    # experiment claims: the pre-registered study (biasaudit.contract.ExperimentContract): statistic, positive
    # control, data controls, equivalence margin; its data controls replace negative_control (then ())
    contract: Any = None
    # why the tolerance may sit more than MAX_SLACK times above the worst error the claim sees (an error that is
    # exactly 0 by construction, a tolerance set by a published number of digits); "" where it does not
    slack_reason: str = ""
    # where the claim is defined: the module's dotted name and the line of the call that built the claim, read
    # from the caller's frame (``biasaudit list --json`` shows them as a file path and a line)
    defined_in: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)

    def __post_init__(self):
        if not self.defined_in:
            frame = sys._getframe(1)
            while frame is not None and frame.f_globals.get("__name__") in ("biasaudit.ledger", "dataclasses"):
                frame = frame.f_back
            if frame is not None:
                object.__setattr__(self, "defined_in", frame.f_globals.get("__name__", ""))
                object.__setattr__(self, "line", frame.f_lineno)
        controls = self.negative_control
        if isinstance(controls, Control):
            controls = (controls,)
        elif callable(controls):
            controls = (_legacy_control(controls),)
        controls = tuple(controls)
        decided_by_data = self.contract is not None and self.contract.role != "cross_check"
        if decided_by_data and controls:
            raise ValueError(f"{self.id}: an experiment contract's data controls replace negative controls (a "
                             "wrong prediction of the claim's own statistic is decided by its own rule)")
        if (not controls and not decided_by_data) or not all(isinstance(c, Control) for c in controls):
            raise ValueError(f"{self.id}: negative_control must be a Control, a tuple of them or a callable")
        object.__setattr__(self, "negative_control", controls)
        if not all(hasattr(f, "expr") and callable(f) for f in self.formulas):
            raise ValueError(f"{self.id}: formulas must be theory Formula objects")
        if self.formulas and self.no_closed_form:
            raise ValueError(f"{self.id}: a claim with formulas has a closed form (no_closed_form must be empty)")
        if not self.id or " " in self.id:
            raise ValueError(f"claim id must be a non-empty dotted name, got {self.id!r}")
        if set(self.samples) != set(PROFILES):
            raise ValueError(f"{self.id}: samples must give a count for each profile {PROFILES}")
        if any(h is True or h is False or type(h).__name__ in ("BooleanTrue", "BooleanFalse")
               for h in self.hypotheses):
            # sympy evaluates Gt(mu, 0) to True when mu is positive: the hypothesis would vanish from the
            # ledger and the report. Build relations with evaluate=False.
            raise ValueError(f"{self.id}: a hypothesis evaluated to a constant; build it with evaluate=False")

    def latex(self) -> str:
        """The statement in LaTeX, with its hypotheses (``biasaudit list --latex``, Jupyter)."""
        import sympy as sp

        hyps = r",\ ".join(sp.latex(h) for h in self.hypotheses)
        return sp.latex(self.statement) + (r"\quad\text{if } " + hyps if hyps else "")

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self.latex()}$"

    @property
    def origin(self) -> str:
        """Who states the claim: ``derived`` (by us, from the paper's statements; ``source`` starts with "derived"
        and says from which), ``reported`` (a measurement made here, stated as a claim so that it can be refuted;
        ``source`` starts with "measured" and names the notes that record it) or ``stated`` (by the paper;
        ``source`` gives the section)."""
        source = self.source.strip().lower()
        if source.startswith("derived"):
            return "derived"
        if source.startswith(("measured", "issue")):
            return "reported"
        return "stated"

    def controls_refuted_by(self, params: Params, predicted: Any) -> list[bool]:
        """Whether this one case refutes each negative control (decided, and outside the tolerance)."""
        return [_try_control(self, control, params, predicted)[2] for control in self.negative_control]

    def module_path(self) -> str:
        """The file that defines the claim, relative to the folder that holds its top-level package (for this
        package: the repository root, e.g. ``biasaudit/claims/sam/l2/separatrix.py``); ``""`` if unknown."""
        import importlib.util

        try:
            spec = importlib.util.find_spec(self.defined_in)
            top = importlib.util.find_spec(self.defined_in.split(".")[0])
        except (ImportError, ValueError):
            return ""
        if spec is None or not spec.origin or top is None or not top.submodule_search_locations:
            return spec.origin if spec is not None and spec.origin else ""
        root = Path(next(iter(top.submodule_search_locations))).resolve().parent
        try:
            return Path(spec.origin).resolve().relative_to(root).as_posix()
        except ValueError:
            return Path(spec.origin).as_posix()

    def statement_text(self) -> str:
        """The statement as sympy's plain text (``sympy.sstr``)."""
        import sympy

        return sympy.sstr(self.statement)


@dataclass(frozen=True)
class Evidence:
    """The result of checking a claim (:func:`run_claim`, :func:`biasaudit.check_claim`), JSON-ready.

    Parameters
    ----------
    claim_id, paper : str
        The claim and its paper.
    verdict : Verdict
        ``confirmed``, ``refuted``, ``undecided``, ``out-of-scope`` or ``error``.
    params, predicted, observed
        The case the verdict rests on (the counterexample, the undecided case, or the worst passing one): its
        parameters, the prediction and what the independent numerics saw.
    error : float or None
        That case's error, compared with ``tolerance``; None or NaN where the check could not decide.
    tolerance : dict
        ``name``, ``value`` and ``reason`` of the named tolerance.
    n_cases : int
        The number of cases checked.
    negative_control : dict
        Each negative control's run (``runs``), whether all were refuted (``all_failed``) and the flags of a weak
        set of controls.
    detail : str
        The check's own words.
    seed : int
        The sampling seed.
    profile : str
        ``ci`` or ``thorough``.
    elapsed_s : float
        Seconds the check took.
    versions : dict
        The library versions it ran with.
    worst_error : float or None
        The largest error of every decided case this run checked (references and samples, the counterexample
        included), at profile ``worst_error_profile``.
    worst_error_profile : str
        The profile ``worst_error`` was measured at.
    slack : float or None
        Tolerance / ``worst_error`` (:func:`slack_of`).
    slack_reason : str
        The claim's reason for a slack above 100, if it has one.
    """

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
    worst_error: float | None = None
    worst_error_profile: str = ""
    slack: float | None = None
    slack_reason: str = ""

    def to_json(self) -> dict:
        """The evidence as a JSON-ready dict.

        Returns
        -------
        dict
            Every field, the verdict as its string.
        """
        out = asdict(self)
        out["verdict"] = str(self.verdict)
        return jsonable(out)

    def _repr_html_(self) -> str:
        import html

        err = self.error if isinstance(self.error, (int, float)) else None
        numbers = "" if err is None or err != err else f" (error {err:.3g})"
        return (f"<p><code>{html.escape(self.claim_id)}</code>: <b>{html.escape(str(self.verdict))}</b>"
                f"{numbers}</p><p>{html.escape(self.detail or '')}</p>")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Evidence":
        """The evidence stored by :meth:`to_json`."""
        values = dict(data)
        values["verdict"] = Verdict(values["verdict"])
        return cls(**values)


def loosened(claim: Claim, factor: float) -> Claim:
    """The same claim with its tolerance × ``factor`` (the tolerance-sensitivity check)."""
    import dataclasses

    if not (factor > 0 and math.isfinite(factor)):
        raise ValueError(f"factor: must be > 0 and finite, got {factor!r}")
    tol = dataclasses.replace(claim.tolerance, value=claim.tolerance.value * factor,
                              name=f"{claim.tolerance.name} x{factor:g}")
    return dataclasses.replace(claim, tolerance=tol)


def slack_of(tolerance: float, worst_error: float | None) -> float | None:
    """tolerance / worst error: how many times the worst error seen fits in the tolerance. ``inf`` when every
    error was exactly 0 under a positive tolerance; ``None`` when there is no error to compare (no decided case)
    or the tolerance is 0 (an exact comparison: 10 x 0 = 0, nothing to loosen)."""
    if worst_error is None or not math.isfinite(worst_error) or tolerance == 0:
        return None
    return math.inf if worst_error == 0 else tolerance / worst_error


def claim_seed(claim_id: str, seed: int) -> np.random.SeedSequence:
    """A stream per (claim, seed) that does not depend on the order claims run in."""
    digest = int.from_bytes(hashlib.sha256(claim_id.encode()).digest()[:8], "little")
    return np.random.SeedSequence([seed, digest])


EVIDENCE_LIBRARIES = ("biasaudit", "numpy", "numba", "sympy", "mpmath", "scipy")  # versions each Evidence records


def _failed(obs: Observation, tol: float) -> bool:
    return not (obs.error <= tol)  # NaN counts as failed


def _resolution_split(obs: Observation, tol: float) -> str:
    """``""`` when every resolution of ``obs`` gives the same verdict at ``tol``, else the errors by resolution."""
    sides = {error <= tol for error in obs.resolutions.values()}
    if len(sides) <= 1:
        return ""
    return ", ".join(f"{label}: {error:.3g}" for label, error in obs.resolutions.items())


def _decided(obs: Observation, tol: float) -> bool:
    return obs.decided and not (isinstance(obs.error, float) and math.isnan(obs.error)) and not _resolution_split(
        obs, tol)


def _number(value) -> float:
    """A recorded error: JSON keeps non-finite floats as strings ('nan', 'inf')."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def verdict_inconsistency(record: Mapping) -> str:
    """Why a stored claim record's verdict does not follow from its own error, tolerance and controls
    (``""`` when it does), by the rules of :func:`run_claim`:

    * ``confirmed`` needs a decided worst error within the tolerance (``error <= tolerance``) and every
      negative control refuted (each run ``failed`` with an error outside the tolerance);
    * ``refuted`` needs an error outside the tolerance, or a reference value not reproduced;
    * ``undecided``, ``out-of-scope`` and ``error`` claim nothing that these fields could contradict.
    """
    verdict = record.get("verdict")
    tol = _number((record.get("tolerance") or {}).get("value"))
    error = _number(record.get("error"))
    if verdict == Verdict.CONFIRMED.value:
        if not error <= tol:
            return f"confirmed with error {record.get('error')!r} outside the tolerance {tol!r}"
        control = record.get("negative_control") or {}
        runs = control.get("runs") or []
        if control.get("data_controls"):  # an experiment contract: the gates are in the observation
            return _contract_inconsistency(record.get("observed") or {})
        if not control.get("all_failed") or not runs:
            return "confirmed although its negative controls were not all refuted"
        for run in runs:
            if not run.get("failed") or _number(run.get("error")) <= tol:
                return f"confirmed although the control {run.get('target')!r} {run.get('side')} was not refuted"
        return ""
    if verdict == Verdict.REFUTED.value:
        reference = str(record.get("detail", "")).startswith("reference value not reproduced")
        if not (reference or not error <= tol):
            return f"refuted with error {record.get('error')!r} within the tolerance {tol!r}"
    return ""


def _contract_inconsistency(observed: Mapping) -> str:
    """Why a confirmed experiment-contract record is not confirmed by its own fields (``""`` when it is):
    its decision says confirmed, its positive control (if any) is confirmed and every data control passed."""
    decision = observed.get("decision") or {}
    if decision.get("verdict") != Verdict.CONFIRMED.value:
        return f"confirmed although its decision says {decision.get('verdict')!r}"
    control = observed.get("positive_control")
    if control is not None and (control or {}).get("verdict") != Verdict.CONFIRMED.value:
        return "confirmed although its positive control was not confirmed"
    failed = [c.get("name") for c in observed.get("data_controls") or [] if not c.get("equivalent")]
    if failed or not observed.get("data_controls"):
        return f"confirmed although its data controls did not all pass ({failed or 'none recorded'})"
    return ""


def run_claim(claim: Claim, profile: str = "ci", seed: int = 0, n: int | None = None,
              references: bool = True) -> Evidence:
    """Run the references (unless ``references=False``), ``n`` sampled cases and the negative controls of
    one claim. The controls are judged on the sampled cases only."""
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
            versions=library_versions(EVIDENCE_LIBRARIES),
            worst_error=worst_error,
            worst_error_profile=profile,
            slack=slack_of(tol, worst_error),
            slack_reason=claim.slack_reason,
        )

    refs = claim.references if references else ()
    cases: list[tuple[str, Params]] = [("reference", ref.params) for ref in refs]
    cases += [("sample", claim.domain.sample(rng)) for _ in range(n_samples)]
    worst: tuple | None = None
    worst_error: float | None = None  # over every decided case, the counterexample included
    undecided: tuple | None = None
    passed_samples: list[tuple[int, Params, Any]] = []
    passed_references: list[tuple[int, Params, Any]] = []
    for index, (origin, params) in enumerate(cases):
        try:
            predicted = claim.predict(params)
        except OutOfScope as exc:
            return evidence(Verdict.OUT_OF_SCOPE, params, None, None, None, index + 1, {}, str(exc))
        if origin == "reference":
            ref = refs[index]
            ref_error = compare_ref(predicted, ref.expected)
            if not ref_error <= ref.tolerance:
                detail = f"reference value not reproduced ({ref.note}): expected {ref.expected!r}"
                return evidence(Verdict.REFUTED, params, predicted, ref.expected, ref_error, index + 1, {}, detail)
        try:
            obs = claim.evaluate(params, predicted)
        except OutOfScope as exc:
            return evidence(Verdict.OUT_OF_SCOPE, params, predicted, None, None, index + 1, {}, str(exc))
        if not _decided(obs, tol):
            split = _resolution_split(obs, tol) if obs.decided else ""
            if split:
                obs = Observation(obs.observed, obs.error, f"the verdict moves with the resolution (error by "
                                  f"resolution: {split}; tolerance {tol:g}): {obs.detail}", decided=False)
            undecided = undecided or (params, predicted, obs)
            continue
        worst_error = float(obs.error) if worst_error is None else max(worst_error, float(obs.error))
        if _failed(obs, tol):
            detail = f"counterexample ({origin} case {index + 1} of {len(cases)}): {obs.detail}"
            return evidence(Verdict.REFUTED, params, predicted, obs.observed, obs.error, index + 1, {}, detail)
        (passed_samples if origin == "sample" else passed_references).append((index + 1, params, predicted))
        if worst is None or obs.error > worst[2].error:
            worst = (params, predicted, obs)

    control = _run_controls(claim, passed_samples, passed_references)
    if undecided is not None:
        params, predicted, obs = undecided
        return evidence(Verdict.UNDECIDED, params, predicted, obs.observed, obs.error, len(cases), control,
                        obs.detail if claim.contract is not None else f"numerics could not decide: {obs.detail}")
    if worst is None:
        return evidence(Verdict.UNDECIDED, {}, None, None, None, 0, control, "no case was run")
    params, predicted, obs = worst
    if not control["all_failed"]:
        sides = ", ".join(f"{r['target']} {r['side']}{_size_text(r['size'])}" for r in control["runs"]
                          if not r["failed"])
        return evidence(Verdict.UNDECIDED, params, predicted, obs.observed, obs.error, len(cases), control,
                        f"no sampled case refuted the negative control ({sides}): the check cannot tell that "
                        f"wrong prediction from the right one")
    detail = f"worst of {len(cases)} cases: {obs.detail}" if obs.detail else f"worst of {len(cases)} cases"
    return evidence(Verdict.CONFIRMED, params, predicted, obs.observed, obs.error, len(cases), control, detail)


def _size_text(size: float | None) -> str:
    return "" if size is None else f" {size:.3g}"


def _try_control(claim: Claim, control: Control, params: Params, predicted: Any) -> tuple[Any, Observation, bool]:
    """(wrong prediction, its observation, whether this case refutes it: decided and outside tolerance)."""
    moved_params, wrong = control.make(params, predicted)
    obs = claim.evaluate(moved_params, wrong)
    return wrong, obs, bool(_decided(obs, claim.tolerance.value) and _failed(obs, claim.tolerance.value))


def _run_controls(claim: Claim, passed_samples: list, passed_references: list) -> dict:
    """Evaluate each control on the passing sampled cases, in order, until one refutes it (at most
    ``claim.controls`` cases). Only a claim with no sampled case at all falls back to its references, and
    says so (``on_references``)."""
    cases, on_references = passed_samples, False
    if not cases and not claim.samples.get("ci") and not claim.samples.get("thorough"):
        cases, on_references = passed_references, True
    cases = cases[: claim.controls] if claim.controls is not None else cases
    runs = []
    for control in claim.negative_control:
        run = {**control.describe(), "failed": False, "case": None, "shifted_prediction": None, "error": None,
               "tried": 0}
        for index, params, predicted in cases:
            wrong, obs, refuted = _try_control(claim, control, params, predicted)
            run.update(tried=run["tried"] + 1, shifted_prediction=jsonable(wrong), error=jsonable(obs.error))
            if refuted:
                run.update(failed=True, case=index)
                break
        runs.append(run)
    if not claim.negative_control:  # an experiment contract: its data controls are in the observation
        return {"runs": [], "all_failed": True, "flags": [], "on_references": False, "data_controls": True}
    return {"runs": runs, "all_failed": bool(runs) and bool(cases) and all(run["failed"] for run in runs),
            "flags": control_flags(claim.negative_control, claim.inequality), "on_references": on_references,
            **({"inequality": claim.inequality} if claim.inequality else {})}


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
