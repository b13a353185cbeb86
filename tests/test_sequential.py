"""Group-sequential seed studies (biasaudit.validation.sequential), their placebo calibration
(biasaudit.validation.placebo) and the network claims that take looks (biasaudit.claims.eos.torch._study)."""

from __future__ import annotations

import math

import pytest

from biasaudit.plumbing import InputError
from biasaudit.validation.decision import equivalence_decision, three_way
from biasaudit.validation.placebo import Placebo, error_rates
from biasaudit.validation.sequential import LOOKS, seeds_to_decide, sequential_decision, spent_levels


def _positive(values, a):
    return three_way(values, direction=1, delta=0.05, level=a, adjusted_level=a)


def test_the_looks_spend_exactly_alpha_and_more_of_it_where_more_seeds_are_read():
    for looks in LOOKS.values():
        levels = spent_levels(0.05, looks)
        assert sum(levels) == pytest.approx(0.05, abs=1e-15) and all(a > 0 for a in levels)
        assert levels[0] > 0.05 * looks[0] / looks[-1]  # Pocock-type: more than its share of seeds at the first look
    for bad in ((), (1, 3), (3, 3), (5, 3), (2.5, 4)):
        with pytest.raises(InputError, match="looks"):
            spent_levels(0.05, bad)
    with pytest.raises(InputError, match="level"):
        spent_levels(0.5, (3, 5))


def test_a_study_stops_at_its_first_decided_look_and_reads_only_the_seeds_it_needs():
    asked = []
    decided = [0.30, 0.31, 0.29, 9.0, 9.0, 9.0, 9.0, 9.0]
    r = sequential_decision(lambda n: asked.append(n) or decided[:n], _positive, (3, 5, 8), level=0.05)
    assert asked == [3] and r.decision.verdict == "confirmed" and not r.capped and r.seeds_needed is None
    asked.clear()
    close = [0.02, 0.12, 0.07, 0.09, 0.08, 0.06, 0.10, 0.07]  # straddles at 3 seeds, decides with more
    r = sequential_decision(lambda n: asked.append(n) or close[:n], _positive, (3, 5, 8), level=0.05)
    assert asked[0] == 3 and len(asked) > 1 and r.decision.verdict == "confirmed"
    assert [look.n for look in r.looks] == asked and r.looks[-1].level < 0.05


def test_a_study_that_reaches_the_cap_says_how_many_seeds_would_decide():
    spread = [0.0, 0.2, -0.05, 0.15, 0.05, 0.1, -0.02, 0.12]
    r = sequential_decision(lambda n: spread[:n], _positive, (3, 5, 8), level=0.05)
    assert r.capped and r.decision.verdict == "undecided" and r.seeds_needed > 8
    assert r.to_json()["seeds_needed"] == r.seeds_needed and len(r.to_json()["looks"]) == 3
    assert seeds_to_decide([0.1, math.nan], delta=0.05, direction=1, level=0.01) is None  # one finite value


@pytest.mark.parametrize("truth", ["null", "effect"])
def test_the_placebo_counts_the_wrong_verdict_and_the_point_rule_is_miscalibrated(truth):
    placebo = Placebo("positive", truth, "normal", 1.0, (3, 5, 8), 120)
    calibrated = error_rates(placebo)
    point = error_rates(placebo, rule="point")
    assert calibrated["error_rate"] <= 0.05 + 0.03 and sum(calibrated["rates"].values()) == pytest.approx(1.0)
    if truth == "effect":  # the mean alone refutes an effect at its edge about half the time
        assert point["error_interval"][0] > 0.3
    with pytest.raises(InputError, match="rule"):
        error_rates(placebo, rule="vote")
    with pytest.raises(InputError, match="sigma"):
        error_rates(Placebo("positive", truth, "normal", -1.0, (3,), 5))


def test_equivalence_at_its_margin_is_confirmed_rarely():
    rates = error_rates(Placebo("equivalence", "null", "t3", 1.0, (3, 5, 8), 120))
    assert rates["placebo"]["decision"] == "equivalence" and rates["error_rate"] <= 0.08
    assert equivalence_decision([1.0, 1.0, 1.0], delta=1.0).verdict != "confirmed"


