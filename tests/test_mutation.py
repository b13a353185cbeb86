"""The mutation suite (`python -m biasaudit.devtools.mutate`): its mutants still apply, and it tells a killed
mutant from a surviving one through claim verdicts."""

import ast
import fnmatch

import pytest

from biasaudit.devtools.mutants import MUTANTS, Mutant
from biasaudit.devtools.mutate import (MutantResult, SuiteResult, _selected_ids, apply_mutant, build_tree,
                                       package_folders, reference_verdict, run_suite, mutant_test_files)


def _source(mutant: Mutant) -> str:
    folders = package_folders()
    head, _, rest = mutant.path.partition("/")
    path = folders[head] / rest if head in folders and rest else folders["biasaudit"] / mutant.path
    return path.read_text(encoding="utf-8")


def test_the_suite_has_at_least_56_mutants_in_every_layer():
    names = [m.name for m in MUTANTS]
    assert len(names) >= 56 and len(set(names)) == len(names)
    assert {m.layer for m in MUTANTS} == {"theory", "numerics", "validation", "front door"}


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_every_mutant_applies_once_and_still_parses(mutant):
    source = _source(mutant)
    assert source.count(mutant.old) == 1, f"{mutant.name}: the code moved; update biasaudit/devtools/mutants.py"
    assert mutant.new != mutant.old
    ast.parse(source.replace(mutant.old, mutant.new))
    assert _selected_ids(mutant.claims, mutant.experiments), f"{mutant.name} runs no claim"


def test_globs_select_theory_claims_only_and_experiments_by_id():
    ids = _selected_ids(("sam.linf.*",), ("sam.torch.diag_net_matches_numerics",))
    assert all(fnmatch.fnmatchcase(i, "sam.linf.*") for i in ids[:-1]) and ids[-1].startswith("sam.torch.")
    with pytest.raises(ValueError, match="unknown experiment"):
        _selected_ids((), ("sam.torch.nope",))


def test_build_tree_is_the_wheel_layout_and_apply_refuses_a_stale_mutant(tmp_path):
    tree = build_tree(tmp_path)
    assert (tree / "biasaudit" / "theory" / "eos_flow.py").is_file()
    assert (tree / "biasaudit" / "numerics" / "eos_gd.py").is_file()
    stale = Mutant("stale", "theory/eos_flow.py", "this text is not in the file", "x", "none", ("eos.gf.limit",))
    with pytest.raises(ValueError, match="expected 1 occurrence"):
        apply_mutant(tree, stale)


def test_the_runner_kills_a_real_bug_and_spares_a_harmless_edit():
    """End to end through child processes: a lost factor in the min-sharpness vertex is killed by the
    claim that checks it; a comment edit survives (a suite that kills everything proves nothing)."""
    killer = Mutant("t.min_sharpness_max", "theory/eos_minimizers.py", "return _face(x, x.min())",
                    "return _face(x, x.max())", "min/max swap", ("eos.min_sharpness.vertex",))
    harmless = Mutant("t.comment", "theory/eos_minimizers.py", "return _face(x, x.min())",
                      "return _face(x, x.min())  # a comment", "no bug", ("eos.min_sharpness.vertex",))
    result = run_suite((killer, harmless), jobs=2)
    by_name = {m.name: m for m in result.mutants}
    assert result.baseline == {"eos.min_sharpness.vertex": "confirmed"}
    assert by_name["t.min_sharpness_max"].killed
    assert by_name["t.min_sharpness_max"].killed_by == {"eos.min_sharpness.vertex": "refuted"}
    assert not by_name["t.comment"].killed and not by_name["t.comment"].crashed
    assert result.score == (1, 2)
    assert result.scores["verdicts"] == (1, 2) and result.scores["tests"] == (0, 0)  # tests not asked for
    assert result.baseline_with_references == {"eos.min_sharpness.vertex": "confirmed"}


@pytest.mark.slow
def test_every_mutant_is_killed_through_claim_verdicts():
    result = run_suite(MUTANTS, jobs=2)
    assert [m.name for m in result.mutants if not m.killed] == []


def test_the_references_alone_decide_the_score_with_references():
    from biasaudit.ledger import Reference
    from biasaudit.registry import get_claim
    import dataclasses

    claim = get_claim("eos.min_sharpness.vertex")
    assert reference_verdict(claim) == "confirmed"
    ref = claim.references[0]
    wrong = dataclasses.replace(claim, references=(Reference(ref.params, {**ref.expected, "sharpness": 1.0},
                                                             ref.tolerance,
                                                             "a wrong value", origin="derived"),))
    assert reference_verdict(wrong) == "refuted"


def test_three_scores_count_each_kind_of_kill_separately():
    rows = [MutantResult("a", "theory", "", True, killed_with_references=True, killed_by_tests=True),
            MutantResult("b", "theory", "", False, killed_with_references=True, killed_by_tests=False),
            MutantResult("c", "theory", "", False, killed_by_tests=None)]
    scores = SuiteResult(0, {}, rows, 0.0).scores
    assert scores == {"verdicts_without_references": (1, 3), "verdicts": (2, 3), "tests": (1, 2)}


def test_a_mutant_is_tested_by_the_files_that_name_its_module(tmp_path):
    (tmp_path / "test_a.py").write_text("from biasaudit.theory import eos_flow")
    (tmp_path / "test_b.py").write_text("import numpy")
    (tmp_path / "test_mutation.py").write_text("eos_flow")  # the suite's own tests never count
    mutant = Mutant("m", "theory/eos_flow.py", "x", "y", "bug", ("eos.*",))
    assert [f.name for f in mutant_test_files(mutant, tmp_path)] == ["test_a.py"]
    own = Mutant("m", "theory/eos_flow.py", "x", "y", "bug", ("eos.*",), tests=("test_b.py",))
    assert [f.name for f in mutant_test_files(own, tmp_path)] == ["test_b.py"]
