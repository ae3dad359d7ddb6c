"""Sinks: where the driver's output blocks go (an array, a file written atomically, a callable)."""

from __future__ import annotations

import os

import numpy as np

from ..io import open_writer


# -- sinks ------------------------------------------------------------------------
class _ArraySink:
    def __init__(self):
        self.parts = []

    def write(self, Z):
        self.parts.append(np.asarray(Z))

    def close(self):
        return np.concatenate(self.parts) if self.parts else None

    def abort(self):
        self.parts = []


class _FileSink:
    """Opens an atomic :class:`~kernelsketch.io.BlockWriter` once the first block gives width and dtype."""

    def __init__(self, path, *, force, protect, column_names=None, column_prefix="c"):
        from ..io import check_output_path, output_format

        output_format(path)  # a bad suffix fails before any work, as an existing file or an input does
        self.path = check_output_path(path, force=force, protect=protect)
        self.force, self.protect = force, protect
        self.column_names, self.prefix = column_names, column_prefix
        self.writer = None

    def write(self, Z):
        Z = np.asarray(Z)
        if self.writer is None:
            width = 1 if Z.ndim == 1 else Z.shape[1]
            names = self.column_names or [f"{self.prefix}{j}" for j in range(width)]
            self.writer = open_writer(
                self.path, width, Z.dtype, force=self.force, protect=self.protect, column_names=names
            )
        self.writer.write(Z)

    def close(self):
        if self.writer is None:
            raise ValueError("nothing to write: the data has no rows")
        return self.writer.close()

    def abort(self):
        if self.writer is not None:
            self.writer.abort()
        else:  # (interrupted while the writer was being opened: its temporary file, if made, goes too)
            from ..io.atomic import remove_own_parts

            remove_own_parts(self.path)


class _CallableSink:
    def __init__(self, fn):
        self.fn = fn

    def write(self, Z):
        self.fn(Z)

    def close(self):
        return None

    def abort(self):
        pass


def _make_sink(output, *, force, protect, column_names=None, column_prefix="c"):
    if output is None:
        return _ArraySink()
    if isinstance(output, (str, os.PathLike)):
        return _FileSink(output, force=force, protect=protect, column_names=column_names, column_prefix=column_prefix)
    if callable(output):
        return _CallableSink(output)
    if all(hasattr(output, a) for a in ("write", "close", "abort")):
        return output
    raise TypeError(
        f"output must be None, a path, a callable or a sink with write/close/abort; got {type(output).__name__}"
    )


def _inputs_of(data):
    """The files (or shard directories) ``data`` reads: outputs may never be one of them or inside them."""
    if isinstance(data, (str, os.PathLike)):
        return [data]
    return list(getattr(data, "input_paths", []))
