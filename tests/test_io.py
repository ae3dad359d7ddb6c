"""Readers, writers, atomic outputs and the row reservoir of kernelsketch.io."""

import gzip
import os

import numpy as np
import pytest
import scipy.sparse as sp

from kernelsketch.io import (
    AtomicPath,
    OutputExistsError,
    RowReservoir,
    SameFileError,
    open_matrix,
    open_writer,
    read_matrix,
    write_matrix,
)
from kernelsketch.io.writers import BlockWriter


def _write(path, text):
    path.write_text(text)
    return path


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(57, 4)), rng.integers(0, 3, 57)


def _csv(path, X, y=None, header=True, sep=","):
    lines = []
    if header:
        lines.append(sep.join([f"f{j}" for j in range(X.shape[1])] + (["label"] if y is not None else [])))
    for i, row in enumerate(X):
        cells = [repr(float(v)) for v in row] + ([f"c{y[i]}"] if y is not None else [])
        lines.append(sep.join(cells))
    path.write_text("\n".join(lines) + "\n")
    return path


# -- reading ------------------------------------------------------------------------
def test_csv_header_labels_and_block_invariance(tmp_path, data):
    X, y = data
    path = _csv(tmp_path / "a.csv", X, y)
    src = open_matrix(path, label_column="label")
    assert src.header and src.feature_names == ["f0", "f1", "f2", "f3"]
    X2, y2 = src.read()
    np.testing.assert_array_equal(X2, X)  # repr() of a float64 round-trips exactly
    assert y2.tolist() == [f"c{v}" for v in y]
    blocks = list(src.iter_blocks(block_rows=5))
    assert len(blocks) == 12 and src.n_rows == 57
    np.testing.assert_array_equal(np.concatenate([b for b, _ in blocks]), X)
    # string labels without a header: the text column does not make line 1 a header
    path = _csv(tmp_path / "b.csv", X, y, header=False)
    Xb, yb = read_matrix(path, label_column=-1)
    np.testing.assert_array_equal(Xb, X)
    # column selection by name and index, float32
    Xc, _ = read_matrix(tmp_path / "a.csv", columns=["f2", 0], label_column="label", dtype=np.float32)
    assert Xc.dtype == np.float32
    np.testing.assert_array_equal(Xc, X[:, [2, 0]].astype(np.float32))


def test_tsv_whitespace_gzip(tmp_path, data):
    X, _ = data
    np.testing.assert_array_equal(read_matrix(_csv(tmp_path / "a.tsv", X, sep="\t"))[0], X)
    np.testing.assert_array_equal(read_matrix(_csv(tmp_path / "a.txt", X, header=False, sep=" "))[0], X)
    gz = tmp_path / "a.csv.gz"
    with gzip.open(gz, "wt") as f:
        f.write((tmp_path / "a.tsv").read_text().replace("\t", ","))
    np.testing.assert_array_equal(read_matrix(gz)[0], X)


def test_npy_parquet_libsvm(tmp_path, data):
    X, y = data
    np.save(tmp_path / "x.npy", X.astype(np.float32))
    src = open_matrix(tmp_path / "x.npy")
    Xn, _ = src.read()
    assert Xn.dtype == np.float32 and src.n_rows == 57
    np.testing.assert_array_equal(Xn, X.astype(np.float32))
    write_matrix(tmp_path / "x.parquet", X)
    np.testing.assert_array_equal(read_matrix(tmp_path / "x.parquet")[0], X)
    # libsvm against scikit-learn's reader
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file

    Xs = X.copy()
    Xs[Xs < 0.3] = 0.0
    dump_svmlight_file(Xs, y, str(tmp_path / "x.svm"), zero_based=False)
    Xl, yl = read_matrix(tmp_path / "x.svm")
    Xr, yr = load_svmlight_file(str(tmp_path / "x.svm"), n_features=4)
    assert sp.issparse(Xl)
    np.testing.assert_allclose(Xl.toarray(), Xr.toarray(), rtol=1e-15)
    np.testing.assert_array_equal(yl, yr)
    assert open_matrix(tmp_path / "x.svm").n_features == 4


