"""kernelsketch.datasets loaders: shapes, label counts, checksums, corruption, search order, parsers."""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import kernelsketch.datasets as ksd
from kernelsketch.datasets import (
    DATASETS,
    DatasetNotFoundError,
    _integrity,
    _locate,
    _parsers,
    citation,
    dataset_path,
    list_datasets,
    load_dataset,
)
from kernelsketch.datasets._testing import require_shared_data

SHARED = ("banknote", "avila", "cpu", "adult", "diabetes", "mnist")
BANKNOTE_GZ = "data_banknote_authentication.txt.gz"

# Label counts copied from each shared/datasets/<name>/SOURCE.md (train and test where split).
AVILA_TRAIN = dict(A=4286, B=5, C=103, D=352, E=1095, F=1961, G=446, H=519, I=831, W=44, X=522, Y=266)
AVILA_TEST = dict(A=4286, B=5, C=103, D=353, E=1095, F=1962, G=447, H=520, I=832, W=45, X=522, Y=267)
MNIST_TRAIN = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
MNIST_TEST = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def _counts(y):
    values, counts = np.unique(y, return_counts=True)
    return {v.item() if hasattr(v, "item") else v: int(c) for v, c in zip(values, counts, strict=True)}


@pytest.fixture(scope="module")
def shared_dirs():
    return require_shared_data(*SHARED)


@pytest.fixture(scope="module")
def mnist_split(shared_dirs):
    # ~50 MB of pixels: parsed once for the whole module.
    return load_dataset("mnist", return_split=True)


@pytest.fixture
def no_defaults(monkeypatch):
    """Search only data_home / $KERNELSKETCH_DATA (and the vendored copy): no shared/datasets."""
    monkeypatch.delenv(_locate.ENV_VAR, raising=False)
    monkeypatch.setattr(_locate, "default_roots", lambda: [])


def _copy_banknote(dest_root: Path) -> Path:
    folder = dest_root / "banknote"
    folder.mkdir(parents=True)
    shutil.copyfile(_locate.VENDORED_DIR / BANKNOTE_GZ, folder / BANKNOTE_GZ)
    return folder / BANKNOTE_GZ


def _write_gz(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(text.encode("ascii"), mtime=0))
    return path


# --------------------------------------------------------------------------- the shared files
@pytest.mark.data
@pytest.mark.parametrize(
    "name, shape, y_kind, counts",
    [
        ("banknote", (1372, 4), "i", {0: 762, 1: 610}),
        ("diabetes", (768, 8), "i", {-1: 268, 1: 500}),
        ("adult", (32561 + 16281, 123), "i", {-1: 24720 + 12435, 1: 7841 + 3846}),
        ("avila", (20867, 10), "U", {k: AVILA_TRAIN[k] + AVILA_TEST[k] for k in AVILA_TRAIN}),
        ("cpu", (8192, 21), "f", None),
    ],
)
def test_shared_dataset_shape_dtype_and_label_counts(shared_dirs, name, shape, y_kind, counts):
    X, y = load_dataset(name)
    assert X.shape == shape
    assert X.dtype == np.float64
    assert y.shape == (shape[0],)
    assert y.dtype.kind == y_kind
    if counts is not None:
        assert _counts(y) == counts
    dense = X.toarray() if sp.issparse(X) else X
    assert np.isfinite(dense).all()


@pytest.mark.data
def test_adult_is_sparse_binary_csr(shared_dirs):
    X, y = load_dataset("adult")
    assert sp.isspmatrix_csr(X) or isinstance(X, sp.csr_array)
    assert X.has_sorted_indices
    # SOURCE.md: nnz 451592 (train) + 225732 (test), all ones except the one explicit
    # "123:0" that a9a.t carries on its first line (kept: the file is parsed as published).
    assert X.nnz == 451592 + 225732
    assert np.unique(X.data).tolist() == [0.0, 1.0] and int((X.data == 0).sum()) == 1
    X_tr, y_tr, X_te, y_te = load_dataset("adult", return_split=True)
    assert X_tr.shape == (32561, 123) and X_te.shape == (16281, 123)
    assert _counts(y_tr) == {-1: 24720, 1: 7841} and _counts(y_te) == {-1: 12435, 1: 3846}
    assert X_te[0, 122] == 0 and X_te[:, 122].sum() == 0
    X32, _ = load_dataset("adult", dtype=np.float32)
    assert X32.dtype == np.float32 and sp.issparse(X32) and (X32 != X).nnz == 0


