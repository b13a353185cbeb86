"""E3 across architectures (biasaudit.claims.eos.torch.measures): the statistics, the claims on synthetic sweeps
(each side of each decision), and the positive controls on the real theory model."""

from __future__ import annotations

import math

import numpy as np
import pytest

import biasaudit.claims.eos.torch.measures as e3
from biasaudit.ledger import Verdict, run_claim
from biasaudit.validation import eos_stats

MULTS = (0.75, 0.93, 0.97, 1.03, 1.07, 1.25, 2.0)


def e3_sweep(l1_rate=0.05, measure_rate=0.6, l1_curve=0.0, s_gf=8.0, mults=MULTS, tilt=0.0):
    """Final S on the plateau then 2/η; on the EoS side (m = η/η_c ≥ 1) ‖θ‖₁ = 10(1 + l1_rate (m - 1) +
    l1_curve (m - 1)²) and both sharpness measures fall as exp(−measure_rate (m − 1)); ``tilt``: a drift with η on
    both sides (a pipeline bias), ‖θ‖₁ times exp(tilt·m) and the measures times exp(−tilt·m)."""
    eta_c = 2 / s_gf
    runs = []
    for m in mults:
        eos = max(0.0, m - 1)
        S = s_gf if m < 1 else 2 / (m * eta_c)
        measure = 0.3 * math.exp(-measure_rate * eos - tilt * m)
        runs.append({"eta": m * eta_c, "multiple": m, "outcome": "converged", "steps": 100,
                     "final": {"S": {"value": S, "converged": True}, "l1": 10 * (1 + l1_rate * eos + l1_curve * eos**2) * math.exp(tilt * m),
                               "avg_sharpness": {"value": measure}, "adaptive_sharpness": {"value": measure}}})
    gf = {"s_gf": s_gf, "eta_c": eta_c, "eps": 2e-2, "reached_eps": True, "all_converged": True, "path": [],
          "steps": 100}
    return {"config": {}, "gf": gf, "runs": runs, "dir": ""}


# ----------------------------------------------------------------------------- the statistics

def test_the_rates_read_what_the_sweep_was_built_with():
    sw = e3_sweep(l1_rate=0.0, measure_rate=0.6)
    assert abs(eos_stats.avg_sharpness_fall_rate(sw, 0.25) - 0.6) < 1e-12
    assert abs(eos_stats.adaptive_sharpness_fall_rate(sw, 0.25) - 0.6) < 1e-12
    assert abs(eos_stats.l1_growth_rate(sw, 0.25)) < 1e-12
    grown = e3_sweep(l1_rate=0.02)
    assert 0.018 < eos_stats.l1_growth_rate(grown, 0.25) < 0.02  # ln(1 + 0.02 (m-1)) ~ 0.02 (m-1) for small rates


def test_the_curvature_share_is_zero_for_a_line_and_sees_growth_that_speeds_up_or_slows_down():
    assert abs(eos_stats.l1_curvature_share(e3_sweep(l1_rate=0.05), 0.25)) < 1e-9
    bent = [eos_stats.l1_curvature_share(e3_sweep(l1_rate=0.05, l1_curve=c), 0.25) for c in (0.01, 0.05, 0.3)]
    assert 0 < bent[0] < bent[1] < bent[2] and bent[1] > 0.25 > bent[0]  # power: (m-1)^2 at 5 % of the rate
    assert eos_stats.l1_curvature_share(e3_sweep(l1_rate=0.2, l1_curve=-0.08), 0.25) < -0.25  # slowing down
    assert math.isnan(eos_stats.l1_curvature_share(e3_sweep(l1_rate=0.0), 0.25))  # a constant norm: no rise


