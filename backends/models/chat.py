"""Chat models that stream tokens. All local: a GGUF file in-process, or a runtime on loopback.

A :class:`Prompt` carries the retrieved context separately from the conversation, so the
retrieval-only mode (DC4) can show the passages themselves when no model is available.
"""

from __future__ import annotations

import ctypes
import json
import re
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from backends.errors import ModelUnavailableError
from backends.failures import cause, raw, text_cause, with_details
from backends.i18n import _
from backends.models.settings import RUNTIME_DEFAULTS, GenerationSettings
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
    #: nucleus sampling and repetition penalty; None leaves them to the model's settings
    top_p: float | None = None
    repeat_penalty: float | None = None

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


class TunedChat(ChatModel):
    """A chat model with the generation settings of one assistant applied to every prompt.

    A value the assistant set in its :class:`Prompt` (temperature, stop) is kept; the
    settings fill what it left open; ``max_tokens`` from the settings is a ceiling; the
    settings' system prompt follows the assistant's own instructions. Anything else (a
    scripted model's ``calls``) is the wrapped model's.
    """

    def __init__(self, model: ChatModel, settings: GenerationSettings) -> None:
        self.model = model
        self.settings = settings
        self.name = model.name
        self.retrieval_only = model.retrieval_only

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["model"], name)

    def tune(self, prompt: Prompt) -> Prompt:
        s = self.settings
        system = prompt.system
        if s.system_prompt and s.system_prompt.strip():
            system = f"{system}\n\n{s.system_prompt.strip()}".strip()
        max_tokens = prompt.max_tokens
        if s.max_tokens is not None:
            max_tokens = min(max_tokens, s.max_tokens)
        return replace(
            prompt,
            system=system,
            max_tokens=max_tokens,
            temperature=s.temperature if prompt.temperature is None else prompt.temperature,
            top_p=s.top_p if prompt.top_p is None else prompt.top_p,
            repeat_penalty=s.repeat_penalty
            if prompt.repeat_penalty is None
            else prompt.repeat_penalty,
        )

    def stream(self, prompt: Prompt, should_stop: ShouldStop = _never) -> Iterator[str]:
        return self.model.stream(self.tune(prompt), should_stop)

    def check(self) -> None:
        self.model.check()

    def describe(self) -> dict[str, Any]:
        out = self.model.describe()
        out["settings"] = {k: v for k, v in vars(self.settings).items() if v is not None}
        return out


#: the last lines llama.cpp logged, numbered (what it says about a file it refuses)
_LLAMA_LOG: deque[tuple[int, int, str]] = deque(maxlen=200)
_LLAMA_LOG_LOCK = threading.Lock()
_llama_log_callback: Any = None
_llama_log_count = 0
#: ggml_log_level: 1 debug, 2 info, 3 warn, 4 error, 5 continues the previous line
_GGML_WARN, _GGML_ERROR, _GGML_CONT = 3, 4, 5


def _capture_llama_log(llama_cpp: Any) -> None:
    """Keep llama.cpp's warnings and errors (verbose=False sends them nowhere) so a file
    it refuses is refused with its words."""
    global _llama_log_callback
    with _LLAMA_LOG_LOCK:
        if _llama_log_callback is not None:
            return

        @llama_cpp.llama_log_callback
        def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
            global _llama_log_count
            if level > 1:  # not debug chatter
                _llama_log_count += 1
                line = text.decode("utf-8", errors="replace").strip()
                _LLAMA_LOG.append((_llama_log_count, level, line))

        _llama_log_callback = callback  # referenced for ever: llama.cpp keeps the pointer
        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))


def _llama_said(since: int) -> str:
    """What llama.cpp warned or erred about after line ``since`` (its last two such lines)."""
    lines = [(lv, t) for n, lv, t in list(_LLAMA_LOG) if n > since and t]
    bad = [t for lv, t in lines if lv in (_GGML_WARN, _GGML_ERROR) or "error" in t.lower()]
    return "; ".join(dict.fromkeys(bad[-2:]))


