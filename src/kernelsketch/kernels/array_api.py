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
  ``Nystroem``, ``KernelJL``, ``SubsampleKPCA`` and ``RandomFourierFeatures``;
- row blocks of a Gram (:func:`gram_row_blocks_xp`) for the Gram-error metrics.

The Gaussian block is one GEMM that produces the exponent
(``[2A/h^2, -|a|^2/h^2, 1] @ [Y, 1, -|y|^2/h^2]^T``) followed by a clip and ``exp``, in place
for PyTorch; the random Fourier phase joins its GEMM the same way. Each block is
touched as few times as the array API allows (``benchmarks/gpu.py`` measures it against the
device's GEMM + exp floor).

The estimators keep their fitted state on the device of their fit input
(:func:`kernelsketch.utils.array_api.move_state_to`); the random draws and the small dense
eigenproblems stay on the host, so a device fit equals the NumPy fit.
"""

from __future__ import annotations

from .._config import get_config
from ..utils.array_api import array_namespace, move_array, to_numpy  # noqa: F401 (re-exported for the device path)
from ..utils.chunking import gen_row_slices, get_chunk_n_rows
from ..utils.validation import check_input_xp

__all__ = [
    "check_device_allocation",
    "gram_row_blocks_xp",
    "landmark_map_xp",
    "linear_project_xp",
    "pairwise_kernel_xp",
    "rff_map_xp",
    "rff_project_xp",
    "to_device",
]


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


def check_device_allocation(nbytes, xp, device, what, alternative) -> None:
    """A clear ``MemoryError`` before a whole-array allocation on the device that cannot fit
    its free memory (when the library reports it), never the driver's opaque out-of-memory error."""
    free = free_device_bytes(xp, device)
    if free is not None and nbytes > free:
        raise MemoryError(
            f"{what} {nbytes / 2**30:.2f} GiB on the device, which has {free / 2**30:.2f} GiB free; {alternative}"
        )


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
        # One GEMM produces the exponent: [2 A / h^2, -|a|^2 / h^2, 1] @ [Yc, 1, -|y|^2 / h^2]^T
        # = -(|a|^2 + |y|^2 - 2 a.y) / h^2 (centred about Y's mean, as on the host). The block is
        # then touched twice (clip at 0 against rounding, exp), not five times.
        center, Yaug, inv_h2 = prep
        A = Xc - center
        xn = xp.sum(A * A, axis=1)
        ones = xp.ones((A.shape[0], 1), dtype=A.dtype, device=_device(A))
        Aaug = xp.concat([A * (2.0 * inv_h2), (xn * -inv_h2)[:, None], ones], axis=1)
        return _exp_nonpositive(Aaug @ xp.matrix_transpose(Yaug), xp)
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


def _exp_nonpositive(E, xp):
    """``exp(min(E, 0))``, in place for PyTorch (no second block allocated; the array API has no
    in-place functions), else through the namespace's own functions."""
    if hasattr(E, "clamp_") and hasattr(E, "exp_"):  # torch.Tensor
        return E.clamp_(max=0.0).exp_()
    return xp.exp(xp.clip(E, max=0.0))


def _cos_scaled(T, scale, xp):
    """``scale * cos(T)``, in place for PyTorch (as :func:`_exp_nonpositive`)."""
    if hasattr(T, "cos_") and hasattr(T, "mul_"):  # torch.Tensor
        T = T.cos_()
        return T if scale == 1.0 else T.mul_(scale)
    C = xp.cos(T)
    return C if scale == 1.0 else C * scale


def _unit_rows(xp, A):
    norms = xp.sqrt(xp.sum(A * A, axis=1))
    norms = xp.where(norms == 0, xp.ones_like(norms), norms)  # a zero row stays zero (scikit-learn's cosine)
    return A / norms[:, None]


def _prepare(kern, xp, Y):
    name = type(kern).__name__
    if name == "GaussianKernel":
        center = xp.mean(Y, axis=0)
        Yc = Y - center
        inv_h2 = 1.0 / kern.bandwidth**2
        ones = xp.ones((Y.shape[0], 1), dtype=Y.dtype, device=_device(Y))
        Yaug = xp.concat([Yc, ones, (xp.sum(Yc * Yc, axis=1) * -inv_h2)[:, None]], axis=1)
        return center, Yaug, inv_h2
    if name == "CosineKernel":
        return _unit_rows(xp, Y)
    return None


def _bytes_per_row(kern, m, d, itemsize):
    elementwise_3d = type(kern).__name__ in ("LaplacianKernel", "CauchyKernel")
    return itemsize * (3 * m + (2 * m * d if elementwise_3d else 0) + d)


def _float_input(X, xp):
    """Validated X in its working dtype (float32 stays float32, anything else float64), and that dtype's itemsize."""
    X = check_input_xp(X, xp)
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
    X = check_input_xp(X, xp)
    Y = X if Y is None else check_input_xp(Y, xp, name="Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}")
    dtype = xp.float32 if X.dtype == xp.float32 and Y.dtype == xp.float32 else xp.float64
    X, Y = xp.astype(X, dtype), xp.astype(Y, dtype)
    prep = _prepare(kern, xp, Y)
    itemsize = 4 if dtype == xp.float32 else 8
    return _map_rows(
        X, _bytes_per_row(kern, Y.shape[0], X.shape[1], itemsize), lambda Xc: _block(kern, xp, Xc, Y, prep), xp
    )


def gram_row_blocks_xp(kern, X, xp, extra_bytes_per_row=0):
    """``(rows, K(X[rows], X))`` for row blocks of the Gram of a validated float64 ``X``, on its device.

    Blocks follow the budget of :func:`pairwise_kernel_xp` (plus ``extra_bytes_per_row`` for the
    caller's own per-row temporaries): the device route of the Gram-error metrics.
    """
    n, d = X.shape
    prep = _prepare(kern, xp, X)
    step = _chunk_rows(n, _bytes_per_row(kern, n, d, 8) + extra_bytes_per_row, xp, _device(X))
    for rows in gen_row_slices(n, step):
        yield rows, _block(kern, xp, X[rows, ...], X, prep)


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
    """``scale * cos(Xc W + b)`` (``[cos, sin](Xc W)`` when ``b`` is None) for one chunk of rows.

    The phase joins the GEMM (``[Xc, 1] @ [W; b]``), so the block is touched by ``cos`` and
    the scale only (no scaling when ``scale == 1``: a projection folds it into its matrix).
    """
    if b is not None:
        ones = xp.ones((Xc.shape[0], 1), dtype=Xc.dtype, device=_device(Xc))
        return _cos_scaled(xp.concat([Xc, ones], axis=1) @ xp.concat([W, b[None, :]], axis=0), scale, xp)
    T = Xc @ W
    C = xp.concat([xp.cos(T), xp.sin(T)], axis=1)
    return C if scale == 1.0 else C * scale


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
    Vs = Vd * scale  # the features' scale folded into the projection
    out = _map_rows(X, 4 * itemsize * Wd.shape[1], lambda Xc: _rff_block(Xc, Wd, bd, 1.0, xp) @ Vs, xp)
    return out if offset is None else out - xp.astype(offset, dtype)[None, :]


def linear_project_xp(X, components, xp):
    """``X @ components.T`` on a device (FrequentDirections' transform)."""
    X, dtype, _ = _float_input(X, xp)
    C = xp.astype(components, dtype)
    _check_n_features(X, C.shape[1])
    return X @ xp.matrix_transpose(C)


def to_device(arrays, xp, device):
    """A fitted model's state (``arrays``; None kept) as ``xp`` arrays on ``device``, for one transform.

    State fitted on that device is used as it is (the estimators refuse input of another
    device under ``array_api_dispatch``); derived host arrays (a projection computed on the
    host from the state) are sent with the call -- they are small next to the data.
    """
    return tuple(move_array(a, xp, device) for a in arrays)
