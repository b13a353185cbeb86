"""The audit's store, resume, error records and report, on the toy claims of ``test_audit_toyclaims``."""

import io
import json
import os
import re
from pathlib import Path

import pytest

from biasaudit.audit import AuditConfig, execute_audit
from biasaudit.audit.report_data import format_pair
from biasaudit.audit.store import EvidenceStore, atomic_write_text, record_checksum
from biasaudit.audit.units import TIMING_FIELDS
from biasaudit.cli import main
from biasaudit.plumbing import InputError

TOYS = ("test_audit_toyclaims",)


def config(out, **kw):
    kw.setdefault("claims", "toy.*")
    kw.setdefault("workers", 1)
    kw.setdefault("figures", False)
    return AuditConfig(out=Path(out), extra_modules=TOYS, **kw)


def audit(out, **kw):
    return execute_audit(config(out, **kw), quiet=True)


def without_timings(records):
    """Records minus the fields that may differ between runs (timings, and the checksum over them)."""
    return [{k: v for k, v in r.items() if k not in (*TIMING_FIELDS, "hmac_sha256")} for r in records]


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference")
    return audit(out), out


# -- atomic store -----------------------------------------------------------------------------------------
def test_audit_atomic_write_leaves_old_file_when_replace_fails(tmp_path, monkeypatch):
    path = tmp_path / "evidence.jsonl"
    atomic_write_text(path, "old\n")

    def boom(src, dst):
        raise OSError("disk vanished")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(path, "new\n")
    assert path.read_text() == "old\n"
    assert list(tmp_path.glob(".*.tmp")) == []  # the temporary is cleaned up


