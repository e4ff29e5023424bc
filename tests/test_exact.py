"""Proofs by machine: exact enumeration (fractions, no sampling) with the same protocol
generators, and negative controls showing that the checks catch a broken protocol."""

import dataclasses
import itertools
import json
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from protocol_runner.cards import parse_card, parse_cards
from protocol_runner.exact import (
    CARD_SELECTION_CASES,
    Branches,
    Histories,
    Proof,
    and_input,
    enumerate_branches,
    lottery_branches,
    lottery_outcomes,
    prove_and,
    prove_card_selection,
    prove_lottery,
)
from protocol_runner.machine import VOCAB, PileScramble, Protocol, Rearrange, bit_tokens
from protocol_runner.protocols.card_selection import uno_card_selection, uno_groups
from protocol_runner.protocols.six_card_and import and_protocol
from protocol_runner.simulate import lottery_protocol


def test_six_card_and_all_inputs() -> None:
    proof = prove_and()
    assert proof.ok and proof.inputs == 4, proof.line()
    assert proof.details == ["transcripts: α,β: 1/2, β,α: 1/2"]


@pytest.mark.parametrize("original", [False, True])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5])
def test_lottery_every_validity_vector(m: int, original: bool) -> None:
    proof = prove_lottery(m, original)
    assert proof.ok and proof.inputs == 2 ** m, proof.line()


def test_lottery_exact_distributions() -> None:
    b = lottery_branches((1, 0, 1), False)
    assert lottery_outcomes(b, 3) == {"0": Fraction(1, 2), "2": Fraction(1, 2)}
    transcripts = b.transcripts()
    # three AND reveals (1/2 each) and the βα pair in one of three places, all independent
    assert len(transcripts) == 2 ** 3 * 3
    assert set(transcripts.values()) == {Fraction(1, 24)}
    assert lottery_outcomes(lottery_branches((0, 0), True), 2) == {
        "0": Fraction(1, 2), "1": Fraction(1, 2)}


@pytest.mark.parametrize("variant", ["v2", "v1"])
@pytest.mark.parametrize(("top", "cards", "sizes", "colour"), CARD_SELECTION_CASES)
def test_card_selection_every_deal(top: str, cards: str, sizes: tuple[int, ...],
                                   colour: str | None, variant: str) -> None:
    """k = 3…6 (P1, other players, deck), incl. deals leaving P1 without a valid card, a black
    top card and repeated faces."""
    proof = prove_card_selection(top, cards, sizes, variant, colour)  # type: ignore[arg-type]
    assert proof.ok, proof.line()
    assert proof.inputs > 1


def test_prove_command(capsys: pytest.CaptureFixture[str],
                       monkeypatch: pytest.MonkeyPatch) -> None:
    from protocol_runner import exact
    from protocol_runner.cli import main

    monkeypatch.setattr(exact, "all_proofs", lambda: iter([prove_and()]))
    assert main(["prove"]) == 0
    assert "six-card AND: 4 inputs" in capsys.readouterr().out
    broken = Proof("broken", inputs=1, secure=False)
    monkeypatch.setattr(exact, "all_proofs", lambda: iter([prove_and(), broken]))
    assert main(["prove", "--json"]) == 1
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["secure"] for x in lines] == [True, False]


def test_card_selection_exact_uniformity_with_copies() -> None:
    from protocol_runner.exact import uno_branches

    hand = parse_cards("7R,7R,2G")
    b = uno_branches(parse_card("2R"), hand, [parse_cards("5B")], parse_cards("9Y"))
    outcome = b.distribution([VOCAB.item(int(t)) for t in b.table.area("selected")[:, 0]])
    assert outcome == {parse_card("7R"): Fraction(2, 3), parse_card("2G"): Fraction(1, 3)}
    assert sum(b.transcripts().values()) == 1


# ---------------------------------------------------------------------- negative controls

def without_shuffle(protocol: Protocol, protocol_name: str, number: str) -> Protocol:
    """The same protocol with one pile-scramble replaced by doing nothing."""
    try:
        step = next(protocol)
        while True:
            if (isinstance(step.action, PileScramble) and step.number == number
                    and step.protocol.startswith(protocol_name)):
                piles = step.action.piles.ravel()
                step = dataclasses.replace(step, action=Rearrange(piles, piles))
            reveal = yield step
            step = protocol.send(reveal)
    except StopIteration as stop:
        return stop.value


