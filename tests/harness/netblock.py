"""No network outside loopback during the tests (a pytest plugin).

Load it with ``pytest_plugins = ["tests.harness.netblock"]``. From ``pytest_configure`` on
(so collection-time imports are covered too) and through the autouse session fixture
``block_network``, these are patched:

- ``socket.socket.connect`` / ``connect_ex`` / ``sendto``: an ``AF_INET``/``AF_INET6`` address
  that is not loopback (127.0.0.0/8, ::1, ::ffff:127.x, the name ``localhost``) raises
  ``NetworkBlockedError``; ``AF_UNIX`` and other families pass through;
- ``socket.create_connection``: same check on the host before anything is resolved;
- the interpreter's ``socket.connect`` audit event: the same check for any Python socket;
- ``socket.getaddrinfo``: resolving a host name other than ``localhost`` raises (a DNS query is
  network access); IP literals and ``None`` (bind to any) pass, their connect is checked.

What this cannot see: connections made in C without Python's socket module, e.g. libpq
(psycopg) connecting to an IP literal. psycopg resolves host *names* through Python's
``getaddrinfo``, so those are blocked.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Iterator
from typing import Any

import pytest

__all__ = [
    "ATTEMPTS",
    "NetworkBlockedError",
    "assert_network_blocked",
    "block_network",
    "install",
    "is_installed",
    "is_loopback",
    "uninstall",
]

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


class NetworkBlockedError(OSError):
    """A test tried to reach (or resolve) something outside loopback."""

    def __init__(self, address: object, operation: str) -> None:
        super().__init__(f"network outside loopback is blocked in tests: {operation} {address!r}")
        self.address = address
        self.operation = operation


_ORIGINALS: dict[str, Any] = {
    "connect": socket.socket.connect,
    "connect_ex": socket.socket.connect_ex,
    "sendto": socket.socket.sendto,
    "create_connection": socket.create_connection,
    "getaddrinfo": socket.getaddrinfo,
}
_installed = False


def _host_text(host: object) -> str | None:
    if isinstance(host, bytes):
        return host.decode("ascii", errors="replace")
    if isinstance(host, str):
        return host
    return None


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def is_loopback(host: object) -> bool:
    """True for loopback IP literals and the name ``localhost`` (and ``*.localhost``)."""
    text = _host_text(host)
    if text is None:
        return False
    name = text.strip().lower().rstrip(".")
    if name in _LOCAL_NAMES or name.endswith(".localhost"):
        return True
    ip = _ip(name)
    if ip is None:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


#: every blocked attempt, in order (a test may clear it and assert it stays empty: a client
#: that swallows the NetworkBlockedError still shows up here)
ATTEMPTS: list[tuple[str, object]] = []


def _check(family: int, address: object, operation: str) -> None:
    if family not in (socket.AF_INET, socket.AF_INET6):
        return  # AF_UNIX, AF_NETLINK, ...: local by nature
    host = address[0] if isinstance(address, tuple) and address else address
    if not is_loopback(host):
        ATTEMPTS.append((operation, address))
        raise NetworkBlockedError(address, operation)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """``socket.connect`` as the interpreter reports it: any Python socket, even one whose
    class bypasses the patched methods."""
    if event == "socket.connect" and _installed and len(args) == 2:
        sock, address = args
        family = getattr(sock, "family", None)
        if isinstance(family, int):
            _check(family, address, "connect (audit)")


_audit_hooked = False


def _connect(self: socket.socket, address: Any, /) -> None:
    _check(self.family, address, "connect")
    _ORIGINALS["connect"](self, address)


def _connect_ex(self: socket.socket, address: Any, /) -> int:
    _check(self.family, address, "connect_ex")
    result: int = _ORIGINALS["connect_ex"](self, address)
    return result


def _sendto(self: socket.socket, data: Any, *args: Any) -> int:
    if args:
        _check(self.family, args[-1], "sendto")
    sent: int = _ORIGINALS["sendto"](self, data, *args)
    return sent


def _create_connection(address: tuple[Any, ...], *args: Any, **kwargs: Any) -> socket.socket:
    host = address[0] if address else None
    if not is_loopback(host):
        ATTEMPTS.append(("create_connection", address))
        raise NetworkBlockedError(address, "create_connection")
    sock: socket.socket = _ORIGINALS["create_connection"](address, *args, **kwargs)
    return sock


def _getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
    text = _host_text(host)
    if text is not None and text != "" and not is_loopback(text) and _ip(text) is None:
        ATTEMPTS.append(("getaddrinfo", host))
        raise NetworkBlockedError(host, "getaddrinfo")
    result: list[Any] = _ORIGINALS["getaddrinfo"](host, port, *args, **kwargs)
    return result


def _patches() -> list[tuple[object, str, object]]:
    return [
        (socket.socket, "connect", _connect),
        (socket.socket, "connect_ex", _connect_ex),
        (socket.socket, "sendto", _sendto),
        (socket, "create_connection", _create_connection),
        (socket, "getaddrinfo", _getaddrinfo),
    ]


def install() -> None:
    """Start blocking (idempotent)."""
    global _installed, _audit_hooked
    if _installed:
        return
    if not _audit_hooked:  # an audit hook cannot be removed: it checks _installed
        sys.addaudithook(_audit)
        _audit_hooked = True
    for target, name, replacement in _patches():
        setattr(target, name, replacement)
    _installed = True


def uninstall() -> None:
    """Stop blocking (idempotent)."""
    global _installed
    if not _installed:
        return
    for target, name, _ in _patches():
        setattr(target, name, _ORIGINALS[name])
    _installed = False


def is_installed() -> bool:
    return _installed


def assert_network_blocked(host: str = "10.255.255.1", port: int = 80) -> NetworkBlockedError:
    """Assert that connecting to ``host:port`` is refused by the block; return the error.

    Tries both ``socket.create_connection`` and a plain ``socket.connect`` (each with a 2 s
    timeout, so a missing block fails the test quickly instead of hanging).
    """
    if is_loopback(host):
        raise AssertionError(f"{host!r} is loopback: the block lets it through by design")
    try:
        conn = socket.create_connection((host, port), timeout=2)
    except NetworkBlockedError as exc:
        first = exc
    except OSError as exc:
        raise AssertionError(f"{host}:{port} was not blocked (got {exc!r})") from exc
    else:
        conn.close()
        raise AssertionError(f"{host}:{port} was not blocked: a connection was made")
    if _ip(host) is not None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(2)
            try:
                sock.connect((host, port))
            except NetworkBlockedError:
                pass
            except OSError as exc:
                raise AssertionError(f"connect to {host}:{port} not blocked: {exc!r}") from exc
            else:
                raise AssertionError(f"socket.connect to {host}:{port} was not blocked")
    return first


def pytest_configure(config: pytest.Config) -> None:
    install()


def pytest_unconfigure(config: pytest.Config) -> None:
    uninstall()


@pytest.fixture(scope="session", autouse=True)
def block_network() -> Iterator[None]:
    """Blocks non-loopback network access for the whole session (see the module docstring)."""
    was_installed = is_installed()
    install()
    try:
        yield
    finally:
        if not was_installed:
            uninstall()
