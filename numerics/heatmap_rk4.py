r"""Fixed-step RK4 over a batch of α for the balanced depth-2 l2-SAM flow: the j† heatmap's full-flow kernel.

The flow, per α (w = e^m v, κ = c e^{−m}; see :mod:`biasaudit.numerics.heatmap`)

    v_j' = μ_j v_j (1 − κ μ_j / S(v)),   S(v) = ‖μ ⊙ v‖₂,

is stepped by classical RK4 with a fixed step h. α are taken in blocks of :data:`BLOCK` (the last one padded
with dead columns). A block's state is one flat array, rows of length BLOCK (α innermost): v₁ … v_d, κ, S²,
max_j v_j, live, watch; so every loop over the batch is contiguous and LLVM vectorises it across α.

Two step kernels share one driver:

* ``generic`` (:func:`_steps_generic`): any d. Each RK4 stage is one fused pass over (j, b) that computes
  k_j, accumulates k₁ + 2k₂ + 2k₃ + k₄, writes the next stage's input and its S²; stage inputs live in
  separate scratch rows, so no pass reads and writes the same buffer (aliasing blocks vectorisation).
* ``unrolled-d{d}`` (d ≤ :data:`MAX_UNROLLED_D`): generated source in which the d coordinates are scalars,
  so one RK4 step of one α is one iteration of the loop over the batch, in registers, in the variables
  y = μ ⊙ v (5 flops per coordinate and stage instead of 7).

Both compute κ/S as κ·:func:`biasaudit.numerics.rsqrt.rsqrt` (Newton, no sqrt or division: the divider was the
bottleneck) and ask for 512-bit vectors (:mod:`biasaudit.numerics.simd`). Both run up to ``n`` steps and stop after
the first step on which an *event* fires for a live α: the collapse certificate S ≤ cμ₁ (i.e. S(v) ≤ κμ₁),
the escape certificate max_j w_j > c on an α not yet escaped, or max_j v_j > 2^{400} (renormalisation).
:func:`_handle_events` then applies it as a per-α loop would. Against the numpy RK4 of the same update the
two kernels agree to ≤ 1e−10 in ln S after 20,000 steps (rounding only: fastmath reassociation and the
few-ulp 1/√; the RK4 truncation error at that step is ~2e−9).

Why generated source: numba cannot specialise a loop nest on the value of d, and passing a step kernel into
a cached driver as an argument defeats numba's on-disk cache (the dispatcher's identity enters the key).
The driver plus its step kernel are written as a real module under ``$BIASAUDIT_CACHE_DIR/kernels`` (default
``~/.cache/biasaudit/kernels``), named by the hash of its source and of every ``numerics`` source (numba's
cache would not notice a change in a module it calls into), and imported, so ``cache=True`` applies
and each d compiles once per machine. The file is verified at import (its bytes hashed against the expected
source and compiled from those same bytes), and the directory must be private to the user (numba's cache
beside it is unpickled); if it is not, or cannot be written, the same source is compiled in memory (no
disk cache).
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
import threading
from pathlib import Path

import numpy as np
from numba import njit

from biasaudit.numerics.cache_guard import package_digest
from biasaudit.numerics.heatmap_common import _RENORM, _record, _renormalise
from biasaudit.numerics.rsqrt import rsqrt
from biasaudit.numerics.simd import prefer_wide_vectors

__all__ = ["rk4_batch", "kernel_variant", "unrolled_steps_source", "MAX_UNROLLED_D", "BLOCK"]

MAX_UNROLLED_D = 16  # above this the unrolled kernel spills registers; the generic kernel is as fast
BLOCK = 64  # α per block (padded with dead columns): the block's working set stays in L1
N_STATE_ROWS = 5  # rows after the d rows of v: κ, S², max v, live, watch
_SQRT_FLOOR = 1e-300  # S² floor: a zero column (zero gradient) gives a finite r and the field 0


# ----------------------------------------------------------------------------------------------------------
# block state: one flat array, row-major (d + 5) × BLOCK — v_1..v_d, κ, S², max_j v_j, live, watch
# ----------------------------------------------------------------------------------------------------------
@njit(cache=True)
def _rows(X, d, B):
    """Views of the block state X: (V (d, B), κ, S², max v, live, watch)."""
    V = X[:d * B].reshape((d, B))
    return (V, X[d * B:(d + 1) * B], X[(d + 1) * B:(d + 2) * B], X[(d + 2) * B:(d + 3) * B],
            X[(d + 3) * B:(d + 4) * B], X[(d + 4) * B:(d + 5) * B])


@njit(cache=True)
def _column_norms(V, b, mu, s, vmx):
    """S² and max_j v_j of column b into s[b], vmx[b]."""
    s[b] = 0.0
    vmx[b] = 0.0
    for j in range(V.shape[0]):
        s[b] += (mu[j] * V[j, b]) ** 2
        vmx[b] = max(vmx[b], V[j, b])


@njit(cache=True)
def _block_start(alphas, mu, c, status, B):
    """The state of a block of ``alphas`` (n_b ≤ B rows of α), its log scales m and the generic scratch.

    Every α starts live and undecided (status 0); the driver's first :func:`_handle_events` applies the
    certificates at τ = 0. Columns n_b … B−1 are padding: v = 1 and dead (live = 0), so they never move and
    raise no event."""
    n_b, d = alphas.shape
    X = np.empty((d + N_STATE_ROWS) * B)
    V, kappa, s, vmx, live, watch = _rows(X, d, B)
    for b in range(B):
        kappa[b] = c
        real = b < n_b
        for j in range(d):
            V[j, b] = alphas[b, j] if real else 1.0
        if real:
            status[b] = 0
        live[b] = 1.0 if real else 0.0
        watch[b] = live[b]  # 1 while the escape certificate has not fired
        _column_norms(V, b, mu, s, vmx)
    return X, np.zeros(B), np.empty((4 * d + 2) * B)


@njit(cache=True)
def _handle_events(X, d, B, mu, c, m, status):
    """Apply the certificates and renormalisation to every live α (S², max v as left by the last step).

    Returns the number of α still live."""
    V, kappa, s, vmx, live, watch = _rows(X, d, B)
    n_live = 0
    for b in range(status.shape[0]):
        if live[b] == 0.0:
            continue
        if s[b] <= (kappa[b] * mu[0]) ** 2:  # collapse certificate S ≤ cμ₁
            status[b] = -1
            live[b] = 0.0
        elif vmx[b] > kappa[b]:  # escape certificate max_j w_j > c
            status[b] = 1
            watch[b] = 0.0
        if vmx[b] > _RENORM:  # w = e^m v: divide v by 2^400 (exact) and raise m
            m[b] = _renormalise(V[:, b], m[b])
            kappa[b] = c * math.exp(-m[b])
            _column_norms(V, b, mu, s, vmx)
        if live[b] != 0.0:
            n_live += 1
    return n_live


@njit(cache=True)
def _record_block(X, d, B, m, mu, c, status, k, jd, loss, logS):
    V = _rows(X, d, B)[0]
    col = np.empty(d)
    for b in range(status.shape[0]):
        for j in range(d):
            col[j] = V[j, b]
        _record(col, m[b], mu, c, status[b] == -1, k, jd[b], loss[b], logS[b])


# ----------------------------------------------------------------------------------------------------------
# the generic step kernel (any d)
# ----------------------------------------------------------------------------------------------------------
@njit(cache=True, fastmath=True, inline="always")
def _stage(X, V, mu, kappa, s_in, w, first, a, T, s_out, acc, r):
    """One RK4 stage over the block: r = κ/√s_in; k = μX(1 − rμ); acc (+)= w k; T = V + a k; s_out = ‖μT‖²
    (``s_out`` may be ``s_in``)."""
    d, B = X.shape
    for b in range(B):
        r[b] = kappa[b] * rsqrt(max(s_in[b], _SQRT_FLOOR))
    for b in range(B):
        s_out[b] = 0.0
    for j in range(d):
        mj = mu[j]
        for b in range(B):
            k = mj * X[j, b] * (1.0 - r[b] * mj)
            if first:
                acc[j, b] = w * k
            else:
                acc[j, b] += w * k
            t = V[j, b] + a * k
            T[j, b] = t
            s_out[b] += (mj * t) * (mj * t)


@njit(cache=True, fastmath=True)
def _steps_generic(X, mu, h, n, scratch):
    """Up to ``n`` RK4 steps of the block; returns the steps taken (it stops after a step with an event)."""
    prefer_wide_vectors()
    d = mu.shape[0]
    B = X.shape[0] // (d + N_STATE_ROWS)
    V, kappa, s, vmx, live, watch = _rows(X, d, B)
    acc = scratch[0:d * B].reshape((d, B))
    T1 = scratch[d * B:2 * d * B].reshape((d, B))
    T2 = scratch[2 * d * B:3 * d * B].reshape((d, B))
    T3 = scratch[3 * d * B:4 * d * B].reshape((d, B))
    q = scratch[4 * d * B:(4 * d + 1) * B]
    r = scratch[(4 * d + 1) * B:(4 * d + 2) * B]
    for i in range(n):
        _stage(V, V, mu, kappa, s, 1.0, True, 0.5 * h, T1, q, acc, r)
        _stage(T1, V, mu, kappa, q, 2.0, False, 0.5 * h, T2, q, acc, r)
        _stage(T2, V, mu, kappa, q, 2.0, False, h, T3, q, acc, r)
        for b in range(B):
            r[b] = kappa[b] * rsqrt(max(q[b], _SQRT_FLOOR))
        for b in range(B):
            s[b] = 0.0
            vmx[b] = 0.0
        for j in range(d):
            mj = mu[j]
            for b in range(B):
                k = mj * T3[j, b] * (1.0 - r[b] * mj)
                v = V[j, b] + live[b] * h * (acc[j, b] + k) / 6.0
                V[j, b] = v
                s[b] += (mj * v) * (mj * v)
                vmx[b] = max(vmx[b], v)
        events = 0
        for b in range(B):
            th = kappa[b] * mu[0]
            events += (live[b] > 0.0) & ((s[b] <= th * th) | ((watch[b] > 0.0) & (vmx[b] > kappa[b]))
                                         | (vmx[b] > _RENORM))
        if events > 0:
            return i + 1
    return n


# ----------------------------------------------------------------------------------------------------------
# the unrolled step kernel (source generated for one d)
# ----------------------------------------------------------------------------------------------------------
def _one_alpha_step(d: int) -> list[str]:
    r"""Lines of one RK4 step of the α in column b, in y = μ ⊙ v:

    y_j' = y_j (μ_j − r μ_j²),  r = κ/‖y‖,

    the same field as v_j' = μ_j v_j (1 − κμ_j/S) with S = ‖y‖, at 5 flops per coordinate and stage (7 in
    v). Every row offset is a literal, so LLVM vectorises over b without run-time alias checks."""
    def at(row):
        return f"X[{row * BLOCK} + b]"

    kap, s2, vmax, live, watch = (at(d + i) for i in range(N_STATE_ROWS))
    J = range(d)
    out = [f"y{j} = m{j} * {at(j)}" for j in J]
    out += [f"kap = {kap}", f"r = kap * rsqrt(max({s2}, {_SQRT_FLOOR!r}))"]
    # stage inputs: y (k1), t (k2), u (k3), t (k4); a_j accumulates k1 + 2k2 + 2k3 + k4
    stages = (("y", "a{j} = k", "t", "h2"), ("t", "a{j} += 2.0 * k", "u", "h2"),
              ("u", "a{j} += 2.0 * k", "t", "h"), ("t", "a{j} += k", None, None))
    for x, accumulate, nxt, step in stages:
        for j in J:
            out.append(f"k = {x}{j} * (m{j} - r * n{j})")
            out.append(accumulate.format(j=j))
            if nxt is not None:
                out.append(f"{nxt}{j} = y{j} + {step} * k")
        if nxt is not None:
            out.append("q = " + " + ".join(f"{nxt}{j} * {nxt}{j}" for j in J))
            out.append(f"r = kap * rsqrt(max(q, {_SQRT_FLOOR!r}))")
    out += [f"lv = {live}", "hl = lv * h6"]
    for j in J:
        out += [f"y{j} = y{j} + hl * a{j}", f"w{j} = y{j} * i{j}", f"{at(j)} = w{j}"]
    out.append("q = " + " + ".join(f"y{j} * y{j}" for j in J))
    out.append("mx = " + "max(" * (d - 1) + "w0" + "".join(f", w{j})" for j in range(1, d)))
    out += [f"{s2} = q", f"{vmax} = mx", "th = kap * m0",
            f"events += (lv > 0.0) & ((q <= th * th) | (({watch} > 0.0) & (mx > kap)) | (mx > _RENORM))"]
    return out


def unrolled_steps_source(d: int) -> str:
    """Source of ``steps(X, mu, h, n, scratch)`` for one d: the coordinates are scalars, so one iteration of
    the loop over the batch is one whole RK4 step of one α, in registers."""
    if not 1 <= d <= MAX_UNROLLED_D:
        raise ValueError(f"d: must be in [1, {MAX_UNROLLED_D}] for the unrolled kernel, got {d!r}")
    lines = [
        "@njit(cache=True, fastmath=True)",
        "def steps(X, mu, h, n, scratch):",
        "    prefer_wide_vectors()",
        *(f"    m{j} = mu[{j}]" for j in range(d)),
        *(f"    n{j} = mu[{j}] * mu[{j}]" for j in range(d)),
        *(f"    i{j} = 1.0 / mu[{j}]" for j in range(d)),
        "    h2 = 0.5 * h",
        "    h6 = h / 6.0",
        "    for i in range(n):",
        "        events = 0",
        f"        for b in range({BLOCK}):",
        *(" " * 12 + line for line in _one_alpha_step(d)),
        "        if events > 0:",
        "            return i + 1",
        "    return n",
    ]
    return "\n".join(lines) + "\n"


_DRIVER = """

