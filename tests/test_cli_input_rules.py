"""Input rules of the CLI found by a red-team run: each bad input exits 2 with one line naming the parameter
(and, for flags that conflict, both flags), never a traceback, a silent fallback or an ignored flag."""

import pytest

from biasaudit.cli import build_parser, main
from biasaudit.commands.check import parse_seeds
from biasaudit.plumbing import InputError
from biasaudit.registry import all_claims

FAST_CLAIM = "sam.depth1.same_direction"  # a theory claim that checks in about a second


def run_cli(argv, capsys):
    """(exit status, stderr) of ``main`` in-process; argparse's own errors exit through SystemExit."""
    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, err


def assert_refused(argv, capsys, *names):
    code, err = run_cli(argv, capsys)
    assert code == 2 and err.startswith("biasaudit: error: ") and err.count("\n") == 1, (argv, code, err)
    for name in names:
        assert name in err, (argv, name, err)
    return err


@pytest.fixture
def audit_never_runs(monkeypatch):
    """Replace the audit itself: these tests check the options, and an accepted one must not start work."""
    calls = []
    monkeypatch.setattr("biasaudit.commands.audit._run", lambda args: calls.append(args) or 0)
    return calls


# -- 1. new-claim: a name or folder the OS refuses ----------------------------------------------------------
def test_new_claim_refuses_a_name_too_long_for_a_file(capsys, tmp_path):
    assert_refused(["new-claim", "a" * 300, "--out", tmp_path], capsys, "name: ", "at most 100 characters")
    assert list(tmp_path.iterdir()) == []


def test_a_refused_path_keeps_its_existing_folder_and_loses_the_subfolders_made_in_it(tmp_path, monkeypatch):
    from pathlib import Path

    from biasaudit.plumbing import writable_dir

    (tmp_path / "kept").mkdir()
    monkeypatch.setattr(Path, "write_text", lambda self, *a, **k: (_ for _ in ()).throw(PermissionError(13, "no")))
    with pytest.raises(InputError, match="out: must be a writable directory"):
        writable_dir("out", tmp_path / "kept", make=("figures", "runs/deep"))
    assert [p.name for p in tmp_path.iterdir()] == ["kept"] and list((tmp_path / "kept").iterdir()) == []


def test_new_claim_turns_an_unwritable_out_into_an_input_error(capsys, tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    assert_refused(["new-claim", "q", "--out", a_file / "sub"], capsys, "out: ")
    assert_refused(["new-claim", "q", "--out", tmp_path / ("d" * 300)], capsys, "out: ")


def test_a_refused_out_leaves_no_folder_behind(capsys, tmp_path, monkeypatch):
    """Folders made for a path that then fails the write probe are removed again (only the ones made)."""
    from pathlib import Path

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "write_text", refuse)
    assert_refused(["new-claim", "q", "--out", tmp_path / "made" / "here"], capsys, "out: ", "Permission denied")
    assert list(tmp_path.iterdir()) == []


# -- 2. new-claim: a name that would shadow an import --------------------------------------------------------
@pytest.mark.parametrize("name", ["sys", "json", "numpy", "biasaudit", "__main__"])
def test_new_claim_refuses_the_name_of_an_importable_module(capsys, tmp_path, name):
    assert_refused(["new-claim", name, "--out", tmp_path], capsys, "name: ", "importable module")
    assert list(tmp_path.iterdir()) == []


