"""Every experiment claim (ours and plugins') is a pre-registered study: the contract test walks the registry.

An effect claim names one statistic, a positive control that reads the same statistic (a registered claim whose
role is ``positive_control``), data controls that read other runs than its own comparison (an A/A control always;
RandSAM for a SAM claim), an equivalence margin with its reason, and no negative control (a wrong prediction of
its own statistic would be decided by its own rule: the logical complement cannot fail). Implementation
cross-checks carry the role ``cross_check``. Claims not yet brought under the contract are listed in
:data:`PENDING`, each with the reason, and the list may only shrink.
"""

from __future__ import annotations

import pytest

from biasaudit.registry import all_claims

EXPERIMENTS = [c for c in all_claims() if c.kind == "experiment"]
BY_ID = {c.id: c for c in all_claims()}

# Not yet under the contract, with the reason (the list may only shrink).
PENDING: dict[str, str] = {}
CROSS_CHECK_SUFFIXES = ("matches_numerics", "vs_dense", "vs_placebo")
# Effect claims and positive controls with no data control, with the reason (the list may only shrink).
NO_DATA_CONTROL = {
    "eos.torch.central_flow.fcn": "the seeds are its only runs; below eta_c its flow (Euler, h = eta) is GD itself",
    "eos.torch.central_flow.diag": "its check is the solve_ivp flow itself",
}


@pytest.mark.parametrize("claim", [c for c in EXPERIMENTS if c.id not in PENDING], ids=lambda c: c.id)
def test_experiment_claim_declares_its_study(claim):
    contract = claim.contract
    assert contract is not None, f"{claim.id}: no experiment contract"
    if claim.id.endswith(CROSS_CHECK_SUFFIXES):
        assert contract.role == "cross_check"
        return
    assert contract.role in ("effect", "positive_control"), claim.id
    assert claim.negative_control == (), f"{claim.id}: a negative control that restates the claim's own rule"
    names = {c.name for c in contract.data_controls}
    assert names or claim.id in NO_DATA_CONTROL, f"{claim.id}: no data control"
    for control in contract.data_controls:  # a control reads other runs, never the claim's own seeds shifted
        assert not any("seed s+1" in arm or "seed s + 1" in arm for arm in control.arms), \
            f"{claim.id}: {control.name} is a function of the claim's own seed values"
    if claim.paper == "sam":
        assert "randsam" in names, f"{claim.id}: a SAM claim needs the RandSAM placebo"
    for control in contract.data_controls:
        assert tuple(control.arms) != tuple(contract.primary_arms), f"{claim.id}: {control.name} reads its own comparison"
    assert contract.delta > 0 and contract.delta_reason.strip()
    if contract.role == "effect":
        pc = BY_ID.get(contract.positive_control)
        assert pc is not None, f"{claim.id}: positive control {contract.positive_control} is not registered"
        assert pc.contract is not None and pc.contract.role == "positive_control"
        assert pc.contract.statistic == contract.statistic, f"{claim.id}: its positive control reads another statistic"


def test_cross_checks_are_marked():
    for claim in EXPERIMENTS:
        if claim.id.endswith(CROSS_CHECK_SUFFIXES) and claim.id not in PENDING:
            assert claim.contract is not None and claim.contract.role == "cross_check", claim.id


def test_pending_lists_only_registered_experiment_claims():
    assert set(PENDING) <= {c.id for c in EXPERIMENTS}


def test_the_sam_ladder_has_its_positive_control_and_its_failing_side():
    assert BY_ID["sam.torch.minor_first_major_last.diag"].contract.role == "positive_control"
    for model in ("gated_cnn", "cnn"):
        assert BY_ID[f"sam.torch.minor_first_major_last.{model}"].contract.positive_control == \
            "sam.torch.minor_first_major_last.diag"
    assert "sam.torch.minor_outlasts_target_near_boundary.diag" in BY_ID


def test_the_collapse_claims_read_the_contrast_with_the_diagonal_network_as_positive_control():
    assert BY_ID["sam.torch.diag_collapse_boundary"].contract.role == "positive_control"
    for design in ("cnn", "patch", "resnet", "fashion", "cifar10", "svhn"):
        contract = BY_ID[f"sam.torch.{design}_collapse_boundary"].contract
        assert contract.positive_control == "sam.torch.diag_collapse_boundary"
        assert contract.statistic == "biasaudit.validation.sam_collapse_stats:collapse_contrast"


def test_paper_2s_architecture_claims_read_the_kink_with_their_positive_control():
    e2 = [c for c in EXPERIMENTS if c.id.startswith(("eos.torch.e1.", "eos.torch.e2.", "eos.torch.e3.",
                                                     "eos.torch.e4."))]
    assert {c.id for c in e2} >= {f"eos.torch.e2.{a}" for a in ("diag", "fcn", "fcn_relu", "cnn", "vit", "resnet",
                                                              "resnet_nobn", "resnet_fixednorm")}
    assert BY_ID["eos.torch.e2.diag"].contract.role == "positive_control"
    for claim in e2:
        family = claim.id.rsplit(".", 2 if claim.id.endswith(".ce") else 1)[0]
        shared = {"eos.torch.e3.adaptive_sharpness_rises": "eos.torch.e3.adaptive_sharpness",  # the other side
                  "eos.torch.e1.tracking_fails_small_eps": "eos.torch.e1.tracking",
                  "eos.torch.e2.at_2eps": "eos.torch.e2", "eos.torch.e2.above_at_2eps": "eos.torch.e2"}
        assert claim.contract.positive_control in (None, f"{shared.get(family, family)}.diag")
        assert {c.name for c in claim.contract.data_controls} == {"null_grid"}
    assert BY_ID["eos.torch.e2.cnn.ce"].contract.statistic == "biasaudit.validation.eos_stats:kink_offset"


def test_the_network_central_flow_has_its_positive_control():
    assert BY_ID["eos.torch.central_flow.diag"].contract.role == "positive_control"
    fcn = BY_ID["eos.torch.central_flow.fcn"]
    assert fcn.contract.role == "effect" and fcn.contract.positive_control == "eos.torch.central_flow.diag"
    assert fcn.id not in PENDING
