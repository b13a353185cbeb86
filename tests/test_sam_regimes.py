"""SAM on networks where the theory puts the effect (notes/validation-sam.md): statistics, the collapse test, the
diagonal network model, the regime grid end to end, and the claims' verdict logic on made-up results."""

import math

import numpy as np
import pytest
from scipy import stats

from biasaudit.claims.sam.torch import regimes as regimes_mod
from biasaudit.ledger import Verdict, run_claim
from biasaudit.validation import sam_collapse_stats as cs
from biasaudit.validation import sam_regimes as sr
from biasaudit.validation import sam_stats as st


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    import torch

    torch.set_flush_denormal(False)
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    yield
    for fn in (regimes_mod.regime_result,):
        getattr(fn, "cache_clear", lambda: None)()  # a test may have replaced it


def _run(seed, status, progress, metric, *, key="acc", name="cam_low"):
    return {"config": {"seed": seed}, "status": status,
            "curves": {"step": list(range(len(progress))), key: list(progress), name: list(metric)}}


# ------------------------------------------------------------------------------------------- statistics
def test_metric_at_level_reads_the_first_crossing_from_either_side():
    assert st.metric_at_level([0.1, 0.5, 0.9], [0, 1, 2], 0.7) == pytest.approx(1.5)
    assert st.metric_at_level([0.69, 0.6, 0.4], [0, 1, 2], 0.5, decreasing=True) == pytest.approx(1.5)
    assert math.isnan(st.metric_at_level([0.69, 0.6], [0, 1], 0.5, decreasing=True))


def test_area_effect_recovers_a_shift_at_matched_progress_and_counts_untrained_pairs_as_zero():
    """SAM trains slower (a lag) and its metric is GD's, as a function of accuracy, plus 0.05: the area
    statistic recovers +0.05 exactly; a pair with an untrained run is kept, as 0, and listed."""
    levels = (0.4, 0.5, 0.6, 0.7, 0.8)
    acc_gd = np.linspace(0.1, 0.95, 12)
    acc_sam = np.linspace(0.1, 0.85, 12)
    gd = [_run(s, "ok", acc_gd, 0.2 + 0.3 * acc_gd + 0.01 * s) for s in range(6)]
    sam = [_run(s, "ok", acc_sam, 0.25 + 0.3 * acc_sam + 0.01 * s) for s in range(5)]
    sam.append(_run(5, "not trained", [0.1] * 12, [0.9] * 12))
    e = st.area_effect(gd, sam, "cam_low", levels)
    assert e["values"][:5] == pytest.approx([0.05] * 5, abs=1e-9)
    assert e["values"][5] == 0.0 and e["imputed"] == {"5": "GD ok, SAM not trained"}
    assert e["seeds"] == list(range(6))
    assert e["mean"] == pytest.approx(0.05 * 5 / 6)


def test_area_effect_on_loss_levels():
    loss = np.linspace(0.69, 0.2, 10)
    gd = [_run(s, "ok", loss, 0.1 + 0.01 * s + 0 * loss, key="loss") for s in range(4)]
    sam = [_run(s, "ok", loss, 0.5 + 0.01 * s + 0 * loss, key="loss") for s in range(4)]
    e = st.area_effect(gd, sam, "cam_low", (0.6, 0.4), match_on="loss")
    assert e["values"] == pytest.approx([0.4] * 4)


def test_one_sided_p_agrees_with_the_t_test_and_is_never_smaller():
    rng = np.random.default_rng(1)
    v = rng.normal(0.3, 1.0, 16)
    p = st.one_sided_p(v)
    t = stats.ttest_1samp(v, 0.0, alternative="greater").pvalue
    assert p >= t - 1e-12 and p < 0.5
    assert st.one_sided_p(v, -1) > 0.5
    assert st.one_sided_p([1.0]) == 1.0


def test_holm_matches_the_textbook_example():
    adj = st.holm({"a": 0.01, "b": 0.04, "c": 0.03})
    assert adj == pytest.approx({"a": 0.03, "c": 0.06, "b": 0.06})


