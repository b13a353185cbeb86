r"""Ask LLVM for 512-bit vectors in one numba function.

LLVM's tuning for Intel server cores (Ice Lake, Sapphire Rapids) sets ``prefer-256-bit``: loops are
vectorised with 256-bit registers even where AVX-512 exists, to avoid the frequency drop of 512-bit code on
older parts. For a loop that is bound by FMA throughput and dependency latency, like the batched RK4 of
:mod:`biasaudit.numerics.heatmap_rk4`, 512-bit vectors carry twice the α per instruction: measured on this machine
(2-core Xeon with AVX-512), 12.4 → 8.4 ns per α-step (the d-specialised kernel of that time).

:func:`prefer_wide_vectors` is a no-op intrinsic; calling it inside an ``@njit`` function attaches the
function attribute ``"prefer-vector-width"="512"`` to the LLVM function being built, which is what clang's
``-mprefer-vector-width=512`` does. On CPUs without AVX-512 the attribute changes nothing. llvmlite checks
function attribute names against a fixed list, so the string attribute is added to the underlying set;
should llvmlite's internals change, the call degrades to a no-op (the kernel stays correct, only slower).
"""

from __future__ import annotations

from numba import types
from numba.extending import intrinsic

__all__ = ["prefer_wide_vectors", "WIDE_VECTOR_ATTRIBUTE"]

WIDE_VECTOR_ATTRIBUTE = '"prefer-vector-width"="512"'


@intrinsic
def prefer_wide_vectors(typingctx):
    """No-op at run time; at compile time marks the enclosing function for 512-bit vectorisation."""

    def codegen(context, builder, signature, args):
        try:
            set.add(builder.function.attributes, WIDE_VECTOR_ATTRIBUTE)
        except (AttributeError, TypeError):  # llvmlite internals changed: keep LLVM's default width
            pass
        return context.get_dummy_value()

    return types.none(), codegen
