"""Old Maid, Sevens, Hearts and Muggins at a real table, checked from observations.

The same records as a UNO game (:mod:`protocol_runner.observations`: a ``setup`` naming the
game, ``view`` records, operator ``event`` records) and the same protocol driver
(:class:`protocol_runner.runner.ProtocolDriver`: every step of a virtual player's protocol is
checked against the view, every reveal against the protocol's expectation). What these games add,
outside a protocol:

* ``discard`` cell: the card or tile played last — laid in Sevens, played to the trick in Hearts,
  laid in the line in Muggins. A new code there is the move of the player to move; the runner
  checks it against the rules (:mod:`protocol_runner.games.sevens` …) and refuses it otherwise.
* ``side`` zone (Old Maid, outside the removal protocol): the pairs a human lays down, one pair
  per column of two face-up cards.
* events ``pass`` (no valid card; in Old Maid: no pair to lay down), ``drew`` (a Muggins draw
  from the boneyard; an Old Maid draw from the next player's hand).

Virtual players: the card selection protocol (Hearts: with the original covert lottery), or in
Old Maid the removal protocol; a virtual player's Old Maid draw is made by shuffling the next
hand face down and taking a card, unseen. In Muggins a tile that fits both ends goes where it
scores more (left on a tie), for every player alike. The runner knows only public information.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from protocol_runner.cards import BACK, Card, CardCodeError, domino_set, parse_card
from protocol_runner.games.common import GameRuleError
from protocol_runner.games.dominoes import DominoState
from protocol_runner.games.hearts import GAME_OVER_AT, HeartsState, hearts_deck
from protocol_runner.games.old_maid import OldMaidState
from protocol_runner.games.sevens import SevensState, sevens_deck
from protocol_runner.helpers import (
    ALPHA,
    BETA,
    DUMMY,
    HelperDeck,
    HelperDeckError,
    default_uno_helper_deck,
    icard,
    theta,
)
from protocol_runner.instructions import REVEAL, Expected, Instruction, Output, Problem, Verdict
from protocol_runner.machine import VOCAB, Protocol
from protocol_runner.observations import Event, ObservationError, Record, Setup, View
from protocol_runner.protocols.card_selection import Group, card_selection
from protocol_runner.protocols.old_maid import (
    NAME as REMOVAL,
)
from protocol_runner.protocols.old_maid import (
    RemovalInputError,
    default_old_maid_helper_deck,
    old_maid_removal,
)
from protocol_runner.runner import (
    PHASE_PROTOCOL,
    Confirmations,
    ProtocolDriver,
    hand_problems,
    min_confidence,
)

GAMES = ("old-maid", "sevens", "hearts", "muggins")

PHASE_SETUP = "setup"
PHASE_HUMAN = "human move"
PHASE_SELECTED = "play selected"
PHASE_VIRTUAL_DRAW = "virtual draw"
PHASE_LAY_DOWN = "lay down pairs"
PHASE_DRAW = "draw"
PHASE_OVER = "game over"

GameState = OldMaidState | SevensState | HeartsState | DominoState
_SEAT_RE = re.compile(r"\b(?:player|seat) (\d+)\b")


class CheckedGame:
    """One game of Old Maid, Sevens, Hearts or Muggins, fed one record at a time.

    The same interface as the UNO :class:`~protocol_runner.runner.GameRunner`, so that one
    :class:`~protocol_runner.runner.Session` (journal, resume, audit, the dashboard) serves every
    game: ``feed(record)`` returns ``[Verdict, Instruction?]`` (the instruction when the table
    has something new to do), ``instruction`` says what the table must do now, ``state()`` is a
    JSON-able snapshot. Bad or untimely input gets a ``deviation`` (the table differs from what
    the rules or the protocol allow) or ``refused`` verdict and changes nothing.
    """

    def __init__(self) -> None:
        self.setup: Setup | None = None
        self.game_name = ""
        self.game: GameState | None = None
        self.phase = PHASE_SETUP
        self.turn = 0  # moves begun (a number for screens and journals, like UNO's turns)
        self.driver: ProtocolDriver | None = None
        self.purpose = ""
        self.helper_deck = HelperDeck({})
        self.shown: str | None = None  # the discard cell's code, as last accepted
        self.removed: list[Card] = []  # pairs opened in the removal protocol under way
        self.instruction: Instruction | None = None
        self.verdict: Verdict | None = None
        self.notice = ""  # said before the next instruction (e.g. a new Hearts round)
        self.last_view: View | None = None
        self.last_seq: int | None = None
        self.log: list[str] = []
        self.timeline: list[dict[str, Any]] = []
        self.deals = 0  # Muggins: how often the tiles were dealt again (nobody held a doublet)
        self.sure = Confirmations()

    # ------------------------------------------------------------------------------ public
    @property
    def names(self) -> list[str]:
        assert self.setup is not None
        return [p.name for p in self.setup.players]

    @property
    def virtual(self) -> list[bool]:
        assert self.setup is not None
        return [p.virtual for p in self.setup.players]

    @property
    def over(self) -> bool:
        return self.phase == PHASE_OVER

    def result(self) -> str:
        """Who won (or lost, in Old Maid), in words."""
        state = self.game
        if not self.over or state is None:
            return "the game is not over"
        if isinstance(state, OldMaidState):
            assert state.loser is not None
            return f"{self.names[state.loser]} holds the joker and loses"
        if isinstance(state, SevensState):
            assert state.winner is not None
            return f"{self.names[state.winner]} wins"
        scores = ", ".join(f"{n} {s}" for n, s in zip(self.names, state.scores, strict=True))
        winners = " and ".join(self.names[w] for w in state.winners)
        return f"{winners} win{'s' if len(state.winners) == 1 else ''} ({scores})"

    def feed(self, record: Record) -> list[Output]:
        """Take one input; return the verdict and, if the table must do something new, the
        instruction. Bad or untimely input is refused with a message; state stays intact."""
        seq = None if isinstance(record, Setup) else record.seq
        before = self.instruction
        if seq is not None and self.last_seq is not None and seq <= self.last_seq:
            verdict = Verdict("refused", f"observation {seq} arrived after {self.last_seq}: out "
                              "of order, ignored", seq=seq)
        else:
            try:
                verdict = self._dispatch(record)
            except GameRuleError as exc:
                verdict = Verdict("deviation", self._named(str(exc)), seq=seq,
                                  recover="take the card back and make a move the rules allow")
            except ObservationError as exc:  # e.g. a correction of a cell that does not exist
                verdict = Verdict("refused", str(exc), seq=seq)
        if seq is not None and verdict.kind != "refused":
            self.last_seq = seq
        self.log.append(f"{verdict.kind}: {verdict.message}")
        self.verdict = verdict
        out: list[Output] = [verdict]
        if self.instruction is not None and self.instruction is not before:
            out.append(self.instruction)
        return out

    def state(self) -> dict[str, Any]:
        """Everything public, for a screen (the same keys as the UNO runner's ``state()``):
        players with hand sizes, whose move, scores, the card or tile played last, the result,
        the current instruction and expectation, the last verdict, the timeline."""
        instr = self.instruction
        return {"phase": self.phase, "turn_number": self.turn, "game": self._game_json(),
                "instruction": instr.to_json() if instr else None,
                "expectation": instr.expected.to_json() if instr else None,
                "blind": instr.blind if instr else None,
                "last_verdict": self.verdict.to_json() if self.verdict else None,
                "last_seq": self.last_seq, "timeline": list(self.timeline)}

    def _game_json(self) -> dict[str, Any] | None:
        state = self.game
        if state is None:
            return None
        players = [{"name": n, "type": "virtual" if v else "human", "hand_size": size}
                   for n, v, size in zip(self.names, self.virtual, self._sizes(), strict=True)]
        out: dict[str, Any] = {"name": self.game_name, "players": players,
                               "turn": None if self.over else self._who(),
                               "top": self.shown, "discard": [self.shown] if self.shown else [],
                               "over": self.over, "result": self.result() if self.over else None,
                               "winner": None, "loser": None}
        if isinstance(state, OldMaidState):
            out["loser"] = self.names[state.loser] if state.loser is not None else None
        elif isinstance(state, SevensState):
            out["winner"] = self.names[state.winner] if state.winner is not None else None
        else:
            out["scores"] = dict(zip(self.names, state.scores, strict=True))
            if self.over:
                out["winner"] = " and ".join(self.names[w] for w in state.winners)
        if isinstance(state, DominoState):
            out["boneyard"] = state.boneyard
        return out

    # ---------------------------------------------------------------------------- dispatch
    def _dispatch(self, record: Record) -> Verdict:
        if isinstance(record, Setup):
            return self._setup(record)
        if self.game is None:
            return Verdict("refused", "no setup record yet: the first record must say who plays",
                           seq=record.seq)
        if self.over:
            return Verdict("refused", f"the game is over: {self.result()}", seq=record.seq)
        if isinstance(record, Event):
            return self._event(record)
        self.last_view = record
        return self._view(record)

    def _setup(self, setup: Setup) -> Verdict:
        if self.setup is not None:
            return Verdict("refused", "the game is already set up")
        if setup.game not in GAMES:
            return Verdict("refused", f"this runner plays {', '.join(GAMES)}, not {setup.game}")
        virtual = [p.virtual for p in setup.players]
        try:
            if setup.helper_deck:
                helper = HelperDeck.from_mapping(setup.helper_deck)
            elif setup.game == "old-maid":
                helper = default_old_maid_helper_deck(len(virtual))
            else:
                helper = default_uno_helper_deck(len(virtual) + 1)
            starts: dict[str, Callable[[list[bool]], GameState]] = {
                "old-maid": OldMaidState.start, "sevens": SevensState.start,
                "hearts": lambda v: HeartsState.start(v, setup.target or GAME_OVER_AT),
                "muggins": DominoState.start}
            game = starts[setup.game](virtual)
            n = len(virtual)
            roles = ([icard(i) for i in range(1, n + 1)] + [DUMMY] if setup.game == "old-maid"
                     else [ALPHA, BETA, *(theta(i) for i in range(1, n + 2))])
            for role in roles:  # every role a protocol of this game may need, before it starts
                helper.card(role)
        except (HelperDeckError, GameRuleError, RemovalInputError) as exc:
            return Verdict("refused", f"setup: {exc}")
        self.setup, self.game_name, self.helper_deck, self.game = setup, setup.game, helper, game
        self._begin()
        who = ", ".join(f"{p.name} ({'virtual' if p.virtual else 'human'})"
                        for p in setup.players)
        return Verdict("accepted", f"{setup.game} set up: {who}")

    def _sizes(self) -> tuple[int, ...]:
        state = self.game
        assert state is not None
        return state.sizes() if isinstance(state, HeartsState) else state.sizes

    def _hand_problems(self, view: View, on_table: dict[str, int]) -> list[Problem]:
        return hand_problems(view.hands, dict(zip(self.names, self._sizes(), strict=True)),
                             on_table)

    def _hands_expected(self, on_table: dict[str, int]) -> dict[str, int]:
        """The virtual players' face-down hands a view should count (their hands lie on the
        table; humans hold theirs)."""
        return {n: size - on_table.get(n, 0) for n, v, size in
                zip(self.names, self.virtual, self._sizes(), strict=True) if v}

    def _say(self, text: str, discard: str | None = None, reveal: str = "") -> None:
        """The instruction for a move outside a protocol: ``discard`` is the code the discard
        cell should show next (``?`` where the move puts a new card there)."""
        if self.notice:
            text = f"{self.notice} {text}"
            self.notice = ""
        aside = {self._who(): 1} if self.phase == PHASE_SELECTED else {}
        self.instruction = Instruction(
            self.turn, "" if self.over else self._who(), self.phase, text,
            expected=Expected(discard=discard if discard is not None else self.shown,
                              reveal=reveal, hands=self._hands_expected(aside)))

    def _view(self, view: View) -> Verdict:
        assert self.setup is not None
        unsure = self.sure.check(view, self.instruction, min_confidence(self.setup),
                                 self.helper_deck)
        if unsure is not None:
            return unsure
        if self.phase == PHASE_PROTOCOL:
            return self._protocol_view(view)
        aside = {self._who(): 1} if self.phase == PHASE_SELECTED else {}
        problems = self._hand_problems(view, aside)
        if problems:
            return self._deviation(view, "the hands are not as expected", problems,
                                   "recount the hands; put each card back where it came from")
        if self.phase == PHASE_LAY_DOWN:
            return self._lay_down(view)
        code = view.discard.code
        if code == self.shown or code is None:
            return Verdict("accepted", "no change", seq=view.seq)
        if self.phase not in (PHASE_HUMAN, PHASE_SELECTED) or code == BACK:
            return self._deviation(view, f"{code} appeared on the table, but {self._who()} is "
                                   f"to {self.phase}", [Problem(
                                       "discard: no card may be played now", zone="discard",
                                       expected=self.shown, saw=code)], "take it back")
        try:
            card = parse_card(code)
        except CardCodeError as exc:  # the observation parser already refuses these
            return Verdict("refused", str(exc), seq=view.seq)
        return self._played(view, card)

    def _named(self, text: str) -> str:
        """The rules' messages count seats from 0 ("player 2"); people use names."""
        return _SEAT_RE.sub(lambda m: self.names[int(m[1])] if int(m[1]) < len(self.names)
                            else m[0], text)

    def _who(self) -> str:
        return self.names[self._seat()]

    def _seat(self) -> int:
        state = self.game
        assert state is not None
        if isinstance(state, OldMaidState) and state.to_remove:
            return self._next_remover()
        return state.turn

    def _deviation(self, view: View, message: str, problems: list[Problem],
                   recover: str) -> Verdict:
        return Verdict("deviation", message, seq=view.seq, problems=tuple(problems),
                       recover=recover)

    # --------------------------------------------------------------------------- turns
    def _begin(self, again: bool = False) -> None:
        """Decide what the table does next: a human's move, or a virtual player's protocol
        (``again``: the same move once more, after an aborted protocol)."""
        state = self.game
        assert state is not None
        self.driver = None
        if not again and not (isinstance(state, DominoState) and state.redeal):
            self.turn += 1
        if isinstance(state, OldMaidState):
            self._begin_old_maid(state)
            return
        if isinstance(state, DominoState) and state.redeal:
            self.game = DominoState.start(self.virtual)
            self.deals += 1
            self.log.append("nobody holds a doublet: all tiles are shuffled and dealt again")
            self.shown = None
            self._begin()
            return
        if state.over:
            self._game_over()
            return
        seat = state.turn
        if self.virtual[seat]:
            self._start_selection(seat)
            return
        self.phase = PHASE_HUMAN
        self._say(self._human_move_text(state), discard=REVEAL)

    def _game_over(self) -> None:
        self.phase = PHASE_OVER
        self.timeline.append({"turn": self.turn, "event": self.result()})
        self._say(f"The game is over: {self.result()}.")

    def _moved(self, who: str, what: str) -> None:
        self.timeline.append({"turn": self.turn, "player": who, "event": what})

    def _human_move_text(self, state: GameState) -> str:
        if isinstance(state, SevensState):
            return ("lay a valid card (" + ", ".join(map(str, state.table.playable()))
                    + " if you hold one), or pass.")
        if isinstance(state, HeartsState):
            return f"play a card ({self._named(state.describe_trick())}; follow suit if you can)."
        assert isinstance(state, DominoState)
        if state.called is not None:
            return (f"lay D{state.called}{state.called} to open the game if you hold it, "
                    "else pass.")
        assert state.left is not None and state.right is not None
        more = "draw from the boneyard" if state.boneyard else "pass"
        return (f"lay a tile matching {state.left.value} or {state.right.value}, or {more}.")

    def _played(self, view: View, card: Card) -> Verdict:
        """A new card on the table: the move of the player to move (human, or the card the
        protocol selected for a virtual player)."""
        state = self.game
        assert state is not None and not isinstance(state, OldMaidState)
        seat, who = state.turn, self.names[state.turn]
        try:
            if isinstance(state, DominoState):
                end = None if state.called is not None or not state.valid(card) \
                    else state.best_end(card)
                new: GameState = state.after_play(seat, card, end)
            else:
                new = state.after_play(seat, card)
        except GameRuleError as exc:
            how = ("take it back and play a valid card" if self.phase == PHASE_HUMAN else
                   "the protocol selected it, so a step went wrong: take it back and abort the "
                   "turn (abort_turn) to run it again")
            return self._deviation(view, f"{who} cannot play {card}", [Problem(
                f"discard: {self._named(str(exc))}", zone="discard", saw=card.code)], how)
        self.game, self.shown = new, card.code
        self._moved(who, f"played {card}")
        if isinstance(new, HeartsState) and isinstance(state, HeartsState) \
                and new.round != state.round:  # the cards are gathered and dealt again
            self.shown = None
            if not new.over:
                self.notice = ("Round over; gather the cards, shuffle and deal 13 to each "
                               "player.")
        self._begin()
        return Verdict("accepted", f"{who} played {card}", seq=view.seq)

    # --------------------------------------------------------------------------- events
    def _event(self, event: Event) -> Verdict:
        seq = event.seq
        if event.event == "card_corrected":
            if self.last_view is None:
                return Verdict("refused", "no view to correct yet", seq=seq)
            view = self.last_view.corrected(event.zone or "work", event.column or 0,
                                            event.row or 0, event.code or BACK)
            self.last_view = view
            self.sure.confirm(event.zone or "work", event.column, event.row, event.code or BACK)
            verdict = self._view(view)
            return Verdict(verdict.kind, f"after the correction: {verdict.message}", seq=seq,
                           problems=verdict.problems, recover=verdict.recover,
                           unsure=verdict.unsure)
        if self.phase == PHASE_PROTOCOL:
            return self._protocol_event(event)
        state = self.game
        who = self._who()
        if event.event == "pass" and self.phase in (PHASE_HUMAN, PHASE_LAY_DOWN):
            if isinstance(state, OldMaidState):
                self.game = state.after_removal(self._seat(), [])
            elif isinstance(state, SevensState | DominoState):
                self.game = state.after_pass(state.turn)
            else:
                return Verdict("refused", "in Hearts a card is always played", seq=seq)
            self._moved(who, "passed")
            self._begin()
            return Verdict("accepted", f"{who} passed", seq=seq)
        if event.event == "drew":
            if isinstance(state, DominoState) and self.phase in (PHASE_HUMAN,
                                                                PHASE_VIRTUAL_DRAW):
                self.game = state.after_draw(state.turn)
                self._moved(who, "drew a tile")
                if self.phase == PHASE_VIRTUAL_DRAW:
                    self._start_selection(state.turn)
                else:
                    self._say(self._human_move_text(self.game), discard=REVEAL)
                return Verdict("accepted", f"{who} drew a tile", seq=seq)
            if isinstance(state, OldMaidState) and self.phase == PHASE_DRAW:
                source = self.names[state.next_in_game(state.turn)]
                self.game = state.after_draw(state.turn)
                self._moved(who, f"drew a card from {source}")
                self._begin()
                return Verdict("accepted", f"{who} drew a card from {source}", seq=seq)
        return Verdict("refused", f"{event.event} does not apply now ({self.phase}, {who} to "
                       "move)", seq=seq)

    # ------------------------------------------------------------------------ protocols
    def _start(self, purpose: str, factory: Callable[[], Protocol[Any]], areas: dict[str, int],
               names: dict[str, str]) -> None:
        self.purpose = purpose
        self.removed = []
        self.driver = ProtocolDriver(factory, self.helper_deck, areas, names)
        self.phase = PHASE_PROTOCOL
        self._instruct_step()

    def _instruct_step(self, prefix: str = "") -> None:
        driver = self.driver
        assert driver is not None
        if self.notice:
            prefix = f"{self.notice} {prefix}"
            self.notice = ""
        self.instruction = driver.instruction(self.turn, self._who(), prefix, discard=self.shown,
                                              hands=self._hands_expected(driver.areas_after()))

    def _order_from(self, seat: int) -> list[int]:
        n = len(self.names)
        return [(seat + j) % n for j in range(n)]

    def _start_selection(self, seat: int) -> None:
        """The card selection protocol for the virtual player at ``seat``: its hand is group 1,
        then every other hand clockwise, then the boneyard (Muggins)."""
        state = self.game
        assert state is not None and not isinstance(state, OldMaidState)
        order = self._order_from(seat)
        sizes = state.sizes() if isinstance(state, HeartsState) else state.sizes
        groups = [Group("P1" if j == 0 else f"P{j + 1}", sizes[s]) for j, s in enumerate(order)]
        names = {g.name: self.names[s] for g, s in zip(groups, order, strict=True)}
        if isinstance(state, SevensState):
            remaining = Counter(sevens_deck()) - Counter(state.table.played())
            valid: Callable[[Card], bool] = state.table.valid
        elif isinstance(state, HeartsState):
            remaining = Counter(hearts_deck()) - Counter(state.played)
            valid = state.valid
        else:
            remaining = Counter(domino_set()) - Counter(state.line)
            valid = state.valid
            if state.boneyard:
                groups.append(Group("boneyard", state.boneyard))
                names["boneyard"] = "the boneyard"
        groups = [g for g in groups if g.size or g.name == "P1"]
        for i, g in enumerate(groups, start=1):
            names[f"group{i}"] = names[g.name]
        original = isinstance(state, HeartsState)
        name = f"{self.game_name} card selection" + (" (original lottery)" if original else "")

        def factory() -> Protocol[Any]:
            return card_selection(groups, remaining, valid, name=name, original=original)

        self._start("select", factory, {g.name: g.size for g in groups}, names)

    def _begin_old_maid(self, state: OldMaidState) -> None:
        if state.phase == "over":
            self._game_over()
            return
        if state.to_remove:
            seat = self._next_remover()
            if self.virtual[seat]:
                self._start_removal(seat)
                return
            self.phase = PHASE_LAY_DOWN
            self._say("Lay your pairs face up in the side area, one pair per column (or pass if "
                      "you hold none).", reveal="pairs of one rank, one per side column")
            return
        seat, source = state.turn, state.next_in_game(state.turn)
        self.phase = PHASE_DRAW
        if self.virtual[seat]:
            how = (f"{self.names[source]} shuffles their hand face down; take one card at random "
                   if not self.virtual[source] else
                   f"shuffle {self.names[source]}'s hand face down, take one card at random ")
            self._say(f"{how}into {self.names[seat]}'s hand, unseen; say 'drew'.")
        else:
            self._say(f"Draw one card from {self.names[source]}'s hand; say 'drew'.")

    def _next_remover(self) -> int:
        """Humans lay down their pairs first, then each virtual player runs the protocol."""
        state = self.game
        assert isinstance(state, OldMaidState)
        return min(state.to_remove, key=lambda i: (self.virtual[i], i))

    def _start_removal(self, seat: int) -> None:
        state = self.game
        assert isinstance(state, OldMaidState)
        order = self._order_from(seat)
        sizes = [state.sizes[s] for s in order]
        names = {f"P{j + 1}": self.names[s] for j, s in enumerate(order)}
        in_play = Counter(state.in_play)

        def factory() -> Protocol[Any]:
            return old_maid_removal(sizes, in_play)

        self._start("remove", factory, {f"P{j + 1}": n for j, n in enumerate(sizes)}, names)

    def _protocol_view(self, view: View) -> Verdict:
        driver = self.driver
        assert driver is not None
        step = driver.step
        verdict = driver.judge(view, self.shown, self._hand_problems(view, driver.areas_after()))
        if verdict.ok:
            sent = driver.history[-1]
            if sent is not None and step.protocol == REMOVAL and step.number == "6g" \
                    and step.expect is not None and step.expect.words is not None:
                # the pairs just opened leave the game
                self.removed += [card for t in sent.tokens[0]
                                 if isinstance(card := VOCAB.item(int(t)), Card)]
            self._after_step()
        return verdict

    def _after_step(self) -> None:
        driver = self.driver
        assert driver is not None
        if driver.done:
            self._finish_protocol()
        else:
            self._instruct_step()

    def _protocol_event(self, event: Event) -> Verdict:
        driver = self.driver
        assert driver is not None
        seq = event.seq
        if event.event == "shuffle_done":
            if driver.blind != "shuffle":
                return Verdict("refused", f"no shuffle is in progress: the current step is "
                               f"{driver.step.title}", seq=seq)
            title = driver.step.title
            self.sure.clear()
            driver.shuffle_done()
            self._after_step()
            return Verdict("accepted", f"{title}: shuffle done", seq=seq)
        if event.event == "step_undone":
            if not driver.undo():
                return Verdict("refused", "nothing to undo: this is the protocol's first step",
                               seq=seq)
            self._instruct_step(prefix="Undone. ")
            return Verdict("accepted", "back one step", seq=seq)
        if event.event == "abort_turn":
            self.notice = "Turn aborted: put every card back where it came from, then start again."
            self._begin(again=True)
            return Verdict("accepted", "protocol restarted: put every card back where it "
                           "came from first", seq=seq)
        return Verdict("refused", f"{event.event} does not apply during a protocol", seq=seq)

    def _finish_protocol(self) -> None:
        driver = self.driver
        assert driver is not None
        state = self.game
        if isinstance(state, OldMaidState):
            self.game = state.after_removal(self._next_remover(), self.removed)
            self._begin()
            return
        assert state is not None
        seat = state.turn
        if driver.areas["selected"]:
            self.phase = PHASE_SELECTED
            self._moved(self.names[seat], "selected a card")
            self._say(f"Turn the selected card face up and play it for {self.names[seat]}.",
                      discard=REVEAL)
            return
        if isinstance(state, DominoState) and state.called is None and state.boneyard:
            self.phase = PHASE_VIRTUAL_DRAW
            self._say(f"{self.names[seat]} has no tile that fits: draw one from the boneyard "
                      "into its hand, face down, unseen; say 'drew'.")
            return
        assert isinstance(state, SevensState | DominoState)
        self.game = state.after_pass(seat)
        self._begin()

    # --------------------------------------------------------------------------- Old Maid
    def _lay_down(self, view: View) -> Verdict:
        state = self.game
        assert isinstance(state, OldMaidState)
        seat = self._next_remover()
        if view.discard.code is not None:
            return self._deviation(view, f"{view.discard.code} appeared on the table; in Old "
                                   "Maid pairs are laid in the side area", [Problem(
                                       "discard: expected nothing", zone="discard",
                                       saw=view.discard.code)], "take it back")
        columns = [[c.code for c in col if c.code is not None] for col in view.side]
        columns = [c for c in columns if c]
        if not columns:
            return Verdict("accepted", "no change", seq=view.seq)
        problems = [Problem(f"side column {i}: a pair is two face-up cards, saw "
                            f"{' '.join(map(str, col))}", zone="side", column=i,
                            saw=" ".join(map(str, col)))
                    for i, col in enumerate(columns, start=1)
                    if len(col) != 2 or BACK in col or parse_card(col[0]).rank
                    != parse_card(col[1]).rank]
        if problems:
            return self._deviation(view, f"{self.names[seat]} laid down cards that are not "
                                   "pairs", problems, "take back the cards that are not pairs")
        cards = [parse_card(c) for col in columns for c in col]
        self.game = state.after_removal(seat, cards)
        self._moved(self.names[seat], "laid down " + " ".join(map(str, cards)))
        self._begin()
        return Verdict("accepted", f"{self.names[seat]} laid down "
                       + " ".join(map(str, cards)), seq=view.seq)