def test_the_flow_side_reads_the_same_rate_below_eta_c_and_the_contrast_removes_a_drift_on_both_sides():
    drift = e3_sweep(l1_rate=0.0, measure_rate=0.0, tilt=0.05)  # a bias: every reading moves with eta, no EoS effect
    for f in (eos_stats.l1_growth_rate, eos_stats.avg_sharpness_fall_rate):
        assert f(drift, 0.25) == pytest.approx(0.05) == f(drift, 0.25, side="flow")  # the EoS side alone sees it
        assert abs(eos_stats.side_contrast(f, drift, 0.25)) < 1e-12
    real = e3_sweep(l1_rate=0.0, measure_rate=0.6, tilt=0.05)
    assert eos_stats.side_contrast(eos_stats.avg_sharpness_fall_rate, real, 0.25) == pytest.approx(0.6)
    assert math.isnan(eos_stats.l1_growth_rate(e3_sweep(mults=(0.75, 1.07, 1.25, 2.0)), 0.25, side="flow"))
    from biasaudit.plumbing import InputError

    for read in (eos_stats.l1_growth_rate, eos_stats.eos_norm_time_growth):
        with pytest.raises(InputError, match="side"):
            read(real, 0.25, side="below")


def test_the_statistics_are_undecided_with_two_eos_runs_and_without_eta_c():
    short = e3_sweep(mults=(0.75, 0.93, 1.25, 2.0))
    for f in (eos_stats.l1_growth_rate, eos_stats.l1_curvature_share, eos_stats.avg_sharpness_fall_rate):
        assert math.isnan(f(short, 0.25)) and math.isnan(f(e3_sweep(), math.nan))


# ----------------------------------------------------------------------------- the claims


def _cycle(seq, n):
    """The first n of ``seq`` repeated (a box's per-seed list for a study that asks for more seeds), or None."""
    return [seq[i % len(seq)] for i in range(n)] if seq else None


@pytest.fixture
def fake_sweeps(monkeypatch):
    """Every seed's sweep from ``box`` (arch -> per-seed sweeps; default: ideal sweeps whose seeds differ a little),
    the numba references equal to the torch readings of the theory model (its positive controls read 0)."""
    from biasaudit.claims.eos.torch import _study

    box = {}

    def sweeps(arch, loss, tier, eps=None, seed_offset=0, n_seeds=None):
        n = n_seeds or len(_study._configs(arch, loss, tier))
        return _cycle(box.get(arch), n) or [e3_sweep(l1_rate=0.05 + 0.0005 * i, measure_rate=0.6 + 0.005 * i) for i in range(n)]

    monkeypatch.setattr(_study, "seed_sweeps", sweeps)
    monkeypatch.setattr(_study, "numerics_sweep", lambda sweep, config: box.get("reference", sweep))
    _study.study.cache_clear()
    yield box
    _study.study.cache_clear()


def _claim(cid):
    return next(c for c in e3.CLAIMS if c.id == cid)


def test_four_statistics_on_every_architecture_and_both_losses_with_their_positive_controls():
    ids = {c.id for c in e3.CLAIMS}
    for family in e3.FAMILIES:
        assert f"{family.prefix}.diag" in ids
        for arch in e3.E3_ARCHITECTURES:
            assert {f"{family.prefix}.{arch}", f"{family.prefix}.{arch}.ce"} <= ids
    rise = _claim("eos.torch.e3.adaptive_sharpness_rises.fcn.ce")
    assert rise.contract.positive_control == "eos.torch.e3.adaptive_sharpness.diag"
    assert rise.contract.statistic == _claim("eos.torch.e3.adaptive_sharpness.diag").contract.statistic


@pytest.mark.parametrize("claim", [c for c in e3.CLAIMS if "resnet_nobn" not in c.id], ids=lambda c: c.id)
def test_every_claim_decides_ideal_sweeps_with_its_contract_fields(fake_sweeps, claim):
    from biasaudit.contract import REQUIRED_FIELDS

    ev = run_claim(claim)
    expected = Verdict.REFUTED if "rises" in claim.id else Verdict.CONFIRMED  # ideal sweeps' measures fall
    assert ev.verdict is expected, ev.detail
    assert set(REQUIRED_FIELDS) <= set(ev.observed) and ev.observed["n_seeds"] >= 3


def test_a_flat_norm_does_not_rise_and_a_curved_one_is_not_linear(fake_sweeps):
    fake_sweeps["cnn"] = [e3_sweep(l1_rate=0.0005 * i) for i in range(3)]
    assert run_claim(_claim("eos.torch.e3.norm.cnn")).verdict is Verdict.REFUTED
    fake_sweeps["vit"] = [e3_sweep(l1_rate=0.05, l1_curve=0.3 + 0.001 * i) for i in range(3)]
    assert run_claim(_claim("eos.torch.e3.norm.vit")).verdict is Verdict.CONFIRMED
    assert run_claim(_claim("eos.torch.e3.linear.vit")).verdict is Verdict.REFUTED


