"""Kernel blocks and maps on any array-API namespace (PyTorch, CuPy, array-api-strict): the device path.

scikit-learn's convention: with ``sklearn.set_config(array_api_dispatch=True)`` (and
``SCIPY_ARRAY_API=1`` in the environment), an estimator given a non-NumPy array
computes in that array's namespace, on its device, and returns an array of the same
namespace, device and dtype.  NumPy input never comes here: it takes the tiled,
threaded CPU route of :mod:`.tiled_gemm` unchanged.

What runs here, chunk by chunk under ``working_memory``, capped at half the device's
free memory when the library reports it (:func:`free_device_bytes`):

- every built-in kernel's block ``K(X, Y)`` (:func:`pairwise_kernel_xp`), in the
  namespace's own GEMM + elementwise functions; the Gaussian's squared distances are
  taken about ``Y``'s mean (less cancellation, as on the host);
- the landmark map ``K(X, L) @ P + offset`` (:func:`landmark_map_xp`) and the random
  Fourier map ``scale * cos(X W + b)`` (:func:`rff_map_xp`): the transforms of
  ``Nystroem``, ``KernelJL``, ``SubsampleKPCA`` and ``RandomFourierFeatures``.

Fits are small (a landmark Gram, a bandwidth from a sample) and run on the host: the
estimators convert their input to NumPy, fit, and keep NumPy attributes; ``transform``
sends them to the input's device with each call (they are small next to the data).
"""

from __future__ import annotations

import numpy as np

from .._config import get_config
from ..utils.array_api import array_namespace, to_numpy  # noqa: F401 (re-exported for the device path)
from ..utils.chunking import gen_row_slices, get_chunk_n_rows

__all__ = ["landmark_map_xp", "linear_project_xp", "pairwise_kernel_xp", "rff_map_xp", "rff_project_xp", "to_device"]


def _check_xp_input(X, xp, name="X"):
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {tuple(X.shape)}")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has 0 samples")
    if not xp.isdtype(X.dtype, "real floating"):
        X = xp.astype(X, xp.float64)
    if not bool(xp.all(xp.isfinite(X))):
        raise ValueError(f"{name} contains NaN or infinity")
    return X


def free_device_bytes(xp, device) -> int | None:
    """Free memory of ``device`` in bytes (PyTorch CUDA, CuPy), or None when the library does not say."""
    name = getattr(xp, "__name__", "")
    try:
        if "torch" in name and getattr(device, "type", None) == "cuda":
            import torch

            return int(torch.cuda.mem_get_info(device)[0])
        if "cupy" in name:
            import cupy

            return int(cupy.cuda.Device(getattr(device, "id", None)).mem_info[0])
    except Exception:  # a driver query that fails must not fail the computation: the host budget applies
        return None
    return None


def _chunk_rows(n, bytes_per_row, xp=None, device=None):
    """Rows per device block: ``working_memory``, capped at half the device's free memory when it is known.

    A budget that cannot hold one row is a ``MemoryError`` that says so, before anything
    is allocated on the device (never an opaque out-of-memory error from the driver).
    """
    budget = float(get_config()["working_memory"])
    free = free_device_bytes(xp, device) if xp is not None else None
    if free is not None:
        budget = min(budget, free / 2 / 2**20)
    try:
        return get_chunk_n_rows(bytes_per_row, n, budget)
    except MemoryError as exc:
        if free is None:
            raise
        raise MemoryError(
            f"the device has {free / 2**20:.1f} MiB free: half of it cannot hold one row of this computation "
            f"({bytes_per_row / 2**20:.3g} MiB per row); free device memory or use fewer landmarks / features"
        ) from exc


def _device(A):
    return getattr(A, "device", None)


def _gamma(kern, d):
    return kern.gamma if kern.gamma is not None else 1.0 / d


def _block(kern, xp, Xc, Y, prep):
    """``K(Xc, Y)`` for one chunk of rows, in namespace ``xp``."""
    name = type(kern).__name__
    if name == "GaussianKernel":
        center, Yc, yn = prep
        A = Xc - center
        xn = xp.sum(A * A, axis=1)
        D = xn[:, None] + yn[None, :] - 2.0 * (A @ xp.matrix_transpose(Yc))
        D = xp.maximum(D, xp.zeros_like(D))
        return xp.exp(D * (-1.0 / kern.bandwidth**2))
    if name == "LaplacianKernel":
        D = xp.sum(xp.abs(Xc[:, None, :] - Y[None, :, :]), axis=2)
        return xp.exp(D * (-1.0 / kern.bandwidth))
    if name == "CauchyKernel":
        T = (Xc[:, None, :] - Y[None, :, :]) / kern.bandwidth
        return xp.prod(1.0 / (1.0 + T * T), axis=2)
    if name == "LinearKernel":
        return Xc @ xp.matrix_transpose(Y)
    if name == "PolynomialKernel":
        return (_gamma(kern, Y.shape[1]) * (Xc @ xp.matrix_transpose(Y)) + kern.coef0) ** kern.degree
    if name == "SigmoidKernel":
        return xp.tanh(_gamma(kern, Y.shape[1]) * (Xc @ xp.matrix_transpose(Y)) + kern.coef0)
    if name == "CosineKernel":
        Yn = prep
        return _unit_rows(xp, Xc) @ xp.matrix_transpose(Yn)
    raise TypeError(
        f"{name} has no array-API route (built-in kernels only); pass NumPy arrays or turn array_api_dispatch off"
    )


