"""save/load: every exported estimator round-trips; tampered or crafted files are refused."""

import importlib
import io
import json
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

import kernelsketch
from kernelsketch.persistence import ModelFormatError, load, save

ESTIMATOR_NAMES = sorted(kernelsketch.estimators.estimator_locations())

# small settings for every parameter name an estimator may have
_SMALL = {
    "n_components": 3,
    "n_landmarks": 25,
    "n_random_features": 40,
    "sketch_size": 8,
    "n_clusters": 3,
    "random_state": 0,
    "bandwidth": 1.5,
}


def _make(name):
    try:
        cls = getattr(importlib.import_module(f"kernelsketch.{kernelsketch._LAZY[name]}"), name)
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"{name} is not importable yet ({exc})")
    names = cls().get_params(deep=False)
    return cls(**{k: v for k, v in _SMALL.items() if k in names})


def _output(est, X):
    return est.transform(X) if hasattr(est, "transform") else est.predict(X)


def _assert_same_state(a, b):
    assert type(a) is type(b)
    assert a.get_params(deep=False).keys() == b.get_params(deep=False).keys()
    transient = set(getattr(type(a), "_transient_state", ()))  # caches: never saved, rebuilt on use
    for key, va in vars(a).items():
        if key in transient:
            continue
        vb = vars(b)[key]
        if isinstance(va, np.ndarray):
            assert va.dtype == vb.dtype and va.shape == vb.shape, key
            np.testing.assert_array_equal(va, vb, err_msg=key)
        elif sp.issparse(va):
            assert (va != vb).nnz == 0, key
        elif isinstance(va, (int, float, str, bool, type(None))):
            assert va == vb or (va != va and vb != vb), key


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_round_trip_every_estimator(name, dtype, tmp_path):
    est = _make(name)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4)).astype(dtype)
    X_new = rng.normal(size=(17, 4)).astype(dtype)
    est.fit(X)
    expected = _output(est, X_new)
    path = save(est, tmp_path / "model.npz")
    loaded = load(path)
    _assert_same_state(est, loaded)
    got = _output(loaded, X_new)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    # identical state; BLAS may round a last bit differently on differently aligned copies
    np.testing.assert_allclose(got, expected, rtol=1e-12 if dtype == np.float64 else 1e-6, atol=1e-12)
    # the loaded model saves to the same arrays again
    path2 = save(loaded, tmp_path / "again.npz")
    with zipfile.ZipFile(path) as a, zipfile.ZipFile(path2) as b:
        assert json.loads(a.read("meta.json"))["arrays_sha256"] == json.loads(b.read("meta.json"))["arrays_sha256"]


def test_unfitted_and_generator_random_state(tmp_path):
    from kernelsketch import KernelPCA

    est = KernelPCA(n_components=2, kernel_params={"degree": 2}, random_state=np.random.default_rng(1))
    path = save(est, tmp_path / "m.npz")
    back = load(path)
    assert back.kernel_params == {"degree": 2} and back.random_state is None
    assert json.loads(zipfile.ZipFile(path).read("meta.json"))["not_stored"] == ["KernelPCA.random_state"]
    with pytest.raises(TypeError, match="kernelsketch estimator"):
        save(object(), tmp_path / "x.npz")
    with pytest.raises(FileExistsError):
        save(est, path, overwrite=False)


@pytest.fixture
def saved(tmp_path):
    from kernelsketch import KernelPCA

    X = np.random.default_rng(0).normal(size=(40, 3))
    est = KernelPCA(n_components=2, bandwidth=2.0).fit(X)
    return save(est, tmp_path / "m.npz"), est, X


def _rewrite(path, edit_meta=None, edit_entries=None, reseal=True, compression=zipfile.ZIP_STORED):
    """Edit a model file; ``reseal`` recomputes meta.json's checksum (to reach the checks behind it)."""
    from kernelsketch.persistence import _meta_digest

    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("meta.json"))
        entries = {n: zf.read(n) for n in zf.namelist() if n != "meta.json"}
    if edit_meta:
        edit_meta(meta)
    if edit_entries:
        edit_entries(entries, meta)
    if reseal:
        meta["meta_sha256"] = _meta_digest(meta)
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        zf.writestr("meta.json", json.dumps(meta))
        for n, b in entries.items():
            zf.writestr(n, b)


