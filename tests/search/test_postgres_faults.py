"""PostgresToolIndex when the server is away, stuck or slow: a clear error or the fallback."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.extras import needs_extra
from toolrelay.exceptions import StorageUnavailableError
from toolrelay.search import BM25ToolIndex, SearchRequest

from ._catalog import CATALOG

pytest.importorskip("psycopg", reason=needs_extra("postgres"))

from toolrelay.search._postgres import PostgresToolIndex

from .test_postgres import fresh_schema, require_dsn

QUERY = SearchRequest(query="refund an order")


@pytest.fixture
def postgres_dsn() -> str:
    return require_dsn()


@pytest.fixture
def schema(postgres_dsn: str) -> Iterator[str]:
    yield from fresh_schema(postgres_dsn)


def bounded(work: Callable[[], Any], seconds: float = 30.0) -> Any:
    """Run ``work`` in a thread; fail the test if it does not end within ``seconds``."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"hung for more than {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Proxy:
    """A TCP relay to the test server that can be cut (connections dropped) and restored."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(
                OSError
            ):  # wakes the thread blocked in accept(); close() alone would not
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self._sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self._sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def proxy(postgres_dsn: str) -> Iterator[Proxy]:
    import psycopg

    info = psycopg.conninfo.conninfo_to_dict(postgres_dsn)
    relay = Proxy((str(info.get("host", "127.0.0.1")), int(info.get("port", 5432))))
    relay.start()
    yield relay
    relay.stop()


def proxied(dsn: str, proxy: Proxy) -> str:
    import psycopg

    info = psycopg.conninfo.conninfo_to_dict(dsn)
    info.update(host="127.0.0.1", port=str(proxy.port))
    return psycopg.conninfo.make_conninfo(**info)


def test_an_unreachable_server_is_a_clear_error() -> None:
    index = PostgresToolIndex(f"postgresql://nobody@127.0.0.1:{free_port()}/x", connect_timeout=2)
    with pytest.raises(StorageUnavailableError, match="unavailable"):
        bounded(lambda: index.index(CATALOG))
    index.close()


def test_a_server_that_never_answers_times_out() -> None:
    with socket.socket() as silent:  # accepts TCP connections, never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        index = PostgresToolIndex(f"postgresql://nobody@127.0.0.1:{port}/x", connect_timeout=2)
        with pytest.raises(StorageUnavailableError):
            bounded(lambda: index.index(CATALOG))
        index.close()


def test_a_blocked_search_hits_the_statement_timeout(postgres_dsn: str, schema: str) -> None:
    import psycopg

    with PostgresToolIndex(
        postgres_dsn, schema=schema, statement_timeout=0.5, postings_cache=0
    ) as index:
        index.index(CATALOG)
        before = index.search(QUERY).names
        assert before
        with psycopg.connect(postgres_dsn) as blocker:
            # the table a keyword search reads: the terms and their postings
            blocker.execute(f"LOCK TABLE {schema}.terms IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(StorageUnavailableError, match="too slow"):
                bounded(lambda: index.search(QUERY))
            blocker.rollback()
        assert index.search(QUERY).names == before


def test_searches_fail_clearly_while_the_server_is_away_then_recover(
    postgres_dsn: str, schema: str, proxy: Proxy
) -> None:
    # No postings cache: a search must reach the server (cached terms answer without it).
    with PostgresToolIndex(
        proxied(postgres_dsn, proxy), schema=schema, connect_timeout=2, postings_cache=0
    ) as index:
        index.index(CATALOG)
        before = index.search(QUERY).names
        assert before
        proxy.stop()
        with pytest.raises(StorageUnavailableError):
            bounded(lambda: index.search(QUERY))
        proxy.start()
        assert bounded(lambda: index.search(QUERY)).names == before


def test_the_fallback_answers_while_the_server_is_away(
    postgres_dsn: str, schema: str, proxy: Proxy
) -> None:
    fallback = BM25ToolIndex()
    with PostgresToolIndex(
        proxied(postgres_dsn, proxy),
        schema=schema,
        connect_timeout=2,
        fallback=fallback,
        postings_cache=0,
    ) as index:
        index.index(CATALOG)
        assert index.search(QUERY).search_type == "postgres-keyword"
        proxy.stop()
        response = bounded(lambda: index.search(QUERY))
        assert response.search_type == "bm25"
        assert response.names == fallback.search(QUERY).names
        proxy.start()
        assert bounded(lambda: index.search(QUERY)).search_type == "postgres-keyword"


def test_a_fallback_serves_a_catalog_the_server_never_got() -> None:
    index = PostgresToolIndex(
        f"postgresql://nobody@127.0.0.1:{free_port()}/x",
        connect_timeout=2,
        fallback=BM25ToolIndex(),
    )
    assert bounded(lambda: index.index(CATALOG)) is True
    response = index.search(QUERY)
    assert response.search_type == "bm25"
    assert "refund.issueRefund" in response.names
    assert index.fingerprint is not None
    index.close()
