"""What the tutor still holds of a person after ``custodia forget`` destroyed their key.

The audit log holds only what the key unlocks; the tutor may still hold the person's own
imported notes (their name in the scope, their file paths), which the key does not reach.
The tutor's forget hook (:attr:`backends.assistants.Assistant.forget`) says so, and how to
remove them; the composition layer prints its lines after the audit log's own. It reads the
knowledge base file read-only and changes nothing.
"""

from __future__ import annotations

import shlex

from backends.assistants import Context
from backends.i18n import _
from backends.tutor.kb import DB_FILE, ScopeError, count_documents, user_scope


def remaining_notes(context: Context, person: str) -> list[str]:
    """The notes to print about ``person``'s own imported notes still in the tutor: none when
    they have none (or the name cannot name a scope), else one line saying how many and the
    command that removes them; one line too when the knowledge base cannot be read."""
    try:
        scope = user_scope(person)
    except ScopeError:
        return []
    documents = count_documents(context.config.path(DB_FILE), scope)
    command = f"custodia kb forget-user {shlex.quote(person)}"
    if documents is None:
        return [
            _(
                "note: the tutor's knowledge base could not be read; if {person} imported notes "
                "of their own, remove them with `{command}`"
            ).format(person=person, command=command)
        ]
    if documents:
        return [
            _(
                "note: {person}'s own imported notes remain in the tutor ({documents} documents, "
                "scope {scope}, with their file paths); remove them with `{command}`"
            ).format(person=person, documents=documents, scope=scope, command=command)
        ]
    return []
