"""A simulated table for Old Maid, Sevens, Hearts and Muggins that writes the observations a
perfect camera would report, following a :class:`~protocol_runner.games.checked.CheckedGame`'s
instructions — the same idea as :mod:`protocol_runner.tablesim` for UNO.

Cards are real (simulated) and hidden from the runner: humans pick a random valid card (or lay
down their pairs), virtual players' protocols run on the engine's
:class:`~protocol_runner.machine.Table` with true cards and true shuffles, and each stable view
is written as the vision pipeline would report it. ``faults`` plant the mistakes a real table
makes, just before the correct view, so that a script exercises every reveal check and the
recovery after it (see :data:`FAULTS`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from protocol_runner.cards import BACK, Card, domino_set
from protocol_runner.games.checked import (
    PHASE_DRAW,
    PHASE_HUMAN,
    PHASE_LAY_DOWN,
    PHASE_OVER,
    PHASE_PROTOCOL,
    PHASE_SELECTED,
    PHASE_VIRTUAL_DRAW,
    CheckedGame,
)
from protocol_runner.games.common import deal
from protocol_runner.games.dominoes import TILES_EACH, DominoState
from protocol_runner.games.hearts import HeartsState, hearts_deck
from protocol_runner.games.old_maid import OldMaidState, old_maid_deck, remove_pairs
from protocol_runner.games.sevens import SevensState, sevens_deck
from protocol_runner.instructions import Verdict
from protocol_runner.machine import EMPTY, VOCAB, BisectionCut, PileScramble, Table, Take, Turn
from protocol_runner.observations import Cell, Event, PlayerSpec, Record, Setup, View, dumps
from protocol_runner.tablesim import seen_zones

# fault → (the game it applies to, what it does)
FAULTS: dict[str, tuple[str, str]] = {
    "om_6b": ("old-maid", "Step 6b: one revealed card misread as a card not in play"),
    "om_6c": ("old-maid", "Step 6c: two columns out of the rank / α → β → γ → δ order"),
    "om_6g": ("old-maid", "Step 6g: a 1-card in the bottom row reads as a dummy"),
    "om_6g_pair": ("old-maid", "Step 6g: an opened 1 1 pile shows two different ranks"),
    "om_8": ("old-maid", "Step 8: an i-card reads as another player's"),
    "om_8_joker": ("old-maid", "Step 8: the card above the dummy is not Jo̅"),
    "om_pairs": ("old-maid", "a human lays down two cards of different ranks"),
    "sel_5": ("any", "selection Step 5: a card of the first row misread"),
    "sel_9": ("any", "selection Step 9: a θ misread as another group's"),
    "sel_and": ("any", "lottery's AND: the turned pair reads αα"),
    "sel_lottery": ("any", "lottery Step 7: a second pair reads βα"),
    "invalid_play": ("sevens", "a human lays a card that is not valid"),
    "revoke": ("hearts", "a human plays a suit it showed to be void in"),
    "no_fit": ("muggins", "a human lays a tile that fits neither end"),
    "wrong_hand": ("any", "a card goes back into the wrong hand (a virtual player's count)"),
}


class ScriptError(RuntimeError):
    """The runner refused what a perfect table did: a bug in the runner or in this table."""


@dataclass
class Script:
    """The records of one simulated game and what happened in it."""

    records: list[Record] = field(default_factory=list)
    result: str = ""
    protocol_runs: int = 0
    planted: list[str] = field(default_factory=list)
    caught: dict[str, str] = field(default_factory=dict)  # fault → the deviation's message

    def write(self, path: str | Path) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            for record in self.records:
                handle.write(dumps(record) + "\n")


class ScriptTable:
    """Plays one game on simulated cards, following a :class:`CheckedGame`'s instructions."""

    def __init__(self, game: str, players: Iterable[tuple[str, bool]], seed: int = 0,
                 faults: Iterable[str] = (), max_records: int = 200_000,
                 hearts_target: int | None = None) -> None:
        unknown = [f for f in faults if f not in FAULTS]
        if unknown:
            raise ValueError(f"unknown fault(s) {unknown}; known: {', '.join(FAULTS)}")
        self.setup = Setup(players=tuple(PlayerSpec(n, v) for n, v in players), game=game,
                           target=hearts_target if game == "hearts" else None)
        self.rng = np.random.default_rng(seed)
        self.faults = list(faults)
        self.runner = CheckedGame()
        self.out = Script()
        self.seq = 0
        self.max_records = max_records
        self.table: Table | None = None
        self.order: list[int] = []
        self.hands: list[list[Card]] = []
        self.boneyard: list[Card] = []
        self.selected: Card | None = None
        self.aside: list[Card] = []

    # --------------------------------------------------------------------------- driving
    def play(self, stop_when_planted: bool = False) -> Script:
        """Play to the end (or, with ``stop_when_planted``, until every fault was planted and
        the table recovered from it)."""
        verdict = self.runner.feed(self.setup)[0]
        if not verdict.ok:  # bad options, not a runner bug: a user error
            raise ValueError(f"cannot simulate this game: {verdict.message}")
        self.out.records.append(self.setup)
        self._deal()
        dealt = self._deal_number()
        while self.runner.phase != PHASE_OVER:
            if len(self.out.records) > self.max_records:
                raise ScriptError("the game did not end")
            if stop_when_planted and not self.faults and self.out.planted:
                return self.out
            if self._deal_number() != dealt:  # a new Hearts round, or a Muggins redeal
                dealt = self._deal_number()
                self._deal()
            phase = self.runner.phase
            if phase == PHASE_PROTOCOL:
                self._protocol_step()
            elif phase == PHASE_HUMAN:
                self._human()
            elif phase == PHASE_SELECTED:
                self._play(self.selected)
            elif phase == PHASE_VIRTUAL_DRAW:
                self._draw_tile()
            elif phase == PHASE_LAY_DOWN:
                self._lay_down()
            elif phase == PHASE_DRAW:
                self._old_maid_draw()
        self.out.result = self.runner.result()
        return self.out

    def _deal_number(self) -> int:
        state = self.runner.game
        if isinstance(state, HeartsState):
            return state.round
        return self.runner.deals

    def _deal(self) -> None:
        n = len(self.setup.players)
        game = self.setup.game
        if game == "old-maid":
            self.hands, _ = deal(old_maid_deck(), n, self.rng)
        elif game == "sevens":
            self.hands, _ = deal(sevens_deck(), n, self.rng)
        elif game == "hearts":
            self.hands, _ = deal(hearts_deck(), n, self.rng)
        else:
            self.hands, self.boneyard = deal(domino_set(), n, self.rng, TILES_EACH)

    def _feed(self, record: Record, expect: str = "accepted") -> str:
        verdict = self.runner.feed(record)[0]
        assert isinstance(verdict, Verdict)
        if verdict.kind != expect:
            raise ScriptError(f"{dumps(record)[:300]} got {verdict.kind}: {verdict.message} "
                              f"{[p.message for p in verdict.problems]} (wanted {expect})")
        self.out.records.append(record)
        return verdict.message + " " + " ".join(p.message for p in verdict.problems)

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def _event(self, name: str) -> Event:
        return Event(event=name, seq=self._next_seq())  # type: ignore[arg-type]

    def _view(self, work: list[list[str]] | None = None, side: list[list[str]] | None = None,
              discard: str | None = None) -> View:
        return View(work=tuple(tuple(Cell(c) for c in col) for col in work or []),
                    side=tuple(tuple(Cell(c) for c in col) for col in side or []),
                    discard=Cell(discard if discard is not None else self.runner.shown),
                    hands=self._hands(), seq=self._next_seq())

    def _hands(self) -> dict[str, int]:
        """The virtual players' face-down hands, counted as a camera would count them."""
        counts = {}
        for s, player in enumerate(self.setup.players):
            if not player.virtual:
                continue
            if self.table is not None:
                j = self.order.index(s)
                area = self.table.area("P1" if j == 0 else f"P{j + 1}")
                counts[player.name] = int((area[0] != EMPTY).sum())
            else:
                counts[player.name] = len(self.hands[s]) - (self.selected is not None and s
                                                             == self.order[0])
        return counts

    def _fault(self, name: str) -> bool:
        if name in self.faults:
            self.faults.remove(name)
            self.out.planted.append(name)
            return True
        return False

    def _planted(self, name: str, bad: View) -> None:
        """Feed the faulty view: it must be a deviation (what the tests check)."""
        self.out.caught[name] = self._feed(replace(bad, seq=self._next_seq()), "deviation")

    # ------------------------------------------------------------------------ human moves
    def _human(self) -> None:
        state = self.runner.game
        seat = state.turn  # type: ignore[union-attr]
        hand = self.hands[seat]
        if isinstance(state, SevensState):
            valid = [c for c in hand if state.table.valid(c)]
            wrong = [c for c in sevens_deck() if not state.table.valid(c)
                     and c not in state.table.played()]
            if valid and wrong and self._fault("invalid_play"):
                self._planted("invalid_play", self._view(discard=wrong[0].code))
        elif isinstance(state, HeartsState):
            valid = [c for c in hand if state.valid(c)] or list(hand)
            void = {s for p, s in state.void if p == seat}
            revokes = [c for c in hearts_deck() if c.suit in void and c not in state.played]
            if revokes and self._fault("revoke"):
                self._planted("revoke", self._view(discard=revokes[0].code))
        else:
            assert isinstance(state, DominoState)
            valid = [t for t in hand if state.valid(t)]
            wrong = [t for t in domino_set() if not state.valid(t) and t not in state.line]
            if state.called is None and wrong and self._fault("no_fit"):
                self._planted("no_fit", self._view(discard=wrong[0].code))
        if valid:
            self._play(valid[int(self.rng.integers(len(valid)))])
        elif isinstance(state, DominoState) and state.called is None and self.boneyard:
            hand.append(self.boneyard.pop())
            self._feed(self._event("drew"))
        else:
            self._feed(self._event("pass"))

    def _play(self, card: Card | None) -> None:
        assert card is not None
        state = self.runner.game
        seat = state.turn  # type: ignore[union-attr]
        self.hands[seat].remove(card)
        self.selected = None
        self._feed(self._view(discard=card.code))

    def _draw_tile(self) -> None:
        state = self.runner.game
        assert isinstance(state, DominoState)
        self.hands[state.turn].append(self.boneyard.pop())
        self._feed(self._event("drew"))

    def _lay_down(self) -> None:
        state = self.runner.game
        assert isinstance(state, OldMaidState)
        seat = self.runner._next_remover()
        kept, removed = remove_pairs(self.hands[seat])
        if not removed:
            self._feed(self._event("pass"))
            return
        pairs = [[removed[i].code, removed[i + 1].code] for i in range(0, len(removed), 2)]
        if self._fault("om_pairs"):
            other = next(c for c in state.in_play if c.rank not in (None, removed[0].rank))
            self._planted("om_pairs", self._view(side=[[pairs[0][0], other.code], *pairs[1:]]))
        self.hands[seat] = kept
        self._feed(self._view(side=pairs))

    def _old_maid_draw(self) -> None:
        state = self.runner.game
        assert isinstance(state, OldMaidState)
        seat, source = state.turn, state.next_in_game(state.turn)
        pick = int(self.rng.integers(len(self.hands[source])))  # a shuffle, then a card
        self.hands[seat].append(self.hands[source].pop(pick))
        self._feed(self._event("drew"))

    # --------------------------------------------------------------------------- protocols
    def _start_table(self) -> Table:
        """The true table for the protocol the runner just started: the areas as groups."""
        runner = self.runner
        state = runner.game
        assert state is not None
        seat = runner._next_remover() if isinstance(state, OldMaidState) else state.turn
        n = len(self.hands)
        self.order = [(seat + j) % n for j in range(n)]
        areas = {("P1" if j == 0 else f"P{j + 1}"): VOCAB.tokens(self.hands[s])
                 for j, s in enumerate(self.order) if self.hands[s] or j == 0}
        if self.boneyard and not isinstance(state, OldMaidState):
            areas["boneyard"] = VOCAB.tokens(self.boneyard)
        self.out.protocol_runs += 1
        return Table(1, areas, rng=self.rng, count_helpers=False)

    def _protocol_step(self) -> None:
        driver = self.runner.driver
        assert driver is not None
        if driver.index == 0 and self.table is None:
            self.table = self._start_table()
        table = self.table
        assert table is not None
        action = driver.step.action
        if isinstance(action, PileScramble | BisectionCut):
            table.apply(action)
            self._feed(self._event("shuffle_done"))
        else:
            table.apply(action)
            view = self._render(table)
            if isinstance(action, Turn) and action.up or driver.step.number == "6c":
                self._plant(view)
            owner = self.setup.players[self.order[int(action.to[1:]) - 1]] \
                if isinstance(action, Take) and action.to[:1] == "P" else None
            if owner is not None and owner.virtual and self._fault("wrong_hand"):
                hands = dict(view.hands)
                hands[owner.name] += 1
                self._planted("wrong_hand", replace(view, hands=hands))
            self._feed(replace(view, seq=self._next_seq()))
        if driver.done or self.runner.driver is not driver:
            self._finish_protocol(table)

    def _render(self, table: Table) -> View:
        driver = self.runner.driver
        assert driver is not None
        zones = seen_zones(driver, table, self.runner.helper_deck)
        return self._view(zones["work"], zones["side"])

    def _plant(self, view: View) -> None:
        """At a reveal, feed a faulty version of ``view`` first when a fault is due here."""
        driver = self.runner.driver
        assert driver is not None
        step = driver.step
        protocol, number = step.protocol, step.number
        work = [[c.code for c in col] for col in view.work]
        if protocol.startswith("Old Maid"):
            if number == "6b" and self._fault("om_6b"):
                self._planted("om_6b", view.corrected("work", 1, 1, "7R"))
            elif number == "6c" and self._fault("om_6c"):
                first, last = work[0][0] or BACK, work[-1][0] or BACK
                self._planted("om_6c", view.corrected("work", 1, 1, last)
                              .corrected("work", len(work), 1, first))
            elif number == "6g" and step.expect and step.expect.multiset \
                    and self._fault_if(any(c[2] == "1R" for c in work), "om_6g"):
                col = next(i for i, c in enumerate(work, start=1) if c[2] == "1R")
                self._planted("om_6g", view.corrected("work", col, 3, "W"))
            elif number == "6g" and step.expect and step.expect.words \
                    and self._fault("om_6g_pair"):
                col = next(i for i, c in enumerate(work, start=1) if c[0] != BACK)
                wrong = "KS" if not work[col - 1][0].startswith("K") else "QS"
                self._planted("om_6g_pair", view.corrected("work", col, 1, wrong))
            elif number == "8" and step.expect and step.expect.multiset \
                    and self._fault_if(any(c[1] == "2R" for c in work), "om_8"):
                col = next(i for i, c in enumerate(work, start=1) if c[1] == "2R")
                self._planted("om_8", view.corrected("work", col, 2, "1R"))
            elif number == "8" and step.expect and step.expect.faces \
                    and not step.expect.multiset and self._fault("om_8_joker"):
                col = next(i for i, c in enumerate(work, start=1) if c[0] != BACK)
                self._planted("om_8_joker", view.corrected("work", col, 1, "AS"))
            return
        side = [[c.code for c in col] for col in view.side]
        alpha, beta = "1R", "2G"
        if "selection" in protocol and number == "5" and self._fault("sel_5"):
            first = work[0][0] or BACK
            wrong = "7R" if first != "7R" else "8R"
            self._planted("sel_5", view.corrected("work", 1, 1, wrong))
        elif "selection" in protocol and number == "9" \
                and self._fault_if(len(set(c[1] for c in work)) > 1, "sel_9"):
            other = next(c[1] for c in work if c[1] != work[0][1])
            self._planted("sel_9", view.corrected("work", 1, 2, other or BACK))
        elif protocol == "six-card AND" and self._fault("sel_and"):
            cols = [i for i, c in enumerate(side, start=1) if c and c[0] != BACK]
            self._planted("sel_and", view.corrected("side", cols[1], 1,
                                                    side[cols[0] - 1][0] or alpha))
        elif "lottery" in protocol and number == "7":
            pairs = [c[1:3] for c in side]
            zeros = [i for i, p in enumerate(pairs, start=1) if p == [alpha, beta]]
            if zeros and [beta, alpha] in pairs and self._fault("sel_lottery"):
                self._planted("sel_lottery", view.corrected("side", zeros[0], 2, beta)
                              .corrected("side", zeros[0], 3, alpha))

    def _fault_if(self, possible: bool, name: str) -> bool:
        return possible and self._fault(name)

    def _finish_protocol(self, table: Table) -> None:
        """Read back where the true cards went: hands, boneyard, the selected card."""
        self.table = None

        def cards(area: str) -> list[Card]:
            return [VOCAB.item(int(t)) for t in table.area(area)[0]  # type: ignore[misc]
                    if t != EMPTY]

        for j, s in enumerate(self.order):
            self.hands[s] = cards("P1" if j == 0 else f"P{j + 1}")
        if "boneyard" in table.areas:
            self.boneyard = cards("boneyard")
        selected = cards("selected")
        self.selected = selected[0] if selected else None
        if self.selected is not None:
            self.hands[self.order[0]].append(self.selected)
