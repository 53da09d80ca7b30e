"""French elision (services/client/elision.py): « d'Ana », « de Chloé »."""

from __future__ import annotations

import pytest

from services.client.elision import de, elide, elides


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Ana", "d'Ana"),
        ("Éric", "d'Éric"),
        ("Ève", "d'Ève"),
        ("Hugo", "d'Hugo"),
        ("Olivier", "d'Olivier"),
        ("Ursule", "d'Ursule"),
        ("îlot", "d'îlot"),
        ("Œdipe", "d'Œdipe"),
        ("Chloé", "de Chloé"),
        ("Bot1", "de Bot1"),
        ("[/]", "de [/]"),
        ("2Pac", "de 2Pac"),
    ],
)
def test_de_is_elided_before_a_vowel_accented_or_not_and_before_h(name: str, expected: str) -> None:
    assert de(name) == expected


def test_elide_keeps_the_capital_and_leaves_particles_without_a_final_e() -> None:
    assert elide("De", "Ana") == "D'Ana"
    assert elide("que", "Éric") == "qu'Éric"
    assert elide("à", "Ana") == "à Ana"
    assert not elides("")