def _npy(a, allow_pickle=False):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, allow_pickle=allow_pickle)
    return buf.getvalue()


def test_flipped_byte_is_rejected(saved):
    path, _, _ = saved
    raw = bytearray(path.read_bytes())
    # flip a byte inside the eigenvectors' data (stored uncompressed): the zip CRC or the sha256 catches it
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("meta.json"))
        key = next(k for k, s in meta["arrays"].items() if s["name"].endswith("eigenvectors_"))
        info = zf.getinfo(f"{key}.npy")
    offset = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.file_size - 5
    raw[offset] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(ModelFormatError, match=r"corrupt|checksum"):
        load(path)


def test_modified_array_with_valid_zip_is_rejected(saved):
    path, _, _ = saved

    def edit(entries, meta):
        name = sorted(entries)[0]
        a = np.lib.format.read_array(io.BytesIO(entries[name]))
        entries[name] = _npy(a + 1e-9)

    _rewrite(path, edit_entries=edit)
    with pytest.raises(ModelFormatError, match="checksum mismatch"):
        load(path)


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda m: m.update(format_version=3), "format version 3 is not supported"),
        (lambda m: m.update(format="something-else"), "not a kernelsketch model"),
        (lambda m: m["root"].update(__estimator__="os.system"), "not a kernelsketch estimator"),
        (lambda m: m["root"]["params"].update(bogus=1), "bogus"),
    ],
)
def test_edited_metadata_is_rejected(saved, edit, match):
    path, _, _ = saved
    _rewrite(path, edit_meta=edit)
    with pytest.raises(ModelFormatError, match=match):
        load(path)


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m["root"]["params"].update(bandwidth=123.0),
        lambda m: m.update(library_version="9.9"),
    ],
)
def test_any_edit_of_the_metadata_breaks_its_checksum(saved, edit):
    path, _, _ = saved
    _rewrite(path, edit_meta=edit, reseal=False)
    with pytest.raises(ModelFormatError, match=r"meta.json checksum mismatch"):
        load(path)


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda m: m.update(root=[1, 2]), "not a kernelsketch estimator|malformed"),
        (lambda m: m.update(arrays={"a": 3}), "malformed meta.json"),
        (lambda m: m["root"].update(params=7), "malformed"),
        (lambda m: m.update(root={"__estimator__": {"x": 1}}), "malformed|not a kernelsketch"),
    ],
)
def test_malformed_metadata_is_a_model_format_error(saved, edit, match):
    path, _, _ = saved
    _rewrite(path, edit_meta=edit)
    with pytest.raises(ModelFormatError, match=match):
        load(path)


def test_deeply_nested_metadata_is_a_model_format_error(saved, tmp_path):
    path, _, _ = saved
    deep = "[" * 100_000 + "]" * 100_000
    with zipfile.ZipFile(path) as zf:
        entries = {n: zf.read(n) for n in zf.namelist() if n != "meta.json"}
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("meta.json", deep)
        for n, b in entries.items():
            zf.writestr(n, b)
    with pytest.raises(ModelFormatError):
        load(path)