@pytest.mark.parametrize(
    "text, fragments",
    [
        ("", ["empty"]),
        ("a,b,c\n", ["no data rows", "header"]),
        ("a;b;c\n1;2;3\n4;5;6\n", ["single column", "semicolon", "--delimiter"]),
        ("a,b,c\n1,2,3\n4,x,6\n", ["line 3", "column 2", "'b'", "'x'"]),
        ("1,2,3\n4,5,6\n7,8,9\n1,2", ["line 4", "2 field", "expected 3", "truncated"]),
        ("1,2,3\n4,5,6,7\n", ["line 2", "4 field"]),
        ("a,b\n1,2\n3,\n", ["line 3", "column 2", "empty cell"]),
        ("a,b\n1,2\n3,nan\n", ["line 3", "column 2", "not finite"]),
        ("a,b\n1,inf\n", ["line 2", "column 2", "not finite"]),
    ],
)
def test_bad_csv_messages(tmp_path, text, fragments):
    path = _write(tmp_path / "bad.csv", text)
    with pytest.raises(ValueError) as err:
        read_matrix(path)
    msg = str(err.value)
    assert "bad.csv" in msg
    for frag in fragments:
        assert frag in msg, (frag, msg)


def test_bad_rows_found_in_later_blocks(tmp_path, data):
    X, _ = data
    path = _csv(tmp_path / "a.csv", X)
    lines = path.read_text().splitlines()
    lines[41] = lines[41].replace(lines[41].split(",")[3], "oops")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"line 42, column 4 \('f3'\): non-numeric value 'oops'"):
        list(open_matrix(path).iter_blocks(block_rows=8))
    # a ragged row with a label column: usecols alone would silently ignore the extra cell
    X, y = data
    path = _csv(tmp_path / "l.csv", X, y)
    lines = path.read_text().splitlines()
    lines[30] += ",7"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="line 31 has 6 field"):
        read_matrix(path, label_column="label")


