"""Data loaders (files the tests write in each on-disk format), models and the device policy."""

import pickle

import numpy as np
import pytest
import scipy.io
import torch

from biasaudit.plumbing import InputError
from biasaudit.validation.data import load_dataset, patch_masks, read_idx, synthetic_patches, teacher_regression, write_idx
from biasaudit.validation.device import pick_device, setup_torch, torch_settings
from biasaudit.validation.models import make_model


@pytest.fixture(autouse=True)
def _ieee_subnormals():
    """Flush-to-zero is process-global; a module run earlier may have left it on (hypothesis then refuses)."""
    import torch

    torch.set_flush_denormal(False)


def _write_mnist(tmp_path, gz=False, n=(12, 6)):
    rng = np.random.default_rng(0)
    suffix = ".gz" if gz else ""
    for prefix, m in (("train", n[0]), ("t10k", n[1])):
        write_idx(tmp_path / f"{prefix}-images-idx3-ubyte{suffix}", rng.integers(0, 256, (m, 28, 28)))
        write_idx(tmp_path / f"{prefix}-labels-idx1-ubyte{suffix}", np.arange(m) % 10)
    return tmp_path


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_idx_loader_reads_written_files(tmp_path, gz):
    ds = load_dataset("mnist", data_dir=_write_mnist(tmp_path, gz))
    assert ds.X_train.shape == (12, 1, 28, 28) and ds.X_test.shape == (6, 1, 28, 28)
    assert ds.X_train.dtype == torch.float32 and ds.y_train.dtype == torch.int64
    assert 0.0 <= float(ds.X_train.min()) and float(ds.X_train.max()) <= 1.0
    assert sorted(ds.y_test.tolist()) == list(range(6))


def test_idx_round_trip_is_exact(tmp_path):
    arr = np.random.default_rng(1).integers(0, 256, (3, 4, 5)).astype(np.uint8)
    write_idx(tmp_path / "a.idx", arr)
    np.testing.assert_array_equal(read_idx(tmp_path / "a.idx"), arr)


def test_idx_wrong_magic_number_names_the_file(tmp_path):
    path = _write_mnist(tmp_path) / "train-images-idx3-ubyte"
    raw = bytearray(path.read_bytes())
    raw[0:4] = b"\x12\x34\x08\x03"
    path.write_bytes(bytes(raw))
    with pytest.raises(InputError, match="train-images-idx3-ubyte: wrong magic number"):
        load_dataset("mnist", data_dir=tmp_path)


@pytest.mark.parametrize("gz", [False, True])
def test_idx_truncated_file_names_the_file(tmp_path, gz):
    _write_mnist(tmp_path, gz)
    path = tmp_path / ("t10k-labels-idx1-ubyte" + (".gz" if gz else ""))
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) - 3])
    with pytest.raises(InputError, match="t10k-labels-idx1-ubyte.*(truncated|unreadable)"):
        load_dataset("mnist", data_dir=tmp_path)


def test_missing_idx_file_and_missing_dir_are_clear_errors(tmp_path):
    with pytest.raises(InputError, match="train-images-idx3-ubyte: data file not found"):
        load_dataset("mnist", data_dir=tmp_path)
    with pytest.raises(InputError, match="^data_dir: must be an existing directory"):
        load_dataset("mnist", data_dir=tmp_path / "nope")
    with pytest.raises(InputError, match="^data_dir: is required"):
        load_dataset("cifar10")
    with pytest.raises(InputError, match="Fashion-MNIST directory not found"):
        load_dataset("fashion-mnist", data_dir=tmp_path / "nope")
    with pytest.raises(InputError, match="^dataset: must be one of"):
        load_dataset("imagenet")


def test_fashion_mnist_reads_debian_style_idx_gz(tmp_path):
    ds = load_dataset("fashion-mnist", data_dir=_write_mnist(tmp_path, gz=True), n_train=5, n_test=3)
    assert ds.X_train.shape == (5, 1, 28, 28) and ds.X_test.shape == (3, 1, 28, 28)


def _write_cifar(root, n=4):
    rng = np.random.default_rng(2)
    root.mkdir(exist_ok=True)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {b"data": rng.integers(0, 256, (n, 3072)).astype(np.uint8), b"labels": list(range(n))}
        with open(root / name, "wb") as fh:
            pickle.dump(batch, fh)
    return root


def test_cifar10_pickle_loader(tmp_path):
    _write_cifar(tmp_path / "cifar-10-batches-py")
    ds = load_dataset("cifar10", data_dir=tmp_path)
    assert ds.X_train.shape == (20, 3, 32, 32) and ds.X_test.shape == (4, 3, 32, 32)
    # channel-first layout: the first 1024 bytes are the red plane
    with open(tmp_path / "cifar-10-batches-py" / "test_batch", "rb") as fh:
        raw = pickle.load(fh)[b"data"]
    np.testing.assert_allclose(ds.X_test[0, 0].numpy(), raw[0, :1024].reshape(32, 32) / 255.0, rtol=1e-6)


