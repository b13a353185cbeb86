"""SAM's collapse boundary moves with rho (notes/validation-sam.md, "SAM's boundary moves with rho"): the rho
contrast, the design's runs, the claims' verdict logic on made-up results, and a tiny design end to end."""

import pytest

from biasaudit.claims.sam.torch import rho_scaling as rs_claims
from biasaudit.ledger import Verdict, run_claim
from biasaudit.validation import sam_collapse_stats as cs
from biasaudit.validation import sam_regimes as sr
from biasaudit.validation import sam_rho_scaling as rs


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    import torch

    torch.set_flush_denormal(False)
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    rs_claims.rho_result.cache_clear()
    yield
    getattr(rs_claims.rho_result, "cache_clear", lambda: None)()  # a test may have replaced it


def _runs(outcome, n=12, offset=0):
    return [{"config": {"seed": i + offset}, "status": outcome if isinstance(outcome, str) else outcome[i]}
            for i in range(n)]


# ------------------------------------------------------------------------------------------- statistic
def test_rho_contrast_is_one_where_the_boundary_moves_and_zero_where_it_does_not():
    assert cs.rho_contrast(_runs("collapsed"), _runs("ok"))["values"] == [1.0] * 12
    assert cs.rho_contrast(_runs("collapsed"), _runs("collapsed"))["values"] == [0.0] * 12  # no move across alpha
    assert cs.rho_contrast(_runs("ok"), _runs("collapsed"))["values"] == [-1.0] * 12  # the boundary falls with rho


def test_rho_contrast_counts_slow_and_diverged_pairs_never_imputes_them():
    out = cs.rho_contrast(_runs(["slow", "collapsed", "collapsed"], 3), _runs(["ok", "diverged", "ok"], 3))
    assert out["values"] == [1.0] and out["seeds"] == [2]
    assert out["missing"] == [{"seed": 0, "high": "slow", "low": "ok"}, {"seed": 1, "high": "collapsed",
                                                                         "low": "diverged"}]
    with pytest.raises(ValueError, match="seed by seed"):
        cs.rho_contrast(_runs("ok", 3), _runs("ok", 2))


# ---------------------------------------------------------------------------------------------- design
def test_each_design_builds_on_its_collapse_design_with_rho_lo_a_quarter_of_rho_hi():
    for design in rs.DESIGNS:
        for tier in ("quick", "full"):
            base, s = sr.design_settings(design, tier), rs.design_settings(design, tier)
            assert s["alpha"] == base["alphas"][0] and s["rho_hi"] == base["rho"]
            assert s["rho_lo"] == pytest.approx(base["rho"] / 4) and s["steps"] == base["steps"]
    configs = rs.rho_configs("diag", "quick")
    assert len(configs) == len(rs.ARMS) * 12
    by_arm = dict(zip(rs.ARMS, configs[:len(rs.ARMS)]))
    assert (by_arm["sam_hi"].optimizer, by_arm["sam_hi"].rho) == ("sam", 0.3)
    assert (by_arm["sam_lo"].optimizer, by_arm["sam_lo"].rho) == ("sam", 0.075)
    assert (by_arm["aa"].optimizer, by_arm["aa"].rho, by_arm["aa"].seed) == ("sam", 0.075, sr.AA_OFFSET)
    assert by_arm["randsam_lo"].optimizer == "randsam" and by_arm["gd"].optimizer == "gd"
    assert all(c.init_scale == 0.0139 for c in configs)
    from biasaudit.validation.sam_training import validate_config

    for cfg in rs.rho_configs("patch", "full"):  # the full tier's runs are valid configurations
        validate_config(cfg)


def test_the_shared_arms_are_the_collapse_designs_runs():
    """sam_hi, randsam_hi and gd are the collapse design's runs at its below alpha: one cache key each."""
    below = {(c.optimizer, c.seed): c.key() for c in sr.regime_configs("patch", "quick")
             if c.init_scale == sr.design_settings("patch")["alphas"][0]}
    configs = rs.rho_configs("patch", "quick")
    for i, cfg in enumerate(configs):
        arm = rs.ARMS[i % len(rs.ARMS)]
        if arm in ("sam_hi", "randsam_hi", "gd"):
            assert below[cfg.optimizer, cfg.seed] == cfg.key()


