"""Input validation shared by every public wrapper.

Each check raises :class:`InputError` (a ``ValueError``) whose message names the parameter and the rule it
broke, e.g. ``mu: must be strictly positive and strictly increasing, got [2.0, 1.0]``. The CLI turns it into
one line on stderr and exit code 2.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

__all__ = [
    "InputError",
    "as_finite_vector",
    "positive_increasing",
    "positive_vector",
    "positive_scalar",
    "nonnegative_scalar",
    "finite_scalar",
    "positive_int",
    "choice",
    "matching_length",
    "parse_float_list",
    "broadcast_vector",
    "distinct_values",
]


class InputError(ValueError):
    """Bad user input: a ``ValueError`` whose message is ``"<parameter>: <rule>, got <value>"``.

    Parameters
    ----------
    name : str
        The parameter, as the user wrote it (``mu``, ``eta_min``, ``claims``).
    rule : str
        The rule it broke, in words (``must be > 0``).
    value : object, optional
        What was given (shown, shortened to 80 characters; left out when None).

    Examples
    --------
    >>> from biasaudit.plumbing import InputError
    >>> str(InputError("rho", "must be > 0", -1.0))
    'rho: must be > 0, got -1.0'
    """

    def __init__(self, name: str, rule: str, value: object = None):
        self.name, self.rule, self.value = name, rule, value
        shown = "" if value is None else f", got {_show(value)}"
        super().__init__(f"{name}: {rule}{shown}")


def _show(value: object) -> str:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def finite_scalar(name: str, value: float) -> float:
    """``value`` as a finite float.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    value : object
        A real number, or anything ``float()`` reads.

    Returns
    -------
    float
        The value.

    Raises
    ------
    InputError
        Unless it is a real number and finite (no NaN or inf).

    Examples
    --------
    >>> from biasaudit.plumbing import finite_scalar
    >>> finite_scalar("y", "1.5")
    1.5
    >>> finite_scalar("y", float("nan"))
    Traceback (most recent call last):
    ...
    biasaudit.plumbing.inputs.InputError: y: must be finite (no NaN or inf), got nan
    """
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError(name, "must be a real number", value) from None
    if not math.isfinite(out):
        raise InputError(name, "must be finite (no NaN or inf)", value)
    return out


def positive_scalar(name: str, value: float) -> float:
    """``value`` as a finite float > 0.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    value : object
        A real number.

    Returns
    -------
    float
        The value.

    Raises
    ------
    InputError
        Unless it is finite and > 0.

    Examples
    --------
    >>> from biasaudit.plumbing import positive_scalar
    >>> positive_scalar("rho", 0.5)
    0.5
    """
    out = finite_scalar(name, value)
    if out <= 0:
        raise InputError(name, "must be > 0", value)
    return out


def nonnegative_scalar(name: str, value: float) -> float:
    """``value`` as a finite float >= 0.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    value : object
        A real number.

    Returns
    -------
    float
        The value.

    Raises
    ------
    InputError
        Unless it is finite and >= 0.

    Examples
    --------
    >>> from biasaudit.plumbing import nonnegative_scalar
    >>> nonnegative_scalar("delta", 0)
    0.0
    """
    out = finite_scalar(name, value)
    if out < 0:
        raise InputError(name, "must be >= 0", value)
    return out


def positive_int(name: str, value: int, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum`` (an integral float such as ``2.0`` is accepted).

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    value : object
        An integer.
    minimum : int, default 1
        The smallest value allowed.

    Returns
    -------
    int
        The value.

    Raises
    ------
    InputError
        For a fraction, a string, anything ``int()`` refuses, or a value below ``minimum``.

    Examples
    --------
    >>> from biasaudit.plumbing import positive_int
    >>> positive_int("depth", 2.0)
    2
    """
    try:
        out = int(value)
    except (TypeError, ValueError):
        raise InputError(name, "must be an integer", value) from None
    if out != value or out < minimum:
        raise InputError(name, f"must be an integer >= {minimum}", value)
    return out


