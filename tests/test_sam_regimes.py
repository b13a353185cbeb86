"""SAM on networks where the theory puts the effect (notes/validation-sam.md): statistics, the collapse test, the
diagonal network model, the regime grid end to end, and the claims' verdict logic on made-up results."""

import math

import numpy as np
import pytest
from scipy import stats

from biasaudit.claims.sam.torch import regimes as regimes_mod
from biasaudit.ledger import Verdict, run_claim
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


# ---------------------------------------------------------------------------------------- collapse test
def _fractions(sam, gd, n=16):
    return (np.array([[i < round(f * n) for i in range(n)] for f in sam]),
            np.array([[i < round(f * n) for i in range(n)] for f in gd]))


def test_collapse_test_confirms_a_clear_boundary_and_its_gd_swap_does_not():
    sam, gd = _fractions([0, 0, 1, 1, 1], [1, 1, 1, 1, 1])
    t = sr.collapse_test([0.5, 0.7, 1, 1.4, 2], sam, gd)
    assert t["verdict"] == "confirmed" and t["error"] == 0
    swapped = sr.collapse_test([0.5, 0.7, 1, 1.4, 2], gd, sam)
    assert swapped["verdict"] == "refuted" and swapped["error"] > 0


def test_collapse_test_is_undecided_or_refuted_when_gd_also_fails_below_the_boundary():
    sam, gd = _fractions([0, 0, 1, 1], [0.6, 1, 1, 1])
    assert sr.collapse_test([1, 2, 3, 4], sam, gd)["verdict"] == "undecided"
    sam, gd = _fractions([0, 0, 1, 1], [0.1, 1, 1, 1])
    assert sr.collapse_test([1, 2, 3, 4], sam, gd)["verdict"] == "refuted"


def test_collapse_test_refutes_when_sam_trains_at_the_smallest_alpha():
    sam, gd = _fractions([1, 1, 1], [1, 1, 1])
    assert sr.collapse_test([1, 2, 3], sam, gd)["verdict"] == "refuted"


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
                 alphas=(0.02, 0.04), seeds=(0, 1, 2))


def test_regime_experiment_end_to_end_on_a_tiny_diag_grid_and_its_figure(monkeypatch, tmp_path):
    monkeypatch.setitem(sr.DESIGNS["diag"], "quick", TINY_DIAG)
    res = sr.regime_experiment("diag", "quick")
    assert len(res["runs"]) == 2 and all(len(r["sam"]) == 3 for r in res["runs"].values())
    assert set(res["effects"]["0.02"]) == {"minor_margin_share"}
    assert len(res["collapse"]["sam_fraction"]) == 2
    from biasaudit.figures.sam_torch import plot_regime_figure

    path = plot_regime_figure(res, tmp_path, "x.png")
    assert path.stat().st_size > 5000
    again = sr.regime_experiment("diag", "quick")  # from the run cache
    assert again["collapse"] == res["collapse"]


def _fake_result(sam_frac, gd_frac, alphas=(0.5, 0.7, 1.0, 1.4, 2.0), effect=0.05, n=16):
    sam, gd = _fractions(sam_frac, gd_frac, n)
    collapse = sr.collapse_test(list(alphas), sam, gd)
    runs = {a: {"sam": [{"status": "ok" if t else "not trained"} for t in sam[i]],
                "gd": [{"status": "ok" if t else "not trained"} for t in gd[i]]} for i, a in enumerate(alphas)}
    values = list(effect + 0.01 * np.sin(np.arange(n)))
    eff = {"mean": float(np.mean(values)), "ci": (effect - 0.01, effect + 0.01), "values": values, "imputed": {},
           "levels": [0.5], "match_on": "loss", "seeds": list(range(n))}
    return {"settings": {"rho": 0.1, "seeds": list(range(n)), "levels": [0.4, 0.8]}, "collapse": collapse,
            "boundary": {"alpha_50": 0.85, "ci": (0.8, 0.9), "grid_bracket": (0.7, 1.0)},
            "alpha_regime2": 1.0, "alpha_control": 2.0, "runs": runs,
            "status": {str(a): {o: [r["status"] for r in v[o]] for o in v} for a, v in runs.items()},
            "effects": {str(a): {m: eff for m in ("minor_margin_share", "cam_low", "grad_low", "minor_reliance",
                                                   "cam_minor_share", "lead_sam")} for a in alphas}}


def test_collapse_claim_is_confirmed_on_a_clear_boundary_and_its_control_refutes(monkeypatch):
    fake = _fake_result([0, 0, 1, 1, 1], [1, 1, 1, 1, 1])
    monkeypatch.setattr(regimes_mod, "regime_result", lambda design, tier: fake)
    rec = run_claim(regimes_mod.COLLAPSE_CLAIM, profile="ci")
    assert rec.verdict == Verdict.CONFIRMED and rec.negative_control["all_failed"]


def test_collapse_claim_is_refuted_when_gd_fails_too(monkeypatch):
    fake = _fake_result([0, 0, 1, 1, 1], [0, 0, 1, 1, 1])
    monkeypatch.setattr(regimes_mod, "regime_result", lambda design, tier: fake)
    assert run_claim(regimes_mod.COLLAPSE_CLAIM, profile="ci").verdict == Verdict.REFUTED


@pytest.mark.parametrize("claim", [regimes_mod.COLLAPSE_CLAIM, regimes_mod.RESNET_COLLAPSE_CLAIM,
                                   regimes_mod.PATCH_COLLAPSE_CLAIM], ids=lambda c: c.id)
def test_each_collapse_claim_reads_its_own_design(monkeypatch, claim):
    seen = []

    def fake(design, tier):
        seen.append(design)
        return _fake_result([0, 0, 1, 1, 1], [1, 1, 1, 1, 1])

    monkeypatch.setattr(regimes_mod, "regime_result", fake)
    assert run_claim(claim, profile="ci").verdict == Verdict.CONFIRMED
    assert set(seen) == {claim.domain.params["design"].value} and seen[0] in claim.id


def test_the_resnet_design_maps_the_boundary_only():
    from biasaudit.validation.sam_regimes import design_settings, regime_configs

    s = design_settings("resnet")
    assert s["model"] == "resnet" and s["metrics"] == () and len(s["seeds"]) >= 16
    assert len(regime_configs("resnet")) == 2 * len(s["alphas"]) * len(s["seeds"])


def test_validate_sam_design_runs_the_regime_grid_from_the_cli(monkeypatch, tmp_path, capsys):
    import json

    from biasaudit.cli import main

    monkeypatch.setitem(sr.DESIGNS["diag"], "quick", TINY_DIAG)
    assert main(["validate", "sam", "--design", "diag", "--out", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["design"] == "diag" and len(out["collapse"]["sam_fraction"]) == 2
    assert (tmp_path / "results.json").is_file() and (tmp_path / "regimes_diag.png").is_file()
    assert main(["validate", "sam", "--design", "diag", "--rho", "0.5"]) == 2  # the design fixes rho