@pytest.mark.data
def test_avila_split_counts_and_concatenation(shared_dirs):
    X_tr, y_tr, X_te, y_te = load_dataset("avila", return_split=True)
    assert X_tr.shape == (10430, 10) and X_te.shape == (10437, 10)
    assert _counts(y_tr) == AVILA_TRAIN and _counts(y_te) == AVILA_TEST
    X, y = load_dataset("avila")
    np.testing.assert_array_equal(X, np.vstack([X_tr, X_te]))
    np.testing.assert_array_equal(y, np.concatenate([y_tr, y_te]))


@pytest.mark.data
def test_cpu_target_matches_source(shared_dirs):
    X, y = load_dataset("cpu")
    # SOURCE.md: target min 0, max 99, mean 83.969; first row of the file ends with usr = 90.
    assert y.min() == 0 and y.max() == 99
    assert abs(y.mean() - 83.969) < 1e-3
    assert y[0] == 90 and X[0, 0] == 6 and X[0, -1] == 1851864


@pytest.mark.data
def test_diabetes_feature_maxima_match_uci(shared_dirs):
    X, _ = load_dataset("diabetes")
    np.testing.assert_allclose(X.max(axis=0), [17, 199, 122, 99, 846, 67.1, 2.42, 81], atol=1e-6)


@pytest.mark.data
def test_mnist_split_counts_and_pixel_statistics(mnist_split):
    X_tr, y_tr, X_te, y_te = mnist_split
    assert X_tr.shape == (60000, 784) and X_te.shape == (10000, 784)
    assert X_tr.dtype == np.float64 and y_tr.dtype == np.int64
    assert np.bincount(y_tr).tolist() == MNIST_TRAIN
    assert np.bincount(y_te).tolist() == MNIST_TEST
    # SOURCE.md: train pixel mean 33.3184, std 78.5675; raw values 0..255 (not rescaled).
    assert abs(X_tr.mean() - 33.3184) < 1e-3 and abs(X_tr.std() - 78.5675) < 1e-3
    assert X_tr.min() == 0 and X_tr.max() == 255


@pytest.mark.data
def test_mnist_dtype_option_gives_same_values(mnist_split):
    X_tr, y_tr, X_te, y_te = mnist_split
    X, y = load_dataset("mnist", dtype=np.float32)
    assert X.shape == (70000, 784) and X.dtype == np.float32
    np.testing.assert_array_equal(X[:60000], X_tr)
    np.testing.assert_array_equal(X[60000:], X_te)
    np.testing.assert_array_equal(y, np.concatenate([y_tr, y_te]))


@pytest.mark.data
def test_registry_checksums_equal_source_md(shared_dirs):
    # The registry is a copy of SOURCE.md's tables: check every row against the source of truth.
    for name in SHARED:
        source = (shared_dirs[name] / "SOURCE.md").read_text()
        for spec in DATASETS[name].files:
            row = re.search(
                rf"^\|\s*{re.escape(spec.name)}\s*\|\s*([0-9a-f]{{64}})\s*\|\s*([0-9a-f]{{64}})"
                rf"\s*\|\s*(\d+)",
                source,
                re.MULTILINE,
            )
            assert row is not None, f"{spec.name} not in {name}/SOURCE.md"
            assert (spec.sha256, spec.content_sha256, spec.content_bytes) == (row[1], row[2], int(row[3]))


@pytest.mark.data
def test_list_datasets_reports_verified_checksums(shared_dirs):
    rows = {row["name"]: row for row in list_datasets()}
    assert set(rows) == set(DATASETS)
    for name in SHARED:
        assert rows[name]["available"] and rows[name]["checksum"] == "ok"
        for spec in DATASETS[name].files:
            on_disk = hashlib.sha256((rows[name]["path"] / spec.name).read_bytes()).hexdigest()
            assert on_disk == spec.sha256


