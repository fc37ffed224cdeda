"""A fake assistant registered through the real registry path (simonw/llm's fake plugin):
one package, one registry line (:func:`backends.assistants.register`) and one tab module
(:func:`desktop.tabs.register`). Nothing else in the program names it — the test proves it
appears in the storage map, the doctor, the CLI, ``[models]`` and the window anyway."""
