"""The clinical tutor (SPEC CT5–CT7): hybrid retrieval over a local knowledge base, audited.

``kb`` (the shipped corpus, the importer, chunking and the SQLite store of chunks), ``vector``
(Chroma; the user's scope inside the ``where`` filter), ``keyword`` (SQLite FTS5, bm25),
``graph`` (the allow-listed graph role: SQLite and Bolt), ``fusion`` (reciprocal rank fusion),
``tutor`` (the service the tab and the CLI talk to) and ``cli``. See docs/TUTOR.md.
"""