def test_clopper_pearson_matches_scipy():
    for k, n in ((0, 16), (12, 16), (16, 16), (5, 9)):
        ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        assert st.clopper_pearson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_logistic_boundary_recovers_the_midpoint_and_reports_no_boundary_without_a_rise():
    alphas = np.array([0.5, 0.7, 1.0, 1.4, 2.0])
    rng = np.random.default_rng(0)
    p = 1 / (1 + np.exp(-4 * (np.log(alphas) - np.log(1.0))))
    trained = rng.random((5, 400)) < p[:, None]
    b = st.logistic_boundary(alphas, trained, n_boot=100)
    assert b["alpha_50"] == pytest.approx(1.0, rel=0.05)
    assert b["ci"][0] < 1.0 < b["ci"][1]
    flat = st.logistic_boundary(alphas, np.ones((5, 16), bool), n_boot=20)
    assert flat["alpha_50"] is None or not (alphas[0] <= flat["alpha_50"] <= alphas[-1])


def test_batched_newton_logistic_fit_matches_the_nelder_mead_reference():
    """Every row of the batched fit is the reference's optimum (overlapping, separated and one-sided data)."""
    x = np.repeat(np.log([0.5, 0.7, 1.0, 1.4, 2.0]), 8)
    rng = np.random.default_rng(3)
    rows = [rng.random(40) < 1 / (1 + np.exp(-s * x)) for s in (0.5, 2.0, 6.0)]
    rows += [x > 0, np.r_[np.zeros(20, bool), np.ones(20, bool)], x > -0.5]  # complete separation
    a, b = st.fit_logistic_batch(x, np.array(rows, float))
    for row, ai, bi in zip(rows, a, b):
        ra, rb = st.fit_logistic_reference(x, row.astype(float))
        assert (ai, bi) == pytest.approx((ra, rb), rel=1e-5, abs=1e-6)
    a, b = st.fit_logistic_batch(x, np.ones((1, 40)))  # no finite optimum: large a, slope ~ 0
    assert abs(b[0]) < 1e-3 and a[0] > 5


def test_diluted_effect_matches_a_simulated_mixture_with_imputed_zeros():
    """A share q of zeros among normal seed values (mean d, sd 1): the standardized effect of the mixture."""
    rng = np.random.default_rng(0)
    for d, q in ((0.8, 0.375), (2.0, 0.1), (0.3, 0.5)):
        n = 1_000_000
        x = np.where(rng.random(n) < q, 0.0, rng.normal(d, 1.0, n))
        assert st.diluted_effect(d, q) == pytest.approx(x.mean() / x.std(), abs=5 / n**0.5)  # 5 standard errors
    assert st.diluted_effect(0.8, 0.0) == 0.8 and st.diluted_effect(0.8, 1.0) == 0.0
    with pytest.raises(ValueError, match="untrained_share"):
        st.diluted_effect(0.8, 1.5)


def test_t_power_grows_with_seeds_and_effect():
    assert st.t_power(0.8, 16) > st.t_power(0.8, 5) > 0.2
    assert st.t_power(1.5, 16) > 0.95
    assert st.t_power(0.0, 16) == pytest.approx(0.025, abs=1e-3)


# ------------------------------------------------------------------------------------- collapse contrast
def _grid(outcomes: dict, n=12):
    """{point: {arm: [run, ...]}} with every seed of an arm ending with the same outcome, or with a list of them."""
    return {p: {arm: [{"config": {"seed": i}, "status": o if isinstance(o, str) else o[i]} for i in range(n)]
                for arm, o in arms.items()} for p, arms in outcomes.items()}


_REGIME1 = {"below": {"sam": "collapsed", "gd": "ok", "aa": "ok", "randsam": "ok"},
            "above": {"sam": "ok", "gd": "ok", "aa": "ok", "randsam": "ok"}}


