"""'Minor first, major last' in time: the runs (loss target, dense schedule, RandSAM, outcomes), the patch
layouts, the statistics in normalised time, the design, and the claims under the experiment contract."""

from __future__ import annotations

import math

import numpy as np
import pytest

from biasaudit.contract import REQUIRED_FIELDS
from biasaudit.ledger import Verdict, run_claim
from biasaudit.plumbing import InputError
from biasaudit.validation import sam_ladder_config as lc
from biasaudit.validation.data import load_dataset, synthetic_patches
from biasaudit.validation.sam_ladder_stats import did, dominance, early_difference, early_late, paired_values
from biasaudit.validation.sam_training import TrainConfig, _evaluation_steps, run_outcome, train_run


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / "cache"))


def _run(steps, share, status="ok", seed=0):
    return {"config": {"seed": seed}, "status": status, "curves": {"step": list(steps), "m": list(share)}}


def test_early_and_late_are_read_in_each_runs_own_normalised_time():
    run = _run([0, 2, 4, 6, 8, 10], [math.nan, 0.8, 0.6, 0.4, 0.2, 0.1])
    assert early_late(run, "m") == pytest.approx((0.7, 0.1))  # 0 < tau <= 1/2: steps 2 and 4
    slow = _run([0, 20, 40, 60, 80, 100], [math.nan, 0.8, 0.6, 0.4, 0.2, 0.1])
    assert early_late(slow, "m") == early_late(run, "m")  # the time to fit drops out


def test_the_difference_in_differences_and_its_companions():
    sam = _run([0, 2, 4, 6, 8], [math.nan, 0.9, 0.7, 0.3, 0.2])
    gd = _run([0, 2, 4], [math.nan, 0.1, 0.1])
    assert did(sam, gd, "m") == pytest.approx((0.8 - 0.2) - (0.1 - 0.1))  # SAM early: steps 2 and 4
    assert early_difference(sam, gd, "m") == pytest.approx(0.8 - 0.1)
    assert dominance(sam, gd, "m") == 1.0 and dominance(gd, sam, "m") == 0.0


def test_paired_values_leave_out_pairs_that_did_not_fit_and_list_them():
    ok = _run([0, 2, 4], [math.nan, 0.5, 0.1])
    pairs = [(ok, ok), (_run([0, 2], [0, 0], "slow", seed=1), ok), (ok, _run([0, 2], [0, 0], "collapsed", seed=2))]
    out = paired_values(pairs, "did", "m")
    assert out["values"] == [0.0] and [m["seed"] for m in out["missing"]] == [1, 0]
    assert [(m["sam"], m["gd"]) for m in out["missing"]] == [("slow", "ok"), ("ok", "collapsed")]


def test_collapse_is_a_signature_and_slow_is_its_own_outcome():
    flat = {"step": [0, 10, 20, 30, 40], "loss": [0.693, 0.693, 0.6931, 0.693, 0.6929],
            "logit_scale": [0.1, 0.05, 0.02, 0.01, 0.005]}
    assert run_outcome(flat, False) == "collapsed"
    growing_scale = {**flat, "logit_scale": [0.1, 0.05, 0.02, 0.03, 0.04]}
    assert run_outcome(growing_scale, False) == "slow"  # still moving: not a collapse
    falling = {**flat, "loss": [0.693, 0.6, 0.5, 0.4, 0.3]}
    assert run_outcome(falling, False) == "slow"
    assert run_outcome(flat, True) == "ok"
    at_rest = {**flat, "logit_scale": [0.1, 0.02, 0.02, 0.02, 0.02]}  # at the collapsed state: the scale stays put
    assert run_outcome(at_rest, False) == "collapsed"
    creeping = {**flat, "logit_scale": [0.1, 0.02, 0.02, 0.0203, 0.0205]}  # grows by more than the band: escaping
    assert run_outcome(creeping, False) == "slow"


def test_dense_schedule_evaluates_every_two_steps_early():
    cfg = TrainConfig(steps=100, eval_every=25, schedule="dense")
    assert _evaluation_steps(cfg) == set(range(0, 41, 2)) | {25, 50, 75, 100}
    assert _evaluation_steps(TrainConfig(steps=100, eval_every=25)) == {0, 25, 50, 75, 100}


TINY = dict(dataset="synthetic-patches", model="diag2", n_train=64, n_test=16, n_eval=64, n_probe=4, lr=0.2, rho=0.3,
            batch_size=None, steps=400, eval_every=10, loss_target=0.05, schedule="dense", probe=False, keep_maps=0)


@pytest.mark.parametrize("optimizer", ["gd", "sam", "randsam"])
def test_a_ladder_run_stops_at_its_loss_target_and_records_both_shares(optimizer):
    run = train_run(TrainConfig(**TINY, optimizer=optimizer, init_scale=0.06))
    assert run["status"] == "ok" and run["curves"]["loss"][-1] <= 0.05 < run["curves"]["loss"][-2]
    for metric in ("minor_margin_share", "grad_minor_share"):
        values = np.array(run["curves"][metric][1:], float)
        assert np.all((values >= -1) & (values <= 1)), metric
    assert run["curves"]["step"][:3] == [0, 2, 4]