def as_finite_vector(name: str, value: Iterable[float] | float, ndim: int = 1) -> np.ndarray:
    """``value`` as a new float array with ``ndim`` axes, non-empty and finite.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    value : array_like or float
        The numbers (a scalar becomes a length-1 vector when ``ndim`` is 1).
    ndim : int, default 1
        The number of axes required.

    Returns
    -------
    numpy.ndarray
        A new float array.

    Raises
    ------
    InputError
        For non-numbers, the wrong number of axes, an empty array, NaN or inf.

    Examples
    --------
    >>> from biasaudit.plumbing import as_finite_vector
    >>> as_finite_vector("x", 2.0).tolist()
    [2.0]
    """
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(name, "must be a list of real numbers", value) from None
    if arr.ndim == 0 and ndim == 1:
        arr = arr.reshape(1)
    if arr.ndim != ndim:
        raise InputError(name, f"must be a {ndim}-d array", value)
    if arr.size == 0:
        raise InputError(name, "must not be empty", value)
    if not np.all(np.isfinite(arr)):
        raise InputError(name, "must be finite (no NaN or inf)", value)
    return arr


def positive_vector(name: str, value: Iterable[float] | float) -> np.ndarray:
    """A non-empty, finite 1-d float array with every entry > 0.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    value : array_like or float
        The numbers.

    Returns
    -------
    numpy.ndarray
        A new float array.

    Raises
    ------
    InputError
        Unless every entry is finite and > 0.

    Examples
    --------
    >>> from biasaudit.plumbing import positive_vector
    >>> positive_vector("x", [1, 2]).tolist()
    [1.0, 2.0]
    """
    arr = as_finite_vector(name, value)
    if np.any(arr <= 0):
        raise InputError(name, "must be strictly positive", value)
    return arr


def positive_increasing(name: str, value: Iterable[float]) -> np.ndarray:
    """A 1-d float array, strictly positive and strictly increasing: the data point μ of "Minor First, Major
    Last", 0 < μ₁ < … < μ_d.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    value : array_like
        The numbers.

    Returns
    -------
    numpy.ndarray
        A new float array.

    Raises
    ------
    InputError
        Unless every entry is > 0 and each exceeds the one before.

    Examples
    --------
    >>> from biasaudit.plumbing import positive_increasing
    >>> positive_increasing("mu", (1, 3)).tolist()
    [1.0, 3.0]
    """
    arr = as_finite_vector(name, value)
    if np.any(arr <= 0) or np.any(np.diff(arr) <= 0):
        raise InputError(name, "must be strictly positive and strictly increasing", value)
    return arr


def matching_length(name: str, arr: np.ndarray, d: int, other: str) -> np.ndarray:
    """``arr`` unchanged when its last axis has length ``d``, the length of the parameter ``other``.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    arr : numpy.ndarray
        The array to check.
    d : int
        The required length.
    other : str
        The parameter whose length ``d`` is (named in the message).

    Returns
    -------
    numpy.ndarray
        ``arr``.

    Raises
    ------
    InputError
        When the lengths differ.

    Examples
    --------
    >>> import numpy as np
    >>> from biasaudit.plumbing import matching_length
    >>> matching_length("w0", np.ones(2), 2, "x").shape
    (2,)
    """
    if arr.shape[-1] != d:
        raise InputError(name, f"must have length {d} (the length of {other})", arr)
    return arr


def choice(name: str, value: str, options: Sequence[str]) -> str:
    """``value`` unchanged when it is one of ``options``.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    value : str
        The choice made.
    options : sequence of str
        The allowed choices.

    Returns
    -------
    str
        ``value``.

    Raises
    ------
    InputError
        Otherwise, listing the options.

    Examples
    --------
    >>> from biasaudit.plumbing import choice
    >>> choice("norm", "l2", ("l2", "linf"))
    'l2'
    """
    if value not in options:
        raise InputError(name, f"must be one of {', '.join(options)}", value)
    return value


