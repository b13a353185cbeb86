"""Conversion of numbers, arrays and enums into plain JSON types, shared by every layer's ``to_json``."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["jsonable", "finite_json", "NOT_FINITE_REASON"]


def jsonable(value: Any) -> Any:
    """Convert numpy/sympy/tuple values into plain JSON types (non-finite floats become strings)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else repr(f)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    return str(value)


NOT_FINITE_REASON = ("not a finite number: the quantity does not exist for this run or check (a diverged run, "
                     "a check that could not decide, a value that was not measured)")


def finite_json(value: Any, *, reason: str = NOT_FINITE_REASON) -> tuple[Any, dict[str, str]]:
    """(JSON value, null reasons): like :func:`jsonable`, but a non-finite float becomes ``null`` and its
    path (``runs[3].S``) is listed with ``reason``, so a command's JSON never holds "nan" or "inf"."""
    nulled: dict[str, str] = {}

    def walk(v, path):
        if isinstance(v, Mapping):
            return {str(k): walk(x, f"{path}.{k}" if path else str(k)) for k, x in v.items()}
        if isinstance(v, (list, tuple, np.ndarray)):
            return [walk(x, f"{path}[{i}]") for i, x in enumerate(v.tolist() if isinstance(v, np.ndarray) else v)]
        if isinstance(v, (float, np.floating)) and not isinstance(v, bool) and not math.isfinite(float(v)):
            nulled[path] = reason
            return None
        if isinstance(v, str) and v in ("nan", "inf", "-inf"):
            nulled[path] = reason
            return None
        return jsonable(v)

    return walk(value, ""), nulled