@pytest.mark.data
def test_vendored_banknote_equals_shared(shared_dirs, monkeypatch):
    shared_file = shared_dirs["banknote"] / BANKNOTE_GZ
    assert (_locate.VENDORED_DIR / BANKNOTE_GZ).read_bytes() == shared_file.read_bytes()
    X_shared, y_shared = load_dataset("banknote")
    assert dataset_path("banknote") == shared_dirs["banknote"]
    monkeypatch.delenv(_locate.ENV_VAR, raising=False)
    monkeypatch.setattr(_locate, "default_roots", lambda: [])
    assert dataset_path("banknote") == _locate.VENDORED_DIR
    X_vend, y_vend = load_dataset("banknote")
    np.testing.assert_array_equal(X_vend, X_shared)
    np.testing.assert_array_equal(y_vend, y_shared)


def test_banknote_loads_from_vendored_copy_anywhere(no_defaults):
    X, y = load_dataset("banknote")
    assert X.shape == (1372, 4) and _counts(y) == {0: 762, 1: 610}
    # first data row of the UCI file: 3.6216,8.6661,-2.8073,-0.44699,0
    np.testing.assert_allclose(X[0], [3.6216, 8.6661, -2.8073, -0.44699])


# --------------------------------------------------------------------------- integrity
def test_flipped_byte_fails_checksum_naming_file_and_hashes(tmp_path, no_defaults):
    path = _copy_banknote(tmp_path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    actual = hashlib.sha256(bytes(data)).hexdigest()
    with pytest.raises(ValueError) as info:
        load_dataset("banknote", data_home=tmp_path)
    msg = str(info.value)
    assert str(path) in msg and DATASETS["banknote"].files[0].sha256 in msg and actual in msg
    # Even with the checksum switched off the corrupt stream is refused, never half-parsed.
    with pytest.raises(ValueError, match=r"gzip|malformed"):
        load_dataset("banknote", data_home=tmp_path, sha256=None)


def test_truncated_gzip_is_refused(tmp_path, no_defaults):
    path = _copy_banknote(tmp_path)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(ValueError, match="checksum mismatch"):
        load_dataset("banknote", data_home=tmp_path)
    with pytest.raises(ValueError, match="not a complete, valid gzip"):
        load_dataset("banknote", data_home=tmp_path, sha256=None)


def test_bad_csv_content_is_refused(tmp_path, no_defaults):
    path = _write_gz(tmp_path / "banknote" / BANKNOTE_GZ, "1.0,2.0,3.0,4.0,0\r\n1.0,2.0,oops,4.0,1\r\n")
    with pytest.raises(ValueError, match="malformed"):
        load_dataset("banknote", data_home=tmp_path, sha256=None)
    _write_gz(path, "1.0,2.0,3.0,4.0,0\r\n1.0,2.0,3.0,4.0,2\r\n")
    with pytest.raises(ValueError, match="unexpected label values \\[2\\]"):
        load_dataset("banknote", data_home=tmp_path, sha256=None)


def test_hash_cache_is_keyed_on_size_and_mtime(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"first")
    assert _integrity.file_sha256(path) == hashlib.sha256(b"first").hexdigest()
    # Same size and mtime: the cached digest is reused without reading the file again.
    stat = path.stat()
    path.write_bytes(b"FIRST")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _integrity.file_sha256(path) == hashlib.sha256(b"first").hexdigest()
    path.write_bytes(b"second version")
    os.utime(path, ns=(1, 1))  # any new (size, mtime) invalidates the cached digest
    assert _integrity.file_sha256(path) == hashlib.sha256(b"second version").hexdigest()


# --------------------------------------------------------------------------- search order
def test_missing_dataset_lists_every_place_and_url(tmp_path, monkeypatch, no_defaults):
    env_dir = tmp_path / "env"
    monkeypatch.setenv(_locate.ENV_VAR, str(env_dir))
    with pytest.raises(DatasetNotFoundError) as info:
        load_dataset("forest", data_home=tmp_path / "home")
    err = info.value
    assert isinstance(err, FileNotFoundError)
    msg = str(err)
    assert str(tmp_path / "home" / "forest") in msg and str(env_dir / "forest") in msg
    assert "covtype.data.gz" in msg and DATASETS["forest"].url in msg
    assert [folder for _, folder in err.searched] == [tmp_path / "home" / "forest", env_dir / "forest"]


def test_missing_default_places_are_listed(tmp_path, monkeypatch):
    monkeypatch.delenv(_locate.ENV_VAR, raising=False)
    with pytest.raises(DatasetNotFoundError) as info:
        dataset_path("iot", data_home=tmp_path)
    searched = [folder for _, folder in info.value.searched]
    assert searched[0] == tmp_path / "iot"
    expected = []
    for _, root in _locate.default_roots():  # package and cwd usually find the same folder: listed once
        if root / "iot" not in expected:
            expected.append(root / "iot")
    assert searched[1:] == expected


def test_search_order_data_home_then_env_then_default(tmp_path, monkeypatch, no_defaults):
    home, env = tmp_path / "home", tmp_path / "env"
    _copy_banknote(home)
    _copy_banknote(env)
    monkeypatch.setenv(_locate.ENV_VAR, str(env))
    assert dataset_path("banknote", data_home=home) == home / "banknote"
    assert dataset_path("banknote") == env / "banknote"
    # data_home without the files falls through to the next place
    assert dataset_path("banknote", data_home=tmp_path / "empty") == env / "banknote"
    monkeypatch.setattr(_locate, "default_roots", lambda: [("shared", home)])
    monkeypatch.delenv(_locate.ENV_VAR)
    assert dataset_path("banknote") == home / "banknote"
    # and the data really comes from the folder found first
    _write_gz(env / "banknote" / BANKNOTE_GZ, "1,2,3,4,1\r\n5,6,7,8,0\r\n")
    monkeypatch.setenv(_locate.ENV_VAR, str(env))
    X, y = load_dataset("banknote", sha256=None)
    np.testing.assert_array_equal(X, [[1, 2, 3, 4], [5, 6, 7, 8]])
    np.testing.assert_array_equal(y, [1, 0])
    assert load_dataset("banknote", data_home=home)[0].shape == (1372, 4)


def test_default_roots_find_shared_beside_checkout():
    # The package lives in <checkout>/src/kernelsketch; ../shared/datasets is found by walking up.
    here = Path(ksd.__file__).resolve()
    expected = next((p / "shared" / "datasets" for p in here.parents if (p / "shared" / "datasets").is_dir()), None)
    roots = [root for _, root in _locate.default_roots()]
    if expected is None:
        assert all("package" not in why for why, _ in _locate.default_roots())
    else:
        assert roots[0] == expected


def test_require_shared_data_skips_or_fails_in_ci(monkeypatch, no_defaults):
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="KERNELSKETCH_DATA"):
        require_shared_data("banknote")  # the vendored copy does not count as shared data
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="shared/datasets"):
        require_shared_data("cpu")


