"""The CLI front door: exit codes and one-line errors."""

import subprocess
import sys

import pytest

from biasaudit.cli import main


def test_cli_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert "biasaudit" in capsys.readouterr().out


def test_cli_without_a_command_exits_2(capsys):
    assert main([]) == 2


def test_cli_unknown_claim_pattern_is_a_clear_error(capsys):
    assert main(["check", "--claims", "no.such.claim.*"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("biasaudit: error: claims: matches no registered claim")
    assert "Traceback" not in err


def test_cli_unknown_command_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2


def test_python_dash_m_biasaudit_works():
    out = subprocess.run([sys.executable, "-m", "biasaudit", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and "biasaudit" in out.stdout


def test_cli_import_does_not_import_torch_or_numba():
    code = "import sys, biasaudit.cli as c; c.build_parser(); print('torch' in sys.modules, 'numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_registry_and_theory_checks_do_not_import_torch():
    code = ("import sys; from biasaudit.registry import all_claims; import biasaudit.commands.check; "
            "all_claims(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"], out.stderr


def test_check_json_lists_claims_with_id_paper_and_verdict(capsys):
    import json

    assert main(["check", "--claims", "sam.flow.euler_step", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (claim,) = out["claims"]
    assert claim["id"] == "sam.flow.euler_step" and claim["paper"] == "sam"
    assert claim["verdict"] == "confirmed" and out["summary"]["confirmed"] == 1


def test_check_table_keeps_numbers_and_cuts_details_at_words():
    from biasaudit.commands.check import format_table

    detail = "worst of 3 cases: " + "token " * 40
    table = format_table([{"claim_id": "x.y", "verdict": "confirmed", "error": 0.25,
                           "tolerance": {"value": 1e-12}, "detail": detail}])
    row = table.splitlines()[1]
    assert " 0.25 " in row and " 1e-12 " in row and "2e-01" not in row
    assert row.endswith("token …")