def test_randsam_is_a_placebo_not_sam():
    sam = train_run(TrainConfig(**TINY, optimizer="sam", init_scale=0.045))
    rand = train_run(TrainConfig(**TINY, optimizer="randsam", init_scale=0.045))
    gd = train_run(TrainConfig(**TINY, optimizer="gd", init_scale=0.045))
    assert abs(did(rand, gd, "minor_margin_share")) < 0.1 * abs(did(sam, gd, "minor_margin_share"))


def test_the_patch_layouts_name_masks_by_strength():
    X, _, masks = synthetic_patches(64, layout="swapped", seed=1)
    Xs, _, masks_s = synthetic_patches(64, layout="standard", seed=1)
    assert np.array_equal(masks["major"], masks_s["minor"]) and np.array_equal(masks["minor"], masks_s["major"])
    assert X[:, 0][:, masks["major"]].max() == 1.0 and X[:, 0][:, masks["minor"]].max() == 0.25
    E, _, masks_e = synthetic_patches(64, layout="equal", seed=1)
    assert E[:, 0][:, masks_e["major"]].max() == E[:, 0][:, masks_e["minor"]].max() == 0.5
    with pytest.raises(InputError, match="layout"):
        synthetic_patches(8, layout="diagonal")


def test_planted_mnist_carries_a_faint_class_coded_patch():
    ds = load_dataset("mnist5k-planted", n_train=200, n_test=20)
    m = ds.info["masks"]
    for k in range(10):
        rows = ds.X_train[ds.y_train == k, 0].numpy()
        assert rows[:, m[f"minor_{k}"]].min() >= 0.25 - 1e-6  # the patch is there in every image of class k
    assert not (m["minor"] & m["major"]).any() and (m["minor"] | m["major"]).all()


def test_ladder_run_configs_map_arms_to_optimizers_seeds_and_layouts():
    run = lc.run_config(lc.LadderRun("diag", "primary", "aa", 3), "quick")
    assert (run.optimizer, run.seed, run.data_seed) == ("gd", 3 + lc.AA_OFFSET, 3 + lc.AA_OFFSET)
    swapped = lc.run_config(lc.LadderRun("diag", "primary", "sam_swapped", 3), "quick")
    assert (swapped.optimizer, swapped.dataset) == ("sam", "synthetic-patches-swapped")
    near = lc.run_config(lc.LadderRun("diag", "near", "gd", 0), "quick")
    assert near.init_scale == pytest.approx(1.1 * lc.ladder_settings("diag", "quick")["alpha_50"])
    runs = lc.ladder_runs("diag", "quick")
    assert len(runs) == len(set(runs)) == 12 * (2 * len(lc.MULTIPLES) + len(lc.ARMS) - 2)
    assert lc.multiples("gated_cnn", "quick") == ("primary", "gd_like") and len(lc.multiples("cnn", "full")) == 3
    with pytest.raises(InputError, match="arm"):
        lc.run_config(lc.LadderRun("diag", "primary", "adam", 0), "quick")
    with pytest.raises(InputError, match="model"):
        lc.ladder_settings("vit", "quick")


@pytest.fixture
def tiny_ladder(monkeypatch):
    """The diagonal network's ladder on 4 seeds of 64 images (seconds): the claims' code on real runs."""
    from biasaudit.claims.sam.torch import ladder
    from biasaudit.validation import sam_ladder

    monkeypatch.setitem(lc._SETTINGS, "diag", {**lc._SETTINGS["diag"], "n_train": 64, "n_eval": 64, "steps": 1500})
    monkeypatch.setitem(lc._SEEDS, "quick", (0, 1, 2, 3))
    sam_ladder._records.cache_clear()
    ladder._holm_levels.cache_clear()
    yield ladder
    sam_ladder._records.cache_clear()


def test_the_positive_control_records_every_contract_field(tiny_ladder):
    from biasaudit.registry import get_claim

    ev = run_claim(get_claim("sam.torch.minor_first_major_last.diag"))
    assert set(REQUIRED_FIELDS) <= set(ev.observed)
    assert ev.observed["n_seeds"] == 4 and ev.observed["positive_control"] is None
    assert {c["name"] for c in ev.observed["data_controls"]} == {"aa", "randsam", "equal", "swapped"}
    assert ev.observed["decision"]["delta"] == tiny_ladder.DELTA
    assert ev.verdict == Verdict.CONFIRMED, ev.detail


def test_an_effect_claim_is_undecided_when_its_positive_control_fails(tiny_ladder, monkeypatch):
    from biasaudit.registry import get_claim
    from biasaudit.validation.decision import three_way

    real = tiny_ladder.ladder_decision

    def forced(model, tier, **kw):  # the positive control's values pushed to the wrong side
        out = real(model, tier, **kw)
        if model == "diag" and kw.get("multiple", "primary") == "primary":
            out["decision"] = three_way([-v for v in out["values"]], direction=1, delta=tiny_ladder.DELTA)
        return out

    monkeypatch.setattr(tiny_ladder, "ladder_decision", forced)
    ev = run_claim(get_claim("sam.torch.minor_outlasts_target_near_boundary.diag"))
    assert ev.verdict == Verdict.UNDECIDED and "positive control" in ev.detail
    assert ev.observed["positive_control"]["verdict"] == "refuted"


