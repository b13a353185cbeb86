"""numerics/heatmap.py, the front of the j† heatmap: dispatch by (time, method), and every keyword that does
not apply to the chosen method/time is refused naming it (never silently ignored)."""

import math

import numpy as np
import pytest

from biasaudit.numerics import heatmap as hm
from biasaudit.plumbing import InputError

MU = np.array([1.0, 2.0, 3.0])
RHO = math.sqrt(2)
TAU = np.linspace(0.0, 2.0, 5)
ITERS = np.arange(0, 101, 25)

KEYWORDS = {"eta": 0.05, "steps_per_output": 10, "normalization": "layer", "rtol": 1e-10, "atol": 1e-12}


def _grid(time):
    return TAU if time == "tau" else ITERS


@pytest.mark.parametrize("time, method", list(hm.APPLIES), ids=lambda x: str(x))
def test_every_method_runs_with_the_keywords_it_reads(time, method):
    given = {k: KEYWORDS[k] for k in hm.APPLIES[time, method]}
    h = hm.dominant_index_heatmap(MU, RHO, [0.3, 0.8], _grid(time), method=method, time=time, **given)
    assert h.method == method and h.time == time and h.j_dagger.shape == (2, 5)
    assert (h.tau is not None) == (time == "iterations") and (h.steps is not None) == (method == "reduction")
    assert h.c == (0.0 if method == "gd" else RHO if given.get("normalization") == "layer" else 1.0)


REFUSED = [(time, method, key) for (time, method), reads in hm.APPLIES.items() for key in KEYWORDS
           if key not in reads]


@pytest.mark.parametrize("time, method, key", REFUSED, ids=lambda x: str(x))
def test_a_keyword_that_does_not_apply_is_refused_naming_it(time, method, key):
    with pytest.raises(InputError, match=f"^{key}: does not apply to method='{method}' with time='{time}'"):
        hm.dominant_index_heatmap(MU, RHO, [0.5], _grid(time), method=method, time=time, **{key: KEYWORDS[key]})


def test_the_refused_combinations_include_the_ones_that_used_to_be_ignored():
    assert ("tau", "reduction", "steps_per_output") in REFUSED  # was ignored by the adaptive reduction
    assert ("tau", "rk4", "rtol") in REFUSED and ("tau", "reduction-fixed", "atol") in REFUSED
    assert ("tau", "rk4", "eta") in REFUSED and ("tau", "gd", "steps_per_output") in REFUSED
    assert ("iterations", "sam", "steps_per_output") in REFUSED and ("iterations", "gd", "normalization") in REFUSED
    assert len(REFUSED) == 6 * len(KEYWORDS) - sum(len(r) for r in hm.APPLIES.values())


@pytest.mark.parametrize("time, method", [("iterations", "rk4"), ("iterations", "reduction"),
                                          ("iterations", "reduction-fixed"), ("tau", "sam"),
                                          ("tau", "numpy"), ("tau", "solve_ivp")])
def test_a_method_of_the_other_time_mode_or_a_bench_contender_is_refused(time, method):
    """``method="rk4"`` with ``time="iterations"`` used to run discrete SAM silently."""
    with pytest.raises(InputError, match="^method: must be one of"):
        hm.dominant_index_heatmap(MU, RHO, [0.5], _grid(time), method=method, time=time)


def test_default_method_follows_the_time_mode_and_defaults_equal_explicit_values():
    tau = hm.dominant_index_heatmap(MU, RHO, [0.5], TAU)
    assert tau.method == "reduction"
    explicit = hm.dominant_index_heatmap(MU, RHO, [0.5], TAU, method="reduction", rtol=hm.DEFAULT_RTOL,
                                         atol=hm.DEFAULT_ATOL, normalization="joint")
    assert np.array_equal(tau.log_S, explicit.log_S)
    it = hm.dominant_index_heatmap(MU, RHO, [0.5], ITERS, time="iterations")
    assert it.method == "sam"
    explicit = hm.dominant_index_heatmap(MU, RHO, [0.5], ITERS, time="iterations", method="sam",
                                         eta=hm.DEFAULT_ETA, normalization="joint")
    assert np.array_equal(it.log_S, explicit.log_S) and np.array_equal(it.tau, explicit.tau)


def test_discrete_gd_is_discrete_sam_with_c_zero():
    """GD over iterations has c = 0: it is the same map and never collapses (negative control: SAM does)."""
    gd = hm.dominant_index_heatmap(MU, RHO, [0.05], ITERS, time="iterations", method="gd", eta=0.1)
    sam = hm.dominant_index_heatmap(MU, RHO, [0.05], ITERS, time="iterations", method="sam", eta=0.1)
    assert gd.c == 0.0 and np.all(gd.status == 1)
    assert sam.status[0] == -1
