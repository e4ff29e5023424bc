"""The card-based machine: every action on a batched table, including the refused ones."""

from collections import Counter

import numpy as np
import pytest

from protocol_runner.cards import Card
from protocol_runner.helpers import ALPHA, BETA, HelperDeck, theta
from protocol_runner.machine import (
    EMPTY,
    T_ALPHA,
    T_BETA,
    VOCAB,
    BisectionCut,
    Expect,
    Lay,
    MachineError,
    PileScramble,
    Place,
    Rearrange,
    Region,
    Slots,
    Step,
    Table,
    Take,
    Turn,
    bit_tokens,
    cards_to_prepare,
    drive,
    read_bits,
    t_theta,
    transcript_strings,
)

R7, SY, G2 = (VOCAB.token(Card(c)) for c in ("7R", "SY", "2G"))


def table(runs: int = 4, seed: int = 0) -> Table:
    t = Table(runs, {"P1": np.array([R7, SY, G2])}, np.random.default_rng(seed))
    t.apply(Lay("P1", np.arange(3)))
    return t


def test_vocabulary_roles_then_faces() -> None:
    assert VOCAB.item(T_ALPHA) == ALPHA and VOCAB.item(T_BETA) == BETA
    assert VOCAB.item(t_theta(3)) == theta(3)
    assert VOCAB.item(R7) == Card("7R")
    codes = VOCAB.codes(HelperDeck({ALPHA: Card("1R"), BETA: Card("2G")}))
    assert (codes[T_ALPHA], codes[T_BETA], codes[R7], codes[t_theta(1)]) == ("1R", "2G", "7R",
                                                                             "θ1")
    with pytest.raises(MachineError):
        VOCAB.item(EMPTY)


@pytest.mark.parametrize(("bits", "pairs"), [([0], [[T_ALPHA, T_BETA]]),
                                              ([1, 0], [[T_BETA, T_ALPHA], [T_ALPHA, T_BETA]])])
def test_bit_encoding(bits: list[int], pairs: list[list[int]]) -> None:
    assert bit_tokens(bits).tolist() == pairs
    assert read_bits(bit_tokens(bits)).tolist() == bits
    assert read_bits(np.array([[T_ALPHA, T_ALPHA]])).tolist() == [-1]


def test_lay_turn_reveal_and_transcript() -> None:
    t = table()
    assert t.areas["P1"].shape == (4, 0)
    assert not t.up.any()
    reveal = t.apply(Turn(np.array([2, 0]), up=True))
    assert reveal is not None and reveal.tokens.tolist() == [[G2, R7]] * 4
    assert t.apply(Turn(np.array([2, 0]), up=False)) is None
    assert transcript_strings(t.transcript, VOCAB.codes()) == ["2G,7R"] * 4


def test_place_counts_helpers_and_pool_returns_them() -> None:
    t = table(runs=2)
    t.apply(Place(np.array([[T_BETA, T_ALPHA], [T_ALPHA, T_BETA]]), np.arange(3, 5), True))
    assert t.up[:, 3:].all()
    t.apply(Take(np.arange(3, 5), to="pool"))
    t.apply(Place(bit_tokens([0])[0], np.arange(5, 7), face_up=False))
    assert t.costs.helper_counts() == Counter({ALPHA: 1, BETA: 1})
    assert t.costs.helper_total() == (2, 2)
    deck = HelperDeck({ALPHA: Card("1R"), BETA: Card("2G")})
    assert cards_to_prepare(Counter({ALPHA: 2, Card("0R"): 1}), deck) == Counter(
        {Card("1R"): 2, Card("0R"): 1})


def test_rearrange_public_and_per_run() -> None:
    t = table(runs=2)
    t.apply(Rearrange(np.array([0, 1, 2]), np.array([2, 0, 1])))
    assert t.cards[:, :3].tolist() == [[G2, R7, SY]] * 2
    t.apply(Rearrange(np.array([[0, 1], [0, 1]]), np.array([[1, 0], [0, 1]])))
    assert t.cards[:, :2].tolist() == [[R7, G2], [G2, R7]]


