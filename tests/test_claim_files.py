"""Your own claim in one command: ``--claims`` of ``check``, ``audit`` and ``list`` loads a claim module from
a file or a folder (here, the file ``biasaudit new-claim`` writes), without packaging; an unknown pattern is
refused in one line naming the three closest ids; a refused audit leaves no folder behind."""

import pytest

from biasaudit.cli import main


@pytest.fixture(scope="module")
def claim_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mine") / "myclaims"
    assert main(["new-claim", "qq_series", "--out", str(folder)]) == 0
    return folder / "qq_series.py"


def _refused(argv, capsys) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) <= 3 and "Traceback" not in err, err
    return err


def test_check_runs_a_claim_file_written_by_new_claim(claim_file, capsys):
    assert main(["check", "--claims", str(claim_file), "--strict"]) == 0
    out = capsys.readouterr().out
    assert "qq_series.geometric_sum" in out and "confirmed: 1, total: 1" in out


def test_check_runs_a_folder_of_claim_files_and_skips_their_tests(claim_file, capsys):
    assert main(["check", "--claims", str(claim_file.parent), "--json"]) == 0
    out = capsys.readouterr().out
    assert '"total": 1' in out and "qq_series.geometric_sum" in out


def test_a_file_and_a_glob_together(claim_file, capsys):
    assert main(["list", "--claims", f"{claim_file},sam.depth1.svm_direction"]) == 0
    out = capsys.readouterr().out
    assert "qq_series.geometric_sum" in out and "sam.depth1.svm_direction" in out


def test_audit_runs_a_claim_file_and_shows_its_statement(claim_file, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["audit", "--claims", str(claim_file), "--out", str(out), "--quiet", "--no-figures",
                 "--workers", "1"]) == 0
    page = (out / "index.html").read_text()
    assert 'id="claim-qq_series.geometric_sum"' in page and "<math" in page


def test_an_unknown_pattern_names_the_three_closest_ids(capsys):
    err = _refused(["check", "--claims", "sam.depth1.svm_direcion"], capsys)
    assert "claims: " in err and "closest ids: sam.depth1.svm_direction" in err
    closest = err.split("closest ids: ")[1].split(" (")[0].split(", ")
    assert len(closest) == 3
    err = _refused(["check", "--claims", "nosuch.*"], capsys)
    assert "closest ids: " in err and len(err) < 400


def test_a_refused_audit_leaves_no_folder(tmp_path, capsys):
    out = tmp_path / "never"
    _refused(["audit", "--claims", "nosuch.*", "--out", str(out), "--quiet"], capsys)
    assert not out.exists()
    _refused(["audit", "--claims", str(tmp_path / "missing.py"), "--out", str(out), "--quiet"], capsys)
    assert not out.exists()


def test_a_missing_or_broken_claim_file_is_refused_in_one_line(tmp_path, capsys):
    err = _refused(["check", "--claims", str(tmp_path / "missing.py")], capsys)
    assert "names no claim module file" in err
    broken = tmp_path / "broken_claims.py"
    broken.write_text("raise RuntimeError('half-written claim')\n")
    err = _refused(["check", "--claims", str(broken)], capsys)
    assert "failed to import: RuntimeError: half-written claim" in err
    empty = tmp_path / "empty_claims.py"
    empty.write_text("CLAIMS = ()\n")
    assert "defines no claim" in _refused(["check", "--claims", str(empty)], capsys)
    (tmp_path / "nothing").mkdir()
    assert "no claim module" in _refused(["check", "--claims", str(tmp_path / "nothing")], capsys)
