"""Every claim's statement and hypotheses render as well-formed MathML or as plain text."""

import re
import xml.dom.minidom

import pytest
import sympy as sp

from biasaudit.audit.report_data import _render
from biasaudit.registry import all_claims, get_claim


def _parse(mathml: str):
    body = mathml if mathml.startswith("<math") else f"<math>{mathml}</math>"
    return xml.dom.minidom.parseString(re.sub(r"&[A-Za-z]+;", "", body))  # named HTML entities are fine in HTML


@pytest.mark.parametrize("claim", all_claims(), ids=lambda c: c.id)
def test_statement_and_hypotheses_render_as_math_or_text(claim):
    for expr in (claim.statement, *claim.hypotheses):
        assert not isinstance(expr, sp.logic.boolalg.BooleanAtom), "a statement that evaluated to True/False"
        text, mathml = _render(expr)
        assert text and text not in ("True", "False")
        if mathml is not None:
            _parse(mathml)
            for mi in re.findall(r"<mi>([^<]*)</mi>", mathml):
                assert " " not in mi, f"prose inside a MathML identifier: {mi!r}"


def test_relations_are_escaped_and_function_names_keep_their_case():
    _, mathml = _render(get_claim("eos.torch.e5_u_shape").statement)
    assert "&lt;" in mathml and "<mo><</mo>" not in mathml
    _, mathml = _render(get_claim("sam.flow.linear_loss").statement)
    assert "<mi>F</mi>" in mathml and "<msub><mi>L</mi><mi>lin</mi></msub>" in mathml


def test_prose_symbol_names_fall_back_to_text():
    text, mathml = _render(sp.Gt(sp.Symbol("median|1 - eta S/2|"), sp.Rational(1, 10), evaluate=False))
    assert mathml is None and "median" in text
    assert _render(sp.Symbol("err(eta_min)"))[1] is None


@pytest.mark.parametrize("cid", ["eos.gf.kl_potential", "sam.linf.unstable_equilibrium"])
def test_identities_stay_unevaluated(cid):
    statement = get_claim(cid).statement
    assert isinstance(statement, sp.Eq) and statement.has(sp.Derivative)
    assert sp.simplify(statement.lhs.doit() - statement.rhs) == 0  # and it is still true


def test_an_undecided_record_shows_no_nan_error():
    from biasaudit.audit.report_data import error_text

    for err in (float("nan"), "nan", None):
        assert "nan" not in error_text({"error": err, "verdict": "undecided"})
    assert error_text({"error": 0.25, "verdict": "refuted"}) == "0.25"


def test_the_report_explains_its_terms(tmp_path):
    from biasaudit.audit.report_data import HOW_TO_READ

    terms = dict(HOW_TO_READ)
    assert {"confirmed", "refuted", "undecided", "negative control", "error and tolerance"} <= set(terms)
    assert "power" in terms["negative control"]


def test_sources_are_shown_without_internal_words():
    from biasaudit.audit.report_data import plain_source

    assert plain_source("paper 2, theory (spec: Gradient flow)") == "theory (specification: Gradient flow)"
    assert plain_source("A (depth 1)") == "claim A (depth 1)"
    assert plain_source("issue 15 item 1") == "project issue 15 item 1"
    for claim in all_claims():
        text = plain_source(claim.source)
        assert not text.startswith("paper ") and " spec " not in f" {text} "


def test_titles_details_and_tolerance_reasons_are_shown_without_internal_words():
    from biasaudit.audit.report_data import ReportMeta, build_report, plain_words

    assert plain_words("the spec's 5e-3 (paper 2; issue 16 item 1)") == \
        'the specification\'s 5e-3 ("Conflicting Biases at the Edge of Stability"; project issue 16 item 1)'
    assert plain_words("project issue 3") == "project issue 3"  # not doubled
    claim = get_claim("eos.torch.e1_phase_transition")
    assert "spec" in claim.tolerance.reason  # the stored words, which the report must translate
    record = {"claim_id": claim.id, "paper": claim.paper, "source": claim.source, "title": "per the spec",
              "verdict": "refuted", "error": 3.0, "detail": "issue 13 asked; the spec says",
              "tolerance": {"name": claim.tolerance.name, "value": claim.tolerance.value,
                            "reason": claim.tolerance.reason}}
    meta = ReportMeta(tier="quick", profile="ci", seed=0, executor="inline", workers=None, scheduler=None,
                      pattern=None, started_utc="", wall_s=0.0, ran=1, reused=0, code={})
    row = build_report([record], [], meta).rows[0]
    shown = " ".join([row.record["title"], row.record["detail"], row.record["tolerance"]["reason"], row.summary])
    assert re.search(r"\bspec\b|(?<!project )issue \d", shown) is None, shown
    assert record["title"] == "per the spec"  # the stored record is untouched