def test_collapse_contrast_is_one_in_regime_one_and_zero_without_a_sam_boundary():
    assert cs.paired_contrast(_grid(_REGIME1), "sam")["values"] == [1.0] * 12
    both = {**_REGIME1, "below": {**_REGIME1["below"], "gd": "collapsed"}}  # GD collapses too: not SAM's own
    assert cs.paired_contrast(_grid(both), "sam")["values"] == [0.0] * 12
    everywhere = {**_REGIME1, "above": {**_REGIME1["above"], "sam": "collapsed"}}  # no boundary in alpha
    assert cs.paired_contrast(_grid(everywhere), "sam")["values"] == [0.0] * 12
    assert cs.paired_contrast(_grid(_REGIME1), "aa")["values"] == [0.0] * 12


def test_slow_and_diverged_runs_are_counted_never_imputed():
    slow = {**_REGIME1, "below": {**_REGIME1["below"], "sam": ["slow", "diverged"] + ["collapsed"] * 10}}
    out = cs.paired_contrast(_grid(slow), "sam")
    assert out["values"] == [1.0] * 10 and out["seeds"] == list(range(2, 12))
    assert [(m["seed"], m["sam@below"]) for m in out["missing"]] == [(0, "slow"), (1, "diverged")]


# ----------------------------------------------------------------------------------------------- models
def test_diag2_is_a_balanced_depth_two_diagonal_network_per_class():
    import torch

    from biasaudit.validation.models import make_model

    m = make_model("diag2", num_classes=2, in_channels=1, image_size=4, init_scale=0.3)
    assert torch.allclose(m.u, torch.full((2, 16), 0.3)) and torch.allclose(m.v, m.u)
    with torch.no_grad():
        m.u[1, 3] = 2.0
    x = torch.zeros(1, 1, 4, 4)
    x[0, 0, 0, 3] = 1.5
    assert torch.allclose(m(x), torch.tensor([[0.3 * 0.3 * 1.5, 2.0 * 0.3 * 1.5]]))
    assert m.cam_layer is None


def test_patch_margins_are_exact_attributions_for_a_linear_model():
    import torch

    from biasaudit.validation.models import make_model
    from biasaudit.validation.sam_training import _patch_ablations

    torch.manual_seed(0)
    m = make_model("diag2", num_classes=2, in_channels=1, image_size=4)
    with torch.no_grad():
        m.u.mul_(torch.rand(2, 16) + 0.5)
    major = torch.zeros(4, 4, dtype=torch.bool)
    major[0, :2] = True
    minor = torch.zeros(4, 4, dtype=torch.bool)
    minor[3, 2:] = True
    X = torch.rand(8, 1, 4, 4)
    y = torch.randint(0, 2, (8,))
    out = _patch_ablations(m, {"X": X, "y": y, "major": major, "minor": minor})
    w = (m.u * m.v).detach()
    sign = torch.where(y == 0, 1.0, -1.0)
    diff = (w[0] - w[1]).reshape(4, 4)
    expect_minor = float(((X[:, 0] * minor * diff).sum(dim=(1, 2)) * sign).mean())
    assert out["margin_minor"] == pytest.approx(expect_minor, rel=1e-5)


def test_patch_ablations_equal_the_separate_accuracy_and_margin_passes():
    """One forward per ablated input serves accuracy and margin: the same numbers, bit for bit, as the
    separate passes it replaced."""
    import torch

    from biasaudit.validation import sam_training as st_mod
    from biasaudit.validation.models import make_model

    torch.manual_seed(1)
    m = make_model("cnn", num_classes=2, in_channels=1, image_size=8, width=4, init_scale=1.3, seed=3).eval()
    X, y = torch.rand(256, 1, 8, 8), torch.randint(0, 2, (256,))
    major = torch.zeros(8, 8, dtype=torch.bool)
    major[:3, :3] = True
    minor = torch.zeros(8, 8, dtype=torch.bool)
    minor[5:, 5:] = True
    out = st_mod._patch_ablations(m, {"X": X, "y": y, "major": major, "minor": minor})
    none = st_mod._mean_margin(m, X * ~(major | minor), y)
    assert out["acc_no_major"] == st_mod._accuracy(m, X * ~major, y)[0]
    assert out["acc_no_minor"] == st_mod._accuracy(m, X * ~minor, y)[0]
    assert out["margin_minor"] == st_mod._mean_margin(m, X * ~major, y) - none
    assert out["margin_major"] == st_mod._mean_margin(m, X * ~minor, y) - none


