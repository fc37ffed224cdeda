"""chromadb's HTTP client without the environment's proxies.

chromadb's server client builds its ``httpx.Client`` with httpx's defaults, which read
``http_proxy`` and friends from the environment: a Chroma server on loopback would be reached
through whatever proxy the environment names (AL5), from the very first request (the tenant
check inside ``HttpClient()``). chromadb accepts no client class of ours (it refuses any API
implementation but its own), so its server module's ``httpx`` is replaced, once, by a
stand-in whose ``Client`` never reads the environment and never follows a redirect.
Imported (with chromadb) only when a Chroma server is configured.
"""

from __future__ import annotations

import types
from typing import Any

import chromadb.api.fastapi
import httpx


class _NoEnvironmentHttpx(types.ModuleType):
    """``httpx``, except that ``Client(...)`` is ``httpx.Client(..., trust_env=False,
    follow_redirects=False)``."""

    def __init__(self) -> None:
        super().__init__("httpx")

    def __getattr__(self, name: str) -> Any:
        return getattr(httpx, name)

    @staticmethod
    def Client(*args: Any, **kwargs: Any) -> httpx.Client:
        kwargs["trust_env"] = False
        kwargs["follow_redirects"] = False
        return httpx.Client(*args, **kwargs)


def install() -> None:
    """Make chromadb's server client ignore the environment's proxies (idempotent)."""
    if not isinstance(chromadb.api.fastapi.httpx, _NoEnvironmentHttpx):
        chromadb.api.fastapi.httpx = _NoEnvironmentHttpx()


install()
