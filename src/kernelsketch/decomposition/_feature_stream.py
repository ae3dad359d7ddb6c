"""``fit`` / ``partial_fit`` shared by the streaming random-feature estimators (RNCA, StreamingKPCA)."""

from __future__ import annotations

from sklearn.base import _fit_context

from ..kernels.selection import make_kernel
from ..utils.validation import check_input, derive_seed


class RandomFeatureStreamMixin:
    """Streams of row blocks through a random-feature map drawn once.

    Subclasses define ``_start(X, kernel=None)`` (draw the features, reset the
    statistics), ``_accumulate(X)`` (add a block), ``_stream_attr`` (the
    attribute that exists once a stream has started) and may override
    ``_finish_fit``.  ``fit`` resolves a heuristic bandwidth on all of X;
    ``partial_fit`` on the first block only (documented on each estimator).
    """

    _stream_attr = None

    def _finish_fit(self):
        """Work done at the end of ``fit`` (e.g. an eigendecomposition)."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Reset, then add every row of X block by block. Returns self."""
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=True)
        seed = derive_seed(self.random_state)
        # the heuristic bandwidth sees all of X, not just the first block
        self._start(X, kernel=make_kernel(self.kernel, self.bandwidth, None, X, random_state=seed))
        self._accumulate(X)
        self._finish_fit()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Add a block of rows; the first call draws the random features. Returns self."""
        first = not hasattr(self, self._stream_attr)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=first)
        if first:
            self._start(X)
        self._accumulate(X)
        return self
