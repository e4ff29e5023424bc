"""The patent's commutative encryption, made sound: a safe-prime group and one encryption pass.

The patent (WO 02/085475) encrypts a card number C as ``C^k mod N`` with ``gcd(k, N-1) = 1``.
Exponentiation keeps the quadratic-residue character of C (``NOTES.md`` item 12), so with an
arbitrary prime every encrypted card still shows one bit of what it is. Here:

* ``p = 2q + 1`` is a safe prime (RFC 3526 group 14, 2048 bits, by default);
* a physical card number ``i`` is encoded as ``H(i)^2 mod p`` with ``H`` a hash onto ``2 .. p-1``
  (SHAKE-256), a quadratic residue, i.e. an element of the order-``q`` subgroup, where every
  element has Legendre symbol +1. Hashing matters: with small bases such as ``(i + 2)^2`` the
  encodings are related multiplicatively (``(2^2)^3 = 8^2``), so a cheater could turn one card
  into another by exponentiating instead of stripping, and a wrong decryption could land on a
  valid card; hashed encodings have no known relation;
* keys are fresh for every layer and invertible mod ``q`` (every key below the prime ``q`` is).
  They are drawn with ``key_bits`` = 320 random bits: RFC 3526 section 8 asks for exponents of
  at least twice the group's ~110-bit strength, and with a safe prime short exponents are as hard
  as full ones for the known attacks (van Oorschot-Wiener; Pollard's kangaroo costs 2^160 here).
  Encrypting with a 320-bit key costs about a sixth of a full-size one, which is what keeps a
  deal under a second per device; inverses (used to strip a layer) are full-size;
* every value received is checked to be in that subgroup (:meth:`Group.check`), so a peer cannot
  push a value outside it to learn something from how it comes back.

Everything here is pure arithmetic on integers; no I/O.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property

import gmpy2

# RFC 3526 section 3: the 2048-bit MODP group (group 14). p = 2^2048 - 2^1984 - 1 + 2^64 *
# ([2^1918 pi] + 124476); it is a safe prime (tests/test_remote_scheme.py checks that).
RFC3526_GROUP14 = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E"
    "3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0B"
    "FF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C"
    "55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1"
    "746C08CA18217C32905E462E36CE3BE39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF695"
    "5817183995497CEA956AE515D2261898FA051015728E5A8AACAA68FFFFFFFFFFFFFFFF",
    16,
)
# A 256-bit safe prime for fast unit tests of properties that do not depend on size (found with
# gmpy2.next_prime; tests check it is safe). Never used for play.
TEST_SAFE_PRIME_256 = 0x96DD59D2A151F7303E449F60EE6B00D1982E4A6962026D390AA95FC2BF830C8F


@cache
def _encoding(p: int, number: int) -> int:
    """``H(number)^2 mod p``: see :meth:`Group.encode`. Cached: every pass encodes the pack."""
    size = (p.bit_length() + 64 + 7) // 8
    seed = b"cardtable/remote/card/%d/" % number + p.to_bytes((p.bit_length() + 7) // 8, "big")
    h = 2 + int.from_bytes(hashlib.shake_256(seed).digest(size), "big") % (p - 3)
    return int(gmpy2.powmod(h, 2, p))


class GroupError(ValueError):
    """A value that is not a well-formed element of the card group: a cheat or a corrupt message."""


@dataclass(frozen=True)
class Group:
    """The quadratic residues modulo a safe prime ``p = 2q + 1``: where every card value lives."""

    p: int
    name: str = "rfc3526-2048"
    key_bits: int = 320

    @cached_property
    def q(self) -> int:
        return (self.p - 1) // 2

    @cached_property
    def _p(self) -> gmpy2.mpz:
        return gmpy2.mpz(self.p)

    @property
    def bits(self) -> int:
        return self.p.bit_length()

    def encode(self, number: int) -> int:
        """The group element of physical card ``number`` (0-based): ``H(number)^2 mod p``.

        ``H`` expands SHAKE-256 of the card number and the prime to 64 bits more than ``p`` and
        reduces it into ``2 .. p-1``; squaring puts it in the order-``q`` subgroup. Distinct card
        numbers collide only with negligible probability (the callers' look-up books would see it).
        """
        if not 0 <= number < self.q - 2:
            raise GroupError(f"card number {number} does not fit this group")
        return _encoding(self.p, number)

    def check(self, value: int) -> int:
        """Return ``value`` if it lies in the order-``q`` subgroup, else raise :class:`GroupError`.

        For a safe prime the order-``q`` subgroup is exactly the quadratic residues, so Euler's
        criterion ``v^q = 1`` is the Legendre symbol ``(v|p) = 1``, which GMP computes about a
        thousand times faster than the exponentiation (tests check the two agree).
        """
        if not 1 < value < self.p:
            raise GroupError(f"value {value:#x} is outside 2 .. p-1")
        if gmpy2.legendre(value, self._p) != 1:
            raise GroupError(f"value {value:#x} is not in the order-q subgroup")
        return value

    def random_key(self) -> int:
        """A fresh secret exponent in ``[2, min(q, 2^key_bits))``, invertible mod prime ``q``."""
        return 2 + secrets.randbelow(min(self.q, 1 << self.key_bits) - 2)

    def inverse(self, key: int) -> int:
        return int(gmpy2.invert(key, self.q))

    def mul(self, *keys: int) -> int:
        product = gmpy2.mpz(1)
        for key in keys:
            product = product * key % self.q
        return int(product)

    def power(self, value: int, exponent: int) -> int:
        return int(gmpy2.powmod(value, exponent, self._p))

    def powers(self, values: Sequence[int], exponents: Sequence[int]) -> list[int]:
        if len(values) != len(exponents):
            raise ValueError(f"{len(values)} values but {len(exponents)} exponents")
        p = self._p
        return [int(gmpy2.powmod(v, e, p)) for v, e in zip(values, exponents, strict=True)]


def sound_group() -> Group:
    """The group used for play: RFC 3526 group 14 (2048-bit safe prime)."""
    return Group(RFC3526_GROUP14)


def small_group() -> Group:
    """A 256-bit safe-prime group for unit tests whose property does not depend on size."""
    return Group(TEST_SAFE_PRIME_256, name="test-256")


def is_safe_prime(p: int, rounds: int = 32) -> bool:
    """Probable-prime test of ``p`` and ``(p-1)/2`` (Miller-Rabin via GMP)."""
    return p > 5 and p % 2 == 1 and bool(gmpy2.is_prime(p, rounds)) and bool(
        gmpy2.is_prime((p - 1) // 2, rounds))


def random_permutation(n: int) -> list[int]:
    """A uniformly random permutation of ``range(n)`` from the OS's CSPRNG."""
    order = list(range(n))
    secrets.SystemRandom().shuffle(order)
    return order


def legendre(value: int, p: int) -> int:
    """The Legendre symbol ``(value|p)``: the bit the patent's encryption leaks (item 12)."""
    return int(gmpy2.legendre(value, p))
