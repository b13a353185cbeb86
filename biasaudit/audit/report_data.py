"""The content of the audit report, shared by ``report.md`` and ``index.html``.

Order: claims whose verdict is ``refuted``, ``error`` or ``undecided`` come first, each with its full
evidence (:mod:`biasaudit.audit.evidence_view`: a sentence, the table of predicted and observed values
with the error against the named tolerance, the controls, the check's notes); then the table of every
claim.

Statements are rendered from the claim objects when the claim is registered here (Unicode ``pretty`` for
Markdown, presentation MathML for HTML, which browsers render natively); otherwise from the stored text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from biasaudit.audit.evidence_view import error_text, evidence_view, format_pair
from biasaudit.audit.prose_math import GREEK

__all__ = ["plain_source", "plain_words", "error_text", "HOW_TO_READ", "ReportMeta", "Report", "Row", "build_report",
           "format_pair", "PAPERS", "VERDICT_ORDER", "PROBLEM_VERDICTS"]

PAPERS = {
    "sam": "Minor First, Major Last (SAM on deep diagonal networks)",
    "eos": "Conflicting Biases at the Edge of Stability (norm vs sharpness)",
}
VERDICT_ORDER = {"refuted": 0, "error": 1, "undecided": 2, "out-of-scope": 3, "confirmed": 4}
PROBLEM_VERDICTS = ("refuted", "error", "undecided")


@dataclass
class ReportMeta:
    """How the audit ran, for the report's header.

    ``tier``, ``profile``, ``seed``, ``executor`` (with ``workers`` and the Dask ``scheduler``), ``pattern``
    (``--claims``), ``started_utc``, ``wall_s``, the units ``ran`` and ``reused`` (kept by ``--resume``), ``code`` (the
    package version and git commit); then the evidence lines dropped as bad, the figures left out (id, reason), and the
    experiment runs: scheduled as units, computed, reused from the cache, read again after this audit computed them,
    failed, and their summed worker time.
    """

    tier: str
    profile: str
    seed: int
    executor: str
    workers: int | None
    scheduler: str | None
    pattern: str | None
    started_utc: str
    wall_s: float
    ran: int
    reused: int
    code: dict
    bad_lines: list[str] = field(default_factory=list)
    unavailable_figures: list[tuple[str, str]] = field(default_factory=list)
    run_units: int = 0
    runs_computed: int = 0
    runs_reused: int = 0
    runs_repeated: int = 0
    run_errors: list[str] = field(default_factory=list)
    run_unit_seconds: float = 0.0

    def runs_sentence(self) -> str:
        """How many experiment runs this audit computed, read from the run cache (computed before it), and read
        again after computing them itself (a second claim reading a run)."""
        units = (f" ({self.run_units} scheduled as run units, {self.run_unit_seconds:.1f} s summed worker time)"
                 if self.run_units else "")
        return (f"experiment runs: {self.runs_computed} computed in this audit{units}, {self.runs_reused} reused "
                f"from the run cache (computed before this audit), {self.runs_repeated} cache hits of runs computed "
                "earlier in this audit")


@dataclass
class Row:
    """One claim in the report: its evidence ``record``, the one-sentence ``summary``, the statement and hypotheses as text
    and as MathML (None where the claim is not registered here), and the ids of the ``figures`` that illustrate it."""

    record: dict
    summary: str
    statement_text: str
    statement_mathml: str | None
    hypotheses_text: list[str]
    hypotheses_mathml: list[str | None]
    figures: list[str]

    @property
    def claim_id(self) -> str:
        """The claim's id, from its record."""
        return self.record["claim_id"]

    @property
    def verdict(self) -> str:
        """The verdict, from its record."""
        return self.record["verdict"]


@dataclass
class Report:
    """What ``report.md`` and ``index.html`` show: ``meta``, one :class:`Row` per claim, and the figure records."""

    meta: ReportMeta
    rows: list[Row]
    figures: list[dict]

    @property
    def problems(self) -> list[Row]:
        """The rows whose verdict is refuted, error or undecided (shown first, with their evidence)."""
        return [r for r in self.rows if r.verdict in PROBLEM_VERDICTS]

    def counts(self) -> dict[str, int]:
        """The number of claims of each verdict, every verdict of :data:`VERDICT_ORDER` included."""
        out = {v: 0 for v in VERDICT_ORDER}
        for row in self.rows:
            out[row.verdict] = out.get(row.verdict, 0) + 1
        return out

    def unit_seconds(self) -> float:
        """Summed worker time of the claim and figure units (the ones kept by --resume included), in seconds."""
        return float(sum(float(r.get("elapsed_s") or 0.0) for r in [*(row.record for row in self.rows),
                                                                     *self.figures]))

    def figures_of_paper(self, paper: str) -> list[dict]:
        """The figure records of ``paper`` (``sam`` or ``eos``)."""
        return [f for f in self.figures if f.get("paper") == paper]