def test_a_drift_with_eta_on_both_sides_of_eta_c_is_no_eos_effect(fake_sweeps):
    fake_sweeps["cnn"] = [e3_sweep(l1_rate=0.0, measure_rate=0.0, tilt=0.05 + 0.001 * i) for i in range(3)]
    for prefix in ("eos.torch.e3.norm", "eos.torch.e3.avg_sharpness", "eos.torch.e3.adaptive_sharpness"):
        ev = run_claim(_claim(f"{prefix}.cnn"))
        assert ev.verdict is Verdict.REFUTED, ev.detail  # the EoS side alone would read 0.05-0.052 > delta
        arm = ev.observed["null_arm"]
        assert arm["values"] == pytest.approx([0.05, 0.051, 0.052]) and "flow side" in ev.detail
    fake_sweeps["vit"] = [e3_sweep(l1_rate=0.05, measure_rate=0.6, tilt=-0.1 + 0.001 * i) for i in range(3)]
    assert run_claim(_claim("eos.torch.e3.avg_sharpness.vit")).verdict is Verdict.CONFIRMED  # against a drift


def test_a_rising_adaptive_sharpness_refutes_the_fall_and_confirms_the_rise(fake_sweeps):
    fake_sweeps["fcn"] = [e3_sweep(measure_rate=-0.3 - 0.01 * i) for i in range(3)]
    assert run_claim(_claim("eos.torch.e3.adaptive_sharpness.fcn.ce")).verdict is Verdict.REFUTED
    assert run_claim(_claim("eos.torch.e3.adaptive_sharpness_rises.fcn.ce")).verdict is Verdict.CONFIRMED


def test_a_positive_control_that_misses_the_numerics_leaves_the_claims_undecided(fake_sweeps):
    fake_sweeps["reference"] = e3_sweep(l1_rate=0.2)  # the numba kernel's norm grows 4x faster than torch reads it
    assert run_claim(_claim("eos.torch.e3.norm.diag")).verdict is Verdict.REFUTED
    ev = run_claim(_claim("eos.torch.e3.norm.fcn"))
    assert ev.verdict is Verdict.UNDECIDED and "positive control" in ev.detail


# ----------------------------------------------------------------------------- the real positive controls

@pytest.fixture
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("family", e3.FAMILIES, ids=lambda f: f.prefix)
def test_the_torch_theory_model_recovers_the_numerics_statistics(_private_cache, family):
    """The positive controls on the real theory model (8 seeds, ~3 s each the first time): the torch statistic
    minus the numba kernel's is equivalent to 0 within delta; moved by twice delta, the same values are refuted."""
    from biasaudit.claims.eos.torch._study import study
    from biasaudit.validation.decision import equivalence_decision

    res = study.__wrapped__(family, "toy", "mse", "quick")
    assert res["decision"].verdict == "confirmed", (family.prefix, res["values"])
    assert np.all(np.isfinite(res["readings"]))
    moved = [v + 2 * family.delta for v in res["values"]]
    assert equivalence_decision(moved, delta=family.delta).verdict == "refuted"


# ----------------------------------------------------------------------------- E4 in time

import biasaudit.claims.eos.torch.dynamics as e4  # noqa: E402


