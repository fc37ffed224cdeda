"""Every connection the app makes stays on this machine (AL5), and the only HTTP it does.

One guard for every client: HTTP to a model runtime or a vector server, Redis, Postgres,
Bolt. Each address a client would connect to is checked *before* any socket opens, and a
refusal names the address. A host name is resolved here, and every address it resolves to
must be loopback. HTTP goes through an opener with no proxies (``http_proxy`` and friends
are ignored) and no redirects (a 302 elsewhere is an answer, never followed); its connections
go to the addresses this guard checked, not to a second lookup.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from backends.errors import ConfigError, ModelUnavailableError
from backends.failures import failed, with_details
from backends.i18n import N_, _

if TYPE_CHECKING:
    import psycopg

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
#: the URI schemes of a Bolt driver that follows a server's routing table to other hosts,
#: and the direct scheme each becomes
_ROUTING_SCHEMES = {"neo4j": "bolt", "neo4j+s": "bolt+s", "neo4j+ssc": "bolt+ssc"}
_BOLT_SCHEMES = {"bolt", "bolt+s", "bolt+ssc"}
#: libpq environment variables that name where to connect (read when the DSN does not)
_PG_ENV = {"host": "PGHOST", "hostaddr": "PGHOSTADDR", "service": "PGSERVICE"}

_REFUSAL = N_("Custodia only connects to this machine (loopback)")


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def _ip_is_loopback(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def is_loopback_host(host: str | None) -> bool:
    """True for a loopback address literal or the name ``localhost`` (no lookup)."""
    if not host:
        return False
    name = host.strip().lower().rstrip(".")
    if name in _LOOPBACK_NAMES:
        return True
    ip = _ip(name)
    return ip is not None and _ip_is_loopback(ip)


def loopback_addresses(key: str, host: str, port: int | None = None) -> list[tuple[Any, ...]]:
    """The socket addresses ``host`` resolves to, all loopback; :class:`ConfigError` naming
    the address otherwise (or when it does not resolve). A literal is never looked up."""
    shown = host if port is None else f"{host}:{port}"
    name = host.strip().strip("[]")
    ip = _ip(name)
    if ip is not None:
        if not _ip_is_loopback(ip):
            raise ConfigError(key, f"{shown}: {_(_REFUSAL)}")
        family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
        return [(family, (str(ip), port or 0))]
    try:
        infos = socket.getaddrinfo(name, port or 0, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as err:
        raise ConfigError(
            key, with_details(f"{shown}: " + _("cannot resolve it") + f"; {_(_REFUSAL)}", str(err))
        ) from err
    found: list[tuple[Any, ...]] = []
    for family, _type, _proto, _name, sockaddr in infos:
        address = _ip(str(sockaddr[0]))
        if address is None or not _ip_is_loopback(address):
            raise ConfigError(
                key,
                _("{address} resolves to {ip}: {refusal}").format(
                    address=shown, ip=sockaddr[0], refusal=_(_REFUSAL)
                ),
            )
        found.append((family, sockaddr))
    if not found:
        raise ConfigError(key, f"{shown}: " + _("resolves to nothing") + f"; {_(_REFUSAL)}")
    return found


def require_loopback_host(key: str, host: str | None, port: int | None = None) -> None:
    """Refuse ``host`` unless it is, or resolves only to, loopback."""
    if not host:
        raise ConfigError(key, _("no host given") + f": {_(_REFUSAL)}")
    loopback_addresses(key, host, port)


def require_loopback(key: str, url: str) -> None:
    """Refuse any URL whose host is not on this machine."""
    try:
        parsed = urlparse(url)
        host, port = parsed.hostname, parsed.port
    except ValueError as err:
        raise ConfigError(
            key, with_details(f"{url!r}: " + _("not a valid address"), str(err))
        ) from err
    if not host:
        raise ConfigError(key, f"{url!r}: " + _("no host") + f"; {_(_REFUSAL)}")
    loopback_addresses(key, host, port)


def require_loopback_redis(key: str, url: str) -> None:
    """Refuse a Redis URL that would connect beyond loopback, read the way redis-py reads it
    (a ``?host=`` in the query counts when the URL has no host of its own)."""
    from redis.connection import parse_url  # noqa: PLC0415 — lazy: redis only for a Redis URL

    try:
        options = parse_url(url)
    except ValueError as err:
        raise ConfigError(
            key, with_details(f"{url!r}: " + _("not a Redis address"), str(err))
        ) from err
    if urlparse(url).scheme == "unix":
        return  # a socket file on this machine
    # any other URL is checked by its host, even with a ?path= in its query (redis-py would
    # not use the socket for a redis:// URL, but the host is what a connection would reach)
    port = options.get("port")
    require_loopback_host(key, str(options.get("host", "localhost")), port)


def require_loopback_dsn(
    key: str, dsn: str, environ: Mapping[str, str] | None = None, **overrides: Any
) -> None:
    """Refuse a Postgres connection string (keywords or URI, plus libpq's ``PG*`` variables)
    that names any host or hostaddr beyond loopback, or a service file (not read here, so
    whatever it names could not be checked). Socket directories (``/...``, ``@...``) pass."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo  # noqa: PLC0415 — lazy: psycopg only for a Postgres DSN

    env = os.environ if environ is None else environ
    try:
        params = conninfo_to_dict(make_conninfo(dsn, **overrides))
    except Exception as err:  # psycopg.ProgrammingError: not a connection string
        raise ConfigError(
            key, with_details(_("not a valid Postgres connection string"), str(err))
        ) from err
    values = {name: str(params.get(name) or env.get(var) or "") for name, var in _PG_ENV.items()}
    if values["service"]:
        raise ConfigError(
            key,
            _(
                "service {service!r}: service files are not read; put host and port in the "
                "connection string ({refusal})"
            ).format(service=values["service"], refusal=_(_REFUSAL)),
        )
    for name in ("host", "hostaddr"):
        for entry in values[name].split(","):
            entry = entry.strip()
            if not entry or (name == "host" and entry.startswith(("/", "@"))):
                continue  # the default Unix socket, or a socket directory
            require_loopback_host(key, entry)


def loopback_bolt_uri(key: str, uri: str) -> str:
    """The Bolt URI to connect to: its host must be loopback, and a routing scheme
    (``neo4j://``) becomes the direct one (``bolt://``), since a routing driver connects to
    whatever addresses the server's routing table lists."""
    try:
        parsed = urlparse(uri)
        host, port = parsed.hostname, parsed.port
    except ValueError as err:
        raise ConfigError(
            key, with_details(_("{uri!r}: not a valid Bolt URI").format(uri=uri), str(err))
        ) from err
    scheme = parsed.scheme.lower()
    if scheme not in _BOLT_SCHEMES and scheme not in _ROUTING_SCHEMES:
        raise ConfigError(key, _("{uri!r}: not a Bolt URI (bolt:// or neo4j://)").format(uri=uri))
    require_loopback_host(key, host, port)
    if scheme in _ROUTING_SCHEMES:
        return parsed._replace(scheme=_ROUTING_SCHEMES[scheme]).geturl()
    return uri


# -- HTTP: no proxies, no redirects, connections to the checked addresses -----------------


def _guarded_create_connection(
    address: tuple[str, int],
    timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,  # type: ignore[attr-defined]
    source_address: tuple[str, int] | None = None,
    *args: Any,
    **kwargs: Any,
) -> socket.socket:
    """``socket.create_connection`` to the loopback addresses ``address`` resolves to."""
    host, port = address
    last: OSError | None = None
    for family, sockaddr in loopback_addresses("url", host, port):
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:  # type: ignore[attr-defined]
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as err:
            sock.close()
            last = err
    assert last is not None
    raise last


class _LoopbackHTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = _guarded_create_connection


class _LoopbackHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = _guarded_create_connection


class _LoopbackHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_LoopbackHTTPConnection, req)


