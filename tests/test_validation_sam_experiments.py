"""sam.torch.* experiment claims: accuracy matching, seed-level statistics, verdict rule, runs, CLI errors."""

import json
import math

import numpy as np
import pytest

from biasaudit.claims.sam.torch import _common as torch_common
from biasaudit.claims.sam.torch import CLAIMS as SAM_TORCH_CLAIMS
from biasaudit.claims.sam.torch import diag_net
from biasaudit.cli import main
from biasaudit.ledger import Verdict, run_claim
from biasaudit.figures import sam_torch as sam_figures
from biasaudit.validation import sam_experiments, sam_multipoint, sam_runs, sam_stats, sam_training


@pytest.fixture(autouse=True)
def _ieee_subnormals():
    """Flush-to-zero is process-global; a module run earlier may have left it on (hypothesis then refuses)."""
    import torch

    torch.set_flush_denormal(False)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / "cache"))


# ------------------------------------------------------------------------------------------- statistics
def test_minor_mass_metric_at_level_interpolates_the_first_crossing():
    acc = [0.1, 0.5, 0.9, 0.8, 0.95]
    metric = [1.0, 2.0, 4.0, 10.0, 5.0]
    assert sam_stats.metric_at_level(acc, metric, 0.7) == pytest.approx(3.0, abs=1e-15)
    assert sam_stats.metric_at_level(acc, metric, 0.9) == 4.0  # first time, not the later 0.95
    assert sam_stats.metric_at_level(acc, metric, 0.05) == 1.0
    assert math.isnan(sam_stats.metric_at_level(acc, metric, 0.99))


def _run(seed, opt, acc, metric, status="ok", name="cam_low"):
    return {"config": {"seed": seed, "optimizer": opt}, "status": status,
            "curves": {"step": list(range(len(acc))), "acc": list(acc), name: list(metric)}}


def test_minor_mass_matched_difference_removes_the_slow_training_artefact():
    """SAM trains slower; its metric is GD's curve as a function of accuracy shifted by +delta.

    Raw (same step) differences mix in the training lag; matched differences recover exactly delta.
    """
    delta, gd_runs, sam_runs = 0.03, [], []
    for s in range(6):
        gd_acc = np.linspace(0.1, 0.95, 11)
        sam_acc = np.linspace(0.1, 0.7 + 0.02 * s, 11)
        metric_of = lambda a: 0.9 - 0.4 * a  # noqa: E731 - attention drifts to the object as accuracy rises
        gd_runs.append(_run(s, "gd", gd_acc, metric_of(gd_acc)))
        sam_runs.append(_run(s, "sam", sam_acc, metric_of(sam_acc) + delta))
    eff = sam_stats.paired_effect(gd_runs, sam_runs, "cam_low")
    np.testing.assert_allclose(eff["matched"], delta, atol=1e-12)
    assert eff["raw_mean"] > 0.08  # the artefact: at the same step SAM "looks" much more minor-focused
    lo, hi = eff["matched_ci"]
    assert lo <= delta <= hi and hi - lo < 1e-9


def test_minor_mass_paired_effect_excludes_untrained_and_diverged_seeds():
    acc = [0.1, 0.9]
    gd = [_run(0, "gd", acc, [0.5, 0.5]), _run(1, "gd", acc, [0.5, 0.5]), _run(2, "gd", acc, [0.5, 0.5])]
    sam = [_run(0, "sam", acc, [0.5, 0.6]), _run(1, "sam", acc, [0.5, 0.6], status="not trained"),
           _run(2, "sam", acc, [0.5, 0.6], status="diverged")]
    eff = sam_stats.paired_effect(gd, sam, "cam_low")
    assert eff["seeds"] == [0] and set(eff["excluded"]) == {"1", "2"}
    assert sam_stats.verdict_from_interval(eff["matched_ci"], +1, len(eff["seeds"]))[0] == "undecided"


@pytest.mark.parametrize("ci, direction, verdict", [
    ((0.01, 0.05), +1, "confirmed"), ((0.01, 0.05), -1, "refuted"),
    ((-0.05, -0.01), +1, "refuted"), ((-0.02, 0.03), +1, "undecided"), ((-0.02, 0.03), -1, "undecided"),
    ((math.nan, math.nan), +1, "undecided")])
