"""The Old Maid removal protocol on the engine's machine: correct, counted, secure (exactly for
small n, statistically for n = 53), and bad input refused with a clear message."""

import itertools
import math
from collections import Counter
from collections.abc import Generator, Sequence

import numpy as np
import pytest

from protocol_runner.cards import Card, parse_cards, standard_deck
from protocol_runner.games.old_maid import remove_pairs
from protocol_runner.machine import VOCAB, MachineError, Table, drive
from protocol_runner.protocols.old_maid import (
    RemovalInputError,
    check_in_play,
    default_old_maid_helper_deck,
    old_maid_removal,
    removal_segments,
    simulate_old_maid_removal,
)


@pytest.mark.parametrize(
    ("hand", "others"),
    [("AS,AH,3D,3C,JK,5S", [9, 8]), ("AS,AH,3D,3C,JK,5S", None), ("5S,5H,5D", [4, 4]),
     ("5S,5C", [1, 2]), ("JK", [2, 2]), ("AS,AD,AH,AC,KS,KC,QH,QD,JK", [6, 6]),
     ("2S,3S,4S,5S", [2, 3]), ("AS,AH,2S,2H,3S,3H,4S,4H,5S,5H,6S,6H,7S,7H,8S,8H,9S,9H,10S,10H,"
                               "JS,JH,QS,QH,KS,KH,JK", [13, 13])],
)
def test_removes_exactly_the_pairs_and_counts(hand: str, others: list[int] | None) -> None:
    sim = simulate_old_maid_removal(hand.split(","), others, runs=300, seed=3)
    kept, _ = remove_pairs(parse_cards(hand))
    assert dict(sim.outcomes) == {",".join(sorted(c.code for c in kept)) or "empty": 300}
    n = len(parse_cards(hand)) + sum(others or [len(parse_cards(hand)), 0]) if others else None
    n = int(sim.notes[0].split("n = ")[1].split()[0]) if n is None else n
    assert sim.costs.pile_scramble == 7
    assert sim.costs.random_bisection_cut <= 3 * (n + 1) // 2
    assert sim.helper_cards() == 2 * n + 2
    out = sim.to_json()
    assert out["protocol"] == "old-maid-remove" and out["shuffles"]["pile_scramble"] == 7


def test_n53_counts_and_the_default_helper_deck() -> None:
    hand = "AS,AH,2S,2H,3S,3H,4S,4H,5S,5H,6S,6H,7S,7H,8S,8H,9S,9H,10S,10H,JS,JH,QS,QH,KS,KH,JK"
    sim = simulate_old_maid_removal(hand.split(","), [13, 13], runs=200, seed=1)
    assert sim.outcomes == Counter({"JK": 200})
    assert sim.helper_cards() == 2 * 53 + 2 == 108
    assert sim.costs.random_bisection_cut == 27 + 14 + 14 <= 81
    deck = default_old_maid_helper_deck(3)
    assert deck.to_mapping() == {"dummy": "W", "icard1": "1R", "icard2": "2R", "icard3": "3R"}