def e4_sweep(level=1.04, growth=0.15, s_gf=8.0, swing=0.01, noise=0.0, seed=0, flow_growth=0.0, flow_steps=400,
             flow_pace=4.0):
    """An E3 sweep whose run at 2 eta_c is tracked in bursts of 4 steps every 25: S_t climbs to ``level``·2/eta by
    step 100 and stays there, +-``swing`` alternating from step to step (period 2), plus i.i.d. ``noise`` (relative
    sd), while the per-step l1 norm swings by +-0.5 (period 2) about a trend that grows by ``growth`` over its last
    three quarters and the loss falls as exp(-k/100) (exp(-1) at the edge, step 100). Every flow-side run fits at
    its own pace (``flow_steps`` steps, its loss exp(-p k/flow_steps), p = ``flow_pace``); its per-step l1 norm
    grows by ``flow_growth`` from the step at which its loss is exp(-1), k = flow_steps/p, to its end."""
    sw = e3_sweep(s_gf=s_gf)
    u = flow_pace * np.arange(flow_steps + 1) / flow_steps
    for flow in (r for r in sw["runs"] if r["multiple"] < 1):
        flow.update(steps=flow_steps, loss=np.exp(-u).tolist(),
                    l1=(10 * (1 + flow_growth * np.clip((u - 1) / (flow_pace - 1), 0, 1))).tolist())
    run = next(r for r in sw["runs"] if r["multiple"] == 2.0)
    eta, steps = run["eta"], 400
    rng = np.random.default_rng(seed)
    measured = [k + j for k in range(0, steps, 25) for j in range(4)]
    S = [(2 / eta) * (min(1.0, 0.5 + k / 200) * level + swing * (-1) ** k + noise * rng.standard_normal())
         for k in measured]
    trend = 10 * (1 + growth * np.clip((np.arange(steps + 1) - 100) / 300, 0, 1))
    run.update(tracked=True, steps=steps, l1=(trend + 0.5 * (-1.0) ** np.arange(steps + 1)).tolist(),
               loss=np.exp(-np.arange(steps + 1) / 100).tolist(),
               sharpness_path=[{"step": k, "S": s, "converged": True} for k, s in zip(measured, S)])
    return sw


def test_the_time_statistics_read_the_tracked_run():
    sw = e4_sweep()
    assert abs(eos_stats.eos_time_gap(sw, 0.25) - 0.04) < 0.011
    assert abs(eos_stats.eos_norm_time_growth(sw, 0.25) - 0.15) < 0.01  # the period-2 swing averaged away
    # the flow side's run nearest eta_c, from the step at which its loss is the tracked run's at the edge on,
    # whatever its own pace (a match on the share of steps would start at step 400 of 1600 where the loss is
    # exp(-1) at step 200, and miss a seventh of the growth)
    for flow_steps, pace in ((400, 4.0), (1600, 8.0), (200, 2.0)):
        flow_side = eos_stats.eos_norm_time_growth(e4_sweep(flow_growth=0.1, flow_steps=flow_steps, flow_pace=pace),
                                                   0.25, side="flow")
        assert abs(flow_side - 0.1) < 0.003, (flow_steps, flow_side)
    assert math.isnan(eos_stats.eos_norm_time_growth(e3_sweep(), 0.25, side="flow"))  # no tracked run
    catapult = e4_sweep(flow_growth=0.1)
    next(r for r in catapult["runs"] if r.get("tracked"))["loss"][100] = 2.0  # above every flow run's initial loss
    assert math.isnan(eos_stats.eos_norm_time_growth(catapult, 0.25, side="flow"))
    bare = e4_sweep(flow_growth=0.1)
    nearest = max((r for r in bare["runs"] if r["multiple"] < 0.95), key=lambda r: r["eta"])
    del nearest["loss"]  # the nearest flow-side run has no per-step loss: no farther run is read in its place
    assert math.isnan(eos_stats.eos_norm_time_growth(bare, 0.25, side="flow"))
    assert math.isnan(eos_stats.eos_time_gap(e3_sweep(), 0.25))  # no tracked run


@pytest.fixture
def fake_e4(monkeypatch):
    from biasaudit.claims.eos.torch import _study

    box = {}

    def sweeps(arch, loss, tier, eps=None, seed_offset=0, n_seeds=None):
        n = n_seeds or len(_study._configs(arch, loss, tier))
        return _cycle(box.get(arch), n) or [e4_sweep(level=1.02 + 0.002 * i, growth=0.15 + 0.001 * i, swing=0.06)
                                 for i in range(n)]

    monkeypatch.setattr(_study, "seed_sweeps", sweeps)
    monkeypatch.setattr(_study, "numerics_sweep", lambda sweep, config: sweep)
    _study.study.cache_clear()
    yield box
    _study.study.cache_clear()


