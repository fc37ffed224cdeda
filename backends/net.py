"""The only HTTP the app does: JSON to a model runtime on loopback, always with a timeout.

Custodia never connects beyond loopback (DC4): a non-loopback URL is refused before any
socket is opened.
"""

from __future__ import annotations

import ipaddress
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

from backends.errors import ConfigError, ModelUnavailableError

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_loopback(key: str, url: str) -> None:
    """Refuse any URL whose host is not on this machine."""
    host = urlparse(url).hostname
    if not is_loopback_host(host):
        raise ConfigError(key, f"{url!r}: Custodia only connects to this machine (loopback)")


def _request(url: str, payload: dict[str, Any] | None) -> urllib.request.Request:
    data = None if payload is None else json.dumps(payload).encode("utf-8")
    headers = {"Content-Type": "application/json"} if data else {}
    return urllib.request.Request(url, data=data, headers=headers)


def http_json(url: str, payload: dict[str, Any] | None, timeout: float) -> Any:
    """POST (or GET without payload) JSON and return the decoded reply."""
    require_loopback("url", url)
    try:
        with urllib.request.urlopen(_request(url, payload), timeout=timeout) as reply:
            return json.loads(reply.read().decode("utf-8"))
    except urllib.error.HTTPError as err:
        raise _answered(url, err) from err
    except (TimeoutError, urllib.error.URLError, ConnectionError, OSError) as err:
        raise ModelUnavailableError(f"{url}: not reachable ({_reason(err)})") from err
    except json.JSONDecodeError as err:
        raise ModelUnavailableError(f"{url}: reply is not JSON ({err})") from err


def http_probe(url: str, timeout: float) -> Any:
    """GET ``url``: its JSON (None when the reply is an HTTP error or not JSON — the server
    is there all the same); :class:`ModelUnavailableError` only when nothing answers."""
    require_loopback("url", url)
    try:
        with urllib.request.urlopen(_request(url, None), timeout=timeout) as reply:
            return json.loads(reply.read().decode("utf-8"))
    except urllib.error.HTTPError:
        return None
    except (TimeoutError, urllib.error.URLError, ConnectionError, OSError) as err:
        raise ModelUnavailableError(f"{url}: not reachable ({_reason(err)})") from err
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def http_lines(url: str, payload: dict[str, Any], timeout: float) -> Iterator[bytes]:
    """POST JSON and yield the streamed reply line by line (NDJSON or server-sent events)."""
    require_loopback("url", url)
    try:
        reply = urllib.request.urlopen(_request(url, payload), timeout=timeout)
    except urllib.error.HTTPError as err:
        raise _answered(url, err) from err
    except (TimeoutError, urllib.error.URLError, ConnectionError, OSError) as err:
        raise ModelUnavailableError(f"{url}: not reachable ({_reason(err)})") from err
    with reply:
        try:
            for line in reply:
                line = line.strip()
                if line:
                    yield line
        except (TimeoutError, ConnectionError, OSError) as err:
            raise ModelUnavailableError(f"{url}: stream broken ({_reason(err)})") from err


def _answered(url: str, err: urllib.error.HTTPError) -> ModelUnavailableError:
    """Something answered, with an HTTP error: reachable, but not what was asked for."""
    detail = ""
    try:
        body = json.loads(err.read().decode("utf-8"))
        if isinstance(body, dict) and isinstance(body.get("error"), str | dict):
            detail = f": {body['error']}"
    except (ValueError, OSError, UnicodeDecodeError):
        pass
    return ModelUnavailableError(
        f"{url}: answered HTTP {err.code} ({err.reason}){detail}; is this the right address "
        "and model?"
    )


def _reason(err: BaseException) -> str:
    if isinstance(err, urllib.error.URLError) and err.reason:
        return str(err.reason)
    return str(err) or type(err).__name__