class _LoopbackHTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_LoopbackHTTPSConnection, req)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is returned as the HTTP error it is, never followed."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        _NoRedirect(),
        _LoopbackHTTPHandler(),
        _LoopbackHTTPSHandler(),
    )


def _open(url: str, payload: dict[str, Any] | None, timeout: float) -> Any:
    require_loopback("url", url)
    if urlparse(url).scheme.lower() not in ("http", "https"):
        raise ConfigError("url", _("{url!r}: only http:// or https:// on loopback").format(url=url))
    return _opener().open(_request(url, payload), timeout=timeout)


def _request(url: str, payload: dict[str, Any] | None) -> urllib.request.Request:
    data = None if payload is None else json.dumps(payload).encode("utf-8")
    headers = {"Content-Type": "application/json"} if data else {}
    return urllib.request.Request(url, data=data, headers=headers)


def http_json(url: str, payload: dict[str, Any] | None, timeout: float) -> Any:
    """POST (or GET without payload) JSON and return the decoded reply."""
    try:
        with _open(url, payload, timeout) as reply:
            return json.loads(reply.read().decode("utf-8"))
    except urllib.error.HTTPError as err:
        raise _answered(url, err) from err
    except (TimeoutError, urllib.error.URLError, ConnectionError, OSError) as err:
        raise ModelUnavailableError(_not_reachable(url, err)) from err
    except json.JSONDecodeError as err:
        raise ModelUnavailableError(
            _("{url}: reply is not JSON ({err})").format(url=url, err=err)
        ) from err


