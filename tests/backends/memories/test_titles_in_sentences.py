"""A memory offered as "…is with Dr" (issue 30): the sentence was split at "Dr."."""

from __future__ import annotations

import pytest

from backends.memories.facts import factual_statements


@pytest.mark.parametrize(
    ("message", "fact"),
    [
        (
            "My cardiologist is with Dr. Smith at the clinic.",
            "My cardiologist is with Dr. Smith at the clinic",
        ),
        ("My lawyer is Mrs. Gómez. I live in Madrid.", "My lawyer is Mrs. Gómez"),
        (
            "My neighbour is Mr. Jones, e.g. the one with the dog.",
            "My neighbour is Mr. Jones, e.g. the one with the dog",
        ),
        ("My dentist is Dra. Ruiz in town.", "My dentist is Dra. Ruiz in town"),
    ],
)
def test_a_title_does_not_end_the_sentence(message: str, fact: str) -> None:
    facts = factual_statements(message)
    assert facts[0] == fact
    assert not any(f.endswith((" Dr", " Mrs", " Mr", " Dra")) for f in facts)
