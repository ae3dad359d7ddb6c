"""Parsers of the original file formats: CSV, ARFF, LIBSVM, IDX, N-BaIoT CSV folders.

Every parser takes the dataset's files (already checksum-verified by the
caller when a checksum is known), validates the *content* as well (column
counts, header, label values, exact byte lengths) and returns a list of
``(X, y)`` parts, one per shipped split.  Any defect raises ValueError naming
the file; nothing partial is ever returned.  ``strict=True`` (set when the
registry checksum was verified) additionally checks the published shapes.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np

from ._integrity import read_gzip

__all__ = [
    "NBAIOT_FEATURES",
    "parse_adult",
    "parse_avila",
    "parse_banknote",
    "parse_cpu",
    "parse_diabetes",
    "parse_forest",
    "parse_idx",
    "parse_iot",
    "parse_mnist",
]


def _nbaiot_feature_names() -> tuple[str, ...]:
    # N-BaIoT (Meidan et al. 2018, Table 1): 5 damped windows (lambda = 5, 3, 1, 0.1, 0.01)
    # x 5 streams; 1-D streams keep (weight, mean, variance), 2-D streams add 4 joint stats.
    windows = ("L5", "L3", "L1", "L0.1", "L0.01")
    one_d = ("weight", "mean", "variance")
    two_d = ("weight", "mean", "std", "magnitude", "radius", "covariance", "pcc")
    streams = (("MI_dir", one_d), ("H", one_d), ("HH", two_d), ("HH_jit", one_d), ("HpHp", two_d))
    return tuple(f"{s}_{w}_{stat}" for s, stats in streams for w in windows for stat in stats)


#: The 115 column names of every N-BaIoT CSV, in file order.
NBAIOT_FEATURES = _nbaiot_feature_names()


def _text(path, expected_size=None) -> str:
    data = read_gzip(path, expected_size=expected_size)
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not an ASCII text file ({exc})") from exc
    # The UCI CSVs use CRLF; loadtxt would keep a stray '\r' in a string last column.
    return text.replace("\r\n", "\n")


def _loadtxt(text, path, *, n_cols, dtype=np.float64, **kwargs) -> np.ndarray:
    """np.loadtxt with the file named in every error and an exact column count."""
    try:
        with warnings.catch_warnings():
            # an empty input is reported below as a ValueError, not as a warning
            warnings.simplefilter("ignore", UserWarning)
            arr = np.loadtxt(
                io.StringIO(text) if isinstance(text, str) else text, delimiter=",", dtype=dtype, ndmin=2, **kwargs
            )
    except ValueError as exc:
        raise ValueError(f"{path}: malformed data ({exc})") from exc
    if arr.shape[0] == 0:
        raise ValueError(f"{path}: no data rows")
    if arr.shape[1] != n_cols:
        raise ValueError(f"{path}: expected {n_cols} comma-separated columns, found {arr.shape[1]}")
    return arr


def _integer_labels(values, path, allowed=None) -> np.ndarray:
    """Float label column -> int64, refusing non-integers and values outside ``allowed``."""
    if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
        raise ValueError(f"{path}: label column holds non-integer values")
    y = values.astype(np.int64)
    if allowed is not None:
        bad = np.setdiff1d(np.unique(y), np.asarray(sorted(allowed)))
        if bad.size:
            raise ValueError(f"{path}: unexpected label values {bad.tolist()}; expected {sorted(allowed)}")
    return y


def _check_rows(path, n_rows, expected):
    if expected is not None and n_rows != expected:
        raise ValueError(f"{path}: parsed {n_rows} rows, the published file has {expected}")


# --------------------------------------------------------------------------- CSV
def parse_banknote(files, specs, *, strict):
    """CSV, no header, CRLF: 4 float features then the 0/1 label."""
    (path,), (spec,) = files, specs
    arr = _loadtxt(_text(path, spec.content_bytes if strict else None), path, n_cols=5)
    y = _integer_labels(arr[:, 4], path, allowed={0, 1})
    _check_rows(path, arr.shape[0], 1372 if strict else None)
    return [(np.ascontiguousarray(arr[:, :4]), y)]


_AVILA_CLASSES = frozenset("ABCDEFGHIWXY")


def parse_avila(files, specs, *, strict):
    """CSV, no header, CRLF: 10 float features then a class letter; train and test files."""
    parts = []
    for path, spec, n_rows in zip(files, specs, (10430, 10437), strict=True):
        cells = _loadtxt(_text(path, spec.content_bytes if strict else None), path, n_cols=11, dtype=str)
        try:
            X = cells[:, :10].astype(np.float64)
        except ValueError as exc:
            raise ValueError(f"{path}: non-numeric feature value ({exc})") from exc
        y = np.char.strip(cells[:, 10])
        bad = sorted(set(np.unique(y).tolist()) - _AVILA_CLASSES)
        if bad:
            raise ValueError(f"{path}: unexpected class labels {bad}; expected {sorted(_AVILA_CLASSES)}")
        _check_rows(path, X.shape[0], n_rows if strict else None)
        parts.append((X, y.astype("<U1")))
    return parts


def parse_forest(files, specs, *, strict):
    """UCI covtype.data: CSV, no header, 54 integer columns then the cover type 1..7."""
    (path,), _ = files, specs
    arr = _loadtxt(_text(path), path, n_cols=55)
    y = _integer_labels(arr[:, 54], path, allowed=set(range(1, 8)))
    _check_rows(path, arr.shape[0], 581012 if strict else None)
    return [(np.ascontiguousarray(arr[:, :54]), y)]


# --------------------------------------------------------------------------- ARFF
_ARFF_NUMERIC = {"numeric", "real", "integer"}


def parse_cpu(files, specs, *, strict):
    """Weka ARFF: numeric ``@attribute`` lines, then comma-separated rows after ``@data``.

    The last attribute is the regression target (``class`` = usr in cpu_act).
    """
    (path,), (spec,) = files, specs
    text = _text(path, spec.content_bytes if strict else None)
    attributes, data_start = [], None
    lines = text.split("\n")
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        low = line.lower()
        if low.startswith("@attribute"):
            fields = line.split()
            if len(fields) < 3:
                raise ValueError(f"{path}: line {i + 1}: malformed @attribute line {line!r}")
            if fields[-1].lower() not in _ARFF_NUMERIC:
                raise ValueError(
                    f"{path}: attribute {fields[1]!r} has type {fields[-1]!r}; only numeric attributes are supported"
                )
            attributes.append(fields[1])
        elif low.startswith("@data"):
            data_start = i + 1
            break
    if data_start is None:
        raise ValueError(f"{path}: no @data section")
    if len(attributes) < 2:
        raise ValueError(f"{path}: expected at least 2 numeric attributes, found {len(attributes)}")
    if strict and (len(attributes) != 22 or attributes[-1] != "class"):
        raise ValueError(f"{path}: expected 22 attributes ending with the target 'class', got {attributes}")
    # '?' (missing) fails float conversion and is reported: cpu_act has no missing values.
    arr = _loadtxt("\n".join(lines[data_start:]), path, n_cols=len(attributes), comments="%")
    _check_rows(path, arr.shape[0], 8192 if strict else None)
    return [(np.ascontiguousarray(arr[:, :-1]), np.ascontiguousarray(arr[:, -1]))]


# --------------------------------------------------------------------------- LIBSVM
def _svmlight(path, spec, n_features, strict):
    from sklearn.datasets import load_svmlight_file  # imported here: sklearn is slow to import

    data = read_gzip(path, expected_size=spec.content_bytes if strict else None)
    try:
        # LIBSVM indices are 1-based; "auto" would guess wrong on a file that lacks feature 1.
        X, y = load_svmlight_file(io.BytesIO(data), n_features=n_features, zero_based=False, dtype=np.float64)
    except (ValueError, RuntimeError) as exc:
        raise ValueError(f"{path}: malformed LIBSVM data ({exc})") from exc
    if X.shape[0] == 0:
        raise ValueError(f"{path}: no data rows")
    if not np.all(np.isfinite(X.data)):
        raise ValueError(f"{path}: non-finite feature values")
    return X, _integer_labels(y, path, allowed={-1, 1})


def parse_adult(files, specs, *, strict):
    """LIBSVM a9a / a9a.t: 123 sparse binary features (test file never uses feature 123)."""
    parts = []
    for path, spec, n_rows in zip(files, specs, (32561, 16281), strict=True):
        X, y = _svmlight(path, spec, 123, strict)
        _check_rows(path, X.shape[0], n_rows if strict else None)
        X.sort_indices()
        parts.append((X.tocsr(), y))
    return parts


def parse_diabetes(files, specs, *, strict):
    """LIBSVM diabetes: 8 features (all written), labels -1/+1; returned dense."""
    (path,), (spec,) = files, specs
    X, y = _svmlight(path, spec, 8, strict)
    _check_rows(path, X.shape[0], 768 if strict else None)
    return [(X.toarray(), y)]


# --------------------------------------------------------------------------- IDX
_IDX_UINT8 = 0x08


def parse_idx(data: bytes, path, *, ndim: int) -> np.ndarray:
    """Decode one IDX buffer of unsigned bytes with ``ndim`` dimensions.

    Header (big-endian): two zero bytes, the type code (0x08 = uint8), the
    number of dimensions, then one uint32 per dimension.  The payload must be
    exactly ``prod(dims)`` bytes: a short or over-long file is refused.
    """
    header_len = 4 + 4 * ndim
    if len(data) < header_len:
        raise ValueError(f"{path}: {len(data)} bytes is shorter than the {header_len}-byte IDX header")
    if data[0] != 0 or data[1] != 0 or data[2] != _IDX_UINT8 or data[3] != ndim:
        magic = int.from_bytes(data[:4], "big")
        raise ValueError(
            f"{path}: bad IDX magic number 0x{magic:08x}; expected 0x{0x800 | ndim:08x} "
            f"(unsigned bytes, {ndim} dimension{'s' if ndim > 1 else ''})"
        )
    dims = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    expected = header_len + int(np.prod(dims, dtype=np.int64))
    if len(data) != expected:
        raise ValueError(
            f"{path}: IDX header announces dims {dims} ({expected} bytes in all) but the file has {len(data)} bytes"
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header_len).reshape(dims)


def parse_mnist(files, specs, *, strict):
    """IDX images (n, 28, 28) and labels (n,) for the train and test splits; pixels stay uint8."""
    parts = []
    for (img_path, lab_path), (img_spec, lab_spec), n_rows in zip(
        (files[0:2], files[2:4]), (specs[0:2], specs[2:4]), (60000, 10000), strict=True
    ):
        images = parse_idx(
            read_gzip(img_path, expected_size=img_spec.content_bytes if strict else None), img_path, ndim=3
        )
        labels = parse_idx(
            read_gzip(lab_path, expected_size=lab_spec.content_bytes if strict else None), lab_path, ndim=1
        )
        if images.shape[0] != labels.shape[0]:
            raise ValueError(f"{img_path} holds {images.shape[0]} images but {lab_path} holds {labels.shape[0]} labels")
        if images.shape[1:] != (28, 28):
            raise ValueError(f"{img_path}: images are {images.shape[1:]}, expected (28, 28)")
        if labels.size and labels.max() > 9:
            raise ValueError(f"{lab_path}: label {int(labels.max())} outside 0..9")
        _check_rows(img_path, images.shape[0], n_rows if strict else None)
        parts.append((images.reshape(images.shape[0], -1), labels.astype(np.int64)))
    return parts


# --------------------------------------------------------------------------- N-BaIoT
def _traffic_label(csv: Path, device_dir: Path) -> str:
    rel = csv.relative_to(device_dir)
    if rel.stem == "benign_traffic":
        return "benign"
    family = rel.parts[0].removesuffix("_attacks") if len(rel.parts) > 1 else ""
    return f"{family}.{rel.stem}" if family else rel.stem


def _read_nbaiot_csv(path: Path, max_rows):
    with open(path, encoding="ascii", newline=None) as fh:
        header = [c.strip() for c in fh.readline().split(",")]
        if header != list(NBAIOT_FEATURES):
            if len(header) != len(NBAIOT_FEATURES):
                raise ValueError(
                    f"{path}: header has {len(header)} columns, expected the {len(NBAIOT_FEATURES)} N-BaIoT features"
                )
            first_bad = next(i for i, (a, b) in enumerate(zip(header, NBAIOT_FEATURES, strict=True)) if a != b)
            raise ValueError(
                f"{path}: header column {first_bad + 1} is {header[first_bad]!r}, "
                f"expected {NBAIOT_FEATURES[first_bad]!r}"
            )
        X = _loadtxt(fh, path, n_cols=len(NBAIOT_FEATURES), max_rows=max_rows)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{path}: non-finite feature values")
    return X


def parse_iot(root: Path, *, target="device", devices=None, max_rows_per_file=None):
    """A folder of N-BaIoT devices: ``<root>/<device>/benign_traffic.csv`` and
    ``<root>/<device>/{gafgyt,mirai}_attacks/<attack>.csv`` (the UCI archive layout,
    with the ``.rar`` files extracted).  Files directly in ``root`` (``features.csv``,
    ``device_info.csv``, ...) are documentation and are skipped.
    """
    if target not in ("device", "traffic"):
        raise ValueError(f"target must be 'device' or 'traffic', got {target!r}")
    if max_rows_per_file is not None and (
        isinstance(max_rows_per_file, bool)
        or not isinstance(max_rows_per_file, (int, np.integer))
        or max_rows_per_file < 1
    ):
        raise ValueError(f"max_rows_per_file must be a positive int or None, got {max_rows_per_file!r}")
    device_dirs = sorted(p for p in root.iterdir() if p.is_dir())
    if devices is not None:
        wanted = [devices] if isinstance(devices, str) else list(devices)
        known = {p.name for p in device_dirs}
        missing = [d for d in wanted if d not in known]
        if missing:
            raise ValueError(f"unknown N-BaIoT device(s) {missing}; found {sorted(known)} in {root}")
        device_dirs = [p for p in device_dirs if p.name in set(wanted)]
    Xs, ys = [], []
    for device_dir in device_dirs:
        for rar in sorted(device_dir.glob("*.rar")):
            if not (device_dir / rar.stem).is_dir():
                raise ValueError(
                    f"{rar} is not extracted: unpack it into {device_dir / rar.stem}/ "
                    "(e.g. `unrar x`) so its CSVs can be read"
                )
        for csv in sorted(device_dir.rglob("*.csv")):
            X = _read_nbaiot_csv(csv, max_rows_per_file)
            label = device_dir.name if target == "device" else _traffic_label(csv, device_dir)
            Xs.append(X)
            ys.append(np.full(X.shape[0], label))
    if not Xs:
        raise ValueError(f"{root}: no N-BaIoT CSV files in any device folder")
    width = max(y.dtype.itemsize for y in ys) // 4
    return [(np.concatenate(Xs), np.concatenate([y.astype(f"<U{width}") for y in ys]))]