# ------------------------------------------------------------------------------------------ end to end
TINY_DIAG = dict(sr.DESIGNS["diag"]["quick"], n_train=64, n_test=16, n_eval=64, steps=60, eval_every=5,
                 seeds=(0, 1, 2))


def test_regime_experiment_end_to_end_on_a_tiny_diag_design_and_its_figure(monkeypatch, tmp_path):
    monkeypatch.setitem(sr.DESIGNS["diag"], "quick", TINY_DIAG)
    res = sr.regime_experiment("diag", "quick")
    assert set(res["runs"]) == {"below", "above"} and all(len(r[a]) == 3 for r in res["runs"].values() for a in sr.ARMS)
    assert [r["config"]["seed"] for r in res["runs"]["below"]["aa"]] == [sr.AA_OFFSET + s for s in (0, 1, 2)]
    assert all(sum(c.values()) == 3 for by in res["outcomes"].values() for c in by.values())
    from biasaudit.figures.sam_torch import plot_regime_figure

    path = plot_regime_figure(res, tmp_path, "x.png")
    assert path.stat().st_size > 5000
    again = sr.regime_experiment("diag", "quick")  # from the run cache
    assert again["outcomes"] == res["outcomes"] and again["contrast"] == res["contrast"]


def _fake_result(outcomes=_REGIME1, n=12):
    return {"settings": {"rho": 0.3, "seeds": list(range(n)), "steps": 480, "loss_target": 0.05},
            "alphas": {"below": 0.5, "above": 2.0}, "runs": _grid(outcomes, n),
            "outcomes": {p: {arm: {o: int(o == v) * n for o in cs.OUTCOMES} for arm, v in by.items()}
                         for p, by in outcomes.items() if all(isinstance(v, str) for v in by.values())},
            "collapsed": {p: {arm: [float(v == "collapsed"), [0.0, 1.0]] for arm, v in by.items()}
                          for p, by in outcomes.items()},
            "fit_steps": {p: {arm: 100.0 for arm in by} for p, by in outcomes.items()},
            "contrast": {arm: cs.paired_contrast(_grid(outcomes, n), arm) for arm in ("sam", "aa", "randsam")}}


def _with(design_results):
    return lambda design, tier: design_results.get(design, design_results["*"])


def test_collapse_claim_is_confirmed_in_regime_one_with_its_positive_control(monkeypatch):
    monkeypatch.setattr(regimes_mod, "regime_result", _with({"*": _fake_result()}))
    rec = run_claim(regimes_mod.COLLAPSE_CLAIM, profile="ci")
    assert rec.verdict == Verdict.CONFIRMED, rec.detail
    obs = rec.observed
    assert obs["positive_control"]["verdict"] == "confirmed" and obs["n_seeds"] == 12
    assert {c["name"] for c in obs["data_controls"]} == {"aa", "randsam"} and obs["decision"]["delta"] == 0.25


def test_collapse_claim_is_refuted_when_gd_collapses_too(monkeypatch):
    both = {**_REGIME1, "below": {arm: "collapsed" for arm in sr.ARMS}}  # every arm collapses: no SAM effect
    monkeypatch.setattr(regimes_mod, "regime_result", _with({"diag": _fake_result(), "*": _fake_result(both)}))
    rec = run_claim(regimes_mod.COLLAPSE_CLAIM, profile="ci")
    assert rec.verdict == Verdict.REFUTED and rec.observed["decision"]["rule"] == "equivalent", rec.detail