# --------------------------------------------------------------------------- API checks
def test_api_errors():
    with pytest.raises(ValueError, match=r"unknown dataset 'nope'.*adult"):
        load_dataset("nope")
    with pytest.raises(ValueError, match="ships no train/test split"):
        load_dataset("banknote", return_split=True)
    with pytest.raises(TypeError, match="unexpected keyword"):
        load_dataset("banknote", target="device")
    with pytest.raises(ValueError, match="dtype"):
        load_dataset("banknote", dtype=np.int32)
    with pytest.raises(ValueError, match="2 files"):
        load_dataset("avila", sha256="0" * 64)
    with pytest.raises(TypeError):
        load_dataset(3)


def test_citations_and_registry_are_complete():
    assert set(DATASETS) == {"banknote", "avila", "cpu", "adult", "diabetes", "mnist", "forest", "iot"}
    for name, info in DATASETS.items():
        assert len(citation(name)) > 40 and info.url.startswith("http")
        for spec in info.files:
            assert spec.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", spec.sha256)
    assert DATASETS["forest"].files[0].sha256 == "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771"


def test_import_does_no_work():
    code = (
        "import kernelsketch.datasets as d, kernelsketch.datasets._integrity as i, sys; "
        "print(len(i._HASH_CACHE), 'sklearn.datasets' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False"]


