"""Card codes, decks and UNO validity: the vocabulary every other module speaks.

Codes follow ``../shared/CONVENTIONS.md`` exactly. A code names a *face*, not a copy: the UNO deck
holds two ``7R``. ``BACK`` is not a face; it is what the camera reports for a face-down card.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Literal

BACK = "BACK"

UNO_COLOURS = ("R", "Y", "G", "B")
UNO_SYMBOLS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "S", "R", "+2")
UNO_BLACK = ("W", "+4")
SUITS = ("S", "H", "D", "C")
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
JOKER = "JK"
PIPS = range(7)  # a double-six domino set: ends 0 (blank) to 6

Deck = Literal["uno", "standard", "domino"]

_UNO_RE = re.compile(r"^(?P<symbol>[0-9SR]|\+2)(?P<colour>[RYGB])$")
_STD_RE = re.compile(r"^(?P<rank>A|[2-9]|10|[JQK])(?P<suit>[SHDC])$")
_DOMINO_RE = re.compile(r"^D(?P<low>[0-6])(?P<high>[0-6])$")


class CardCodeError(ValueError):
    """A string that is not a card code of CONVENTIONS.md."""


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One card face. Build it with :func:`parse_card`; ``str(card)`` prints the canonical code."""

    code: str

    def __post_init__(self) -> None:
        if self.code != self.code.upper() or not _is_code(self.code):
            raise CardCodeError(f"not a canonical card code: {self.code!r}")

    def __str__(self) -> str:
        return self.code

    @property
    def deck(self) -> Deck:
        if _DOMINO_RE.match(self.code):
            return "domino"
        return "uno" if _UNO_RE.match(self.code) or self.code in UNO_BLACK else "standard"

    @property
    def pips(self) -> tuple[int, int] | None:
        """A domino tile's two ends, smaller first (``D56`` → ``(5, 6)``); ``None`` for cards."""
        m = _DOMINO_RE.match(self.code)
        return (int(m["low"]), int(m["high"])) if m else None

    @property
    def is_doublet(self) -> bool:
        """A domino tile with the same number on both ends (``D00`` … ``D66``)."""
        return self.pips is not None and self.pips[0] == self.pips[1]

    @property
    def is_black(self) -> bool:
        """A UNO wild or wild draw four."""
        return self.code in UNO_BLACK

    @property
    def colour(self) -> str | None:
        """UNO colour letter, ``None`` for black cards and standard cards."""
        m = _UNO_RE.match(self.code)
        return m["colour"] if m else None

    @property
    def symbol(self) -> str:
        """UNO symbol (``7``, ``S``, ``R``, ``+2``, ``W``, ``+4``); standard rank; ``JK``; a
        domino tile's own code."""
        if m := _UNO_RE.match(self.code):
            return m["symbol"]
        if m := _STD_RE.match(self.code):
            return m["rank"]
        return self.code

    @property
    def suit(self) -> str | None:
        m = _STD_RE.match(self.code)
        return m["suit"] if m else None

    @property
    def rank(self) -> str | None:
        m = _STD_RE.match(self.code)
        return m["rank"] if m else None


def _is_code(code: str) -> bool:
    if m := _DOMINO_RE.match(code):
        return m["low"] <= m["high"]
    return bool(_UNO_RE.match(code) or _STD_RE.match(code)) or code in UNO_BLACK or code == JOKER


