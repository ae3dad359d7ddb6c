"""CSV / TSV / whitespace-delimited text, read in row blocks with precise errors.

Each block of lines goes through numpy's C parser (``np.loadtxt``); only when
it fails is the block re-read cell by cell in Python to name the exact line
and column of the problem, so the common case costs one C pass and the error
case still gives a message a user can act on.  Memory is one block of lines
at a time, whatever the file size.
"""

from __future__ import annotations

import gzip
import itertools
import os
import re
from pathlib import Path

import numpy as np

from .source import MatrixSource, check_finite_block, default_block_rows, resolve_columns

__all__ = ["DelimitedSource", "write_delimited_block"]

_CANDIDATES = (",", "\t", ";", "|")
_NAMES = {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe", None: "whitespace", " ": "space"}


def _open_text(path):
    # utf-8-sig: a byte-order mark (Excel, Notepad) is not part of the first cell
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", newline="", encoding="utf-8-sig")
    return open(path, newline="", encoding="utf-8-sig")


#: read with pyarrow's streaming CSV reader when it is installed (the ``parquet`` extra); False: numpy's parser
USE_PYARROW = True

#: longest line (characters) and most columns a text file may have: a longer line is refused
#: with a clear error instead of being read whole (a 1 GiB line in a small .gz exhausted memory)
MAX_LINE_CHARS = 16 * 2**20
MAX_COLUMNS = 1_000_000


def _lines(f, path):
    """``(line number, line)`` of a text file, each line at most :data:`MAX_LINE_CHARS` characters."""
    lineno = 0
    while True:
        line = f.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        lineno += 1
        if len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
            raise ValueError(
                f"{path}: line {lineno} is longer than {MAX_LINE_CHARS} characters (is it a "
                "delimited text file with one row per line?)"
            )
        yield lineno, line


#: lines read to decide whether the first one is a header
_HEADER_LINES = 20

#: cells that mean "missing", never a column name: a first row holding one is data
_MISSING = {"", "na", "n/a", "nan", "null", "none", "?", "-", "#n/a", "missing"}

#: cells read as a missing value (NaN) by default, in any letter case: ``na_values`` of :class:`DelimitedSource`
NA_VALUES = ("", "NA", "NaN", "N/A", "?", "null", "None", "#N/A", "missing")

#: a text file whose parsed rows take at most this many bytes is parsed once: its first whole pass keeps them and
#: every later pass (the fit's, the samples', the assignment's) reads them from memory instead of the file
PARSED_CACHE_BYTES = 64 * 2**20

#: data lines read to tell a column of text (left out) or of row numbers (named in a warning) from one of numbers
_KIND_LINES = 200


class ColumnWarning(UserWarning):
    """Columns of a file are left out (text) or look like row numbers, said before anything is computed."""


def _na_set(na_values):
    """The lower-cased missing-value markers (``na_values`` None: :data:`NA_VALUES`)."""
    return frozenset(str(v).strip().lower() for v in (NA_VALUES if na_values is None else na_values))


def _is_name(s: str) -> bool:
    """A cell that can only be a column name: not a number and not a missing-value marker."""
    return not _is_number(s) and s.lower() not in _MISSING


def _is_pandas_header(fields, second) -> bool:
    """The header pandas writes for an unnamed frame: ``0,1,...`` or, with the index, ``,0,1,...``.

    Certain with the index (an empty first cell is never data in a file of numbers).  Without
    it, ``0,1,...,n-1`` is a header only when the line below holds a number that is not a
    whole number (pandas writes a float frame's values as ``1.0``, ``0.25``); above whole
    numbers it is as likely to be data (:func:`_ambiguous_first_line` then refuses to guess).
    """
    names = fields[1:] if fields and fields[0] == "" else fields
    if not names or names != [str(j) for j in range(len(names))]:
        return False
    if fields[0] == "":
        return True
    return second is not None and any(_is_number(c) and not _is_int_token(c) for c in second)


def _is_int_token(s: str) -> bool:
    """A cell written as a whole number (``7``, ``-3``), not ``7.0`` or ``7e0``."""
    t = s.lstrip("+-")
    return t.isdigit()


def _ambiguous_first_line(fields, rest):
    """Why the first line, read as data by the rules above, may be a header of numbers; None if it cannot be.

    Whole numbers where every line below (of those read) writes a fraction in the same column
    (wavelengths ``400,410,...`` over measurements), the ``0,1,...,n-1`` of pandas over whole
    numbers, or numbers stepping evenly (years ``1990,2000,2010``, bins ``0.5,1.5,2.5``) over lines that
    do not: such a line is a header as often as data, and a guess loses a row or invents one.
    """
    if not rest:
        return None
    numeric = [j for j, c in enumerate(fields) if _is_number(c)]
    if len(numeric) == len(fields) and _even_steps(fields) and not any(_even_steps(r) for r in rest):
        return (
            f"its values step evenly ({', '.join(fields[:3])}, ...) like column labels (years, wavelengths, "
            "bins), and no line below does"
        )
    if not numeric or not all(_is_int_token(fields[j]) for j in numeric):
        return None
    if fields == [str(j) for j in range(len(fields))]:
        if len(fields) > 1 and rest[0] == [str(j + 1) for j in range(len(fields))]:
            return None  # a ramp 0, 1, ... continued by 1, 2, ...: data
        return "it is 0, 1, ..., n-1 (the header pandas writes) over rows of whole numbers"
    for j in numeric:
        column = [r[j] for r in rest if j < len(r)]
        if column and all(_is_number(c) and not _is_int_token(c) for c in column):
            return (
                f"its column {j} holds the whole number {fields[j]} where every line below holds a fraction "
                "(numbers as column names?)"
            )
    return None


def _even_steps(cells) -> bool:
    """At least 3 numbers increasing by one step (to rounding): ``1990,2000,2010``, ``0.5,1.5,2.5``."""
    if len(cells) < 3 or not all(_is_number(c) for c in cells):
        return False
    v = [float(c) for c in cells]
    steps = [b - a for a, b in itertools.pairwise(v)]
    return steps[0] > 0 and all(abs(d - steps[0]) <= 1e-9 * max(1.0, abs(steps[0])) for d in steps)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _split(line: str, delimiter):
    fields = line.rstrip("\r\n").split(delimiter) if delimiter is not None else line.split()
    return [f.strip().strip('"').strip() for f in fields]


def _is_blank(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith("#")


def _suffix(path: Path) -> str:
    name = path.name.lower()
    return name[:-3].rsplit(".", 1)[-1] if name.endswith(".gz") else path.suffix.lower().lstrip(".")


class DelimitedSource(MatrixSource):
    """Delimited text read as dense row blocks.

    Parameters
    ----------
    path : path-like
        ``.csv``, ``.tsv``, ``.txt`` (optionally gzipped).
    delimiter : str or None
        ``","`` for ``.csv``, tab for ``.tsv``; for other suffixes the first
        line decides (comma, tab, semicolon, pipe, else whitespace).
    header : bool or None
        None: the first line is a header when one of its cells is not a
        number where the second line has one (a text label column does not
        make a header), or when it is the header pandas writes for an
        unnamed frame (``0,1,2,...``, or ``,0,1,2,...`` with the index).
        True / False: the first line is / is not a header.  A header whose
        first cell is empty marks the index column pandas writes
        (``df.to_csv()``): that column is not a feature unless ``columns``
        names it.
    columns, label_column : list of (str or int), str or int, optional
        Feature columns and the label column, by header name or 0-based index.
    dtype : numpy dtype, default float64
    na_values : sequence of str or None, default=()
        Cells read as missing values (NaN), in any letter case; None: :data:`NA_VALUES` (empty, ``NA``,
        ``NaN``, ``N/A``, ``?``, ``null``, ...); ``()``: none, every cell must be a number.  What happens to
        them is the caller's (``cluster_file(missing=...)``); ``missing_counts`` holds each feature column's
        count after a pass over the whole file.

    Attributes
    ----------
    text_columns : list
        Columns left out because most cells of their first lines (missing cells aside) are words
        (names, or 0-based indices without a header); only when ``columns`` is None.  A word among numbers is an
        error at its line, not a reason to leave the column out.  ``id_columns``: feature columns whose first
        lines count up by one (row numbers?), kept.
    """

    format = "csv"

    def __init__(
        self,
        path,
        *,
        delimiter=None,
        header=None,
        columns=None,
        label_column=None,
        dtype=np.float64,
        na_values=(),
    ):
        self.path = Path(os.fspath(path))
        self.dtype = np.dtype(dtype)
        self.na_values = _na_set(na_values)
        self.missing_counts = None
        self._parsed = None  # (the parsed rows of a small file, kept by its first whole pass)
        first = self._first_lines(max(_HEADER_LINES, _KIND_LINES + 1))
        sample_lines = first
        first = first[:_HEADER_LINES]
        if not first:
            raise ValueError(f"{self.path}: the file is empty (no data rows)")
        (lineno, line) = first[0]
        self.delimiter = self._choose_delimiter(line, delimiter)
        fields = _split(line, self.delimiter)
        second = _split(first[1][1], self.delimiter) if len(first) > 1 else None
        if header is not None and not isinstance(header, (bool, np.bool_)):
            raise TypeError(f"header must be True, False or None (auto-detect), got {header!r}")
        if header is None and _is_pandas_header(fields, second):
            header = True
        if header is None:
            if second is not None:
                header = any(_is_name(a) and j < len(second) and _is_number(second[j]) for j, a in enumerate(fields))
                # A single line, or a second line of text too: any text cell makes a header.
                header = header or (all(_is_name(a) for a in fields) and not any(map(_is_number, second)))
            else:
                header = any(_is_name(a) for a in fields)
            rest = [_split(t, self.delimiter) for _, t in first[1:]]
            why = None if header else _ambiguous_first_line(fields, rest)
            if why is not None:
                raise ValueError(
                    f"{self.path}: cannot tell whether the first line ({line.strip()[:60]!r}) is a header or data: "
                    f"{why}; say which with --header or --no-header (header=True / header=False)"
                )
        self.header = bool(header)
        self.n_columns = len(fields)
        if self.n_columns > MAX_COLUMNS:
            raise ValueError(f"{self.path}: line {lineno} has {self.n_columns} columns, more than {MAX_COLUMNS}")
        self._check_delimiter(line, lineno)
        self.feature_names_all = fields if self.header else None
        self.data_start = lineno + 1 if self.header else lineno
        self.features, self.label = resolve_columns(
            self.path, self.feature_names_all, self.n_columns, columns, label_column
        )
        #: pandas' index column (an unnamed first column): row numbers, not a feature
        self.index_column = 0 if self.header and fields[0] == "" and self.n_columns > 1 else None
        if self.index_column is not None and columns is None:
            self.features = [j for j in self.features if j != self.index_column]
            if not self.features:
                raise ValueError(f"{self.path}: no feature column left besides the index column")
        self.text_columns, self.id_columns = [], []
        self._sort_columns(sample_lines, explicit=columns is not None)
        self.n_features = len(self.features)
        self.feature_names = [self.feature_names_all[j] for j in self.features] if self.header else None
        self.has_labels = self.label is not None
        self._all_columns = self.label is None and self.features == list(range(self.n_columns))
        self._warn_columns()

    def _warn_columns(self):
        from ..utils.warnings import warn

        if self.text_columns:
            shown = ", ".join(f"{c!r} (e.g. {self._text_examples[c]!r})" for c in self.text_columns[:8])
            more = f" and {len(self.text_columns) - 8} more" if len(self.text_columns) > 8 else ""
            warn(
                f"{self.path.name}: columns of text left out: {shown}{more}; --columns / columns= selects columns "
                "exactly",
                ColumnWarning,
            )
        if self.id_columns:
            warn(
                f"{self.path.name}: column(s) {', '.join(map(repr, self.id_columns))} count up by one from row to "
                "row, like row numbers or ids: clustered as a feature; leave them out with --columns / columns=",
                ColumnWarning,
            )

    # -- set-up ------------------------------------------------------------
    def _column_name(self, j):
        return self.feature_names_all[j] if self.header else j

    def _sort_columns(self, lines, explicit):
        """Leave out the feature columns whose first data lines hold text (unless ``columns`` named them), and
        note those that count up by one from line to line (row numbers kept as a feature?)."""
        rows = [_split(t, self.delimiter) for n, t in lines if n >= self.data_start]
        rows = [r for r in rows if len(r) == self.n_columns]
        if not rows:
            return
        text, ids = [], []
        markers = _na_set(None) | self.na_values  # (a missing cell does not make a column text, read or refused)

        def is_text(c):  # (a decimal comma is a number written in another locale: refused with its hint)
            return not _is_number(c) and c.lower() not in markers and not _DECIMAL_COMMA.match(c)

        for j in self.features:
            cells = [r[j] for r in rows]
            present = [c for c in cells if c.lower() not in markers]
            words = [c for c in present if is_text(c)]
            # text: most present cells are words (a stray word among numbers is a typo, refused with its line)
            if not explicit and words and 2 * len(words) > len(present):
                text.append((j, words[0]))
            elif len(cells) >= 10 and all(_is_int_token(c) for c in cells):
                v = np.array([int(c) for c in cells])
                if np.all(np.diff(v) == 1):
                    ids.append(j)
        if text:
            self.features = [j for j in self.features if j not in {j for j, _ in text}]
            if not self.features:
                raise ValueError(
                    f"{self.path}: every feature column holds text (e.g. {self._column_name(text[0][0])!r}: "
                    f"{text[0][1]!r}); name the numeric ones with --columns / columns="
                )
        self.text_columns = [self._column_name(j) for j, _ in text]
        self.id_columns = [self._column_name(j) for j in ids]
        self._text_examples = {self._column_name(j): c for j, c in text}

    def _first_lines(self, k):
        out = []
        try:
            with _open_text(self.path) as f:
                for lineno, line in _lines(f, self.path):
                    if not _is_blank(line):
                        out.append((lineno, line))
                        if len(out) == k:
                            break
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise ValueError(f"{self.path}: cannot be read as text ({exc})") from exc
        return out

    def _choose_delimiter(self, line, delimiter):
        if delimiter is not None:
            return None if delimiter in ("whitespace", " ", "") else delimiter.replace("\\t", "\t")
        suffix = _suffix(self.path)
        if suffix == "csv":
            return ","
        if suffix in ("tsv", "tab"):
            return "\t"
        counts = {d: line.count(d) for d in _CANDIDATES}
        best = max(counts, key=counts.get)
        return best if counts[best] > 0 else None

    def _check_delimiter(self, line, lineno):
        if self.n_columns != 1:
            return
        found = [d for d in (*_CANDIDATES, " ") if d != self.delimiter and d in line.strip()]
        if found:
            d = found[0]
            raise ValueError(
                f"{self.path}: line {lineno} splits into a single column with the {_NAMES[self.delimiter]} "
                f"delimiter but contains {_NAMES.get(d, repr(d))}s: wrong delimiter? "
                f"(pass --delimiter {d!r} / delimiter={d!r})"
            )

    # -- reading -----------------------------------------------------------
    def iter_blocks(self, block_rows=None):
        """Row blocks ``(X, y)``: pyarrow's streaming CSV reader when it is installed, else numpy's parser.

        The pyarrow route reads the same rows into the same values (each cell's
        correctly rounded float); from the first batch it cannot take as it is
        (a comment line, a missing or non-finite cell, a ragged row, a cell it
        does not parse) the rest of the file is read by the numpy route, which
        names the exact line and column of any problem.
        """
        if self._parsed is not None:  # (a small file parsed once: its later passes read memory, not the file)
            X, y = self._parsed
            step = block_rows or default_block_rows(self.n_columns)
            for start in range(0, X.shape[0], step):
                yield X[start : start + step], (None if y is None else y[start : start + step])
            return
        counts = np.zeros(self.n_features, dtype=np.int64)
        kept, size = [], 0
        for X, y in self._iter_blocks(block_rows):
            if self.na_values and X.dtype.kind == "f":
                counts += np.isnan(X).sum(axis=0)
            if kept is not None:
                size += X.nbytes + (0 if y is None else np.asarray(y).nbytes)
                if size <= PARSED_CACHE_BYTES:
                    kept.append((X, y))
                else:  # (too large to keep: every pass reads the file)
                    kept = None
            yield X, y
        self.missing_counts = counts  # (a whole pass: every row's missing cells)
        if kept:
            X = np.concatenate([b[0] for b in kept])
            y = None if kept[0][1] is None else np.concatenate([np.asarray(b[1]) for b in kept])
            self._parsed = (X, y)

    @property
    def random_access(self):
        """A small file once parsed (its rows in memory); else :meth:`take` is a pass."""
        return self._parsed is not None

    def take(self, indices):
        """Rows at sorted distinct ``indices``: from memory once a pass has parsed a small file, else one pass."""
        if self._parsed is None:
            return super().take(indices)
        indices = np.asarray(indices, dtype=np.int64)
        X, y = self._parsed
        if indices.size and (indices[0] < 0 or indices[-1] >= X.shape[0]):
            raise ValueError(f"{self.path}: row index {int(indices[-1])} is out of range ({X.shape[0]} rows)")
        return X[indices], (None if y is None else y[indices])

    def _iter_blocks(self, block_rows=None):
        done = 0
        self._arrow_complete = False
        # (only when the data start on line 1, or 2 under a header: pyarrow counts skipped rows its own way)
        simple = self.data_start == (2 if self.header else 1)
        if USE_PYARROW and simple and self.delimiter is not None and len(self.delimiter) == 1:
            rows = block_rows or default_block_rows(self.n_columns)
            for X, y in _rechunk(self._iter_pyarrow(rows), rows):
                done += X.shape[0]
                yield X, y
            if self._arrow_complete:
                if done == 0:
                    raise ValueError(f"{self.path}: no data rows" + (" (only a header)" if self.header else ""))
                self.n_rows = done
                return
        yield from self._iter_text(block_rows, skip=done)

    def _iter_pyarrow(self, block_rows):
        """Batches of ``pyarrow.csv.open_csv``; ``_arrow_complete`` is set when it read the whole file."""
        try:
            import pyarrow as pa
            import pyarrow.csv as pacsv
        except ImportError:
            return
        names = [f"c{j}" for j in range(self.n_columns)]
        features = [names[j] for j in self.features]
        label = None if self.label is None else names[self.label]
        rows = block_rows
        read = pacsv.ReadOptions(
            skip_rows=self.data_start - 1,
            column_names=names,
            block_size=int(min(max(rows * self.n_columns * 24, 1 << 16), 1 << 26)),
        )
        parse = pacsv.ParseOptions(delimiter=self.delimiter, quote_char='"')
        types = {c: pa.float64() for c in features}
        if label is not None:
            types[label] = pa.string()
        markers = sorted({v for m in self.na_values for v in (m, m.upper(), m.title(), m.capitalize())})
        if "n/a" in self.na_values:
            markers.append("N/a")
        convert = pacsv.ConvertOptions(
            column_types=types,
            include_columns=features + ([label] if label is not None else []),
            null_values=markers,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        )
        try:
            # a native Arrow stream, not a Python file object: Arrow's read-ahead thread then never calls back
            # into Python, which could abort the interpreter at exit after a stream given up mid-file
            # (apache/arrow#34314)
            compression = "gzip" if str(self.path).endswith(".gz") else None
            with pa.input_stream(str(self.path), compression=compression) as src:
                stream = pacsv.open_csv(src, read_options=read, parse_options=parse, convert_options=convert)
                for batch in stream:
                    if batch.num_rows == 0:
                        continue
                    X = np.empty((batch.num_rows, len(features)), dtype=self.dtype)
                    for j, c in enumerate(features):
                        X[:, j] = batch.column(c).to_numpy(zero_copy_only=False)
                    if np.isinf(X).any() or (not self.na_values and np.isnan(X).any()):
                        return  # inf (or NaN where no cell may be missing): the text route names the first one
                    y = None
                    if label is not None:
                        y = np.asarray(batch.column(label).to_numpy(zero_copy_only=False), dtype=str)
                    yield X, y
            self._arrow_complete = True
        except (pa.ArrowException, OSError, EOFError, UnicodeDecodeError, ValueError):
            return  # anything pyarrow cannot take as it is: the text route from here

    def _iter_text(self, block_rows, skip=0):
        """numpy's parser on blocks of lines; the first ``skip`` data rows (read already) are passed over."""
        block_rows = block_rows or default_block_rows(self.n_columns)
        n_rows = skip
        with _open_text(self.path) as f:
            lines = _lines(f, self.path)
            # skip to the first data line, then past the data rows read already
            passed = 0
            for lineno, line in lines:
                if lineno < self.data_start:
                    continue
                if passed < skip:
                    passed += not _is_blank(line)
                    continue
                lines = itertools.chain([(lineno, line)], lines)
                break
            else:
                lines = iter(())
            while True:
                try:
                    chunk = list(itertools.islice(lines, block_rows))
                except (OSError, EOFError, UnicodeDecodeError) as exc:
                    raise ValueError(
                        f"{self.path}: truncated or corrupt after line {self.data_start + n_rows} ({exc})"
                    ) from exc
                if not chunk:
                    break
                start = chunk[0][0]
                text = [line for _, line in chunk]
                X, y = self._parse(text, start)
                n_rows += X.shape[0]
                if X.shape[0]:
                    yield X, y
        if n_rows == 0:
            raise ValueError(f"{self.path}: no data rows" + (" (only a header)" if self.header else ""))
        self.n_rows = n_rows

    def _parse(self, text, start):
        try:
            if self._all_columns:
                X = np.loadtxt(text, delimiter=self.delimiter, dtype=self.dtype, ndmin=2, comments="#", quotechar='"')
            else:
                X = np.loadtxt(
                    text,
                    delimiter=self.delimiter,
                    dtype=self.dtype,
                    ndmin=2,
                    comments="#",
                    quotechar='"',
                    usecols=self.features,
                )
            y = None
            if self.label is not None:
                y = np.loadtxt(
                    text,
                    delimiter=self.delimiter,
                    dtype=str,
                    ndmin=1,
                    comments="#",
                    quotechar='"',
                    usecols=[self.label],
                )
        except ValueError as exc:
            if self.na_values:  # (missing-value markers: read cell by cell, each marker as NaN)
                return self._parse_cells(text, start)
            self._diagnose(text, start)
            raise ValueError(f"{self.path}: lines {start}-{start + len(text) - 1}: {exc}") from exc
        if X.shape[0] and X.shape[1] != self.n_features:
            self._diagnose(text, start)
        if not self._all_columns:
            # usecols silently ignores extra cells: check every row has n_columns cells.
            sep = self.delimiter
            counts = np.fromiter(
                (ln.count(sep) + 1 if sep is not None else len(ln.split()) for ln in text if not _is_blank(ln)),
                dtype=np.int64,
            )
            if np.any(counts != self.n_columns):
                self._diagnose(text, start)
        self._check_finite(X, text, start)
        return X, y

    def _check_finite(self, X, text, start):
        """The first NaN or inf cell named by its line and column (NaN is a missing value where ``na_values``)."""
        rows = self._lineno_of(text, start)
        names = self.feature_names_all
        check_finite_block(self.path, X, rows, names, self.features, row_label="line", allow_nan=bool(self.na_values))

    def _parse_cells(self, text, start):
        """A block read cell by cell, each missing-value marker as NaN (numpy's parser refused a cell): the
        precise error for any other cell that is not a number."""
        rows, labels = [], []
        for line in text:
            if _is_blank(line):
                continue
            fields = _split(line, self.delimiter)
            if len(fields) != self.n_columns or any(
                not _is_number(fields[j]) and fields[j].lower() not in self.na_values for j in self.features
            ):
                self._diagnose(text, start)
            rows.append([np.nan if fields[j].lower() in self.na_values else float(fields[j]) for j in self.features])
            if self.label is not None:
                labels.append(fields[self.label])
        X = np.array(rows, dtype=self.dtype).reshape(len(rows), self.n_features)
        y = np.array(labels, dtype=str) if self.label is not None else None
        self._check_finite(X, text, start)
        return X, y

    @staticmethod
    def _lineno_of(text, start):
        """Function: data row i of the block -> its line number (blank/comment lines skipped)."""

        def row_of(i):
            data = (start + k for k, ln in enumerate(text) if not _is_blank(ln))
            return next(itertools.islice(data, i, None), start + len(text))

        return row_of

    def _diagnose(self, text, start):
        """Re-read a failing block cell by cell and raise the precise error."""
        names = self.feature_names_all
        for k, line in enumerate(text):
            if _is_blank(line):
                continue
            lineno = start + k
            fields = _split(line, self.delimiter)
            if len(fields) != self.n_columns:
                hint = " (truncated file?)" if k == len(text) - 1 and len(fields) < self.n_columns else ""
                if '"' in line or "'" in line:
                    hint = (
                        "; quoted fields are not read as one cell (a quoted delimiter splits it): remove the quotes "
                        "and the delimiters inside them, or save the data with another delimiter"
                    )
                # the first data line has nothing before it but the header, which set the count
                like = f"line {self.data_start}" if lineno != self.data_start else f"the header (line {lineno - 1})"
                raise ValueError(
                    f"{self.path}: line {lineno} has {len(fields)} field(s), "
                    f"expected {self.n_columns} like {like}{hint}"
                )
            for j in self.features:
                if not _is_number(fields[j]) and fields[j].lower() not in self.na_values:
                    name = f" ({names[j]!r})" if names is not None else ""
                    what = "an empty cell" if fields[j] == "" else f"non-numeric value {fields[j]!r}"
                    if _DECIMAL_COMMA.match(fields[j].strip()):
                        what += (
                            " (a decimal comma? numbers are read with a decimal point: convert the file's "
                            "decimal commas to points, keeping the field delimiter another character)"
                        )
                    elif fields[j] == "" or fields[j].lower() in _na_set(None):
                        what += (
                            " (a missing value: cluster --missing impute / missing='impute' reads it as its "
                            "column's median)"
                        )
                    elif names is not None:
                        what += (
                            " (a word among numbers: columns whose first lines hold mostly words are left out; "
                            "fix the cell, or select columns with --columns / columns=)"
                        )
                    raise ValueError(f"{self.path}: line {lineno}, column {j + 1}{name}: {what}")


#: a number written with a decimal comma (``-2,6768``, ``1,5e3``)
_DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+([eE][+-]?\d+)?$")


def _rechunk(blocks, rows):
    """``(X, y)`` blocks of any sizes as blocks of exactly ``rows`` rows (the last one shorter)."""
    xs, ys, held = [], [], 0

    def cut(n):
        nonlocal xs, ys, held
        X = xs[0] if len(xs) == 1 else np.concatenate(xs)
        y = None if ys[0] is None else (ys[0] if len(ys) == 1 else np.concatenate(ys))
        out = (X[:n], None if y is None else y[:n])
        xs, ys, held = ([X[n:]], [None if y is None else y[n:]], X.shape[0] - n) if n < X.shape[0] else ([], [], 0)
        return out

    for X, y in blocks:
        xs.append(X)
        ys.append(y)
        held += X.shape[0]
        while held >= rows:
            yield cut(rows)
    if held:
        yield cut(held)


def write_delimited_block(f, X, delimiter=","):
    """Append rows of X to an open text file (float32: 9 significant digits, float64: 17)."""
    X = np.asarray(X)
    if X.ndim == 1:
        X = X[:, None]
    if X.dtype.kind in "iub":
        fmt = "%d"
    elif X.dtype.kind in "US":
        fmt = "%s"
    else:
        fmt = "%.9g" if X.dtype == np.float32 else "%.17g"
    np.savetxt(f, X, fmt=fmt, delimiter=delimiter)
