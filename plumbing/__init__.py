"""The bottom layer: plumbing that every other layer imports downwards, and that imports none of them.

Layers, bottom to top (each imports only from the ones below it; see ``notes/conventions.md``)::

    biasaudit.plumbing     input checks, atomic writes, the cache root, JSON conversion
    biasaudit.theory       sympy statements of the theorems
    biasaudit.numerics     numba/mpmath integrators and iterations (and what has no closed form)
    biasaudit.validation   torch experiments
    biasaudit.*            the front door: claims, ledger, registry, audit, report, CLI

Each concept is a module of its own (:mod:`.inputs`, :mod:`.atomicio`, :mod:`.cachedir`,
:mod:`.jsonable`); their public names are re-exported here. The run cache's pieces are imported from their
modules: :mod:`.runcache` (content-addressed keys, run counts), :mod:`.filelock` (an inter-process lock) and
:mod:`.jsoncache` (the one cached-JSON helper, ``cached_json``).
"""

from biasaudit.plumbing.atomicio import atomic_write_text
from biasaudit.plumbing.cachedir import cache_root
from biasaudit.plumbing.inputs import (InputError, as_finite_vector, broadcast_vector, choice, claim_pattern, finite_scalar, matching_length,
                                       nonnegative_scalar, parse_float_list, positive_increasing, positive_int,
                                       positive_scalar, positive_vector, writable_dir, writable_file,
                                       fits_in_memory)
from biasaudit.plumbing.jsonable import finite_json, jsonable

__all__ = [
    "InputError",
    "as_finite_vector",
    "broadcast_vector",
    "atomic_write_text",
    "cache_root",
    "choice",
    "claim_pattern",
    "finite_scalar",
    "jsonable",
    "finite_json",
    "matching_length",
    "nonnegative_scalar",
    "parse_float_list",
    "positive_increasing",
    "positive_int",
    "positive_scalar",
    "positive_vector",
    "writable_dir",
    "writable_file",
    "fits_in_memory",
]
