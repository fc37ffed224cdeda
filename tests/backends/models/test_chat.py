from __future__ import annotations

import json
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from backends.config import Config
from backends.errors import ConfigError, ModelUnavailableError
from backends.models import files
from backends.models.chat import (
    RETRIEVAL_ONLY_LABEL,
    OllamaChat,
    OpenAICompatibleChat,
    Prompt,
    RetrievalOnlyChat,
    ScriptedChat,
)
from backends.models.registry import create_chat_model


def test_scripted_default_reply_shows_context_reached_the_model() -> None:
    model = ScriptedChat()
    pieces = list(model.stream(Prompt("What is sepsis?", context=["a", "b"])))
    assert len(pieces) > 3
    assert "".join(pieces) == "Scripted answer to: What is sepsis? (context passages: 2)"
    assert model.calls[0].user == "What is sepsis?"


def test_scripted_replies_in_order_then_repeats_last() -> None:
    model = ScriptedChat(replies=["one", "two"])
    assert [model.complete(Prompt(q)) for q in "abc"] == ["one", "two", "two"]


def test_stream_stops_when_asked() -> None:
    model = ScriptedChat(replies=["a b c d e f g"])
    seen: list[str] = []
    for piece in model.stream(Prompt("q"), should_stop=lambda: len(seen) >= 2):
        seen.append(piece)
    assert len(seen) == 2


def test_retrieval_only_is_labelled_and_shows_passages() -> None:
    text = RetrievalOnlyChat().complete(Prompt("q", context=["[kb/asthma.md] Asthma is ..."]))
    assert text.startswith(RETRIEVAL_ONLY_LABEL)
    assert "[kb/asthma.md] Asthma is ..." in text
    assert "Nothing relevant" in RetrievalOnlyChat().complete(Prompt("q"))


def test_unavailable_model_falls_back_to_retrieval_only(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(files, "_roots", lambda package: [tmp_path / package])
    choice = create_chat_model(Config(home=tmp_path, chat_model="smollm2"))
    assert choice.model.retrieval_only
    assert "not found" in choice.fallback_reason


def test_remote_model_urls_are_refused_before_any_connection() -> None:
    with pytest.raises(ConfigError, match="loopback"):
        OllamaChat("llama3", "http://10.1.2.3:11434", 1.0)
    with pytest.raises(ConfigError, match="loopback"):
        OpenAICompatibleChat("m", "https://api.example.com/v1", 1.0)


def test_ollama_down_is_an_environment_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = OllamaChat("llama3", f"http://127.0.0.1:{port}", 1.0)
    with pytest.raises(ModelUnavailableError, match="not reachable"):
        model.complete(Prompt("hi"))


class _FakeRuntime(BaseHTTPRequestHandler):
    """A tiny local runtime speaking Ollama's and OpenAI's streaming formats (a model named
    ``cut`` stops sending before saying it is done, as a runtime that crashed would)."""

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        cut = json.loads(self.rfile.read(length)).get("model") == "cut"
        if self.path not in ("/api/chat", "/v1/chat/completions"):
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.end_headers()
        if self.path == "/api/chat":
            for piece in ("Hel", "lo"):
                self.wfile.write(b'{"message":{"content":"%s"},"done":false}\n' % piece.encode())
            if not cut:
                self.wfile.write(b'{"message":{"content":""},"done":true}\n')
        else:
            for piece in ("Hel", "lo"):
                self.wfile.write(
                    b'data: {"choices":[{"delta":{"content":"%s"}}]}\n\n' % piece.encode()
                )
            if not cut:
                self.wfile.write(b"data: [DONE]\n\n")

    def do_GET(self) -> None:
        if self.path == "/api/tags":
            body = b'{"models":[{"name":"m:latest"},{"name":"other:7b"}]}'
        elif self.path == "/v1/models":
            body = b'{"object":"list","data":[{"id":"m"}]}'
        else:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def runtime_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeRuntime)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_ollama_and_openai_streams_are_parsed(runtime_url: str) -> None:
    assert OllamaChat("m", runtime_url, 5.0).complete(Prompt("hi")) == "Hello"
    assert OpenAICompatibleChat("m", runtime_url + "/v1", 5.0).complete(Prompt("hi")) == "Hello"


@pytest.mark.model
def test_smollm2_generates_offline(tmp_path) -> None:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        if os.environ.get("CUSTODIA_REQUIRE_LLAMA") == "1":
            pytest.fail("llama-cpp-python is required here but not installed")
        pytest.skip("llama-cpp-python not built on this machine (see .venv/llama-build.log)")
    choice = create_chat_model(Config(home=tmp_path))
    assert choice.fallback_reason == "" and choice.model.name == "SmolLM2-135M-Instruct"
    answer = choice.model.complete(Prompt("Say hello.", max_tokens=16))
    assert answer.strip()


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize("key", ["ollama:llama3", "openai:m"])
def test_a_runtime_that_is_not_running_means_retrieval_only_with_the_reason(
    tmp_path, key: str
) -> None:
    url = _closed_port_url()
    config = Config(home=tmp_path, chat_model=key, ollama_url=url, openai_url=url + "/v1")
    choice = create_chat_model(config)
    assert choice.model.retrieval_only
    assert "not reachable" in choice.fallback_reason and url in choice.fallback_reason


def test_a_running_runtime_is_used(tmp_path, runtime_url: str) -> None:
    for key in ("ollama:m", "ollama:m:latest", "openai:m", "openai:anything"):
        config = Config(
            home=tmp_path, chat_model=key, ollama_url=runtime_url, openai_url=runtime_url + "/v1"
        )
        choice = create_chat_model(config)
        assert not choice.model.retrieval_only and choice.fallback_reason == "", key
        assert choice.model.complete(Prompt("hi")) == "Hello"


def test_an_ollama_model_that_is_not_pulled_is_named(tmp_path, runtime_url: str) -> None:
    config = Config(home=tmp_path, chat_model="ollama:llama3", ollama_url=runtime_url)
    choice = create_chat_model(config)
    assert choice.model.retrieval_only
    assert "ollama pull llama3" in choice.fallback_reason


def test_an_answer_cut_off_by_the_runtime_is_an_error_not_a_finished_answer(
    runtime_url: str,
) -> None:
    for model in (
        OllamaChat("cut", runtime_url, 5.0),
        OpenAICompatibleChat("cut", runtime_url + "/v1", 5.0),
    ):
        pieces: list[str] = []
        with pytest.raises(ModelUnavailableError, match="cut off"):
            for piece in model.stream(Prompt("hi")):
                pieces.append(piece)
        assert pieces == ["Hel", "lo"]  # what came is still delivered before the error


def test_a_server_that_answers_with_an_error_is_not_called_unreachable(runtime_url: str) -> None:
    from backends.net import http_json

    with pytest.raises(ModelUnavailableError, match="answered HTTP 404") as err:
        http_json(runtime_url + "/api/version", None, 2.0)
    assert "not reachable" not in str(err.value)


def test_a_chat_endpoint_that_answers_404_is_named_not_called_unreachable(
    runtime_url: str,
) -> None:
    model = OpenAICompatibleChat("m", runtime_url + "/wrong", 5.0)
    with pytest.raises(ModelUnavailableError, match="answered HTTP 404") as err:
        model.complete(Prompt("hi"))
    assert "not reachable" not in str(err.value)
