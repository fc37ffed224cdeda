"""Chat models that stream tokens. All local: a GGUF file in-process, or a runtime on loopback.

A :class:`Prompt` carries the retrieved context separately from the conversation, so the
retrieval-only mode (DC4) can show the passages themselves when no model is available.
"""

from __future__ import annotations

import json
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.errors import ModelUnavailableError
from backends.net import http_lines, http_probe, require_loopback

#: seconds to wait for a runtime's answer to "are you there" (loopback: refused is instant)
PROBE_TIMEOUT = 2.0

RETRIEVAL_ONLY_LABEL = "[Retrieval-only mode: no chat model is available; showing what was found]"


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class Prompt:
    """What an assistant asks of a chat model."""

    user: str
    system: str = ""
    history: Sequence[Message] = ()
    #: retrieved passages, each already labelled with its source by the caller
    context: Sequence[str] = ()
    max_tokens: int = 256
    #: sampling temperature; None leaves the model's own default (the tutor asks for a low one)
    temperature: float | None = None
    #: generation ends before any of these strings (a small model's runaway new turn)
    stop: Sequence[str] = ()

    def messages(self) -> list[Message]:
        system = self.system
        if self.context:
            joined = "\n".join(f"- {c}" for c in self.context)
            system = f"{system}\n\nRelevant context:\n{joined}".strip()
        out = [Message("system", system)] if system else []
        out.extend(self.history)
        out.append(Message("user", self.user))
        return out


ShouldStop = Callable[[], bool]


def _never() -> bool:
    return False


class ChatModel(ABC):
    """Streams an answer token by token."""

    name: str = ""
    #: True when answers are the retrieved passages, not generated text (labelled in the UI).
    retrieval_only: bool = False

    @abstractmethod
    def stream(self, prompt: Prompt, should_stop: ShouldStop = _never) -> Iterator[str]:
        """Yield pieces of the answer; stop early once ``should_stop()`` is true."""

    def complete(self, prompt: Prompt) -> str:
        return "".join(self.stream(prompt))

    def check(self) -> None:
        """Raise :class:`ModelUnavailableError` when the model cannot answer now (a runtime
        that is not running): the registry then falls back to retrieval-only mode.
        In-process models are ready once built."""
        return None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "retrieval_only": self.retrieval_only}


class RetrievalOnlyChat(ChatModel):
    """No generation: the answer is the retrieved context, clearly labelled (DC4)."""

    name = "retrieval-only"
    retrieval_only = True

    def __init__(self, reason: str = "") -> None:
        self.reason = reason

    def stream(self, prompt: Prompt, should_stop: ShouldStop = _never) -> Iterator[str]:
        yield RETRIEVAL_ONLY_LABEL + "\n"
        if not prompt.context:
            yield "Nothing relevant was found for this question."
            return
        for passage in prompt.context:
            if should_stop():
                return
            yield f"- {passage}\n"


@dataclass
class ScriptedChat(ChatModel):
    """Deterministic replies for tests and testers (DC6).

    With ``replies``, answers them in order, then repeats the last. Without, answers
    ``Scripted answer to: <question>`` followed by the number of context passages, so a test
    can see that retrieval reached the model. Streams word by word.
    """

    replies: list[str] = field(default_factory=list)
    name: str = "scripted"
    calls: list[Prompt] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def stream(self, prompt: Prompt, should_stop: ShouldStop = _never) -> Iterator[str]:
        with self._lock:
            self.calls.append(prompt)
            index = len(self.calls) - 1
        if self.replies:
            text = self.replies[min(index, len(self.replies) - 1)]
        else:
            text = f"Scripted answer to: {prompt.user} (context passages: {len(prompt.context)})"
        for piece in re.findall(r"\S+\s*", text):
            if should_stop():
                return
            yield piece