def test_bad_input_names_the_parameter():
    from biasaudit.plumbing import InputError

    for kwargs, name in (({"design": "cnn", "tier": "quick"}, "design"), ({"design": "diag", "tier": "huge"}, "tier"),
                         ({"design": "diag", "tier": "quick", "delta": -1.0}, "delta")):
        with pytest.raises(InputError, match=f"^{name}:"):
            rs_claims.rho_decision(**kwargs, result={})


TINY_DIAG = dict(sr.DESIGNS["diag"]["quick"], n_train=64, n_test=16, n_eval=64, steps=200, eval_every=10,
                 seeds=(0, 1, 2))


def test_rho_experiment_end_to_end_on_a_tiny_diag_design(monkeypatch):
    monkeypatch.setitem(sr.DESIGNS["diag"], "quick", TINY_DIAG)
    res = rs.rho_experiment("diag", "quick")
    assert all(len(res["runs"][arm]) == 3 for arm in rs.ARMS)
    assert [r["config"]["seed"] for r in res["runs"]["aa"]] == [sr.AA_OFFSET + s for s in (0, 1, 2)]
    assert {r["config"]["rho"] for r in res["runs"]["sam_lo"]} == {0.075}
    # on the theory's model SAM collapses at rho_hi and fits at rho_lo; GD fits
    assert res["outcomes"]["sam_hi"]["collapsed"] == 3 and res["outcomes"]["sam_lo"]["ok"] == 3
    assert res["outcomes"]["gd"]["ok"] == 3 and res["contrast"]["sam"]["values"] == [1.0] * 3
    assert res["contrast"]["randsam"]["values"] == [0.0] * 3
    again = rs.rho_experiment("diag", "quick")  # from the run cache
    assert again["outcomes"] == res["outcomes"]


# ---------------------------------------------------------------------------------------------- claims
_MOVES = {"sam_hi": "collapsed", "sam_lo": "ok", "aa": "ok", "randsam_hi": "ok", "randsam_lo": "ok", "gd": "ok"}


def _fake_result(outcomes=_MOVES, n=12):
    from biasaudit.validation.sam_stats import clopper_pearson

    runs = {arm: _runs(o, n) for arm, o in outcomes.items()}
    counts = {arm: {o: sum(r["status"] == o for r in rs_) for o in cs.OUTCOMES} for arm, rs_ in runs.items()}
    pairs = {"sam": ("sam_hi", "sam_lo"), "aa": ("aa", "sam_lo"), "randsam": ("randsam_hi", "randsam_lo")}
    return {"runs": runs, "outcomes": counts,
            "collapsed": {arm: [c["collapsed"] / n, list(clopper_pearson(c["collapsed"], n))]
                          for arm, c in counts.items()},
            "fit_steps": {arm: 100.0 for arm in runs},
            "contrast": {k: cs.rho_contrast(runs[h], runs[lo]) for k, (h, lo) in pairs.items()}}


@pytest.fixture
def full_tier(monkeypatch):
    """The patch claim runs at the full tier only: the verdict logic is tested there, on made-up results."""
    monkeypatch.setenv("BIASAUDIT_SAM_TORCH_TIER", "full")


def _with(results):
    return lambda design, tier: results.get(design, results["*"])


@pytest.mark.usefixtures("full_tier")
def test_the_claim_is_confirmed_where_the_boundary_moves_with_its_positive_control(monkeypatch):
    monkeypatch.setattr(rs_claims, "rho_result", _with({"*": _fake_result()}))
    rec = run_claim(rs_claims.PATCH_RHO_CLAIM, profile="ci")
    assert rec.verdict == Verdict.CONFIRMED, rec.detail
    obs = rec.observed
    assert obs["positive_control"]["verdict"] == "confirmed" and obs["n_seeds"] == 12 and obs["tier"] == "full"
    assert {c["name"] for c in obs["data_controls"]} == {"aa", "randsam"} and obs["decision"]["delta"] == 0.25
    assert obs["statistic"]["rho_lo"] == pytest.approx(0.05) and obs["gd_reading"]["collapsed_share"] == 0.0