@pytest.mark.parametrize(
    ("hand", "others", "error"),
    [("AS,AH,3D,3C,JK,5S", [9, 9], "always odd"), ("AS,AS,JK", [2, 2], "twice"),
     ("7R,JK", [2, 2], "not a card of the Old Maid deck"), ("AS,JK", [-1, 2], "hand sizes"),
     ("AS,JK", [30, 29], "played with 53"), ("AS,JK", [20, 21], "no Old Maid table"),
     ("", [2, 2], "at least one card"),
     ("AS,JK", [], "hand sizes")],
)
def test_bad_input(hand: str, others: list[int], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        simulate_old_maid_removal([c for c in hand.split(",") if c], others, runs=10)


@pytest.mark.parametrize(
    ("sizes", "in_play", "error"),
    [([2, 2], "AS,AH,2S,JK", "odd number"), ([3], "AS,AH,JK", "at least one other"),
     ([1, 1], "AS,AH", "joker must be in play"), ([2, 2], "AS,AH,JK", "hands hold 4"),
     ([0, 3], "AS,AH,JK", "must hold a card")],
)
def test_public_inputs_checked(sizes: list[int], in_play: str, error: str) -> None:
    with pytest.raises(RemovalInputError, match=error):
        check_in_play(sizes, Counter(parse_cards(in_play)))


def _deals(cards: Sequence[Card], sizes: Sequence[int]) -> list[list[list[Card]]]:
    """Every way to deal ``cards`` into hands of ``sizes``."""
    out = []
    for first in itertools.combinations(cards, sizes[0]):
        rest = [c for c in cards if c not in first]
        for second in itertools.combinations(rest, sizes[1]):
            third = [c for c in rest if c not in second]
            out.append([list(first), list(second)] + ([third] if third else []))
    return out


@pytest.mark.parametrize(
    "deals",
    [_deals(parse_cards("AS,AH,JK"), (2, 1)), _deals(parse_cards("AS,AH,JK"), (1, 1, 1)),
     _deals(parse_cards("AS,AH,JK"), (1, 2)),
     [[parse_cards(p1), [c for c in parse_cards("AS,AH,AD,AC,JK") if c not in parse_cards(p1)]]
      for p1 in ("AS,AH,AD", "AS,AH,AC", "AS,AH,JK", "AD,AC,JK")],
     [[parse_cards(p1), [c for c in parse_cards("AS,AH,2D,2C,JK") if c not in parse_cards(p1)]]
      for p1 in ("AS,2D", "AH,2C", "AS,JK", "2D,2C", "AS,AH")]],
    ids=["n3-2/1", "n3-1/1/1", "n3-1/2", "n5-four-aces", "n5-two-ranks"])
def test_exact_correct_and_transcripts_depend_only_on_public_information(
        deals: list[list[list[Card]]]) -> None:
    """Every shuffle outcome, exactly: P1 keeps what the rules keep in every branch, and deals
    that remove the same pairs (the public information, with the hand sizes) have identical
    transcript distributions."""
    from protocol_runner.exact import Histories, enumerate_branches

    groups: dict[tuple[str, ...], list[list[dict[str, object]]]] = {}
    nodes: dict[tuple[str, ...], set[int]] = {}
    histories = Histories()  # the engine's whole-transcript enumeration, as a second method
    for hands in deals:
        segments, correct = removal_segments(hands)
        assert correct, hands
        _, removed = remove_pairs(hands[0])
        key = tuple(sorted(c.code for c in removed))
        groups.setdefault(key, []).append(segments)
        in_play = Counter(c for h in hands for c in h)
        areas = {f"P{i + 1}": VOCAB.tokens(h) for i, h in enumerate(hands)}
        branches = enumerate_branches(old_maid_removal([len(h) for h in hands], in_play), areas,
                                      histories)
        nodes.setdefault(key, set()).add(branches.transcript_node())
    assert max(len(d) for d in groups.values()) >= 2
    for removed, dists in groups.items():
        assert all(d == dists[0] for d in dists[1:]), removed
        assert len(nodes[removed]) == 1, removed
        for segment in dists[0]:
            assert sum(segment.values()) == 1  # type: ignore[arg-type]


def _p_value(stat: float, df: int) -> float:
    """Chi-square survival function (Wilson–Hilferty; plenty for a pass/fail at 1e-4)."""
    if df <= 0:
        return 1.0
    z = ((stat / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2))


def _transcript(hands: Sequence[Sequence[Card]], runs: int, seed: int) -> list[np.ndarray]:
    in_play: Counter[Card] = Counter()
    for h in hands:
        in_play += Counter(h)
    table = Table(runs, {f"P{i + 1}": VOCAB.tokens(h) for i, h in enumerate(hands)},
                  np.random.default_rng(seed))
    drive(old_maid_removal([len(h) for h in hands], in_play), table)
    return table.transcript


def test_statistical_security_n53() -> None:
    """All 53 cards dealt 18/18/17 (three virtual players, none has laid down pairs yet). Two
    deals whose P1 hands differ but remove the same pairs: at every position of every reveal the
    distribution of what shows is the same (chi-square homogeneity, 4000 runs each)."""
    deck = list(standard_deck()[:-1])
    order = np.random.default_rng(7).permutation(53)
    cards = [deck[i] for i in order]
    a = [cards[:18], cards[18:36], cards[36:]]
    kept, removed = remove_pairs(a[0])
    ranks_p1 = {c.rank for c in a[0]}
    x = next(c for c in kept if c.rank is not None)
    y = next(c for c in a[1] if c.rank not in ranks_p1 and c.rank is not None)
    b = [[y if c == x else c for c in a[0]], [x if c == y else c for c in a[1]], a[2]]
    assert sorted(remove_pairs(b[0])[1]) == sorted(removed) and b[0] != a[0]
    ta, tb = _transcript(a, 4000, 1), _transcript(b, 4000, 2)
    assert [t.shape for t in ta] == [t.shape for t in tb]
    worst = 1.0
    for ra, rb in zip(ta, tb, strict=True):
        for pos in sorted({0, ra.shape[1] // 2, ra.shape[1] - 1}):
            faces = np.union1d(ra[:, pos], rb[:, pos])
            table = np.array([[np.count_nonzero(r[:, pos] == f) for f in faces] for r in (ra, rb)])
            expected = table.sum(axis=0) * table.sum(axis=1)[:, None] / table.sum()
            stat = float(((table - expected) ** 2 / expected).sum())
            worst = min(worst, _p_value(stat, len(faces) - 1))
    assert worst > 1e-4


def test_a_batch_mixing_different_public_information_is_refused() -> None:
    hands = [[parse_cards("AS,AH,JK"), parse_cards("2S,2H")],
             [parse_cards("AS,2H,JK"), parse_cards("2S,AH")]]
    areas = {"P1": np.stack([VOCAB.tokens(h[0]) for h in hands]),
             "P2": np.stack([VOCAB.tokens(h[1]) for h in hands])}
    table = Table(2, areas, np.random.default_rng(0))
    in_play = Counter(parse_cards("AS,AH,2S,2H,JK"))
    with pytest.raises(MachineError, match="different numbers of pairs"):
        drive(old_maid_removal([3, 2], in_play), table)


def _without_cuts(protocol: Generator) -> Generator:
    """The protocol with its random bisection cuts left out (a planted flaw)."""
    from protocol_runner.machine import BisectionCut

    reveal = None
    try:
        step = protocol.send(None)
        while True:
            if isinstance(step.action, BisectionCut):
                step = protocol.send(None)
                continue
            reveal = yield step
            step = protocol.send(reveal)
    except StopIteration as stop:
        return stop.value


def test_the_exact_check_catches_a_protocol_without_bisection_cuts() -> None:
    """Without Step 6f, 1□ vs □1 tells which suit of a rank P1 holds: the check must see it."""
    from protocol_runner.protocols.old_maid import _segmented_table

    dists = []
    for p1 in ("AS,2S", "AH,2S"):
        hands = [parse_cards(p1), [c for c in parse_cards("AS,AH,2S,2H,JK")
                                   if c not in parse_cards(p1)]]
        table = _segmented_table({f"P{i + 1}": VOCAB.tokens(h) for i, h in enumerate(hands)})
        in_play = Counter(parse_cards("AS,AH,2S,2H,JK"))
        drive(_without_cuts(old_maid_removal([2, 3], in_play)), table)
        table.close_segment()  # type: ignore[attr-defined]
        dists.append(table.segments)  # type: ignore[attr-defined]
    assert dists[0] != dists[1]


@pytest.mark.parametrize(("in_play", "sizes", "kinds"), [("AS,AH,JK", (2, 1), 2),
                                                         ("AS,AH,JK", (1, 1, 1), 1)])
def test_exact_proof_report(in_play: str, sizes: tuple[int, ...], kinds: int) -> None:
    from protocol_runner.protocols.old_maid import prove_old_maid_removal

    proof = prove_old_maid_removal(in_play, sizes)
    assert proof.ok and proof.inputs >= 3 and proof.branches > 0
    assert proof.details == [f"{kinds} kinds of public information (pairs removed)"]


def test_cli_json_per_conventions(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from protocol_runner.cli import main

    assert main(["simulate", "old-maid-remove", "--hand", "AS,AH,3D,3C,JK,5S", "--others",
                 "9,8", "--runs", "500", "--json", "--transcripts"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["protocol"] == "old-maid-remove" and out["runs"] == 500 and out["seed"] == 1
    assert out["shuffles"]["pile_scramble"] == 7 and out["helper_cards"] == 2 * 23 + 2
    assert out["shuffles"]["random_bisection_cut"] <= 36
    assert out["outcomes"] == {"5S,JK": 500} and sum(out["transcripts"].values()) == 500


@pytest.mark.parametrize(("argv", "message"), [
    (["--hand", "AS,AH,3D,3C,JK,5S", "--others", "9,9"], "always odd"),
    (["--hand", "AS,ZZ"], "unknown card code 'ZZ'"),
    (["--hand", "AS,JK", "--others", "two"], "--others takes hand sizes"),
])
def test_cli_errors_are_one_clear_line(argv: list[str], message: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    assert main(["simulate", "old-maid-remove", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cardtable: error:") and message in err and "Traceback" not in err
