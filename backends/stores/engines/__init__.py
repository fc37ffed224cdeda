"""Engine helpers shared by the store implementations: SQLite (connect, named migrations),
the Chroma collection base, and the HNSW folder check. Nothing here is a role."""