def test_the_calibration_claim_is_confirmed_and_its_control_fails():
    from biasaudit.claims.eos.torch.calibration import CLAIMS
    from biasaudit.ledger import Verdict, run_claim

    ev = run_claim(CLAIMS[0])
    assert ev.verdict is Verdict.CONFIRMED, ev.detail
    assert ev.negative_control["all_failed"], ev.negative_control
    assert len(ev.observed["rows"]) == 8


# ----------------------------------------------------------------------------- network claims take looks

@pytest.fixture
def kink_values(monkeypatch):
    """The kink claims' sweeps replaced: ``box[arch]`` lists each seed's kink multiple (cycled to the seeds asked)."""
    from biasaudit.claims.eos.torch import _study
    from tests.test_eos_architectures import e2_sweep

    box: dict = {}
    asked: list = []

    def sweeps(arch, loss, tier, eps=None, seed_offset=0, n_seeds=None):
        n = n_seeds or len(_study._configs(arch, loss, tier))
        asked.append((arch, n))
        kinks = box.get(arch, [1.0 + 0.001 * i for i in range(n)])
        return [e2_sweep(kink=kinks[i % len(kinks)], gap=0.0) for i in range(n)]

    monkeypatch.setattr(_study, "seed_sweeps", sweeps)
    monkeypatch.setattr(_study, "numerics_sweep", lambda sweep, config: {**sweep, "gf": {"eta_c": 0.25}})
    monkeypatch.setattr(_study, "_dense_kink_offset", lambda config: 0.0)
    _study.study.cache_clear()
    yield box, asked
    _study.study.cache_clear()


def _kink_claim(arch):
    from biasaudit.claims.eos.torch.architectures import CLAIMS

    return next(c for c in CLAIMS if c.id == f"eos.torch.e2.{arch}")


def test_a_network_claim_adds_seeds_while_it_straddles_and_records_its_looks(kink_values):
    from biasaudit.ledger import Verdict, run_claim

    box, asked = kink_values
    box["cnn"] = [1.0, 1.03, 0.985, 1.005, 0.995]  # 3 seeds straddle the 5 % margin, 5 decide
    ev = run_claim(_kink_claim("cnn"))
    looks = ev.observed["sequential"]["looks"]
    assert ev.verdict is Verdict.CONFIRMED, ev.detail
    assert [look["n"] for look in looks] == list(LOOKS["quick"]) and looks[0]["verdict"] == "undecided"
    assert ("cnn", looks[-1]["n"]) in asked and ev.observed["n_seeds"] == looks[-1]["n"]
    assert ev.observed["statistic"]["seeds"] == list(range(looks[-1]["n"])) and "looks: 3 seeds" in ev.detail


def test_a_network_claim_at_the_cap_states_the_seeds_a_decision_would_need(kink_values):
    from biasaudit.ledger import Verdict, run_claim

    box, _ = kink_values
    box["vit"] = [1.0, 1.09, 0.96, 1.07, 0.94]
    ev = run_claim(_kink_claim("vit"))
    seq = ev.observed["sequential"]
    assert ev.verdict is Verdict.UNDECIDED and seq["capped"]
    assert [look["n"] for look in seq["looks"]] == list(LOOKS["quick"])
    assert "the tier's cap" in ev.detail and (seq["seeds_needed"] is None or seq["seeds_needed"] > 5)
    from biasaudit.validation.sequential import tier_that_decides

    tier = tier_that_decides(seq["seeds_needed"])
    assert seq["tier_that_decides"] == tier != "quick"
    assert (f"within the {tier} tier's cap" if tier else ("beyond every tier's cap" if seq["seeds_needed"]
                                                          else "no count up to")) in ev.detail