class LlamaCppChat(ChatModel):
    """A GGUF model run in-process by llama.cpp (default: SmolLM2-135M-Instruct).

    ``context_tokens`` and ``threads`` are fixed when the file loads (``threads=0``: as many as
    llama.cpp chooses); sampling settings come with each :class:`Prompt`.
    """

    def __init__(
        self,
        model_path: Path,
        name: str,
        context_tokens: int = 2048,
        threads: int = 0,
        details: dict[str, Any] | None = None,
    ) -> None:
        try:
            import llama_cpp  # noqa: PLC0415 — lazy: llama.cpp loads only with a GGUF model
            from llama_cpp import Llama  # noqa: PLC0415 — lazy: llama.cpp loads only with a GGUF model
        except ImportError as err:
            raise ModelUnavailableError(
                _("llama-cpp-python is not installed (make run builds it once)")
            ) from err
        self.name = name
        self.path = Path(model_path)
        self.context_tokens = context_tokens
        self.details = dict(details or {})
        _capture_llama_log(llama_cpp)
        since = _llama_log_count
        try:
            self._llama = Llama(
                model_path=str(model_path),
                n_ctx=context_tokens,
                n_threads=threads or None,
                verbose=False,
                seed=7,
            )
        except Exception as err:  # llama.cpp raises ValueError/RuntimeError on bad files
            said = _llama_said(since)
            message = _("{path}: cannot load GGUF model").format(path=model_path)
            why = f"llama.cpp says: {said}" if said else raw(err)
            # llama.cpp's own words are English: they are the details, and say the cause
            known = text_cause(why) or cause(err)
            if known:
                message += ": " + known
            raise ModelUnavailableError(with_details(message, why)) from err
        self._lock = threading.Lock()  # one llama context cannot serve two streams at once

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out.update(self.details)
        out["path"] = str(self.path)
        out["context_tokens"] = self.context_tokens
        return out

    def stream(self, prompt: Prompt, should_stop: ShouldStop = _never) -> Iterator[str]:
        messages: Any = [{"role": m.role, "content": m.content} for m in prompt.messages()]
        with self._lock:
            chunks = self._llama.create_chat_completion(
                messages=messages,
                max_tokens=prompt.max_tokens,
                stream=True,
                temperature=_or(prompt.temperature, RUNTIME_DEFAULTS.temperature),
                top_p=_or(prompt.top_p, RUNTIME_DEFAULTS.top_p),
                repeat_penalty=_or(prompt.repeat_penalty, RUNTIME_DEFAULTS.repeat_penalty),
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


def _cut_off(url: str) -> str:
    return _("{url}: the answer was cut off (stream ended early)").format(url=url)


def _or(value: float | None, default: float | None) -> float:
    chosen = value if value is not None else default
    assert chosen is not None  # RUNTIME_DEFAULTS sets every sampling field
    return float(chosen)


def _ollama_options(prompt: Prompt) -> dict[str, Any]:
    options: dict[str, Any] = {"num_predict": prompt.max_tokens}
    if prompt.temperature is not None:
        options["temperature"] = prompt.temperature
    if prompt.top_p is not None:
        options["top_p"] = prompt.top_p
    if prompt.repeat_penalty is not None:
        options["repeat_penalty"] = prompt.repeat_penalty
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
                _("Ollama at {url} has no model {name!r} (run `ollama pull {name}`)").format(
                    url=self._base, name=self._model
                )
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
                raise ModelUnavailableError(
                    with_details(_("Ollama could not answer"), str(data["error"]))
                )
            piece = data.get("message", {}).get("content", "")
            if piece:
                yield piece
            if data.get("done"):
                return
        # the runtime closed the stream before saying done: the answer is cut, not finished
        raise ModelUnavailableError(_cut_off(self._url))


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
        if prompt.top_p is not None:
            payload["top_p"] = prompt.top_p
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
            raise ModelUnavailableError(_cut_off(self._url))