def http_probe(url: str, timeout: float) -> Any:
    """GET ``url``: its JSON (None when the reply is an HTTP error or not JSON — the server
    is there all the same); :class:`ModelUnavailableError` only when nothing answers."""
    try:
        with _open(url, None, timeout) as reply:
            return json.loads(reply.read().decode("utf-8"))
    except urllib.error.HTTPError:
        return None
    except (TimeoutError, urllib.error.URLError, ConnectionError, OSError) as err:
        raise ModelUnavailableError(_not_reachable(url, err)) from err
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def http_lines(url: str, payload: dict[str, Any], timeout: float) -> Iterator[bytes]:
    """POST JSON and yield the streamed reply line by line (NDJSON or server-sent events)."""
    try:
        reply = _open(url, payload, timeout)
    except urllib.error.HTTPError as err:
        raise _answered(url, err) from err
    except (TimeoutError, urllib.error.URLError, ConnectionError, OSError) as err:
        raise ModelUnavailableError(_not_reachable(url, err)) from err
    with reply:
        try:
            for line in reply:
                line = line.strip()
                if line:
                    yield line
        except (TimeoutError, ConnectionError, OSError) as err:
            raise ModelUnavailableError(
                failed(_("{url}: stream broken").format(url=url), _unwrapped(err))
            ) from err


def _answered(url: str, err: urllib.error.HTTPError) -> ModelUnavailableError:
    """Something answered, with an HTTP error: reachable, but not what was asked for."""
    if 300 <= err.code < 400:
        where = err.headers.get("Location", "") if err.headers else ""
        return ModelUnavailableError(
            _(
                "{url}: answered HTTP {code}, a redirect to {where}: not followed (Custodia "
                "only connects to this machine (loopback), and never through a redirect)"
            ).format(url=url, code=err.code, where=where or _("elsewhere"))
        )
    detail = str(err.reason or "")
    try:
        body = json.loads(err.read().decode("utf-8"))
        if isinstance(body, dict) and isinstance(body.get("error"), str | dict):
            detail += f": {body['error']}"
    except (ValueError, OSError, UnicodeDecodeError):
        pass
    return ModelUnavailableError(
        with_details(
            _("{url}: answered HTTP {code}; is this the right address and model?").format(
                url=url, code=err.code
            ),
            detail,
        )
    )


def _unwrapped(err: BaseException) -> BaseException:
    """urllib's URLError wraps the OS error that says why (its ``reason``)."""
    if isinstance(err, urllib.error.URLError) and isinstance(err.reason, BaseException):
        return err.reason
    return err


def _not_reachable(url: str, err: BaseException) -> str:
    """``url: not reachable: <cause> (details: <the OS's words>)``, in the user's language."""
    return failed(_("{url}: not reachable").format(url=url), _unwrapped(err))


def pg_connect(dsn: str, **kwargs: Any) -> psycopg.Connection[Any]:
    """``psycopg.connect`` once :func:`require_loopback_dsn` has passed the DSN (and the
    keyword arguments, which libpq reads as part of it)."""
    import psycopg  # noqa: PLC0415 — lazy: psycopg only for Postgres

    where = {k: v for k, v in kwargs.items() if k in ("host", "hostaddr", "service", "port")}
    require_loopback_dsn("postgres_dsn", dsn, **where)
    return psycopg.connect(dsn, **kwargs)
