"""Embedders and chat models. All local: bundled files, or a runtime on loopback."""
