"""A simulated table with a perfect camera: writes the observations a real game would produce.

Why: the runner must be testable, demonstrable and benchmarkable without a camera. This module
deals real (simulated) cards, follows the runner's own instructions as a careful table would –
humans choose a random valid card, virtual players' protocols run on the engine's
:class:`~protocol_runner.machine.Table` with true cards and true shuffles – and writes each
stable view exactly as the vision pipeline should report it. ``faults`` plant the mistakes a
real table makes (misread cards, a wrong validity pair, a card back in the wrong hand, …) just
before the correct view, so scripts exercise every deviation check and the recovery after it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from protocol_runner.cards import BACK, Card, uno_deck
from protocol_runner.games import uno
from protocol_runner.helpers import ALPHA, BETA, HelperDeck
from protocol_runner.machine import EMPTY, VOCAB, PileScramble, Table, Take, Turn
from protocol_runner.observations import (
    Cell,
    Event,
    PlayerSpec,
    Record,
    Setup,
    View,
    dumps,
)
from protocol_runner.runner import (
    PHASE_COLOUR,
    PHASE_FIRST,
    PHASE_HUMAN,
    PHASE_OVER,
    PHASE_PLAY,
    PHASE_PROTOCOL,
    GameRunner,
    ProtocolDriver,
)

FAULTS = ("step5_misread", "step6_pair", "step9_theta", "and_reveal", "lottery_two_ones",
          "invalid_play", "wrong_hand", "blind_view", "out_of_order", "undo")


def seen_zones(driver: ProtocolDriver, table: Table,
               helper_deck: HelperDeck) -> dict[str, list[list[str]]]:
    """What a perfect camera reads in each zone of the protocol matrix: codes face up, BACK."""
    codes = VOCAB.codes(helper_deck)

    def cell(slot: int) -> str:
        token = int(table.cards[0, slot])
        return str(codes[token]) if table.up[0, slot] else BACK

    return {zone: [[cell(s) for s in col] for col in cols]
            for zone, cols in driver.rendered.slots.items()}


class SimulationError(RuntimeError):
    """The runner refused what a perfect table did: a bug in the runner or the simulator."""


@dataclass
class ScriptedGame:
    """The records of one simulated game and what happened (for tests and demos)."""

    records: list[Record] = field(default_factory=list)
    winner: str | None = None
    virtual_turns: int = 0
    draw_then_play: int = 0
    wilds_by_virtual: int = 0
    planted: list[str] = field(default_factory=list)

    def write(self, path: str | Path) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            for record in self.records:
                handle.write(dumps(record) + "\n")


class TableSimulator:
    """Plays a game on simulated cards, following a :class:`GameRunner`'s instructions."""

    def __init__(self, setup: Setup, seed: int = 0, faults: Iterable[str] = (),
                 max_turns: int = 200) -> None:
        unknown = set(faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown fault(s) {sorted(unknown)}; known: {', '.join(FAULTS)}")
        self.setup = setup
        self.rng = np.random.default_rng(seed)
        self.faults = list(faults)
        self.max_turns = max_turns
        self.runner = GameRunner()
        self.out = ScriptedGame()
        self.seq = 0
        deck = list(uno_deck())
        order = self.rng.permutation(len(deck))
        cards = [deck[i] for i in order]
        n, size = len(setup.players), setup.hand_size
        self.hands: list[list[Card]] = [cards[i * size:(i + 1) * size] for i in range(n)]
        self.deck: list[Card] = cards[n * size:]
        self.discard: list[Card] = []
        self.table: Table | None = None
        self.selected: Card | None = None
        self.purpose = ""
        self.me = 0
        self.order: list[int] = []

    # ------------------------------------------------------------------------------ driving
    def play(self, until_turn: int | None = None) -> ScriptedGame:
        """Play to the end (or until turn ``until_turn`` is over) and return the records."""
        self._feed(self.setup)
        while self.runner.phase != PHASE_OVER:
            if until_turn is not None and self.runner.turn > until_turn:
                return self.out
            if self.runner.turn > self.max_turns:
                raise SimulationError(f"no winner after {self.max_turns} turns")
            phase = self.runner.phase
            if phase == PHASE_FIRST:
                self._first_card()
            elif phase == PHASE_HUMAN:
                self._human()
            elif phase == PHASE_COLOUR:
                self._feed(self._event("colour", colour=self._favourite_colour()))
            elif phase == PHASE_PROTOCOL:
                self._protocol_step()
            elif phase == PHASE_PLAY:
                self._play_selected()
        game = self.runner.game
        assert game is not None and game.winner is not None
        self.out.winner = game.seats[game.winner].name
        return self.out

    def _feed(self, record: Record, expect: str = "accepted") -> None:
        before = self.runner.game
        outputs = self.runner.feed(record)
        verdict = outputs[0]
        if getattr(verdict, "kind", None) != expect:
            raise SimulationError(f"record {dumps(record)[:300]} got {verdict} (wanted {expect})")
        self.out.records.append(record)
        after = self.runner.game
        if before is not None and before.discard and after is not None and after.winner is None \
                and after.turns_played == before.turns_played + 1 \
                and after.discard != before.discard and after.discard[-1].symbol in ("+2", "+4"):
            # the runner told the next player to draw: the table does
            self._draw(before.seat_after(before.turn), 2 if after.discard[-1].symbol == "+2" else 4)

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def _event(self, name: str, **fields: object) -> Event:
        return Event(event=name, seq=self._next_seq(), **fields)  # type: ignore[arg-type]

    def _fault(self, name: str) -> bool:
        if name in self.faults:
            self.faults.remove(name)
            self.out.planted.append(name)
            return True
        return False

    # ------------------------------------------------------------------------------ phases
    def _view(self, work: list[list[str]] | None = None, side: list[list[str]] | None = None,
              hands: dict[str, int] | None = None, discard: str | None = None) -> View:
        top = discard if discard is not None else (self.discard[-1].code if self.discard
                                                   else None)
        return View(work=tuple(tuple(Cell(c) for c in col) for col in work or []),
                    side=tuple(tuple(Cell(c) for c in col) for col in side or []),
                    discard=Cell(top), hands=hands if hands is not None else self._hands(),
                    seq=self._next_seq())

    def _hands(self, on_table: dict[str, int] | None = None) -> dict[str, int]:
        """Counts of the virtual players' face-down hands, as a camera would count them."""
        on_table = on_table or {}
        return {p.name: len(self.hands[i]) - on_table.get(p.name, 0)
                for i, p in enumerate(self.setup.players) if p.virtual}

    def _first_card(self) -> None:
        while self.deck[0].is_black:  # back into the middle of the unplayed deck
            card = self.deck.pop(0)
            self.deck.insert(len(self.deck) // 2, card)
        self.discard.append(self.deck.pop(0))
        self._feed(self._view())

    def _game(self) -> uno.UnoState:
        assert self.runner.game is not None
        return self.runner.game

    def _draw(self, seat: int, count: int) -> None:
        if len(self.deck) < count:
            rest = self.discard[:-1]
            self.rng.shuffle(rest)  # type: ignore[arg-type]
            self.deck += rest
            self.discard = self.discard[-1:]
        for _ in range(min(count, len(self.deck))):
            self.hands[seat].append(self.deck.pop(0))

    def _put(self, seat: int, card: Card) -> None:
        """``seat`` discards ``card`` (penalty draws follow the runner's instruction)."""
        self.hands[seat].remove(card)
        self.discard.append(card)

    def _favourite_colour(self) -> str:
        seat = self._game().turn
        colours = Counter(c.colour for c in self.hands[seat] if c.colour)
        return colours.most_common(1)[0][0] if colours else "R"

    def _human(self) -> None:
        game = self._game()
        seat = game.turn
        valid = [c for c in self.hands[seat] if game.playable(c)]
        if game.drawn:
            drawn = self.hands[seat][-1]
            if game.playable(drawn):
                self._put_and_show(seat, drawn)
            else:
                self._feed(self._event("pass"))
            return
        if not valid:
            self._draw(seat, 1)
            self._feed(self._event("drew"))
            return
        card = valid[int(self.rng.integers(len(valid)))]
        self._put_and_show(seat, card)

    def _put_and_show(self, seat: int, card: Card) -> None:
        """Discard ``card``; a card of the top card's face is announced (the view is the same)."""
        same = bool(self.discard) and self.discard[-1] == card
        self._put(seat, card)
        self._feed(self._event("played", code=card.code) if same else self._view())

    # --------------------------------------------------------------------------- protocols
    def _start_table(self) -> Table:
        """A true table for the protocol the runner just started (areas = the groups)."""
        runner = self.runner
        driver = runner.driver
        assert driver is not None
        game = self._game()
        me = self.me = game.turn
        self.purpose = runner.purpose
        areas: dict[str, np.ndarray] = {}
        if runner.purpose != "colour":
            order = self.order = [game.seat_after(me, j) for j in range(1, len(game.seats))]
            hand = list(self.hands[me])
            if runner.purpose == "draw":
                self._draw(me, 1)
                hand = list(self.hands[me])
                areas["drawn"] = VOCAB.tokens(hand[-1:])
                hand = hand[:-1]
            areas["P1"] = VOCAB.tokens(hand)
            for j, s in enumerate(order):
                areas[f"P{j + 2}"] = VOCAB.tokens(self.hands[s])
            areas["deck"] = VOCAB.tokens(self.deck)
        return Table(1, areas, rng=self.rng, count_helpers=False)

    def _protocol_step(self) -> None:
        driver = self.runner.driver
        assert driver is not None
        if driver.index == 0 and self.table is None:
            self.table = self._start_table()
            if self.purpose == "select":
                self.out.virtual_turns += 1
            elif self.purpose == "draw":
                self.out.draw_then_play += 1
        table = self.table
        assert table is not None
        action = driver.step.action
        if isinstance(action, PileScramble):
            if self._fault("blind_view"):
                self._feed(self._render(table), expect="refused")
            table.apply(action)
            self._feed(self._event("shuffle_done"))
        else:
            table.apply(action)
            view = self._render(table)
            if not self._plant(view):
                self._feed(replace(view, seq=self._next_seq()))
        if driver.done:
            self._finish_protocol()

    def _render(self, table: Table) -> View:
        driver = self.runner.driver
        assert driver is not None
        zones = seen_zones(driver, table, self.runner.helper_deck)
        return self._view(zones["work"], zones["side"], self._hands(driver.areas_after()),
                          discard=self.runner._discard_expected())

    def _plant(self, view: View) -> bool:
        """Feed a faulty version of ``view`` first when a planted fault is due at this step;
        return True if the fault's recovery (a correction event) already completed the step."""
        driver = self.runner.driver
        assert driver is not None
        step = driver.step
        number, protocol, action = step.number, step.protocol, step.action
        selection = protocol.startswith("UNO")
        reveal = isinstance(action, Turn) and action.up
        bad: View | None = None
        recover: dict[str, object] | None = None
        if selection and number == "5" and self._fault("step5_misread"):
            first = view.work[0][0].code
            bad = view.corrected("work", 1, 1, "9Y" if first != "9Y" else "8Y")
            recover = {"zone": "work", "column": 1, "row": 1, "code": first}
        elif selection and number == "6" and self._fault("step6_pair"):
            col = view.work[1]
            bad = view.corrected("work", 2, 3, col[3].code or BACK).corrected(
                "work", 2, 4, col[2].code or BACK)
        elif selection and number == "9" and self._fault("step9_theta"):
            codes = [c[1].code for c in view.work]
            other = next(c for c in codes if c != codes[0])
            bad = view.corrected("work", 1, 2, other or BACK)
        elif protocol == "six-card AND" and reveal and self._fault("and_reveal"):
            cols = [i for i, c in enumerate(view.side, start=1) if c[0].code != BACK]
            bad = view.corrected("side", cols[1], 1, view.side[cols[0] - 1][0].code or BACK)
        elif "lottery" in protocol and reveal:
            helper = self.runner.helper_deck
            alpha, beta = helper.card(ALPHA).code, helper.card(BETA).code
            pairs = [[x.code for x in c[1:3]] for c in view.side]
            zeros = [i for i, p in enumerate(pairs, start=1) if p == [alpha, beta]]
            if zeros and [beta, alpha] in pairs and self._fault("lottery_two_ones"):
                bad = view.corrected("side", zeros[0], 2, beta).corrected(
                    "side", zeros[0], 3, alpha)
        elif isinstance(action, Take) and action.to not in ("P1", "pool", "selected") \
                and view.hands and self._fault("wrong_hand"):
            name = next(iter(view.hands))
            bad = replace(view, hands={**view.hands, name: view.hands[name] + 1})
        elif selection and number == "7" and self._fault("out_of_order"):
            self._feed(replace(view, seq=1), expect="refused")
        elif selection and number == "3" and self._fault("undo"):
            self._feed(replace(view, seq=self._next_seq()))
            self._feed(self._event("step_undone"))
        if bad is None:
            return False
        self._feed(replace(bad, seq=self._next_seq()), expect="deviation")
        if recover is None:
            return False
        self._feed(self._event("card_corrected", **recover))
        return True

    def _finish_protocol(self) -> None:
        """Read back where the true cards went: hands, deck, the selected card."""
        table = self.table
        assert table is not None
        self.table = None
        if self.purpose == "colour":
            return

        def cards(area: str) -> list[Card]:
            return [VOCAB.item(int(t)) for t in table.area(area)[0]  # type: ignore[misc]
                    if t != EMPTY]

        self.hands[self.me] = cards("P1")
        for j, s in enumerate(self.order):
            self.hands[s] = cards(f"P{j + 2}")
        self.deck = cards("deck")
        selected = cards("selected")
        self.selected = selected[0] if selected else None
        if self.selected is not None:
            self.hands[self.me].append(self.selected)

    def _play_selected(self) -> None:
        game = self._game()
        card = self.selected
        assert card is not None
        if self._fault("invalid_play"):
            wrong = next(c for c in Counter(uno_deck()) - Counter(self.discard)
                         if not c.is_black and not game.playable(c))
            aside = {self.setup.players[game.turn].name: 1}
            self._feed(self._view(discard=wrong.code, hands=self._hands(aside)),
                       expect="deviation")
        self.selected = None
        if card.is_black:
            self.out.wilds_by_virtual += 1
        self._put_and_show(game.turn, card)


def simulated_setup(humans: int = 2, virtual: int = 2, hand_size: int = 7,
                    start: int = 0) -> Setup:
    """Seats alternate human and virtual where possible (H1, V1, H2, V2, …)."""
    players = []
    h = v = 0
    while h < humans or v < virtual:
        if h < humans:
            h += 1
            players.append(PlayerSpec(f"H{h}", False))
        if v < virtual:
            v += 1
            players.append(PlayerSpec(f"V{v}", True))
    return Setup(players=tuple(players), start=start, hand_size=hand_size)