def test_no_seeds_are_added_where_the_positive_control_already_holds_the_claim_undecided(kink_values, monkeypatch):
    from biasaudit.claims.eos.torch import _study
    from biasaudit.ledger import Verdict, run_claim

    box, asked = kink_values
    monkeypatch.setattr(_study, "_dense_kink_offset", lambda config: 0.12)  # the numerics disagree: refuted control
    box["cnn"] = [1.0, 1.03, 0.985, 1.005, 0.995]
    ev = run_claim(_kink_claim("cnn"))
    assert ev.verdict is Verdict.UNDECIDED and ev.observed["positive_control"]["verdict"] == "refuted"
    assert [look["n"] for look in ev.observed["sequential"]["looks"]] == [3] and ("cnn", 5) not in asked
    assert "another gate holds it undecided" in ev.detail


# ----------------------------------------------------------------------------- identity across an interruption

_TINY_E2 = dict(dataset="teacher", n_train=40, n_test=40, width=6, eps=0.05, coarse=(0.75, 1.25, 2.0), fine=(),
                gf_every=20, track_every=0, max_steps=400, dtype="float64", hvp_method="double-backward")


class _Interrupted(BaseException):
    """Raised from inside a GD run, as a kill would stop it."""


def _tiny_kink_record(monkeypatch, cache, *, interrupt_seed=None):
    """``eos.torch.e2.fcn`` on a tiny teacher FCN with its own cache ``cache``, held undecided at every look (a level
    of 1e-9), so it reads the tier's first look and then adds seeds up to the cap; with ``interrupt_seed``, the first
    GD run of that seed's sweep raises (after the seeds before it and that seed's proxy are cached)."""
    from biasaudit.claims.eos.torch import _study
    from biasaudit.ledger import run_claim
    from biasaudit.validation import eos_config, eos_runs, gd_trainer

    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(cache))
    monkeypatch.setitem(eos_config.ARCH_SWEEP_CONFIGS["quick"], "fcn", eos_config.SweepConfig(**_TINY_E2))
    monkeypatch.setattr(_study, "LEVEL", 1e-9)
    monkeypatch.setattr(_study, "_positive_control", lambda family, tier: {"claim": "positive", "verdict": "confirmed"})
    real = gd_trainer.train_gd

    def train(problem, eta, **kw):
        if problem.description["seed"] == interrupt_seed:
            raise _Interrupted
        return real(problem, eta, **kw)

    monkeypatch.setattr(gd_trainer, "train_gd", train)
    _study.study.cache_clear()
    eos_runs._MEMO.clear()
    try:
        return run_claim(_kink_claim("fcn")).to_json()
    finally:
        _study.study.cache_clear()
        eos_runs._MEMO.clear()
        monkeypatch.setattr(gd_trainer, "train_gd", real)


def test_a_network_claim_interrupted_between_its_looks_resumes_to_the_records_of_an_uninterrupted_run(
        tmp_path, monkeypatch):
    from biasaudit.plumbing import runcache

    clean = _tiny_kink_record(monkeypatch, tmp_path / "clean")
    looks = clean["observed"]["sequential"]["looks"]
    assert [look["n"] for look in looks] == list(LOOKS["quick"]) and clean["verdict"] == "undecided"
    first, cap = LOOKS["quick"][0], LOOKS["quick"][-1]
    with pytest.raises(_Interrupted):  # stopped inside the second look, the seed after the first look's last
        _tiny_kink_record(monkeypatch, tmp_path / "resumed", interrupt_seed=first + 1)
    runcache.reset_run_counts()
    resumed = _tiny_kink_record(monkeypatch, tmp_path / "resumed")
    counts = runcache.run_counts()
    n_grid = len(_TINY_E2["coarse"])
    # what was cached is read, not rerun: the interrupted seed's GD runs (its proxy was cached), then every later seed's
    # proxy and GD runs
    assert counts["computed"] == n_grid + (cap - first - 2) * (n_grid + 1), counts
    drop = ("elapsed_s", "runs")
    assert {k: v for k, v in resumed.items() if k not in drop} == {k: v for k, v in clean.items() if k not in drop}
