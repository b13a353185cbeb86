"""The one cached-JSON helper (biasaudit.plumbing.jsoncache.cached_json): read or compute, one process per
file, atomic writes, runs counted."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time

import pytest

from biasaudit.plumbing import jsonable, runcache
from biasaudit.plumbing.jsoncache import cached_json, lock_path, read_json


@pytest.fixture(autouse=True)
def _counts():
    runcache.reset_run_counts()
    yield
    runcache.reset_run_counts()


def _fail():
    pytest.fail("computed although the cache holds the record")


def test_a_cache_hit_tells_a_run_of_this_audit_from_one_computed_before_it(tmp_path, monkeypatch):
    """Run accounting: a hit on a file written after the running audit started is a "repeated" read of a run
    this audit computed (a second claim reading it), not a run "reused" from before the audit."""
    before = tmp_path / "before.json"
    cached_json(before, lambda: {"value": 1}, key="k")
    os.utime(before, (time.time() - 60, time.time() - 60))
    monkeypatch.setenv(runcache.AUDIT_STARTED_VARIABLE, repr(time.time() - 1))
    runcache.reset_run_counts()
    during = tmp_path / "during.json"
    cached_json(during, lambda: {"value": 2}, key="k")
    cached_json(during, _fail, key="k")
    cached_json(before, _fail, key="k")
    assert runcache.run_counts() == {"computed": 1, "reused": 1, "repeated": 1}


def test_computes_once_then_reads_and_counts_each(tmp_path):
    path = tmp_path / "run.json"
    first = cached_json(path, lambda: {"value": 1.5}, key="k1")
    assert first == {"key": "k1", "value": 1.5} and json.loads(path.read_text()) == first
    assert cached_json(path, _fail, key="k1") == first
    assert runcache.run_counts() == {"computed": 1, "reused": 1, "repeated": 0}
    assert lock_path(path).name == ".run.json.lock" and lock_path(path).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".run.json.lock", "run.json"]  # no temporary left


def test_another_key_or_a_damaged_file_is_recomputed(tmp_path):
    path = tmp_path / "run.json"
    cached_json(path, lambda: {"value": 1}, key="old")
    assert cached_json(path, lambda: {"value": 2}, key="new") == {"key": "new", "value": 2}
    for damaged in ('{"key": "new", "val', "[1, 2]", "\xff\xfe"):
        path.write_bytes(damaged.encode("latin-1"))
        assert read_json(path) is None or not isinstance(read_json(path), dict)
        assert cached_json(path, lambda: {"value": 3}, key="new")["value"] == 3
    assert runcache.run_counts() == {"computed": 5, "reused": 0, "repeated": 0}


def test_encode_shapes_the_file_and_the_record_is_returned_as_written(tmp_path):
    """The EoS sweeps store jsonable(record) (non-finite floats as strings) and hand back what they wrote, as a
    later read would see it; the SAM runs store the record as it is (json's NaN)."""
    path = tmp_path / "gf.json"
    got = cached_json(path, lambda: {"s": math.inf, "grid": (1, 2)}, key="k", encode=jsonable)
    assert got == json.loads(path.read_text()) == {"key": "k", "s": "inf", "grid": [1, 2]}
    plain = cached_json(tmp_path / "run.json", lambda: {"m": math.nan}, key="k")
    assert math.isnan(plain["m"]) and "NaN" in (tmp_path / "run.json").read_text()


def test_a_compute_that_raises_writes_nothing_and_counts_nothing(tmp_path):
    path = tmp_path / "run.json"

    def crash():
        raise KeyboardInterrupt("killed mid-run")

    with pytest.raises(KeyboardInterrupt):
        cached_json(path, crash, key="k")
    assert not path.exists() and runcache.run_counts() == {"computed": 0, "reused": 0, "repeated": 0}


def test_a_crash_mid_write_leaves_the_old_file_and_no_partial_one(tmp_path, monkeypatch):
    """The write goes to a temporary file that replaces the target only once complete (atomic_write_text)."""
    path = tmp_path / "run.json"
    cached_json(path, lambda: {"value": 1}, key="old")
    before = path.read_bytes()
    real_fsync = os.fsync

    def crash_after_writing(fd):
        real_fsync(fd)
        raise KeyboardInterrupt("killed mid-write")  # after the bytes were written, before the rename

    monkeypatch.setattr(os, "fsync", crash_after_writing)
    with pytest.raises(KeyboardInterrupt):
        cached_json(path, lambda: {"value": 2, "pad": "x" * 100_000}, key="new")
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".run.json.lock", "run.json"]  # no temporary left


def test_an_unwritable_cache_costs_only_resumability(tmp_path, monkeypatch):
    from biasaudit.plumbing import jsoncache

    said = []
    monkeypatch.setattr(jsoncache, "status", said.append)

    def refuse(path, text):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(jsoncache, "atomic_write_text", refuse)
    assert cached_json(tmp_path / "run.json", lambda: {"value": 1}, key="k") == {"key": "k", "value": 1}
    assert not (tmp_path / "run.json").exists() and "could not store" in said[0]
    assert runcache.run_counts() == {"computed": 1, "reused": 0, "repeated": 0}


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from biasaudit.plumbing import runcache
    from biasaudit.plumbing.jsoncache import cached_json

    path, started = Path(sys.argv[1]), Path(sys.argv[2])

    def slow():
        started.write_text("computing")
        time.sleep(1.5)
        return {"by": "first"}

    cached_json(path, slow, key="k")
    print(runcache.run_counts()["computed"])
""")


def test_a_concurrent_second_caller_waits_and_reuses_the_first_ones_result(tmp_path):
    path, started = tmp_path / "run.json", tmp_path / "started"
    first = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(started)], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not started.exists():  # the first process holds the lock and is computing
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first process never started computing"
            time.sleep(0.02)
        waited = []
        t0 = time.monotonic()
        got = cached_json(path, _fail, key="k", on_wait=waited.append)
        assert time.monotonic() - t0 > 0.3  # blocked on the lock until the first one finished
    finally:
        out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert out.strip() == "1"  # the first process computed it once
    assert got == {"key": "k", "by": "first"} and len(waited) == 1 and str(lock_path(path)) in waited[0]
    assert runcache.run_counts() == {"computed": 0, "reused": 1, "repeated": 0}
