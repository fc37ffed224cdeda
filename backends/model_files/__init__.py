"""The models folder as a shared part (:mod:`backends.assistants`): its storage map row and the
``custodia models`` commands (list, add, use, remove, find). Above the model runtime
(:mod:`backends.models`, at the bottom of the layers) because a storage map row is a datum of
the storage layer's vocabulary."""