@pytest.mark.parametrize("argv, parameter", [
    (["--model", "vit"], "model"), (["--tier", "huge"], "tier"), (["--statistic", "lead"], "statistic"),
    (["--metric", "cam_share"], "metric"), (["--controls", "aa,placebo"], "control"), (["--controls", "aa,"], "controls"),
    (["--delta", "0"], "delta"), (["--delta", "-0.1"], "delta"), (["--delta", "nan"], "delta"),
    (["--seeds", "2"], "seeds"), (["--horizon", "45"], "horizon"), (["--multiple", "later"], "multiple"),
    (["--model", "cnn", "--multiple", "near"], "multiple"), (["--direction", "0"], "direction"),
])
def test_validate_ladder_refuses_bad_input_with_one_line(argv, parameter, capsys):
    from biasaudit.cli import main

    assert main(["validate", "ladder", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{parameter}:" in err[0], err


def test_the_ladder_api_raises_input_error_naming_the_parameter():
    from biasaudit.claims.sam.torch.ladder import ladder_decision

    with pytest.raises(InputError, match="^seeds:"):
        ladder_decision("diag", "quick", seeds=(0, 1))
    with pytest.raises(InputError, match="^horizon:"):
        ladder_decision("diag", "quick", horizon=10)


def test_validate_ladder_prints_the_decision_and_its_controls(tiny_ladder, capsys):
    import json

    from biasaudit.cli import main

    assert main(["validate", "ladder", "--model", "diag", "--seeds", "3", "--controls", "aa,randsam",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["decision"]["n"] == 3 and [c["name"] for c in out["controls"]] == ["aa", "randsam"]
    assert out["verdict"] == "confirmed" and out["decision"]["delta"] == tiny_ladder.DELTA


MNIST_RUNG = "sam.torch.minor_first_major_last.mnist_planted"


def test_the_mnist_rung_is_the_gated_cnn_on_planted_mnist_with_the_controls_its_task_has():
    settings = lc.ladder_settings("mnist_planted", "full")
    assert (settings["dataset"], settings["model"], len(settings["seeds"])) == ("mnist5k-planted", "gated_cnn", 32)
    assert lc.control_arms("mnist_planted") == ("aa", "randsam")  # the digit is not a patch: no equal, no swapped
    assert set(lc.LAYOUT_ARMS) <= set(lc.control_arms("gated_cnn"))
    runs = lc.ladder_runs("mnist_planted", "full")
    assert len(runs) == len(set(runs)) == 32 * (2 * len(lc.MULTIPLES) + 2)
    with pytest.raises(InputError, match="arm"):
        lc.run_config(lc.LadderRun("mnist_planted", "primary", "sam_swapped", 0), "full")
    assert lc.AUDIT_TIERS["mnist_planted"] == ("full",)


def test_the_mnist_rung_is_registered_with_its_contract_and_is_out_of_scope_at_quick(monkeypatch):
    from biasaudit.claims.sam.torch.ladder import DELTA, POSITIVE_CONTROL, ladder_decision
    from biasaudit.registry import get_claim

    claim = get_claim(MNIST_RUNG)
    contract = claim.contract
    assert contract.role == "effect" and contract.positive_control == POSITIVE_CONTROL and contract.delta == DELTA
    assert [c.name for c in contract.data_controls] == ["aa", "randsam"]
    monkeypatch.setenv("BIASAUDIT_SAM_TORCH_TIER", "quick")
    rec = run_claim(claim, profile="ci")
    assert rec.verdict == Verdict.OUT_OF_SCOPE and "full tier only" in rec.detail
    assert claim.runs() == ()
    monkeypatch.setenv("BIASAUDIT_SAM_TORCH_TIER", "full")
    assert len(claim.runs()) == 32 * (2 * len(lc.MULTIPLES) + 2)
    with pytest.raises(InputError, match="^control:"):
        ladder_decision("mnist_planted", "full", controls=("aa", "equal"))


def test_one_arm_of_the_mnist_rung_runs_end_to_end_and_reads_the_planted_patch():
    from dataclasses import replace

    cfg = lc.run_config(lc.LadderRun("mnist_planted", "primary", "sam", 0), "full")
    run = train_run(replace(cfg, n_train=64, n_eval=64, n_test=16, steps=60))
    curves = run["curves"]
    assert curves["step"][:3] == [0, 2, 4] and curves["step"][-1] <= 60
    for metric in ("minor_margin_share", "grad_minor_share"):
        values = np.array(curves[metric][1:], float)
        assert np.isfinite(values).all() and np.all((values >= -1) & (values <= 1)), metric
    # at the start the input gradient spreads over the image: the patch's share is near its share of the pixels
    ds_masks = load_dataset("mnist5k-planted", n_train=8, n_test=2).info["masks"]
    pooled_share = ds_masks["minor"].mean()
    assert 0.2 * pooled_share < curves["grad_minor_share"][0] < 5 * pooled_share
