"""Claim coverage (`biasaudit check --coverage`): the lines, branches and public functions of theory/ and
numerics/ that the claims' verdicts execute."""

import json

import pytest

from biasaudit.claim_coverage import ENVIRONMENT, LIBRARY_SURFACE, claim_coverage, problems
from biasaudit.cli import main

CHEAP = "eos.hessian.formula"  # theory.eos_model only, no numba


@pytest.fixture(scope="module")
def one_claim():
    return claim_coverage([CHEAP])


def test_the_report_counts_what_the_claim_ran_and_nothing_this_process_imported(one_claim):
    import biasaudit.numerics.flows  # noqa: F401 - imported here, never by the claim: it must not count

    report = one_claim
    assert report["verdicts"] == {CHEAP: "confirmed"}
    model = report["modules"]["theory/eos_model.py"]
    assert 0 < model["executed"] <= model["lines"] and 0 < model["line_share"] <= 1
    assert report["modules"]["numerics/flows.py"]["executed"] == 0
    assert 0 < report["line_share"] < 0.95 and report["lines"] == sum(m["lines"] for m in report["modules"].values())
    unreached = {row["function"]: row["reason"] for row in report["unreached"]}
    assert "numerics.flows.integrate_reduced_flow" in unreached  # a claim reaches it, this one does not
    assert not any(name.split(".")[-1].startswith("_") for name in unreached)  # public functions only


def test_a_kernel_no_claim_called_is_unreached_and_counted_as_a_kernel(one_claim):
    kernels = one_claim["kernels"]
    assert kernels["total"] > 10 and kernels["reached"] == 0  # numba is not reached by the Hessian claim
    assert "numerics.flows.dp_step_factor" in kernels["unreached"]


def test_problems_name_the_share_and_each_function_without_a_reason(one_claim):
    found = problems(one_claim)
    assert found[0].startswith("line share") and "below 0.95" in found[0]
    missing = [row["function"] for row in one_claim["unreached"] if not row["reason"]]
    assert len(found) >= 1 + len(missing) and all(any(name in text for text in found) for name in missing)


def test_every_listed_function_names_a_reason():
    assert all(reason.strip() for reason in LIBRARY_SURFACE.values())
    assert all(reason.strip() for reason in ENVIRONMENT.values())


def test_refusals_of_invalid_input_are_left_out_and_the_rule_is_stated(one_claim):
    from pathlib import Path

    import biasaudit.theory

    excluded = one_claim["excluded"]
    assert excluded["lines"] > 20 and "raise InputError" in excluded["rule"]
    source = (Path(biasaudit.theory.__file__).parent / "eos_model.py").read_text().splitlines()
    refusals = [n for n, line in enumerate(source, 1) if "raise InputError(" in line]
    assert refusals and not set(refusals) & set(one_claim["modules"]["theory/eos_model.py"]["missing_lines"])


def test_environment_modules_are_left_out_and_the_rule_is_stated(one_claim):
    environment = one_claim["excluded"]["environment"]
    assert "numba" in environment["rule"] and set(environment["modules"]) == set(ENVIRONMENT)
    assert not set(ENVIRONMENT) & set(one_claim["modules"])


def test_check_coverage_json_reports_the_documented_keys(capsys):
    code = main(["check", "--coverage", "--json", "--claims", CHEAP])
    report = json.loads(capsys.readouterr().out)
    assert code == 1  # one claim reaches far less than 95 %
    assert {"line_share", "modules", "unreached", "kernels", "problems"} <= set(report)
    assert all(set(row) == {"function", "reason"} for row in report["unreached"])


@pytest.mark.slow
def test_the_claims_reach_95_percent_and_every_unreached_function_has_a_reason():
    from biasaudit.registry import select_claims

    report = claim_coverage([c.id for c in select_claims(None, kind="theory")])
    assert problems(report) == []
