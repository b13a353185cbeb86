"""One evidence record as a reader sees it: a short sentence, then a small table, then the check's notes.

The table has a row per compared quantity (predicted, observed), a row for the error against the named
tolerance, and a second table of the controls (negative controls with the size of their move, data controls
and positive controls with their intervals). Fields the renderer does not know are shown generically, one
row each, so a new observed field needs no code here. Numbers carry the significant digits the claim's
tolerance justifies (:func:`digits_for`); a missing or undefined number is "—" with its reason, never
``nan``; nothing is shown as JSON or as a Python repr (the raw record stays in ``evidence.jsonl``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DASH", "ERROR_ROW", "EvidenceView", "digits_for", "number", "value_text", "tidy_prose", "format_pair",
           "error_text", "evidence_view", "note_items", "certified_text"]

DASH = "—"
MIN_DIGITS, MAX_DIGITS, DEFAULT_DIGITS = 3, 6, 4
ERROR_ROW = "error against the tolerance"
MAX_LIST_ITEMS = 6  # a longer list shows its first items and its length
MAX_DEPTH = 4  # deeper mappings and lists of mappings show their size only
_NAN_TEXT = f"{DASH} (not a number)"


def digits_for(tolerance: Any) -> int:
    """The significant digits a tolerance :math:`t` justifies: :math:`\\lceil -\\log_{10} t\\rceil + 1`, within
    [3, 6]; 4 where the tolerance is 0 (an exact decision) or not a number below 1.

    >>> digits_for(0.01), digits_for(1e-12), digits_for(0.0)
    (3, 6, 4)
    """
    if isinstance(tolerance, (int, float)) and not isinstance(tolerance, bool) and 0 < tolerance < 1:
        return max(MIN_DIGITS, min(MAX_DIGITS, math.ceil(-math.log10(tolerance)) + 1))
    return DEFAULT_DIGITS


def number(value: Any, digits: int = DEFAULT_DIGITS) -> str:
    """A number for reading: ``digits`` significant digits, ints as they are, "—" with a reason for NaN.

    >>> number(0.050000000000000044), number(1.5000000000000002), number(float("nan")), number(3)
    ('0.05', '1.5', '— (not a number)', '3')
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if math.isnan(value):
        return _NAN_TEXT
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits}g}"


def format_pair(a: Any, b: Any) -> tuple[str, str]:
    """Two numbers with 4 significant digits, more if they would print alike but differ (an error is never
    rounded into agreeing with its tolerance).

    >>> format_pair(1.00004e-10, 1e-10)
    ('1.00004e-10', '1e-10')
    """
    if not all(_is_number(v) for v in (a, b)):
        return value_text(a), value_text(b)
    for digits in (4, 8, 17):
        sa, sb = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if sa != sb or a == b:
            return sa, sb
    return repr(a), repr(b)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def value_text(value: Any, digits: int = DEFAULT_DIGITS, depth: int = 0) -> str:
    """Any JSON value in words and numbers: lists in brackets (long ones cut, with their length), a mapping
    as ``name = value`` pairs, a missing value as "—".

    >>> value_text({"d": 3, "x": [0.1, 0.2000000000000001]})
    'd = 3, x = [0.1, 0.2]'
    >>> value_text(None), value_text([{"a": 1}, {"a": 2}])
    ('—', '(a = 1); (a = 2)')
    """
    if value is None:
        return DASH
    if isinstance(value, str):
        return _NAN_TEXT if value.strip().lower() == "nan" else tidy_prose(value)
    if _is_number(value) or isinstance(value, bool):
        return number(value, digits)
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            return f"({len(value)} fields)"
        return ", ".join(f"{k} = {_nested(v, digits, depth + 1)}" for k, v in value.items()) or DASH
    if isinstance(value, (list, tuple)):
        if not value:
            return "none"
        if all(isinstance(v, dict) for v in value):
            if depth >= MAX_DEPTH:
                return f"({len(value)} entries)"
            shown = [f"({value_text(v, digits, depth + 1)})" for v in value[:MAX_LIST_ITEMS]]
            more = f"; … ({len(value)} entries)" if len(value) > MAX_LIST_ITEMS else ""
            return "; ".join(shown) + more
        shown = [value_text(v, digits, depth + 1) for v in value[:MAX_LIST_ITEMS]]
        more = f", … ({len(value)} values)" if len(value) > MAX_LIST_ITEMS else ""
        return "[" + ", ".join(shown) + more + "]"
    return tidy_prose(str(value))