HOW_TO_READ: tuple[tuple[str, str], ...] = (
    ("claim", "one statement from one of the two papers (or derived from them, or a measurement reported while "
              "building this toolkit, stated so that it can be refuted), with its hypotheses, written as "
              "mathematics where it can be"),
    ("confirmed", "independent numerics agree with the prediction within the stated tolerance on every sampled "
                  "case, and every negative control was rejected"),
    ("refuted", "some case disagrees beyond the tolerance; the report shows that counterexample. A refuted "
                "claim is a finding about the paper's statement in the tested setting, not a failure of the tool"),
    ("undecided", "the numerics could not tell: an interval that straddles zero, a run too short, or a negative "
                  "control that was not rejected (then the check cannot tell a wrong prediction from the right "
                  "one, so it says nothing)"),
    ("error", "the check itself raised an exception; the traceback is shown"),
    ("negative control", "the same check run on a deliberately wrong prediction (for example moved by 1 %, or "
                         "with its sign flipped). The check must reject it: \"2 of 2 negative controls refuted\" is what "
                         "you want to see, because it shows the check has the power to tell right from wrong"),
    ("error and tolerance", "each check computes one error number; a named tolerance, with the reason for its "
                            "size, decides. Confirmed means error <= tolerance"),
    ("specification", "the project's written statement of the two papers' claims, with their formulas, "
                      "conventions and reference numbers; every claim here is taken from it"),
    ("tier and profile", "the quick tier fits a 2-core CPU; the full tier is larger (meant for a GPU). The ci "
                         "profile samples fewer random cases than the thorough one"),
    ("experiment claims", "claims about trained networks: verdicts come from seed-level intervals (and, for the "
                          "minor-feature family, a Holm correction); runs that fail to train are counted, "
                          "not dropped"),
)


_PAPER_NAMES = {"1": "Minor First, Major Last", "2": "Conflicting Biases at the Edge of Stability"}


def plain_words(text: str | None) -> str:
    """The papers' short names spelled out for a reader of the report: "paper 1/2" becomes the paper's title."""
    return re.sub(r"\bpaper ([12])\b", lambda m: f'"{_PAPER_NAMES[m.group(1)]}"', text or "")


def plain_source(source: str | None) -> str:
    """A claim's source in words a reader of the report knows: no "paper 2," prefix (the paper column says
    it), the papers' claim letters as "claim A", and :func:`plain_words`."""
    text = re.sub(r"^paper [12](,\s*|\s+)", "", (source or "").strip())
    text = re.sub(r"^([A-Z])(?= \(|$)", r"claim \1", text)
    return plain_words(text)


def _plain_record(record: dict) -> dict:
    """The record as the report shows it: prose fields through :func:`plain_words` (the stored record keeps
    its own text, which its checksum covers)."""
    shown = dict(record)
    for key in ("title", "detail", "notes"):
        if isinstance(shown.get(key), str):
            shown[key] = plain_words(shown[key])
    if isinstance(shown.get("tolerance"), dict) and isinstance(shown["tolerance"].get("reason"), str):
        shown["tolerance"] = {**shown["tolerance"], "reason": plain_words(shown["tolerance"]["reason"])}
    return shown


def _xmlns_free(mathml: str) -> str:
    return re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", mathml)


_MATH_NAME = re.compile(r"^[^\s<>&()|=,:;\[\]]+$")  # a name MathML can show: no spaces, brackets or operators


_LAYER = re.compile(r"\^\(([A-Za-z0-9]+)\)")  # a layer index written w^(l): a superscript in parentheses
# a symbol named as a function call of plain names: alpha_c(eta), w^(l)(t), j_dagger(0+)
_CALL_NAME = re.compile(r"^([A-Za-z]+(?:_[A-Za-z0-9]+)?(?:\^\([A-Za-z0-9]+\))?)\(([A-Za-z0-9+, ]+)\)$")


def _plain_name(name: str) -> bool:
    return bool(_MATH_NAME.match(_LAYER.sub(r"^\1", name))) and name.count("_") <= 1


def _math_safe(expr) -> bool:
    """Every symbol and function name is a plain math name with at most one subscript (``w_j``) and at most a
    superscript in parentheses (``w^(l)``), not text such as ``median(1 - eta S/2)``, which MathML would split
    into broken subscripts."""
    import sympy

    names = [a.name for a in expr.atoms(sympy.Symbol)]
    names += [f.func.__name__ for f in expr.atoms(sympy.core.function.AppliedUndef)]
    return all(_plain_name(n) for n in names)


_CALL_ARGS = {"inf": __import__("sympy").oo, "0+": __import__("sympy").Symbol("0^+")}


def _calls_as_functions(expr):
    """Symbols named as calls (``alpha_c(eta)``, ``j_dagger(0+)``) as the function applied to its arguments, so
    the formula shows α_c(η), not a name with parentheses in it; other symbols unchanged."""
    import sympy

    if not isinstance(expr, sympy.Basic):
        return expr
    calls = {}
    for a in expr.atoms(sympy.Symbol):
        m = _CALL_NAME.match(a.name)
        if m:
            args = [_CALL_ARGS.get(t.strip()) or sympy.Symbol(t.strip()) for t in m.group(2).split(",") if t.strip()]
            calls[a] = sympy.Function(m.group(1))(*args)
    return expr.xreplace(calls) if calls else expr


