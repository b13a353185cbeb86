"""numba kernels, plain-numpy references and mpmath references (see each module's docstring)."""

from numerics.cache_guard import guard as _guard_numba_cache

_guard_numba_cache()
