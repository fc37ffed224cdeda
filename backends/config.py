"""Configuration: defaults < ``custodia.toml`` in the data dir < environment.

Each store is chosen on its own (DC3), so a user can mix, e.g. everything embedded but the
audit log in Postgres. ``profile = "server"`` only changes the *defaults* of the stores that
have a server URL configured. Every value is validated here; a bad one is a
:class:`~backends.errors.ConfigError` naming the key.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import platformdirs
import tomli_w

from backends import assistants
from backends.errors import ConfigError
from backends.i18n import N_, _
from backends.models import settings as generation_settings
from backends.models.settings import GenerationSettings

CONFIG_FILE = "custodia.toml"
PROFILES = ("embedded", "server")
CACHE_BACKENDS = ("memory", "redis")
AUDIT_BACKENDS = ("sqlite", "postgres")
GRAPH_BACKENDS = ("sqlite", "neo4j")
# Names understood by backends.models.registry; "ollama:<model>" and "openai:<model>" too,
# and "gguf:<path or name>" for a GGUF file of the user's.
EMBEDDERS = ("minilm", "use-multilingual", "hashing")
CHAT_MODELS = ("smollm2", "retrieval-only", "scripted")
#: the window's and the commands' language: "system" follows the desktop's locale
LANGUAGES = ("system", "en", "es")
#: chat models for testers only: accepted from the file and the environment, never offered
TEST_CHAT_MODELS = ("scripted",)
#: the longest network timeout accepted, in seconds
MAX_TIMEOUT = 3600.0

#: environment variable -> config field
ENVIRONMENT = {
    "CUSTODIA_PROFILE": "profile",
    "CUSTODIA_REDIS_URL": "redis_url",
    "CUSTODIA_POSTGRES_DSN": "postgres_dsn",
    "CUSTODIA_NEO4J_URI": "neo4j_uri",
    "CUSTODIA_NEO4J_USER": "neo4j_user",
    "CUSTODIA_NEO4J_PASSWORD": "neo4j_password",
    "CUSTODIA_NEO4J_DATABASE": "neo4j_database",
    "CUSTODIA_QDRANT_URL": "qdrant_url",
    "CUSTODIA_CHROMA_URL": "chroma_url",
    "CUSTODIA_CHAT_MODEL": "chat_model",
    "CUSTODIA_EMBEDDER": "embedder",
    "CUSTODIA_OLLAMA_URL": "ollama_url",
    "CUSTODIA_LANGUAGE": "language",
    "CUSTODIA_OPENAI_URL": "openai_url",
    "CONVERSATIONS_KEY": "conversations_key",
}


#: environment variable -> the assistant whose model it sets (``[models]`` in the file)
def assistant_environment() -> dict[str, str]:
    """``CUSTODIA_<ASSISTANT>_MODEL`` → the assistant, for each registered assistant."""
    return {f"CUSTODIA_{name.upper()}_MODEL": name for name in assistants.names()}


#: the settings as people read them, in an error's sentence (issue 27: the key as
#: custodia.toml writes it and its environment variable are the error's details)
SETTING_NAMES: dict[str, str] = {
    "home": N_("the data folder"),
    "profile": N_("the profile"),
    "language": N_("the language"),
    "cache_backend": N_("the cache's engine"),
    "audit_backend": N_("the audit log's engine"),
    "graph_backend": N_("the graph's engine"),
    "redis_url": N_("the Redis address"),
    "postgres_dsn": N_("the Postgres connection"),
    "neo4j_uri": N_("the Neo4j address"),
    "neo4j_user": N_("the Neo4j user"),
    "neo4j_password": N_("the Neo4j password"),
    "neo4j_database": N_("the Neo4j database"),
    "qdrant_url": N_("the Qdrant address"),
    "chroma_url": N_("the Chroma address"),
    "embedder": N_("the embedder"),
    "tutor_spanish_embedder": N_("the tutor's embedder for Spanish"),
    "chat_model": N_("the chat model"),
    "model_folders": N_("the model folders"),
    "models": N_("the assistants' chat models"),
    "generation": N_("the generation settings"),
    "ollama_url": N_("the Ollama address"),
    "openai_url": N_("the address of the OpenAI-compatible server"),
    "conversations_key": N_("the conversations key"),
    "network_timeout": N_("the network timeout"),
    "url": N_("the address"),
}


def setting_text(key: str) -> tuple[str, str]:
    """A setting in the user's words, and its details: the key as ``custodia.toml`` writes it
    and its environment variable (``("la dirección de Ollama", "ollama_url,
    CUSTODIA_OLLAMA_URL")``). A key Custodia does not know, or a file, is itself."""
    field_ = ENVIRONMENT.get(key, key)  # a variable's name: its setting
    head = re.split(r"[.\[]", field_, maxsplit=1)[0]  # models.tutor, model_folders[0]
    if head not in SETTING_NAMES:
        return key, ""
    variable = next((v for v, f in ENVIRONMENT.items() if f == field_), "")
    said = _(SETTING_NAMES[head])
    if head == "models" and field_ != head:
        assistant = field_.partition(".")[2]
        said = _("the chat model of {assistant}").format(assistant=_assistant_title(assistant))
        variable = next((v for v, a in assistant_environment().items() if a == assistant), "")
    return said, ", ".join(filter(None, (field_, variable)))


def _assistant_title(name: str) -> str:
    """The assistant ``name`` as the user reads it ("tutor clínico"), else ``name``."""
    try:
        declared = assistants.get(name)
    except (KeyError, ImportError, TypeError):
        return name
    return _(declared.label or declared.title)


#: fields never written back to custodia.toml (secrets stay in the environment or keyring)
SECRET_FIELDS = frozenset({"neo4j_password", "conversations_key"})


def default_home() -> Path:
    """The data dir: ``CUSTODIA_HOME`` or the platform's user data dir."""
    env = os.environ.get("CUSTODIA_HOME")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("custodia", appauthor=False))


@dataclass(frozen=True)
class Config:
    """Everything the start-up module needs to build the backends."""

    home: Path = field(default_factory=default_home)
    profile: str = "embedded"
    # Stores. Empty string = not configured.
    cache_backend: str = ""  # sessions L2, tickets, live feed: memory | redis
    audit_backend: str = ""  # sqlite | postgres
    graph_backend: str = ""  # sqlite | neo4j
    redis_url: str = ""
    postgres_dsn: str = ""
    neo4j_uri: str = ""
    neo4j_user: str = "neo4j"
    neo4j_password: str = ""
    neo4j_database: str = ""  # empty: the Neo4j user's home database (the server's default)
    qdrant_url: str = ""  # empty: qdrant-edge (embedded) under home
    chroma_url: str = ""  # empty: persistent local Chroma under home
    # Models.
    embedder: str = "minilm"
    #: the tutor's second vector, searched for Spanish questions only: "auto" (the multilingual
    #: USE when ``embedder`` is MiniLM), "none", or an embedder name (docs/TUTOR.md)
    tutor_spanish_embedder: str = "auto"
    chat_model: str = "smollm2"  # every assistant's, unless ``models`` names another
    #: folders searched for ``.gguf`` files besides ``<home>/models``
    model_folders: tuple[str, ...] = ()
    #: ``[models]``: assistant -> chat model (one not named uses ``chat_model``)
    models: dict[str, str] = field(default_factory=dict)
    #: ``[generation.<assistant>]`` and ``[generation."<model>"]``: generation settings
    generation: dict[str, dict[str, Any]] = field(default_factory=dict)
    ollama_url: str = "http://127.0.0.1:11434"
    openai_url: str = ""
    # Secrets.
    conversations_key: str = ""
    # Timeouts for every network call, in seconds.
    network_timeout: float = 5.0
    #: the window's and the commands' language (backends/i18n.py); read at start-up
    language: str = "system"

    def __post_init__(self) -> None:
        object.__setattr__(self, "home", Path(self.home).expanduser())

    # -- resolved choices ------------------------------------------------------------------
    @property
    def cache(self) -> str:
        if self.cache_backend:
            return self.cache_backend
        return "redis" if self.profile == "server" and self.redis_url else "memory"

    @property
    def audit(self) -> str:
        if self.audit_backend:
            return self.audit_backend
        return "postgres" if self.profile == "server" and self.postgres_dsn else "sqlite"

    @property
    def graph(self) -> str:
        if self.graph_backend:
            return self.graph_backend
        return "neo4j" if self.profile == "server" and self.neo4j_uri else "sqlite"

    @property
    def qdrant_path(self) -> Path:
        """qdrant-client's local-mode folder (before issue 19): moved over at the first start."""
        return self.home / "qdrant"

    @property
    def qdrant_edge_path(self) -> Path:
        """The embedded semantic memory: qdrant-edge shards (one per collection)."""
        return self.home / "qdrant-edge"

    @property
    def chroma_path(self) -> Path:
        return self.home / "chroma"

    def path(self, name: str) -> Path:
        """A file or folder inside the data dir."""
        return self.home / name

    def model_for(self, assistant: str) -> str:
        """The chat model ``assistant`` uses: its ``[models]`` entry, else ``chat_model``."""
        return self.models.get(assistant) or self.chat_model

    def generation_for(self, assistant: str, model: str | None = None) -> GenerationSettings:
        """The settings ``assistant`` generates with (see backends/models/settings.py)."""
        return generation_settings.resolve(
            assistant, model or self.model_for(assistant), self.generation
        )

    # -- validation ------------------------------------------------------------------------
    def validated(self) -> Config:
        """Return self, or raise :class:`ConfigError` naming the first bad key."""
        self._validate_choices()
        self._validate_addresses()
        self._validate_models()
        self._validate_generation()
        if not 0 < self.network_timeout <= MAX_TIMEOUT:  # NaN and inf fail too
            raise ConfigError(
                "network_timeout",
                _("must be a number of seconds above 0, at most {most}").format(most=MAX_TIMEOUT),
            )
        if "\x00" in str(self.home):
            raise ConfigError(
                "home", _("{value!r} contains a NUL character").format(value=str(self.home))
            )
        return self

    def _validate_choices(self) -> None:
        """The profile, the language and the engines each one of their choices."""
        _choice("profile", self.profile, PROFILES)
        _choice("language", self.language, LANGUAGES)
        if self.cache_backend:
            _choice("cache_backend", self.cache_backend, CACHE_BACKENDS)
        if self.audit_backend:
            _choice("audit_backend", self.audit_backend, AUDIT_BACKENDS)
        if self.graph_backend:
            _choice("graph_backend", self.graph_backend, GRAPH_BACKENDS)

    def _validate_addresses(self) -> None:
        """Every server address well formed, and each chosen server given one."""
        _url("redis_url", self.redis_url, ("redis", "rediss", "unix"))
        if _keyword_dsn(self.postgres_dsn):
            _check_keyword_dsn("postgres_dsn", self.postgres_dsn)
        else:
            _url("postgres_dsn", self.postgres_dsn, ("postgresql", "postgres"))
        _url("neo4j_uri", self.neo4j_uri, ("bolt", "neo4j", "bolt+s", "neo4j+s"))
        if self.neo4j_database and not re.fullmatch(r"[a-z][a-z0-9.\-]{2,62}", self.neo4j_database):
            raise ConfigError(
                "neo4j_database",
                _(
                    "{value!r} is not a Neo4j database name (3 to 63 lowercase "
                    "letters, digits, dots or dashes, starting with a letter)"
                ).format(value=self.neo4j_database),
            )
        for key in ("qdrant_url", "chroma_url", "ollama_url", "openai_url"):
            _url(key, getattr(self, key), ("http", "https"))
        if self.cache == "redis" and not self.redis_url:
            raise ConfigError("redis_url", _("the Redis cache is selected but no URL is set"))
        if self.audit == "postgres" and not self.postgres_dsn:
            raise ConfigError("postgres_dsn", _("the Postgres audit log is selected but no DSN"))
        if self.graph == "neo4j" and not self.neo4j_uri:
            raise ConfigError("neo4j_uri", _("the Neo4j graph is selected but no URI is set"))

    def _validate_models(self) -> None:
        """The embedders, the chat model, the models' folders and ``[models]``."""
        _model_name("embedder", self.embedder, EMBEDDERS)
        if self.tutor_spanish_embedder not in ("auto", "none"):
            _model_name("tutor_spanish_embedder", self.tutor_spanish_embedder, EMBEDDERS)
        _model_name("chat_model", self.chat_model, CHAT_MODELS)
        for index, folder in enumerate(self.model_folders):
            if not folder.strip() or "\x00" in folder:
                raise ConfigError(
                    f"model_folders[{index}]",
                    _("{value!r} is not a folder path").format(value=folder),
                )
        for assistant, model in self.models.items():
            if assistant not in assistants.names():
                raise ConfigError(
                    f"models.{assistant}",
                    _("unknown assistant; known: {names}").format(
                        names=", ".join(assistants.names())
                    ),
                )
            if model:
                _model_name(f"models.{assistant}", model, CHAT_MODELS)

    def _validate_generation(self) -> None:
        """Each ``[generation.<assistant or model>]`` names one, and its settings parse."""
        for name, table in self.generation.items():
            if name not in assistants.names():
                try:
                    _model_name(f"generation.{_toml_key(name)}", name, CHAT_MODELS)
                except ConfigError:
                    raise ConfigError(
                        f"generation.{_toml_key(name)}",
                        _("names neither an assistant ({names}) nor a chat model").format(
                            names=", ".join(assistants.names())
                        ),
                    ) from None
            try:
                generation_settings.parse(table)
            except generation_settings.SettingError as err:
                key = f"generation.{_toml_key(name)}" + (f".{err.name}" if err.name else "")
                raise ConfigError(key, str(err)) from None

    def to_toml_dict(self) -> dict[str, Any]:
        """What the settings dialog writes: everything but the data dir and secrets."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "home" or f.name in SECRET_FIELDS:
                continue
            value = getattr(self, f.name)
            if f.name in _TABLES:
                value = {k: v for k, v in value.items() if v not in ("", {}, None)}
                if not value:
                    continue  # no empty tables in the file
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    def redacted(self) -> dict[str, Any]:
        """For logs and ``doctor``: secrets and passwords inside URLs hidden."""
        out = asdict(self)
        out["home"] = str(self.home)
        for name in SECRET_FIELDS:
            if out[name]:
                out[name] = "***"
        for name in ("redis_url", "postgres_dsn"):
            out[name] = redact_url(out[name])
        return out


_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)([^@\s]*)(@)")
_KEYWORD_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def redact_url(url: str) -> str:
    """``scheme://user:secret@host`` -> ``scheme://user:***@host``, and ``password=secret``
    (libpq's keyword form, which ``custodia audit bootstrap`` prints) -> ``password=***``.
    Works on text that does not even parse as a URL: it goes into error messages too."""
    if not url:
        return url
    return _URL_PASSWORD.sub(r"\1***\3", _KEYWORD_PASSWORD.sub(r"\1***", url))


def _keyword_dsn(value: str) -> bool:
    """libpq's ``host=... user=... password=...`` form (no scheme)."""
    return "=" in value and "://" not in value


def _check_keyword_dsn(key: str, value: str) -> None:
    """A keyword DSN must parse (libpq's own rules) and name a host."""
    from psycopg import conninfo  # noqa: PLC0415 — lazy: psycopg only for a Postgres DSN

    try:
        params = conninfo.conninfo_to_dict(value)
    except Exception as err:  # psycopg.ProgrammingError; any parse failure is the user's
        raise ConfigError(
            key, _("{value!r} is not a valid DSN ({why})").format(value=redact_url(value), why=err)
        ) from None
    if not (params.get("host") or params.get("hostaddr")):
        raise ConfigError(
            key, _("{value!r} names no host (add host=127.0.0.1)").format(value=redact_url(value))
        )


def _choice(key: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(
            key,
            _("{value!r} is not one of {allowed}").format(value=value, allowed=", ".join(allowed)),
        )


def _url(key: str, value: str, schemes: tuple[str, ...]) -> None:
    if not value:
        return
    shown = redact_url(value)  # never a password in a message
    try:
        parsed = urlparse(value)
        parsed.port  # noqa: B018 - raises ValueError for a port that cannot exist
    except ValueError as err:
        raise ConfigError(
            key, _("{value!r} is not a valid URL ({why})").format(value=shown, why=err)
        ) from None
    if parsed.scheme not in schemes:
        raise ConfigError(
            key,
            _("{value!r} must start with one of {schemes}").format(
                value=shown, schemes=", ".join(f"{scheme}://" for scheme in schemes)
            ),
        )
    if parsed.scheme != "unix" and not parsed.hostname:
        raise ConfigError(key, _("{value!r} has no host").format(value=shown))


def _model_name(key: str, value: str, builtin: tuple[str, ...]) -> None:
    if value in builtin:
        return
    kind, _sep, model = value.partition(":")
    if kind in ("ollama", "openai", "hashing", "gguf") and model.strip():
        return
    raise ConfigError(
        key,
        _(
            "{value!r} is not one of {names}, gguf:<path or name>, ollama:<model> or openai:<model>"
        ).format(value=value, names=", ".join(builtin)),
    )


def _toml_key(name: str) -> str:
    """A table name as it is written in TOML (quoted when it is not a bare key)."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else f'"{name}"'


#: fields that are TOML tables
_TABLES = ("models", "generation")


_FIELD_TYPES = {f.name: f.type for f in fields(Config)}


def _coerce(key: str, value: Any) -> Any:
    """A value of ``custodia.toml`` (or the environment) as the field's type, or why not."""
    if key not in _FIELD_TYPES or key == "home":
        raise ConfigError(key, _("unknown setting"))
    special = _COERCE.get(key)
    if special is not None:
        return special(key, value)
    if not isinstance(value, str):
        raise ConfigError(key, _("{value!r} must be text").format(value=value))
    return value.strip()


def _coerce_folders(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(key, _("{value!r} must be a list of folder paths").format(value=value))
    return tuple(v.strip() for v in value)


def _coerce_models(key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ConfigError(key, _('must be a table: [models] then tutor = "gguf:…"'))
    for name, model in value.items():
        if not isinstance(model, str):
            raise ConfigError(f"models.{name}", _("{value!r} must be text").format(value=model))
    return {name: model.strip() for name, model in value.items()}


def _coerce_generation(key: str, value: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict):
        raise ConfigError(key, _("must hold tables: [generation.tutor] then temperature = 0.1"))
    for name, table in value.items():
        if not isinstance(table, dict):
            raise ConfigError(f"generation.{_toml_key(name)}", _("must be a table of settings"))
    return {name: dict(table) for name, table in value.items()}


def _coerce_seconds(key: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ConfigError(key, _("{value!r} is not a number").format(value=value))
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError(key, _("{value!r} is not a number").format(value=value)) from None


#: the fields that are not text, each with its own coercion
_COERCE: dict[str, Callable[[str, Any], Any]] = {
    "model_folders": _coerce_folders,
    "models": _coerce_models,
    "generation": _coerce_generation,
    "network_timeout": _coerce_seconds,
}


def _read_settings(file: Path) -> str | None:
    """The text of ``custodia.toml``; None when there is none. One that cannot be read
    (another user's 0600 file, a folder in its place) is a :class:`ConfigError` naming it,
    never a traceback."""
    try:
        raw = file.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        # no file there, or no data folder at all (a file stands where it would be): the
        # folder's own error, "cannot create the data folder", is the one to show
        return None
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise ConfigError(str(file), _("cannot be read ({why})").format(why=reason)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(str(file), _("not valid TOML: {why}").format(why=err)) from None


def load(environ: Mapping[str, str] | None = None, home: Path | None = None) -> Config:
    """Defaults < ``custodia.toml`` < environment; validated."""
    env = os.environ if environ is None else environ
    if home is None:
        home = Path(env["CUSTODIA_HOME"]).expanduser() if env.get("CUSTODIA_HOME") else None
    config = Config() if home is None else Config(home=home)
    if "\x00" in str(config.home):  # before any file is read from it (the OS refuses NULs)
        raise ConfigError(
            "home", _("{value!r} contains a NUL character").format(value=str(config.home))
        )
    file = config.home / CONFIG_FILE
    text = _read_settings(file)
    if text is not None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise ConfigError(str(file), _("not valid TOML: {why}").format(why=err)) from None
        config = replace(config, **{k: _coerce(k, v) for k, v in data.items()})
    overrides = {
        field_: _coerce(field_, env[var]) for var, field_ in ENVIRONMENT.items() if var in env
    }
    models = {a: env[var].strip() for var, a in assistant_environment().items() if var in env}
    if models:
        overrides["models"] = {**config.models, **models}
    if overrides:
        config = replace(config, **overrides)
    return config.validated()


def save(config: Config) -> Path:
    """Write the non-secret settings to ``custodia.toml`` atomically; return its path."""
    config.validated()
    config.home.mkdir(parents=True, exist_ok=True, mode=0o700)
    file = config.home / CONFIG_FILE
    tmp = file.with_suffix(".toml.tmp")
    tmp.write_text(tomli_w.dumps(config.to_toml_dict()), encoding="utf-8")
    os.chmod(tmp, 0o600)
    os.replace(tmp, file)
    return file


def update_file(home: Path, change: Callable[[Config], Config]) -> Config:
    """Apply ``change`` to the settings as ``custodia.toml`` has them (the environment's
    overrides are not copied into it) and save; the saved configuration is returned. A file
    that does not load is left as it is (:class:`ConfigError`)."""
    saved = change(load({}, home=home))
    save(saved)
    return saved
