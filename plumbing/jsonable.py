"""Conversion of numbers, arrays and enums into plain JSON types, shared by every layer's ``to_json``."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["jsonable", "finite_json", "json_float", "NOT_FINITE_REASON"]


def jsonable(value: Any) -> Any:
    """``value`` with numpy, sympy, enum and tuple values turned into plain JSON types.

    Parameters
    ----------
    value : object
        Any value: mappings and sequences are converted entry by entry.

    Returns
    -------
    object
        Plain dicts, lists, str, int, float, bool or None; a non-finite float becomes its string (``'nan'``).

    Examples
    --------
    >>> import numpy as np
    >>> from biasaudit.plumbing import jsonable
    >>> jsonable({"a": np.float64(0.5), "b": (1, np.int64(2)), "c": float("inf")})
    {'a': 0.5, 'b': [1, 2], 'c': 'inf'}
    """
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
    """Like :func:`jsonable`, but a non-finite float becomes ``null`` with its reason, so a command's JSON never
    holds "nan" or "inf".

    Parameters
    ----------
    value : object
        Any value.
    reason : str, optional
        Why such a value is null.

    Returns
    -------
    tuple of (object, dict)
        The JSON value, and ``{path: reason}`` for every value made null (paths like ``runs[3].S``).

    Examples
    --------
    >>> from biasaudit.plumbing import finite_json
    >>> finite_json({"S": [1.0, float("nan")]}, reason="diverged")
    ({'S': [1.0, None]}, {'S[1]': 'diverged'})
    """
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


def json_float(x) -> float:
    """JSON turns non-finite floats into strings ('nan', 'inf'); read them back.

    Parameters
    ----------
    x : object
        A stored number, or a string such as ``"nan"``, or None.

    Returns
    -------
    float
        ``float(x)``; NaN where that fails.

    Examples
    --------
    >>> json_float("inf"), json_float(None), json_float(2)
    (inf, nan, 2.0)
    """
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan
