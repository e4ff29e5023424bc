"""Helper roles (α, β, θᵢ, Old Maid i-cards, dummies, the helper joker) and the helper deck.

The papers speak of roles; the table holds physical cards. A :class:`HelperDeck` maps each role
to one physical face, so that the camera (which reads faces) and the protocols (which speak of
roles) meet. Two roles on one face would make a reveal ambiguous, so that is refused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from protocol_runner.cards import Card, parse_card

RoleKind = Literal["alpha", "beta", "theta", "icard", "dummy", "joker"]
_INDEXED: frozenset[str] = frozenset({"theta", "icard"})
_SYMBOLS = {"alpha": "α", "beta": "β", "theta": "θ", "icard": "i", "dummy": "□", "joker": "Jo̅"}


class HelperDeckError(ValueError):
    """A helper deck that cannot serve a protocol: a role on two faces, a missing role, too few
    copies."""


@dataclass(frozen=True, order=True, slots=True)
class Role:
    """One helper role. ``index`` is the player number for θᵢ and Old Maid i-cards (1-based)."""

    kind: RoleKind
    index: int | None = None

    def __post_init__(self) -> None:
        if (self.kind in _INDEXED) != (self.index is not None):
            raise ValueError(f"role {self.kind} {'needs' if self.kind in _INDEXED else 'takes no'}"
                             " player index")
        if self.index is not None and self.index < 1:
            raise ValueError(f"player indices start at 1, got {self.index}")

    def __str__(self) -> str:
        if self.kind == "theta":
            return f"θ{self.index}"
        if self.kind == "icard":
            return f"{self.index}-card"
        return _SYMBOLS[self.kind]

    @classmethod
    def parse(cls, text: str) -> Role:
        """``alpha``, ``beta``, ``theta3``, ``icard2``, ``dummy``, ``joker`` (also α, β, θ3)."""
        t = text.strip().lower().replace("α", "alpha").replace("β", "beta").replace("θ", "theta")
        for kind in ("theta", "icard"):
            if t.startswith(kind) and t[len(kind):].isdigit():
                return cls(kind, int(t[len(kind):]))  # type: ignore[arg-type]
        if t in ("alpha", "beta", "dummy", "joker"):
            return cls(t)  # type: ignore[arg-type]
        raise HelperDeckError(f"unknown helper role {text!r}: use alpha, beta, thetaN, icardN, "
                              "dummy or joker")


ALPHA = Role("alpha")
BETA = Role("beta")
DUMMY = Role("dummy")
HELPER_JOKER = Role("joker")


def theta(i: int) -> Role:
    return Role("theta", i)


def icard(i: int) -> Role:
    return Role("icard", i)


@dataclass(frozen=True)
class HelperDeck:
    """Which physical face plays each role. Build with :meth:`from_mapping` to get validation."""

    faces: Mapping[Role, Card] = field(default_factory=dict)

    def __post_init__(self) -> None:
        seen: dict[Card, Role] = {}
        for role, card in self.faces.items():
            if card in seen:
                raise HelperDeckError(
                    f"the helper deck maps both {seen[card]} and {role} to {card}: "
                    "a reveal could not tell them apart; give each role its own face"
                )
            seen[card] = role

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, str]) -> HelperDeck:
        """From ``{"alpha": "1R", "beta": "2G", "theta1": "3B"}`` (e.g. a JSON file)."""
        return cls({Role.parse(role): parse_card(code) for role, code in mapping.items()})

    def to_mapping(self) -> dict[str, str]:
        return {_role_key(role): str(card) for role, card in sorted(self.faces.items())}

    def card(self, role: Role) -> Card:
        try:
            return self.faces[role]
        except KeyError:
            raise HelperDeckError(f"the helper deck has no face for {role}") from None

    def role(self, card: Card) -> Role | None:
        """The role a face plays, or ``None`` if it plays none."""
        for role, face in self.faces.items():
            if face == card:
                return role
        return None

    def cards_needed(self, roles: Counter[Role]) -> Counter[Card]:
        """How many copies of each physical face a protocol run needs, from its role counts."""
        need: Counter[Card] = Counter()
        for role, count in roles.items():
            need[self.card(role)] += count
        return need

    def check_supply(self, roles: Counter[Role], supply: Counter[Card]) -> None:
        """Raise :class:`HelperDeckError` naming the first face of which there are too few."""
        for card, count in sorted(self.cards_needed(roles).items()):
            if supply[card] < count:
                raise HelperDeckError(
                    f"this needs {count} × {card} ({self.role(card)}), but only {supply[card]} "
                    "are available: add copies or map the role to another face"
                )


def _role_key(role: Role) -> str:
    return f"{role.kind}{role.index}" if role.index is not None else role.kind


def default_uno_helper_deck(players: int = 10) -> HelperDeck:
    """The paper's example (α = 1R, β = 2G) and θᵢ on blue, then yellow numbers (θ1 = 1B …).

    ``players`` counts owner groups: every player, the unplayed deck and, optionally, the
    discard pile (NOTES.md item 4). Up to 18 groups fit on distinct faces.
    """
    faces = ["1B", "2B", "3B", "4B", "5B", "6B", "7B", "8B", "9B",
             "3Y", "4Y", "5Y", "6Y", "7Y", "8Y", "9Y", "0B", "0Y"]
    if players > len(faces):
        raise HelperDeckError(f"the default helper deck has θ faces for {len(faces)} groups, "
                              f"not {players}: give a helper deck of your own")
    mapping = {ALPHA: Card("1R"), BETA: Card("2G")}
    mapping.update({theta(i + 1): Card(faces[i]) for i in range(players)})
    return HelperDeck(mapping)
