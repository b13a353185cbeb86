r"""The experiment contract: what every experiment claim declares before its seeds run.

An experiment claim is a small pre-registered study. Its :class:`ExperimentContract` names

* ``role``: ``"effect"`` (a claim about an effect of an optimizer), ``"positive_control"`` (the same statistic
  where the theory guarantees the effect; it needs no positive control of its own) or ``"cross_check"`` (an
  implementation check, torch against numerics or an HVP against a dense Hessian: not an effect claim);
* ``statistic``: the one function of the runs that the verdict reads (``"module:function"``); an effect
  claim's positive control reads the same one;
* ``positive_control``: the id of that claim (effect claims only); if it is not confirmed in the same audit
  the effect claim is undecided, never confirmed or refuted;
* ``data_controls``: the statistic read on runs with no effect to find (:class:`DataControl`), each equivalent
  to 0 within ``delta`` for the claim to be decided; a control reads other runs than the claim's comparison,
  so its outcome is never implied by the claim's own decision;
* ``delta`` and ``delta_reason``: the equivalence margin, fixed before any claim seed ran, and where it comes
  from (the positive control's effect, the pilot seeds' spread);
* ``level`` and ``min_seeds``.

:func:`biasaudit.validation.decision.three_way` and :func:`~biasaudit.validation.decision.gated_verdict`
decide; :func:`contract_observation` assembles the evidence fields every decided record carries:
``statistic``, ``positive_control``, ``data_controls``, ``decision`` and ``n_seeds``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["ROLES", "DataControl", "ExperimentContract", "REQUIRED_FIELDS", "contract_observation"]

ROLES = ("effect", "positive_control", "cross_check")
REQUIRED_FIELDS = ("statistic", "positive_control", "data_controls", "decision", "n_seeds")


@dataclass(frozen=True)
class DataControl:
    """A control that can fail: ``name`` (e.g. ``"aa"``, ``"randsam"``), the runs it reads (``arms``: the two
    arms compared, e.g. ``("gd", "gd@other_seeds")``) and what it shows in words (``meaning``)."""

    name: str
    arms: tuple[str, str]
    meaning: str


@dataclass(frozen=True)
class ExperimentContract:
    """What an experiment claim declares before its seeds run (module docstring)."""

    role: str
    statistic: str = ""
    positive_control: str | None = None
    data_controls: tuple[DataControl, ...] = ()
    primary_arms: tuple[str, str] = ("", "")
    delta: float = math.nan
    delta_reason: str = ""
    level: float = 0.05
    min_seeds: int = 3

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"contract role must be one of {ROLES}, got {self.role!r}")
        if self.role == "cross_check":
            return
        if not self.statistic or ":" not in self.statistic:
            raise ValueError(f"an {self.role} contract names its statistic as 'module:function'")
        if not (math.isfinite(self.delta) and self.delta > 0) or not self.delta_reason.strip():
            raise ValueError("an equivalence margin delta > 0 with its reason is required")
        if (self.role == "effect") != (self.positive_control is not None):
            raise ValueError("an effect claim names its positive control; a positive control names none")
        if self.min_seeds < 3:
            raise ValueError("min_seeds must be at least 3")
        for control in self.data_controls:
            if tuple(control.arms) == tuple(self.primary_arms):
                raise ValueError(f"data control {control.name!r} reads the claim's own comparison: its outcome "
                                 "would follow from the claim's decision")


def contract_observation(*, statistic: dict, positive_control: dict | None, data_controls: list,
                         decision, n_seeds: int, **extra) -> dict:
    """The ``observed`` dict of a contract claim's evidence: the five required fields, then ``extra``.

    ``statistic``: its name, value and interval; ``positive_control``: the control claim's id, statistic,
    effect and verdict (``None`` for a positive control itself); ``data_controls``: one
    :class:`~biasaudit.validation.decision.ControlResult` each; ``decision``: the
    :class:`~biasaudit.validation.decision.Decision` (rule, delta, level)."""
    return {"statistic": statistic, "positive_control": positive_control,
            "data_controls": [c.to_json() if hasattr(c, "to_json") else dict(c) for c in data_controls],
            "decision": decision.to_json() if hasattr(decision, "to_json") else dict(decision),
            "n_seeds": int(n_seeds), **extra}
