"""Builds the configured embedder and chat model by name.

Fakes are ordinary entries of the same registry (the simonw/llm way), so a tester selects
``hashing`` and ``scripted`` through configuration exactly as a user selects a real model.
When the configured chat model cannot load, the registry falls back to the clearly labelled
retrieval-only mode (DC4) and says why.

Each assistant may have its own model (``[models]`` in ``custodia.toml``) and generation
settings; a GGUF file (``gguf:<path or name>``) is read and measured against the machine's
memory before llama.cpp is asked to load it, so a file that cannot work is refused with the
reason instead of failing half-way.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from backends.config import Config
from backends.errors import ConfigError, CustodiaEnvironmentError
from backends.failures import with_details
from backends.i18n import N_, _
from backends.models import local, manage
from backends.models.chat import (
    ChatModel,
    LlamaCppChat,
    OllamaChat,
    OpenAICompatibleChat,
    RetrievalOnlyChat,
    ScriptedChat,
    TunedChat,
)
from backends.models.embedders import (
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    OllamaEmbedder,
    UniversalSentenceEncoder,
)
from backends.models.files import SMOLLM2_GGUF
from backends.models.settings import RUNTIME_DEFAULTS, GenerationSettings

log = logging.getLogger(__name__)

EmbedderFactory = Callable[[Config, str], Embedder]
ChatFactory = Callable[[Config, str], ChatModel]

EMBEDDER_FACTORIES: dict[str, EmbedderFactory] = {
    "minilm": lambda config, arg: MiniLMEmbedder(),
    "use-multilingual": lambda config, arg: UniversalSentenceEncoder(),
    "hashing": lambda config, arg: HashingEmbedder(int(arg) if arg else 384),
    "ollama": lambda config, arg: OllamaEmbedder(
        arg or "nomic-embed-text", config.ollama_url, config.network_timeout
    ),
}

SMOLLM2_NAME = "SmolLM2-135M-Instruct"


def model_folders(config: Config) -> list[Path]:
    """Where ``.gguf`` files are looked for: ``<home>/models`` and ``model_folders``."""
    return local.model_folders(config.home, config.model_folders)


def load_gguf(
    path: Path,
    settings: GenerationSettings = RUNTIME_DEFAULTS,
    memory: local.MemorySource = local.machine_memory,
    name: str = "",
) -> LlamaCppChat:
    """Load a GGUF file for chat, after checking what can be checked without loading it:
    a GGUF header, an architecture llama.cpp knows, a chat template, memory enough."""
    info = local.read_gguf(path)
    local.check_usable(info)
    available = memory()
    # never more than the file was trained on, nor than memory holds (the reason is kept)
    context, note = manage.context_bound(info, settings.context_size, available)
    needed = local.check_fits(info, context, available)
    details = {**info.describe(), "memory_needed": needed, "context_note": note}
    # the file's name (what the user copied and picks) names the answers, not general.name
    return LlamaCppChat(path, name or path.stem, context, settings.threads or 0, details)


CHAT_FACTORIES: dict[str, ChatFactory] = {
    "smollm2": lambda config, arg: load_gguf(SMOLLM2_GGUF.verified(), name=SMOLLM2_NAME),
    "gguf": lambda config, arg: load_gguf(local.resolve(arg, model_folders(config))),
    "scripted": lambda config, arg: ScriptedChat(),
    "retrieval-only": lambda config, arg: RetrievalOnlyChat("selected in settings"),
    "ollama": lambda config, arg: OllamaChat(arg, config.ollama_url, config.network_timeout),
    "openai": lambda config, arg: OpenAICompatibleChat(
        arg, config.openai_url or "http://127.0.0.1:8080/v1", config.network_timeout
    ),
}


def register_embedder(name: str, factory: EmbedderFactory) -> None:
    EMBEDDER_FACTORIES[name] = factory


def register_chat_model(name: str, factory: ChatFactory) -> None:
    CHAT_FACTORIES[name] = factory


def _split(key: str, value: str, table: dict[str, object]) -> tuple[str, str]:
    kind, _sep, arg = value.partition(":")
    if kind not in table:
        raise ConfigError(
            key,
            _("unknown model {value!r}; known: {names}").format(
                value=value, names=", ".join(sorted(table))
            ),
        )
    return kind, arg


def create_embedder(config: Config) -> Embedder:
    """The configured embedder, or a :class:`CustodiaEnvironmentError` saying why not."""
    kind, arg = _split("embedder", config.embedder, EMBEDDER_FACTORIES)  # type: ignore[arg-type]
    try:
        return EMBEDDER_FACTORIES[kind](config, arg)
    except ValueError as err:
        raise ConfigError(
            "embedder",
            with_details(
                _("{value!r} cannot be used as the embedder").format(value=config.embedder),
                str(err),
            ),
        ) from err


@dataclass(frozen=True)
class ChatChoice:
    model: ChatModel
    #: why the configured model was replaced by retrieval-only mode ("" when it was not)
    fallback_reason: str = ""


def build_chat_model(
    config: Config,
    key: str,
    settings: GenerationSettings = RUNTIME_DEFAULTS,
    memory: local.MemorySource = local.machine_memory,
) -> ChatModel:
    """The model ``key`` names, loaded with ``settings``' context size and threads (raises
    :class:`CustodiaEnvironmentError` saying why it cannot be used)."""
    kind, arg = _split("chat_model", key, CHAT_FACTORIES)  # type: ignore[arg-type]
    if kind == "smollm2":
        return load_gguf(SMOLLM2_GGUF.verified(), settings, memory, SMOLLM2_NAME)
    if kind == "gguf":
        return load_gguf(local.resolve(arg, model_folders(config)), settings, memory)
    return CHAT_FACTORIES[kind](config, arg)


def load_key(key: str, settings: GenerationSettings) -> tuple[str, int | None, int | None]:
    """What makes two loads the same loaded model (sampling settings do not)."""
    return (key, settings.context_size, settings.threads)


class LoadedModels:
    """Loaded models shared by the assistants that use the same file with the same context
    size (a llama.cpp context serves one stream at a time; its lock takes turns)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[tuple[str, int | None, int | None], ChatModel] = {}
        self._loading: dict[tuple[str, int | None, int | None], threading.Lock] = {}

    def get(
        self, key: tuple[str, int | None, int | None], build: Callable[[], ChatModel]
    ) -> ChatModel:
        with self._lock:
            if key in self._models:
                return self._models[key]
            gate = self._loading.setdefault(key, threading.Lock())
        with gate:  # one load per key, however many assistants ask at once
            with self._lock:
                if key in self._models:
                    return self._models[key]
            model = build()
            with self._lock:
                self._models[key] = model
            return model

    def keep_only(self, keys: set[tuple[str, int | None, int | None]]) -> None:
        """Forget the loaded models no assistant uses any more: their memory is freed once
        an answer still streaming from one ends (it holds the last reference)."""
        with self._lock:
            for key in [k for k in self._models if k not in keys]:
                del self._models[key]

    def loaded_keys(self) -> set[tuple[str, int | None, int | None]]:
        with self._lock:
            return set(self._models)


