"""Data sets that cannot be bundled (notes/validation-sam.md): their designs run when the files are found (in the
audit's ``--data-dir`` or Debian's Fashion-MNIST folder) and their claims are out of scope, with the reason, when
not."""

import pickle

import numpy as np
import pytest

from biasaudit.claims.sam.torch import regimes as regimes_mod
from biasaudit.cli import main
from biasaudit.ledger import Verdict, run_claim
from biasaudit.tier import DATA_DIR_VARIABLE, TIER_VARIABLE
from biasaudit.validation import data as data_mod
from biasaudit.validation.data import dataset_location, write_idx


def _write_idx_pair(root, n=(12, 6)):
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for prefix, m in (("train", n[0]), ("t10k", n[1])):
        write_idx(root / f"{prefix}-images-idx3-ubyte", rng.integers(0, 256, (m, 28, 28)))
        write_idx(root / f"{prefix}-labels-idx1-ubyte", np.arange(m) % 10)
    return root


def _write_cifar(root, n=6):
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {b"data": rng.integers(0, 256, (n, 3072)).astype(np.uint8), b"labels": [i % 10 for i in range(n)]}
        with open(root / name, "wb") as fh:
            pickle.dump(batch, fh)
    return root


@pytest.fixture
def no_data(monkeypatch, tmp_path):
    """No data folder and no Debian Fashion-MNIST: only the bundled data sets exist."""
    monkeypatch.delenv(DATA_DIR_VARIABLE, raising=False)
    monkeypatch.setattr(data_mod, "FASHION_MNIST_DIR", tmp_path / "absent")
    return tmp_path


def test_dataset_location_looks_in_named_subfolders_then_the_folder(tmp_path):
    _write_idx_pair(tmp_path / "fashion-mnist")
    _write_cifar(tmp_path / "cifar-10-batches-py")
    assert dataset_location("fashion-mnist", tmp_path) == tmp_path / "fashion-mnist"
    assert dataset_location("cifar10", tmp_path) == tmp_path / "cifar-10-batches-py"
    assert dataset_location("svhn", tmp_path) is None and dataset_location("mnist5k", tmp_path) is None
    flat = _write_cifar(tmp_path / "flat")
    assert dataset_location("cifar10", flat) == flat


@pytest.mark.parametrize("claim, tier, reason", [
    (regimes_mod.FASHION_COLLAPSE_CLAIM, "quick", "apt-get install dataset-fashion-mnist"),
    (regimes_mod.CIFAR10_COLLAPSE_CLAIM, "quick", "full tier only"),
    (regimes_mod.CIFAR10_COLLAPSE_CLAIM, "full", "cifar10 not found"),
    (regimes_mod.SVHN_COLLAPSE_CLAIM, "full", "svhn not found"),
], ids=lambda x: getattr(x, "id", x))
def test_missing_data_makes_the_claim_out_of_scope_with_its_reason(no_data, monkeypatch, claim, tier, reason):
    monkeypatch.setenv(TIER_VARIABLE, tier)
    assert claim.runs() == ()
    rec = run_claim(claim, profile="ci")
    assert rec.verdict == Verdict.OUT_OF_SCOPE and reason in rec.detail


def test_found_data_is_trained_on(no_data, monkeypatch):
    """With CIFAR-10 in --data-dir, the full tier's runs are built on it, and one run of the design's kind
    (3-channel 32x32 images into the CNN) trains on the files."""
    from dataclasses import replace

    from biasaudit.validation.sam_regimes import design_settings
    from biasaudit.validation.sam_runs import cached_run

    _write_cifar(no_data / "cifar-10-batches-py")
    monkeypatch.setenv(DATA_DIR_VARIABLE, str(no_data))
    monkeypatch.setenv(TIER_VARIABLE, "full")
    units = regimes_mod.CIFAR10_COLLAPSE_CLAIM.runs()
    settings = design_settings("cifar10", "full")
    from biasaudit.validation.sam_regimes import ARMS

    diag = len(ARMS) * len(design_settings("diag", "full")["alphas"]) * len(design_settings("diag", "full")["seeds"])
    assert len(units) == len(ARMS) * len(settings["alphas"]) * len(settings["seeds"]) + diag  # + the positive control
    cfg = units[0].args[0]
    assert cfg.dataset == "cifar10" and cfg.data_dir == str(no_data / "cifar-10-batches-py")
    small = replace(cfg, n_train=24, n_test=6, n_eval=24, n_probe=2, steps=2, eval_every=1, batch_size=8, width=2)
    run = cached_run(small, use_cache=False)
    assert run["status"] in ("ok", "collapsed", "slow", "diverged") and run["config"]["dataset"] == "cifar10"