def _nested(value: Any, digits: int, depth: int) -> str:
    """A mapping's value: a mapping inside it in parentheses, so that ``a = (b = 1)`` reads unambiguously."""
    text = value_text(value, digits, depth)
    return f"({text})" if isinstance(value, dict) and value and depth < MAX_DEPTH else text


_LONG_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d{7,}(?:e[-+]?\d+)?(?![\w.])")
_BARE_NAN = re.compile(r"(?<![\w-])nan(?![\w-])")


_MAPPING_START = re.compile(r"[\[{]\s*[{'\"]")  # where a dict repr, a JSON object or a list of them starts
_JSON_WORDS = re.compile(r"\b(null|true|false|NaN)\b")


def _literal(text: str):
    """The Python value of a dict/list repr or JSON text, or None when it is not one."""
    import ast

    words = {"null": "None", "true": "True", "false": "False", "NaN": "None"}
    try:
        return ast.literal_eval(_JSON_WORDS.sub(lambda m: words[m.group(0)], text))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _mappings_in_words(text: str) -> str:
    """Each dict repr or JSON object in ``text`` (or a list of them) as ``(name = value, ...)``."""
    out, i = [], 0
    while (m := _MAPPING_START.search(text, i)) is not None:
        depth, end = 0, None
        for j in range(m.start(), len(text)):
            depth += text[j] in "[{"
            depth -= text[j] in "]}"
            if depth == 0:
                end = j + 1
                break
        value = _literal(text[m.start():end]) if end else None
        if isinstance(value, (dict, list)) and value:
            out += [text[i:m.start()], value_text(value, MAX_DIGITS) if isinstance(value, list)
                    else f"({value_text(value, MAX_DIGITS)})"]
            i = end
        else:
            out.append(text[i:m.start() + 1])
            i = m.start() + 1
    return "".join(out) + text[i:]


def tidy_prose(text: str) -> str:
    """Prose from a check, with dict and JSON reprs written as ``name = value`` pairs, float reprs cut to 6
    significant digits and a bare ``nan`` written as "— (not a number)".

    >>> tidy_prose("grid 0.7500000000000001 and error=nan")
    'grid 0.75 and error=— (not a number)'
    >>> tidy_prose("outcomes {'converged': 162, 'period-2': 3}")
    'outcomes (converged = 162, period-2 = 3)'
    """
    text = _mappings_in_words(text)
    text = _LONG_FLOAT.sub(lambda m: number(float(m.group(0)), MAX_DIGITS), text)
    return _BARE_NAN.sub(_NAN_TEXT, text)


def note_items(detail: str | None) -> list[str]:
    """The check's own words split into one statement per item, at the semicolons outside brackets.

    >>> note_items("a = 1; b in [1; 2]; c")
    ['a = 1', 'b in [1; 2]', 'c']
    """
    items, depth, start, text = [], 0, 0, (detail or "").strip()
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == ";" and depth <= 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [tidy_prose(item.strip()) for item in items if item.strip()]


@dataclass
class EvidenceView:
    """What the report shows of one record.

    ``sentence``: the verdict and the comparison that decided it, in one sentence; ``quantities``: rows of
    (quantity, predicted, observed, tolerance); ``controls``: rows of (control, moved or read, result,
    outcome); ``parameters``: (name, value) of the case shown; ``notes``: the check's own words, one statement
    each; ``run``: seed, profile, cases and time.
    """

    sentence: str
    quantities: list[tuple[str, str, str, str]] = field(default_factory=list)
    controls: list[tuple[str, str, str, str]] = field(default_factory=list)
    parameters: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    run: str = ""


def _error_and_tolerance(record: dict) -> tuple[str, str, str]:
    """(error, relation, tolerance) as text; the error never rounded into agreeing with its tolerance."""
    err, tol = record.get("error"), record.get("tolerance") or {}
    value, name = tol.get("value"), tol.get("name") or "tolerance"
    if isinstance(err, str) and err.strip().lower() == "nan":
        err = None
    if _is_number(err) and math.isfinite(err) and _is_number(value):
        se, st = format_pair(float(err), float(value))
        return se, "≤" if err <= value else ">", f"{name} = {st}"
    tol_text = f"{name} = {number(value)}" if _is_number(value) else name
    if record.get("verdict") == "undecided":
        return f"{DASH} (the check could not decide)", "", tol_text
    if record.get("verdict") == "error":
        return f"{DASH} (the check raised an exception)", "", tol_text
    if record.get("verdict") == "out-of-scope":
        return f"{DASH} (the hypotheses do not cover this case)", "", tol_text
    return (f"{DASH} (not computed)" if err is None else value_text(err)), "", tol_text