def create_chat_model(
    config: Config,
    assistant: str = "",
    *,
    memory: local.MemorySource = local.machine_memory,
    loaded: LoadedModels | None = None,
) -> ChatChoice:
    """``assistant``'s chat model (``chat_model`` without one) with its generation settings;
    retrieval-only (with the reason) when it cannot load."""
    key = config.model_for(assistant) if assistant else config.chat_model
    settings = config.generation_for(assistant, key)
    kind = key.partition(":")[0]
    try:
        if loaded is None:
            model = build_chat_model(config, key, settings, memory)
        else:
            model = loaded.get(
                load_key(key, settings), lambda: build_chat_model(config, key, settings, memory)
            )
        model.check()
        return ChatChoice(TunedChat(model, settings))
    except CustodiaEnvironmentError as err:
        log.warning(_("chat model %s unavailable, using retrieval-only mode: %s"), kind, err)
        return ChatChoice(RetrievalOnlyChat(str(err)), str(err))


@dataclass(frozen=True)
class ModelOption:
    """One entry of a model list in the window (``key`` is what the config takes)."""

    key: str
    label: str
    #: why the entry cannot chat ("" when it can): no template, unreadable, unknown architecture
    problem: str = ""
    info: local.GGUFInfo | None = None


#: built-in choices offered to users, in order (``scripted`` is for testers: not offered)
OFFERED_BUILTINS = (
    ("smollm2", f"{SMOLLM2_NAME} (bundled)"),
    ("retrieval-only", N_("Retrieval-only (no generation: the passages found)")),
)


def builtin_label(key: str, label: str) -> str:
    """A built-in choice's label (:data:`OFFERED_BUILTINS`) in the installed language."""
    if key == "smollm2":
        return _("{name} (bundled)").format(name=SMOLLM2_NAME)
    return _(label)


def model_options(config: Config, current: tuple[str, ...] = ()) -> list[ModelOption]:
    """What the window offers: the bundled model, retrieval-only, every GGUF in the models
    folders (with why one cannot chat), the configured Ollama/OpenAI models, then ``current``
    keys not listed yet (a tester's ``scripted`` is shown while it is the one in use).
    Reads file headers: call it off the GUI thread."""
    out = [ModelOption(key, builtin_label(key, label)) for key, label in OFFERED_BUILTINS]
    for found in local.list_models(model_folders(config)):
        problem = ""
        if found.error is not None:
            problem = str(found.error).removeprefix(f"{found.path}: ")
        elif found.info is not None:
            try:
                local.check_usable(found.info)
            except local.GGUFError as err:
                problem = str(err).removeprefix(f"{found.path}: ")
        out.append(ModelOption(found.key, found.label, problem, found.info))
    known = {o.key for o in out}
    for key in (config.chat_model, *config.models.values(), *current):
        if key and key not in known and key.partition(":")[0] in ("ollama", "openai"):
            kind, _sep, name = key.partition(":")
            shown = _("{name} (Ollama)") if kind == "ollama" else _("{name} (server)")
            out.append(ModelOption(key, shown.format(name=name)))
            known.add(key)
    for key in current:
        if key and key not in known:
            out.append(ModelOption(key, _("{key} (in use)").format(key=key)))
            known.add(key)
    return out
