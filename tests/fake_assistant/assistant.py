"""The fake assistant's declaration (what ``backends/<name>/assistant.py`` is for a real one)."""

from backends.assistants import Assistant, StoreCheck

ASSISTANT = Assistant(
    name="echo",
    title="Echo",
    spec="EC1",
    build="tests.fake_assistant.service:build",
    data="tests.fake_assistant.service:DATA",
    commands="tests.fake_assistant.service:add_commands",
    forget="tests.fake_assistant.service:forget",
    checks=(StoreCheck("echo notes store", "echo notes"),),
)
