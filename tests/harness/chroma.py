"""A private Chroma server (``chroma run``) on a free loopback port, for the tests that need one."""

from __future__ import annotations

import shutil
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness.servers import (
    HOST,
    ServerProcess,
    ServerStartError,
    free_port,
    unavailable,
)


class ChromaServer(ServerProcess):
    """``chroma run`` from this venv (the chromadb package ships it)."""

    name = "chroma"
    ready_timeout = 30.0

    def __init__(self, root: Path, port: int, binary: str) -> None:
        super().__init__(root, port)
        self.binary = binary
        self.data = root / f"chroma-{port}"

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def command(self) -> list[str]:
        return [
            self.binary,
            "run",
            "--path",
            str(self.data),
            "--host",
            HOST,
            "--port",
            str(self.port),
        ]

    def popen_kwargs(self) -> dict[str, Any]:
        import os

        return {"env": dict(os.environ) | {"ANONYMIZED_TELEMETRY": "False"}}

    def is_ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=0.5) as reply:
                return reply.status == 200
        except OSError:
            return False


@pytest.fixture(scope="module")
def chroma_server(servers_root: Path) -> Iterator[ChromaServer]:
    binary = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    if binary is None:
        unavailable("no `chroma` executable (the chromadb package provides it)")
    server = ChromaServer(servers_root, free_port(), binary)
    try:
        server.start()
    except ServerStartError as err:
        unavailable(f"chroma server did not start: {err}")
    yield server
    server.stop()
