"""The group and the leak it closes (NOTES.md item 12)."""

from __future__ import annotations

import math
import secrets

import gmpy2
import pytest

from protocol_runner.cards import uno_deck
from protocol_runner.remote.local import LocalTable
from protocol_runner.remote.scheme import (
    RFC3526_GROUP14,
    TEST_SAFE_PRIME_256,
    Group,
    GroupError,
    is_safe_prime,
    legendre,
    small_group,
    sound_group,
)

UNO = [c.code for c in uno_deck()]


@pytest.mark.parametrize(("p", "bits"), [(RFC3526_GROUP14, 2048), (TEST_SAFE_PRIME_256, 256)])
def test_published_and_test_primes_are_safe(p: int, bits: int) -> None:
    assert p.bit_length() == bits
    assert is_safe_prime(p)


@pytest.mark.parametrize("p", [2**127 - 1, 101, 2**61 - 1, 15])
def test_primes_that_are_not_safe_are_told_apart(p: int) -> None:
    assert not is_safe_prime(p)


def test_cards_are_distinct_elements_of_the_order_q_subgroup() -> None:
    g = sound_group()
    values = [g.encode(i) for i in range(len(UNO))]
    assert len(set(values)) == len(UNO)
    for v in values:
        assert gmpy2.powmod(v, g.q, g.p) == 1
        assert g.check(v) == v


@pytest.mark.parametrize(
    ("value", "why"),
    [(0, "outside"), (1, "outside"), (TEST_SAFE_PRIME_256, "outside"), (-4, "outside"),
     (TEST_SAFE_PRIME_256 - 1, "subgroup"),  # -1: p = 3 mod 4, so a non-residue
     (TEST_SAFE_PRIME_256 + 4, "outside")],
)
def test_values_outside_the_subgroup_are_refused(value: int, why: str) -> None:
    with pytest.raises(GroupError, match=why):
        small_group().check(value)


def test_the_fast_subgroup_check_is_eulers_criterion() -> None:
    g = small_group()
    for _ in range(300):
        v = 2 + secrets.randbelow(g.p - 3)
        in_subgroup = gmpy2.powmod(v, g.q, g.p) == 1
        try:
            g.check(v)
            accepted = True
        except GroupError:
            accepted = False
        assert accepted == in_subgroup


def test_keys_are_fresh_invertible_and_of_the_promised_size() -> None:
    g = sound_group()
    keys = {g.random_key() for _ in range(50)}
    assert len(keys) == 50
    for k in keys:
        assert 1 < k < 2**g.key_bits
        assert k * g.inverse(k) % g.q == 1
        assert math.gcd(k, g.q) == 1


def _patent_encrypt(card: int, p: int) -> int:
    """The patent as written: C^k mod N with gcd(k, N-1) = 1 (so k is odd)."""
    while True:
        k = 3 + secrets.randbelow(p - 4)
        if math.gcd(k, p - 1) == 1:
            return pow(card, k, p)


def test_the_patent_with_a_careless_prime_leaks_a_bit_of_every_card() -> None:
    p = 2**127 - 1  # a prime, but p - 1 = 2 * 3^3 * 7^2 * ...; cards C_i = i + 2 as in the patent
    cards = [i + 2 for i in range(len(UNO))]
    characters = {legendre(c, p) for c in cards}
    assert characters == {1, -1}  # the cards fall into two classes...
    for c in cards:  # ...and every encryption shows the class of its card, whatever the key
        for _ in range(3):
            assert legendre(_patent_encrypt(c, p), p) == legendre(c, p)
    # whoever watches an encrypted card go by learns whether it is one of these:
    leaked = [UNO[i] for i, c in enumerate(cards) if legendre(c, p) == -1]
    assert 0 < len(leaked) < len(UNO)


def test_the_sound_scheme_shows_the_same_legendre_symbol_on_every_value() -> None:
    """A real 2048-bit deal: every value anybody sees has symbol +1, so it says nothing."""
    g = sound_group()
    table = LocalTable(g, 2)
    d0, d1 = table.devices
    table.post(d0.new_pack("deck", UNO))
    table.settle()
    table.post(d1.draw("deck", 7))
    table.settle()
    seen = [int(v, 16) for e in d0.log for v in e.body.get("values", [])]
    assert len(seen) >= 3 * len(UNO)
    assert {legendre(v, g.p) for v in seen} == {1}
    hand = [code for _, code in d1.hand("deck")]
    assert len(hand) == 7 and set(hand) <= set(UNO)


def test_a_group_refuses_card_numbers_it_cannot_encode() -> None:
    g = Group(23, name="tiny")  # 23 = 2 * 11 + 1
    assert g.check(g.encode(3)) == g.encode(3)  # a quadratic residue: in the subgroup
    with pytest.raises(GroupError):
        g.encode(9)


def test_encodings_have_no_small_power_relations() -> None:
    """With (i+2)^2 encodings, cubing card 0 gave card 6 ((2^2)^3 = 8^2): a cheater could turn one
    card into another by exponentiating, and a wrong decryption could land on a valid card."""
    g = sound_group()
    book = {g.encode(i): i for i in range(108)}
    assert len(book) == 108
    for e in (2, 3, 5, 7, 1 << 20):
        assert not any(g.power(v, e) in book for v in book)
