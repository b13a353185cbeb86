"""numba kernels, plain-numpy references and mpmath references (see each module's docstring). Imports
:mod:`biasaudit.plumbing`, :mod:`biasaudit.theory` and itself only."""

from biasaudit.numerics.cache_guard import guard as _guard_numba_cache

_guard_numba_cache()