def parse_card(text: str) -> Card:
    """Parse a code case-insensitively (``7r`` → ``7R``); raise :class:`CardCodeError` otherwise."""
    if not isinstance(text, str):
        raise CardCodeError(f"a card code must be a string, got {type(text).__name__}")
    code = text.strip().upper()
    if code == BACK:
        raise CardCodeError("BACK is a face-down card, not a face; a card code was expected here")
    if (m := _DOMINO_RE.match(code)) and m["low"] > m["high"]:
        raise CardCodeError(
            f"domino code {text!r} names the larger end first: write D{m['high']}{m['low']}"
        )
    if not _is_code(code):
        raise CardCodeError(
            f"unknown card code {text!r}: expected e.g. 7R, SY, +2B, W, +4 (UNO), "
            "AS, 10H, QD (standard), JK, or D56 (domino tile 5–6)"
        )
    return Card(code)


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse ``"7R,SY,2G"`` or an iterable of codes; an empty string is an empty list."""
    items = text.split(",") if isinstance(text, str) else list(text)
    return [parse_card(item) for item in items if item.strip()]


@cache
def uno_deck() -> tuple[Card, ...]:
    """The 108-card UNO deck: one 0 and two of every other symbol per colour, four of each black."""
    cards: list[Card] = []
    for colour in UNO_COLOURS:
        for symbol in UNO_SYMBOLS:
            cards += [Card(symbol + colour)] * (1 if symbol == "0" else 2)
    for black in UNO_BLACK:
        cards += [Card(black)] * 4
    return tuple(cards)


@cache
def standard_deck() -> tuple[Card, ...]:
    """The 54-card standard deck: 52 faces and two jokers (both read ``JK``)."""
    return tuple(Card(rank + suit) for suit in SUITS for rank in RANKS) + (Card(JOKER),) * 2


@cache
def domino_set() -> tuple[Card, ...]:
    """The 28 tiles of a double-six domino set, ``D00`` … ``D66``, each once (smaller end first)."""
    return tuple(Card(f"D{low}{high}") for low in PIPS for high in PIPS if low <= high)


@cache
def uno_faces() -> tuple[Card, ...]:
    """The 54 distinct UNO faces, in deck order."""
    return tuple(dict.fromkeys(uno_deck()))


@cache
def standard_faces() -> tuple[Card, ...]:
    """The 53 distinct standard faces (52 and ``JK``)."""
    return tuple(dict.fromkeys(standard_deck()))


def deck_counter(deck: Deck) -> Counter[Card]:
    if deck == "domino":
        return Counter(domino_set())
    return Counter(uno_deck() if deck == "uno" else standard_deck())


class DeckError(ValueError):
    """A multiset of cards that the deck cannot hold."""


def check_within_deck(cards: Iterable[Card], deck: Deck = "uno", what: str = "these cards") -> None:
    """Raise :class:`DeckError` if ``cards`` use a face more often than the deck holds it."""
    available = deck_counter(deck)
    for card, count in Counter(cards).items():
        if count > available[card]:
            have = available[card]
            raise DeckError(
                f"{what} hold {count} × {card}, but a {deck} deck has only {have}"
                if have
                else f"{card} is not a card of the {deck} deck"
            )


def remaining(deck: Deck, *used: Iterable[Card]) -> list[Card]:
    """The deck minus every card in ``used`` (as a multiset), in deck order."""
    left = deck_counter(deck)
    for group in used:
        for card in group:
            if left[card] == 0:
                raise DeckError(f"no {card} left in the {deck} deck")
            left[card] -= 1
    return [card for card in dict.fromkeys(left) for _ in range(left[card])]


def uno_playable(card: Card, top: Card, colour_in_force: str | None = None) -> bool:
    """May ``card`` be played on ``top`` under the rules of Section 3.1 of the UNO paper?

    Black cards are always playable (``NOTES.md`` item 6). On a black top card only the colour
    its player chose (``colour_in_force``) matches; a colour card matches by colour or symbol.
    """
    if card.is_black:
        return True
    if top.is_black:
        if colour_in_force is None:
            raise ValueError(f"the colour chosen for {top} is needed to judge {card}")
        return card.colour == colour_in_force
    if colour_in_force is not None and colour_in_force != top.colour:
        raise ValueError(f"{top} is a colour card; no other colour can be in force")
    return card.colour == top.colour or card.symbol == top.symbol