@njit(cache=True)
def rk4_block(alphas, mu, c, dt, stride, jd, loss, logS, status):
    d = alphas.shape[1]
    X, m, scratch = _block_start(alphas, mu, c, status, BLOCK)
    n_live = _handle_events(X, d, BLOCK, mu, c, m, status)
    for k in range(jd.shape[1]):
        left = stride if k > 0 else 0
        while left > 0 and n_live > 0:
            left -= steps(X, mu, dt, left, scratch)
            n_live = _handle_events(X, d, BLOCK, mu, c, m, status)
        _record_block(X, d, BLOCK, m, mu, c, status, k, jd, loss, logS)


@njit(cache=True, parallel=True)
def rk4_batch(alphas, mu, c, dt, stride, jd, loss, logS, status):
    n = alphas.shape[0]
    n_blocks = (n + BLOCK - 1) // BLOCK
    for i in prange(n_blocks):
        lo = i * BLOCK
        hi = min(n, lo + BLOCK)
        rk4_block(alphas[lo:hi], mu, c, dt, stride, jd[lo:hi], loss[lo:hi], logS[lo:hi], status[lo:hi])
"""

_HEADER = '''"""Generated by biasaudit.numerics.heatmap_rk4 ({variant}); do not edit: it is rewritten when its source changes."""
import math

import numpy as np
from numba import njit, prange

from biasaudit.numerics.heatmap_rk4 import BLOCK, _RENORM, _block_start, _handle_events, _record_block
from biasaudit.numerics.rsqrt import rsqrt
from biasaudit.numerics.simd import prefer_wide_vectors
{import_steps}
assert BLOCK == {block}

'''


def kernel_variant(d: int) -> str:
    """``"unrolled-d{d}"`` for d ≤ MAX_UNROLLED_D, else ``"generic"``."""
    return f"unrolled-d{d}" if 1 <= d <= MAX_UNROLLED_D else "generic"


def _module_source(variant: str) -> str:
    if variant == "generic":
        return _HEADER.format(variant=variant, block=BLOCK,
                              import_steps="from biasaudit.numerics.heatmap_rk4 import _steps_generic as steps") + _DRIVER
    d = int(variant.removeprefix("unrolled-d"))
    return (_HEADER.format(variant=variant, block=BLOCK, import_steps="") + "\n" + unrolled_steps_source(d)
            + _DRIVER)


def _kernel_dir() -> Path:
    from biasaudit.plumbing import cache_root

    return cache_root() / "kernels"


def _private(folder: Path) -> bool:
    """The folder is this user's and nobody else can write into it (no group/other write bit)."""
    st = folder.stat()
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _load(variant: str):
    """Import the generated module for ``variant`` from the kernel directory (write it first if needed).

    Verified at import: the file's bytes are read once, their SHA-256 is compared with the expected
    source's, and the module is compiled from *those same bytes* (no second read a swapped file could slip
    into). The kernel directory must be this user's and not group/world-writable, because numba's own cache
    beside it is unpickled on load; otherwise (or when it cannot be written) the source is compiled in
    memory, without a disk cache."""
    from biasaudit.plumbing import atomic_write_text

    source = _module_source(variant)
    expected = hashlib.sha256(source.encode("utf-8")).digest()
    # numba's on-disk cache watches the caller's own file only: the name also carries the digest of every
    # numerics source, so a change in a module the kernel calls into gives a new module
    digest = hashlib.sha256((source + package_digest()).encode()).hexdigest()[:16]
    name = f"biasaudit_kernel_heatmap_rk4_{variant.replace('-', '_')}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    module = type(sys)(name)
    try:
        folder = _kernel_dir()
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(folder):
            raise PermissionError(f"{folder} is not private to this user")
        path = folder / f"{name}.py"
        data = path.read_bytes() if path.is_file() else b""
        if hashlib.sha256(data).digest() != expected:  # absent, stale or tampered: write it (then re-read once)
            atomic_write_text(path, source)  # rewriting an identical file would invalidate numba's cache
            data = path.read_bytes()
        if hashlib.sha256(data).digest() != expected:
            raise PermissionError(f"{path} changed under us")
        code = compile(data, str(path), "exec")  # co_filename = path: numba's disk cache keys on that file
        module.__file__ = str(path)
    except OSError:  # unwritable or shared cache dir: compile the same source in memory, without a disk cache
        code = compile(source.replace("cache=True", "cache=False"), f"<{name}>", "exec")
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


_BATCH = {}
_LOAD_LOCK = threading.Lock()  # threads of one process (a Dask LocalCluster) load each variant once


def rk4_batch(alphas, mu, c, dt, stride, jd, loss, logS, status, *, variant: str | None = None) -> str:
    """RK4 on every row of ``alphas`` (n, d), writing j†, loss, ln S every ``stride`` steps into the (n, n_t)
    outputs and the final certificate status (−1 collapse, +1 escape, 0 neither) into ``status``.

    ``variant``: ``"generic"`` or ``"unrolled-d{d}"`` (default :func:`kernel_variant`). Returns the variant
    used. Inputs are validated by :func:`biasaudit.numerics.heatmap.dominant_index_heatmap`."""
    d = alphas.shape[1]
    variant = kernel_variant(d) if variant is None else variant
    if variant != "generic" and variant != f"unrolled-d{d}":
        raise ValueError(f"variant: must be 'generic' or 'unrolled-d{d}' for d = {d}, got {variant!r}")
    with _LOAD_LOCK:
        if variant not in _BATCH:
            _BATCH[variant] = _load(variant).rk4_batch
    _BATCH[variant](alphas, mu, c, dt, stride, jd, loss, logS, status)
    return variant
