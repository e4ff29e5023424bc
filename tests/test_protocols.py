"""The protocols on simulated tables: costs as the papers count them, outcomes, step scripts."""

from collections import Counter

import numpy as np
import pytest

from protocol_runner.cards import Card, parse_card, parse_cards, remaining, uno_playable
from protocol_runner.machine import VOCAB, Place, Step, Table, drive, read_bits
from protocol_runner.protocols.card_selection import (
    Group,
    SelectionError,
    card_selection,
    uno_card_selection,
    uno_groups,
)
from protocol_runner.protocols.six_card_and import and_protocol
from protocol_runner.protocols.wild_colour import wild_colour
from protocol_runner.simulate import deal_uno, lottery_protocol, simulate_lottery, simulate_uno


@pytest.mark.parametrize(("x", "y"), [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_six_card_and_outputs_and_and_nand(x: int, y: int) -> None:
    from protocol_runner.machine import bit_tokens

    t = Table(200, {"x": bit_tokens([x])[0], "y": bit_tokens([y])[0]}, np.random.default_rng(x))
    xy, nxy = drive(and_protocol(), t)
    rows = np.arange(200)[:, None]
    assert (read_bits(t.cards[rows, xy]) == (x & y)).all()
    assert (read_bits(t.cards[rows, nxy]) == ((1 - x) & y)).all()
    assert t.costs.pile_scramble == 1
    assert t.area("pool").shape == (200, 2)  # the turned pair went back


@pytest.mark.parametrize(
    ("valid", "original", "shuffles", "outcomes"),
    [
        ([1, 0, 1, 1], False, 6, {"0", "2", "3"}),
        ([0, 0, 0], False, 5, {"none"}),
        ([0, 0, 0], True, 4, {"0", "1", "2"}),
        ([0, 1], True, 3, {"1"}),
        ([1], False, 3, {"0"}),
    ],
)
def test_lottery(valid: list[int], original: bool, shuffles: int, outcomes: set[str]) -> None:
    sim = simulate_lottery(valid, original, runs=3000, seed=2)
    assert sim.costs.pile_scramble == shuffles  # m + 2 (original m + 1)
    assert sim.helper_cards() == 4
    assert set(sim.outcomes) == outcomes


HAND = "7R,SY,2G,W,3B,4B,5Y"


@pytest.mark.parametrize(
    ("variant", "others", "extra_shuffles", "steps"),
    [("v2", [7, 7], 4, 12), ("v1", [7, 7], 5, 15), ("v2", [], 4, 12), ("v1", [3], 5, 15)],
)
def test_card_selection_costs_and_validity(variant: str, others: list[int],
                                           extra_shuffles: int, steps: int) -> None:
    deal = deal_uno("2R", HAND.split(","), others, rng=np.random.default_rng(5))
    sim = simulate_uno(deal, variant, runs=2000, seed=5)  # type: ignore[arg-type]
    k, k1 = 107, 7
    assert sim.costs.pile_scramble == k1 + extra_shuffles
    assert sim.helper_cards() == 3 * k + 4
    assert set(sim.outcomes) == {"7R", "2G", "W"}  # exactly the valid cards
    groups, _ = deal.groups_and_areas()
    numbers = {s.number for s in _steps(deal, variant) if s.protocol.startswith("UNO")}
    assert {str(i) for i in range(1, steps + 1)} == numbers
    assert len(groups) == len(others) + 2


def _steps(deal, variant: str) -> list[Step]:
    groups, areas = deal.groups_and_areas()
    steps: list[Step] = []
    protocol = uno_card_selection(groups, deal.in_play(), deal.top, deal.colour, variant)
    drive(protocol, Table(1, areas, np.random.default_rng(0)),
          on_step=lambda s, r: steps.append(s))
    return steps


def test_no_valid_card_selects_none() -> None:
    deal = deal_uno("2R", ["5B", "SY"], [4], rng=np.random.default_rng(1))
    assert simulate_uno(deal, runs=500).outcomes == Counter({"none": 500})


def test_black_top_uses_colour_in_force() -> None:
    deal = deal_uno("W", ["5B", "SY", "+4", "2R"], [4], colour="Y",
                    rng=np.random.default_rng(1))
    assert set(simulate_uno(deal, runs=1000).outcomes) == {"SY", "+4"}


def test_draw_then_play_only_the_drawn_card() -> None:
    for drawn, expected in (("5R", {"5R"}), ("5B", {"none"})):
        deal = deal_uno("2R", ["7R", "W"], [7], drawn=drawn, rng=np.random.default_rng(1))
        sim = simulate_uno(deal, runs=500)
        assert set(sim.outcomes) == expected  # never 7R or W, though they are valid
        assert sim.costs.pile_scramble == 1 + 4


def test_discard_pile_as_a_group_hides_the_remaining_cards() -> None:
    deal = deal_uno("2R", ["7R", "9B"], [5], discard=["3R", "3G"], hide_remaining=True,
                    rng=np.random.default_rng(1))
    steps = _steps(deal, "v2")
    sim = simulate_uno(deal, runs=300)
    assert set(sim.outcomes) == {"7R"}
    assert sim.helper_cards() == 3 * 107 + 4  # every card but the top: 105 + 2 discards
    assert any("discard" in s.text for s in steps)


def test_step_texts_render_per_run() -> None:
    deal = deal_uno("2R", ["7R", "9B", "2G"], [2], rng=np.random.default_rng(1))
    groups, areas = deal.groups_and_areas()
    texts: list[str] = []
    protocol = uno_card_selection(groups, deal.in_play(), deal.top, None, "v2")
    t = Table(1, areas, np.random.default_rng(0))
    drive(protocol, t, on_step=lambda s, r: texts.append(s.instruction(0)))
    placing = next(x for x in texts if x.startswith("Place β α below column"))
    assert "valid cards" in placing
    assert any(x.startswith("Take the columns with θ1 (") for x in texts)
    assert any("pair (y_1 = X_1 ∧ t) into pile 1" in x for x in texts)


def test_generic_selection_with_a_custom_rule() -> None:
    """Sevens-like use: no unplayed deck, validity by a predicate."""
    hand, other = parse_cards("7H,8S,2C"), parse_cards("6H,KD")
    groups = [Group("P1", 3), Group("P2", 2)]
    areas = {"P1": VOCAB.tokens(hand), "P2": VOCAB.tokens(other)}
    t = Table(400, areas, np.random.default_rng(0))
    drive(card_selection(groups, Counter(hand + other), lambda c: c.rank == "7"), t)
    assert set(t.area("selected")[:, 0].tolist()) == {VOCAB.token(Card("7H"))}


@pytest.mark.parametrize(
    ("groups", "remaining_cards", "message"),
    [
        ([Group("P1", 0), Group("deck", 2)], "7R,8R", "at least one card"),
        ([Group("P1", 2)], "7R", "2 cards but 1 remain"),
    ],
)
def test_selection_refuses_bad_public_inputs(groups: list[Group], remaining_cards: str,
                                             message: str) -> None:
    with pytest.raises(SelectionError, match=message):
        next(card_selection(groups, Counter(parse_cards(remaining_cards)), lambda c: True))


def test_uno_selection_refuses_inconsistent_colour() -> None:
    groups = uno_groups([], 1, hand=1)
    for top, colour in (("W", None), ("2R", "G")):
        with pytest.raises(SelectionError):
            next(uno_card_selection(groups, Counter(parse_cards("7R,8R")), parse_card(top),
                                    colour))


def test_wild_colour_is_uniform() -> None:
    t = Table(8000, {}, np.random.default_rng(4))
    tokens = drive(wild_colour(), t)
    colours = Counter(VOCAB.item(int(x)).colour for x in tokens)  # type: ignore[union-attr]
    assert set(colours) == {"R", "Y", "G", "B"}
    assert all(abs(n - 2000) < 200 for n in colours.values())
    assert t.costs.helper_total() == (4, 4)


def test_helper_cards_are_placed_by_role() -> None:
    steps: list[Step] = []
    drive(lottery_protocol(3, False), Table(1, {
        "cards": VOCAB.tokens(VOCAB.faces[:3]),
        "bits": np.array([0, 1, 0, 1, 1, 0], dtype=np.int16)}, np.random.default_rng(0)),
        on_step=lambda s, r: steps.append(s))
    placed = [s for s in steps if isinstance(s.action, Place)]
    assert len(placed) == 1 + 3  # token + one αβ per AND
    assert {s.protocol for s in steps} == {"modified covert lottery", "six-card AND"}


def test_full_deck_sanity() -> None:
    hand = parse_cards(HAND)
    rest = remaining("uno", [parse_card("2R")], hand)
    assert len(rest) == 100
    assert sum(uno_playable(c, parse_card("2R")) for c in hand) == 3