class LlamaCppChat(ChatModel):
    """A GGUF model run in-process by llama.cpp (default: SmolLM2-135M-Instruct)."""

    def __init__(self, model_path: Path, name: str, context_tokens: int = 2048) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as err:
            raise ModelUnavailableError(
                "llama-cpp-python is not installed (make run builds it once)"
            ) from err
        self.name = name
        try:
            self._llama = Llama(
                model_path=str(model_path), n_ctx=context_tokens, verbose=False, seed=7
            )
        except Exception as err:  # llama.cpp raises ValueError/RuntimeError on bad files
            raise ModelUnavailableError(f"{model_path}: cannot load GGUF model: {err}") from err
        self._lock = threading.Lock()  # one llama context cannot serve two streams at once

    def stream(self, prompt: Prompt, should_stop: ShouldStop = _never) -> Iterator[str]:
        messages: Any = [{"role": m.role, "content": m.content} for m in prompt.messages()]
        with self._lock:
            chunks = self._llama.create_chat_completion(
                messages=messages,
                max_tokens=prompt.max_tokens,
                stream=True,
                temperature=0.2 if prompt.temperature is None else prompt.temperature,
                repeat_penalty=1.15,  # small models loop on one sentence without it
                stop=list(prompt.stop) or None,
            )
            for chunk in chunks:
                if should_stop():
                    return
                choice: Any = chunk["choices"][0]  # type: ignore[index]
                delta: Any = choice.get("delta", {})
                piece = delta.get("content")
                if piece:
                    yield piece


def _ollama_options(prompt: Prompt) -> dict[str, Any]:
    options: dict[str, Any] = {"num_predict": prompt.max_tokens}
    if prompt.temperature is not None:
        options["temperature"] = prompt.temperature
    if prompt.stop:
        options["stop"] = list(prompt.stop)
    return options


class OllamaChat(ChatModel):
    """A model served by Ollama on loopback (``/api/chat``, NDJSON stream)."""

    def __init__(self, model: str, base_url: str, timeout: float) -> None:
        require_loopback("ollama_url", base_url)
        self.name = f"ollama:{model}"
        self._model = model
        self._base = base_url.rstrip("/")
        self._url = self._base + "/api/chat"
        self._timeout = timeout

    def check(self) -> None:
        tags = http_probe(self._base + "/api/tags", min(PROBE_TIMEOUT, self._timeout))
        if not isinstance(tags, dict) or not isinstance(tags.get("models"), list):
            return  # an older or different runtime: let the first answer tell
        names = {str(m.get("name", "")) for m in tags["models"] if isinstance(m, dict)}
        wanted = self._model if ":" in self._model else self._model + ":latest"
        if wanted not in names and self._model not in names:
            raise ModelUnavailableError(
                f"Ollama at {self._base} has no model {self._model!r} "
                f"(run `ollama pull {self._model}`)"
            )

    def stream(self, prompt: Prompt, should_stop: ShouldStop = _never) -> Iterator[str]:
        payload = {
            "model": self._model,
            "stream": True,
            "messages": [{"role": m.role, "content": m.content} for m in prompt.messages()],
            "options": _ollama_options(prompt),
        }
        for line in http_lines(self._url, payload, self._timeout):
            if should_stop():
                return
            data = json.loads(line)
            if "error" in data:
                raise ModelUnavailableError(f"Ollama: {data['error']}")
            piece = data.get("message", {}).get("content", "")
            if piece:
                yield piece
            if data.get("done"):
                return
        # the runtime closed the stream before saying done: the answer is cut, not finished
        raise ModelUnavailableError(f"{self._url}: the answer was cut off (stream ended early)")


class OpenAICompatibleChat(ChatModel):
    """Any OpenAI-compatible server on loopback (llama-server, LM Studio, vLLM...)."""

    def __init__(self, model: str, base_url: str, timeout: float) -> None:
        require_loopback("openai_url", base_url)
        self.name = f"openai:{model}"
        self._model = model
        self._base = base_url.rstrip("/")
        self._url = self._base + "/chat/completions"
        self._timeout = timeout

    def check(self) -> None:
        http_probe(self._base + "/models", min(PROBE_TIMEOUT, self._timeout))

    def stream(self, prompt: Prompt, should_stop: ShouldStop = _never) -> Iterator[str]:
        payload = {
            "model": self._model,
            "stream": True,
            "max_tokens": prompt.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in prompt.messages()],
        }
        if prompt.temperature is not None:
            payload["temperature"] = prompt.temperature
        if prompt.stop:
            payload["stop"] = list(prompt.stop)
        finished = False
        for line in http_lines(self._url, payload, self._timeout):
            if should_stop():
                return
            if not line.startswith(b"data:"):
                continue
            body = line[5:].strip()
            if body == b"[DONE]":
                return
            choices = json.loads(body).get("choices") or [{}]
            piece = choices[0].get("delta", {}).get("content")
            if piece:
                yield piece
            if choices[0].get("finish_reason"):
                finished = True
        if not finished:  # closed before [DONE] or a finish reason: the answer is cut
            raise ModelUnavailableError(f"{self._url}: the answer was cut off (stream ended early)")