def test_bad_binary_files(tmp_path, data):
    X, _ = data
    np.save(tmp_path / "ok.npy", X)
    raw = (tmp_path / "ok.npy").read_bytes()
    (tmp_path / "trunc.npy").write_bytes(raw[:300])
    (tmp_path / "junk.npy").write_bytes(b"not an array at all" * 10)
    (tmp_path / "empty.npy").write_bytes(b"")
    np.save(tmp_path / "obj.npy", np.array([[{"a": 1}]], dtype=object), allow_pickle=True)
    np.save(tmp_path / "one_d.npy", X[:, 0])
    bad = X.copy()
    bad[13, 2] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    for name, frag in [
        ("trunc", "truncated"),
        ("junk", "not a .npy"),
        ("empty", "empty"),
        ("obj", "never loaded"),
        ("one_d", "2-D"),
        ("nan", "row index 13, column 3"),
    ]:
        with pytest.raises(ValueError, match=frag):
            read_matrix(tmp_path / f"{name}.npy")
    write_matrix(tmp_path / "ok.parquet", X)
    pq = (tmp_path / "ok.parquet").read_bytes()
    (tmp_path / "trunc.parquet").write_bytes(pq[: len(pq) // 2])
    with pytest.raises(ValueError, match=r"trunc.parquet"):
        read_matrix(tmp_path / "trunc.parquet")
    for text, frag in [
        ("1 1:0.5 2:x\n", "line 1"),
        ("1 0:1\n", "start at 1"),
        ("1 3:1 2:1\n", "increase"),
        ("abc 1:1\n", "label"),
        ("1 1:1\n-1 2:nan\n", "line 2, feature 2"),
    ]:
        path = _write(tmp_path / "bad.svm", text)
        with pytest.raises(ValueError, match=frag):
            read_matrix(path)


# -- writing ------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", ["npy", "csv", "tsv", "parquet"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_writers_round_trip(tmp_path, data, suffix, dtype):
    X = data[0].astype(dtype)
    path = tmp_path / f"z.{suffix}"
    with open_writer(path, 4, dtype) as w:
        for s in range(0, 57, 10):
            w.write(X[s : s + 10])
    back, _ = read_matrix(path, dtype=dtype)
    np.testing.assert_array_equal(back, X)  # %.17g / %.9g text round-trips exactly
    assert os.listdir(tmp_path) == [path.name]


def test_npy_header_rewritten_for_any_row_count(tmp_path):
    for n in (0, 1, 12345):
        path = tmp_path / f"z{n}.npy"
        with open_writer(path, 3, np.float64) as w:
            w.write(np.arange(3.0 * n).reshape(n, 3))
        a = np.load(path)
        assert a.shape == (n, 3)
        np.testing.assert_array_equal(a, np.arange(3.0 * n).reshape(n, 3))


def test_failed_write_leaves_previous_output_and_no_temp(tmp_path, data, monkeypatch):
    X, _ = data
    path = tmp_path / "z.npy"
    np.save(path, np.zeros(3))
    before = path.read_bytes()
    with pytest.raises(OutputExistsError):
        open_writer(path, 4)
    calls = []

    def flaky(self, block, _orig=BlockWriter.write):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # as Ctrl-C would, midway
        _orig(self, block)

    monkeypatch.setattr(BlockWriter, "write", flaky)
    with pytest.raises(KeyboardInterrupt):
        with open_writer(path, 4, force=True) as w:
            for s in range(0, 57, 10):
                w.write(X[s : s + 10])
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["z.npy"]


def test_inputs_are_never_outputs(tmp_path, data):
    X, _ = data
    src = tmp_path / "in.csv"
    _csv(src, X)
    link = tmp_path / "link.csv"
    link.symlink_to(src)
    for target in (src, link, tmp_path / "." / "in.csv"):
        with pytest.raises(SameFileError):
            AtomicPath(target, force=True, protect=[src])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        AtomicPath(tmp_path / "nope" / "z.npy")


# -- reservoir ------------------------------------------------------------------------
def test_reservoir_is_block_size_invariant_and_uniform():
    X = np.arange(200.0).reshape(100, 2)
    ref = None
    for step in (1, 7, 100):
        r = RowReservoir(10, seed=3)
        for s in range(0, 100, step):
            r.add(X[s : s + step])
        Xs, _, idx = r.result()
        np.testing.assert_array_equal(Xs, X[idx])
        ref = idx if ref is None else ref
        np.testing.assert_array_equal(idx, ref)
    # inclusion frequency of every row is m / n = 0.1 (binomial, 2000 seeds: sd ~ 0.0067)
    counts = np.zeros(100)
    for seed in range(2000):
        r = RowReservoir(10, seed=seed)
        r.add(X[:37])
        r.add(X[37:])
        counts[r.result()[2]] += 1
    assert np.all(np.abs(counts / 2000 - 0.1) < 0.035)
    # fewer rows than m: everything, in order
    r = RowReservoir(500, seed=0)
    r.add(X[:60], np.arange(60))
    r.add(X[60:], np.arange(60, 100))
    Xs, ys, idx = r.result()
    np.testing.assert_array_equal(Xs, X)
    np.testing.assert_array_equal(ys, np.arange(100))


# -- pyarrow's streaming reader and the numpy route give the same rows (issue #28) ----------------
@pytest.fixture
def both_routes(monkeypatch):
    pytest.importorskip("pyarrow.csv")
    from kernelsketch.io import delimited

    def read(path, **options):
        out = {}
        for use in (True, False):
            monkeypatch.setattr(delimited, "USE_PYARROW", use)
            src = open_matrix(path, **options)
            blocks = list(src.iter_blocks(block_rows=700))
            out[use] = (blocks, src.n_rows)
        return out

    return read


def _same(out):
    (fast, n_fast), (slow, n_slow) = out[True], out[False]
    assert n_fast == n_slow
    assert max(b[0].shape[0] for b in fast) <= 700  # blocks of at most block_rows rows
    np.testing.assert_array_equal(np.concatenate([b[0] for b in fast]), np.concatenate([b[0] for b in slow]))
    if fast[0][1] is not None:
        assert np.concatenate([b[1] for b in fast]).tolist() == np.concatenate([b[1] for b in slow]).tolist()


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".tsv"])
def test_pyarrow_route_reads_what_the_numpy_route_reads(tmp_path, both_routes, suffix):
    import gzip

    rng = np.random.default_rng(3)
    X = rng.normal(size=(5000, 4)) * 10.0 ** rng.integers(-300, 300, size=(5000, 4))
    sep = "\t" if suffix == ".tsv" else ","
    lines = [sep.join(["a", "b", "c", "d", "label"])]
    lines += [sep.join([*(repr(float(v)) for v in row), f'"k{i % 3}"']) for i, row in enumerate(X)]
    text = "\r\n".join(lines) + "\r\n"
    path = tmp_path / f"x{suffix}"
    if suffix.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    out = both_routes(path, label_column="label")
    _same(out)
    np.testing.assert_array_equal(np.concatenate([b[0] for b in out[True][0]]), X)


@pytest.mark.parametrize(
    "defect",
    ["# a comment line", "", "1,2,nan,4", "1,2,,4", "1,2,3", "1,2,x,4", " 1, 2 ,3,+4", '"1","2","3","4"'],
)
def test_pyarrow_route_hands_over_at_what_it_cannot_take(tmp_path, both_routes, defect):
    rng = np.random.default_rng(4)
    rows = [",".join(repr(float(v)) for v in r) for r in rng.normal(size=(3000, 4))]
    rows.insert(2345, defect)
    path = tmp_path / "x.csv"
    path.write_text("\n".join(rows) + "\n")
    try:
        out = both_routes(path)
    except ValueError as exc:  # both routes refuse it, and with the text route's message naming the line
        with pytest.raises(ValueError) as slow:
            from kernelsketch.io import delimited

            delimited.USE_PYARROW = False
            try:
                list(open_matrix(path).iter_blocks(block_rows=700))
            finally:
                delimited.USE_PYARROW = True
        assert str(exc) == str(slow.value) and "line 2346" in str(exc)
        return
    _same(out)


