"""The simulator: runs a protocol on R simulated tables at once (true cards, seeded shuffles) and
reports what CONVENTIONS.md asks of ``cardtable simulate``: shuffles, helper cards, outcomes and,
on request, the transcripts (everything turned face up, per run; see
:func:`protocol_runner.machine.transcript_strings`).

Inputs are checked here, before anything runs, so that bad input gives one clear message.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from protocol_runner.cards import (
    UNO_COLOURS,
    Card,
    DeckError,
    check_within_deck,
    deck_counter,
    parse_card,
    remaining,
)
from protocol_runner.helpers import (
    ALPHA,
    BETA,
    HelperDeck,
    HelperDeckError,
    Role,
    default_uno_helper_deck,
)
from protocol_runner.machine import (
    EMPTY,
    VOCAB,
    Costs,
    Lay,
    Protocol,
    Region,
    Slots,
    Step,
    Table,
    TokenArray,
    bit_tokens,
    cards_to_prepare,
    drive,
    read_bits,
    transcript_strings,
)
from protocol_runner.protocols.card_selection import (
    Group,
    Variant,
    uno_card_selection,
    uno_groups,
)
from protocol_runner.protocols.covert_lottery import covert_lottery
from protocol_runner.protocols.six_card_and import and_protocol
from protocol_runner.protocols.wild_colour import wild_colour

DEFAULT_RUNS = 1000
DEFAULT_SEED = 1
MAX_LOTTERY = 60
MAX_RUNS = 200_000


class SimulationInputError(ValueError):
    """Simulator input that describes no possible table."""


@dataclass
class Simulation:
    """One ``cardtable simulate`` result."""

    protocol: str
    runs: int
    seed: int
    costs: Costs
    outcomes: Counter[str]
    seconds: float
    transcripts: Counter[str] | None = None
    helper_deck: HelperDeck | None = None
    notes: list[str] = field(default_factory=list)
    variant: str | None = None

    @property
    def runs_per_second(self) -> float:
        return self.runs / self.seconds if self.seconds > 0 else float("inf")

    def helper_cards(self) -> int | dict[str, int]:
        lo, hi = self.costs.helper_total()
        return lo if lo == hi else {"min": lo, "max": hi}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "protocol": self.protocol,
            **({"variant": self.variant} if self.variant else {}),
            "runs": self.runs,
            "seed": self.seed,
            "shuffles": {"pile_scramble": self.costs.pile_scramble,
                         "random_bisection_cut": self.costs.random_bisection_cut},
            "helper_cards": self.helper_cards(),
            "outcomes": dict(sorted(self.outcomes.items())),
        }
        if self.transcripts is not None:
            out["transcripts"] = dict(sorted(self.transcripts.items()))
        out["runs_per_second"] = round(self.runs_per_second, 1)
        return out

    def summary(self) -> str:
        """A short human-readable report."""
        lines = [f"{self.protocol}: {self.runs} runs (seed {self.seed}), "
                 f"{self.runs_per_second:,.0f} runs/s",
                 f"  shuffles per run: {self.costs.pile_scramble} pile-scramble, "
                 f"{self.costs.random_bisection_cut} random bisection cut",
                 f"  helper cards per run: {self.helper_cards()}"]
        if self.helper_deck is not None:
            need = cards_to_prepare(self.costs.helper_counts(), self.helper_deck)
            lines.append("  cards to prepare: " + ", ".join(
                f"{n} × {card} ({self.helper_deck.role(card) or 'colour card'})"
                for card, n in sorted(need.items())))
        lines.append("  outcomes:")
        for outcome, n in sorted(self.outcomes.items()):
            lines.append(f"    {outcome:>8}  {n:>7}  {n / self.runs:7.2%}")
        if self.transcripts is not None:
            lines.append(f"  distinct transcripts: {len(self.transcripts)}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def run(protocol: Protocol[Any], areas: dict[str, TokenArray], runs: int,
        rng: np.random.Generator) -> tuple[Table, Any, float]:
    """Drive ``protocol`` on ``runs`` tables dealt ``areas``; return table, result, seconds."""
    if not 1 <= runs <= MAX_RUNS:
        raise SimulationInputError(f"--runs must be between 1 and {MAX_RUNS:,} (memory grows "
                                   f"with it; use several seeds for more), got {runs}")
    start = time.perf_counter()
    table = Table(runs, areas, rng)
    result = drive(protocol, table)
    return table, result, time.perf_counter() - start


def _finish(name: str, table: Table, outcomes: Counter[str], seconds: float, seed: int,
            transcripts: bool, helper_deck: HelperDeck, variant: str | None = None
            ) -> Simulation:
    histogram = None
    if transcripts:
        histogram = Counter(transcript_strings(table.transcript, VOCAB.codes(helper_deck)))
    return Simulation(name, table.runs, seed, table.costs, outcomes, seconds, histogram,
                      helper_deck, variant=variant)


def _labels(tokens: TokenArray, names: dict[int, str]) -> Counter[str]:
    values, counts = np.unique(tokens, return_counts=True)
    return Counter({names[int(v)]: int(n) for v, n in zip(values, counts, strict=True)})


def bit_helper_deck() -> HelperDeck:
    """α = 1R, β = 2G: the paper's example."""
    return HelperDeck({ALPHA: Card("1R"), BETA: Card("2G")})