def test_pile_scramble_is_uniform_and_keeps_piles_together() -> None:
    runs = 6000
    t = Table(runs, {"a": np.array([R7, T_ALPHA, SY, T_BETA, G2, T_ALPHA])},
              np.random.default_rng(3))
    t.apply(Lay("a", np.arange(6)))
    t.apply(PileScramble(np.arange(6).reshape(3, 2)))
    pairs = {(R7, T_ALPHA), (SY, T_BETA), (G2, T_ALPHA)}
    assert all({tuple(p) for p in row.reshape(3, 2).tolist()} == pairs for row in t.cards[:50])
    first, counts = np.unique(t.cards[:, 0], return_counts=True)
    assert set(first.tolist()) == {R7, SY, G2}
    assert (abs(counts - runs / 3) < 5 * np.sqrt(runs / 3)).all()
    assert t.costs.pile_scramble == 1


def test_bisection_cut_swaps_halves_half_the_time() -> None:
    runs = 4000
    t = table(runs=runs)
    t.apply(Lay("P1", np.array([], dtype=np.int64)))
    t.apply(BisectionCut(np.array([[[0], [1]]])))
    swapped = t.cards[:, 0] == SY
    assert ((t.cards[:, 1] == R7) == swapped).all()
    assert abs(swapped.mean() - 0.5) < 0.05
    assert t.costs.random_bisection_cut == 1


def test_take_with_per_run_nothing_marker() -> None:
    t = table(runs=2)
    t.apply(Take(np.array([[1], [-1]]), to="selected"))
    assert t.area("selected").tolist() == [[SY], [EMPTY]]
    assert t.cards[:, 1].tolist() == [EMPTY, SY]
    assert t.area("nowhere").shape == (2, 0)


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (Turn(np.array([7]), up=True), "out of range"),
        (Turn(np.zeros((3, 1), dtype=np.int64), up=True), "per-run"),
        (Rearrange(np.array([0, 1]), np.array([0, 2])), "permutation"),
        (Place(np.array([T_ALPHA]), np.array([9]), face_up=True), "new slots"),
        (Lay("P2", np.array([3])), "no area"),
        (Lay("P1", np.array([3])), "fewer than 1"),
        (Take(np.array([[0], [1], [2]]), to="x"), "per-run"),
    ],
)
def test_bad_actions_are_refused(action: object, message: str) -> None:
    t = table(runs=4)
    with pytest.raises(MachineError, match=message):
        t.apply(action)  # type: ignore[arg-type]


def test_refuses_empty_slots_and_face_up_shuffles() -> None:
    t = table(runs=2)
    t.apply(Take(np.array([0]), to="pool"))
    for action in (Turn(np.array([0]), up=True), Take(np.array([0]), to="pool")):
        with pytest.raises(MachineError, match="empty"):
            t.apply(action)
    t.apply(Turn(np.array([1]), up=True))
    with pytest.raises(MachineError, match="face down"):
        t.apply(PileScramble(np.array([[1], [2]])))


@pytest.mark.parametrize(
    ("expect", "tokens", "ok"),
    [
        (Expect("αβ or βα", words=frozenset({(T_ALPHA, T_BETA), (T_BETA, T_ALPHA)})),
         [T_BETA, T_ALPHA, T_ALPHA, T_BETA], True),
        (Expect("αβ or βα", words=frozenset({(T_ALPHA, T_BETA), (T_BETA, T_ALPHA)})),
         [T_BETA, T_BETA], False),
        (Expect("at most one 1", word_counts=(((T_BETA, T_ALPHA), 0, 1),)),
         [T_BETA, T_ALPHA, T_BETA, T_ALPHA], False),
        (Expect("exactly one 1", word_counts=(((T_BETA, T_ALPHA), 1, 1),)),
         [T_ALPHA, T_BETA, T_BETA, T_ALPHA], True),
        (Expect("7R and SY", multiset={R7: 1, SY: 1}), [SY, R7], True),
        (Expect("7R and SY", multiset={R7: 1, SY: 1}), [SY, SY], False),
        (Expect("7R and SY", multiset={R7: 1, SY: 1}), [SY], False),
        (Expect("helpers", faces=frozenset({T_ALPHA})), [T_ALPHA, R7], False),
    ],
)
def test_expectations(expect: Expect, tokens: list[int], ok: bool) -> None:
    assert bool(expect.holds(np.array([tokens]))[0]) is ok
    problems = expect.problems(tokens)
    assert (problems == []) is ok
    if not ok:
        assert expect.text in problems[0]


