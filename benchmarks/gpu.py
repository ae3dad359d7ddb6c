"""GPU (array-API) paths against our CPU path and the device's own floors, in one run.

    python -m benchmarks.gpu [--quick] [--library torch|array_api_strict] [--device cuda] [--output FILE]

Rows (issue 16), each timed on the device with the device synchronised:

- Gaussian block ``K(X, L)``, X: N x d, L: M x d (d = 10 and 100; float32 and float64), computed
  block by block and reduced (a 1,000,000 x 10,000 block is 40-80 GB; nobody keeps it) -- ours
  (``ks.kernels.pairwise_kernel`` on device rows) against the device's floor (the GEMM of the same
  shapes and one ``exp`` over its output: a lower bound for any Gaussian block), against the formula
  ``exp(-(|x|^2 + |y|^2 - 2 X L^T) / h^2)`` written out in the library itself, against
  ``torch.cdist`` + ``exp``, against pykeops' Gaussian reduction (when pykeops is installed: it never
  forms the block), and against our NumPy CPU path on the same rows (the CPU row uses at most
  200,000 rows, scaled);
- KernelJL / Nystroem ``transform`` of N points from 1,000 landmarks: ours on device against the
  floor (GEMM + one exp + GEMM), the formula written out, pykeops' ``K @ P``, and our CPU path;
- RandomFourierFeatures ``transform`` N x 50 -> 4,096: ours on device against matmul + cos, and CPU.

Targets on an H100 (issue 16): the Gaussian block and the KernelJL transform within 1.3x of the
floor, and >= 30x our 2-core CPU path at 10M points.  ``--library array_api_strict`` runs every
row on array-api-strict (a CPU reference implementation): a functional smoke run, not a measurement.
- FrequentDirections and StreamingKPCA ``fit`` of N_map rows on the device (the buffer, its Gram and
  the new rows there; the small ``eigh`` of each shrink on the host), with the papers' ``2l``-row
  buffer and with ``buffer_size`` in the thousands (far fewer shrinks), against our CPU path, and FD
  against the one GEMM of the exact covariance.
"""

from __future__ import annotations

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # before scipy is imported: scikit-learn's array-API mode needs it

import argparse
import platform
import sys
import time

import numpy as np

FULL = {
    "N": 1_000_000,
    "M": 10_000,
    "N_map": 10_000_000,
    "landmarks": 1_000,
    "rff_in": 50,
    "rff_out": 4_096,
    "fd_in": 100,
    "sketch": 64,
    "skpca_features": 1_024,
    "buffer": 8_192,
}
QUICK = {
    "N": 20_000,
    "M": 1_000,
    "N_map": 50_000,
    "landmarks": 200,
    "rff_in": 50,
    "rff_out": 512,
    "fd_in": 100,
    "sketch": 32,
    "skpca_features": 256,
    "buffer": 2_048,
}
CPU_ROWS = 200_000  # our CPU path is timed on at most this many rows, then scaled to N


def _library(name, device):
    if name == "torch":
        try:
            import torch
        except ImportError:
            sys.exit("benchmarks.gpu needs PyTorch (pip install 'kernelsketch[gpu]'), or --library array_api_strict")
        dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))

        def sync():
            if dev.type == "cuda":
                torch.cuda.synchronize()

        def asarray(a, dtype):
            return torch.asarray(np.ascontiguousarray(a, dtype=dtype), device=dev)

        return torch, dev, sync, asarray, f"torch {torch.__version__} on {dev}"
    import array_api_strict as xp

    return xp, None, lambda: None, lambda a, dtype: xp.asarray(np.asarray(a, dtype=dtype)), "array_api_strict (CPU)"