def error_text(record: dict) -> str:
    """The record's error for display: a number, or "—" with what it means when there is none.

    >>> error_text({"error": float("nan"), "verdict": "undecided"})
    '— (the check could not decide)'
    """
    return _error_and_tolerance(record)[0]


def _interval(value: Any, digits: int) -> str | None:
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(_is_number(v) for v in value):
        return f"[{number(value[0], digits)}, {number(value[1], digits)}]"
    return None


def _result(entry: dict, digits: int, center: str) -> str:
    """"mean 0.0123 in [0.01, 0.02] over 5 seeds" from a control's or statistic's fields."""
    parts = []
    if _is_number(entry.get(center)):
        parts.append(f"{center} {number(entry[center], digits)}")
    interval = _interval(entry.get("interval"), digits)
    if interval:
        parts.append(f"in {interval}")
    if isinstance(entry.get("n"), int):
        parts.append(f"over {entry['n']} seeds")
    return " ".join(parts)


def _negative_control_rows(control: dict, digits: int) -> list[tuple[str, str, str, str]]:
    rows = []
    for run in control.get("runs") or []:
        size = run.get("size")
        side = run.get("side", "unknown")
        if side == "broken":
            moved = "hypothesis broken"
        elif _is_number(size):
            moved = f"moved {side if side in '+-' else ''}{number(100 * size, 3)} %"
        else:
            moved = "a wrong prediction (size not stated)"
        err = run.get("error")
        result = (f"error {number(err, digits)}" if _is_number(err) and math.isfinite(err)
                  else f"error {DASH} (not computed)")
        if isinstance(run.get("case"), int):
            result += f" on case {run['case']}"
        outcome = "refuted, as it must be" if run.get("failed") else "NOT refuted: the check lacks power"
        rows.append((f"negative control: {run.get('target', 'prediction')}", moved, result, outcome))
    return rows


def _data_control_rows(entries: list, digits: int) -> list[tuple[str, str, str, str]]:
    rows = []
    for entry in entries:
        if not isinstance(entry, dict):
            rows.append(("data control", "", value_text(entry, digits), ""))
            continue
        margin = entry.get("margin")
        within = f"±{number(margin, digits)}" if _is_number(margin) else "the margin"
        outcome = ("" if "equivalent" not in entry else
                   f"within {within}, as it must be" if entry["equivalent"] else f"NOT within {within}")
        known = {"name", "reads", "mean", "interval", "n", "margin", "equivalent"}
        rest = value_text({k: v for k, v in entry.items() if k not in known}, digits) if set(entry) - known else ""
        result = "; ".join(p for p in (_result(entry, digits, "mean"), rest) if p)
        rows.append((f"data control: {entry.get('name', '?')}", tidy_prose(str(entry.get("reads") or "")),
                     result, outcome))
    return rows


def _positive_control_row(entry: Any, digits: int) -> tuple[str, str, str, str]:
    if not isinstance(entry, dict):
        return ("positive control", "", value_text(entry, digits), "")
    return ("positive control", str(entry.get("claim") or ""), _result(entry, digits, "effect"),
            str(entry.get("verdict") or ""))


_CONTROL_FIELDS = ("data_controls", "positive_control")


def _rows_of(name: str, value: Any, digits: int) -> list[tuple[str, str]]:
    """(quantity, text) rows of one observed field: a mapping one row per entry (one level deep), a
    statistic or decision with its interval in the same cell."""
    if isinstance(value, dict) and value:
        center = "mean" if "mean" in value else "value" if "value" in value else None
        if center and _interval(value.get("interval"), digits):
            head = [(name, _result(value, digits, center))]
            rest = {k: v for k, v in value.items() if k not in (center, "interval", "n")}
            return head + [(f"{name}: {k}", value_text(v, digits, 1)) for k, v in rest.items()]
        return [(f"{name}: {k}", value_text(v, digits, 1)) for k, v in value.items()]
    return [(name, value_text(value, digits))]