def test_drive_sends_reveals_and_checks_expectations() -> None:
    seen = []

    def protocol():  # a tiny protocol: lay two cards, turn them, expect 7R and SY
        slots = Slots()
        pos = slots.new(2)
        yield Step("demo", "1", 2, "Lay two cards.", Lay("P1", pos),
                   (Region("row", pos[None, :]),))
        reveal = yield Step("demo", "2", 2, "Turn them.", Turn(pos, up=True),
                            expect=Expect("7R and SY", multiset={R7: 1, SY: 1}),
                            detail=lambda r: f"run {r}: turn both")
        seen.append(reveal.tokens.tolist())
        return "done"

    steps: list[Step] = []
    t = Table(2, {"P1": np.array([SY, R7, G2])}, np.random.default_rng(0))
    assert drive(protocol(), t, on_step=lambda s, r: steps.append(s)) == "done"
    assert seen == [[[SY, R7]] * 2]
    assert [s.title for s in steps] == ["demo step 1 of 2", "demo step 2 of 2"]
    assert steps[1].instruction(1) == "run 1: turn both"
    assert steps[0].instruction() == "Lay two cards."
    assert steps[0].regions[0].cells(0).tolist() == [[0, 1]]
    bad = Table(1, {"P1": np.array([G2, R7])}, np.random.default_rng(0))
    with pytest.raises(MachineError, match="contradicts"):
        drive(protocol(), bad)


def test_runner_reads_camera_codes_through_the_protocol_prior() -> None:
    """R = 1, answers from 'the camera': α = 1R is read as α where α/β are expected and as the
    game card 1R where game cards are expected; a contradiction is reported, not hidden."""
    from protocol_runner.protocols.six_card_and import and_protocol

    deck = HelperDeck({ALPHA: Card("1R"), BETA: Card("2G")})
    gen = and_protocol()
    step = next(gen)
    while not step.reveals:
        step = gen.send(None)
    reveal = step.read(["2G", "1R"], deck)
    assert reveal.tokens.tolist() == [[T_BETA, T_ALPHA]]
    assert step.expect is not None and step.expect.problems(reveal.tokens[0]) == []
    wrong = step.read(["2G", "7R"], deck)
    assert step.expect.problems(wrong.tokens[0], VOCAB, deck) == [
        "expected αβ or βα; saw 2G 7R"]
    xy, nxy = None, None
    try:
        gen.send(reveal)  # the turned pair goes back to the pool
        gen.send(None)
    except StopIteration as stop:
        xy, nxy = stop.value
    # line x x | α β | y y = slots 0 1 4 5 2 3; βα: the right pair (2, 3) is x∧y
    assert xy.tolist() == [[2, 3]] and nxy.tolist() == [[4, 5]]
    with pytest.raises(MachineError, match="2 cards turned, 1 read"):
        step.read(["1R"], deck)
    lay = next(and_protocol())
    with pytest.raises(MachineError, match="turns nothing"):
        lay.read([], deck)
    game = Step("t", "5", 12, "", Turn(np.array([0]), up=True),
                expect=Expect("a game card", faces=frozenset({VOCAB.token(Card("1R"))})))
    assert game.read(["1R"], deck).tokens.tolist() == [[VOCAB.token(Card("1R"))]]


def test_measure_tells_what_to_prepare() -> None:
    from protocol_runner.cards import parse_cards
    from protocol_runner.helpers import default_uno_helper_deck
    from protocol_runner.machine import measure
    from protocol_runner.protocols.card_selection import uno_card_selection, uno_groups

    hand, deck = parse_cards("7R,SY"), parse_cards("2G,W,5B")
    protocol = uno_card_selection(uno_groups([], 3, hand=2), Counter(hand + deck), Card("2R"))
    costs = measure(protocol, {"P1": VOCAB.tokens(hand), "deck": VOCAB.tokens(deck)})
    assert costs.pile_scramble == 2 + 4
    need = cards_to_prepare(costs.helper_counts(), default_uno_helper_deck(2))
    assert need == Counter({Card("1R"): 7, Card("2G"): 7, Card("1B"): 2, Card("2B"): 3})
    assert sum(need.values()) == 3 * 5 + 4