# ------------------------------------------------------------------------------ six-card AND

def simulate_and(x: int, y: int, runs: int = DEFAULT_RUNS, seed: int = DEFAULT_SEED,
                 transcripts: bool = False) -> Simulation:
    """Outcome ``x&y=a ~x&y=b``: what the two output pairs encode."""
    for name, bit in (("x", x), ("y", y)):
        if bit not in (0, 1):
            raise SimulationInputError(f"--{name} must be 0 or 1, got {bit!r}")
    rng = np.random.default_rng(seed)
    table, (xy, nxy), seconds = run(
        and_protocol(), {"x": bit_tokens([x])[0], "y": bit_tokens([y])[0]}, runs, rng)
    rows = np.arange(runs)[:, None]
    a, b = read_bits(table.cards[rows, xy]), read_bits(table.cards[rows, nxy])
    codes = a * 3 + b  # bits are 0/1 here; -1 would mark a broken pair
    names = {v: f"x&y={v // 3} ~x&y={v % 3}" for v in range(9)}
    return _finish("six-card-and", table, _labels(codes, names), seconds, seed, transcripts,
                   bit_helper_deck())


# ----------------------------------------------------------------------------- covert lottery

def parse_valid(text: str) -> list[int]:
    """``1,0,1,1`` → [1, 0, 1, 1]; anything else is refused."""
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(p not in ("0", "1") for p in parts):
        raise SimulationInputError(
            f"--valid takes a comma-separated list of 0 and 1 (e.g. 1,0,1,1), got {text!r}")
    if len(parts) > MAX_LOTTERY:
        raise SimulationInputError(f"--valid: at most {MAX_LOTTERY} cards, got {len(parts)}")
    return [int(p) for p in parts]


def lottery_protocol(m: int, original: bool) -> Protocol[Any]:
    """The lottery on its own: cards c_i from area ``cards``, pairs from area ``bits``."""
    slots = Slots()
    c, x = slots.new(m), slots.new(2 * m).reshape(m, 2)
    grid = np.column_stack([c, x]).T
    name = "covert lottery (original)" if original else "modified covert lottery"
    yield Step(name, "1", 7, f"Lay the {m} cards c_i face down in a row.", Lay("cards", c),
               (Region("lottery piles", grid),))
    yield Step(name, "1", 7, "Lay the pair encoding x_i face down below each card c_i.",
               Lay("bits", x.ravel()), (Region("lottery piles", grid),))
    return (yield from covert_lottery(slots, c, x, original))


def simulate_lottery(valid: Sequence[int], original: bool = False, runs: int = DEFAULT_RUNS,
                     seed: int = DEFAULT_SEED, transcripts: bool = False) -> Simulation:
    """Outcome: the 0-based index of the selected card, or ``none``."""
    m = len(valid)
    if m < 1:
        raise SimulationInputError("the lottery needs at least one card")
    cards = VOCAB.tokens(VOCAB.faces[:m])
    rng = np.random.default_rng(seed)
    table, selected, seconds = run(lottery_protocol(m, original),
                                   {"cards": cards, "bits": bit_tokens(valid).ravel()},
                                   runs, rng)
    rows = np.arange(runs)
    token = np.where(selected >= 0, table.cards[rows, np.maximum(selected, 0)], EMPTY)
    names = {int(t): str(i) for i, t in enumerate(cards)} | {EMPTY: "none"}
    return _finish("covert-lottery", table, _labels(token, names), seconds, seed, transcripts,
                   bit_helper_deck(), "original" if original else "modified")


