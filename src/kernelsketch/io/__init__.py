"""Reading and writing data files in row blocks, with atomic outputs.

Readers (:func:`open_matrix`) turn CSV/TSV, ``.npy`` (memory-mapped),
Parquet and libsvm files into a stream of row blocks under the working-memory
budget and name the file, line/row and column of any bad cell.  Writers
(:func:`open_writer`) write ``.npy``, CSV/TSV and Parquet block by block into
a temporary file that replaces the target only once complete.
"""

from .atomic import AtomicPath, OutputExistsError, SameFileError, check_output_path
from .readers import INPUT_FORMATS, guess_format, open_matrix, read_matrix
from .reservoir import RowReservoir
from .source import MatrixSource, coerce_labels
from .writers import OUTPUT_FORMATS, BlockWriter, open_writer, output_format, write_matrix

__all__ = [
    "INPUT_FORMATS",
    "OUTPUT_FORMATS",
    "AtomicPath",
    "BlockWriter",
    "MatrixSource",
    "OutputExistsError",
    "RowReservoir",
    "SameFileError",
    "check_output_path",
    "coerce_labels",
    "guess_format",
    "open_matrix",
    "open_writer",
    "output_format",
    "read_matrix",
    "write_matrix",
]