def test_minor_mass_verdict_follows_the_interval(ci, direction, verdict):
    got, error = sam_stats.verdict_from_interval(ci, direction, 5)
    assert got == verdict
    if verdict == "confirmed":
        assert error == 0.0
    if verdict == "refuted":
        assert error > 0.0
    assert sam_stats.verdict_from_interval(ci, direction, 2)[0] == "undecided"  # too few seeds


def test_minor_mass_bootstrap_and_t_intervals_cover_the_mean():
    v = np.random.default_rng(0).normal(0.2, 0.1, size=8)
    for lo, hi in (sam_stats.bootstrap_mean_ci(v), sam_stats.t_mean_ci(v)):
        assert lo < v.mean() < hi
    lo, hi = sam_stats.t_mean_ci([1.0, 2.0, 3.0])
    assert (lo + hi) / 2 == pytest.approx(2.0) and hi - 2.0 == pytest.approx(4.302652729911275 / math.sqrt(3))


# ------------------------------------------------------------------------------- claims and the verdict
def _fake_result(ci, n_seeds=5):
    effect = {"metric": "cam_low", "matched_mean": sum(ci) / 2, "matched_ci": ci, "matched_ci_bootstrap": ci,
              "matched_ci_t": ci, "raw_mean": 0.0, "raw_ci": (-1.0, 1.0), "seeds": list(range(n_seeds)),
              "excluded": {}}
    per = {m: effect for m in ("cam_low", "grad_low", "minor_reliance", "cam_minor_share")}
    lead = {"mean": sum(ci) / 2, "ci": ci, "values": [1.0] * n_seeds, "seeds": list(range(n_seeds)),
            "excluded": {}, "level": 0.9}
    per["lead_sam"] = per["lead_gd"] = lead
    return {"settings": {"init_scales": (1.0,)}, "per_scale": {"1.0": per}}


def test_synthetic_minor_first_patch_lead_counts_steps_and_censors():
    def run(seed, no_major, no_minor, status="ok"):
        return {"config": {"seed": seed, "eval_every": 2}, "status": status,
                "curves": {"step": [0, 2, 4, 6], "acc_no_major": no_major, "acc_no_minor": no_minor}}

    runs = [run(0, [0.5, 0.95, 1, 1], [0.5, 0.5, 0.5, 0.92]),   # minor at 2, major at 6: lead +4
            run(1, [0.5, 0.5, 0.5, 0.5], [0.5, 1, 1, 1]),       # minor never (censored at 8), major at 2: -6
            run(2, [0.5, 1, 1, 1], [0.5, 1, 1, 1], status="diverged")]
    lead = sam_stats.patch_lead(runs)
    assert lead["values"] == [4.0, -6.0] and lead["seeds"] == [0, 1] and lead["excluded"] == {"2": "diverged"}


# ------------------------------------------------------------------------------------------------ runs
TINY = dict(dataset="digits", n_train=96, n_test=32, n_eval=96, n_probe=8, width=2, eval_every=2, lr=0.1,
            batch_size=32)


def test_minor_mass_train_run_records_curves_and_statuses():
    run = sam_training.train_run(sam_training.TrainConfig(optimizer="sam", steps=4, **TINY))
    assert run["curves"]["step"] == [0, 2, 4]
    for key in ("acc", "loss", "cam_low", "grad_low"):
        assert len(run["curves"][key]) == 3
    assert run["status"] in ("ok", "not trained") and len(run["maps"]) == 3
    # 4 steps at a tiny learning rate cannot train a 10-class model: classified, never compared
    assert sam_training.train_run(sam_training.TrainConfig(optimizer="gd", steps=2, **{**TINY, "lr": 1e-6}))["status"] == "not trained"


def test_the_fixed_norm_resnet_trains_under_sam_with_its_statistics_set():
    run = sam_training.train_run(sam_training.TrainConfig(optimizer="sam", steps=2, **{**TINY, "model": "resnet_fixednorm"}))
    assert run["curves"]["step"] == [0, 2] and all(np.isfinite(run["curves"]["loss"]))