def test_and_without_its_shuffle_leaks_x() -> None:
    histories = Histories()
    runs = []
    for x in (0, 1):
        protocol, areas = and_input(x, 1)
        runs.append(enumerate_branches(without_shuffle(protocol, "six-card AND", "3"), areas,
                                       histories))
    assert runs[0].transcripts() != runs[1].transcripts()  # the turned pair is x itself


def test_lottery_without_first_shuffle_is_not_uniform() -> None:
    m, valid = 3, (1, 1, 0)
    b = enumerate_branches(without_shuffle(lottery_protocol(m, False), "modified", "2"),
                           {"cards": VOCAB.tokens(VOCAB.faces[:m]),
                            "bits": bit_tokens(valid).ravel()})
    assert lottery_outcomes(b, m) == {"0": 1}  # always the first valid card


@pytest.mark.parametrize("number", ["4", "8"])
def test_card_selection_without_a_shuffle_leaks_the_hands(number: str) -> None:
    top, cards = parse_card("2R"), parse_cards("7R,SY,2G,W")
    histories = Histories()
    runs: list[Branches] = []
    for hand, other in (((0, 1), (2,)), ((2, 3), (0,))):
        h = [cards[i] for i in hand]
        o = [cards[i] for i in other]
        d = [c for c in cards if c not in h + o]
        groups = uno_groups([1], 1, hand=2)
        areas = {"P1": VOCAB.tokens(h), "P2": VOCAB.tokens(o), "deck": VOCAB.tokens(d)}
        protocol = uno_card_selection(groups, Counter(cards), top)
        runs.append(enumerate_branches(without_shuffle(protocol, "UNO", number), areas,
                                       histories))
    assert runs[0].transcripts() != runs[1].transcripts()


def test_histories_intern_equal_distributions() -> None:
    h = Histories()
    a = h.intern({(0, ((1, 2),)): Fraction(1, 2), (0, ((2, 1),)): Fraction(1, 2)})
    b = h.intern({(0, ((2, 1),)): Fraction(1, 2), (0, ((1, 2),)): Fraction(1, 2)})
    assert a == b != 0
    codes = np.array(["a", "b", "c"], dtype=object)
    assert h.expand(a, codes) == {"b,c": Fraction(1, 2), "c,b": Fraction(1, 2)}


@pytest.mark.parametrize(("x", "y"), list(itertools.product((0, 1), repeat=2)))
def test_exact_counts_shuffles_like_the_simulator(x: int, y: int) -> None:
    b = enumerate_branches(and_protocol(), {"x": bit_tokens([x])[0], "y": bit_tokens([y])[0]})
    assert b.table.costs.pile_scramble == 1
    assert sum(b.distribution([0] * b.table.runs).values()) == 1


@pytest.mark.parametrize("variant", ["v2", "v1"])
def test_history_compression_changes_nothing(variant: str) -> None:
    """Merging same-state rows across transcripts (the speed-up) gives exactly the
    distributions of keeping every transcript apart."""
    from protocol_runner.protocols.card_selection import uno_card_selection, uno_groups

    hand, other, deck = parse_cards("7R,SY"), parse_cards("2G"), parse_cards("W")
    areas = {"P1": VOCAB.tokens(hand), "P2": VOCAB.tokens(other), "deck": VOCAB.tokens(deck)}
    results = []
    for compress in (True, False):
        protocol = uno_card_selection(uno_groups([1], 1, hand=2), Counter(hand + other + deck),
                                      parse_card("2R"), variant=variant)  # type: ignore[arg-type]
        b = enumerate_branches(protocol, areas, compress=compress)
        selected = b.distribution(b.table.area("selected")[:, 0].tolist())
        results.append((b.transcripts(), selected, b.table.runs))
    assert results[0][:2] == results[1][:2]
    assert results[0][2] < results[1][2]  # and it is smaller
    assert len(results[0][0]) > 100
