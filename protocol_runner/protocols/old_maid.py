"""The removal protocol of the Old Maid paper (Section 4; NOTES.md items 8–11): the pairs in a
virtual player's hand leave the game and nobody learns anything else about that hand.

Layout (Steps 1–4): every hand face down in one row, P1 (the virtual player) first; below each
card its owner's i-card; below that a 1-card under P1's cards and a dummy under everyone else's;
one more column Jo̅ □ □ on the right. Jo̅ is the standard deck's second joker (NOTES.md item 9):
it reads ``JK`` like the game joker and is placed as that face, so a reveal shows two ``JK`` —
which is what the table sees. Then three loops, one per way of splitting the four suits into two
pairs, (α, β, γ, δ) = (♠, ♥, ♦, ♣), (♠, ♦, ♥, ♣), (♠, ♣, ♥, ♦):

a. pile-scramble the columns; b. turn the first row (it shows exactly the public multiset of
cards in play plus Jo̅); c. order the columns by rank, suits α → β → γ → δ, the jokers last, and
pair them: (α, β) and (γ, δ) for a rank with four cards, the two columns of a rank with two, Jo
with Jo̅ (every rank in play has 2 or 4 cards: NOTES.md item 11); d. turn the first row down;
e. pile-scramble the pairs of columns; f. a random bisection cut on each pair (swap its two
columns or not); g. turn the bottom row: a pair reading ``1 1`` holds a pair of P1's — open its
first row (the two cards share a rank), the pair leaves the game and its helper cards go back to
the pool; h. turn the bottom row down (loops 1 and 2) or put it back into the pool (loop 3).

Steps 7–9: pile-scramble the two-card columns; turn the i-card row (i-card counts = hand sizes,
exactly one dummy) and the card above the dummy (Jo̅); Jo̅ and the dummy go to the pool; order
the columns by i-card, return the cards above the i-cards to their owners.

Modelling choices (public, documented): after 6g the remaining columns are pushed together
(which the table does anyway) so that every position after the next shuffle is public; the
number of pairs a loop removes is public (the ``1 1`` piles are opened), so a simulated batch
must share it — runs with different counts are refused, never mixed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from protocol_runner.cards import JOKER, RANKS, Card
from protocol_runner.games.old_maid import LOOPS
from protocol_runner.helpers import DUMMY, HelperDeck, icard
from protocol_runner.machine import (
    EMPTY,
    T_DUMMY,
    VOCAB,
    BisectionCut,
    Expect,
    IntArray,
    Lay,
    MachineError,
    PileScramble,
    Place,
    Protocol,
    Rearrange,
    Region,
    Slots,
    Step,
    Table,
    Take,
    Turn,
    Vocabulary,
    t_icard,
)

if TYPE_CHECKING:
    from protocol_runner.simulate import Simulation

NAME = "Old Maid removal"
TOTAL_STEPS = 9
SUIT_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
JOKER_CARD = Card(JOKER)


class RemovalInputError(ValueError):
    """Public inputs that describe no Old Maid table (sizes against cards in play, odd ranks…)."""


def default_old_maid_helper_deck(players: int = 9) -> HelperDeck:
    """i-cards on red UNO numbers (the 1-card is ``1R``, the 2-card ``2R`` … up to ``9R``) and
    every dummy a ``W`` (dummies must be identical: NOTES.md item 9). Jo̅ is the standard deck's
    second joker, ``JK``. A run needs 2·n₁ copies of ``1R``, nᵢ of ``iR`` and n − n₁ + 2 of
    ``W`` (up to 108 helper cards): several UNO decks, or printed cards with these faces."""
    if not 2 <= players <= 9:
        raise RemovalInputError(f"the default Old Maid helper deck has i-cards for 2 to 9 "
                                f"players, not {players}: give a helper deck of your own")
    mapping = {icard(i): Card(f"{i}R") for i in range(1, players + 1)}
    mapping[DUMMY] = Card("W")
    return HelperDeck(mapping)


def check_in_play(sizes: Sequence[int], in_play: Counter[Card]) -> None:
    """Refuse public inputs the protocol cannot run on, with a message that says why."""
    if len(sizes) < 2:
        raise RemovalInputError("the removal protocol needs the virtual player and at least one "
                                "other player")
    if len(sizes) > 32:
        raise RemovalInputError(f"at most 32 players have i-cards, not {len(sizes)}")
    if min(sizes) < 0 or sizes[0] < 1:
        raise RemovalInputError("hand sizes cannot be negative and the virtual player (P1) "
                                "must hold a card")
    if sum(in_play.values()) != sum(sizes):
        raise RemovalInputError(f"the hands hold {sum(sizes)} cards but {sum(in_play.values())} "
                                "are in play")
    for card, count in in_play.items():
        if card.rank is None and card != JOKER_CARD:
            raise RemovalInputError(f"{card} is not a card of the Old Maid deck")
        if count != 1:
            raise RemovalInputError(f"{card} is in play {count} times; the deck has one")
    if in_play[JOKER_CARD] != 1:
        raise RemovalInputError("the joker must be in play (it is the card nobody can lose)")
    ranks = Counter(card.rank for card in in_play if card.rank)
    odd = sorted((r for r, n in ranks.items() if n % 2), key=RANKS.index)
    if odd:
        raise RemovalInputError(
            f"rank {', '.join(odd)} is in play an odd number of times: pairs leave the game "
            "together (NOTES.md item 11), so some player has not laid down a pair")


def _loop_keys(vocab: Vocabulary, loop: tuple[str, str, str, str]) -> np.ndarray:
    """Sort key per token for Step 6c: rank, then the suit's place in α → β → γ → δ; jokers
    last (after every rank)."""
    def key(item: object) -> int:
        if isinstance(item, Card) and item.rank is not None and item.suit is not None:
            return RANKS.index(item.rank) * 4 + loop.index(item.suit)
        return 4 * len(RANKS)
    return vocab.table(key, dtype=np.int64)


def _pair_words(vocab: Vocabulary, loop: tuple[str, str, str, str], shown: Counter[Card]
                ) -> frozenset[tuple[int, ...]]:
    """The pairs a ``1 1`` pile may show in this loop: the piles Step 6c makes from the public
    multiset — (α, β) and (γ, δ) of a rank with four cards, both cards of a rank with two —
    in either order (the bisection cut may have swapped them). Never the two jokers."""
    keys = _loop_keys(vocab, loop)
    tokens = sorted((int(vocab.token(c)) for c in shown.elements() if c.rank is not None),
                    key=lambda t: keys[t])
    words = set()
    for x, y in zip(tokens[::2], tokens[1::2], strict=True):
        words |= {(x, y), (y, x)}
    return frozenset(words)


def _codes_of(vocab: Vocabulary, tokens: np.ndarray) -> str:
    return " ".join(str(vocab.item(int(t))) for t in tokens)


def old_maid_removal(sizes: Sequence[int], in_play: Counter[Card], vocab: Vocabulary = VOCAB,
                     removed_to: str = "removed") -> Protocol[int]:
    """Remove every pair from P1's hand. ``sizes``: the hand sizes of P1 (the virtual player)
    and P2 … Pm, whose cards come from (and go back to) areas ``"P1"`` … ``"Pm"``;
    ``in_play``: the public multiset of all cards in those hands. The pairs go to area
    ``removed_to``; helper cards to ``"pool"``. Returns the number of pairs removed."""
    check_in_play(sizes, in_play)
    m, n = len(sizes), sum(sizes)
    slots = Slots()
    starts = np.cumsum([0, *sizes])
    row1 = slots.new(n)
    cols = np.full((n + 1, 3), EMPTY, dtype=np.int64)
    cols[:n, 0] = row1
    current = list(sizes)
    t_joker = vocab.token(JOKER_CARD)

    def step(number: str, text: str, action: object, expect: Expect | None = None,
             context: str = "", detail: Callable[[int], str] | None = None) -> Step:
        grid = cols.T.copy()
        return Step(NAME, number, TOTAL_STEPS, text, action,  # type: ignore[arg-type]
                    (Region("matrix", grid),), expect, context, detail)

    for i in range(m):
        if sizes[i]:
            yield step("1", f"Lay the {sizes[i]} cards of P{i + 1} face down in the row "
                       f"(columns {starts[i] + 1}–{starts[i + 1]}).",
                       Lay(f"P{i + 1}", row1[starts[i]:starts[i + 1]]))
    cols[:n, 1] = slots.new(n)
    owners = np.repeat(np.arange(1, m + 1), sizes)
    yield step("2", "Place an i-card face up below each card of P_i: "
               + ", ".join(f"{i + 1}-cards below P{i + 1}" for i in range(m) if sizes[i]) + ".",
               Place(np.array([t_icard(int(i)) for i in owners], dtype=np.int16),
                     cols[:n, 1].copy(), face_up=True))
    cols[:n, 2] = slots.new(n)
    yield step("3", f"Place a 1-card below each of P1's {sizes[0]} columns and a dummy below "
               f"each of the other {n - sizes[0]} columns.",
               Place(np.where(owners == 1, t_icard(1), T_DUMMY).astype(np.int16),
                     cols[:n, 2].copy(), face_up=True))
    cols[n] = slots.new(3)
    yield step("4", "Place Jo̅ (the second joker), a dummy and a dummy as one more column on "
               "the right.", Place(np.array([t_joker, T_DUMMY, T_DUMMY], dtype=np.int16),
                                   cols[n].copy(), face_up=True))
    yield step("5", "Turn over all face-up cards.",
               Turn(np.concatenate([cols[:n, 1:].ravel(), cols[n]]), up=False))
    shown = Counter(in_play)
    removed_total = 0
    for number, loop in enumerate(LOOPS, start=1):
        suits = " → ".join(SUIT_SYMBOL[s] for s in loop)
        context = f"loop {number} of 3, α → β → γ → δ = {suits}"
        c = len(cols)
        yield step("6a", f"Pile-scramble the matrix, each of the {c} columns a pile.",
                   PileScramble(cols.copy()), context=context)
        tokens = vocab.tokens(sorted(shown.elements())).tolist() + [t_joker]
        want = Counter(int(t) for t in tokens)
        reveal = yield step("6b", "Turn over the cards in the first row.",
                            Turn(cols[:, 0].copy(), up=True),
                            Expect("the cards in play and Jo̅, in some order",
                                   faces=frozenset(want), multiset=dict(want)), context)
        assert reveal is not None
        order = np.argsort(_loop_keys(vocab, loop)[reveal.tokens], axis=1, kind="stable")
        targets = reveal.tokens

        def order_detail(r: int, order: IntArray = order, targets: np.ndarray = targets,
                         suits: str = suits) -> str:
            line = _codes_of(vocab, targets[r, order[r]])
            return (f"Order the columns (same ranks together, suits {suits}, the jokers last): "
                    f"{line}; then pair them left to right.")

        yield step("6c", f"Order the columns so that equal ranks lie together, suits in the "
                   f"order {suits}; pair them: (α, β) and (γ, δ) of a rank with four cards, the "
                   "two columns of a rank with two, the two jokers.",
                   Rearrange(cols.ravel(), cols[order].reshape(order.shape[0], -1)),
                   context=context, detail=order_detail)
        yield step("6d", "Turn over all face-up cards.", Turn(cols[:, 0].copy(), up=False),
                   context=context)
        piles = cols.reshape(c // 2, 6)
        yield step("6e", f"Pile-scramble the {c // 2} pairs of columns, each pair a pile.",
                   PileScramble(piles.copy()), context=context)
        yield step("6f", f"Apply a random bisection cut to each of the {c // 2} pairs of "
                   "columns (swap its two columns or not, unseen).",
                   BisectionCut(cols.reshape(c // 2, 2, 3).copy()), context=context)
        ones = current[0]
        reveal = yield step("6g", "Turn over the cards in the bottom row.",
                            Turn(cols[:, 2].copy(), up=True),
                            Expect(f"{ones} 1-cards and {c - ones} dummies",
                                   faces=frozenset({t_icard(1), T_DUMMY}),
                                   multiset={t_icard(1): ones, T_DUMMY: c - ones}
                                   if ones else {T_DUMMY: c}), context)
        assert reveal is not None
        bottom = reveal.tokens.reshape(-1, c // 2, 2)
        pair11 = (bottom == t_icard(1)).all(axis=2)  # (R, P)
        counts = pair11.sum(axis=1)
        if (counts != counts[0]).any():
            raise MachineError("runs removed different numbers of pairs in one batch; simulate "
                               "runs with the same public information together")
        k = int(counts[0])
        if k:
            pile_ids = np.sort(np.argsort(~pair11, axis=1, kind="stable")[:, :k], axis=1)
            pair_cols = np.stack([2 * pile_ids, 2 * pile_ids + 1], axis=2).reshape(-1, 2 * k)
            opened = yield step("6g", f"Open the first row of the {k} pile(s) reading 1 1: "
                                "each shows a pair of one rank.",
                                Turn(cols[pair_cols, 0], up=True),
                                Expect("pairs of one rank, as Step 6c paired them",
                                       words=_pair_words(vocab, loop, shown)), context,
                                detail=_pairs_detail(pile_ids))
            assert opened is not None
            shown -= Counter(vocab.item(int(t)) for t in opened.tokens[0])  # type: ignore[misc]
            yield step("6g", f"The {k} pair(s) leave the game.",
                       Take(cols[pair_cols, 0], to=removed_to), context=context)
            yield step("6g", "Put the 1-cards of those piles back into the pool.",
                       Take(cols[pair_cols][:, :, 1:].reshape(-1, 4 * k), to="pool"),
                       context=context)
            keep = np.argsort(np.repeat(pair11, 2, axis=1), axis=1, kind="stable")
            yield step("6g", "Push the remaining columns together.",
                       Rearrange(cols.ravel(), cols[keep].reshape(keep.shape[0], -1)),
                       context=context)
            cols = cols[: c - 2 * k].copy()
            current[0] -= 2 * k
            removed_total += k
        if number < len(LOOPS):
            yield step("6h", "Turn over all face-up cards.", Turn(cols[:, 2].copy(), up=False),
                       context=context)
        else:
            yield step("6h", "Put the bottom row back into the pool.",
                       Take(cols[:, 2].copy(), to="pool"), context=context)
            cols[:, 2] = EMPTY
    c = len(cols)
    two = cols[:, :2].copy()
    yield step("7", f"Pile-scramble the matrix, each of the {c} columns a pile.",
               PileScramble(two))
    want_i = {t_icard(i + 1): current[i] for i in range(m) if current[i]} | {T_DUMMY: 1}
    reveal = yield step("8", "Turn over the cards in the bottom row.",
                        Turn(cols[:, 1].copy(), up=True),
                        Expect("i-cards as many as P_i holds cards, and one dummy",
                               faces=frozenset(want_i), multiset=want_i))
    assert reveal is not None
    dummy_col = np.argmax(reveal.tokens == T_DUMMY, axis=1)[:, None]  # (R, 1)
    yield step("8", "Turn over the card above the dummy: it is Jo̅.",
               Turn(cols[dummy_col, 0], up=True),
               Expect("Jo̅ (the second joker)", faces=frozenset({t_joker})),
               detail=lambda r: f"Turn over the card in column {int(dummy_col[r, 0]) + 1}, "
               "above the dummy: it is Jo̅.")
    yield step("8", "Put Jo̅ and the dummy back into the pool.",
               Take(np.concatenate([cols[dummy_col, 0], cols[dummy_col, 1]], axis=1),
                    to="pool"))
    key = np.where(reveal.tokens == T_DUMMY, np.iinfo(np.int16).max, reveal.tokens)
    order = np.argsort(key, axis=1, kind="stable")
    yield step("9", "Order the columns by their numbered cards (1-cards first).",
               Rearrange(two.ravel(), two[order].reshape(order.shape[0], -1)))
    first = np.cumsum([0, *current])
    for i in range(m):
        if current[i]:
            yield step("9", f"Put each card above a {i + 1}-card back into P{i + 1}'s hand.",
                       Take(cols[first[i]:first[i + 1], 0].copy(), to=f"P{i + 1}"))
    yield step("9", "Put the numbered cards back into the pool.",
               Take(cols[: c - 1, 1].copy(), to="pool"))
    return removed_total


def _pairs_detail(pile_ids: IntArray) -> Callable[[int], str]:
    def detail(r: int) -> str:
        cols = ", ".join(f"{2 * p + 1}–{2 * p + 2}" for p in pile_ids[r])
        return f"Open the first row of the columns {cols} (the piles reading 1 1)."
    return detail


# ------------------------------------------------------------------------------- simulation

def deal_others(hand: Sequence[Card], others: Sequence[int], rng: np.random.Generator
                ) -> list[list[Card]]:
    """Hands for P2 … Pm (sizes ``others``) from the rest of the 53 cards, such that the table
    is one Old Maid can reach: each other player holds no pair (they laid theirs down), every
    rank in play has 2 or 4 cards, the joker is somewhere. Raises if no such table exists."""
    from protocol_runner.cards import SUITS

    if any(n < 0 for n in others) or not others:
        raise RemovalInputError("--others: give the other players' hand sizes, e.g. 9,9")
    held = Counter(hand)
    if any(n > 1 for n in held.values()):
        raise RemovalInputError("the hand holds a card twice; the Old Maid deck has one of each")
    for card in hand:
        if card.rank is None and card != JOKER_CARD:
            raise RemovalInputError(f"{card} is not a card of the Old Maid deck (52 cards and JK)")
    players, total = len(others), sum(others)
    slots = total - (0 if JOKER_CARD in held else 1)
    if slots < 0:
        raise RemovalInputError("someone must hold the joker: the other hands are empty")
    mine = {r: sum(1 for c in hand if c.rank == r) for r in RANKS}
    options = {r: [x for x in range(0, min(4 - mine[r], players) + 1) if (mine[r] + x) % 2 == 0]
               for r in RANKS}
    reach: list[set[int]] = [{0}]  # sums reachable with the first i ranks
    for r in RANKS:
        reach.append({s + x for s in reach[-1] for x in options[r]})
    if len(hand) + total > 53:
        raise RemovalInputError(f"{len(hand)} + {total} cards: Old Maid is played with 53")
    if (len(hand) + total) % 2 == 0:
        raise RemovalInputError(
            f"{len(hand)} + {' + '.join(map(str, others))} = {len(hand) + total} cards in play: "
            "in Old Maid that number is always odd (pairs leave two at a time, the joker stays); "
            f"e.g. --others {','.join(map(str, [*others[:-1], max(others[-1] - 1, 0)]))}")
    if slots not in reach[-1]:
        raise RemovalInputError(
            f"no Old Maid table has this hand and others holding {','.join(map(str, others))} "
            "cards (every rank in play must have 2 or 4 cards and nobody else may hold a pair)")
    counts: dict[str, int] = {}
    left = slots
    for i in range(len(RANKS) - 1, -1, -1):
        r = RANKS[i]
        fits = [x for x in options[r] if left - x in reach[i]]
        counts[r] = int(rng.choice(fits))
        left -= counts[r]
    pool: list[list[Card]] = []
    for r in RANKS:
        free = [Card(r + s) for s in SUITS if Card(r + s) not in held]
        pool.append([free[j] for j in rng.permutation(len(free))[:counts[r]]])
    for _ in range(100):
        hands: list[list[Card]] = [[] for _ in others]
        room = list(others)
        if JOKER_CARD not in held:
            j = int(rng.choice([i for i in range(players) if room[i] > 0]))
            hands[j].append(JOKER_CARD)
            room[j] -= 1
        ok = True
        for cards in sorted(pool, key=len, reverse=True):
            order = sorted(range(players), key=lambda i: (-room[i], rng.random()))
            takers = [i for i in order if room[i] > 0][: len(cards)]
            if len(takers) < len(cards):
                ok = False
                break
            for i, card in zip(takers, cards, strict=True):
                hands[i].append(card)
                room[i] -= 1
        if ok:
            return hands
    raise RemovalInputError("could not spread the other cards without giving someone a pair; "
                            "try other hand sizes")


def parse_others(text: str) -> list[int]:
    """``9,8`` → [9, 8]; anything else is refused with a clear message."""
    try:
        sizes = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise RemovalInputError(f"--others takes hand sizes like 9,8, got {text!r}") from None
    if not sizes:
        raise RemovalInputError("--others: give at least one other player's hand size")
    return sizes


def default_others(hand_size: int) -> list[int]:
    """Two other players with about as many cards as P1, the total odd (as in every game)."""
    return [hand_size, hand_size - 1 if hand_size % 2 == 0 else hand_size]


def simulate_old_maid_removal(hand: Sequence[str], others: Sequence[int] | None = None,
                              runs: int = 1000, seed: int = 1, transcripts: bool = False,
                              helper_deck: HelperDeck | None = None) -> Simulation:
    """``cardtable simulate old-maid-remove``: P1 holds ``hand``; the other players' hands are
    dealt once (seeded) from the rest of the deck as a real game could leave them; the protocol
    then runs ``runs`` times with fresh shuffles. Outcome: P1's hand afterwards, as sorted codes
    (``empty`` when nothing is left). Helper cards are counted as the paper does (2n + 2; Jo̅ is
    the deck's own second joker). Every run is checked: exactly the pairs leave, everyone else's
    cards come back to them."""
    from protocol_runner.cards import parse_card
    from protocol_runner.games.old_maid import remove_pairs
    from protocol_runner.simulate import Simulation, SimulationInputError, run

    cards = [parse_card(c) for c in hand]
    if not cards:
        raise SimulationInputError("--hand: the virtual player needs at least one card")
    rng = np.random.default_rng(seed)
    dealt = deal_others(cards, default_others(len(cards)) if others is None else others, rng)
    if len(dealt) + 1 > 9 and helper_deck is None:
        raise RemovalInputError("more than 9 players: give a helper deck of your own")
    deck = helper_deck or default_old_maid_helper_deck(len(dealt) + 1)
    sizes = [len(cards)] + [len(d) for d in dealt]
    in_play = Counter(cards)
    for d in dealt:
        in_play += Counter(d)
    areas = {"P1": VOCAB.tokens(cards)} | {f"P{i + 2}": VOCAB.tokens(d)
                                           for i, d in enumerate(dealt)}
    table, _, seconds = run(old_maid_removal(sizes, in_play), areas, runs, rng)
    kept, removed = remove_pairs(cards)
    _check_outcome(table, areas, kept, removed)
    table.costs.helper_peak.pop(VOCAB.token(JOKER_CARD), None)
    left = ",".join(sorted(c.code for c in kept)) or "empty"
    histogram = None
    if transcripts:
        from protocol_runner.machine import transcript_strings

        histogram = Counter(transcript_strings(table.transcript, VOCAB.codes(deck)))
    sim = Simulation(protocol="old-maid-remove", runs=runs, seed=seed, costs=table.costs,
                     outcomes=Counter({left: runs}), seconds=seconds, transcripts=histogram,
                     helper_deck=deck)
    sim.notes.append(f"n = {sum(sizes)} cards in play ({' + '.join(map(str, sizes))}); "
                     f"pairs removed: {' '.join(sorted(c.code for c in removed)) or 'none'}; "
                     "plus Jo̅ (the second joker) as the paper counts it")
    return sim


def _check_outcome(table: Table, areas: dict[str, np.ndarray], kept: Sequence[Card],
                   removed: Sequence[Card]) -> None:
    """Every run: P1 keeps exactly ``kept``, exactly ``removed`` left the game, every other hand
    is back whole. A failure is a bug in the protocol, never a user error."""
    def same(got: np.ndarray, want: Sequence[Card] | np.ndarray) -> np.ndarray:
        want_tokens = np.sort(np.asarray(VOCAB.tokens(want) if len(want) and isinstance(
            want[0], Card) else want, dtype=np.int16))
        real = np.sort(np.where(got < 0, np.iinfo(np.int16).max, got), axis=1)
        if real.shape[1] < len(want_tokens):
            return np.zeros(got.shape[0], dtype=bool)
        tail = real[:, len(want_tokens):]
        return (real[:, :len(want_tokens)] == want_tokens).all(axis=1) & (
            tail == np.iinfo(np.int16).max).all(axis=1)

    ok = same(table.area("P1"), kept) & same(table.area("removed"), removed)
    for name, tokens in areas.items():
        if name != "P1":
            ok &= same(table.area(name), tokens)
    if not ok.all():
        raise RuntimeError(f"protocol error: {np.count_nonzero(~ok)} runs ended with wrong hands")


# ------------------------------------------------------------------------------ exact proof

def _segmented_table(areas: dict[str, np.ndarray]) -> Table:
    """An exact table (every shuffle outcome, integer weights) that cuts the transcript into
    segments at each pile-scramble whose piles are single columns (Steps 6a and 7).

    Why this is exact and not an approximation: at such a shuffle every branch must hold the same
    multiset of columns (checked here, else :class:`MachineError`), so after the uniform shuffle
    every branch is in the same state distribution: what follows is independent of what was
    revealed before. The transcript distribution is therefore the product of the segments'
    distributions, and two inputs have the same transcript distribution iff every segment has.
    Collapsing the branches at each boundary keeps the enumeration small (≤ (n+1)!·2^((n+1)/2)
    branches per segment)."""
    from fractions import Fraction

    from protocol_runner.exact import ExactTable

    class SegmentedTable(ExactTable):
        def __init__(self) -> None:
            super().__init__(areas)
            self.segments: list[dict[str, Fraction]] = []

        def close_segment(self) -> None:
            """Record the distribution of what was revealed since the last boundary."""
            dist = self.histories.expand(self.transcript_node(), VOCAB.codes())
            if dist != {"": Fraction(1)}:
                self.segments.append(dist)

        def _scramble(self, a: PileScramble) -> None:
            piles = np.asarray(a.piles)
            if piles.ndim == 2 and piles.shape[1] <= 3:
                self.close_segment()
                contents = np.ascontiguousarray(self.cards[:, piles])  # (R, P, s)
                canon = np.sort(contents.view(np.dtype((np.void, contents.dtype.itemsize
                                                        * contents.shape[2])))[..., 0], axis=1)
                same = (canon == canon[:1]).all()
                for tokens in self.areas.values():
                    same &= bool((np.sort(tokens, axis=1) == np.sort(tokens[:1], axis=1)).all())
                if not same:
                    raise MachineError("branches differ in their columns at a segment boundary")
                self._take_rows(np.zeros(1, dtype=np.int64))
                self.history = np.zeros(1, dtype=np.int64)
                self.transcript = []
                self.weights = np.ones(1, dtype=np.int64)
                self.denominator = 1
            super()._scramble(a)

    return SegmentedTable()


def removal_segments(hands: Sequence[Sequence[Card]]) -> tuple[list[dict[str, object]], bool]:
    """Exact transcript distribution of the removal protocol, segment by segment, for the hands
    ``hands`` (P1 first); and whether every branch ended correctly (P1 keeps exactly what
    :func:`~protocol_runner.games.old_maid.remove_pairs` keeps, every other hand is whole)."""
    from protocol_runner.games.old_maid import remove_pairs
    from protocol_runner.machine import drive

    sizes = [len(h) for h in hands]
    in_play: Counter[Card] = Counter()
    for h in hands:
        in_play += Counter(h)
    areas = {f"P{i + 1}": VOCAB.tokens(h) for i, h in enumerate(hands)}
    table = _segmented_table(areas)
    drive(old_maid_removal(sizes, in_play), table)
    table.close_segment()  # type: ignore[attr-defined]
    kept, removed = remove_pairs(hands[0])
    try:
        _check_outcome(table, areas, kept, removed)
        correct = True
    except RuntimeError:
        correct = False
    return table.segments, correct  # type: ignore[attr-defined]


class RemovalPlayer:
    """A virtual Old Maid player's pair removal, run as the paper's protocol on the engine's
    machine (R = 1, real shuffles from ``rng``) over every hand at the table: the
    :class:`~protocol_runner.games.old_maid.Remover` a whole-game simulation uses."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.runs = 0
        self.pile_scramble = 0
        self.random_bisection_cut = 0

    def __call__(self, hands: Sequence[Sequence[Card]], seat: int
                 ) -> tuple[list[list[Card]], list[Card]]:
        from protocol_runner.machine import drive

        order = [seat] + [i for i in range(len(hands)) if i != seat]  # P1 = the virtual seat
        in_play: Counter[Card] = Counter()
        for h in hands:
            in_play += Counter(h)
        areas = {f"P{k + 1}": VOCAB.tokens(hands[i]) for k, i in enumerate(order)}
        table = Table(1, areas, self.rng)
        drive(old_maid_removal([len(hands[i]) for i in order], in_play), table)
        self.runs += 1
        self.pile_scramble += table.costs.pile_scramble
        self.random_bisection_cut += table.costs.random_bisection_cut

        def held(name: str) -> list[Card]:
            return [VOCAB.item(int(t)) for t in table.area(name)[0] if t >= 0]  # type: ignore[misc]

        after = [list(h) for h in hands]
        for k, i in enumerate(order):
            after[i] = held(f"P{k + 1}")
        return after, held("removed")


# --------------------------------------------------------------------------------- command

def add_simulate_parser(subparsers: Any) -> None:
    """``cardtable simulate old-maid-remove``: for the ``simulate`` command's sub-commands."""
    p = subparsers.add_parser(
        "old-maid-remove", help="the Old Maid removal protocol (pairs leave a virtual hand)",
        description="Run the removal protocol of the Old Maid paper on a simulated table. The "
        "virtual player P1 holds --hand; the other players hold --others cards dealt from the "
        "rest of the 53 as a game could leave them. Outcome: P1's hand afterwards.")
    p.add_argument("--hand", required=True, help="P1's cards, e.g. AS,AH,3D,3C,JK,5S")
    p.add_argument("--others", help="the other players' hand sizes, e.g. 9,8 (default: two "
                   "players with about as many cards as P1, the total odd)")
    p.add_argument("--runs", type=int, default=1000, help="simulated runs (default 1000)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--json", action="store_true", help="print the CONVENTIONS.md JSON object")
    p.add_argument("--transcripts", action="store_true",
                   help="also count every run's public transcript")
    p.set_defaults(handler=run_simulate_command)


def run_simulate_command(args: Any) -> int:
    import json

    from protocol_runner.cards import parse_cards

    hand = [c.code for c in parse_cards(args.hand)]
    others = parse_others(args.others) if args.others is not None else None
    sim = simulate_old_maid_removal(hand, others, runs=args.runs, seed=args.seed,
                                    transcripts=args.transcripts)
    print(json.dumps(sim.to_json()) if args.json else sim.summary())
    return 0


def prove_old_maid_removal(in_play: str = "AS,AH,2S,2H,JK", sizes: Sequence[int] = (2, 3)
                           ) -> Any:
    """Exact proof for every deal of ``in_play`` into hands of ``sizes`` (P1 first): correct in
    every branch, and the transcript distribution depends only on the public information (the
    pairs P1 lays down). Returns a :class:`protocol_runner.exact.Proof`."""
    import itertools

    from protocol_runner.cards import parse_cards
    from protocol_runner.exact import Proof
    from protocol_runner.games.old_maid import remove_pairs

    cards = parse_cards(in_play)
    proof = Proof(f"Old Maid removal, n = {len(cards)}, sizes {'/'.join(map(str, sizes))}")
    groups: dict[tuple[str, ...], list[list[dict[str, object]]]] = {}
    seen: set[tuple[tuple[str, ...], ...]] = set()
    for perm in itertools.permutations(cards):
        hands, start = [], 0
        for n in sizes:
            hands.append(sorted(perm[start:start + n]))
            start += n
        key = tuple(tuple(c.code for c in h) for h in hands)
        if key in seen:
            continue
        seen.add(key)
        segments, correct = removal_segments(hands)
        proof.correct &= correct
        proof.inputs += 1
        proof.branches += sum(len(segment) for segment in segments)
        removed = tuple(sorted(c.code for c in remove_pairs(hands[0])[1]))
        groups.setdefault(removed, []).append(segments)
    proof.secure = all(all(d == ds[0] for d in ds[1:]) for ds in groups.values())
    proof.details.append(f"{len(groups)} kinds of public information (pairs removed)")
    return proof
