"""The EoS sweep: verdict numbers on synthetic sweeps, the claims, resumable storage, figures and the CLI."""

import json

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from biasaudit.cli import main
from biasaudit.ledger import Verdict, run_claim
from biasaudit.figures import eos_torch
from biasaudit.validation import eos_config, eos_runs, eos_stats
import biasaudit.claims.eos.torch.sweeps as vc

MULTS = (0.5, 0.75, 0.93, 0.97, 1.03, 1.07, 1.25, 2.0, 3.5)


@pytest.fixture(autouse=True)
def _no_flush_denormal():
    """run_sweep calls setup_torch (flush denormals); hypothesis' float strategies refuse to run after it."""
    yield
    torch.set_flush_denormal(False)


def ideal_sweep(s_gf=8.0, mults=MULTS, gap=0.02, drift=0.002, errors=None, n_test=1000, l1_slope=0.1):
    """A sweep that behaves exactly as E1-E4 say: plateau s_GF(1 - drift*m), then (2/eta)(1 + gap)."""
    eta_c = 2 / s_gf
    errors = errors if errors is not None else [0.17] * len(mults)
    runs = []
    for m, e in zip(mults, errors):
        eta = m * eta_c
        S = min(s_gf * (1 - drift * m), 2 / eta * (1 + gap))
        l1 = 100 * (1 + l1_slope * max(0.0, m - 1))
        run = {"eta": eta, "multiple": m, "outcome": "converged", "steps": 500, "tracked": m == 2.0,
               "final": {"S": {"value": S, "converged": True}, "l1": l1, "l2": l1 / 10, "nuclear_sum": l1 / 5,
                         "avg_sharpness": {"value": 1e-3 * S}, "adaptive_sharpness": {"value": 0.1 * S},
                         "test_error": e, "n_test": n_test},
               "sharpness_path": [], "l1": [l1]}
        if m == 2.0:
            k = np.arange(0, 500, 5)
            St = np.where(k < 100, s_gf * (0.5 + 0.005 * k), 2 / eta * (1 + 0.03 * (-1.0) ** (k // 5)))
            run["sharpness_path"] = [{"step": int(a), "S": float(b), "converged": True} for a, b in zip(k, St)]
            steps = np.arange(501)
            run["l1"] = list(100 + 0.01 * steps + 0.5 * (-1.0) ** steps)
        runs.append(run)
    gf = {"s_gf": s_gf, "eta_c": eta_c, "eps": 1e-2, "reached_eps": True, "all_converged": True, "path": [],
          "steps": 1000, "sensitivity": {}, "method": "gd", "fraction": 0.5, "seconds": 0.0}
    return {"config": {}, "gf": gf, "runs": runs, "dir": ""}


# ----------------------------------------------------------------------------- (1) symbolic

def test_e1_phase_transition_symbolic_prediction_is_continuous_at_eta_c():
    eta, s = vc.eta, vc.s_gf
    eta_c = vc.ETA_C_EXPR
    assert sp.simplify((2 / eta).subs(eta, eta_c) - s) == 0  # the two branches meet at eta_c
    assert sp.simplify(vc.S_PRED_EXPR.subs(eta, eta_c)) == s
    assert sp.simplify(vc.S_PRED_EXPR.subs(eta, eta_c / 2)) == s  # flow side: the plateau
    assert sp.simplify(vc.S_PRED_EXPR.subs(eta, 2 * eta_c)) == s / 2  # EoS side: 2/eta
    assert sp.solve(sp.Eq(s, 2 / eta), eta) == [eta_c]


def test_e3_measures_symbolic_sharpness_falls_above_eta_c():
    eos_branch = 2 / vc.eta
    assert sp.simplify(sp.diff(eos_branch, vc.eta) + 2 / vc.eta**2) == 0
    assert sp.diff(eos_branch, vc.eta).is_negative


def test_e2_kink_eta_c_lambdified_matches_spec_toy_reference():
    assert vc.eta_c_of(7.727) == pytest.approx(0.2588, abs=5e-5)  # s_GF = 7.727 gives 2/s_GF = 0.2588


# ----------------------------------------------------------------------------- (2) numbers on known sweeps

def test_e1_phase_transition_ideal_sweep_numbers():
    res = eos_stats.e1_phase_transition(ideal_sweep(), 0.25)
    assert res["decided"] and res["n_flow"] == 3 and res["n_eos"] == 4  # runs within ±5 % of eta_c: neither
    assert res["error"] == pytest.approx(0.02, abs=1e-12)  # the EoS gap built into the sweep
    assert max(res["flow_dev"]) == pytest.approx(0.002 * 0.93, rel=1e-9)


def test_e2_kink_ideal_sweep_recovers_the_breakpoint():
    res = eos_stats.e2_kink(ideal_sweep(gap=0.0, drift=0.0), 0.25)
    assert res["error"] < 1e-12 and res["bracket"] == pytest.approx((0.97 * 0.25, 1.03 * 0.25))


def test_e4_dynamics_ideal_run():
    res = eos_stats.e4_dynamics(ideal_sweep())
    assert res["decided"] and res["median_dev"] == pytest.approx(0.03, rel=1e-9)
    assert res["l1_growth_avg2"] > 0 and res["frac_above"] > 0 and res["frac_below"] > 0


def test_e4_dynamics_undecided_when_max_steps_cut_the_run_short():
    sweep = ideal_sweep()
    run = next(r for r in sweep["runs"] if r["tracked"])
    run["outcome"] = "oscillating"
    for p in run["sharpness_path"]:
        p["S"] = 0.3 * 2 / run["eta"] * (1 + 1e-3 * p["step"])  # never reaches 2/eta
    assert eos_stats.e4_dynamics(sweep)["decided"] is False
    run["outcome"] = "converged"
    assert eos_stats.e4_dynamics(sweep)["error"] == 1.0


def _seed_sweeps(slopes, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    sweeps = []
    for slope in slopes:
        sw = ideal_sweep(mults=(0.5, 1.1, 1.5, 2.0, 2.5, 3.0), l1_slope=slope)
        for r in sw["runs"]:
            for k in ("l1", "l2", "nuclear_sum"):
                r["final"][k] *= 1 + noise * rng.standard_normal()
        sweeps.append(sw)
    return sweeps, [sw["gf"]["eta_c"] for sw in sweeps]


def test_wilson_interval_contains_the_estimate_and_shrinks():
    lo, hi = eos_stats.wilson_interval(170, 1000)
    assert lo < 0.17 < hi and hi - lo < eos_stats.wilson_interval(17, 100)[1] - eos_stats.wilson_interval(17, 100)[0]


# ----------------------------------------------------------------------------- (3) property tests

@settings(max_examples=25)
@given(s10=st.integers(10, 2000), gap_pm=st.integers(0, 40), drift_pm=st.integers(0, 20))
def test_e1_phase_transition_property_ideal_sweeps_pass_and_shifted_eta_c_fails(s10, gap_pm, drift_pm):
    s_gf, gap, drift = s10 / 10, gap_pm / 1000, drift_pm / 1000
    sweep = ideal_sweep(s_gf, gap=gap, drift=drift)
    eta_c = 2 / s_gf
    assert eos_stats.e1_phase_transition(sweep, eta_c)["error"] <= vc.TRACKING.value
    assert eos_stats.e1_phase_transition(sweep, 1.3 * eta_c)["error"] > vc.TRACKING.value
    kink = eos_stats.e2_kink(sweep, eta_c)
    assert kink["error"] <= vc.KINK.value
    assert eos_stats.e2_kink(sweep, 1.3 * eta_c)["error"] > vc.KINK.value


@settings(max_examples=15)
@given(slope_pm=st.integers(1, 500), seed=st.integers(0, 1000))
def test_e3_measures_property_monotone_measures_pass_and_flipped_fail(slope_pm, seed):
    sweep = ideal_sweep(l1_slope=slope_pm / 1000)
    dirs = {k: d for k, (_, d) in eos_stats.MEASURES.items()}
    assert eos_stats.e3_measures(sweep, 0.25, dirs)["error"] == 0
    assert eos_stats.e3_measures(sweep, 0.25, {k: -d for k, d in dirs.items()})["error"] == 1


# ----------------------------------------------------------------------------- (4) negative controls + claims

def test_the_tracking_statistic_sees_sharpness_that_does_not_follow_2_over_eta():
    assert eos_stats.eos_median_gap(ideal_sweep(), 0.25) < vc.TRACKING.value
    assert eos_stats.eos_median_gap(ideal_sweep(gap=0.3), 0.25) > vc.TRACKING.value


def test_sharpness_vs_dense_claim_confirmed():
    claim = next(c for c in vc.CLAIMS if c.id == "eos.torch.sharpness_vs_dense")
    ev = run_claim(claim)
    assert ev.verdict is Verdict.CONFIRMED, ev.detail
    assert ev.error <= claim.tolerance.value and ev.negative_control["all_failed"]


def test_claims_are_experiments_with_one_sample():
    ids = {c.id for c in vc.CLAIMS}
    assert {"eos.torch.sharpness_vs_dense"} == ids
    assert all(c.kind == "experiment" and c.samples == {"ci": 1, "thorough": 1} for c in vc.CLAIMS)


# ----------------------------------------------------------------------------- storage, figures, CLI

TINY = eos_config.SweepConfig(dataset="teacher", n_train=40, n_test=40, width=6, eps=0.05, coarse=(0.5, 2.0), fine=(),
                      gf_every=20, track_multiple=2.0, track_every=5, max_steps=400, dtype="float64",
                      hvp_method="double-backward")


def test_sweep_runs_are_stored_atomically_and_resumed(tmp_path, monkeypatch):
    sweep = eos_runs.run_sweep(TINY, tmp_path, threads=1)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert "gf.json" in files and "config.json" in files and sum(f.startswith("run_eta_") for f in files) == 2
    assert not any(f.endswith(".tmp") for f in files) and ".gf.json.lock" in files
    assert [r["tracked"] for r in sweep["runs"]] == [False, True]
    assert sweep["runs"][1]["sharpness_path"]
    import biasaudit.validation.gd_trainer as gt

    eos_runs._MEMO.clear()
    calls = []
    real = gt.train_gd
    monkeypatch.setattr(gt, "train_gd", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    again = eos_runs.run_sweep(TINY, tmp_path, threads=1)
    assert calls == [] and [r["eta"] for r in again["runs"]] == [r["eta"] for r in sweep["runs"]]
    eos_runs._MEMO.clear()
    (tmp_path / f"run_eta_{sweep['runs'][0]['eta']:.8e}.json").unlink()
    eos_runs.run_sweep(TINY, tmp_path, threads=1)
    assert calls == [sweep["runs"][0]["eta"]]  # only the missing run is recomputed


def test_a_source_edit_recomputes_the_sweep_and_the_counts_say_so(tmp_path, monkeypatch):
    """The cache key hashes the run's code (RUN_CODE): no hand-bumped version decides staleness."""
    from biasaudit.plumbing import runcache

    src = tmp_path / "src"
    src.mkdir()
    (src / "biasaudit_probe_code.py").write_text("STEP = 1\n")
    monkeypatch.syspath_prepend(str(src))
    monkeypatch.setattr(eos_config, "RUN_CODE", eos_config.RUN_CODE + ("biasaudit_probe_code",))
    runcache.clear_fingerprints()
    out = tmp_path / "sweep"
    counts = []
    for edit in (None, None, "STEP = 2\n"):
        if edit:
            (src / "biasaudit_probe_code.py").write_text(edit)
            runcache.clear_fingerprints()
        eos_runs._MEMO.clear()
        runcache.reset_run_counts()
        eos_runs.run_sweep(TINY, out, threads=1)
        counts.append(runcache.run_counts())
    # gf + 2 runs: computed, then all reused (the gf is read once per run too), then recomputed after the edit
    assert counts[0]["computed"] == 3 and counts[1]["computed"] == 0 and counts[1]["reused"] >= 3
    assert counts[2]["computed"] == 3
    runcache.clear_fingerprints()


def test_make_figures_writes_four_pngs(tmp_path):
    paths = eos_torch.make_sweep_figures(tmp_path / "fig", sweep=ideal_sweep())
    assert len(paths) == 4
    for p in paths:
        with open(p, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_cli_validate_eos_runs_and_writes_summary(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["validate", "eos", "--dataset", "teacher", "--n-train", "40", "--n-test", "40", "--eta-grid",
                 "0.5,2", "--eps", "0.1", "--max-steps", "300", "--device", "cpu", "--out", str(out), "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["eta_c"] > 0 and len(summary["runs"]) == 2 and set(summary["checks"]) == {"E1", "E2", "E3",
                                                                                             "E4", "E5"}
    assert (out / "summary.json").exists() and len(list((out / "figures").glob("*.png"))) == 4


def test_cli_validate_eos_seed_study_reads_each_seed_and_decides_over_seeds(tmp_path, capsys):
    out = tmp_path / "study"
    code = main(["validate", "eos", "--dataset", "teacher", "--n-train", "40", "--n-test", "40", "--eta-grid",
                 "0.5,0.93,1.07,2", "--eps", "0.1", "--max-steps", "300", "--device", "cpu", "--seeds", "3",
                 "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert [line.split(":")[0] for line in text.splitlines()[:3]] == ["seed 0", "seed 1", "seed 2"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seeds"] == [0, 1, 2] and len({row["eta_c"] for row in summary["per_seed"]}) == 3  # own inits
    assert set(summary["statistics"]) == {"kink_offset", "eos_median_gap", "flow_plateau_dev"}
    for stat in summary["statistics"].values():
        assert len(stat["values"]) == 3 and stat["decision"]["verdict"] in ("confirmed", "refuted", "undecided")
    assert all((out / f"seed{i}").is_dir() for i in range(3))


@pytest.mark.parametrize("argv,param", [
    (["--seeds", "2"], "seeds"), (["--seeds", "0"], "seeds"),
    (["--eps", "0"], "eps"), (["--eta-grid", "0.5,-1"], "eta"), (["--eta-grid", ""], "eta_grid"),
    (["--eta-grid", "2,1"], "eta_grid"),
    (["--arch", "mlp"], "arch"), (["--loss", "hinge"], "loss"), (["--dataset", "imagenet"], "dataset"),
    (["--absolute"], "absolute"), (["--gf-method", "rk45"], "gf_method"),
])
def test_cli_validate_eos_bad_input_exits_2(argv, param, capsys):
    assert main(["validate", "eos", *argv]) == 2
    assert f"error: {param}:" in capsys.readouterr().err


def test_cli_validate_eos_missing_cuda_exits_2(capsys):
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert main(["validate", "eos", "--device", "cuda"]) == 2
    assert "device" in capsys.readouterr().err


def test_validate_eos_checks_out_before_training(tmp_path, capsys, monkeypatch):
    from biasaudit.cli import main

    monkeypatch.setattr(eos_runs, "run_sweep", lambda *a, **k: pytest.fail("trained before checking --out"))
    existing = tmp_path / "a-file"
    existing.write_text("x")
    assert main(["validate", "eos", "--out", str(existing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("biasaudit: error: out: must be a directory") and "Traceback" not in err


_SWEEP_MODULE_PROBE = r"""
import dataclasses, json, sys
from biasaudit.plumbing import runcache
runcache.code_fingerprint = lambda code: "probe"  # hashing RUN_CODE would import it: the probe must not
from biasaudit.validation import eos_runs
from biasaudit.validation.eos_config import TOY_SWEEP, arch_config
tiny = dict(n_train=8, n_test=8, coarse=(1.25,), fine=(), max_steps=3, gf_every=2, track_every=1,
            track_multiple=1.25)
configs = [dataclasses.replace(TOY_SWEEP, coarse=(0.75, 1.25), fine=(), max_steps=200)]
configs += [dataclasses.replace(arch_config("quick", a, loss), **tiny)
            for a, loss in (("fcn", "ce"), ("cnn", "mse"), ("resnet", "mse"), ("vit", "mse"))]
for config in configs:
    eos_runs.run_sweep(config, sys.argv[1], threads=1)
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("biasaudit.validation.", "biasaudit.numerics.",
                                                                  "biasaudit.theory.")))))
"""


def test_run_code_lists_every_module_a_sweep_executes(tmp_path):
    """A sweep's cache key hashes RUN_CODE only: a module a sweep runs that is missing there would leave stale runs
    in the cache after an edit. Small sweeps of the theory model and of every network builder (the FCN with
    cross-entropy, the tracked run included), in a fresh interpreter, load nothing else from validation/,
    numerics/ or theory/ (about 25 s)."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _SWEEP_MODULE_PROBE, str(tmp_path)], capture_output=True, text=True,
                         check=True, timeout=300)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    loads_but_computes_nothing = {
        "biasaudit.numerics.cache_guard",  # numerics' package import: numba's disk cache
        "biasaudit.validation.eos_config",  # the configuration tables: a config enters its key field by field
    }
    assert loaded - set(eos_config.RUN_CODE) - loads_but_computes_nothing == set()
