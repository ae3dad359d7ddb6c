"""What each dataset is: its files, their sha256, shapes, citation and origin.

One place holds every fact a loader checks, copied from the ``SOURCE.md`` of
each folder in ``shared/datasets`` (sha256 of the ``.gz`` file *as stored*, and
of its uncompressed content) or, for the sets that are not stored there, from
the upstream distribution.  Loaders never hard-code a hash or a shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["DATASETS", "DatasetInfo", "FileSpec", "get_info"]


@dataclass(frozen=True)
class FileSpec:
    """One file of a dataset, relative to the dataset's folder.

    ``sha256`` is the hash of the file exactly as stored (the ``.gz``);
    ``content_sha256`` and ``content_bytes`` describe the uncompressed bytes
    (``None`` where upstream does not publish them).
    """

    name: str
    sha256: str | None
    content_sha256: str | None = None
    content_bytes: int | None = None
    url: str | None = None  # direct download of this exact file, if one exists


@dataclass(frozen=True)
class DatasetInfo:
    """Registry entry of one dataset.

    ``shape`` is the shape of ``X`` returned by ``load_dataset`` (train and
    test concatenated); ``split_sizes`` the row counts of the shipped
    train/test split (``None`` when there is none).  ``parser`` names the
    function of :mod:`kernelsketch.datasets._parsers` that turns the verified
    files into arrays.
    """

    name: str
    files: tuple[FileSpec, ...]
    shape: tuple[int, int]
    task: str
    parser: str
    citation: str
    url: str
    description: str
    split_sizes: tuple[int, int] | None = None
    label_counts: MappingProxyType | None = None
    vendored: bool = False  # a copy ships inside the package (kernelsketch/datasets/data)
    is_directory: bool = False  # a folder of files with no single checksum (N-BaIoT)
    options: tuple[str, ...] = field(default=())  # extra keyword arguments the parser accepts

    @property
    def has_split(self) -> bool:
        return self.split_sizes is not None


_UCI = "https://archive.ics.uci.edu"
_LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html"

_ENTRIES = (
    DatasetInfo(
        name="banknote",
        files=(
            FileSpec(
                "data_banknote_authentication.txt.gz",
                "27efa67ba8d59019bacdafd3ce6249856b8006216b2d1ee063417232381f268d",
                "63cb547740b3d71fc4a7fa05a6f5005ba63e86a64d2dfb11251398611fb7b19c",
                46402,
            ),
        ),
        shape=(1372, 4),
        task="binary classification (0 genuine, 1 forged)",
        parser="parse_banknote",
        citation=(
            "Lohweg, V. & Doerksen, H. (2013). Banknote Authentication [Dataset]. "
            "UCI Machine Learning Repository. https://doi.org/10.24432/C55P57"
        ),
        url=f"{_UCI}/dataset/267/banknote+authentication",
        description="UCI banknote authentication: 4 wavelet features of banknote images.",
        label_counts=MappingProxyType({0: 762, 1: 610}),
        vendored=True,
    ),
    DatasetInfo(
        name="avila",
        files=(
            FileSpec(
                "avila-tr.txt.gz",
                "e2f9cf7db85e26b5acdb55620f3fc5691fd829e5e8580526862cf786e57645a1",
                "493332af20f750a6b0f7b0c581dd2236bb68a8ace52b412aea1c9c82b2076357",
                999319,
            ),
            FileSpec(
                "avila-ts.txt.gz",
                "9fb6a3d47933997f01c81a9a508ac46992accc9b9d2cb431ca996a8936b086e5",
                "0ec227d595dd8d8dc6804a7139c8b6d6e00e21aaea0d9052085057aa98c3e589",
                999942,
            ),
        ),
        shape=(20867, 10),
        task="multiclass classification (12 copyists, letters A..Y)",
        parser="parse_avila",
        citation=(
            'C. De Stefano, M. Maniaci, F. Fontanella, A. Scotto di Freca, "Reliable writer '
            "identification in medieval manuscripts through page layout features: The 'Avila' "
            'Bible case", Engineering Applications of Artificial Intelligence 72 (2018) 99-110.'
        ),
        url=f"{_UCI}/dataset/459/avila",
        description="UCI Avila: 10 Z-normalised page-layout features of the Avila Bible.",
        split_sizes=(10430, 10437),
        label_counts=MappingProxyType(
            {
                "A": 8572,
                "B": 10,
                "C": 206,
                "D": 705,
                "E": 2190,
                "F": 3923,
                "G": 893,
                "H": 1039,
                "I": 1663,
                "W": 89,
                "X": 1044,
                "Y": 533,
            }
        ),
    ),
    DatasetInfo(
        name="cpu",
        files=(
            FileSpec(
                "cpu_act.arff.gz",
                "8492267016babaf07ade08e032237d6c1c913afa636ff72d883e2ce37a31fe49",
                "31c4adcefafaef48d89a285602c5f6df3d9463e176bacdaf9df82c249fb0ed9b",
                1058078,
            ),
        ),
        shape=(8192, 21),
        task="regression (target usr: % time CPUs run in user mode, 0..99)",
        parser="parse_cpu",
        citation=(
            "DELVE comp-activ (Computer Activity) data, task cpu_act, University of Toronto; "
            "as redistributed in L. Torgo's regression data sets (OpenML data id 197)."
        ),
        url="https://www.openml.org/d/197",
        description="DELVE cpu_act: 21 system-activity measures of a Sun Sparcstation.",
    ),
    DatasetInfo(
        name="adult",
        files=(
            FileSpec(
                "a9a.libsvm.gz",
                "b301f3e87350539f3ebc751d07b4691a8c66f0bf38c1d179c86bbf5e2d9623b2",
                "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906",
                2329875,
            ),
            FileSpec(
                "a9a.t.libsvm.gz",
                "084f5209988e3798f0ef8fd668bc7ca624b8d47df904ed825069187aeffbba30",
                "1f7bae8e9729ad2bf9d18f66e5fa622e503e615114f92c37b274dfd24f2e5725",
                1164633,
            ),
        ),
        shape=(48842, 123),
        task="binary classification (-1: income <=50K, +1: >50K)",
        parser="parse_adult",
        citation=(
            "C.-C. Chang and C.-J. Lin, LIBSVM: a library for support vector machines, ACM TIST 2(3), "
            "2011 (LIBSVM data sets, a9a); UCI Adult (Becker & Kohavi, 1996), preprocessed as in "
            "J. Platt (1998), Fast training of support vector machines using sequential minimal optimization."
        ),
        url=f"{_LIBSVM}#a9a",
        description="LIBSVM a9a: UCI Adult binarised into 123 sparse binary features.",
        split_sizes=(32561, 16281),
        label_counts=MappingProxyType({-1: 37155, 1: 11687}),
    ),
    DatasetInfo(
        name="diabetes",
        files=(
            FileSpec(
                "diabetes.libsvm.gz",
                "78d45e4bf24a5bc89449caa660f19024ea5e3ec85a9551b64eec4d7f8aac8c96",
                "10d47c73b59dc75e55d91e4969f9c21627a3aacb9cc6059ce85de77f8a58b57a",
                75503,
            ),
        ),
        shape=(768, 8),
        task="binary classification (-1: tested positive, +1: negative)",
        parser="parse_diabetes",
        citation=(
            "C.-C. Chang and C.-J. Lin, LIBSVM data sets (diabetes); J. W. Smith et al. (1988), "
            "Using the ADAP learning algorithm to forecast the onset of diabetes mellitus."
        ),
        url=f"{_LIBSVM}#diabetes",
        description="LIBSVM diabetes (Pima Indians), unscaled, rows in shuffled order.",
        label_counts=MappingProxyType({-1: 268, 1: 500}),
    ),
    DatasetInfo(
        name="mnist",
        files=(
            FileSpec(
                "train-images-idx3-ubyte.gz",
                "0b367032e93c5d0cea0925647cfdb18614af8ee15f83e6f2fc2ad904a6835971",
                "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
                47040016,
            ),
            FileSpec(
                "train-labels-idx1-ubyte.gz",
                "1787548bbe0bff1ec2ecdc0ef292b02df999e2d1a6002d27500982c652b17203",
                "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
                60008,
            ),
            FileSpec(
                "t10k-images-idx3-ubyte.gz",
                "1a1a05eab793c14bb050b398624a11b0ffd1a2953baed553b1b9bd079e2a20be",
                "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
                7840016,
            ),
            FileSpec(
                "t10k-labels-idx1-ubyte.gz",
                "b91679a0acfe4ba0e50a2437a903084cba1f5f92592b016a25a7dfd00455798b",
                "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
                10008,
            ),
        ),
        shape=(70000, 784),
        task="multiclass classification (digits 0..9)",
        parser="parse_mnist",
        citation=(
            "Y. LeCun, L. Bottou, Y. Bengio, P. Haffner, Gradient-based learning applied to document "
            "recognition, Proceedings of the IEEE 86(11) (1998) 2278-2324."
        ),
        url="http://yann.lecun.com/exdb/mnist/",
        description="MNIST handwritten digits, 28x28 grey-level pixels (0..255) flattened to 784.",
        split_sizes=(60000, 10000),
        label_counts=MappingProxyType(
            {
                0: 6903,
                1: 7877,
                2: 6990,
                3: 7141,
                4: 6824,
                5: 6313,
                6: 6876,
                7: 7293,
                8: 6825,
                9: 6958,
            }
        ),
    ),
    DatasetInfo(
        name="forest",
        files=(
            FileSpec(
                "covtype.data.gz",
                "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771",
                url=f"{_UCI}/ml/machine-learning-databases/covtype/covtype.data.gz",
            ),
        ),
        shape=(581012, 54),
        task="multiclass classification (7 forest cover types, labels 1..7)",
        parser="parse_forest",
        citation=(
            "J. A. Blackard and D. J. Dean, Comparative accuracies of artificial neural networks and "
            "discriminant analysis in predicting forest cover types from cartographic variables, "
            "Computers and Electronics in Agriculture 24(3) (1999) 131-151. UCI Covertype, "
            "https://doi.org/10.24432/C50K5N"
        ),
        url=f"{_UCI}/ml/machine-learning-databases/covtype/covtype.data.gz",
        description="UCI Covertype: 10 cartographic + 44 binary wilderness/soil columns, 30x30 m cells.",
    ),
    DatasetInfo(
        name="iot",
        files=(),
        shape=(7062606, 115),
        task="multiclass classification (9 IoT devices, or benign/attack traffic type)",
        parser="parse_iot",
        citation=(
            "Y. Meidan, M. Bohadana, Y. Mathov, Y. Mirsky, D. Breitenbacher, A. Shabtai, Y. Elovici, "
            "N-BaIoT: Network-based detection of IoT botnet attacks using deep autoencoders, "
            "IEEE Pervasive Computing 17(3) (2018) 12-22. UCI, https://doi.org/10.24432/C5RC8J"
        ),
        url=f"{_UCI}/dataset/442/detection+of+iot+botnet+attacks+n+baiot",
        description=(
            "UCI N-BaIoT: 115 traffic statistics per packet window, one folder per device "
            "(benign_traffic.csv, gafgyt_attacks/*.csv, mirai_attacks/*.csv)."
        ),
        is_directory=True,
        options=("target", "devices", "max_rows_per_file"),
    ),
)

#: name -> :class:`DatasetInfo` of every dataset ``load_dataset`` knows (read-only).
DATASETS = MappingProxyType({info.name: info for info in _ENTRIES})


def get_info(name) -> DatasetInfo:
    """Registry entry of ``name``; ValueError listing the known names otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    try:
        return DATASETS[name.lower()]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {', '.join(sorted(DATASETS))}") from None