def test_npy_gather_region_by_region_reads_the_same_rows(tmp_path, monkeypatch):
    # issue 28: a gather reads the map region by region, dropping pages after each (RSS flat in N)
    from kernelsketch.io import binary

    X = np.random.default_rng(7).normal(size=(5000, 6))
    X[:, 5] = np.arange(5000) % 4
    np.save(tmp_path / "x.npy", X)
    idx = np.unique(np.random.default_rng(8).integers(0, 5000, 900))
    whole = open_matrix(tmp_path / "x.npy", label_column=5).take(idx)
    monkeypatch.setattr(binary, "GATHER_REGION_BYTES", 48 * 37)  # 37 rows a region: ~135 regions
    parts = open_matrix(tmp_path / "x.npy", label_column=5).take(idx)
    np.testing.assert_array_equal(parts[0], X[idx, :5])
    np.testing.assert_array_equal(parts[0], whole[0])
    np.testing.assert_array_equal(parts[1], X[idx, 5])
    assert open_matrix(tmp_path / "x.npy").take(np.array([], dtype=np.int64))[0].shape == (0, 6)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, "both"])
@pytest.mark.filterwarnings("error")
def test_npy_blocks_refuse_non_finite_cells_and_keep_huge_finite_ones(tmp_path, bad):
    """The finiteness check looks at a block's sum first: huge finite float32 values whose sum overflows
    are still accepted (the cells are then checked one by one), and every NaN / inf cell is named; a block
    read whole is returned as read (no copy, the same values)."""
    from kernelsketch.io import open_matrix

    X = np.ones((5000, 3), dtype=np.float32)
    X[:, 1] = 3e38  # finite, but any sum of two overflows
    np.save(tmp_path / "ok.npy", X)
    got = np.concatenate([b for b, _ in open_matrix(tmp_path / "ok.npy").iter_blocks(700)])
    np.testing.assert_array_equal(got, X)
    if bad == "both":  # +inf and -inf: a NaN sum
        X[4000, 0], X[4100, 2] = np.inf, -np.inf
        where = "row index 4000, column 1"
    else:
        X[4321, 2] = bad
        where = "row index 4321, column 3"
    np.save(tmp_path / "bad.npy", X)
    with pytest.raises(ValueError, match=f"{where}: value .* is not finite"):
        for _ in open_matrix(tmp_path / "bad.npy").iter_blocks(700):
            pass


def test_quoted_commas_are_named_and_the_first_data_line_is_compared_with_the_header(tmp_path):
    # issue 53 item 13: 'line 2 has 5 field(s), expected 3 like line 2' (quotes ignored, a line against itself)
    from kernelsketch.io import open_matrix

    path = tmp_path / "q.csv"
    path.write_text('a,b,c\n"4,5","6,7",8\n1,2,3\n')
    with pytest.raises(ValueError, match=r"line 2 has 5 field\(s\), expected 3 like the header \(line 1\); quoted"):
        open_matrix(path).read()


@pytest.mark.parametrize(
    "text",
    ["1990,2000,2010,2020\n3,5,2,7\n4,1,8,2\n6,6,3,1\n", "0.5,1.5,2.5\n0.31,0.72,0.15\n0.44,0.12,0.98\n"],
    ids=["years-over-counts", "bins-over-fractions"],
)
def test_an_evenly_stepping_numeric_first_line_is_refused_as_ambiguous(tmp_path, text):
    # issue 53 item 5: these first lines were read as data rows (61 rows from 60)
    from kernelsketch.io import open_matrix

    path = tmp_path / "x.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"cannot tell whether the first line .* step evenly.*--header or --no-header"):
        open_matrix(path).read()
    n = text.count("\n")
    assert open_matrix(path, header=True).read()[0].shape[0] == n - 1
    assert open_matrix(path, header=False).read()[0].shape[0] == n


def test_a_ramp_continued_below_is_still_data(tmp_path):
    from kernelsketch.io import open_matrix

    path = tmp_path / "ramp.csv"
    path.write_text("0,1,2\n1,2,3\n2,3,4\n")
    assert open_matrix(path).read()[0].shape == (3, 3)