def _unit_rows(xp, A):
    norms = xp.sqrt(xp.sum(A * A, axis=1))
    norms = xp.where(norms == 0, xp.ones_like(norms), norms)  # a zero row stays zero (scikit-learn's cosine)
    return A / norms[:, None]


def _prepare(kern, xp, Y):
    name = type(kern).__name__
    if name == "GaussianKernel":
        center = xp.mean(Y, axis=0)
        Yc = Y - center
        return center, Yc, xp.sum(Yc * Yc, axis=1)
    if name == "CosineKernel":
        return _unit_rows(xp, Y)
    return None


def _bytes_per_row(kern, m, d, itemsize):
    elementwise_3d = type(kern).__name__ in ("LaplacianKernel", "CauchyKernel")
    return itemsize * (3 * m + (2 * m * d if elementwise_3d else 0) + d)


def _float_input(X, xp):
    """Validated X in its working dtype (float32 stays float32, anything else float64), and that dtype's itemsize."""
    X = _check_xp_input(X, xp)
    dtype = xp.float32 if X.dtype == xp.float32 else xp.float64
    return xp.astype(X, dtype), dtype, (4 if dtype == xp.float32 else 8)


def _check_n_features(X, expected):
    if X.shape[1] != expected:
        raise ValueError(f"X has {X.shape[1]} features, but the estimator is expecting {expected} features as input.")


def _map_rows(X, bytes_per_row, fn, xp):
    """``fn(X[rows])`` for row chunks that fit the budget, stacked: every device map's loop."""
    step = _chunk_rows(X.shape[0], bytes_per_row, xp, _device(X))
    parts = [fn(X[rows, :]) for rows in gen_row_slices(X.shape[0], step)]
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)


def pairwise_kernel_xp(kern, X, Y, xp, device):
    """``K(X, Y)`` (``Y = X`` when None) in namespace ``xp`` on ``device``, chunk by chunk.

    float32 when both inputs are float32, else float64 (as on the host).
    """
    X = _check_xp_input(X, xp)
    Y = X if Y is None else _check_xp_input(Y, xp, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}")
    dtype = xp.float32 if X.dtype == xp.float32 and Y.dtype == xp.float32 else xp.float64
    X, Y = xp.astype(X, dtype), xp.astype(Y, dtype)
    prep = _prepare(kern, xp, Y)
    itemsize = 4 if dtype == xp.float32 else 8
    return _map_rows(
        X, _bytes_per_row(kern, Y.shape[0], X.shape[1], itemsize), lambda Xc: _block(kern, xp, Xc, Y, prep), xp
    )


def landmark_map_xp(X, landmarks, kern, projection, offset, xp):
    """``K(X, landmarks) @ projection + offset`` in namespace ``xp``, chunk by chunk (the device transform)."""
    X, dtype, itemsize = _float_input(X, xp)
    L, P = xp.astype(landmarks, dtype), xp.astype(projection, dtype)
    _check_n_features(X, L.shape[1])
    prep = _prepare(kern, xp, L)
    row_bytes = _bytes_per_row(kern, L.shape[0], X.shape[1], itemsize) + itemsize * P.shape[1]
    out = _map_rows(X, row_bytes, lambda Xc: _block(kern, xp, Xc, L, prep) @ P, xp)
    return out if offset is None else out + xp.astype(offset, dtype)[None, :]


def _rff_block(Xc, W, b, scale, xp):
    T = Xc @ W
    if b is not None:
        return scale * xp.cos(T + b[None, :])
    return xp.concat([scale * xp.cos(T), scale * xp.sin(T)], axis=1)


def rff_map_xp(X, W, b, scale, xp):
    """``scale * cos(X W + b)``, or ``scale * [cos(X W), sin(X W)]`` when ``b`` is None, in namespace ``xp``."""
    X, dtype, itemsize = _float_input(X, xp)
    Wd, bd = xp.astype(W, dtype), (None if b is None else xp.astype(b, dtype))
    _check_n_features(X, Wd.shape[0])
    return _map_rows(X, 3 * itemsize * Wd.shape[1], lambda Xc: _rff_block(Xc, Wd, bd, scale, xp), xp)


def rff_project_xp(X, W, b, scale, V, offset, xp):
    """``rff(X) @ V - offset``, chunk by chunk: the transforms of RFKPCA, RNCA and StreamingKPCA on a device."""
    X, dtype, itemsize = _float_input(X, xp)
    Wd, bd, Vd = xp.astype(W, dtype), (None if b is None else xp.astype(b, dtype)), xp.astype(V, dtype)
    _check_n_features(X, Wd.shape[0])
    out = _map_rows(X, 4 * itemsize * Wd.shape[1], lambda Xc: _rff_block(Xc, Wd, bd, scale, xp) @ Vd, xp)
    return out if offset is None else out - xp.astype(offset, dtype)[None, :]


def linear_project_xp(X, components, xp):
    """``X @ components.T`` on a device (FrequentDirections' transform)."""
    X, dtype, _ = _float_input(X, xp)
    C = xp.astype(components, dtype)
    _check_n_features(X, C.shape[1])
    return X @ xp.matrix_transpose(C)


def to_device(arrays, xp, device):
    """A fitted model's state (``arrays``; None kept) as ``xp`` arrays on ``device``, for one transform.

    State fitted on that device is used as it is; host state (a NumPy fit) is sent with
    the call -- it is small next to the data.
    """
    from sklearn.utils._array_api import move_to

    def one(a):
        if a is None:
            return None
        if isinstance(a, np.ndarray):
            return xp.asarray(np.ascontiguousarray(a), device=device)
        return move_to(a, xp=xp, device=device)  # state already on a device (fitted there)

    return tuple(one(a) for a in arrays)