# --------------------------------------------------------------------------- forest (covtype format)
def _covtype_rows(rng, n):
    cont = rng.integers(0, 4000, size=(n, 10))
    wild = np.eye(4, dtype=int)[rng.integers(0, 4, n)]
    soil = np.eye(40, dtype=int)[rng.integers(0, 40, n)]
    label = np.arange(n) % 7 + 1
    return np.column_stack([cont, wild, soil, label])


def test_forest_parser_on_covtype_format(tmp_path, no_defaults):
    rows = _covtype_rows(np.random.default_rng(0), 30)
    text = "\n".join(",".join(map(str, r)) for r in rows) + "\n"
    path = _write_gz(tmp_path / "forest" / "covtype.data.gz", text)
    # The registry checksum is the real 11 MB file's, so the tiny file is refused by default ...
    with pytest.raises(ValueError, match="checksum mismatch"):
        load_dataset("forest", data_home=tmp_path)
    # ... and parsed by the real code path once the check is overridden.
    X, y = load_dataset("forest", data_home=tmp_path, sha256=None)
    assert X.shape == (30, 54) and X.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(X, rows[:, :54])
    np.testing.assert_array_equal(y, rows[:, 54])
    X2, _ = load_dataset(
        "forest", data_home=tmp_path, sha256=hashlib.sha256(path.read_bytes()).hexdigest(), dtype=np.float32
    )
    assert X2.dtype == np.float32 and np.array_equal(X2, X)
    rows[3, 54] = 8
    _write_gz(path, "\n".join(",".join(map(str, r)) for r in rows))
    with pytest.raises(ValueError, match="unexpected label values \\[8\\]"):
        load_dataset("forest", data_home=tmp_path, sha256=None)
    _write_gz(path, "\n".join(",".join(map(str, r[:50])) for r in rows))
    with pytest.raises(ValueError, match="expected 55 comma-separated columns, found 50"):
        load_dataset("forest", data_home=tmp_path, sha256=None)