def test_compressed_array_entries_are_refused_before_decompression(saved, tmp_path):
    # a small file whose meta.json claims a huge array of deflated zeros: refused from the zip directory alone
    path, _, _ = saved
    bomb = tmp_path / "bomb.ksm"

    def grow(entries, meta):
        key = sorted(entries)[0]
        entries[key] = _npy(np.zeros((3000, 3000)))
        meta["arrays"][key[:-4]].update(dtype="<f8", shape=[3000, 3000])

    import shutil

    shutil.copy(path, bomb)
    _rewrite(bomb, edit_entries=grow, compression=zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 1_000_000
    with pytest.raises(ModelFormatError, match="compressed"):
        load(bomb)


def test_missing_and_misshapen_arrays_are_rejected(saved):
    from kernelsketch.persistence import _digest

    path, _, _ = saved
    _rewrite(path, edit_entries=lambda e, m: e.pop(sorted(e)[0]))
    with pytest.raises(ModelFormatError, match="missing array"):
        load(path)

    path2 = path.with_name("m2.npz")
    save(load_fresh(saved), path2)

    def reshape(entries, meta):  # a consistent checksum, but the shape disagrees with the metadata
        key = next(k for k, s in meta["arrays"].items() if len(s["shape"]) == 2)
        a = np.lib.format.read_array(io.BytesIO(entries[f"{key}.npy"]))
        entries[f"{key}.npy"] = _npy(a[:-1])
        meta["arrays_sha256"] = _digest(entries)

    _rewrite(path2, edit_entries=reshape)
    with pytest.raises(ModelFormatError, match="shape"):
        load(path2)


def load_fresh(saved):
    return saved[1]


class _Boom:
    """Unpickling this would create a file: proof that nothing is unpickled."""

    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def test_pickled_object_arrays_are_never_unpickled(saved, tmp_path):
    from kernelsketch.persistence import _digest

    path, _, _ = saved
    sentinel = tmp_path / "unpickled"
    evil = np.empty(1, dtype=object)
    evil[0] = _Boom(str(sentinel))
    # a plain .npz holding a pickled object array
    plain = tmp_path / "plain.npz"
    np.savez(plain, x=evil)
    with pytest.raises(ModelFormatError, match="not a kernelsketch model"):
        load(plain)

    # a model whose array entry is replaced by a pickled object array, checksum recomputed
    def swap(entries, meta):
        key = sorted(entries)[0]
        entries[key] = _npy(evil, allow_pickle=True)
        meta["arrays"][key[:-4]].update(dtype="|O", shape=[1])
        meta["arrays_sha256"] = _digest(entries)  # _rewrite reseals meta.json

    _rewrite(path, edit_entries=swap)
    with pytest.raises(ModelFormatError, match="Python objects"):
        load(path)
    assert not sentinel.exists()
    # not a zip at all
    (tmp_path / "junk.npz").write_bytes(b"\x80\x04junk")
    with pytest.raises(ModelFormatError, match="not a kernelsketch model"):
        load(tmp_path / "junk.npz")


def test_files_from_before_a_parameter_existed_keep_their_behaviour(tmp_path):
    """A KernelJL file written before ``scaling`` existed holds the paper's V_hat: it loads as scaling="paper"."""
    from kernelsketch import KernelJL

    X = np.random.default_rng(0).normal(size=(60, 3))
    est = KernelJL(n_components=4, n_landmarks=20, scaling="paper", bandwidth=1.5, random_state=0).fit(X)
    path = save(est, tmp_path / "old.ksm")

    def drop_new_fields(meta):
        node = meta["root"]
        del node["params"]["scaling"]
        del node["state"]["scale_"]

    _rewrite(path, edit_meta=drop_new_fields)
    back = load(path)
    assert back.scaling == "paper" and back.scale_ == 1.0
    np.testing.assert_array_equal(back.transform(X), est.transform(X))
    # today's default is "unit", which an old file must not claim
    assert KernelJL().scaling == "unit"


def test_spectral_files_from_before_search_existed_keep_the_exact_search(tmp_path):
    """A clustering saved before ``search`` existed found its neighbours exactly: it loads as search="exact"."""
    from sklearn.datasets import make_blobs

    from kernelsketch import LandmarkSpectralClustering

    X, _ = make_blobs(1500, centers=3, n_features=3, random_state=1)
    est = LandmarkSpectralClustering(3, n_landmarks=200, search="exact", random_state=0).fit(X)
    path = save(est, tmp_path / "old.ksm")

    def drop_new_fields(meta):
        node = meta["root"]
        del node["params"]["search"]
        del node["state"]["embedding_"]["params"]["search"]

    _rewrite(path, edit_meta=drop_new_fields)
    back = load(path)
    assert back.search == "exact" and back.embedding_.search == "exact"
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert LandmarkSpectralClustering().search == "auto"  # today's default, which an old file must not claim


def test_pipelines_of_kernelsketch_and_sklearn_steps_round_trip(tmp_path):
    """The README's quick start is a Pipeline: it saves and loads without pickle, and predicts the same."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler

    from kernelsketch import KernelJL, StreamingKMeans

    X, y = load_digits(return_X_y=True)
    clf = make_pipeline(
        StandardScaler(), KernelJL(n_components=20, random_state=0), LogisticRegression(max_iter=300)
    ).fit(X, y)
    back = load(save(clf, tmp_path / "clf.ksm"))
    assert isinstance(back, Pipeline) and [n for n, _ in back.steps] == [n for n, _ in clf.steps]
    np.testing.assert_array_equal(back.predict(X), clf.predict(X))
    np.testing.assert_allclose(back.predict_proba(X[:50]), clf.predict_proba(X[:50]), rtol=1e-12, atol=1e-15)
    clusterer = make_pipeline(
        StandardScaler(), KernelJL(n_components=30, random_state=0), StreamingKMeans(10, random_state=0)
    ).fit(X)
    np.testing.assert_array_equal(load(save(clusterer, tmp_path / "km.ksm")).predict(X), clusterer.predict(X))
    # steps outside the allowlist are refused when saving (a function would need pickle) ...
    with pytest.raises(TypeError, match="FunctionTransformer"):
        save(make_pipeline(FunctionTransformer(np.log1p), KernelJL(n_components=2)), tmp_path / "f.ksm")
    with pytest.raises(TypeError, match="memory=None"):
        save(make_pipeline(StandardScaler(), memory=str(tmp_path)), tmp_path / "m.ksm")

    # ... and a file naming a class outside it never builds that class
    def smuggle(meta):
        meta["root"]["params"]["steps"][0]["__tuple__"][1]["__estimator__"] = "sklearn.FunctionTransformer"

    _rewrite(tmp_path / "clf.ksm", edit_meta=smuggle)
    with pytest.raises(ModelFormatError, match="FunctionTransformer"):
        load(tmp_path / "clf.ksm")


def test_dataframe_feature_names_are_saved(tmp_path):
    pd = pytest.importorskip("pandas")
    from kernelsketch import Nystroem

    df = pd.DataFrame(np.random.default_rng(0).normal(size=(60, 3)), columns=["a", "b", "c"])
    back = load(save(Nystroem(n_landmarks=20, random_state=0).fit(df), tmp_path / "n.ksm"))
    assert list(back.feature_names_in_) == ["a", "b", "c"] and back.feature_names_in_.dtype == object
    with pytest.raises(ValueError, match="feature names"):
        back.transform(df[["c", "b", "a"]])


@pytest.mark.parametrize("replace", [False, True])
def test_nystroem_stream_saved_mid_way_continues_identically(tmp_path, replace):
    """partial_fit's reservoir (rows, indices, Algorithm L state, random stream) is part of the model."""
    from kernelsketch import Nystroem

    blocks = np.array_split(np.random.default_rng(0).normal(size=(900, 4)), 6)
    live = Nystroem(n_landmarks=40, replace=replace, random_state=0)
    for b in blocks[:3]:
        live.partial_fit(b)
    saved = load(save(live, tmp_path / "stream.ksm"))
    for b in blocks[3:]:
        live.partial_fit(b)
        saved.partial_fit(b)
    np.testing.assert_array_equal(saved.landmark_indices_, live.landmark_indices_)
    np.testing.assert_array_equal(saved.transform(blocks[0]), live.transform(blocks[0]))


@pytest.mark.parametrize("entry", ["arr_0.npy", "meta.json"])
def test_an_entry_flagged_encrypted_is_a_model_format_error(saved, tmp_path, entry):
    """zipfile raises RuntimeError("... is encrypted, password required"): found by the mutation fuzzer."""
    path, _, _ = saved
    data = bytearray(path.read_bytes())
    # set bit 0 (encrypted) of the entry's general-purpose flags in the central directory record
    pos = 0
    while (pos := data.find(b"PK\x01\x02", pos)) >= 0:
        name_len = int.from_bytes(data[pos + 28 : pos + 30], "little")
        if data[pos + 46 : pos + 46 + name_len].decode() == entry:
            data[pos + 8] |= 0x1
        pos += 4
    out = tmp_path / "encrypted.ksm"
    out.write_bytes(bytes(data))
    with zipfile.ZipFile(out) as zf:
        assert zf.getinfo(entry).flag_bits & 0x1
    with pytest.raises(ModelFormatError, match="encrypted"):
        load(out)


# -- declared state (issue 20): what is saved is what the class declares ----------------------
def _fitted_every_way(name):
    """Estimators of class ``name`` after fit, after partial_fit (+ merge) and after transform."""
    import warnings

    X = np.random.default_rng(0).normal(size=(120, 4))
    cls = getattr(kernelsketch, name)
    params = {"random_state": 0} if "random_state" in cls().get_params() else {}
    if "bandwidth" in cls().get_params():
        params["bandwidth"] = 1.5
    for key, value in {"n_landmarks": 30, "n_random_features": 16, "sketch_size": 3, "n_clusters": 3}.items():
        if key in cls().get_params():
            params[key] = value
    if name in (
        "KernelJL",
        "KernelPCA",
        "SubsampleKPCA",
        "RFKPCA",
        "RNCA",
        "StreamingKPCA",
        "LandmarkSpectralEmbedding",
    ):
        params["n_components"] = 2
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(**params).fit(X)
        for method in ("transform", "predict"):
            if hasattr(est, method):
                getattr(est, method)(X[:5])
        out.append(est)
        if hasattr(cls, "partial_fit"):
            est = cls(**params).partial_fit(X[:60]).partial_fit(X[60:])
            if hasattr(est, "merge"):
                est.merge(cls(**params).partial_fit(X[:30]))
            out.append(est)
    return out


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_every_fitted_attribute_is_declared(name):
    cls = getattr(kernelsketch, name)
    declared = set(cls._persistent_state) | set(getattr(cls, "_transient_state", ()))
    for est in _fitted_every_way(name):
        state = set(vars(est)) - set(est.get_params(deep=False)) - {"n_features_in_", "feature_names_in_"}
        assert state <= declared, f"{name}: undeclared state {sorted(state - declared)}"


def test_undeclared_state_is_refused_on_save_and_on_load(tmp_path):
    est = kernelsketch.Nystroem(n_landmarks=20, random_state=0).fit(np.random.default_rng(0).normal(size=(50, 3)))
    est.surprise_ = np.ones(3)
    with pytest.raises(TypeError, match=r"does not declare.*surprise_"):
        save(est, tmp_path / "m.ksm")
    del est.surprise_
    path = save(est, tmp_path / "m.ksm")

    def edit(meta):
        meta["root"]["state"]["surprise_"] = 1

    _rewrite(path, edit_meta=edit, reseal=True)
    with pytest.raises(ModelFormatError, match="no fitted attribute 'surprise_'"):
        load(path)


# -- issue 27, items 7-11: what a file may not make load do ---------------------------------------
def _arrays_digest(entries):
    from kernelsketch.persistence import _digest  # the checksum save() writes, recomputed as a forger would

    return _digest(entries)


def test_a_pipeline_whose_memory_names_a_directory_is_refused(tmp_path):
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X = np.random.default_rng(0).normal(size=(60, 3))
    pipe = Pipeline([("s", StandardScaler()), ("m", kernelsketch.Nystroem(n_landmarks=20, random_state=0))]).fit(X)
    path = save(pipe, tmp_path / "p.ksm")
    cache = tmp_path / "cache"

    def edit(meta):
        meta["root"]["params"]["memory"] = str(cache)

    _rewrite(path, edit_meta=edit, reseal=True)  # checksums recomputed: only the content check can refuse it
    with pytest.raises(ModelFormatError, match="memory="):
        load(path)
    assert not cache.exists()


def test_an_edited_format_version_does_not_switch_the_metadata_check_off(saved):
    path, _, _ = saved

    def edit(meta):
        meta["format_version"] = 1
        meta["root"]["params"]["bandwidth"] = 50.0

    _rewrite(path, edit_meta=edit, reseal=False)
    with pytest.raises(ModelFormatError, match="checksum mismatch"):
        load(path)


def test_nan_in_fitted_state_is_refused_even_with_recomputed_checksums(saved):
    path, est, X = saved

    def edit(entries, meta):
        key = next(k for k, s in meta["arrays"].items() if s["name"].endswith("eigenvectors_"))
        a = np.load(io.BytesIO(entries[f"{key}.npy"]))
        a[0, 0] = np.nan
        entries[f"{key}.npy"] = _npy(a)
        meta["arrays_sha256"] = _arrays_digest(entries)

    _rewrite(path, edit_entries=edit, reseal=True)
    with pytest.raises(ModelFormatError, match="eigenvectors_ holds NaN"):
        load(path)


@pytest.mark.parametrize("shape", [(10**6, 10**6), (10**30,)])
def test_a_header_claiming_more_than_the_entry_holds_is_refused_before_allocating(saved, shape):
    path, _, _ = saved

    def edit(entries, meta):
        key = next(k for k, s in meta["arrays"].items() if s["name"].endswith("eigenvectors_"))
        raw = _npy(np.zeros((2, 2)))
        header = np.lib.format.header_data_from_array_1_0(np.zeros((2, 2)))
        header["shape"] = shape
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(buf, header)
        entries[f"{key}.npy"] = buf.getvalue() + raw[-32:]
        meta["arrays"][key]["shape"] = list(shape)
        meta["arrays_sha256"] = _arrays_digest(entries)

    _rewrite(path, edit_entries=edit, reseal=True)
    with pytest.raises(ModelFormatError, match="header claims shape"):
        load(path)


def test_set_output_pandas_is_saved_and_restored(tmp_path):
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(0).normal(size=(60, 3))
    est = kernelsketch.Nystroem(n_landmarks=20, n_components=4, random_state=0).set_output(transform="pandas").fit(X)
    back = load(save(est, tmp_path / "n.ksm"))
    out = back.transform(X)
    assert isinstance(out, pd.DataFrame)
    np.testing.assert_array_equal(out.to_numpy(), est.transform(X).to_numpy())


# -- issue 39, item 8: parameters and fitted state of the wrong kind, checksums recomputed -------------------
@pytest.mark.parametrize(
    ("where", "key", "value", "message"),
    [
        ("params", "n_neighbors", 0, "n_neighbors"),
        ("params", "n_neighbors", -3, "n_neighbors"),
        ("params", "trivial", "sometimes", "trivial"),
        ("state", "bandwidth_", "x", "bandwidth_ = 'x' is text"),
        ("state", "bandwidth_", -1.0, "a bandwidth must be a number > 0"),
        ("state", "n_samples_seen_", -5, "a count must be a whole number"),
    ],
)
def test_a_spectral_model_with_impossible_parameters_or_state_is_refused_on_load(tmp_path, where, key, value, message):
    X = np.random.default_rng(0).normal(size=(100, 3))
    path = save(kernelsketch.LandmarkSpectralEmbedding(n_components=2, n_landmarks=20, random_state=0).fit(X),
                tmp_path / "m.ksm")  # fmt: skip

    def edit(meta):
        meta["root"][where][key] = value

    _rewrite(path, edit_meta=edit, reseal=True)  # checksums recomputed: only the content check can refuse it
    with pytest.raises(ModelFormatError, match=message):
        load(path)


# -- issue 53 item 12: arrays that disagree with each other, or that are not real numbers, are refused at load -------
def _tamper(path, attr, change):
    """Replace fitted array ``attr`` by ``change(array)`` with every checksum and the metadata made consistent."""
    from kernelsketch.persistence import _digest

    def edit(entries, meta):
        key = next(k for k, s in meta["arrays"].items() if s["name"].endswith(attr))
        a = change(np.lib.format.read_array(io.BytesIO(entries[f"{key}.npy"])))
        entries[f"{key}.npy"] = _npy(a)
        meta["arrays"][key].update(dtype=a.dtype.str, shape=list(a.shape))
        meta["arrays_sha256"] = _digest(entries)

    _rewrite(path, edit_entries=edit)


@pytest.mark.parametrize(
    "attr,change,match",
    [
        ("projection_", lambda a: a[:-1], "disagree"),
        ("landmarks_", lambda a: a[:, :-1], "disagree"),
        ("landmark_degrees_", lambda a: a[:, None], "dimension"),
        ("landmarks_", lambda a: a.astype(str), "real numbers"),
        ("landmarks_", lambda a: a.astype(complex), "real numbers"),
    ],
    ids=["projection-rows", "landmark-columns", "degrees-2d", "landmarks-text", "landmarks-complex"],
)
def test_a_spectral_model_with_inconsistent_or_non_numeric_arrays_is_refused_at_load(tmp_path, attr, change, match):
    X = np.random.default_rng(0).normal(size=(300, 3))
    est = kernelsketch.LandmarkSpectralEmbedding(n_components=3, n_landmarks=50, random_state=0).fit(X)
    path = save(est, tmp_path / "m.ksm")
    _tamper(path, attr, change)
    with pytest.raises(ModelFormatError, match=match):
        load(path)


def test_kmeans_centres_of_another_width_are_refused_at_load(tmp_path):
    X = np.random.default_rng(0).normal(size=(300, 3))
    path = save(kernelsketch.StreamingKMeans(3, random_state=0).fit(X), tmp_path / "k.ksm")
    _tamper(path, "cluster_centers_", lambda a: np.hstack([a, a]))
    with pytest.raises(ModelFormatError, match="n_features_in_ gives its 'd' as 3"):
        load(path)


# -- issue 63 item 4: a Genie labeling's state that no fit makes is refused at load ---------------------------------
@pytest.fixture(scope="module")
def genie_model(tmp_path_factory):
    from sklearn.datasets import make_moons

    X, _ = make_moons(600, noise=0.05, random_state=0)
    est = kernelsketch.LandmarkSpectralClustering(2, n_landmarks=100, assign_labels="genie", random_state=0).fit(X)
    return save(est, tmp_path_factory.mktemp("genie") / "g.ksm"), X


def _edit_state(path, name, value, where=("root", "state")):
    def edit(meta):
        node = meta
        for key in where:
            node = node[key]
        node[name] = value

    _rewrite(path, edit_meta=edit)


@pytest.mark.parametrize(
    "name,value,match",
    [
        ("_labeling", "bogus", "labeling is 'bogus'"),
        ("_labeling", ["genie"], "labeling is"),
        ("n_clusters_", 3, r"n_clusters_ = 3 is not a count"),
        ("n_clusters_", 1, "labels_ hold 2 clusters"),
        ("landmark_labels_", None, "labels are missing"),
    ],
)
def test_an_edited_labeling_state_is_refused_at_load(genie_model, tmp_path, name, value, match):
    path = tmp_path / "g.ksm"
    path.write_bytes(genie_model[0].read_bytes())
    _edit_state(path, name, value)
    with pytest.raises(ModelFormatError, match=match):
        load(path)


@pytest.mark.parametrize(
    "change,match",
    [
        (lambda a: np.full_like(a, -1), "outside"),
        (lambda a: np.full_like(a, 7), "outside"),
        (lambda a: a.astype(np.float64) + 0.5, "integer labels"),
        (lambda a: a[:-3], "integer labels"),
    ],
    ids=["minus-one", "seven", "fractions", "too-few"],
)
def test_edited_landmark_labels_are_refused_at_load(genie_model, tmp_path, change, match):
    path = tmp_path / "g.ksm"
    path.write_bytes(genie_model[0].read_bytes())
    _tamper(path, "landmark_labels_", change)
    with pytest.raises(ModelFormatError, match=match):
        load(path)
    assert (load(genie_model[0]).predict(genie_model[1]) == load(genie_model[0]).labels_).all()  # the intact file


def test_a_bandwidth_beyond_floats_range_is_refused_at_load(genie_model, tmp_path):
    path = tmp_path / "g.ksm"
    path.write_bytes(genie_model[0].read_bytes())
    _edit_state(path, "bandwidth_", 10**400, where=("root", "state", "embedding_", "state"))
    with pytest.raises(ModelFormatError, match="bandwidth must be a number > 0"):
        load(path)