def test_audit_data_dir_must_exist(capsys, tmp_path):
    assert main(["audit", "--data-dir", str(tmp_path / "nope"), "--out", str(tmp_path / "r"),
                 "--claims", "sam.l2.regime3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("biasaudit: error: data-dir") and not (tmp_path / "r").exists()


def test_a_design_without_its_data_has_no_figure_job_to_run(no_data):
    from biasaudit.figures import figure_available, figures_for_claims

    jobs = {j.id: j for j in figures_for_claims(["sam.torch.cifar10_collapse_boundary",
                                                  "sam.torch.fashion_collapse_boundary"])}
    assert set(jobs) == {"sam.torch.regimes.cifar10", "sam.torch.regimes.fashion"}  # one job per design
    for tier in ("quick", "full"):
        ok, why = figure_available(jobs["sam.torch.regimes.cifar10"], tier)
        assert not ok and ("full tier only" in why if tier == "quick" else "cifar10 not found" in why)
    assert not figure_available(jobs["sam.torch.regimes.fashion"])[0]


def test_auditing_a_missing_data_claim_reports_it_out_of_scope(no_data, monkeypatch, tmp_path):
    import json

    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "r"
    assert main(["audit", "--claims", "sam.torch.svhn_collapse_boundary", "--out", str(out), "--workers", "1",
                 "--quiet"]) == 0
    records = [json.loads(line) for line in (out / "evidence.jsonl").read_text().splitlines() if line.strip()]
    assert [r["verdict"] for r in records] == ["out-of-scope"]
    assert "sam.torch.regimes.svhn" in (out / "report.md").read_text()  # listed as left out, with its reason


def test_a_runs_cache_key_follows_the_data_files_not_their_folder(tmp_path):
    """A run trained on one copy of CIFAR-10 never answers for another or for a corrupted one."""
    import shutil

    from biasaudit.validation.data import dataset_fingerprint
    from biasaudit.validation.sam_training import TrainConfig

    a = _write_cifar(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    key = lambda folder: TrainConfig(dataset="cifar10", data_dir=str(folder)).key()  # noqa: E731
    assert key(a) == key(b)  # same bytes elsewhere: the same run
    with open(b / "test_batch", "r+b") as fh:
        fh.seek(-1, 2)
        last = fh.read(1)
        fh.seek(-1, 2)
        fh.write(bytes([last[0] ^ 1]))
    assert key(a) != key(b) and dataset_fingerprint("cifar10", tmp_path / "empty") == "no-files"
    assert dataset_fingerprint("mnist5k") is None  # bundled data: the installed package fixes it


@pytest.mark.parametrize("data, labels, rule", [
    (np.zeros((4, 3072), np.uint8), ["cat"] * 4, "labels must hold integers"),
    ([[0] * 3072, [0] * 5], [0, 1], "not a rectangular numeric array"),
    (np.full((4, 3072), np.nan), [0, 1, 2, 3], r"data must lie in \[0, 255\]"),
    (np.array([["x"] * 3072] * 4), [0, 1, 2, 3], "data must hold numbers"),
])
def test_malformed_cifar_contents_name_the_file_and_the_rule(tmp_path, data, labels, rule):
    from biasaudit.plumbing import InputError
    from biasaudit.validation.data import load_dataset

    root = _write_cifar(tmp_path / "c")
    with open(root / "data_batch_1", "wb") as fh:
        pickle.dump({b"data": data, b"labels": labels}, fh)
    with pytest.raises(InputError, match=f"data_batch_1.*{rule}"):
        load_dataset("cifar10", data_dir=root)


def test_svhn_must_be_32x32(tmp_path):
    import scipy.io

    from biasaudit.plumbing import InputError
    from biasaudit.validation.data import load_dataset

    for split in ("train", "test"):
        scipy.io.savemat(tmp_path / f"{split}_32x32.mat", {"X": np.zeros((16, 16, 3, 2), np.uint8),
                                                           "y": np.array([[1], [2]], np.uint8)})
    with pytest.raises(InputError, match="32 x 32 x 3 x N"):
        load_dataset("svhn", data_dir=tmp_path)


@pytest.mark.parametrize("argv, message", [
    (["validate", "sam", "--design", "cnn", "--data-dir", "{tmp}"], "data_dir: is not used by design 'cnn'"),
    (["validate", "sam", "--design", "fashion", "--data-dir", "{tmp}/nope"], "data_dir: must be an existing directory"),
    (["validate", "sam", "--design", "fashion", "--data-dir", "{tmp}"], "data_dir: holds no fashion-mnist files"),
    (["validate", "sam", "--design", "cifar10", "--tier", "full", "--data-dir", "{tmp}/small"],
     "data_dir: holds too few cifar10 images"),
    (["validate", "sam", "--design", "patch", "--out", ""], "out: must name a directory"),
    (["validate", "eos", "--out", ""], "out: must name a directory"),
    (["validate", "eos", "--tier", "full", "--out", "{tmp}/eos"], "data_dir: is required for dataset 'mnist'"),
    (["validate", "eos", "--tier", "full", "--data-dir", "{tmp}", "--out", "{tmp}/eos"], "data_dir: holds no mnist"),
    (["audit", "--out", "", "--claims", "sam.l2.regime3"], "out: must name a directory"),
    (["audit", "--data-dir", "", "--claims", "sam.l2.regime3", "--out", "{tmp}/r"], "data-dir: must be an existing"),
    (["audit", "--workers", "99999999999", "--claims", "sam.l2.regime3", "--out", "{tmp}/r"],
     "workers: must be an integer in [1, 1024]"),
])
def test_data_and_output_options_are_checked_before_any_training(no_data, capsys, argv, message):
    """Found by a red-team pass: each of these used to train on other data, write into the current folder,
    or end in a traceback."""
    _write_cifar(no_data / "small" / "cifar-10-batches-py")  # 30 train images: fewer than the design's 4000
    assert main([a.replace("{tmp}", str(no_data)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"biasaudit: error: {message}") and err.count("\n") == 1, err
    assert not (no_data / "eos").exists()  # a refused option leaves no output folder behind