# --------------------------------------------------------------------------- iot (N-BaIoT format)
def _nbaiot_csv(path: Path, X, header=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    header = ",".join(_parsers.NBAIOT_FEATURES) if header is None else header
    body = "\n".join(",".join(f"{v:.6g}" for v in row) for row in X)
    path.write_text(header + "\n" + body + "\n")


@pytest.fixture
def iot_home(tmp_path):
    rng = np.random.default_rng(1)
    root = tmp_path / "iot"
    blocks = {}
    for rel, n in [
        ("Danmini_Doorbell/benign_traffic.csv", 4),
        ("Danmini_Doorbell/mirai_attacks/udp.csv", 3),
        ("Ecobee_Thermostat/benign_traffic.csv", 2),
        ("Ecobee_Thermostat/gafgyt_attacks/combo.csv", 5),
    ]:
        blocks[rel] = np.round(rng.random((n, 115)) * 100, 3)
        _nbaiot_csv(root / rel, blocks[rel])
    (root / "device_info.csv").write_text("not,a,device\n")  # UCI ships docs at the top level
    return tmp_path, blocks


def test_nbaiot_header_is_the_published_one():
    names = _parsers.NBAIOT_FEATURES
    assert len(names) == 115 and len(set(names)) == 115
    assert names[:4] == ("MI_dir_L5_weight", "MI_dir_L5_mean", "MI_dir_L5_variance", "MI_dir_L3_weight")
    assert names[30:33] == ("HH_L5_weight", "HH_L5_mean", "HH_L5_std")
    assert names[-1] == "HpHp_L0.01_pcc"


def test_iot_parser_device_and_traffic_labels(iot_home, no_defaults):
    home, blocks = iot_home
    X, y = load_dataset("iot", data_home=home)
    order = [
        "Danmini_Doorbell/benign_traffic.csv",
        "Danmini_Doorbell/mirai_attacks/udp.csv",
        "Ecobee_Thermostat/benign_traffic.csv",
        "Ecobee_Thermostat/gafgyt_attacks/combo.csv",
    ]
    np.testing.assert_allclose(X, np.vstack([blocks[k] for k in order]))
    assert y.tolist() == ["Danmini_Doorbell"] * 7 + ["Ecobee_Thermostat"] * 7
    _, y_t = load_dataset("iot", data_home=home, target="traffic")
    assert y_t.tolist() == ["benign"] * 4 + ["mirai.udp"] * 3 + ["benign"] * 2 + ["gafgyt.combo"] * 5
    X_s, y_s = load_dataset("iot", data_home=home, devices=["Ecobee_Thermostat"], max_rows_per_file=1, dtype=np.float32)
    assert X_s.shape == (2, 115) and X_s.dtype == np.float32 and set(y_s) == {"Ecobee_Thermostat"}
    with pytest.raises(ValueError, match="unknown N-BaIoT device"):
        load_dataset("iot", data_home=home, devices=["Toaster"])
    with pytest.raises(ValueError, match="target"):
        load_dataset("iot", data_home=home, target="attack")


@pytest.mark.parametrize(
    "defect, match",
    [
        ("header", "header column 2 is 'MI_dir_L5_avg'"),
        ("short_header", "header has 114 columns"),
        ("columns", "expected 115 comma-separated columns, found 114"),
        ("text", "malformed"),
        ("rar", "is not extracted"),
    ],
)
def test_iot_parser_refuses_bad_files(iot_home, no_defaults, defect, match):
    home, blocks = iot_home
    target = home / "iot" / "Ecobee_Thermostat" / "benign_traffic.csv"
    X = blocks["Ecobee_Thermostat/benign_traffic.csv"]
    names = list(_parsers.NBAIOT_FEATURES)
    if defect == "header":
        names[1] = "MI_dir_L5_avg"
        _nbaiot_csv(target, X, header=",".join(names))
    elif defect == "short_header":
        _nbaiot_csv(target, X[:, :114], header=",".join(names[:114]))
    elif defect == "columns":
        _nbaiot_csv(target, X[:, :114], header=",".join(names))
        target.write_text(",".join(names) + "\n" + ",".join(["1"] * 114) + "\n")
    elif defect == "text":
        target.write_text(",".join(names) + "\n" + ",".join(["1"] * 114 + ["x"]) + "\n")
    else:
        (target.parent / "mirai_attacks.rar").write_bytes(b"Rar!")
    with pytest.raises(ValueError, match=match):
        load_dataset("iot", data_home=home)


# --------------------------------------------------------------------------- IDX (mnist format)
def _idx(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + np.asarray(array.shape, dtype=">u4").tobytes()
    return header + array.astype(np.uint8).tobytes()


@pytest.fixture
def tiny_mnist(tmp_path):
    rng = np.random.default_rng(2)
    arrays = {
        "train-images-idx3-ubyte.gz": rng.integers(0, 256, (5, 28, 28)),
        "train-labels-idx1-ubyte.gz": np.array([0, 1, 2, 3, 9]),
        "t10k-images-idx3-ubyte.gz": rng.integers(0, 256, (3, 28, 28)),
        "t10k-labels-idx1-ubyte.gz": np.array([4, 5, 6]),
    }
    folder = tmp_path / "mnist"
    folder.mkdir()
    for fname, arr in arrays.items():
        (folder / fname).write_bytes(gzip.compress(_idx(arr), mtime=0))
    return tmp_path, arrays


def test_idx_parser_round_trip(tiny_mnist, no_defaults):
    home, arrays = tiny_mnist
    X_tr, y_tr, X_te, y_te = load_dataset("mnist", data_home=home, sha256=None, return_split=True)
    np.testing.assert_array_equal(X_tr, arrays["train-images-idx3-ubyte.gz"].reshape(5, 784))
    np.testing.assert_array_equal(y_te, [4, 5, 6])
    X, _ = load_dataset("mnist", data_home=home, sha256=None, dtype=np.uint8)
    assert X.dtype == np.uint8 and X.shape == (8, 784)


@pytest.mark.parametrize(
    "defect, match",
    [
        ("magic", "bad IDX magic number 0x00000903"),
        ("ndim", "bad IDX magic number 0x00000802"),
        ("count_high", "announces dims \\(6, 28, 28\\)"),
        ("extra_byte", r"3936 bytes in all\) but the file has 3937 bytes"),
        ("short", "shorter than the 16-byte IDX header"),
        ("label_count", "holds 5 images but"),
        ("label_value", "label 10 outside 0..9"),
        ("image_dims", "images are \\(28, 27\\)"),
    ],
)
def test_idx_header_corruption_is_refused(tiny_mnist, no_defaults, defect, match):
    home, arrays = tiny_mnist
    images = arrays["train-images-idx3-ubyte.gz"]
    data = _idx(images)
    fname = "train-images-idx3-ubyte.gz"
    if defect == "magic":
        data = bytes([0, 0, 0x09]) + data[3:]
    elif defect == "ndim":
        data = bytes([0, 0, 0x08, 2]) + data[4:]
    elif defect == "count_high":
        data = data[:4] + np.array([6], ">u4").tobytes() + data[8:]
    elif defect == "extra_byte":
        data = data + b"\x00"
    elif defect == "short":
        data = data[:10]
    elif defect == "label_count":
        fname, data = "train-labels-idx1-ubyte.gz", _idx(np.array([0, 1, 2, 3]))
    elif defect == "label_value":
        fname, data = "train-labels-idx1-ubyte.gz", _idx(np.array([0, 1, 2, 3, 10]))
    else:
        data = _idx(images[:, :, :27])
    (home / "mnist" / fname).write_bytes(gzip.compress(data, mtime=0))
    with pytest.raises(ValueError, match=match):
        load_dataset("mnist", data_home=home, sha256=None)


# --------------------------------------------------------------------------- ARFF / LIBSVM on tiny files
def test_arff_parser_on_tiny_file(tmp_path, no_defaults):
    header = "% comment\n@relation t\n@attribute a numeric\n@attribute b REAL\n@attribute class numeric\n@data\n"
    path = _write_gz(tmp_path / "cpu" / "cpu_act.arff.gz", header + "1, 2.5, 90\n% mid comment\n\n3, 4, 7\n")
    X, y = load_dataset("cpu", data_home=tmp_path, sha256=None)
    np.testing.assert_array_equal(X, [[1, 2.5], [3, 4]])
    np.testing.assert_array_equal(y, [90, 7])
    _write_gz(path, header.replace("b REAL", "b {x,y}") + "1, x, 90\n")
    with pytest.raises(ValueError, match="only numeric"):
        load_dataset("cpu", data_home=tmp_path, sha256=None)
    _write_gz(path, header + "1, ?, 90\n")
    with pytest.raises(ValueError, match="malformed"):
        load_dataset("cpu", data_home=tmp_path, sha256=None)
    _write_gz(path, header.replace("@data\n", "") + "1, 2, 3\n")
    with pytest.raises(ValueError, match="no @data"):
        load_dataset("cpu", data_home=tmp_path, sha256=None)


def test_libsvm_parser_on_tiny_file(tmp_path, no_defaults):
    path = _write_gz(tmp_path / "diabetes" / "diabetes.libsvm.gz", "+1 1:2 8:5\n-1  2:3.5\n")
    X, y = load_dataset("diabetes", data_home=tmp_path, sha256=None)
    np.testing.assert_array_equal(X, [[2, 0, 0, 0, 0, 0, 0, 5], [0, 3.5, 0, 0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(y, [1, -1])
    _write_gz(path, "+1 9:1\n")  # feature index beyond the 8 of the format
    with pytest.raises(ValueError, match="malformed LIBSVM"):
        load_dataset("diabetes", data_home=tmp_path, sha256=None)
    _write_gz(path, "+2 1:1\n")
    with pytest.raises(ValueError, match="unexpected label values \\[2\\]"):
        load_dataset("diabetes", data_home=tmp_path, sha256=None)
