"""The experiment tier travels from the audit profile to the experiment claims."""

import os

import pytest

from biasaudit.plumbing import InputError
from biasaudit.tier import TIER_VARIABLE, experiment_tier, tier_of_profile


def test_tier_of_profile_sets_and_restores(monkeypatch):
    monkeypatch.delenv(TIER_VARIABLE, raising=False)
    with tier_of_profile("thorough") as tier:
        assert tier == "full" and experiment_tier() == "full"
    assert TIER_VARIABLE not in os.environ and experiment_tier() == "quick"
    with tier_of_profile("ci"):
        assert experiment_tier("full") == "quick"


def test_sam_torch_tier_follows_the_audit_tier(monkeypatch):
    from biasaudit.claims.sam.torch._common import TIER_VARIABLE as SAM_VARIABLE, sam_torch_tier as sam_tier

    monkeypatch.delenv(SAM_VARIABLE, raising=False)
    with tier_of_profile("thorough"):
        assert sam_tier() == "full"
    monkeypatch.setenv(SAM_VARIABLE, "quick")  # the specific variable wins
    with tier_of_profile("thorough"):
        assert sam_tier() == "quick"


def test_unknown_tier_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(TIER_VARIABLE, "huge")
    with pytest.raises(InputError, match=f"^{TIER_VARIABLE}: must be one of quick, full"):
        experiment_tier()


@pytest.mark.parametrize("claim_id", ["eos.torch.e5.u_shape.fcn", "sam.torch.minor_first_major_last.gated_cnn",
                                      "sam.torch.cnn_collapse_boundary"])
def test_experiment_claims_record_the_tier_that_runs(monkeypatch, claim_id):
    """A case's ``tier`` parameter is the tier its experiment runs at, not a fixed "quick"."""
    import numpy as np

    from biasaudit.registry import get_claim
    from biasaudit.claims.sam.torch._common import TIER_VARIABLE as SAM_VARIABLE

    monkeypatch.delenv(TIER_VARIABLE, raising=False)
    monkeypatch.delenv(SAM_VARIABLE, raising=False)
    domain = get_claim(claim_id).domain
    assert domain.sample(np.random.default_rng(0))["tier"] == "quick"
    with tier_of_profile("thorough"):
        assert domain.sample(np.random.default_rng(0))["tier"] == "full"
    if claim_id.startswith("sam.torch."):
        monkeypatch.setenv(SAM_VARIABLE, "quick")  # the family's own variable wins, in the record too
        with tier_of_profile("thorough"):
            assert domain.sample(np.random.default_rng(0))["tier"] == "quick"
