"""Lint is part of the test run: ruff's pyflakes rules (unused imports and names, undefined names, syntax) over the
whole repository, and the missing-docstring rules (D100-D104, D106) for the public API outside tests/, docs/ and
examples/, with the configuration in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_ruff_finds_nothing():
    run = ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_ruff_sees_an_unused_import(tmp_path):
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "bad.py").write_text("import os\n")
    run = ruff("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert run.returncode == 1 and "F401" in run.stdout


def test_ruff_wants_docstrings_in_the_layers_but_not_in_tests(tmp_path):
    """The same undocumented public function is D103 in a layer folder (plumbing/) and passes under tests/; a private
    one passes in both."""
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    module = '"""A module."""\n\n\ndef public_helper(x):\n    return x\n\n\ndef _private_helper(x):\n    return x\n'
    for folder in ("plumbing", "tests"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text('"""A package."""\n')
        (tmp_path / folder / "helpers.py").write_text(module)
    run = ruff("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    reported = [line for line in run.stdout.splitlines() if ": D" in line]
    assert run.returncode == 1 and len(reported) == 1, run.stdout + run.stderr
    assert reported[0].startswith("plumbing/helpers.py:4:5: D103"), reported
