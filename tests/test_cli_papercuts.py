"""The small frictions of a first day: a scalar ``--w0``, ``--plot`` in PNG, PDF or SVG, a suggestion for a
mistyped option or command, and ``check -h`` stating its exit codes."""

import pytest

from biasaudit.cli import main


def _err(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_a_scalar_w0_is_used_for_every_coordinate(capsys):
    assert main(["regimes", "eos", "--x", "1,2,3", "--y", "1", "--w0", "0.05"]) == 0
    assert "w0 = (0.05, 0.05, 0.05)" in capsys.readouterr().out
    assert main(["regimes", "eos", "--x", "1,2,3", "--y", "1", "--w0", "0.05,1"]) == 2
    assert "w0: must have 1 or 3 items (as many as --x)" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["s.png", "s.pdf", "s.svg", "S.PDF"])
def test_plot_accepts_png_pdf_and_svg(tmp_path, name):
    from biasaudit.commands.sweep import PLOT_SUFFIXES
    from biasaudit.plumbing import writable_file

    assert writable_file("plot", tmp_path / name, suffix=PLOT_SUFFIXES) == (tmp_path / name).resolve()


def test_plot_refuses_another_format_before_the_sweep(tmp_path, capsys):
    argv = ["sweep", "eos", "--x", "1,2", "--y", "1", "--w0", "0.1", "--eta-min", "0.1", "--eta-max", "1",
            "--plot", str(tmp_path / "s.jpg")]
    assert main(argv) == 2
    assert "plot: must be a .png or .pdf or .svg file name" in capsys.readouterr().err


def test_a_mistyped_option_gets_a_suggestion(capsys):
    err = _err(["regimes", "eos", "--x", "1", "--y", "1", "--w0", "1", "--jsn"], capsys)
    assert "unrecognized arguments: --jsn (did you mean --json?)" in err and len(err.splitlines()) == 1
    err = _err(["regimes", "sam", "--nrom", "l2"], capsys)  # a required option missing too: still suggested
    assert "did you mean --norm?" in err
    err = _err(["check", "--claims", "x", "--zzzzzz"], capsys)  # nothing close: no suggestion
    assert "unrecognized arguments: --zzzzzz (see" in err


def test_a_mistyped_command_gets_a_suggestion(capsys):
    assert "did you mean 'check'?" in _err(["chek"], capsys)


def test_check_help_states_its_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["check", "-h"])
    out = capsys.readouterr().out
    assert "exit status:" in out and "add --strict" in out and "2  bad input" in out
