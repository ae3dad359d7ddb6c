"""Joining a running Dask cluster or starting a local one."""

from __future__ import annotations

import contextlib
import logging
import socket
import struct

from ._dask import import_dask

#: seconds a scheduler has to answer (the probe, then distributed.Client's own connect)
CONNECT_TIMEOUT = 10.0


def probe_scheduler(address, *, timeout=CONNECT_TIMEOUT):
    """Check that a Dask scheduler answers at ``address`` (``tcp://host:port``), within ``timeout`` seconds.

    A Dask scheduler speaks first: on a new connection it sends its handshake, a
    message whose first 8 bytes are its (small) length.  Anything else (an HTTP
    server, which waits for a request; a closed port) would make ``distributed.Client``
    hang or read a text reply as a length of exabytes: refused here with a message that
    says what was found.  Addresses of other schemes (``tls://``, ``ws://``) are not probed.

    Raises
    ------
    ConnectionError
        Nothing listens there, nothing answers, or what answers is not a Dask scheduler.
    """
    scheme, sep, rest = str(address).partition("://")
    if not sep:
        scheme, rest = "tcp", str(address)
    if scheme != "tcp":
        return
    host, _, port_s = rest.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_s.split("/")[0])
    except ValueError:
        raise ConnectionError(f"{address!r} is not a scheduler address (tcp://host:port)") from None
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            head = b""
            while len(head) < 8:
                part = sock.recv(8 - len(head))
                if not part:
                    break
                head += part
    except TimeoutError:
        raise ConnectionError(
            f"{address!r} did not answer as a Dask scheduler within {timeout:g} s (a Dask scheduler sends a "
            "handshake at once; is this the address of another service?)"
        ) from None
    except OSError as exc:
        raise ConnectionError(f"cannot connect to the Dask scheduler at {address!r}: {exc}") from None
    if len(head) < 8 or struct.unpack("<Q", head)[0] > 2**20:
        raise ConnectionError(
            f"{address!r} is not a Dask scheduler: it answered {head!r}, not a Dask handshake "
            "(start one with `dask scheduler`, or use --workers N for a local cluster)"
        )


@contextlib.contextmanager
def connect(
    scheduler=None, n_workers=None, *, threads_per_worker=1, memory_limit="auto", connect_timeout=CONNECT_TIMEOUT
):
    """A ``distributed.Client`` for the ``with`` block, closed afterwards.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``).
    n_workers : int, optional
        Start a ``LocalCluster`` of that many worker processes on this
        machine (loopback only, dashboard on a free port if bokeh is installed), stopped on exit;
        its workers log nothing below CRITICAL: a failed task raises its exception here instead.
    threads_per_worker : int, default=1
        For a local cluster: kernelsketch's hot paths are BLAS calls, so
        one thread per process avoids oversubscribing the cores.
    memory_limit : str or int, default="auto"
    connect_timeout : float, default=10
        Seconds to wait for ``scheduler`` to answer (see :func:`probe_scheduler`).

    Yields
    ------
    distributed.Client

    Raises
    ------
    ValueError
        Both or neither of ``scheduler`` and ``n_workers`` given.
    ConnectionError
        ``scheduler`` is unreachable or is not a Dask scheduler.
    """
    if (scheduler is None) == (n_workers is None):
        raise ValueError("give exactly one of scheduler (an address) or n_workers (to start a local cluster)")
    distributed = import_dask("distributed")
    if scheduler is not None:
        probe_scheduler(scheduler, timeout=connect_timeout)
        try:
            client = distributed.Client(scheduler, timeout=connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise ConnectionError(f"cannot connect to the Dask scheduler at {scheduler!r}: {exc}") from exc
        except Exception as exc:  # a reply that starts like a Dask handshake but is not one (struct / msgpack errors)
            raise ConnectionError(
                f"{scheduler!r} is not a Dask scheduler: its reply could not be read as a Dask handshake "
                f"({type(exc).__name__}: {exc}); start one with `dask scheduler`, or use --workers N for a local "
                "cluster"
            ) from None
        with client:
            yield client
        return
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise ValueError(f"n_workers must be an int >= 1, got {n_workers!r}")
    with (
        distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=threads_per_worker,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            memory_limit=memory_limit,
            # a failed task raises its exception here, with the library's message: the workers'
            # own log of it ("Compute Failed" and a traceback block on stderr) would repeat it
            silence_logs=logging.CRITICAL,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