# -- 3. an empty folder path is refused, never "the current folder" or "the default" ----------------------
def test_new_claim_refuses_an_empty_out(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_refused(["new-claim", "q", "--out", ""], capsys, "out: ", "empty path")
    assert list(tmp_path.iterdir()) == []


def test_audit_refuses_an_empty_cache_dir(capsys, tmp_path, audit_never_runs):
    assert_refused(["audit", "--claims", FAST_CLAIM, "--out", tmp_path / "r", "--cache-dir", ""], capsys,
                   "cache-dir: ", "empty path")
    assert audit_never_runs == []


# -- 4. audit --resume with nothing to keep says so, and what it still reuses ------------------------------------
def test_audit_resume_on_a_folder_without_evidence_says_it_starts_fresh(capsys, tmp_path, audit_never_runs):
    # a run killed during its first claim has no evidence yet: resuming it must still work, and not silently
    code, err = run_cli(["audit", "--claims", FAST_CLAIM, "--out", tmp_path, "--resume"], capsys)
    assert code == 0 and "no claim evidence to keep" in err and "every claim runs" in err
    assert "still read from the run cache" in err  # honest: finished runs are not trained again
    assert len(audit_never_runs) == 1
    (tmp_path / "evidence.jsonl").write_text("")  # an interrupted audit's folder: resumed without a note
    code, err = run_cli(["audit", "--claims", FAST_CLAIM, "--out", tmp_path, "--resume"], capsys)
    assert code == 0 and "no claim evidence to keep" not in err and len(audit_never_runs) == 2


def test_audit_resume_refuses_a_folder_that_does_not_exist(capsys, tmp_path, audit_never_runs):
    """The audit makes its folder at its start, so a missing one under --resume is a mistyped path."""
    assert_refused(["audit", "--claims", FAST_CLAIM, "--out", tmp_path / "typo", "--resume"], capsys, "out: ",
                   "--resume needs the folder of an earlier audit")
    assert audit_never_runs == [] and not (tmp_path / "typo").exists()


# -- 5. conflicting or ignored flags name both flags ---------------------------------------------------------
@pytest.mark.parametrize("argv, names", [
    (["check", "--seeds", "1"], ("seeds", "--stability")),
    (["check", "--stability", "--tolerance-x10"], ("--stability", "--tolerance-x10")),
    (["check", "--stability", "--no-references"], ("--stability", "--no-references")),
    (["check", "--tolerance-x10", "--list"], ("--tolerance-x10", "--list")),
    (["check", "--no-references", "--list"], ("--no-references", "--list")),
    (["check", "--json", "--list"], ("json", "--list")),
    (["check", "--list", "--profile", "thorough"], ("profile", "--list")),
    (["check", "--stability", "--seed", "3"], ("seed", "--stability")),
    (["check", "--tolerance-x10", "--strict"], ("strict", "--tolerance-x10")),
    (["check", "--coverage", "--profile", "thorough"], ("profile", "--coverage")),
    (["check", "--coverage", "--strict"], ("strict", "--coverage")),
    (["check", "--coverage", "--stability"], ("--coverage", "--stability")),
    (["list", "--json", "--latex"], ("--json", "--latex")),
    (["bench", "--list", "--json"], ("json", "--list")),
])
def test_conflicting_or_ignored_flags_are_refused(capsys, argv, names):
    assert_refused(argv + ["--claims" if argv[0] != "bench" else "--cases", FAST_CLAIM if argv[0] != "bench"
                           else "audit.*"], capsys, *names)


# -- 6. --seeds must not repeat ----------------------------------------------------------------------------
def test_check_stability_refuses_repeated_seeds(capsys):
    assert_refused(["check", "--stability", "--seeds", "1,1", "--claims", FAST_CLAIM], capsys, "seeds: ",
                   "must not repeat")
    with pytest.raises(InputError, match="seeds: must not repeat"):
        parse_seeds("0,2,0")


# -- 7. a pattern outside the --paper/--kind selection says so ---------------------------------------------
@pytest.mark.parametrize("argv, paper, kind", [
    (["list", "--paper", "eos", "--claims", "sam.*"], "eos", None),
    (["check", "--paper", "eos", "--claims", "sam.*"], "eos", "theory"),  # check: theory claims only
    (["list", "--kind", "experiment", "--claims", "sam.depth1.*"], None, "experiment"),
])
def test_an_unmatched_pattern_names_the_selection_and_its_closest_ids(capsys, argv, paper, kind):
    scope = " and ".join(f"{what} {value}" for what, value in (("paper", paper), ("kind", kind)) if value)
    err = assert_refused(argv, capsys, "claims: ", f"matches no registered claim of {scope}")
    listed = err.split("closest ids: ", 1)[1].split(" (", 1)[0].split(", ")
    scoped = {c.id for c in all_claims() if paper in (None, c.paper) and kind in (None, c.kind)}
    assert len(listed) == 3 and set(listed) <= scoped


# -- 8. bench --help describes every option ------------------------------------------------------------------
def test_bench_help_describes_every_option_and_the_empty_cases(capsys):
    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    options = {a.dest: a.help for a in sub.choices["bench"]._actions}
    assert all(options[name] for name in ("cases", "quick", "json", "list")), options
    assert "empty" in options["cases"] and "every case" in options["cases"]
    code, _ = run_cli(["bench", "--cases", "", "--list"], capsys)  # '' still means every case
    assert code == 0