def test_keep_maps_sets_how_many_probe_maps_a_record_stores():
    """The curves do not depend on it; the regime designs store maps for their first ``map_seeds`` seeds only
    (their claims read curves; the overlay figure reads those maps)."""
    import pytest

    from biasaudit.plumbing import InputError

    runs = {k: sam_training.train_run(sam_training.TrainConfig(optimizer="sam", steps=4, keep_maps=k, **TINY)) for k in (0, 3)}
    assert [len(m) for m in runs[3]["maps"]] == [3, 3, 3] and len(runs[3]["map_images"]) == 3
    assert runs[0]["maps"] == [[], [], []] and runs[0]["map_images"] == []
    assert runs[0]["curves"] == runs[3]["curves"]
    assert sam_training.TrainConfig(keep_maps=0).key() != sam_training.TrainConfig(keep_maps=3).key()
    for bad in (-1, 9, 1.5, True):
        with pytest.raises(InputError, match="keep_maps: must be an integer in"):
            sam_training.validate_config(sam_training.TrainConfig(keep_maps=bad, **TINY))
    from biasaudit.validation.sam_regimes import DESIGNS, regime_configs

    for design, tiers in DESIGNS.items():  # the collapse designs read outcomes only: no run stores a map
        for tier in tiers:
            assert all(c.keep_maps == 0 and not c.probe for c in regime_configs(design, tier)), (design, tier)


def test_minor_mass_nan_loss_is_classified_diverged():
    run = sam_training.train_run(sam_training.TrainConfig(optimizer="gd", steps=6, **{**TINY, "lr": 1e12, "batch_size": None}))
    assert run["status"] == "diverged"
    assert all(math.isfinite(v) for v in run["curves"]["loss"])


def test_synthetic_minor_first_tiny_run_has_patch_metrics():
    cfg = sam_training.TrainConfig(dataset="synthetic-patches", optimizer="gd", steps=2, n_train=32, n_test=16, n_eval=32,
                         n_probe=4, width=2, eval_every=1, lr=0.05)
    run = sam_training.train_run(cfg)
    for key in ("acc_no_major", "acc_no_minor", "cam_major", "cam_minor", "minor_reliance"):
        assert len(run["curves"][key]) == 3


def test_minor_mass_cached_run_is_reused_and_atomic(monkeypatch, tmp_path):
    cfg = sam_training.TrainConfig(optimizer="gd", steps=2, **TINY)
    first = sam_runs.cached_run(cfg)
    files = list(sam_runs.cache_dir().glob("*.json"))
    assert [f.name for f in files] == [f"{cfg.key()}.json"] and not list(sam_runs.cache_dir().glob("*.tmp"))
    monkeypatch.setattr(sam_runs, "train_run", lambda cfg: pytest.fail("the cached run was recomputed"))
    assert sam_runs.cached_run(cfg) == json.loads(json.dumps(first))


def test_minor_mass_experiment_end_to_end_and_figures(tmp_path):
    result = sam_experiments.minor_mass_experiment("quick", seeds=(0, 1, 2), steps=2, downsample=1, init_scales=(1.0,), **TINY)
    eff = result["primary"]
    assert eff["metric"] == "cam_low" and len(eff["raw"]) + len(eff["excluded"]) == 3
    paths = [sam_figures.plot_overlays(result, tmp_path / "o.png"), sam_figures.plot_curves(result, "cam_low", tmp_path / "c.png", "m")]
    assert all(p.stat().st_size > 1000 for p in paths)


def test_overlays_of_runs_that_stored_no_maps_retrain_the_shown_pair_with_maps(tmp_path):
    """The regime designs store no maps (keep_maps = 0): the overlay figure retrains only the pair it shows,
    with maps, on the same trajectory (same curves)."""
    runs = {o: [sam_runs.cached_run(sam_training.TrainConfig(optimizer=o, steps=2, keep_maps=0, **TINY))] for o in ("gd", "sam")}
    assert not any(len(m) for m in runs["gd"][0]["maps"])
    path = sam_figures.plot_overlays({"runs": {1.0: runs}}, tmp_path / "o.png")
    assert path.stat().st_size > 1000
    shown = sam_figures._with_maps(runs["gd"][0], 4)
    assert any(len(m) for m in shown["maps"]) and shown["curves"] == runs["gd"][0]["curves"]
    elsewhere = {**runs["sam"][0], "config": {**runs["sam"][0]["config"], "device": "cuda"}}  # a GPU worker's run
    assert any(len(m) for m in sam_figures._with_maps(elsewhere, 4)["maps"])  # retrained on this worker's device
    slimmed = {k: v for k, v in runs["gd"][0].items() if k not in ("maps", "map_images")}  # .device/full-tier's
    assert any(len(m) for m in sam_figures._with_maps(slimmed, 4)["maps"])
    assert sam_figures._with_maps({**runs["gd"][0], "maps": []}, 4)["maps"] == []  # no evaluation at all: nothing to map


