"""A private redis-server for tests that count its clients, kill, freeze or restart it.

Tests take the ``redis_servers`` fixture (tests/conftest.py), which starts these with
:func:`start_redis`; code running outside pytest (the fault campaigns) calls it directly.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class RedisServer:
    """A private redis-server on a free loopback port, with its data in ``folder``.

    ``settings`` are its command-line options (``["--appendonly", "yes"]``); it starts with
    no persistence otherwise.
    """

    binary: str
    folder: Path
    port: int
    settings: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--save",
                "",
                "--appendonly",
                "no",
                *self.settings,
            ],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final flush; only what reached the files survives."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(10)

    def stop(self) -> None:
        """SIGTERM: a clean shutdown (Redis saves a snapshot first when it has save points)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(20)

    def freeze(self) -> None:
        """SIGSTOP: the server keeps its connections open and answers nothing."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """SIGCONT: a frozen server goes on where it stopped."""
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def info(self, section: str) -> dict[str, str]:
        """``INFO section`` as a dict, over a socket of its own."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(f"INFO {section}\r\n".encode())
            data = b""
            while not data.endswith(b"\r\n") or data.count(b"\r\n") < 2:
                data += sock.recv(65536)
            header, _, body = data.partition(b"\r\n")
            size = int(header[1:])
            while len(body) < size + 2:
                body += sock.recv(65536)
        lines = body[:size].decode().splitlines()
        return dict(line.split(":", 1) for line in lines if ":" in line)


def redis_binary() -> str | None:
    """The redis-server to start: ``TOOLRELAY_TEST_REDIS_SERVER``, else one on ``PATH``."""
    return os.environ.get("TOOLRELAY_TEST_REDIS_SERVER") or shutil.which("redis-server")


def start_redis(binary: str, root: Path, *settings: str) -> RedisServer:
    """Start a server on a free port, its data in a new folder under ``root``."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    folder = root / f"redis-{port}"
    folder.mkdir()
    server = RedisServer(binary=binary, folder=folder, port=port, settings=list(settings))
    server.start()
    return server