def _time(fn, sync, repeats):
    fn()
    sync()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def _keops_sum(Xd, Ld, h, P=None):
    """pykeops' Gaussian reduction ``sum_j k(x_i, l_j)`` (``@ P`` when given), or None without pykeops."""
    try:
        from pykeops.torch import LazyTensor
    except ImportError:
        return None
    c = float(-1.0 / h**2)

    def run():
        x_i, l_j = LazyTensor(Xd[:, None, :]), LazyTensor(Ld[None, :, :])
        K = (((x_i - l_j) ** 2).sum(-1) * c).exp()
        if P is None:
            return float(K.sum(dim=1).sum())
        return K @ P

    return run


def run(quick=False, library="torch", device=None, repeats=3, log=print):
    import sklearn

    import kernelsketch as ks

    sizes = QUICK if quick else FULL
    lib, dev, sync, asarray, described = _library(library, device)
    rows = []

    def row(name, ours_s, ref_name, ref_s, target=None):
        ratio = ref_s / ours_s if ours_s and ref_s else float("nan")
        rows.append((name, ours_s, ref_name, ref_s, ratio, target))
        log(f"{name} | {ref_name}: ours {ours_s:.4f} s, ref {ref_s:.4f} s, ref/ours {ratio:.2f}")

    rng = np.random.default_rng(0)
    with sklearn.config_context(array_api_dispatch=True):
        # -- Gaussian block, reduced block by block ------------------------------------------
        for d in (10, 100):
            for dt in (np.float32, np.float64):
                N, M = sizes["N"], sizes["M"]
                X, L = rng.standard_normal((N, d)).astype(dt), rng.standard_normal((M, d)).astype(dt)
                h = float(np.sqrt(2.0 * d))
                Xd, Ld = asarray(X, dt), asarray(L, dt)
                step = max(1, int(2**28 // (M * np.dtype(dt).itemsize)))  # 256 MiB blocks

                def ours(Xd=Xd, Ld=Ld, h=h, step=step, N=N):
                    total = 0.0
                    for s in range(0, N, step):
                        block = ks.pairwise_kernel(Xd[s : min(s + step, N), :], Ld, "gaussian", bandwidth=h)
                        total += float(lib.sum(block))
                    return total

                def floor(Xd=Xd, Ld=Ld, step=step, N=N):
                    # the device's floor: the GEMM of the same shapes and one exp over its output
                    # (no norms, no scaling: a lower bound, not a kernel)
                    total = 0.0
                    for s in range(0, N, step):
                        total += float(lib.sum(lib.exp(Xd[s : min(s + step, N), :] @ Ld.T)))
                    return total

                def naive(Xd=Xd, Ld=Ld, h=h, step=step, N=N):
                    yn = lib.sum(Ld * Ld, axis=1)
                    total = 0.0
                    for s in range(0, N, step):
                        B = Xd[s : min(s + step, N), :]
                        D = lib.sum(B * B, axis=1)[:, None] + yn[None, :] - 2.0 * (B @ Ld.T)
                        total += float(lib.sum(lib.exp(D * (-1.0 / h**2))))
                    return total

                label = f"Gaussian block {N:,} x {M:,}, d={d}, {np.dtype(dt).name}"
                t_ours, t_floor = _time(ours, sync, repeats), _time(floor, sync, repeats)
                row(label, t_ours, "floor (GEMM + one exp, same shapes)", t_floor, 1 / 1.3)
                row(label, t_ours, "the formula written out (norms + GEMM + exp)", _time(naive, sync, repeats))
                if library == "torch":
                    import torch

                    def cdist(Xd=Xd, Ld=Ld, h=h, step=step, N=N):
                        total = 0.0
                        for s in range(0, N, step):
                            D = torch.cdist(Xd[s : s + step], Ld) ** 2
                            total += float(torch.exp(D * (-1.0 / h**2)).sum())
                        return total

                    row(label, t_ours, "torch.cdist + exp", _time(cdist, sync, repeats))
                    if (keops := _keops_sum(Xd, Ld, h)) is not None:
                        # KeOps never forms the block: its kernel reduction sum_j k(x_i, l_j) (compiled once)
                        row(label, t_ours, "pykeops reduction sum_j k(x_i, l_j)", _time(keops, sync, repeats))
                n_cpu = min(N, CPU_ROWS)
                t_cpu = _time(
                    lambda X=X, L=L, h=h, n_cpu=n_cpu: ks.pairwise_kernel(X[:n_cpu], L, "gaussian", bandwidth=h).sum(),
                    lambda: None,
                    1,
                )
                row(label, t_ours, f"our CPU path (scaled from {n_cpu:,} rows)", t_cpu * N / n_cpu, 30.0)

        # -- landmark maps --------------------------------------------------------------------
        N, m = sizes["N_map"], sizes["landmarks"]
        X = rng.standard_normal((N, 10)).astype(np.float32)
        Xd = asarray(X, np.float32)
        for est in (
            ks.KernelJL(n_components=50, n_landmarks=m, random_state=0),
            ks.Nystroem(n_landmarks=m, n_components=50, random_state=0),
        ):
            est.fit(Xd[: max(20 * m, 20_000), :])  # fitted on the device: its state lives there
            on_host = ks.move_estimator_to(est, "numpy")  # the same model, for the CPU row
            name = f"{type(est).__name__}.transform {N:,} x 10 from {m:,} landmarks (float32)"
            t_ours = _time(lambda est=est: est.transform(Xd), sync, repeats)
            Ld, Pd = asarray(on_host.landmarks_, np.float32), asarray(on_host.projection_, np.float32)
            h = float(est.kernel_.bandwidth)

            def floor(Ld=Ld, Pd=Pd):
                return lib.exp(Xd @ Ld.T) @ Pd  # the same GEMMs and one exp: a lower bound

            def naive(Ld=Ld, Pd=Pd, h=h):
                yn = lib.sum(Ld * Ld, axis=1)
                D = lib.sum(Xd * Xd, axis=1)[:, None] + yn[None, :] - 2.0 * (Xd @ Ld.T)
                return lib.exp(D * (-1.0 / h**2)) @ Pd

            row(name, t_ours, "floor (GEMM + one exp + GEMM)", _time(floor, sync, repeats), 1 / 1.3)
            if library == "torch" and (keops := _keops_sum(Xd, Ld, h, Pd)) is not None:
                row(name, t_ours, "pykeops K(X, L) @ P", _time(keops, sync, repeats))
            row(name, t_ours, "the formula written out (norms + GEMM + exp + GEMM)", _time(naive, sync, repeats))
            n_cpu = min(N, CPU_ROWS)
            t_cpu = _time(lambda est=on_host, n_cpu=n_cpu: est.transform(X[:n_cpu]), lambda: None, 1)
            row(name, t_ours, f"our CPU path (scaled from {n_cpu:,} rows)", t_cpu * N / n_cpu, 30.0)

        # -- random Fourier features ------------------------------------------------------------
        p, mf = sizes["rff_in"], sizes["rff_out"]
        X = rng.standard_normal((N, p)).astype(np.float32)
        Xd = asarray(X, np.float32)
        rff = ks.RandomFourierFeatures(mf, bandwidth=float(np.sqrt(2.0 * p)), random_state=0).fit(Xd[:100, :])
        rff_host = ks.move_estimator_to(rff, "numpy")
        Wd, bd = asarray(rff_host.random_weights_, np.float32), asarray(rff_host.random_offset_, np.float32)
        name = f"RandomFourierFeatures.transform {N:,} x {p} -> {mf:,} (float32)"
        t_ours = _time(lambda: rff.transform(Xd), sync, repeats)
        row(
            name, t_ours, "floor (matmul + cos, unscaled)", _time(lambda: lib.cos(Xd @ Wd + bd[None, :]), sync, repeats)
        )
        n_cpu = min(N, CPU_ROWS)
        t_cpu = _time(lambda: rff_host.transform(X[:n_cpu]), lambda: None, 1)
        row(name, t_ours, f"our CPU path (scaled from {n_cpu:,} rows)", t_cpu * N / n_cpu, 30.0)

        # -- streams: Frequent Directions and Streaming KPCA fits on the device ----------------
        d_fd, ell = sizes["fd_in"], sizes["sketch"]
        X = rng.standard_normal((N, d_fd)).astype(np.float32)
        Xd = asarray(X, np.float32)
        n_cpu = min(N, CPU_ROWS)
        t_cov = _time(lambda: Xd.T @ Xd, sync, repeats)
        for buffer in (None, sizes["buffer"]):  # the papers' 2l-row buffer, and a large one (fewer shrinks)
            fd = dict(sketch_size=ell, buffer_size=buffer)
            name = f"FrequentDirections.fit {N:,} x {d_fd}, l = {ell}, buffer {buffer or 2 * ell} (float32)"
            t_ours = _time(lambda fd=fd: ks.FrequentDirections(**fd).fit(Xd), sync, repeats)
            # the floor: the one GEMM of the exact covariance X^T X (what the sketch approximates)
            row(name, t_ours, "exact covariance X^T X (one GEMM)", t_cov)
            t_cpu = _time(lambda fd=fd: ks.FrequentDirections(**fd).fit(X[:n_cpu]), lambda: None, 1)
            row(name, t_ours, f"our CPU path (scaled from {n_cpu:,} rows)", t_cpu * N / n_cpu)
        X = X[:, :10].copy()
        Xd = asarray(X, np.float32)
        for buffer in (None, sizes["buffer"]):
            skpca = dict(n_components=10, n_random_features=sizes["skpca_features"], sketch_size=ell)
            skpca.update(bandwidth=float(np.sqrt(20.0)), random_state=0, buffer_size=buffer)
            name = (
                f"StreamingKPCA.fit {N:,} x 10, {skpca['n_random_features']:,} features, l = {ell}, "
                f"buffer {buffer or 2 * ell} (float32)"
            )
            t_ours = _time(lambda skpca=skpca: ks.StreamingKPCA(**skpca).fit(Xd), sync, repeats)
            t_cpu = _time(lambda skpca=skpca: ks.StreamingKPCA(**skpca).fit(X[:n_cpu]), lambda: None, 1)
            row(name, t_ours, f"our CPU path (scaled from {n_cpu:,} rows)", t_cpu * N / n_cpu)
    return described, rows


def report(described, rows, quick, library):
    lines = [
        "# kernelsketch GPU (array-API) benchmark",
        "",
        f"- library / device: {described}",
        f"- host: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, "
        f"Python {platform.python_version()}",
        f"- sizes: {'quick' if quick else 'full'} ({QUICK if quick else FULL})",
        "- each device time is the median of the timed runs after one warm-up, with the device synchronised;"
        " CPU rows are timed once on at most 200,000 rows and scaled linearly",
        "",
        "| row | reference | ours (s) | reference (s) | reference / ours | target |",
        "|---|---|---:|---:|---:|---|",
    ]
    for name, ours_s, ref_name, ref_s, ratio, target in rows:
        tgt = "" if target is None else (f">= {target:g}x" if target >= 1 else f"within {1 / target:.1f}x of the floor")
        lines.append(f"| {name} | {ref_name} | {ours_s:.4f} | {ref_s:.4f} | {ratio:.2f} | {tgt} |")
    if library != "torch":
        lines += ["", "array_api_strict is a CPU reference implementation: these rows check the code, not the speed."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--library", choices=("torch", "array_api_strict"), default="torch")
    parser.add_argument("--device", help="torch device (default: cuda when available, else cpu)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", help="write the Markdown report here")
    args = parser.parse_args(argv)
    described, rows = run(quick=args.quick, library=args.library, device=args.device, repeats=args.repeats)
    text = report(described, rows, args.quick, args.library)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
