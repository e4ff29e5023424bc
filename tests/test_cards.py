"""Card codes, decks and UNO validity, as tables of cases including the bad ones."""

from collections import Counter

import pytest

from protocol_runner.cards import (
    Card,
    CardCodeError,
    DeckError,
    check_within_deck,
    parse_card,
    parse_cards,
    remaining,
    standard_deck,
    uno_deck,
    uno_faces,
    uno_playable,
)
from protocol_runner.helpers import (
    ALPHA,
    BETA,
    HelperDeck,
    HelperDeckError,
    Role,
    default_uno_helper_deck,
    theta,
)


@pytest.mark.parametrize(
    ("text", "code"),
    [("7R", "7R"), ("7r", "7R"), (" sy ", "SY"), ("+2b", "+2B"), ("w", "W"), ("+4", "+4"),
     ("as", "AS"), ("10H", "10H"), ("qd", "QD"), ("jk", "JK"), ("RG", "RG"), ("RR", "RR")],
)
def test_parse_canonical(text: str, code: str) -> None:
    assert str(parse_card(text)) == code


@pytest.mark.parametrize("text", ["", "BACK", "back", "11R", "7X", "1H", "+3R", "W R", "JOKER",
                                  "10", "R", "++2R", "0S0"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(CardCodeError):
        parse_card(text)


@pytest.mark.parametrize(("code", "symbol"), [
    ("7R", "7"), ("0B", "0"), ("+2G", "+2"), ("RY", "R"), ("SB", "S"), ("W", "W"), ("+4", "+4"),
    ("10H", "10"), ("QS", "Q"), ("JK", "JK"), ("D56", "D56"),
])
def test_symbol(code: str, symbol: str) -> None:
    assert Card(code).symbol == symbol


def test_deck_sizes() -> None:
    assert len(uno_deck()) == 108
    assert len(uno_faces()) == 54
    assert Counter(uno_deck())[Card("0R")] == 1
    assert Counter(uno_deck())[Card("+4")] == 4
    assert len(standard_deck()) == 54
    assert Counter(standard_deck())[Card("JK")] == 2


@pytest.mark.parametrize(
    ("card", "top", "colour", "ok"),
    [("7R", "2R", None, True), ("7G", "7R", None, True), ("7G", "2R", None, False),
     ("SY", "SB", None, True), ("+2B", "+2R", None, True), ("W", "5G", None, True),
     ("+4", "5G", None, True), ("5G", "W", "G", True), ("5R", "W", "G", False),
     ("RY", "+4", "Y", True), ("0B", "0G", None, True), ("2R", "+2R", None, True),
     ("2G", "+2R", None, False)],
)
def test_uno_playable(card: str, top: str, colour: str | None, ok: bool) -> None:
    assert uno_playable(parse_card(card), parse_card(top), colour) is ok


def test_uno_playable_needs_colour_on_black() -> None:
    with pytest.raises(ValueError, match="colour chosen"):
        uno_playable(parse_card("5R"), parse_card("W"))


def test_deck_limits() -> None:
    check_within_deck(parse_cards("7R,7R"))
    with pytest.raises(DeckError, match="only 2"):
        check_within_deck(parse_cards("7R,7R,7R"))
    with pytest.raises(DeckError, match="not a card of the uno deck"):
        check_within_deck(parse_cards("AS"))
    assert len(remaining("uno", parse_cards("7R,W"))) == 106


def test_helper_deck() -> None:
    deck = HelperDeck.from_mapping({"alpha": "1R", "beta": "2g", "theta1": "3B"})
    assert deck.card(ALPHA) == Card("1R") and deck.role(Card("2G")) == BETA
    assert deck.cards_needed(Counter({ALPHA: 3, theta(1): 2})) == Counter(
        {Card("1R"): 3, Card("3B"): 2})
    with pytest.raises(HelperDeckError, match="both"):
        HelperDeck.from_mapping({"alpha": "1R", "beta": "1r"})
    with pytest.raises(HelperDeckError, match="only 1"):
        deck.check_supply(Counter({ALPHA: 2}), Counter({Card("1R"): 1}))
    with pytest.raises(HelperDeckError, match="no face"):
        deck.card(theta(2))
    with pytest.raises(HelperDeckError, match="unknown helper role"):
        Role.parse("gamma")
    assert default_uno_helper_deck(4).card(theta(4)) == Card("4B")
