"""Verdict stability: a claim's verdict must not depend on the seed or the profile.

:func:`verdict_stability` runs each claim at profile ``ci`` for every seed given and at ``thorough`` for the
first seed, and calls a claim *fragile* when the verdicts differ. A fragile claim is a defect of the check
(too few samples to find a failing region that exists, or a statistic sitting on its threshold), never a
property of the theorem.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from biasaudit.ledger import Claim, Verdict, run_claim

__all__ = ["StabilityRow", "verdict_stability", "DEFAULT_SEEDS"]

DEFAULT_SEEDS = (0, 1, 2, 3, 4)


@dataclass(frozen=True)
class StabilityRow:
    claim_id: str
    runs: tuple  # ((profile, seed, verdict, detail), ...)

    @property
    def verdicts(self) -> set[str]:
        return {verdict for _, _, verdict, _ in self.runs}

    @property
    def stable(self) -> bool:
        return len(self.verdicts) == 1

    def to_json(self) -> dict:
        return {"claim_id": self.claim_id, "stable": self.stable,
                "runs": [{"profile": p, "seed": s, "verdict": v, "detail": d} for p, s, v, d in self.runs]}


def _verdict(claim: Claim, profile: str, seed: int) -> tuple[str, str]:
    try:
        ev = run_claim(claim, profile=profile, seed=seed)
        return str(ev.verdict), ev.detail
    except Exception as exc:  # noqa: BLE001 - a broken check is a verdict of its own here
        return str(Verdict.ERROR), f"{type(exc).__name__}: {exc}"


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
            verdict, detail = _verdict(claim, profile, seed)
            runs.append((profile, seed, verdict, detail))
        rows.append(StabilityRow(claim.id, tuple(runs)))
    return rows