_MODIFIERS = ("bar", "hat", "tilde", "dot")  # sympy's name suffixes for accents: betabar_i is β̄ᵢ
_WORD = re.compile(r"^[A-Za-z]{4,}$")
_MARKS = {"dagger": "†", "star": "*", "prime": "′"}  # written as a subscript word, shown as a superscript mark


def _accented(name: str) -> str:
    """``betabar_i`` as ``β̅_i`` (the accent on the letter, as sympy's pretty printer shows it); other names
    unchanged."""
    import sympy
    from sympy.printing.conventions import split_super_sub

    base, sups, subs = split_super_sub(name)
    marks = [_MARKS[s] for s in subs if s in _MARKS]  # j_dagger is j†: a mark, not a subscript
    subs = [s for s in subs if s not in _MARKS]
    if not marks and not any(base.endswith(m) and len(base) > len(m) for m in _MODIFIERS):
        return name
    accented = sympy.pretty(sympy.Symbol(base), use_unicode=True)
    return accented + "".join(f"^{s}" for s in [*sups, *marks]) + "".join(f"_{s}" for s in subs)


def _mathml(expr) -> str:
    """Presentation MathML; undefined functions keep their name's case and subscripts (sympy lower-cases
    them), a function named in words (``median_gap``) reads as words, accented names (``betabar``) carry
    their accent, and relation signs are escaped (sympy writes a bare ``<``, which is not XML)."""
    import sympy
    from sympy.printing.mathml import MathMLPresentationPrinter

    class Printer(MathMLPresentationPrinter):
        def _print_AppliedUndef(self, e):
            row = self.dom.createElement("mrow")
            name = e.func.__name__
            head = name.split("_")[0]
            if "_" in name and _WORD.match(head) and head not in _MATH_FUNCTIONS and head not in GREEK:
                words = self.dom.createElement("mtext")
                words.appendChild(self.dom.createTextNode(name.replace("_", " ")))
                row.appendChild(words)
            else:
                row.appendChild(self._print(sympy.Symbol(_accented(name))))
            row.appendChild(self._print(sympy.Tuple(*e.args)))
            return row

    accents = {a: sympy.Symbol(_accented(a.name), **a.assumptions0) for a in expr.atoms(sympy.Symbol)
               if _accented(a.name) != a.name} if isinstance(expr, sympy.Basic) else {}
    out = Printer().doprint(expr.xreplace(accents) if accents else expr)
    return _xmlns_free(out.replace("<mo><</mo>", "<mo>&lt;</mo>").replace("<mo>></mo>", "<mo>&gt;</mo>"))


_MATH_FUNCTIONS = {"sign", "tanh", "argmax", "argmin"}


def _render(expr) -> tuple[str, str | None]:
    """(Unicode pretty text, presentation MathML or None) for a sympy object; None (shown as text) when a
    name in it is prose rather than math, or the object is not a sympy expression."""
    import sympy

    try:
        text = sympy.pretty(expr, use_unicode=True, wrap_line=False)
    except Exception:  # noqa: BLE001 - anything sympy cannot pretty-print is shown as str()
        text = str(expr)
    mathml = None
    shown = _calls_as_functions(expr)
    if isinstance(shown, sympy.Basic) and not isinstance(shown, sympy.logic.boolalg.BooleanAtom) and _math_safe(shown):
        try:
            mathml = _mathml(shown)
        except Exception:  # noqa: BLE001
            mathml = None
    return text, mathml


def _row(record: dict, claim, figure_ids: list[str]) -> Row:
    if claim is not None:
        text, mathml = _render(claim.statement)
        hyps = [_render(h) for h in claim.hypotheses]
    else:
        text, mathml = record.get("statement") or "", None
        hyps = [(h, None) for h in record.get("hypotheses") or []]
    record = _plain_record(record)
    return Row(record=record, summary=evidence_view(record).sentence, statement_text=text, statement_mathml=mathml,
               hypotheses_text=[h[0] for h in hyps], hypotheses_mathml=[h[1] for h in hyps],
               figures=figure_ids)


def build_report(records: list[dict], figures: list[dict], meta: ReportMeta,
                 extra_modules: tuple[str, ...] = ()) -> Report:
    """Rows sorted problems-first (refuted, error, undecided, out-of-scope, confirmed), then paper, id."""
    import fnmatch

    from biasaudit.audit.units import find_claim

    rows = []
    for record in records:
        try:
            claim = find_claim(record["claim_id"], extra_modules)
        except Exception:  # noqa: BLE001 - a record of a claim no longer registered keeps its stored text
            claim = None
        figure_ids = [f["figure_id"] for f in figures if f.get("status") == "ok"
                      and any(fnmatch.fnmatchcase(record["claim_id"], p) for p in f.get("claims") or [])]
        rows.append(_row(record, claim, figure_ids))
    rows.sort(key=lambda r: (VERDICT_ORDER.get(r.verdict, -1), r.record.get("paper") or "", r.claim_id))
    return Report(meta=meta, rows=rows, figures=list(figures))
