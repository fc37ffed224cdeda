"""The TTL store on Redis: ``SET key value EX seconds`` (``PX`` for fractions), ``SCAN``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

from backends.errors import StoreUnavailableError
from backends.failures import failed
from backends.i18n import _
from backends.stores.description import Measurement
from backends.stores.engines.redis import RedisServer, redis_client
from backends.stores.server import reached
from backends.stores.ttl import TTLItem, check_ttl

if TYPE_CHECKING:
    import redis

    from backends.config import Config


class RedisTTLStore(RedisServer):
    """Redis: ``SET key value EX seconds`` (``PX`` for fractional TTLs), ``SCAN`` for items."""

    kind = "redis"

    #: the engine, as the storage map names it
    ENGINE = "Redis (SETEX)"

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: Any
    ) -> Measurement:
        """The live keys under ``prefix`` and their memory (``MEMORY USAGE``; None when the
        server refuses it), through the running store or a client of its own with the
        configured timeouts."""
        prefix = str(context.get("prefix", ""))
        with reached(running, lambda: cls.from_config(config)) as store:
            items = store.items(prefix)
            size: int | None = 0
            try:
                for item in items[:10_000]:
                    usage = store.client.memory_usage(item.key)
                    size = (size or 0) + int(usage or 0)
            except Exception:  # MEMORY USAGE may be refused (ACLs): the count still stands
                size = None
            return Measurement(len(items), size)

    def __init__(self, client: redis.Redis, *, close_client: bool = True) -> None:
        self._client = client
        self._close_client = close_client

    @classmethod
    def from_config(cls, config: Config, **context: Any) -> Self:
        """The Redis at ``redis_url``; its own client, closed with the store."""
        return cls(redis_client(config.redis_url, config.network_timeout))

    @classmethod
    def from_url(cls, url: str, timeout: float) -> RedisTTLStore:
        return cls(redis_client(url, timeout))

    @property
    def client(self) -> redis.Redis:
        return self._client

    def _call(self, what: str, fn: Callable[[], object]) -> object:
        import redis  # noqa: PLC0415 — lazy: never imported at start-up

        try:
            return fn()
        except redis.RedisError as err:
            raise StoreUnavailableError(
                failed(_("Redis {command} failed").format(command=what), err)
            ) from err

    def set(self, key: str, value: str, ttl: float) -> None:
        check_ttl(ttl)
        if float(ttl).is_integer():
            self._call("SET", lambda: self._client.set(key, value, ex=int(ttl)))
        else:
            ms = max(1, round(ttl * 1000))
            self._call("SET", lambda: self._client.set(key, value, px=ms))

    def get(self, key: str) -> str | None:
        raw = self._call("GET", lambda: self._client.get(key))
        return None if raw is None else _text(raw)

    def remaining(self, key: str) -> float | None:
        ms = self._call("PTTL", lambda: self._client.pttl(key))
        assert isinstance(ms, int)
        return None if ms < 0 else ms / 1000.0

    def delete(self, key: str) -> bool:
        return bool(self._call("DEL", lambda: self._client.delete(key)))

    def items(self, prefix: str) -> list[TTLItem]:
        def fetch() -> list[TTLItem]:
            keys = list(self._client.scan_iter(match=_glob_escape(prefix) + "*", count=500))
            if not keys:
                return []
            pipe = self._client.pipeline(transaction=False)
            for key in keys:
                pipe.get(key)
                pipe.pttl(key)
            replies = pipe.execute()
            out = []
            for index, key in enumerate(keys):
                value, ms = replies[2 * index], replies[2 * index + 1]
                if value is None or ms is None or ms < 0:
                    continue  # expired between SCAN and GET
                out.append(TTLItem(_text(key), _text(value), ms / 1000.0))
            return out

        result = self._call("SCAN", fetch)
        assert isinstance(result, list)
        return result

    def ping(self) -> None:
        self._call("PING", self._client.ping)

    def close(self) -> None:
        if self._close_client:
            self._client.close()


def _text(raw: object) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)


def _glob_escape(text: str) -> str:
    """Escape Redis glob metacharacters so a prefix matches literally."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
