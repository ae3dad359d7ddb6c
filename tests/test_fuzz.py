"""Bounded fuzzing of every reader and of the model loader (hypothesis).

Property: whatever the bytes, a reader either returns a finite 2-D float
array or raises a ValueError (or FileNotFoundError/TypeError) with a
message -- never another exception type, never NaN/inf, never a hang.
The model loader either rejects a mutated file with ModelFormatError or
loads a model whose transform is identical to the original's.
Seed inputs live in tests/fuzz_corpus/; interesting cases found so far are
pinned with @example.  Total budget: well under 2 minutes.
"""

import io
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import kernelsketch as ks
from kernelsketch.datasets._parsers import parse_idx
from kernelsketch.io import read_matrix
from kernelsketch.persistence import ModelFormatError, load, save

CORPUS = Path(__file__).parent / "fuzz_corpus"
FUZZ = settings(
    max_examples=int(os.environ.get("KS_FUZZ_EXAMPLES", 60)),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ALLOWED = (ValueError, TypeError, FileNotFoundError)


def _valid_file(kind, tmp_path):
    if kind in ("csv", "tsv", "libsvm"):
        src = {"csv": "header.csv", "tsv": "plain.tsv", "libsvm": "small.libsvm"}[kind]
        return (CORPUS / src).read_bytes()
    buf = io.BytesIO()
    if kind == "npy":
        np.save(buf, np.arange(12.0).reshape(4, 3))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"a": [1.0, 2.0, 3.0], "b": [4.0, 5.0, 6.0]}), buf)
    return buf.getvalue()


def _check_reader(path):
    try:
        X, _ = read_matrix(path)
    except ALLOWED as exc:
        assert str(exc), "an error without a message"
        return
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
    assert X.ndim == 2
    assert np.all(np.isfinite(X))


SUFFIX = {"csv": ".csv", "tsv": ".tsv", "libsvm": ".libsvm", "npy": ".npy", "parquet": ".parquet"}


@pytest.mark.parametrize("kind", sorted(SUFFIX))
@FUZZ
@given(data=st.data())
def test_readers_on_mutated_files(tmp_path, kind, data):
    original = _valid_file(kind, tmp_path)
    op = data.draw(st.sampled_from(["truncate", "flip", "insert", "random"]))
    if op == "truncate":
        cut = data.draw(st.integers(0, len(original)))
        blob = original[:cut]
    elif op == "flip":
        pos = data.draw(st.integers(0, len(original) - 1))
        blob = original[:pos] + bytes([original[pos] ^ data.draw(st.integers(1, 255))]) + original[pos + 1 :]
    elif op == "insert":
        pos = data.draw(st.integers(0, len(original)))
        blob = original[:pos] + data.draw(st.binary(min_size=1, max_size=8)) + original[pos:]
    else:
        blob = data.draw(st.binary(max_size=200))
    path = tmp_path / f"in{SUFFIX[kind]}"
    path.write_bytes(blob)
    _check_reader(path)


@FUZZ
@given(text=st.text(alphabet=st.sampled_from(list("0123456789.,-+eE \t\n;:xnaif")), max_size=120))
@example(text="1,2\n3\n")  # ragged
@example(text="1;2\n3;4\n")  # wrong delimiter
@example(text="nan,1\n2,3\n")  # NaN cell
@example(text="1e999,1\n2,3\n")  # overflow to inf
@example(text="")  # empty
def test_csv_reader_on_text(tmp_path, text):
    path = tmp_path / "t.csv"
    path.write_text(text)
    _check_reader(path)


@FUZZ
@given(text=st.text(alphabet=st.sampled_from(list("0123456789.:-+ \n#")), max_size=120))
@example(text="+1 1:2 1:3\n")  # duplicate index
@example(text="1 0:5\n")  # zero-based index
@example(text="1 3:nan\n")
@example(text="1e300 1:1\n")  # label too large for an exact integer
def test_libsvm_reader_on_text(tmp_path, text):
    path = tmp_path / "t.libsvm"
    path.write_text(text)
    _check_reader(path)


@FUZZ
@given(blob=st.binary(max_size=64), ndim=st.sampled_from([1, 3]))
@example(blob=bytes([0, 0, 8, 1, 0, 0, 0, 2, 7, 9]), ndim=1)
@example(blob=bytes([0, 0, 8, 3, 255, 255, 255, 255, 0, 0, 0, 1, 0, 0, 0, 1]), ndim=3)  # absurd count
def test_idx_parser(blob, ndim):
    try:
        arr = parse_idx(blob, "fuzz.idx", ndim=ndim)
    except ValueError as exc:
        assert "fuzz.idx" in str(exc)
        return
    assert arr.ndim == ndim and arr.dtype == np.uint8


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    X = np.random.default_rng(0).normal(size=(50, 3))
    est = ks.Nystroem(n_landmarks=10, n_components=4, bandwidth=1.5, random_state=0).fit(X)
    path = tmp_path_factory.mktemp("model") / "m.ksm"
    save(est, path)
    return path, X, est.transform(X)


@FUZZ
@given(data=st.data())
def test_model_loader_on_mutated_files(tmp_path, model_file, data):
    src, X, Z = model_file
    original = src.read_bytes()
    op = data.draw(st.sampled_from(["truncate", "flip", "flip_member"]))
    if op == "truncate":
        blob = original[: data.draw(st.integers(0, len(original) - 1))]
    elif op == "flip":
        pos = data.draw(st.integers(0, len(original) - 1))
        blob = bytearray(original)
        blob[pos] ^= data.draw(st.integers(1, 255))
        blob = bytes(blob)
    else:  # rewrite one member with a byte flipped, keeping a valid zip
        with zipfile.ZipFile(io.BytesIO(original)) as zf:
            members = {n: zf.read(n) for n in zf.namelist()}
        name = data.draw(st.sampled_from(sorted(members)))
        body = bytearray(members[name])
        pos = data.draw(st.integers(0, len(body) - 1))
        body[pos] ^= data.draw(st.integers(1, 255))
        members[name] = bytes(body)
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as zf:
            for n, b in members.items():
                zf.writestr(n, b)
        blob = out.getvalue()
    path = tmp_path / "mut.ksm"
    path.write_bytes(blob)
    try:
        est = load(path)
    except ModelFormatError as exc:
        assert str(exc)
        return
    # accepted only if nothing that matters changed
    np.testing.assert_array_equal(est.transform(X), Z)


def test_corpus_files_parse():
    for p in sorted(CORPUS.iterdir()):
        X, _ = read_matrix(p)
        X = X.toarray() if hasattr(X, "toarray") else X
        assert np.all(np.isfinite(X)) and X.shape[0] == 2
