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
    _, mathml = _render(get_claim("eos.torch.e3.linear.fcn").statement)
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


UNOPENABLE = re.compile(r"\bspec\b|\bissues? #?\d+", re.I)  # documents a reader of the repository cannot open


def claim_texts(claim) -> list[str]:
    """Every piece of prose a claim shows (report, docs, list): title, source, notes, statement, hypotheses,
    tolerance reason, control reasons, reference notes, the no-closed-form reason."""
    texts = [claim.title, claim.source, claim.notes, claim.statement_text(), claim.tolerance.reason,
             claim.tolerance.at_10x, claim.no_closed_form, *map(str, claim.hypotheses)]
    texts += [control.reason for control in claim.negative_control]
    texts += [control.target for control in claim.negative_control]
    texts += [ref.note for ref in claim.references]
    return texts


def test_no_claim_cites_an_issue_number_or_the_specification():
    bad = [(c.id, t) for c in all_claims() for t in claim_texts(c) if UNOPENABLE.search(t or "")]
    assert bad == []


def test_the_text_check_sees_an_issue_number():
    assert UNOPENABLE.search("measured (issue 15 item 1)") and UNOPENABLE.search("the spec's table")
    assert not UNOPENABLE.search("find_specs; specification; the issues of convergence")


def test_sources_are_shown_in_the_readers_words():
    from biasaudit.audit.report_data import plain_source, plain_words

    assert plain_source("paper 2, theory (Gradient flow)") == "theory (Gradient flow)"
    assert plain_source("A (depth 1)") == "claim A (depth 1)"
    assert plain_words("paper 2; E3") == '"Conflicting Biases at the Edge of Stability"; E3'
    for claim in all_claims():
        assert not plain_source(claim.source).startswith("paper ")


def test_powers_and_indices_in_titles_are_rendered_in_the_report():
    from biasaudit.audit.prose_math import prose_html

    assert prose_html("tau_j = alpha_j^{2-L} / ((L-2) mu_j)") == "tau_j = α<sub>j</sub><sup>2-L</sup> / ((L-2) mu_j)"
    assert prose_html("a <b> & e^{-mu tau}") == "a &lt;b&gt; &amp; e<sup>-μ τ</sup>"  # escaped around the scripts
    for claim in all_claims():
        assert "^{" not in re.sub(r"<[^>]+>", "", prose_html(claim.title)), claim.id


def test_names_written_as_calls_and_marks_render_as_mathematics():
    _, mathml = _render(sp.Symbol("alpha_c(eta)") / sp.Symbol("alpha_c"))
    assert "<msub><mi>&#945;</mi><mi>c</mi></msub><mrow><mo>(</mo><mi>&#951;</mi><mo>)</mo></mrow>" in mathml
    _, mathml = _render(sp.Eq(sp.Symbol("j_dagger(inf)"), sp.Symbol("d")))
    assert "&#8224;" in mathml and "dagger" not in mathml and "&#x221E;" in mathml  # j†(∞)
    _, mathml = _render(sp.Eq(sp.Symbol("w^(l)(t)"), 0))
    assert "<msup><mi>w</mi><mi>(l)</mi></msup>" in mathml
    assert _render(sp.Symbol("max_k |ln S_k - ln S(tau_k)|"))[1] is None  # prose stays text
