"""numerics/cache_guard.py: numba caches are dropped when any numerics source changes (and only then)."""

import hashlib

from biasaudit.numerics import cache_guard as G


def _package(tmp_path):
    pkg = tmp_path / "numerics"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "b.py").write_text("y = 2\n")
    return pkg


def _cache_files(cache):
    for name in ("a.f-1.py311.nbi", "a.f-1.py311.1.nbc", "b.g-3.py311.nbi"):
        (cache / name).write_bytes(b"compiled")


def test_first_run_and_every_source_change_drop_the_caches_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    pkg = _package(tmp_path)
    cache = pkg / "__pycache__"
    _cache_files(cache)
    (cache / "a.cpython-311.pyc").write_bytes(b"bytecode")
    assert len(G.guard(pkg)) == 3 and not list(cache.glob("*.nb*")) and (cache / "a.cpython-311.pyc").exists()
    _cache_files(cache)
    assert G.guard(pkg) == [] and len(list(cache.glob("*.nb*"))) == 3  # unchanged sources: caches kept
    (pkg / "b.py").write_text("y = 3\n")  # a callee changed: every cache in the package goes
    assert len(G.guard(pkg)) == 3 and (cache / G.STAMP_NAME).read_text().strip() == G.sources_digest(pkg)


def test_numba_cache_dir_is_guarded_too(tmp_path, monkeypatch):
    pkg = _package(tmp_path)
    root = tmp_path / "numba-cache"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(root))
    custom = root / f"numerics_{hashlib.sha1(str(pkg).encode()).hexdigest()}"
    custom.mkdir(parents=True)
    _cache_files(custom)
    G.guard(pkg)
    assert not list(custom.glob("*.nb*")) and (custom / G.STAMP_NAME).is_file()


def test_the_real_package_is_stamped():
    stamp = G._PACKAGE / "__pycache__" / G.STAMP_NAME
    assert stamp.is_file() and stamp.read_text().strip() == G.sources_digest()
