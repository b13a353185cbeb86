r"""``sam.discrete.kernel_matches_reference``: the numba discrete SAM kernel (:func:`run_sam`) against its plain-numpy
reference (:func:`run_sam_reference`), step for step, for GD, l_inf-SAM and l2-SAM (joint, per-layer, none).
"""

from __future__ import annotations

import numpy as np

from biasaudit.claims.crosscheck import crosscheck_claim, precision_tolerance
from biasaudit.claims.sam._common import PAPER
from biasaudit.domain import Choice, Domain, Integer, Real, Vector

__all__ = ["CLAIMS"]

_STEPS = 60  # iterations compared: enough for every layer and coordinate to move by a few percent


def _data(p):
    rng = np.random.default_rng(p["data_seed"])
    X = rng.normal(size=(p["n"], p["d"]))
    y = np.where(rng.uniform(size=p["n"]) < 0.6, 1.0, -1.0)
    W0 = np.asarray(p["alpha"], dtype=float)[None, :] * (1 + 0.2 * rng.uniform(-1, 1, size=(p["depth"], p["d"])))
    return W0, X, y


def _normalization(p):
    return "joint" if p["algorithm"] != "l2" else p["normalization"]


def _records(tr):
    return np.concatenate([tr.W.ravel(), tr.loss, tr.tau, [float(tr.status == "ok")]])


def _run(run):
    def go(p):
        W0, X, y = _data(p)
        return _records(run(W0, X, y, algorithm=p["algorithm"], rho=p["rho"], eta=p["eta"], steps=_STEPS,
                            normalization=_normalization(p), record_every=7))
    return go


def _kernel(p):
    from biasaudit.numerics.sam_discrete import run_sam

    return _run(run_sam)(p)


def _reference(p):
    from biasaudit.numerics.sam_discrete import run_sam_reference

    return _run(run_sam_reference)(p)


DISCRETE_KERNEL = crosscheck_claim(
    id="sam.discrete.kernel_matches_reference", paper=PAPER,
    title="implementation cross-check: the numba discrete SAM kernel equals its plain-numpy reference (weights, "
          "loss and rescaled time at every record), for GD, l_inf-SAM and l2-SAM (joint, per-layer, unnormalized)",
    kernel="numerics.sam_discrete.run_sam", reference="numerics.sam_discrete.run_sam_reference",
    run_kernel=_kernel, run_reference=_reference, floor=0.1,
    tolerance=precision_tolerance("kernel_vs_numpy", 1e-13, "worst gap 6.1e-15 measured (floor 0.1, the "
                                  "scale of the weights: a coordinate chattering about 0 is compared absolutely)"),
    domain=Domain({"algorithm": Choice(("gd", "linf", "l2")), "normalization": Choice(("joint", "layer", "none")),
                   "depth": Integer(1, 4), "d": Integer(1, 4), "n": Integer(1, 4), "data_seed": Integer(0, 10**6),
                   "alpha": Vector("d", 0.2, 1.0), "rho": Real(0.01, 0.2), "eta": Real(0.01, 0.2)}),
    notes="Every claim on the discrete algorithms (sam.discrete.*, sam.l2.discrete_*, sam.linf.chatter_bound) runs "
          "the numba kernel; this claim vouches that it computes the update the readable reference writes out.",
)

CLAIMS = (DISCRETE_KERNEL,)