@pytest.mark.usefixtures("full_tier")
def test_the_claim_is_refuted_when_the_boundary_does_not_move(monkeypatch):
    still = {**_MOVES, "sam_lo": "collapsed", "aa": "collapsed"}  # SAM collapses at both radii
    monkeypatch.setattr(rs_claims, "rho_result", _with({"diag": _fake_result(), "*": _fake_result(still)}))
    rec = run_claim(rs_claims.PATCH_RHO_CLAIM, profile="ci")
    assert rec.verdict == Verdict.REFUTED and rec.observed["decision"]["rule"] == "equivalent", rec.detail


@pytest.mark.usefixtures("full_tier")
def test_a_failed_positive_control_leaves_the_claim_undecided(monkeypatch):
    still = {**_MOVES, "sam_hi": "ok"}
    monkeypatch.setattr(rs_claims, "rho_result", _with({"diag": _fake_result(still), "*": _fake_result()}))
    assert run_claim(rs_claims.DIAG_RHO_CLAIM, profile="ci").verdict == Verdict.REFUTED
    rec = run_claim(rs_claims.PATCH_RHO_CLAIM, profile="ci")
    assert rec.verdict == Verdict.UNDECIDED and "positive control" in rec.detail
    assert rec.observed["positive_control"]["verdict"] == "refuted"


@pytest.mark.usefixtures("full_tier")
@pytest.mark.parametrize("failing, name", [({"randsam_hi": "collapsed"}, "randsam"),
                                           ({"aa": ["collapsed"] * 6 + ["ok"] * 6}, "aa")])
def test_a_failing_data_control_leaves_the_claim_undecided(monkeypatch, failing, name):
    monkeypatch.setattr(rs_claims, "rho_result", _with({"diag": _fake_result(), "*": _fake_result({**_MOVES, **failing})}))
    rec = run_claim(rs_claims.PATCH_RHO_CLAIM, profile="ci")
    assert rec.verdict == Verdict.UNDECIDED and name in rec.detail, rec.detail


@pytest.mark.usefixtures("full_tier")
def test_too_many_slow_seeds_leave_the_claim_undecided(monkeypatch):
    slow = {**_MOVES, "sam_hi": ["slow"] * 4 + ["collapsed"] * 8}
    monkeypatch.setattr(rs_claims, "rho_result", _with({"diag": _fake_result(), "*": _fake_result(slow)}))
    rec = run_claim(rs_claims.PATCH_RHO_CLAIM, profile="ci")
    assert rec.verdict == Verdict.UNDECIDED and "4 of 12 seeds had a slow or diverged SAM run" in rec.detail


@pytest.mark.usefixtures("full_tier")
def test_the_patch_claim_reads_its_own_design_and_the_positive_control(monkeypatch):
    seen = []

    def fake(design, tier):
        seen.append(design)
        return _fake_result()

    monkeypatch.setattr(rs_claims, "rho_result", fake)
    assert run_claim(rs_claims.PATCH_RHO_CLAIM, profile="ci").verdict == Verdict.CONFIRMED
    assert set(seen) == {"patch", "diag"} and seen[0] == "patch"


def test_the_patch_claim_is_out_of_scope_at_the_quick_tier_and_trains_nothing(monkeypatch):
    monkeypatch.setenv("BIASAUDIT_SAM_TORCH_TIER", "quick")
    rec = run_claim(rs_claims.PATCH_RHO_CLAIM, profile="ci")
    assert rec.verdict == Verdict.OUT_OF_SCOPE and "full tier only" in rec.detail
    assert rs_claims.PATCH_RHO_CLAIM.runs() == ()
    assert len(rs_claims.DIAG_RHO_CLAIM.runs()) == len(rs.ARMS) * 12