def certified_text(value: Any) -> str | None:
    """``certified [lo, hi]`` (both ends in full, as the enclosure was proved) for an observed value of the shape
    ``{"certified": [lo, hi]}`` (a proven enclosure, :mod:`biasaudit.claims.enclosure`); None for any other value.

    >>> certified_text({"certified": [0.1, 0.10000000000000002]})
    'certified [0.1, 0.10000000000000002]'
    """
    if isinstance(value, dict) and set(value) == {"certified"}:
        pair = value["certified"]
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and all(_is_number(v) for v in pair):
            return f"certified [{float(pair[0])!r}, {float(pair[1])!r}]"
    return None


def _observed_text(value: Any, digits: int) -> str:
    marked = certified_text(value)
    return marked if marked is not None else value_text(value, digits)


def _quantities(record: dict, digits: int) -> list[tuple[str, str, str, str]]:
    predicted, observed = record.get("predicted"), record.get("observed")
    rows: list[tuple[str, str, str, str]] = []
    if isinstance(predicted, dict) and isinstance(observed, dict):
        for key in list(predicted) + [k for k in observed if k not in predicted]:
            if key in _CONTROL_FIELDS:
                continue
            rows.append((str(key), value_text(predicted.get(key, None), digits) if key in predicted else "",
                         _observed_text(observed.get(key), digits) if key in observed else "", ""))
    elif isinstance(observed, dict):
        rows.append(("prediction", value_text(predicted, digits), "", ""))
        for key, value in observed.items():
            if key not in _CONTROL_FIELDS:
                rows += [(q, "", text, "") for q, text in _rows_of(str(key), value, digits)]
    else:
        rows.append(("value", value_text(predicted, digits), value_text(observed, digits), ""))
    err, relation, tol = _error_and_tolerance(record)
    rows.append((ERROR_ROW, "", err, f"{relation} {tol}".strip()))
    return rows


def _sentence(record: dict, view_rows: list) -> str:
    verdict = record.get("verdict")
    n = record.get("n_cases")
    cases = f"{n} case{'s' if n != 1 else ''}" if isinstance(n, int) and n > 0 else "the cases run"
    err, relation, tol = _error_and_tolerance(record)
    runs = (record.get("negative_control") or {}).get("runs") or []
    controls = (f"; {sum(bool(r.get('failed')) for r in runs)} of {len(runs)} negative controls refuted"
                if runs else "")
    if verdict == "confirmed":
        return f"Confirmed on {cases}: the worst error {err} {relation} {tol}{controls}."
    if verdict == "refuted":
        return f"Refuted: on the case shown the error {err} {relation} {tol}."
    if verdict == "undecided":
        weak = [r for r in runs if not r.get("failed")]
        why = (f"{len(weak)} of {len(runs)} negative controls were not refuted, so the check cannot tell a "
               "wrong prediction from the right one" if weak else "the numerics could not tell (notes below)")
        return f"Undecided: {why}."
    if verdict == "error":
        last = (record.get("traceback") or "").strip().splitlines()
        return f"Error: the check raised {tidy_prose(last[-1]) if last else 'an exception'}."
    if verdict == "out-of-scope":
        return "Out of scope: the claim's hypotheses do not cover the case (notes below)."
    return f"{verdict}."


def evidence_view(record: dict) -> EvidenceView:
    """The :class:`EvidenceView` of one evidence record (as stored in ``evidence.jsonl``)."""
    digits = digits_for((record.get("tolerance") or {}).get("value"))
    quantities = _quantities(record, digits)
    controls = _negative_control_rows(record.get("negative_control") or {}, digits)
    observed = record.get("observed")
    if isinstance(observed, dict):
        if observed.get("positive_control") is not None:
            controls.append(_positive_control_row(observed["positive_control"], digits))
        if isinstance(observed.get("data_controls"), list):
            controls += _data_control_rows(observed["data_controls"], digits)
    params = record.get("params")
    parameters = ([(str(k), value_text(v, digits, 1)) for k, v in params.items()] if isinstance(params, dict)
                  else [] if params is None else [("parameters", value_text(params, digits))])
    elapsed = record.get("elapsed_s")
    run = ", ".join(p for p in (
        f"seed {record['seed']}" if record.get("seed") is not None else "",
        f"profile {record['profile']}" if record.get("profile") else "",
        f"{record['n_cases']} cases" if isinstance(record.get("n_cases"), int) else "",
        f"{number(elapsed, 3)} s" if _is_number(elapsed) else "") if p)
    return EvidenceView(sentence=_sentence(record, quantities), quantities=quantities, controls=controls,
                        parameters=parameters, notes=note_items(record.get("detail")), run=run)
