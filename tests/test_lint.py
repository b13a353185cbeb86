"""Lint is part of the test run: ruff's pyflakes rules (unused imports and names, undefined names, syntax) over the
whole repository, with the configuration in pyproject.toml."""

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
