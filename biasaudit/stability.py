"""Verdict stability: a claim's verdict must not depend on the seed or the profile.

:func:`verdict_stability` runs each claim at profile ``ci`` for every seed given and at ``thorough`` for the
first seed, and calls a claim *fragile* when the verdicts differ. A fragile claim is a defect of the check
(too few samples to find a failing region that exists, or a statistic sitting on its threshold), never a
property of the theorem.

:func:`tolerance_sensitivity` runs each claim at its tolerance and at 10× it: a tolerance either decides
some verdict (10× turns it), or its claim states why it cannot (``Tolerance.at_10x``, e.g. a roundoff bound
far below the errors the ±1 % controls make). A tolerance more than :data:`~biasaudit.ledger.MAX_SLACK` times
the worst error of its cases (the *slack*, measured at profile ``thorough``: the most cases) fails too unless
the claim says why (``Claim.slack_reason``): a bug that loosened it tenfold would move no verdict, whatever
``at_10x`` says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from biasaudit.ledger import MAX_SLACK, Claim, Verdict, jsonable, run_claim

__all__ = ["StabilityRow", "verdict_stability", "DEFAULT_SEEDS", "ToleranceRow", "tolerance_sensitivity",
           "TOLERANCE_FACTOR"]

DEFAULT_SEEDS = (0, 1, 2, 3, 4)


@dataclass(frozen=True)
class StabilityRow:
    """One claim's verdicts across seeds and profiles: ``runs`` is ``((profile, seed, verdict, detail), ...)``."""

    claim_id: str
    runs: tuple  # ((profile, seed, verdict, detail), ...)

    @property
    def verdicts(self) -> set[str]:
        """The distinct verdicts of the runs."""
        return {verdict for _, _, verdict, _ in self.runs}

    @property
    def stable(self) -> bool:
        """Whether every run gave the same verdict."""
        return len(self.verdicts) == 1

    def to_json(self) -> dict:
        """The row as JSON, with ``stable``."""
        return {"claim_id": self.claim_id, "stable": self.stable,
                "runs": [{"profile": p, "seed": s, "verdict": v, "detail": d} for p, s, v, d in self.runs]}


def _run(claim: Claim, profile: str, seed: int, references: bool = True):
    """(verdict, evidence or None, detail): a check that raises is a verdict of its own here."""
    try:
        ev = run_claim(claim, profile=profile, seed=seed, references=references)
        return str(ev.verdict), ev, ev.detail
    except Exception as exc:  # noqa: BLE001
        return str(Verdict.ERROR), None, f"{type(exc).__name__}: {exc}"


def verdict_stability(claims: Iterable[Claim], seeds: Sequence[int] = DEFAULT_SEEDS,
                      profiles: Sequence[str] = ("ci", "thorough"),
                      progress: Callable[[str], None] | None = None) -> list[StabilityRow]:
    """Each claim at ``profiles[0]`` for every seed, and at each further profile for ``seeds[0]``."""
    if not seeds:
        raise ValueError("seeds: must give at least one seed")
    plan = [(profiles[0], s) for s in seeds] + [(p, seeds[0]) for p in profiles[1:]]
    rows = []
    for claim in claims:
        runs = []
        for profile, seed in plan:
            if progress is not None:
                progress(f"{claim.id} [{profile}, seed {seed}]")
            verdict, _, detail = _run(claim, profile, seed)
            runs.append((profile, seed, verdict, detail))
        rows.append(StabilityRow(claim.id, tuple(runs)))
    return rows


TOLERANCE_FACTOR = 10.0


@dataclass(frozen=True)
class ToleranceRow:
    """One claim at its tolerance and at ``TOLERANCE_FACTOR``× it (sampled cases only, no references)."""

    claim_id: str
    tolerance: float
    verdict: str
    loosened_verdict: str
    at_10x: str  # the claim's stated reason why 10× changes nothing ("" if it says 10× does change it)
    worst_case_error: float | None = None  # at the claim's own tolerance (None: no passing case)
    weakest_control_error: float | None = None  # the smallest error of a refuted control (None: none refuted)
    slack: float | None = None  # tolerance / worst error of the decided cases at profile thorough (slack_of)
    slack_reason: str = ""  # the claim's reason for a slack above MAX_SLACK

    @property
    def slack_unexplained(self) -> bool:
        """A tolerance more than ``MAX_SLACK`` times the worst error, with no reason stated by the claim."""
        return bool(self.slack is not None and self.slack > MAX_SLACK and not self.slack_reason)

    @property
    def changes(self) -> bool:
        """Whether the verdict at 10× the tolerance differs from the verdict at it."""
        return self.verdict != self.loosened_verdict

    @property
    def consistent(self) -> bool:
        """The verdict changes at 10× exactly when the claim does not state a reason why it cannot, and a slack
        above ``MAX_SLACK`` has its reason."""
        return self.changes != bool(self.at_10x) and not self.slack_unexplained

    def to_json(self) -> dict:
        """The row as JSON, with ``changes`` and ``consistent``."""
        return {"claim_id": self.claim_id, "tolerance": self.tolerance, "verdict": self.verdict,
                "verdict_at_10x": self.loosened_verdict, "changes": self.changes, "at_10x": self.at_10x,
                "consistent": self.consistent, "worst_case_error": self.worst_case_error,
                "weakest_control_error": self.weakest_control_error, "slack": jsonable(self.slack),
                "slack_reason": self.slack_reason, "slack_unexplained": self.slack_unexplained}


def _run_verdict(claim: Claim, seed: int) -> tuple[str, float | None, float | None]:
    """(verdict, worst case error, smallest error of a refuted control) at profile ci without references."""
    verdict, ev, _ = _run(claim, "ci", seed, references=False)
    if ev is None:
        return verdict, None, None
    refuted = [r["error"] for r in (ev.negative_control or {}).get("runs", [])
               if r.get("failed") and isinstance(r.get("error"), (int, float))]
    worst = ev.error if ev.verdict is Verdict.CONFIRMED else None
    return verdict, worst, (min(refuted) if refuted else None)


def tolerance_sensitivity(claims: Iterable[Claim], seed: int = 0,
                          progress: Callable[[str], None] | None = None) -> list[ToleranceRow]:
    """Each claim (profile ci, no references) at its tolerance and at 10× it. A tolerance that matters turns
    some verdict (a control no longer refuted: undecided; a counterexample forgiven: confirmed); one that
    does not must say why in ``Tolerance.at_10x``. The slack comes from one run at profile thorough."""
    from biasaudit.ledger import loosened

    rows = []
    for claim in claims:
        if progress is not None:
            progress(f"{claim.id} [tolerance {claim.tolerance.value:g} and x{TOLERANCE_FACTOR:g}]")
        verdict, worst, weakest = _run_verdict(claim, seed)
        loose = _run_verdict(loosened(claim, TOLERANCE_FACTOR), seed)[0]
        thorough = _run(claim, "thorough", seed)[1]  # the slack: over the most cases, as `check` runs them
        slack = None if thorough is None else thorough.slack
        rows.append(ToleranceRow(claim.id, claim.tolerance.value, verdict, loose, claim.tolerance.at_10x, worst,
                                 weakest, slack, claim.slack_reason))
    return rows
