"""``biasaudit new-claim NAME [--out DIR]``: write a claim module template and its test.

``NAME`` is the module's name (a Python identifier, e.g. ``gd_quadratic``); the files are
``DIR/NAME.py`` and ``DIR/test_NAME.py``. The template is a working claim with the four parts every
biasaudit claim has (a sympy statement whose formula the prediction evaluates, independent numerics, a property test over a
sampled domain, a negative control that must be refuted); its test passes as written. Replace the example
(the closed form of a geometric series against its partial sums) by your theorem and run it as it is:
``biasaudit check --claims DIR/NAME.py`` (or ``audit --claims DIR/NAME.py``; a folder works too). To ship it,
register the module in a package with an entry point in the group ``biasaudit.claims`` (see
``examples/plugin/``).
Existing files are never overwritten.
"""

from __future__ import annotations

import importlib.util
import keyword
import sys

__all__ = ["register", "run"]

TEMPLATE = '''"""{name}: a claim for biasaudit (from ``biasaudit new-claim``).

Replace the example (the geometric series) by your theorem; keep the four parts.
"""

from __future__ import annotations

import sympy as sp

from biasaudit.domain import Domain, Integer, Real
from biasaudit.ledger import Claim, Observation, Tolerance
from biasaudit.theory.formula import Formula

__all__ = ["CLAIMS"]

# 1. The symbolic statement: a Formula is a sympy expression lambdified once. The statement shows its
#    expression and the prediction evaluates it, so what the reader sees is what runs.
q, n = sp.symbols("q n", positive=True)
k = sp.Symbol("k", integer=True, nonnegative=True)
CLOSED_FORM = Formula("geometric_sum", (1 - q**n) / (1 - q), (q, n), "math")


def _predict(params):
    return CLOSED_FORM(params["q"], params["n"])


# 2. Independent numerics: here the partial sum itself, term by term.
def _evaluate(params, predicted) -> Observation:
    total = sum(params["q"] ** j for j in range(params["n"]))
    error = abs(total - predicted) / abs(total)
    return Observation(total, error, f"partial sum {{total:.12g}} vs closed form {{predicted:.12g}}")


CLAIM = Claim(
    id="{name}.geometric_sum",
    paper="{name}",
    source="derived: replace with where your theorem is stated",
    title="sum_{{k<n}} q^k = (1 - q^n) / (1 - q)",
    hypotheses=(sp.Gt(q, 0, evaluate=False), sp.Ne(q, 1, evaluate=False)),
    statement=sp.Eq(sp.Sum(q**k, (k, 0, n - 1)), CLOSED_FORM.expr, evaluate=False),
    formulas=(CLOSED_FORM,),
    predict=_predict,
    evaluate=_evaluate,
    # Tolerances are named and explained: why this size, and what it bounds.
    tolerance=Tolerance("float64_sum", 1e-12, "n <= 60 additions of terms of one sign: ~n eps relative"),
    # 3. The property test: sampled cases from this domain (the ci profile draws `samples["ci"]` of them).
    domain=Domain({{"q": Real(0.1, 0.95), "n": Integer(1, 60)}}),
    # 4. The negative control: a prediction moved by 1 % must be refuted, or the check has no power.
    negative_control=lambda params, predicted: predicted * 1.01,
    samples={{"ci": 8, "thorough": 64}},
)

CLAIMS = (CLAIM,)
'''

TEST_TEMPLATE = '''"""The test of {name} (from ``biasaudit new-claim``): the claim is confirmed and its control refuted."""

import importlib.util
from pathlib import Path

from biasaudit.ledger import Verdict, run_claim

_spec = importlib.util.spec_from_file_location("{name}", Path(__file__).with_name("{name}.py"))
module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(module)


def test_{name}_claims_are_confirmed_and_their_controls_refuted():
    for claim in module.CLAIMS:
        evidence = run_claim(claim, profile="ci")
        assert evidence.verdict == Verdict.CONFIRMED, evidence.detail
        assert evidence.negative_control["all_failed"]
'''


def register(sub) -> None:
    """Add ``biasaudit new-claim`` and its options to the subparsers ``sub``."""
    p = sub.add_parser("new-claim", help="write a claim module template (four parts) and its test")
    p.add_argument("name", help=f"module name, a Python identifier of at most {MAX_NAME_LENGTH} characters that "
                                "names no importable module (e.g. gd_quadratic)")
    p.add_argument("--out", default=".", help="folder for NAME.py and test_NAME.py, created if missing "
                                              "(default: here; an empty path is refused)")
    p.set_defaults(run=run)


MAX_NAME_LENGTH = 100  # NAME.py and test_NAME.py stay far below the 255-byte file name limit


def check_name(name: str) -> str:
    """``name`` as a new module's name: an identifier of sensible length that shadows no importable module."""
    from biasaudit.plumbing import InputError

    if not name.isidentifier() or keyword.iskeyword(name) or len(name) > MAX_NAME_LENGTH:
        raise InputError("name", f"must be a Python identifier (letters, digits, _; not a keyword) of at most "
                                 f"{MAX_NAME_LENGTH} characters", name)
    if name in sys.stdlib_module_names or name in sys.builtin_module_names or _importable(name):
        raise InputError("name", f"must not be the name of an importable module ({name}.py would shadow "
                                 f"`import {name}`)", name)
    return name


def _importable(name: str) -> bool:
    try:
        return name in sys.modules or importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # e.g. a module in sys.modules without __spec__: taken all the same
        return True


def run(args) -> int:
    """Write ``NAME.py`` and ``test_NAME.py`` into ``--out`` and print their paths; an existing file or an unwritable
    folder is an InputError, and nothing is written."""
    from biasaudit.plumbing import InputError, writable_dir

    name = check_name(args.name)
    texts = {f"{name}.py": TEMPLATE.format(name=name), f"test_{name}.py": TEST_TEMPLATE.format(name=name)}
    try:  # the OS may refuse the path itself (too long, not a folder, no permission): that is the --out's fault
        out = writable_dir("out", args.out)
        for file_name in texts:
            if (out / file_name).exists():
                raise InputError("name", f"{out / file_name} exists already (new-claim never overwrites)", name)
        for file_name, text in texts.items():
            (out / file_name).write_text(text)
            print(out / file_name)
    except OSError as exc:
        raise InputError("out", f"must be a writable folder ({exc.strerror or exc})", args.out) from None
    print(f"check it: biasaudit check --claims {out / (name + '.py')}", file=sys.stderr)
    return 0