def test_audit_store_detects_truncated_and_edited_lines(tmp_path):
    store = EvidenceStore(tmp_path / "e.jsonl", "claim_id", required=("verdict",))
    for i in range(3):
        store.put({"claim_id": f"c{i}", "verdict": "confirmed", "error": 0.1 * i}, write=False)
    store.write()
    lines = store.path.read_text().splitlines()
    edited = lines[1].replace('"error":0.1', '"error":0.0')  # a changed number: checksum no longer holds
    store.path.write_text(lines[0] + "\n" + edited + "\n" + lines[2][: len(lines[2]) // 2])  # truncated tail
    again = EvidenceStore(store.path, "claim_id", required=("verdict",))
    bad = again.load()
    assert [b.lineno for b in bad] == [2, 3]
    assert "checksum" in bad[0].reason and "JSON" in bad[1].reason
    assert list(again.records) == ["c0"]


def test_audit_store_writes_in_fixed_order_whatever_the_finish_order(tmp_path):
    a = EvidenceStore(tmp_path / "a.jsonl")
    b = EvidenceStore(tmp_path / "b.jsonl")
    for store, order in ((a, ["x", "y", "z"]), (b, ["z", "x", "y"])):
        store.set_order(["x", "y", "z"])
        for key in order:
            store.put({"claim_id": key, "verdict": "confirmed"})
    assert a.path.read_bytes() == b.path.read_bytes()
    assert [r["claim_id"] for r in read_jsonl(a.path)] == ["x", "y", "z"]


def test_audit_checksum_covers_every_field():
    record = {"claim_id": "c", "verdict": "confirmed", "error": 1e-3}
    assert record_checksum(record) != record_checksum({**record, "verdict": "refuted"})
    assert record_checksum(record) == record_checksum({**record, "hmac_sha256": "anything"})


# -- records ----------------------------------------------------------------------------------------------
def test_audit_records_have_evidence_provenance_and_verdicts(reference_run):
    result, out = reference_run
    records = {r["claim_id"]: r for r in read_jsonl(out / "evidence.jsonl")}
    assert len(records) == 10
    assert records["toy.square.0"]["verdict"] == "confirmed"
    assert records["toy.false"]["verdict"] == "refuted"
    assert records["toy.undecided"]["verdict"] == "undecided"
    for field in ("claim_id", "params", "predicted", "observed", "error", "tolerance", "verdict", "seed",
                  "versions", "elapsed_s", "code", "profile"):
        assert field in records["toy.square.0"], field
    assert records["toy.square.0"]["profile"] == "ci"
    assert {"numpy", "sympy", "python"} <= set(records["toy.square.0"]["versions"])
    assert "git_commit" in records["toy.square.0"]["code"]  # a sha or None, never missing


def test_audit_error_record_keeps_the_message_and_the_audit_goes_on(reference_run):
    _, out = reference_run
    records = {r["claim_id"]: r for r in read_jsonl(out / "evidence.jsonl")}
    err = records["toy.raises"]
    assert err["verdict"] == "error"
    assert err["detail"] == "RuntimeError: toy check exploded"
    assert "toy check exploded" in err["traceback"]
    assert records["toy.undecided"]["verdict"] == "undecided"  # the claim after it still ran


def test_audit_same_seed_gives_identical_records_other_seed_differs(reference_run, tmp_path):
    result, _ = reference_run
    holder = next(r for r in result.records if r["claim_id"] == "toy.object_prediction")
    assert "0x" not in json.dumps(holder)  # a function's repr without its (run-dependent) address
    again = audit(tmp_path / "a")
    assert without_timings(again.records) == without_timings(result.records)
    other = audit(tmp_path / "b", seed=1)
    assert other.records[0]["params"] != result.records[0]["params"]


def test_audit_process_pool_equals_inline(reference_run, tmp_path):
    result, _ = reference_run
    pooled = audit(tmp_path / "pool", workers=2)
    assert without_timings(pooled.records) == without_timings(result.records)


# -- resume -----------------------------------------------------------------------------------------------
def test_audit_resume_keeps_complete_records_and_redoes_errors(reference_run, tmp_path):
    first = audit(tmp_path)
    again = audit(tmp_path, resume=True)
    assert again.reused == 9 and again.ran == 1  # only toy.raises (an error) is retried
    assert without_timings(again.records) == without_timings(first.records)
    assert again.records[0]["elapsed_s"] == first.records[0]["elapsed_s"]  # kept, not rerun


def test_audit_resume_redoes_a_truncated_line_and_duplicates_nothing(reference_run, tmp_path):
    result, _ = reference_run
    audit(tmp_path)
    path = tmp_path / "evidence.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])  # a crash mid-line (no atomic write)
    resumed = audit(tmp_path, resume=True)
    assert len(resumed.bad_lines) == 1 and resumed.bad_lines[0].lineno == len(lines)
    ids = [r["claim_id"] for r in read_jsonl(path)]
    assert len(ids) == len(set(ids)) == 10
    assert without_timings(read_jsonl(path)) == without_timings(result.records)


def _flip_toy_false(path, recompute):
    """Turn toy.false's "refuted" into "confirmed" in the file, with a recomputed checksum (``recompute``)."""
    lines = path.read_text().splitlines()
    out = []
    for line in lines:
        record = json.loads(line)
        if record["claim_id"] == "toy.false":
            record["verdict"] = "confirmed"
            record["hmac_sha256"] = recompute(record)
            line = json.dumps(record)
        out.append(line)
    path.write_text("\n".join(out) + "\n")


def test_audit_resume_detects_a_hand_edited_verdict_with_a_recomputed_plain_hash(tmp_path):
    import hashlib

    from biasaudit.audit.store import canonical_json

    first = audit(tmp_path)
    key_file = tmp_path / ".evidence-key"
    assert key_file.is_file() and (key_file.stat().st_mode & 0o777) == 0o600
    _flip_toy_false(tmp_path / "evidence.jsonl", lambda r: hashlib.sha256(canonical_json(
        {k: v for k, v in r.items() if k != "hmac_sha256"}).encode()).hexdigest())
    resumed = audit(tmp_path, resume=True)
    assert [b.reason for b in resumed.bad_lines] == ["checksum mismatch (partial or edited record)"]
    verdicts = {r["claim_id"]: r["verdict"] for r in resumed.records}
    assert verdicts["toy.false"] == "refuted"  # redone, not kept
    assert without_timings(resumed.records) == without_timings(first.records)


def test_audit_resume_rederives_the_verdict_even_with_the_folder_key(tmp_path):
    """Whoever holds the key can sign anything; the verdict must still follow from error and tolerance."""
    from biasaudit.audit.store import folder_key

    audit(tmp_path)
    key = folder_key(tmp_path)
    _flip_toy_false(tmp_path / "evidence.jsonl", lambda r: record_checksum(r, key))
    resumed = audit(tmp_path, resume=True)
    assert len(resumed.bad_lines) == 1
    assert "verdict does not follow from the record (confirmed with error" in resumed.bad_lines[0].reason
    assert {r["claim_id"]: r["verdict"] for r in resumed.records}["toy.false"] == "refuted"


def test_verdict_inconsistency_rules():
    from biasaudit.ledger import verdict_inconsistency

    tol = {"value": 1e-3}
    controls = {"all_failed": True, "runs": [{"target": "prediction", "side": "+", "failed": True, "error": 0.01}]}
    good = {"verdict": "confirmed", "error": 1e-4, "tolerance": tol, "negative_control": controls}
    assert verdict_inconsistency(good) == ""
    assert "outside the tolerance" in verdict_inconsistency({**good, "error": 0.1})
    assert "outside the tolerance" in verdict_inconsistency({**good, "error": "nan"})
    weak = {**controls, "runs": [{**controls["runs"][0], "failed": False}]}
    assert "not refuted" in verdict_inconsistency({**good, "negative_control": weak})
    assert "within the tolerance" in verdict_inconsistency({"verdict": "refuted", "error": 1e-4, "tolerance": tol})
    assert verdict_inconsistency({"verdict": "refuted", "error": "inf", "tolerance": tol}) == ""
    assert verdict_inconsistency({"verdict": "refuted", "error": 0.0, "tolerance": tol,
                                  "detail": "reference value not reproduced (x)"}) == ""
    assert verdict_inconsistency({"verdict": "undecided", "error": None, "tolerance": tol}) == ""


def test_audit_resume_with_another_seed_redoes_everything(tmp_path):
    audit(tmp_path)
    other = audit(tmp_path, resume=True, seed=5)
    assert other.reused == 0 and all(r["seed"] == 5 for r in other.records)


def test_audit_resume_keeps_records_outside_the_pattern(tmp_path):
    audit(tmp_path)
    part = audit(tmp_path, resume=True, claims="toy.square.1")
    assert part.ran == 0 and len(part.records) == 10


# -- bad input --------------------------------------------------------------------------------------------
def test_audit_unknown_pattern_names_the_closest_ids(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BIASAUDIT_EXTRA_CLAIM_MODULES", ",".join(TOYS))
    assert main(["audit", "--claims", "toy.squar.1", "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("biasaudit: error: claims: matches no registered claim; closest ids: toy.square.1, ")
    assert len(err.splitlines()) == 1 and "Traceback" not in err and not (tmp_path / "out").exists()


def test_audit_unwritable_out_fails_before_any_work(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    import biasaudit.audit.runner as runner

    monkeypatch.setattr(runner, "select_audit_claims", lambda *a: pytest.fail("work started"))
    with pytest.raises(InputError, match="^out: must be"):
        audit(blocker / "report")
    with pytest.raises(InputError, match="^out: must be a directory"):
        audit(blocker)


@pytest.mark.parametrize("argv, message", [
    (["--executor", "dask"], "scheduler: is required"),
    (["--executor", "dask", "--scheduler", "localhost:8786"], "scheduler: must be an address"),
    (["--scheduler", "tcp://127.0.0.1:1"], "scheduler: applies to --executor dask only"),
    (["--workers", "0"], "workers: must be an integer in [1, 1024]"),
    (["--seed", "-1"], "seed: must be an integer >= 0"),
])
def test_audit_bad_options_exit_2_with_one_line(tmp_path, capsys, argv, message):
    assert main(["audit", "--out", str(tmp_path), "--quiet", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


# -- report -----------------------------------------------------------------------------------------------
def test_audit_html_report_is_self_contained_and_shows_problems_first(tmp_path):
    result = audit(tmp_path, figures=True)
    page = result.report_html.read_text()
    assert not re.search(r"https?://", page)
    assert "<script" not in page and "<link" not in page and "@import" not in page
    for src in re.findall(r'src="([^"]+)"', page):
        assert (tmp_path / src).is_file(), src
    assert 'src="figures/toy.fig.ok/toy_line.png"' in page
    problems, table = page.index("Refuted, error and undecided"), page.index("All claims")
    for claim_id in ("toy.false", "toy.raises", "toy.undecided"):
        assert problems < page.index(f'id="problem-{claim_id}"') < table
    for i in range(6):
        assert f'id="claim-toy.square.{i}"' in page
    assert "<math" in page  # statements as MathML


def test_audit_figure_errors_are_records_and_missing_apis_are_listed(tmp_path):
    result = audit(tmp_path, figures=True)
    figures = {f["figure_id"]: f for f in result.figures}
    assert figures["toy.fig.ok"]["status"] == "ok" and figures["toy.fig.ok"]["files"] == ["toy.fig.ok/toy_line.png"]
    assert figures["toy.fig.broken"]["status"] == "error"
    assert "toy figure exploded" in figures["toy.fig.broken"]["detail"]
    assert "toy.fig.missing" not in figures
    text = result.report_md.read_text()
    assert "toy.fig.missing` left out" in text and "toy figure exploded" in text
    again = audit(tmp_path, figures=True, resume=True)
    assert again.ran == 2  # the raising claim and the broken figure are retried; the good figure is kept


def test_audit_markdown_report_never_rounds_a_refutation(tmp_path):
    result = audit(tmp_path)
    text = result.report_md.read_text()
    head = text[: text.index("## All claims")]
    assert "`toy.false`: **REFUTED**" in head and "toy.square.0" not in head
    assert format_pair(1.00004e-10, 1e-10) == ("1.00004e-10", "1e-10")
    assert format_pair(1 + 2**-52, 1.0) == ("1.0000000000000002", "1")


def test_audit_progress_prints_a_line_per_unit_when_not_a_tty(tmp_path):
    from biasaudit.audit.progress import AuditProgress

    stream = io.StringIO()
    progress = AuditProgress(10, stream=stream)
    execute_audit(config(tmp_path), progress=progress)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("[1/10] toy.square.0  ok") and lines[-1].startswith("[10/10] toy.undecided  UNDECIDED")


def test_audit_progress_bars_count_cases_on_a_tty(tmp_path):
    from biasaudit.audit.progress import AuditProgress

    events = []
    progress = AuditProgress(10, stream=io.StringIO(), bars=True)
    original = progress.event
    progress.event = lambda e: (events.append(e), original(e))
    execute_audit(config(tmp_path), progress=progress)
    progress.close()
    square = [e[0] for e in events if e[1] == "toy.square.0"]
    assert square == ["start", "case", "case", "case", "case", "end"]  # 3 samples + 1 negative control


# -- the report's figure jobs (plotting over the theory/numerics APIs) ---------------------------------------
def _figure_ids():
    from biasaudit.figures import FIGURES

    return [job.id for job in FIGURES]


@pytest.mark.parametrize("figure_id", _figure_ids())
def test_audit_figure_job_writes_its_png(figure_id, tmp_path):
    from biasaudit.figures import figure_available, get_figure

    job = get_figure(figure_id)
    ok, why = figure_available(job)
    # a missing third-party library may skip a figure; a missing biasaudit attribute is a broken requirement
    # (a module move once made three SAM figures go silently missing from the audit)
    assert ok or not why.startswith("biasaudit"), f"{figure_id}: {why}"
    if not ok:
        pytest.skip(f"{figure_id}: {why}")
    paths = job.make(tmp_path, "quick")
    assert paths and all(p.is_file() and p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)
    assert all(p.parent == tmp_path for p in paths)


def test_audit_progress_names_running_units_without_a_tty(monkeypatch):
    import biasaudit.audit.progress as progress_module

    monkeypatch.setattr(progress_module, "HEARTBEAT_S", 0.0)
    stream = io.StringIO()
    progress = progress_module.AuditProgress(2, stream=stream)
    progress.event(("start", "eos.torch.e1", "eos.torch.e1", 3))
    progress.event(("tick", ""))
    progress.event(("end", "eos.torch.e1"))
    progress.event(("tick", ""))
    lines = stream.getvalue().splitlines()
    assert lines and all(line.strip().startswith("running: eos.torch.e1 (") for line in lines)


@pytest.fixture
def toys_only_registry(monkeypatch):
    """The registry without production modules (a cheap full audit); the module cache cleared around it."""
    import biasaudit.registry

    monkeypatch.setattr(biasaudit.registry, "claim_packages", lambda: ())
    biasaudit.registry.load.cache_clear()
    try:
        yield
    finally:
        biasaudit.registry.load.cache_clear()


def test_audit_a_claims_module_that_fails_to_import_is_an_error_record(tmp_path, toys_only_registry):
    result = execute_audit(AuditConfig(out=tmp_path, workers=1, figures=False,
                                   extra_modules=(*TOYS, "test_audit_no_such_module")), quiet=True)
    records = {r["claim_id"]: r for r in result.records}
    broken = records["import:test_audit_no_such_module"]
    assert broken["verdict"] == "error" and "ModuleNotFoundError" in broken["detail"]
    assert records["toy.square.0"]["verdict"] == "confirmed"  # the other modules' claims still ran
    assert "import:test_audit_no_such_module" in result.report_html.read_text()


def test_audit_tier_full_runs_the_thorough_profile(tmp_path):
    result = audit(tmp_path, tier="full", claims="toy.square.0")
    (record,) = result.records
    assert record["profile"] == "thorough" and record["n_cases"] == 6  # the toy's thorough sample count
    with pytest.raises(InputError, match="^tier: must be one of quick, full"):
        audit(tmp_path, tier="huge")


def test_audit_bench_noop_claim_is_a_valid_claim():
    from biasaudit.benchmarks import all_cases
    from biasaudit.benchmarks.ledger import _noop_claim
    from biasaudit.ledger import Verdict, run_claim

    assert run_claim(_noop_claim(0)).verdict is Verdict.CONFIRMED
    assert {"audit.overhead", "sam.l2_heatmap", "eos.gd_sweep"} <= {c.name for c in all_cases()}


def test_audit_cli_final_line_names_the_figures_that_failed(tmp_path, monkeypatch, capsys):
    """A failed figure is named in the audit's last line, not only inside the report."""
    import dataclasses

    import biasaudit.audit as audit_pkg

    real = audit_pkg.execute_audit
    monkeypatch.setattr(audit_pkg, "execute_audit", lambda cfg, **kw: real(
        dataclasses.replace(cfg, extra_modules=TOYS, workers=1), **kw))
    assert main(["audit", "--claims", "toy.*", "--out", str(tmp_path)]) == 0
    assert "figures failed: toy.fig.broken" in capsys.readouterr().err