def parse_float_list(name: str, text: str) -> np.ndarray:
    """A command-line list such as ``"1,2.5,3"`` as a float array.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    text : str
        Comma-separated numbers.

    Returns
    -------
    numpy.ndarray
        The numbers, finite.

    Raises
    ------
    InputError
        For an empty list, an empty item (``1,,3``: named by its position, never dropped), an item that is not a number, NaN or inf.

    Examples
    --------
    >>> from biasaudit.plumbing import parse_float_list
    >>> parse_float_list("mu", "1,2.5").tolist()
    [1.0, 2.5]
    >>> parse_float_list("mu", "1,,3")
    Traceback (most recent call last):
    ...
    biasaudit.plumbing.inputs.InputError: mu: item 2 is empty (a comma-separated list of numbers has no empty items), got '1,,3'
    """
    text = "" if text is None else str(text)
    if text.strip() == "":
        raise InputError(name, "must not be empty (give a comma-separated list of numbers)", text)
    values = []
    for i, item in enumerate(text.split(","), start=1):
        if item.strip() == "":
            raise InputError(name, f"item {i} is empty (a comma-separated list of numbers has no empty items)",
                             text)
        try:
            values.append(float(item))
        except ValueError:
            raise InputError(name, f"must be a comma-separated list of numbers (item {i} is not a number)",
                             text) from None
    return as_finite_vector(name, values)


def broadcast_vector(name: str, values: np.ndarray, length: int, like: str) -> np.ndarray:
    """``values`` as a vector of ``length``: one number is repeated (``--w0 0.05`` beside a 3-vector ``x``).

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    values : numpy.ndarray
        One number, or ``length`` of them.
    length : int
        The length wanted.
    like : str
        The parameter whose length it is (named in the message).

    Returns
    -------
    numpy.ndarray
        A float vector of ``length``.

    Raises
    ------
    InputError
        For any other number of items.

    Examples
    --------
    >>> from biasaudit.plumbing import broadcast_vector
    >>> broadcast_vector("w0", [0.05], 3, "--x").tolist()
    [0.05, 0.05, 0.05]
    """
    values = np.asarray(values, dtype=float)
    if values.shape == (1,) and length > 1:
        return np.full(length, values[0])
    if values.shape != (length,):
        raise InputError(name, f"must have 1 or {length} items (as many as {like})", ",".join(map(str, values)))
    return values


def distinct_values(name: str, values) -> np.ndarray:
    """``values`` (1-d) with no value given twice: ``name: must not repeat a value (... given twice)``."""
    arr = np.asarray(values, dtype=float)
    unique, counts = np.unique(arr, return_counts=True)
    if np.any(counts > 1):
        repeated = ", ".join(f"{v:g}" for v in unique[counts > 1])
        raise InputError(name, f"must not repeat a value ({repeated} given more than once)", arr)
    return arr


