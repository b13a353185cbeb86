"""E2 across architectures (notes/validation-eos.md): the per-architecture claims, their sweeps, the exponential
gradient-flow proxy and the top-k eigenpair block it uses."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch

import biasaudit.claims.eos.torch.architectures as arch_claims
from biasaudit.ledger import Verdict, run_claim
from biasaudit.plumbing import InputError
from biasaudit.figures import eos_torch
from biasaudit.validation import eos_config, eos_data, eos_runs, eos_stats
from biasaudit.validation.gd_trainer import make_problem
from biasaudit.validation.gf_proxy import gradient_flow_sharpness
from biasaudit.validation.sharpness import dense_hessian, top_eigenpairs

QUICK_MULTS = (0.75, 0.93, 0.97, 1.03, 1.07, 1.25, 2.0)


def e2_sweep(s_gf=8.0, kink=1.0, gap=0.02, mults=QUICK_MULTS, reached=True):
    """Final S = s_GF below kink·η_c, (2/η)(1 + gap) above: a sweep whose kink sits at ``kink``·η_c."""
    eta_c = 2 / s_gf
    runs = []
    for m in mults:
        eta = m * eta_c
        S = s_gf / kink if m < kink else 2 / eta * (1 + gap)
        runs.append({"eta": eta, "multiple": m, "outcome": "converged", "steps": 100,
                     "final": {"S": {"value": S, "converged": True}, "l1": 1.0}})
    gf = {"s_gf": s_gf, "eta_c": eta_c, "eps": 2e-2, "reached_eps": reached, "all_converged": True, "path": [],
          "steps": 100}
    return {"config": {}, "gf": gf, "runs": runs, "dir": ""}


# ----------------------------------------------------------------------------- the verdict numbers

def test_the_kink_and_tracking_statistics_read_a_sweep():
    sweep = e2_sweep(kink=1.0, gap=0.02)
    assert abs(eos_stats.kink_offset(sweep, 0.25)) < 0.03
    assert eos_stats.eos_median_gap(sweep, 0.25) == pytest.approx(0.02)


def test_the_statistics_see_either_part_fail():
    assert eos_stats.kink_offset(e2_sweep(kink=1.12, gap=0.0), 0.25) > arch_claims.KINK_FAMILY.delta
    assert eos_stats.eos_median_gap(e2_sweep(gap=0.3), 0.25) > arch_claims.TRACKING_FAMILY.delta


def test_the_kink_is_undecided_with_too_few_runs():
    assert math.isnan(eos_stats.kink_offset(e2_sweep(mults=(0.9, 1.1)), 0.25))


# ----------------------------------------------------------------------------- the claims (seed studies)


def _cycle(seq, n):
    """The first n of ``seq`` repeated (a box's per-seed list for a study that asks for more seeds), or None."""
    return [seq[i % len(seq)] for i in range(n)] if seq else None


@pytest.fixture
def fake_sweeps(monkeypatch):
    """Every seed's sweep from ``box`` (arch -> list of per-seed sweeps, default ideal), the numba references
    equal to the torch readings of the theory model (its positive controls then read 0)."""
    from biasaudit.claims.eos.torch import _study

    box = {}

    def sweeps(arch, loss, tier, eps=None, seed_offset=0, n_seeds=None):
        n = n_seeds or len(_study._configs(arch, loss, tier))
        return _cycle(box.get((arch, eps)) or box.get(arch), n) or [e2_sweep(kink=1.0 + 0.001 * i) for i in range(n)]

    monkeypatch.setattr(_study, "seed_sweeps", sweeps)
    monkeypatch.setattr(_study, "numerics_sweep", lambda sweep, config: {**sweep, "gf": {"eta_c": 0.25}})
    monkeypatch.setattr(_study, "_dense_kink_offset", lambda config: 0.0 if "toy_kink" not in box else box["toy_kink"])
    _study.study.cache_clear()
    yield box
    _study.study.cache_clear()


def _claim(cid):
    return next(c for c in arch_claims.CLAIMS if c.id == cid)


def test_three_statistics_on_seven_architectures_and_two_losses_with_their_positive_controls():
    ids = {c.id for c in arch_claims.CLAIMS}
    for prefix in ("eos.torch.e2", "eos.torch.e1.tracking", "eos.torch.e1.plateau"):
        assert f"{prefix}.diag" in ids
        for arch in ("fcn", "fcn_relu", "cnn", "vit", "resnet", "resnet_nobn", "resnet_fixednorm"):
            assert {f"{prefix}.{arch}", f"{prefix}.{arch}.ce"} <= ids
    for claim in arch_claims.CLAIMS:
        assert claim.negative_control == () and claim.contract is not None
        units = claim.runs()
        if ".resnet_nobn" in claim.id:  # the full tier only
            assert units == ()
            continue
        assert units[0].run_id.endswith("-gf") and len(units) >= 3 * (1 + len(QUICK_MULTS))


def test_the_resnet_without_batchnorm_is_out_of_scope_at_the_quick_tier_with_its_reason():
    ev = run_claim(_claim("eos.torch.e2.resnet_nobn"))
    assert ev.verdict is Verdict.OUT_OF_SCOPE and "sharpness" in ev.detail


@pytest.mark.parametrize("claim", arch_claims.CLAIMS, ids=lambda c: c.id)
def test_every_claim_confirms_ideal_sweeps_with_its_contract_fields(fake_sweeps, claim, monkeypatch):
    from biasaudit.contract import REQUIRED_FIELDS

    if ".resnet_nobn" in claim.id:
        from biasaudit.tier import TIER_VARIABLE

        monkeypatch.setenv(TIER_VARIABLE, "full")
    ev = run_claim(claim)
    failing_side = ("tracking_fails" in claim.id or "above_at_2eps" in claim.id)  # the other side of a claim
    expected = Verdict.REFUTED if failing_side else Verdict.CONFIRMED  # ideal sweeps track 2/eta, kink at eta_c
    assert ev.verdict is expected, ev.detail
    assert set(REQUIRED_FIELDS) <= set(ev.observed) and ev.observed["n_seeds"] >= 3
    assert {c["name"] for c in ev.observed["data_controls"]} == {"null_grid"}


def test_cross_entropy_past_the_peak_is_read_on_its_own_sweeps_and_sees_a_gap_above_the_band(fake_sweeps):
    claim = _claim("eos.torch.e1.tracking_fails_small_eps.fcn.ce")
    from biasaudit.claims.eos.torch import _study

    assert all(c.eps == arch_claims.CE_SMALL_EPS for c in _study._configs("fcn", "ce", "quick", 0.05))
    assert claim.contract.positive_control == "eos.torch.e1.tracking.diag"
    fake_sweeps[("fcn", arch_claims.CE_SMALL_EPS)] = [e2_sweep(gap=0.35 + 0.01 * i) for i in range(3)]
    ev = run_claim(claim)
    assert ev.verdict is Verdict.CONFIRMED, ev.detail
    assert "eos_median_gap - 0.1" in ev.detail
    fake_sweeps[("fcn", arch_claims.CE_SMALL_EPS)] = [e2_sweep(gap=g) for g in (0.09, 0.11, 0.10)]
    _study.study.cache_clear()
    assert run_claim(claim).verdict is Verdict.REFUTED  # within 0.05 of the band's edge: no effect


@pytest.mark.parametrize("kink", [0.88, 1.12])
def test_a_kink_off_by_12_percent_either_way_is_refuted(fake_sweeps, kink):
    fake_sweeps["cnn"] = [e2_sweep(kink=kink + 0.002 * i, gap=0.0) for i in range(3)]
    assert run_claim(_claim("eos.torch.e2.cnn")).verdict is Verdict.REFUTED


def test_sharpness_that_does_not_follow_2_over_eta_is_refuted(fake_sweeps):
    fake_sweeps["resnet"] = [e2_sweep(gap=0.25 + 0.01 * i) for i in range(3)]
    assert run_claim(_claim("eos.torch.e1.tracking.resnet")).verdict is Verdict.REFUTED


def test_a_flow_side_below_the_plateau_is_refuted(fake_sweeps):
    sweeps = [e2_sweep() for _ in range(3)]
    for i, sw in enumerate(sweeps):
        for r in sw["runs"]:
            if r["multiple"] < 0.95:
                r["final"]["S"]["value"] *= 0.75 - 0.01 * i
    fake_sweeps["vit"] = sweeps
    assert run_claim(_claim("eos.torch.e1.plateau.vit")).verdict is Verdict.REFUTED


def test_a_failed_positive_control_leaves_every_network_claim_undecided(fake_sweeps):
    fake_sweeps["toy_kink"] = 0.12  # the numerics put the kink 12 % away from where the torch pipeline reads it
    assert run_claim(_claim("eos.torch.e2.diag")).verdict is Verdict.REFUTED
    ev = run_claim(_claim("eos.torch.e2.fcn"))
    assert ev.verdict is Verdict.UNDECIDED and "positive control" in ev.detail
    assert ev.observed["positive_control"]["verdict"] == "refuted"


def test_seeds_that_disagree_leave_the_claim_undecided_by_its_own_interval(fake_sweeps):
    fake_sweeps["cnn"] = [e2_sweep(kink=k) for k in (0.97, 1.04, 0.9)]
    ev = run_claim(_claim("eos.torch.e2.cnn"))
    assert ev.verdict is Verdict.UNDECIDED and "straddles the margin" in ev.detail
    assert all(c["equivalent"] for c in ev.observed["data_controls"])  # no control gates it: the seeds' spread does


def test_the_null_grid_fails_when_the_edge_comes_before_eta_c(fake_sweeps):
    fake_sweeps["fcn"] = [e2_sweep(kink=0.7 + 0.002 * i, gap=0.0) for i in range(3)]
    ev = run_claim(_claim("eos.torch.e1.tracking.fcn"))
    null = next(c for c in ev.observed["data_controls"] if c["name"] == "null_grid")
    assert not null["equivalent"] and ev.verdict is Verdict.UNDECIDED


def test_a_claim_is_undecided_when_the_gf_proxy_did_not_reach_eps(fake_sweeps):
    fake_sweeps["vit"] = [e2_sweep(reached=False) for _ in range(3)]
    assert run_claim(_claim("eos.torch.e2.vit")).verdict is Verdict.UNDECIDED


# ----------------------------------------------------------------------------- the sweeps' problems

@pytest.mark.parametrize("arch,shape", [("cnn", (1, 7, 7)), ("resnet", (1, 7, 7)), ("vit", (1, 14, 14)),
                                        ("fcn", (784,))])
def test_quick_arch_configs_build_small_problems(arch, shape):
    config = eos_config.arch_config("quick", arch)
    problem = eos_data._build_problem(config)
    assert tuple(problem.X_train.shape[1:]) == shape
    assert problem.train_loss.p < 30_000
    assert math.isfinite(float(problem.train_loss(problem.theta_init)))


def test_arch_config_rejects_unknown_arch_and_pool():
    with pytest.raises(InputError, match="arch"):
        eos_config.arch_config("quick", "mlp-mixer")
    with pytest.raises(InputError, match="image_pool"):
        eos_config.SweepConfig(arch="cnn", image_pool=0)
    with pytest.raises(InputError, match="image_pool"):
        eos_data._pool(np.zeros((2, 1, 28, 28)), 3)
    with pytest.raises(InputError, match="model_kwargs"):
        eos_config.SweepConfig(arch="cnn", model_kwargs=({"width": 8},))


def test_default_image_pool_and_model_kwargs_leave_the_config_key_unchanged():
    import dataclasses

    base = eos_config.SweepConfig()
    assert "image_pool" not in base.key() and base.key() == dataclasses.replace(base, image_pool=1).key()
    assert base.key() != dataclasses.replace(base, image_pool=4).key()


def test_pool_averages_blocks():
    X = np.arange(16, dtype=float).reshape(1, 1, 4, 4)
    assert eos_data._pool(X, 2)[0, 0].tolist() == [[2.5, 4.5], [10.5, 12.5]]


# ----------------------------------------------------------------------------- eigenpair block and the exp proxy

def _tiny_problem(dtype="float64", width=6, n=40):
    data = eos_data.teacher_dataset(n, 10, d=5, num_classes=3, seed=1)
    return make_problem("fcn", "mse", data.X_train, data.y_train, data.X_test, data.y_test, num_classes=3,
                        dtype=dtype, width=width, depth=2, activation="tanh", seed=1)


def test_top_eigenpairs_match_the_dense_hessian_cold_and_warm():
    problem = _tiny_problem()
    f, theta = problem.train_loss, problem.theta_init
    ev = np.sort(np.linalg.eigvalsh(dense_hessian(f, theta)))[::-1]
    cold = top_eigenpairs(f, theta, 4, tol=1e-10)
    assert cold.solver == "eigsh" and np.allclose(cold.values, ev[:4], rtol=1e-6)
    moved = theta + 1e-3 * torch.randn_like(theta)
    ev_moved = np.sort(np.linalg.eigvalsh(dense_hessian(f, moved)))[::-1]
    warm = top_eigenpairs(f, moved, 4, block=cold.vectors, tol=1e-8, maxiter=200)
    assert warm.solver == "lobpcg" and np.allclose(warm.values, ev_moved[:4], rtol=1e-4)
    assert np.allclose(warm.vectors.T @ warm.vectors, np.eye(4), atol=1e-6)
    with pytest.raises(InputError, match="k"):
        top_eigenpairs(f, theta, f.p)


def test_exp_proxy_agrees_with_the_explicit_proxy_at_small_steps():
    """Exponential Euler on the top-k block and explicit GD follow the same flow: at a small step both give the
    same s_GF (to 1 %), and exp takes fewer steps."""
    problem = _tiny_problem()
    gd = gradient_flow_sharpness(problem, 0.05, method="gd", fraction=0.1, every=20)
    exp = gradient_flow_sharpness(problem, 0.05, method="exp", fraction=0.1, every=20, deflate=3)
    assert gd.reached_eps and exp.reached_eps
    assert exp.s_gf == pytest.approx(gd.s_gf, rel=0.01)
    assert exp.deflate == 3 and exp.n_grad == exp.steps + 1 + exp.rejected and exp.n_hvp > 0
    assert exp.steps < gd.steps


def test_exp_euler_step_is_the_exact_flow_along_the_block_of_a_quadratic():
    """L = ½ Σ λ_i θ_i² (diagonal): the block's coordinates decay by e^{−hλ}, the rest by (1 − hλ)."""
    from biasaudit.validation.gf_proxy import exp_euler_step

    lam = torch.tensor([50.0, 20.0, 0.5, 0.1, -0.2], dtype=torch.float64)
    theta = torch.tensor([1.0, -2.0, 3.0, 0.5, 1.0], dtype=torch.float64)
    V = torch.eye(5, dtype=torch.float64)[:, :2]
    h = 1.0
    out = exp_euler_step(theta, lam * theta, V, lam[:2].numpy(), h)
    expected = torch.cat([theta[:2] * torch.exp(-h * lam[:2]), theta[2:] * (1 - h * lam[2:])])
    assert torch.allclose(out, expected, rtol=1e-12, atol=1e-14)
    # a rotated block gives the same step; λ → 0 gives the plain Euler step
    Q, _ = torch.linalg.qr(torch.randn(5, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))
    A = Q @ torch.diag(lam) @ Q.T
    out_rot = exp_euler_step(Q @ theta, A @ (Q @ theta), Q[:, :2], lam[:2].numpy(), h)
    assert torch.allclose(out_rot, Q @ expected, rtol=1e-10, atol=1e-12)
    zero = exp_euler_step(theta, theta, V, np.zeros(2), 0.1)
    assert torch.allclose(zero, theta - 0.1 * theta)


def test_deflate_is_validated():
    problem = _tiny_problem()
    with pytest.raises(InputError, match="deflate"):
        gradient_flow_sharpness(problem, 0.05, method="gd", deflate=3)
    with pytest.raises(InputError, match="deflate"):
        gradient_flow_sharpness(problem, 0.05, method="exp", deflate=problem.train_loss.p)


def test_e2_figure_draws_every_architecture(tmp_path):
    sweeps = {"fcn": e2_sweep(), "cnn": e2_sweep(s_gf=17.0), "resnet": e2_sweep(kink=0.9), "vit": e2_sweep(s_gf=60.0)}
    (path,) = eos_torch.make_e2_figure(tmp_path, sweeps=sweeps)
    assert path.endswith("eos_e2_architectures.png") and (tmp_path / "eos_e2_architectures.png").stat().st_size > 5000


def test_e2_figure_job_illustrates_the_kink_claims():
    from biasaudit.figures import all_figures

    job = next(j for j in all_figures() if j.id == "eos.torch.e2_architectures")
    assert all(job.illustrates(c.id) for c in arch_claims.CLAIMS if c.id.startswith("eos.torch.e2."))


def _swept_config(monkeypatch, *argv):
    """The sweep configuration ``biasaudit validate eos *argv`` would run (stopped before any training)."""
    from biasaudit.cli import main

    seen = {}

    def fake_run_sweep(config, out=None, progress=None):
        seen["config"] = config
        raise SystemExit(0)

    monkeypatch.setattr(eos_runs, "run_sweep", fake_run_sweep)
    with pytest.raises(SystemExit):
        main(["validate", "eos", *argv, "--device", "cpu"])
    return seen["config"]


def test_cli_validate_eos_arch_uses_the_e2_sizes(monkeypatch, capsys):
    """`validate eos --arch cnn` sweeps the audited quick CNN (7 x 7, n = 100), with exp's proxy settings."""
    config = _swept_config(monkeypatch, "--arch", "cnn", "--gf-method", "exp")
    assert (config.arch, config.image_pool, config.n_train, dict(config.model_kwargs)) == ("cnn", 4, 100, {"width": 8})
    assert (config.gf_method, config.gf_fraction, config.gf_every) == ("exp", 0.25, 20)


@pytest.mark.parametrize("arch", ["fcn", "cnn", "resnet", "vit", "fcn_relu", "resnet_nobn", "resnet_fixednorm"])
def test_cross_entropy_per_architecture_is_the_mse_setting_with_ce(arch):
    from biasaudit.validation.eos_config import arch_config

    for tier in ("quick", "full"):
        mse, ce = arch_config(tier, arch), arch_config(tier, arch, "ce")
        assert (ce.loss, ce.eps, ce.gf_every) == ("ce", 0.25, 5)
        assert (ce.arch, ce.n_train, ce.image_pool, ce.model_kwargs, ce.multiples()) == \
            (mse.arch, mse.n_train, mse.image_pool, mse.model_kwargs, mse.multiples())


def test_the_relu_fcn_is_the_e1_fcn_with_relu():
    tanh, relu = eos_config.arch_config("quick", "fcn"), eos_config.arch_config("quick", "fcn_relu")
    assert relu.activation == "relu" and relu.arch == "fcn"
    assert dataclasses.replace(relu, activation=tanh.activation) == tanh and relu.key() != tanh.key()


def test_the_fixed_norm_resnet_is_the_batchnorm_resnet_with_its_statistics_held():
    from biasaudit.validation.eos_config import arch_config

    for tier in ("quick", "full"):
        bn, fixed = arch_config(tier, "resnet"), arch_config(tier, "resnet_fixednorm")
        assert fixed.arch == bn.arch == "resnet" and dict(fixed.model_kwargs)["norm"] == "fixed"
        assert dict(fixed.model_kwargs)["width"] == dict(bn.model_kwargs)["width"]
        assert fixed.multiples() == bn.multiples() and fixed.eps == bn.eps
    assert arch_config("quick", "resnet_fixednorm").n_train == 100  # its flow sharpens: n = 300 does not fit


@pytest.mark.parametrize("arch,loss", [("resnet_fixednorm", "ce"), ("fcn_relu", "mse"), ("fcn", "ce")])
def test_cli_validate_eos_runs_every_e2_architecture_with_its_setting(monkeypatch, arch, loss):
    from biasaudit.validation.eos_config import arch_config, tier_config

    config = _swept_config(monkeypatch, "--arch", arch, "--loss", loss)
    expected = tier_config("quick", "ce") if arch == "fcn" else arch_config("quick", arch, loss)
    assert dataclasses.replace(config, device="cpu") == dataclasses.replace(expected, device="cpu")


def test_cli_seed_study_runs_the_audits_sweeps_and_respects_the_proxy_check(monkeypatch, capsys):
    from biasaudit.cli import main
    from biasaudit.validation.eos_config import arch_config

    config = _swept_config(monkeypatch, "--arch", "fcn", "--loss", "ce", "--seeds", "3")
    assert dataclasses.replace(config, device="cpu") == dataclasses.replace(arch_config("quick", "fcn", "ce"),
                                                                            device="cpu")  # the audit's E2 sweep

    def ideal(reached):
        sweep = eos_stats.example_sweep((0.5, 0.75, 0.93, 0.97, 1.03, 1.07, 1.25, 2.0))  # eta_c = 1, kink at 1
        sweep["config"], sweep["gf"] = {}, {"s_gf": 2.0, "eta_c": 1.0, "eps": 0.01, "steps": 10, "reached_eps": reached,
                       "all_converged": True}
        return sweep

    for reached, verdict in ((True, "confirmed"), (False, "undecided")):
        monkeypatch.setattr(eos_runs, "run_sweep", lambda config, out=None, progress=None: ideal(reached))
        assert main(["validate", "eos", "--seeds", "3", "--device", "cpu", "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["statistics"]["kink_offset"]["decision"]["verdict"] == verdict
        assert bool(summary["problems"]) is not reached
