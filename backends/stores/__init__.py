"""Stores: one small Protocol per role, embedded and server implementations."""
