"""``biasaudit list``: theory and experiment claims with paper, source, kind and origin."""

import json

from biasaudit.cli import main
from biasaudit.registry import all_claims


def test_list_json_has_every_claim_of_both_kinds(capsys):
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in rows} == {c.id for c in all_claims()}
    assert {r["kind"] for r in rows} == {"theory", "experiment"}
    origins = {r["id"]: r["origin"] for r in rows}
    assert origins["eos.s_gf.large_init"] == "stated"
    assert origins["eos.s_gf.large_init_continuous"] == "derived"
    assert origins["sam.l2.slowdown_near_alpha_c_only"] == "reported"


def test_list_filters_and_prints_a_table(capsys):
    assert main(["list", "--kind", "experiment", "--paper", "eos"]) == 0
    out = capsys.readouterr().out
    assert "eos.torch.e4.tracking.fcn" in out and "sam." not in out.split("\n\n")[0]
    assert main(["list", "--claims", ""]) == 2