# ------------------------------------------------------------------------ UNO card selection

@dataclass(frozen=True)
class UnoDeal:
    """A concrete UNO table for one virtual player's turn."""

    top: Card
    colour: str | None
    hand: tuple[Card, ...]
    others: tuple[tuple[Card, ...], ...]
    deck: tuple[Card, ...]
    drawn: Card | None = None
    discard: tuple[Card, ...] = ()
    hide_remaining: bool = False

    def groups_and_areas(self) -> tuple[list[Group], dict[str, TokenArray]]:
        groups = uno_groups([len(o) for o in self.others], len(self.deck),
                            drawn=self.drawn is not None, hand=len(self.hand),
                            discard=len(self.discard) if self.hide_remaining else 0)
        areas = {"P1": VOCAB.tokens(self.hand), "deck": VOCAB.tokens(self.deck)}
        areas |= {f"P{i + 2}": VOCAB.tokens(o) for i, o in enumerate(self.others)}
        if self.drawn is not None:
            areas["drawn"] = VOCAB.tokens([self.drawn])
        if self.hide_remaining:
            areas["discard"] = VOCAB.tokens(self.discard)
        return groups, areas

    def in_play(self) -> Counter[Card]:
        """The public multiset of the cards the protocol lays out."""
        cards = Counter(self.hand) + Counter(self.deck)
        for o in self.others:
            cards += Counter(o)
        if self.drawn is not None:
            cards[self.drawn] += 1
        if self.hide_remaining:
            cards += Counter(self.discard)
        return cards


def deal_uno(top: str, hand: Sequence[str], others: Sequence[int] = (7,),
             colour: str | None = None, drawn: str | None = None,
             discard: Sequence[str] = (), hide_remaining: bool = False,
             rng: np.random.Generator | None = None, allow_top_copy: bool = False) -> UnoDeal:
    """Check the inputs and deal the other players at random from the rest of the deck (the
    remainder is the unplayed deck). The top card's face in P1's hand is refused as a likely
    typo unless ``allow_top_copy`` (a second copy, where the deck holds one: two 7R, one 0R)."""
    top_card = parse_card(top)
    if top_card.deck != "uno":
        raise SimulationInputError(f"{top_card} is not a UNO card")
    hand_cards = [parse_card(c) for c in hand]
    if not hand_cards:
        raise SimulationInputError("--hand: the virtual player needs at least one card")
    drawn_card = parse_card(drawn) if drawn else None
    under = [parse_card(c) for c in discard]
    if colour is not None:
        colour = colour.strip().upper()
    if top_card.is_black and colour not in UNO_COLOURS:
        raise SimulationInputError(
            f"{top_card} is on top: say which colour its player chose with --colour R|Y|G|B")
    if not top_card.is_black and colour not in (None, top_card.colour):
        raise SimulationInputError(f"--colour {colour}: {top_card} is a colour card, its own "
                                   "colour is in force")
    if not allow_top_copy and top_card in [*hand_cards, drawn_card]:
        raise SimulationInputError(
            f"the hand contains {top_card}, the card on top of the discard pile; if P1 really "
            "holds a second copy, add --allow-top-copy")
    used = [top_card, *under, *hand_cards] + ([drawn_card] if drawn_card else [])
    try:
        check_within_deck(used, "uno", what="the top card, discard pile and hand together")
    except DeckError as exc:
        raise SimulationInputError(f"{exc}: a card on the discard pile cannot also be in the "
                                   "hand") from None
    if any(n < 0 for n in others):
        raise SimulationInputError("--others: hand sizes cannot be negative")
    rest = remaining("uno", used)
    if sum(others) > len(rest):
        raise SimulationInputError(
            f"--others asks for {sum(others)} cards but only {len(rest)} are left in the deck")
    if len(others) + 2 + bool(drawn_card) + hide_remaining > 18:
        raise SimulationInputError("too many players for the default helper deck's θ faces")
    rng = rng if rng is not None else np.random.default_rng()
    order = rng.permutation(len(rest))
    dealt, start = [], 0
    for n in others:
        dealt.append(tuple(rest[i] for i in order[start:start + n]))
        start += n
    deck = tuple(rest[i] for i in order[start:])
    return UnoDeal(top_card, colour, tuple(hand_cards), tuple(dealt), deck, drawn_card,
                   tuple(under), hide_remaining)


