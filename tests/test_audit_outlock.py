"""One audit per output folder: a second live audit into the same --out exits 2 before any work."""

import subprocess
import sys

import pytest

from biasaudit.audit import AuditConfig, execute_audit
from biasaudit.audit.outlock import LOCK_NAME, hold_out_dir
from biasaudit.plumbing import InputError

HOLDER = """
import sys, time
from pathlib import Path
from biasaudit.audit.outlock import hold_out_dir
with hold_out_dir(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


@pytest.fixture
def held(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    yield tmp_path, proc
    proc.kill()
    proc.wait()


def test_a_second_audit_into_a_held_folder_exits_2_naming_the_holder(held):
    out, proc = held
    run = subprocess.run([sys.executable, "-m", "biasaudit", "audit", "--out", str(out), "--claims",
                          "sam.gd.l2_closed_form", "--no-figures", "--quiet"], capture_output=True, text=True)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "out:" in lines[0] and f"pid {proc.pid}" in lines[0], run.stderr
    assert not (out / "evidence.jsonl").exists()


def test_the_api_raises_the_same_error(held):
    out, _ = held
    with pytest.raises(InputError, match="^out: is held by another live audit"):
        execute_audit(AuditConfig(out=out, claims="sam.gd.l2_closed_form", figures=False), quiet=True)


def test_a_killed_holder_does_not_block_the_next_audit(held):
    out, proc = held
    proc.kill()
    proc.wait()
    with hold_out_dir(out):  # the kernel dropped the dead holder's lock
        assert (out / LOCK_NAME).read_text().startswith("pid ")
    result = execute_audit(AuditConfig(out=out, claims="sam.gd.l2_closed_form", figures=False), quiet=True)
    assert [r["verdict"] for r in result.records] == ["confirmed"]


def test_cache_dir_is_checked_before_any_work(tmp_path):
    a_file = tmp_path / "f"
    a_file.write_text("x")
    run = subprocess.run([sys.executable, "-m", "biasaudit", "audit", "--out", str(tmp_path / "r"),
                          "--cache-dir", str(a_file), "--claims", "sam.gd.l2_closed_form", "--no-figures"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.strip().startswith("biasaudit: error: cache-dir:"), run.stderr
    assert not (tmp_path / "r").exists()


def test_cache_dir_and_no_cache_route_the_cache(tmp_path, monkeypatch):
    import os

    from biasaudit.cli import main

    seen = []
    monkeypatch.setattr("biasaudit.commands.audit._run", lambda args: seen.append(os.environ["BIASAUDIT_CACHE_DIR"]))
    main(["audit", "--cache-dir", str(tmp_path / "c"), "--out", str(tmp_path / "r")])
    main(["audit", "--no-cache", "--out", str(tmp_path / "r")])
    assert seen[0] == str((tmp_path / "c").resolve()) and (tmp_path / "c").is_dir()
    assert "biasaudit-nocache-" in seen[1] and not os.path.exists(seen[1])  # removed at the end
