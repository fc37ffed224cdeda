"""Two families of error, as qutebrowser does it.

:class:`CustodiaEnvironmentError` is the world being unhelpful — a server down, a wrong key,
a wrong embedding dimension, a corrupt file. It carries a message meant for the user and the
caller shows it; nothing already stored is lost. Anything else escaping a backend is a bug:
it goes to the log with a trace.
"""

from __future__ import annotations

from backends.i18n import _


class CustodiaEnvironmentError(Exception):
    """Something outside the code is wrong; ``str(err)`` is fit to show the user."""


class ConfigError(CustodiaEnvironmentError):
    """A configuration value is invalid. ``key`` names the setting.

    Its sentence names the setting in the user's words; the key as ``custodia.toml`` writes
    it and its environment variable are its details (issue 27): "the Ollama address: … is
    not a valid URL (details: ollama_url, CUSTODIA_OLLAMA_URL)".
    """

    def __init__(self, key: str, message: str) -> None:
        # lazy: config and failures raise and read these errors themselves
        from backends import failures  # noqa: PLC0415
        from backends.config import setting_text  # noqa: PLC0415

        said, where = setting_text(key)
        sentence, details = failures.split(message)
        super().__init__(
            failures.with_details(f"{said}: {sentence}", "; ".join(filter(None, (details, where))))
        )
        self.key = key
        self.problem = message


class StoreUnavailableError(CustodiaEnvironmentError):
    """A store (server or file) cannot be reached or used right now."""


class ModelUnavailableError(CustodiaEnvironmentError):
    """A model's files or runtime are missing, corrupt or unreachable."""


class DimensionMismatchError(CustodiaEnvironmentError):
    """Vectors of one dimension met an index or query of another (never an empty result)."""

    def __init__(self, expected: int, got: int, where: str) -> None:
        super().__init__(
            _(
                "{where}: embedding dimension mismatch — the index holds {expected}-d vectors, "
                "this embedder produces {got}-d. Re-embed to switch models."
            ).format(where=where, expected=expected, got=got)
        )
        self.expected = expected
        self.got = got
        self.where = where


class EmbedderMismatchError(DimensionMismatchError):
    """Same dimension, another embedder: the vectors are still not comparable.

    One family for every vector store (the semantic memory, the conversations index, the
    tutor's chunks): catch :class:`DimensionMismatchError` for both kinds of mismatch."""

    def __init__(
        self,
        recorded: str,
        current: str,
        where: str,
        *,
        dimension: int = 0,
        advice: str = "",
    ) -> None:
        super().__init__(dimension, dimension, where)
        self.args = (
            _(
                "{where}: the index was built with the embedder {recorded!r}, the configured "
                "one is {current!r}; their vectors cannot be compared."
            ).format(where=where, recorded=recorded, current=current)
            + " "
            + (advice or _("Rebuild the index to switch.")),
        )
        self.recorded = recorded
        self.current = current


class InvalidVectorError(CustodiaEnvironmentError):
    """Not a finite, non-zero vector (NaN, infinity, all zeros, not numbers): never stored."""


class CancelledError(CustodiaEnvironmentError):
    """Long work stopped because the user asked it to."""
