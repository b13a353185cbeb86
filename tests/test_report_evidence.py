"""Evidence a person reads: a sentence, a table, controls with their intervals, no JSON or repr dumps.

The scan (:func:`dumps_in`) reads the report's text as a browser shows it, outside the collapsed raw
record, and is shown to fire on each kind of dump it looks for.
"""

import html.parser
import json
import re
from pathlib import Path

import pytest

from biasaudit.audit.evidence_view import digits_for, evidence_view, note_items, number, tidy_prose, value_text
from biasaudit.audit.report_data import ReportMeta, build_report
from biasaudit.audit.report_html import render_html

DATA = Path(__file__).parent / "data" / "evidence_sample.jsonl"

# A dump the report must never show: a Python dict repr, a JSON list of objects, a float repr with >= 12
# decimals, a bare nan.
DUMPS = {"python dict": re.compile(r"\{'"), "json objects": re.compile(r"\[\{\""),
         "float repr": re.compile(r"\d\.\d{12,}"), "bare nan": re.compile(r"(?<![\w-])nan(?![\w-])", re.I)}


class _VisibleText(html.parser.HTMLParser):
    """The page's text outside ``<details class="raw">`` (the raw record, one click away) and ``<style>``."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self._skip = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self._skip or (tag == "details" and "raw" in (attrs.get("class") or "").split()) or tag == "style":
            self._skip.append(tag)

    def handle_endtag(self, tag):
        if self._skip and self._skip[-1] == tag:
            self._skip.pop()

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def visible_text(page: str) -> str:
    parser = _VisibleText()
    parser.feed(page)
    return "\n".join(parser.parts)


def dumps_in(text: str) -> dict[str, list[str]]:
    found = {}
    for name, pattern in DUMPS.items():
        hits = [text[max(0, m.start() - 30): m.end() + 30] for m in pattern.finditer(text)]
        if hits:
            found[name] = hits
    return found


def _meta(n):
    return ReportMeta(tier="quick", profile="ci", seed=0, executor="inline", workers=None, scheduler=None,
                      pattern=None, started_utc="2026-01-01T00:00:00Z", wall_s=1.0, ran=n, reused=0, code={})


def _records():
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def page():
    records = _records()
    return render_html(build_report(records, [], _meta(len(records))))


def test_the_sample_covers_every_verdict_and_the_contract_fields():
    records = _records()
    assert {r["verdict"] for r in records} >= {"confirmed", "refuted", "undecided", "error", "out-of-scope"}
    contract = [r for r in records if isinstance(r.get("observed"), dict) and "data_controls" in r["observed"]]
    assert contract and all({"statistic", "positive_control", "decision", "n_seeds"} <= set(r["observed"])
                            for r in contract)
    # the stored records do hold the dumps the report must not show
    raw = DATA.read_text()
    assert "0.050000000000000044" in raw and "NaN" in raw and "[{" in raw
    assert "{'converged': 162" in raw and '[{\\"side\\": \\"unknown\\"' in raw  # dumps inside a check's prose


def test_the_report_shows_no_dump(page):
    assert dumps_in(visible_text(page)) == {}


def test_the_scan_fires_on_each_dump():
    planted = ("<p>points=[[{'d': 3}]]</p><p>controls: [{\"side\": \"+\"}]</p><p>0.050000000000000044</p>"
               "<p>error=nan</p><details class=\"raw\"><pre>{'hidden': 0.050000000000000044}</pre></details>")
    assert set(dumps_in(visible_text(planted))) == set(DUMPS)
    assert "hidden" not in visible_text(planted)


def test_every_record_has_a_sentence_a_table_and_its_raw_record(page):
    records = _records()
    assert page.count('<p class="sentence">') >= len(records)
    assert page.count('<details class="raw">') == len(records)
    for r in records:
        assert f'id="claim-{r["claim_id"]}"' in page


def test_contract_fields_are_rows_with_intervals():
    record = next(r for r in _records() if isinstance(r.get("observed"), dict) and "data_controls" in r["observed"])
    view = evidence_view(record)
    controls = {row[0]: row for row in view.controls}
    aa = controls["data control: aa"]
    assert aa[2].startswith("mean ") and "in [" in aa[2] and "over" in aa[2] and "within ±" in aa[3]
    assert controls["positive control"][3] == "confirmed" and "in [" in controls["positive control"][2]
    quantities = {row[0]: row for row in view.quantities}
    assert "statistic" in quantities and "in [" in quantities["statistic"][2]
    assert quantities["n_seeds"][2] == str(record["observed"]["n_seeds"])
    # a field the renderer has never seen is still a row
    assert "worst_error" in quantities and "slack" in quantities


def test_unknown_observed_fields_render_generically():
    record = {"claim_id": "x.y.z", "verdict": "confirmed", "predicted": 1.0, "error": 0.0,
              "observed": {"value": 1.0, "novel_field": {"a": [1, 2], "b": None}},
              "tolerance": {"name": "t", "value": 0.01}}
    rows = {q: o for q, _, o, _ in evidence_view(record).quantities}
    assert rows["novel_field: a"] == "[1, 2]" and rows["novel_field: b"] == "—"


def test_numbers_carry_the_digits_the_tolerance_justifies():
    assert digits_for(0.01) == 3 and digits_for(1e-3) == 4 and digits_for(1e-12) == 6 and digits_for(0) == 4
    record = {"claim_id": "x.y.z", "verdict": "confirmed", "predicted": 0.123456789, "observed": 0.123456781,
              "error": 6.5e-8, "tolerance": {"name": "t", "value": 1e-3}}
    (_, predicted, observed, _), (_, _, err, tol) = evidence_view(record).quantities
    assert (predicted, observed) == ("0.1235", "0.1235") and err == "6.5e-08" and tol == "≤ t = 0.001"


def test_a_refutation_is_never_rounded_into_agreement():
    record = {"claim_id": "x.y.z", "verdict": "refuted", "predicted": 1.0, "observed": 1.0,
              "error": 1.00004e-10, "tolerance": {"name": "t", "value": 1e-10}}
    *_, (_, _, err, tol) = evidence_view(record).quantities
    assert err == "1.00004e-10" and tol == "> t = 1e-10"


def test_missing_numbers_are_a_dash_with_a_reason():
    assert number(float("nan")) == "— (not a number)" and value_text(None) == "—"
    for verdict, reason in (("undecided", "could not decide"), ("error", "raised"), ("out-of-scope", "cover")):
        *_, (_, _, err, _) = evidence_view({"claim_id": "a.b.c", "verdict": verdict, "error": float("nan"),
                                            "tolerance": {"name": "t", "value": 0.1}}).quantities
        assert err.startswith("—") and reason in err


def test_prose_is_tidied_and_split_into_statements():
    assert tidy_prose("x = 1.5000000000000002, y=nan, nano") == "x = 1.5, y=— (not a number), nano"
    assert tidy_prose("{'d': {'x': 1}} and [{\"size\": null}] but {a} [1, 2]") == "(d = (x = 1)) and (size = —) but {a} [1, 2]"
    assert note_items("a (b; c); d;  ") == ["a (b; c)", "d"]


def test_the_markdown_report_shows_no_dump_either():
    from biasaudit.audit.report_md import _render_markdown

    records = _records()
    text = _render_markdown(build_report(records, [], _meta(len(records))))
    prose = re.sub(r"```.*?```", " ", text, flags=re.S)  # tracebacks stay verbatim
    assert dumps_in(prose) == {}
    assert "| quantity | predicted | observed | tolerance |" in text and "| control | moved or read |" in text