def uno_helper_deck(deal: UnoDeal, helper_deck: HelperDeck | None = None) -> HelperDeck:
    """The helper deck for a deal (default: α = 1R, β = 2G, θᵢ on blue numbers), checked for
    every role the protocol needs."""
    groups, _ = deal.groups_and_areas()
    deck = helper_deck or default_uno_helper_deck(len(groups))
    for role in [ALPHA, BETA] + [Role("theta", i + 1) for i in range(len(groups))]:
        deck.card(role)
    return deck


def check_helper_supply(sim: Simulation, helper_decks: int) -> None:
    """Refuse a helper supply of ``helper_decks`` full UNO decks that lacks copies."""
    assert sim.helper_deck is not None
    roles: Counter[Role] = Counter({k: v for k, v in sim.costs.helper_counts().items()
                                    if isinstance(k, Role)})
    supply = Counter({c: n * helper_decks for c, n in deck_counter("uno").items()})
    try:
        sim.helper_deck.check_supply(roles, supply)
    except HelperDeckError as exc:
        raise HelperDeckError(f"{exc} (with {helper_decks} helper UNO decks)") from None


def simulate_uno(deal: UnoDeal, variant: Variant = "v2", runs: int = DEFAULT_RUNS,
                 seed: int = DEFAULT_SEED, transcripts: bool = False,
                 helper_deck: HelperDeck | None = None,
                 rng: np.random.Generator | None = None) -> Simulation:
    """Outcome: the code of the card played, or ``none``. Checks every run's correctness: each
    card not played is back with its owner."""
    if variant not in ("v1", "v2"):
        raise SimulationInputError(f"--variant must be v1 or v2, got {variant!r}")
    deck = uno_helper_deck(deal, helper_deck)
    groups, areas = deal.groups_and_areas()
    rng = rng if rng is not None else np.random.default_rng(seed)
    protocol = uno_card_selection(groups, deal.in_play(), deal.top, deal.colour, variant)
    table, _, seconds = run(protocol, areas, runs, rng)
    check_returned(table, areas)
    selected = table.area("selected")[:, 0]
    names = {i: str(c) for i, c in enumerate(VOCAB.roles + VOCAB.faces)} | {EMPTY: "none"}
    sim = _finish("uno-select", table, _labels(selected, names), seconds, seed, transcripts, deck,
                  variant)
    if deal.drawn is not None:
        sim.notes.append(f"draw-then-play: only the drawn {deal.drawn} could be chosen")
    if deal.hide_remaining:
        sim.notes.append("the discard pile was one more owner group (remaining cards hidden)")
    return sim


def check_returned(table: Table, areas: dict[str, TokenArray]) -> None:
    """Every card dealt is, after the protocol, back with its owner (P1's and the drawn card:
    in P1's hand or selected). A failure is a bug in a protocol, never a user error."""
    def same(now: TokenArray, want: TokenArray) -> np.ndarray:
        now = np.sort(now, axis=1)
        cut = now.shape[1] - len(want)
        if cut < 0:
            return np.zeros(table.runs, dtype=bool)
        return (now[:, cut:] == np.sort(want)).all(axis=1) & (now[:, :cut] == EMPTY).all(axis=1)

    p1 = [a for a in ("P1", "drawn") if a in areas]
    ok = same(np.concatenate([table.area("P1"), table.area("selected")], axis=1),
              np.concatenate([areas[a] for a in p1]))
    for name, tokens in areas.items():
        if name not in p1:
            ok &= same(table.area(name), tokens)
    if not ok.all():
        raise RuntimeError(f"protocol error: {np.count_nonzero(~ok)} runs returned a card to "
                           "the wrong owner")


# ------------------------------------------------------------------------------- wild colour

def simulate_wild_colour(runs: int = DEFAULT_RUNS, seed: int = DEFAULT_SEED,
                         transcripts: bool = False) -> Simulation:
    """Outcome: the colour chosen (R, Y, G, B)."""
    rng = np.random.default_rng(seed)
    table, tokens, seconds = run(wild_colour(), {}, runs, rng)
    names = {VOCAB.token(f): f.colour or "" for f in VOCAB.faces if f.deck == "uno"}
    return _finish("wild-colour", table, _labels(tokens, names), seconds, seed, transcripts,
                   HelperDeck({}))
