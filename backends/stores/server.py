"""What a store kept by a server says about itself: the counterpart of
:class:`~backends.stores.description.SqliteFile` for the server engines.

The configuration names the server by one setting (a URL or a DSN, :attr:`ServerStore.URL_SETTING`).
Its data outlives this process (``SHARED``); the storage map shows where it is without the
password; the doctor reaches it with the configured timeouts; it is measured through the
instance the process runs or, from outside the process, through a short-lived one of its own
(closed after: :func:`reached`). :class:`ServerOrFolder` is the engine that runs
as a server when its URL is set and in a local folder otherwise (Chroma, Qdrant).

Kept out of :mod:`backends.stores.description` so that module imports no configuration code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeVar

from backends.config import redact_url
from backends.errors import CustodiaEnvironmentError
from backends.failures import failed
from backends.i18n import _
from backends.net import http_json
from backends.stores.description import Probed, SelfDescribing, dir_size, writable_folder

if TYPE_CHECKING:
    from backends.config import Config


class Closable(Protocol):
    """A store :func:`reached` closes once done with its own."""

    def close(self) -> None: ...


C = TypeVar("C", bound=Closable)


@contextmanager
def reached(running: Callable[[], C] | None, open_own: Callable[[], C]) -> Iterator[C]:
    """The instance the process runs, else one of the store's own (``open_own``: its
    ``from_config``, with the configured timeouts), closed when the block ends."""
    if running is not None:
        yield running()
        return
    store = open_own()
    try:
        yield store
    finally:
        store.close()


class ServerStore(SelfDescribing):
    """The self-description of a store on a server the configuration names."""

    SHARED: ClassVar[bool] = True
    #: the configuration's setting naming the server ("redis_url", "postgres_dsn", ...)
    URL_SETTING: ClassVar[str] = ""

    @classmethod
    def server_url(cls, config: Config) -> str:
        """The server's URL or DSN as configured (with its password: never shown)."""
        return str(getattr(config, cls.URL_SETTING))

    @classmethod
    def locate(cls, config: Config, **context: object) -> str:
        """The server, its password replaced by ``***``."""
        return redact_url(cls.server_url(config))

    @classmethod
    def unreachable(cls, err: BaseException) -> CustodiaEnvironmentError:
        """The doctor's error for a server that did not answer."""
        return CustodiaEnvironmentError(
            failed(_("{product} not reachable").format(product=cls.PRODUCT), err)
        )

    @classmethod
    def http_version(cls, config: Config, path: str) -> Probed:
        """The ``version`` of the JSON the server answers at ``path`` (the configured
        timeout; "" when the answer names none)."""
        url = cls.server_url(config).rstrip("/") + path
        reply = http_json(url, None, config.network_timeout)
        return Probed(str(reply.get("version", "")) if isinstance(reply, dict) else "")


class ServerOrFolder(ServerStore):
    """An engine that is a server when :attr:`URL_SETTING` is set, else a local folder
    (:attr:`FOLDER_SETTING`): shown as the server's URL or the folder, probed by its
    :attr:`VERSION_PATH` or by writing into the folder, sized by the folder only."""

    #: the configuration's setting naming the local folder
    FOLDER_SETTING: ClassVar[str] = ""
    #: where the server answers its version
    VERSION_PATH: ClassVar[str] = "/"

    @classmethod
    def folder(cls, config: Config) -> Path:
        return Path(getattr(config, cls.FOLDER_SETTING))

    @classmethod
    def shared_for(cls, config: Config) -> bool:
        """Only the server's data outlives this process."""
        return bool(cls.server_url(config))

    @classmethod
    def locate(cls, config: Config, **context: object) -> str:
        return redact_url(cls.server_url(config)) or str(cls.folder(config))

    @classmethod
    def checkup(cls, config: Config, **context: object) -> Probed:
        """The server's version, or the local folder is writable."""
        if not cls.server_url(config):
            return writable_folder(cls.folder(config))
        return cls.http_version(config, cls.VERSION_PATH)

    @classmethod
    def created(cls, config: Config, **context: object) -> bool:
        """A server is there; a folder once something made it."""
        return bool(cls.server_url(config)) or cls.folder(config).exists()

    @classmethod
    def folder_size(cls, config: Config) -> int | None:
        """The bytes the local folder takes (None: a server's own disk)."""
        return None if cls.server_url(config) else dir_size(cls.folder(config))