@pytest.mark.parametrize("claim", e4.CLAIMS, ids=lambda c: c.id)
def test_every_e4_claim_confirms_ideal_runs(fake_e4, claim):
    ev = run_claim(claim)
    assert ev.verdict is Verdict.CONFIRMED, ev.detail
    assert ev.observed["n_seeds"] >= 3


def test_sharpness_away_from_the_edge_and_a_flat_norm_are_refuted(fake_e4):
    fake_e4["fcn"] = [e4_sweep(level=1.3 + 0.002 * i) for i in range(3)]
    assert run_claim(next(c for c in e4.CLAIMS if c.id == "eos.torch.e4.tracking.fcn")).verdict is Verdict.REFUTED
    fake_e4["fcn_relu"] = [e4_sweep(growth=0.001 * i) for i in range(3)]
    assert run_claim(next(c for c in e4.CLAIMS if c.id == "eos.torch.e4.norm.fcn_relu")).verdict is Verdict.REFUTED
    # the same growth late in training on the flow side: not the edge of stability's (the null arm can fail)
    from biasaudit.claims.eos.torch import _study

    fake_e4["fcn_relu"] = [e4_sweep(flow_growth=0.15 + 0.001 * i) for i in range(3)]
    _study.study.cache_clear()
    ev = run_claim(next(c for c in e4.CLAIMS if c.id == "eos.torch.e4.norm.fcn_relu"))
    assert ev.verdict is Verdict.REFUTED and ev.observed["null_arm"]["values"][0] > 0.14, ev.detail
    # a plateau a few percent above 2/eta (+-1 %) never crosses it: no oscillation around 2/eta
    assert run_claim(next(c for c in e4.CLAIMS if c.id == "eos.torch.e4.crosses.fcn_relu")).verdict is Verdict.REFUTED
    assert eos_stats.eos_side_balance(e4_sweep(), 0.25) == 0.0
    assert eos_stats.eos_side_balance(e4_sweep(level=1.0, swing=0.05), 0.25) > 0.4


def test_a_noisy_or_monotone_path_does_not_alternate(fake_e4):
    """The period-2 claim sees a step-to-step zigzag; noise about 2/eta (which crosses it often) and a monotone
    path do not read as one."""
    from biasaudit.claims.eos.torch import _study

    claim = next(c for c in e4.CLAIMS if c.id == "eos.torch.e4.period2.fcn")
    fake_e4["fcn"] = [e4_sweep(level=1.0, swing=0.0, noise=0.03, seed=i) for i in range(3)]
    noisy = run_claim(claim)
    assert noisy.verdict is not Verdict.CONFIRMED, noisy.detail
    assert all(abs(v - eos_stats.ZIGZAG_NOISE_SHARE) < 0.25 for v in noisy.observed["statistic"]["values"])
    assert eos_stats.eos_side_balance(fake_e4["fcn"][0], 0.25) > 0.3  # ...though it spends time on both sides
    fake_e4["fcn"] = [e4_sweep(level=1.0 + 0.01 * i, swing=0.0) for i in range(3)]  # a climb, then flat: no zigzag
    _study.study.cache_clear()
    assert run_claim(claim).verdict is Verdict.REFUTED
    assert eos_stats.eos_period2_share(e4_sweep(swing=0.01), 0.25) == 1.0
    every_step = e4_sweep(swing=0.01)
    tracked = next(r for r in every_step["runs"] if r.get("tracked"))
    eta = tracked["eta"]
    tracked["sharpness_path"] = [{"step": k, "S": (2 / eta) * (1.02 + 0.01 * (-1) ** k), "converged": True}
                                 for k in range(40)]  # measured at every step: cut into 10 blocks of 4
    assert eos_stats.eos_period2_share(every_step, 0.25) == 1.0


@pytest.mark.parametrize("family", e4.FAMILIES, ids=lambda f: f.prefix)
def test_the_torch_theory_model_recovers_the_numerics_path_in_time(_private_cache, family):
    """The theory model's run at 1.4 eta_c in torch and in the numba kernel: the same statistic to within delta."""
    from biasaudit.claims.eos.torch._study import study

    res = study.__wrapped__(family, "toy", "mse", "quick")
    assert res["decision"].verdict == "confirmed", (family.prefix, res["values"])
    assert np.all(np.isfinite(res["readings"]))