def test_a_failed_positive_control_leaves_the_claim_undecided(monkeypatch):
    no_collapse = {**_REGIME1, "below": {**_REGIME1["below"], "sam": "ok"}}
    monkeypatch.setattr(regimes_mod, "regime_result", _with({"diag": _fake_result(no_collapse), "*": _fake_result()}))
    assert run_claim(regimes_mod.DIAG_COLLAPSE_CLAIM, profile="ci").verdict == Verdict.REFUTED
    rec = run_claim(regimes_mod.COLLAPSE_CLAIM, profile="ci")
    assert rec.verdict == Verdict.UNDECIDED and "positive control" in rec.detail
    assert rec.observed["positive_control"]["verdict"] == "refuted"


def test_a_failing_data_control_or_too_many_slow_seeds_leave_the_claim_undecided(monkeypatch):
    placebo = {**_REGIME1, "below": {**_REGIME1["below"], "randsam": "collapsed"}}  # RandSAM collapses as SAM does
    monkeypatch.setattr(regimes_mod, "regime_result", _with({"diag": _fake_result(), "*": _fake_result(placebo)}))
    rec = run_claim(regimes_mod.COLLAPSE_CLAIM, profile="ci")
    assert rec.verdict == Verdict.UNDECIDED and "randsam" in rec.detail
    slow = {**_REGIME1, "below": {**_REGIME1["below"], "sam": ["slow"] * 4 + ["collapsed"] * 8}}
    monkeypatch.setattr(regimes_mod, "regime_result", _with({"diag": _fake_result(), "*": _fake_result(slow)}))
    rec = run_claim(regimes_mod.COLLAPSE_CLAIM, profile="ci")
    assert rec.verdict == Verdict.UNDECIDED and "4 of 12 seeds had a slow or diverged run" in rec.detail


@pytest.mark.parametrize("claim", [regimes_mod.COLLAPSE_CLAIM, regimes_mod.PATCH_COLLAPSE_CLAIM],
                         ids=lambda c: c.id)
def test_each_collapse_claim_reads_its_own_design_and_the_positive_control(monkeypatch, claim):
    seen = []

    def fake(design, tier):
        seen.append(design)
        return _fake_result()

    monkeypatch.setattr(regimes_mod, "regime_result", fake)
    assert run_claim(claim, profile="ci").verdict == Verdict.CONFIRMED
    assert set(seen) == {claim.domain.params["design"].value, "diag"} and seen[0] in claim.id


def test_the_resnet_design_has_no_batchnorm_and_runs_at_the_full_tier():
    from biasaudit.validation.sam_regimes import design_settings, regime_configs

    assert tuple(sr.DESIGNS["resnet"]) == ("full",)
    s = design_settings("resnet", "full")
    assert s["model"] == "resnet_nobn" and len(s["seeds"]) >= 32
    assert len(regime_configs("resnet", "full")) == len(sr.ARMS) * 2 * len(s["seeds"])


def test_collapse_decision_refuses_bad_input():
    from biasaudit.plumbing import InputError

    for kwargs, name in (({"design": "nope", "tier": "quick"}, "design"), ({"design": "resnet", "tier": "quick"}, "tier"),
                         ({"design": "cnn", "tier": "quick", "delta": 0}, "delta")):
        with pytest.raises(InputError, match=f"^{name}:"):
            regimes_mod.collapse_decision(**kwargs)


def test_validate_sam_design_runs_the_collapse_design_from_the_cli(monkeypatch, tmp_path, capsys):
    import json

    from biasaudit.cli import main

    monkeypatch.setitem(sr.DESIGNS["diag"], "quick", TINY_DIAG)
    assert main(["validate", "sam", "--design", "diag", "--out", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["design"] == "diag" and set(out["outcomes"]) == {"below", "above"}
    assert out["contrast"]["decision"]["delta"] == 0.25 and len(out["contrast"]["data_controls"]) == 2
    assert (tmp_path / "results.json").is_file() and (tmp_path / "regimes_diag.png").is_file()
    assert main(["validate", "sam", "--design", "diag", "--rho", "0.5"]) == 2  # the design fixes rho