class _Exploit:
    """Unpickling this calls os.system: a crafted batch that must never run."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return os.system, (f"touch {self.marker}",)


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_cifar10_malicious_pickle_is_refused_without_running(tmp_path, protocol):
    root = _write_cifar(tmp_path / "cifar-10-batches-py")
    marker = tmp_path / "pwned"
    with open(root / "data_batch_1", "wb") as fh:
        pickle.dump({b"data": _Exploit(marker), b"labels": [0]}, fh, protocol=protocol)
    with pytest.raises(InputError, match=r"data_batch_1: not a readable CIFAR-10 pickle batch \(global "
                                         r"(posix|os)\.system is not allowed"):
        load_dataset("cifar10", data_dir=tmp_path)
    assert not marker.exists()
    # a plain pickle.load of the same file would have run it: the test's exploit is real
    with open(root / "data_batch_1", "rb") as fh:
        pickle.load(fh)
    assert marker.exists()


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_cifar10_batches_of_every_protocol_load(tmp_path, protocol):
    root = tmp_path / "cifar-10-batches-py"
    root.mkdir()
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        with open(root / name, "wb") as fh:
            pickle.dump({b"data": np.full((2, 3072), 7, np.uint8), b"labels": [0, 1], b"batch_label": b"x"}, fh,
                        protocol=protocol)
    ds = load_dataset("cifar10", data_dir=tmp_path)
    assert ds.X_train.shape == (10, 3, 32, 32)


def test_cifar10_malformed_and_missing_batches_name_the_file(tmp_path):
    root = _write_cifar(tmp_path)
    (root / "data_batch_3").write_bytes(b"not a pickle")
    with pytest.raises(InputError, match="data_batch_3: not a readable CIFAR-10 pickle"):
        load_dataset("cifar10", data_dir=root)
    (root / "data_batch_3").unlink()
    with pytest.raises(InputError, match="data_batch_3: data file not found"):
        load_dataset("cifar10", data_dir=root)
    with open(root / "data_batch_3", "wb") as fh:
        pickle.dump({b"data": np.zeros((2, 100), np.uint8), b"labels": [0, 1]}, fh)
    with pytest.raises(InputError, match="data_batch_3: CIFAR-10 batch must hold data N x 3072"):
        load_dataset("cifar10", data_dir=root)


def test_svhn_mat_loader_maps_label_10_to_0(tmp_path):
    rng = np.random.default_rng(3)
    for split, n in (("train", 5), ("test", 3)):
        y = np.array([[10], [1], [2], [10], [9]][:n], dtype=np.uint8)
        scipy.io.savemat(tmp_path / f"{split}_32x32.mat",
                         {"X": rng.integers(0, 256, (32, 32, 3, n)).astype(np.uint8), "y": y})
    ds = load_dataset("svhn", data_dir=tmp_path)
    assert ds.X_train.shape == (5, 3, 32, 32)
    assert ds.y_train.tolist() == [0, 1, 2, 0, 9]


def test_svhn_malformed_mat_names_the_file(tmp_path):
    (tmp_path / "train_32x32.mat").write_bytes(b"\x00" * 50)
    with pytest.raises(InputError, match="train_32x32.mat: not a readable .mat file"):
        load_dataset("svhn", data_dir=tmp_path)
    scipy.io.savemat(tmp_path / "train_32x32.mat", {"Z": np.zeros(3)})
    with pytest.raises(InputError, match="train_32x32.mat: SVHN .mat must hold"):
        load_dataset("svhn", data_dir=tmp_path)


def test_mnist5k_is_shuffled_before_the_split():
    ds = load_dataset("mnist5k", n_train=300, n_test=100, seed=0)
    assert ds.X_train.shape == (300, 1, 28, 28) and ds.num_classes == 10
    assert len(set(ds.y_train.tolist())) == 10 and len(set(ds.y_test.tolist())) == 10  # file is class-sorted
    again = load_dataset("mnist5k", n_train=300, n_test=100, seed=0)
    assert torch.equal(ds.X_train, again.X_train)
    with pytest.raises(InputError, match="^n_train:"):
        load_dataset("mnist5k", n_train=4900, n_test=200)


def test_digits_loader_scales_to_unit_interval():
    ds = load_dataset("digits")
    assert ds.X_train.shape[1:] == (1, 8, 8) and float(ds.X_train.max()) == 1.0
    assert ds.X_train.shape[0] + ds.X_test.shape[0] == 1797


def test_synthetic_patches_both_patches_predict_the_label():
    X, y, masks = synthetic_patches(64, seed=0)
    assert not (masks["major"] & masks["minor"]).any()
    for cls in (0, 1):
        sel = y == cls
        assert np.all(X[sel][:, 0][:, masks[f"major_{cls}"]] == 1.0)
        assert np.all(X[sel][:, 0][:, masks[f"minor_{cls}"]] == np.float32(0.25))
        other = 1 - cls
        assert np.all(X[sel][:, 0][:, masks[f"minor_{other}"]] < 0.05)
    with pytest.raises(InputError, match="^noise:"):
        synthetic_patches(8, noise=0.3)
    with pytest.raises(InputError, match="^patch:"):
        patch_masks(8, patch=4)


def test_teacher_regression_shapes():
    ds = teacher_regression(10, 5, dim=4)
    assert ds.X_train.shape == (10, 4) and ds.y_test.shape == (5,) and ds.num_classes == 0


@pytest.mark.parametrize("name", ["cnn", "resnet"])
@pytest.mark.parametrize("size", [8, 16, 28])
def test_models_shapes_and_cam_layer(name, size):
    model = make_model(name, num_classes=3, in_channels=2, image_size=size, width=4, seed=0)
    out = model(torch.rand(5, 2, size, size))
    assert out.shape == (5, 3) and hasattr(model, "cam_layer")


def test_init_scale_multiplies_every_parameter_of_the_same_init():
    a = make_model("resnet", num_classes=10, in_channels=1, image_size=16, width=4, seed=7)
    b = make_model("resnet", num_classes=10, in_channels=1, image_size=16, width=4, seed=7, init_scale=0.5)
    for pa, pb in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(pb, 0.5 * pa, rtol=0, atol=0)
    with pytest.raises(InputError, match="^model:"):
        make_model("vit", num_classes=10, in_channels=1, image_size=16)
    with pytest.raises(InputError, match="^init_scale:"):
        make_model("cnn", num_classes=10, in_channels=1, image_size=16, init_scale=0.0)


def test_pick_device_cpu_auto_and_absent_cuda():
    assert pick_device("cpu").type == "cpu"
    assert pick_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="^device: cuda was requested"):
            pick_device("cuda")
    with pytest.raises(InputError, match="^device: must be one of"):
        pick_device("tpu")


def test_setup_torch_sets_threads_and_flushes_denormals():
    before = torch.get_num_threads()
    try:
        setup_torch(1)
        assert torch.get_num_threads() == 1
        tiny = torch.tensor([1e-40], dtype=torch.float32)  # a float32 denormal
        assert float(tiny * 1.0) == 0.0
    finally:
        torch.set_flush_denormal(False)  # process-global: never leak it into other tests
        torch.set_num_threads(before)


def test_torch_settings_restores_denormals_and_threads():
    before = torch.get_num_threads()
    with torch_settings(1):
        assert float(torch.tensor([1e-40]) * 1.0) == 0.0
    assert float(torch.tensor([1e-40]) * 1.0) > 0.0 and torch.get_num_threads() == before


def test_fixed_norm_resnet_is_the_batchnorm_resnet_at_init_and_loses_its_scale_invariance():
    from biasaudit.validation.models import calibrate_fixed_norms

    torch.manual_seed(0)
    X = torch.rand(12, 1, 8, 8, dtype=torch.float64)
    bn = make_model("resnet", num_classes=3, in_channels=1, image_size=8, width=4, seed=3).double()
    fixed = make_model("resnet_fixednorm", num_classes=3, in_channels=1, image_size=8, width=4, seed=3).double()
    with pytest.raises(RuntimeError, match="calibrate_fixed_norms"):
        fixed(X)  # uncalibrated: no placeholder statistics
    assert calibrate_fixed_norms(fixed, X) == 6 and calibrate_fixed_norms(bn, X) == 0
    bn.train()
    torch.testing.assert_close(fixed(X), bn(X))  # the same function at θ0 on the calibration batch
    # held afterwards: scaling a convolution's filters by 3 changes the output, where BatchNorm cancels it
    with torch.no_grad():
        fixed.stem[0].weight.mul_(3.0)
        bn.stem[0].weight.mul_(3.0)
    assert not torch.allclose(fixed(X), bn(X))
    state = fixed.state_dict()
    assert bool(state["stem.1.calibrated"]) and state["stem.1.var"].shape == (4,)
    fresh = make_model("resnet_fixednorm", num_classes=3, in_channels=1, image_size=8, width=4, seed=3).double()
    fresh.load_state_dict(state)  # calibrated statistics travel with the state_dict
    torch.testing.assert_close(fresh(X), fixed(X))