def test_overlays_prefer_a_trained_pair_that_stored_its_maps(tmp_path, monkeypatch):
    """With one pair that stored maps and one that did not, the figure shows the first without retraining."""
    runs = {o: [sam_runs.cached_run(sam_training.TrainConfig(optimizer=o, steps=2, seed=s, keep_maps=k, **TINY)) for s, k in
                ((0, 0), (1, 3))] for o in ("gd", "sam")}
    for r in runs["gd"] + runs["sam"]:
        r["status"] = "ok"  # two steps do not train: taken as trained here, this test is about the choice
    monkeypatch.setattr(sam_runs, "cached_run", lambda cfg, **kw: pytest.fail("a pair was retrained"))
    assert sam_figures.plot_overlays({"runs": {1.0: runs}}, tmp_path / "o.png").stat().st_size > 1000


# ------------------------------------------------------------------------------------------------- CLI
@pytest.mark.parametrize("argv, message", [
    (["--rho", "-0.1"], "rho: must be >= 0"),
    (["--model", "vgg"], "model: must be one of"),
    (["--dataset", "imagenet"], "dataset: must be one of"),
    (["--dataset", "mnist", "--data-dir", "{tmp}"], "train-images-idx3-ubyte: data file not found"),
    (["--dataset", "cifar10", "--data-dir", "{tmp}"], "data_batch_1: data file not found"),
])
def test_validate_sam_cli_bad_input_exits_2_before_training(capsys, tmp_path, argv, message):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(["validate", "sam", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("biasaudit: error: ") and message in err and "Traceback" not in err
    assert err.count("\n") == 1


def test_validate_sam_cli_cuda_absent_exits_2(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert main(["validate", "sam", "--device", "cuda"]) == 2
    assert "device: cuda was requested" in capsys.readouterr().err


def test_validate_sam_cli_malformed_file_is_named(capsys, tmp_path):
    (tmp_path / "train_32x32.mat").write_bytes(b"garbage")
    (tmp_path / "test_32x32.mat").write_bytes(b"garbage")
    assert main(["validate", "sam", "--dataset", "svhn", "--data-dir", str(tmp_path)]) == 2
    assert "train_32x32.mat: not a readable .mat file" in capsys.readouterr().err


def test_validate_sam_cli_tiny_run_writes_results(capsys, tmp_path):
    out = tmp_path / "out"
    rc = main(["validate", "sam", "--dataset", "digits", "--steps", "2", "--seeds", "3", "--device", "cpu",
               "--out", str(out), "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["device"] == "cpu" and "1.0" in summary["effects"]
    assert (out / "results.json").is_file() and (out / "gradcam_overlays.png").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("claim", SAM_TORCH_CLAIMS, ids=lambda c: c.id)
def test_sam_torch_quick_tier_claims_give_a_verdict(claim):
    """The real quick-tier experiments (minutes on 2 CPU cores): a verdict, never an error."""
    ev = run_claim(claim)
    assert ev.verdict in (Verdict.CONFIRMED, Verdict.REFUTED, Verdict.UNDECIDED, Verdict.OUT_OF_SCOPE)
    if claim is diag_net.DIAG_CLAIM:
        assert ev.verdict is Verdict.CONFIRMED


def test_sam_torch_experiment_tier_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(torch_common.TIER_VARIABLE, raising=False)
    assert torch_common.sam_torch_tier() == "quick"
    monkeypatch.setenv(torch_common.TIER_VARIABLE, "full")
    assert torch_common.sam_torch_tier() == "full"
    monkeypatch.setenv(torch_common.TIER_VARIABLE, "huge")
    with pytest.raises(ValueError, match="BIASAUDIT_SAM_TORCH_TIER: must be one of"):
        torch_common.sam_torch_tier()


def test_multipoint_jdagger_sam_is_minor_first_where_gd_is_major_only():
    """Multi-point data, alpha = 0.4 rho: GD's dominant index is always d; l2-SAM's starts below d."""
    pytest.importorskip("biasaudit.numerics.sam_discrete")
    X, y = sam_multipoint.multipoint_data()
    d = X.shape[1]
    gd = sam_multipoint.multipoint_jdagger(X, y, [0.04], rho=0.1, steps=2000, algorithm="gd")
    sam = sam_multipoint.multipoint_jdagger(X, y, [0.04], rho=0.1, steps=2000, algorithm="l2")
    assert np.all(gd["jdagger"] == d)
    assert 0 < sam["jdagger"][0, 0] < d and sam["jdagger"][0, -1] < d
    # the collapse regime (alpha well below alpha_c) is marked 0, never a spurious index
    low = sam_multipoint.multipoint_jdagger(X, y, [0.02], rho=0.1, steps=4000, algorithm="l2")
    assert low["jdagger"][0, -1] == 0


def test_minor_mass_train_run_with_the_resnet():
    run = sam_training.train_run(sam_training.TrainConfig(model="resnet", optimizer="sam", steps=2, **{**TINY, "width": 2}))
    assert run["status"] in ("ok", "not trained") and len(run["curves"]["cam_low"]) == 2


@pytest.mark.gpu
def test_minor_mass_train_run_on_cuda():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    run = sam_training.train_run(sam_training.TrainConfig(optimizer="sam", steps=4, device="cuda", **TINY))
    assert run["status"] in ("ok", "not trained")
    assert all(math.isfinite(v) for v in run["curves"]["loss"])


def test_minor_mass_matching_swaps_roles_when_sam_ends_more_accurate():
    gd = [_run(s, "gd", [0.1, 0.5, 0.6], [0.8, 0.7, 0.6]) for s in range(3)]
    sam = [_run(s, "sam", [0.1, 0.4, 0.8], [0.9, 0.8, 0.6]) for s in range(3)]
    eff = sam_stats.paired_effect(gd, sam, "cam_low")
    # SAM at GD's final accuracy 0.6: halfway between (0.4, 0.8) and (0.8, 0.6) -> 0.7; GD final 0.6
    np.testing.assert_allclose(eff["matched"], 0.1, atol=1e-12)
    assert eff["excluded"] == {}


@pytest.mark.parametrize("claim", SAM_TORCH_CLAIMS, ids=lambda c: c.id)
def test_sam_torch_claims_state_relations_not_booleans(claim):
    """(1) symbolic: hypotheses and statement stay sympy relations (a positive symbol would fold rho > 0 to True)."""
    import sympy as sp

    assert all(isinstance(h, sp.core.relational.Relational) for h in claim.hypotheses)
    relations = [claim.statement] if isinstance(claim.statement, sp.core.relational.Relational) else claim.statement.args
    assert relations and all(isinstance(r, sp.core.relational.Relational) for r in relations)
    assert claim.kind == "experiment" and claim.id.startswith("sam.torch.")


def test_validate_sam_checks_out_before_training(tmp_path, capsys, monkeypatch):
    from biasaudit.cli import main

    monkeypatch.setattr(sam_experiments, "minor_mass_experiment", lambda *a, **k: pytest.fail("trained before checking --out"))
    existing = tmp_path / "a-file"
    existing.write_text("x")
    assert main(["validate", "sam", "--out", str(existing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("biasaudit: error: out: must be a directory") and "Traceback" not in err


def test_mean_band_interpolates_each_run_and_needs_two_runs_per_point():
    grid = np.array([0.0, 0.5, 1.0, 1.5])
    mean, lo, hi = sam_figures.mean_band([[0, 1], [0, 1], [0, 1.0]], [[0, 2], [1, 3], [2, 4]], grid)
    assert mean[:3] == pytest.approx([1.0, 2.0, 3.0]) and math.isnan(mean[3])
    assert lo[1] < 2.0 < hi[1]
    mean, _, _ = sam_figures.mean_band([[0, 1], [0, 2]], [[0, 1], [0, 2]], grid)
    assert mean[2] == pytest.approx(1.0) and math.isnan(mean[3])  # one run reaches 1.5: no mean


def test_plot_curves_draws_mean_bands_of_trained_runs(tmp_path):
    runs = {"gd": [_run(s, "gd", np.linspace(0.1, 0.9, 8), np.linspace(0.5, 0.7, 8) + 0.01 * s) for s in range(4)],
            "sam": [_run(s, "sam", np.linspace(0.1, 0.8, 8), np.linspace(0.6, 0.8, 8)) for s in range(3)]
            + [_run(3, "sam", [0.1] * 8, [0.5] * 8, status="not trained")]}
    result = {"settings": {"dataset": "made-up"}, "runs": {1.0: runs}}
    path = sam_figures.plot_curves(result, "cam_low", tmp_path / "c.png", "m")
    assert path.stat().st_size > 5000
