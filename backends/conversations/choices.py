"""Which model answers a conversation: the tab's provider/model picker (the configured model,
retrieval-only, the user's GGUF files, a local Ollama's or OpenAI-compatible server's
models) and the chat model built for the key picked.

Apart from the agent (:mod:`.service`) because choosing and building a model needs the
configuration and the model registry only — no conversation, no key, no search.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlparse

from backends import i18n
from backends.config import Config
from backends.errors import CustodiaEnvironmentError
from backends.models.chat import ChatModel, RetrievalOnlyChat
from backends.models.registry import CHAT_FACTORIES, ChatChoice, model_options
from backends.net import http_json, is_loopback_host

#: provider recorded for each kind of configured chat model
PROVIDERS = {
    "smollm2": "llama.cpp",
    "gguf": "llama.cpp",
    "scripted": "scripted",
    "retrieval-only": "retrieval-only",
    "ollama": "ollama",
    "openai": "openai",
}


@dataclass(frozen=True)
class ModelChoice:
    """One entry of the provider/model picker."""

    key: str  # what ``chat_model(key)`` understands: config names, "ollama:<m>", "openai:<m>"
    provider: str
    model: str
    label: str


class _ModelListing(NamedTuple):
    """Where a model server lists its models, and how they are shown."""

    path: str  # appended to the server's URL
    field: str  # the reply's list of models
    name_field: str  # each model's name in it
    kind: str  # the picker key's prefix and the provider
    shown: str  # in the label, after the model's name


_OLLAMA = _ModelListing("/api/tags", "models", "name", "ollama", "Ollama")
_OPENAI = _ModelListing("/models", "data", "id", "openai", "OpenAI API")


def _listed(url: str, listing: _ModelListing, known: set[str], timeout: float) -> list[ModelChoice]:
    """The models the server at ``url`` lists, those not ``known`` already; none when it is
    not on this machine or does not answer."""
    out: list[ModelChoice] = []
    base = url.rstrip("/")
    if not base or not is_loopback_host(urlparse(base).hostname):
        return out
    kind = listing.kind
    with contextlib.suppress(CustodiaEnvironmentError):
        reply = http_json(base + listing.path, None, timeout)
        for item in reply.get(listing.field, []) if isinstance(reply, dict) else []:
            name = str(item.get(listing.name_field, "")) if isinstance(item, dict) else ""
            if name and f"{kind}:{name}" not in known:
                out.append(ModelChoice(f"{kind}:{name}", kind, name, f"{name} ({listing.shown})"))
    return out


class ModelPicker:
    """The models a conversation may be answered with, each built once when first used.

    ``configured()`` is the key of the model chosen for this assistant now (the window may
    choose another while the agent lives); ``chat()`` loads that one, with its settings.
    """

    def __init__(
        self, config: Config, configured: Callable[[], str], chat: Callable[[], ChatChoice]
    ) -> None:
        self.config = config
        self.configured = configured
        self._chat_factory = chat
        self._lock = threading.Lock()
        self._models: dict[str, ChatModel] = {}

    def model_choices(self) -> list[ModelChoice]:
        """The configured model first, then retrieval-only (``scripted`` is for testers: it
        is listed only when it is the configured model), then the user's GGUF files that can
        chat (their headers are read once, then cached)."""
        configured = self.configured()
        kind, _, arg = configured.partition(":")
        provider = PROVIDERS.get(kind, kind)
        model = arg or {"smollm2": "SmolLM2-135M-Instruct"}.get(kind, kind)
        shown = i18n.gettext_("{model} ({provider}, configured)")
        out = [
            ModelChoice(configured, provider, model, shown.format(model=model, provider=provider))
        ]
        for key, label in (("retrieval-only", i18n.gettext_("Retrieval-only (no generation)")),):
            if key != configured:
                out.append(ModelChoice(key, key, key, label))
        for option in model_options(self.config):
            if option.key.startswith("gguf:") and not option.problem and option.key != configured:
                name = option.key.removeprefix("gguf:")
                out.append(ModelChoice(option.key, "llama.cpp", name, option.label))
        return out

    def discover_models(self, timeout: float = 1.0) -> list[ModelChoice]:
        """Models of a local Ollama and of the configured OpenAI-compatible server, if they
        answer (loopback only, short timeout); nothing when none does."""
        timeout = min(timeout, self.config.network_timeout)
        known = {c.key for c in self.model_choices()}
        return [
            *_listed(self.config.ollama_url, _OLLAMA, known, timeout),
            *_listed(self.config.openai_url, _OPENAI, known, timeout),
        ]

    def choice(self, key: str) -> ModelChoice:
        for candidate in self.model_choices():
            if candidate.key == key:
                return candidate
        kind, _colon, arg = key.partition(":")
        if kind in ("ollama", "openai", "gguf") and arg:
            return ModelChoice(key, PROVIDERS[kind], arg, f"{arg} ({kind})")
        raise CustodiaEnvironmentError(
            i18n.gettext_("unknown model {key!r}; choose one of {names}").format(
                key=key,
                names=", ".join(
                    [c.key for c in self.model_choices()] + ["ollama:<model>", "openai:<model>"]
                ),
            )
        )

    def chat_model(self, key: str) -> tuple[ChatModel, ModelChoice]:
        """The chat model for a picker key (built once), and the choice describing it."""
        choice = self.choice(key)
        with self._lock:
            model = self._models.get(key)
        if model is None:
            if key == self.configured():
                chat_choice = self._chat_factory()
                model = chat_choice.model
                if chat_choice.fallback_reason:
                    choice = ModelChoice(key, "retrieval-only", "retrieval-only", choice.label)
            elif key == "retrieval-only":
                model = RetrievalOnlyChat("chosen in the model picker")
            else:
                kind, _, arg = key.partition(":")
                model = CHAT_FACTORIES[kind](self.config, arg)
            with self._lock:
                self._models[key] = model
        if model.retrieval_only and choice.provider != "retrieval-only":
            choice = ModelChoice(key, "retrieval-only", "retrieval-only", choice.label)
        return model, choice