def writable_dir(name: str, value, *, make: tuple[str, ...] = ()) -> Path:
    """A directory that exists or can be created (with the sub-folders ``make``) and can be written, checked
    before any work.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    value : str or Path
        The folder (an empty string is refused: it would silently mean the current folder).
    make : tuple of str, default ()
        Sub-folders to create in it.

    Returns
    -------
    Path
        The folder, resolved.

    Raises
    ------
    InputError
        For an empty path, a file in the way, or a folder that cannot be created or written (a refused path leaves no folder behind).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from biasaudit.plumbing import writable_dir
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     writable_dir("out", pathlib.Path(tmp) / "report", make=("figures",)).name
    'report'
    """
    if str(value).strip() == "":
        raise InputError(name, "must name a directory (an empty path is not one)", value)
    path = Path(value).expanduser()
    if path.exists() and not path.is_dir():
        raise InputError(name, "must be a directory (a file of that name exists)", str(path))
    created = [*(f for sub in reversed(make) for f in _missing_folders(path / sub) if path in f.parents),
               *_missing_folders(path)]
    try:
        path.mkdir(parents=True, exist_ok=True)
        for sub in make:
            (path / sub).mkdir(parents=True, exist_ok=True)
        probe = path / f".write-test.{os.getpid()}"
        probe.write_text("ok", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        for folder in created:  # a refused path leaves nothing behind (deepest first; only the empty ones)
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise InputError(name, f"must be a writable directory ({exc.strerror or exc})", str(path)) from None
    return path.resolve()


def _missing_folders(path: Path) -> list[Path]:
    """The folders from ``path`` up to (not including) its first existing ancestor, deepest first."""
    missing = []
    try:
        while not path.exists() and path != path.parent:
            missing.append(path)
            path = path.parent
    except OSError:  # a component the OS refuses (e.g. too long): mkdir creates nothing below it either
        pass
    return missing


def writable_file(name: str, value, *, suffix: str | tuple[str, ...] | None = None) -> Path:
    """A file path that can be written, checked before any work (the file itself is not created).

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    value : str or Path
        The file.
    suffix : str or tuple of str, optional
        The endings allowed (``.png``, or a tuple of them).

    Returns
    -------
    Path
        The file's path, resolved.

    Raises
    ------
    InputError
        For an empty path, a directory of that name, another ending, or a folder that cannot be written.

    Examples
    --------
    >>> from biasaudit.plumbing import writable_file
    >>> writable_file("plot", "sweep.jpg", suffix=(".png", ".pdf"))
    Traceback (most recent call last):
    ...
    biasaudit.plumbing.inputs.InputError: plot: must be a .png or .pdf file name, got 'sweep.jpg'
    """
    if str(value).strip() == "":
        raise InputError(name, "must name a file (an empty path is not one)", value)
    path = Path(value).expanduser()
    suffixes = (suffix,) if isinstance(suffix, str) else suffix
    if suffixes is not None and not path.name.lower().endswith(tuple(suffixes)):
        raise InputError(name, f"must be a {' or '.join(suffixes)} file name", str(path))
    if path.is_dir():
        raise InputError(name, "must be a file name (a directory of that name exists)", str(path))
    writable_dir(name, path.parent if str(path.parent) else ".")
    return path.resolve()


def memory_available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux), else None (unknown: no size check)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def fits_in_memory(name: str, value, estimate_bytes: float, *, fraction: float = 0.5) -> None:
    """Refuse a job that would not fit in memory, before it starts.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    value : object
        The value that sets the size (shown in the message).
    estimate_bytes : float
        The job's estimated memory.
    fraction : float, default 0.5
        The share of the available memory it may take.

    Returns
    -------
    None
        When it fits (or the available memory is unknown).

    Raises
    ------
    InputError
        When ``estimate_bytes`` exceeds ``fraction`` of the available memory.

    Examples
    --------
    >>> from biasaudit.plumbing import fits_in_memory
    >>> fits_in_memory("n", 400, 1e6) is None
    True
    """
    available = memory_available_bytes()
    if available is not None and estimate_bytes > fraction * available:
        raise InputError(name, f"needs about {estimate_bytes / 2**30:.2f} GiB, more than {fraction:.0%} of the "
                               f"{available / 2**30:.1f} GiB available", value)


def claim_pattern(name: str, text: str | None) -> str | None:
    """A ``--claims`` value: None (every claim) or comma-separated globs with at least one non-empty entry.

    Parameters
    ----------
    name : str
        The parameter's name, as the message shows it.
    text : str or None
        The option's value.

    Returns
    -------
    str or None
        ``text``.

    Raises
    ------
    InputError
        For an empty pattern (``''``, ``','``): never read as "every claim".

    Examples
    --------
    >>> from biasaudit.plumbing import claim_pattern
    >>> claim_pattern("claims", "sam.l2.*")
    'sam.l2.*'
    """
    if text is None:
        return None
    if not any(part.strip() for part in str(text).split(",")):
        raise InputError(name, "must name at least one claim id or glob (leave the option out for every claim)",
                         text)
    return text
