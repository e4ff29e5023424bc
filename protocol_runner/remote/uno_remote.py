"""UNO between devices far apart: the rules of :mod:`protocol_runner.games.uno` on the shared pack.

The rules engine keeps the public game (hand sizes, discard pile, turn); the encrypted pack keeps
the cards. A :class:`RemoteUno` referees every log entry: an entry the rules forbid is refused
like a malformed one. What follows from the rules is an *obligation* that the device concerned
fulfils by itself (:meth:`RemoteUno.next_entry`): throwing the die for who starts, shuffling and
dealing seven cards each, turning the first card (a black one goes back and is reshuffled),
drawing for +2/+4, refilling the pack from the discard pile, and at the end putting the hands
back, redrawing one card each and revealing keys for the audit. Only the player to move chooses:
play a card (revealed with its key), draw, or pass after drawing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocol_runner.cards import Card, uno_deck
from protocol_runner.games import uno
from protocol_runner.remote.audit import AuditReport, audit
from protocol_runner.remote.protocol import Device, Entry, ProtocolError, PublicTable
from protocol_runner.remote.scheme import Group

DECK, DIE = "deck", "die"
DIE_FACES = ("1", "2", "3", "4", "5", "6")
HAND = 7


@dataclass(frozen=True)
class Duty:
    """An entry the rules require now from ``device``; ``kind`` and details pin it down."""

    device: int
    kind: str
    details: dict[str, Any]


class RemoteUno:
    """One device's view of a remote UNO game: its :class:`Device` plus the public game state."""

    def __init__(self, group: Group, devices: int, index: int,
                 journal: dict[int, dict[str, Any]] | None = None) -> None:
        self.device = Device(group, devices, index, self._referee, journal)
        self.n = devices
        self.die: int | None = None
        self.state: uno.UnoState | None = None
        self.discard: list[int] = []  # card numbers of the discard pile, bottom first
        self.black_first: list[int] = []  # black first cards waiting to go back
        self.returned: set[int] = set()  # devices that put their hand back after the game
        self.redrawn: set[int] = set()
        self.report: AuditReport | None = None

    # ----- public state ------------------------------------------------------------------------
    @property
    def phase(self) -> str:
        if self.die is None:
            return "die"
        if self.state is None or not self.discard:
            return "deal"
        if self.state.winner is None:
            return "play"
        if len(self.device.audited) < self.n:
            return "end"
        return "done"

    def _held(self, device: int) -> list[int]:
        t = self.device
        return [s for s in t.hands[device] if t.slot_pack[s] == DECK]

    def duty(self) -> Duty | None:
        """What the rules require next (None: the player to move chooses, or the game is done)."""
        t = self.device
        if t.op is not None:
            return None
        if self.die is None:
            if DIE not in t.packs:
                return Duty(0, "new_pack", {"pack": DIE, "cards": list(DIE_FACES)})
            if not t.hands[0]:
                return Duty(0, "draw", {"pack": DIE, "count": 1})
            return Duty(0, "reveal", {"slot": t.hands[0][0]})
        if DECK not in t.packs:
            return Duty(0, "new_pack", {"pack": DECK, "cards": [c.code for c in uno_deck()]})
        assert self.state is not None
        if self.black_first or len(self.discard) > len(self.state.discard):
            back = self.black_first or self.discard[:-1]
            return Duty(0, "put_back", {"pack": DECK, "open": list(back)})
        if self.state.winner is None:
            for seat in range(self.n):
                missing = self.state.hand_sizes[seat] - len(self._held(seat))
                if missing > 0:
                    return Duty(seat, "draw", {"pack": DECK, "count": missing})
            if not self.discard:
                if len(self._held(0)) == HAND:
                    return Duty(0, "draw", {"pack": DECK, "count": 1})
                return Duty(0, "reveal", {"slot": self._held(0)[-1], "first": True})
            return None
        for seat in range(self.n):
            if not self.redrawn and seat not in self.returned and self._held(seat):
                return Duty(seat, "put_back", {"pack": DECK, "slots": self._held(seat)})
        for seat in range(self.n):
            if seat not in self.redrawn:
                return Duty(seat, "draw", {"pack": DECK, "count": 1})
        for seat in range(self.n):
            if seat not in t.audited:
                return Duty(seat, "audit", {})
        return None

    def _matches(self, duty: Duty, entry: Entry) -> bool:
        if entry.sender != duty.device or entry.kind != duty.kind:
            return False
        body, want = entry.body, duty.details
        if duty.kind == "put_back":
            slots = sorted(item.get("slot") for item in body.get("hidden", [])
                           if isinstance(item, dict))
            return (body.get("pack") == want["pack"] and slots == sorted(want.get("slots", []))
                    and sorted(body.get("open", [])) == sorted(want.get("open", [])))
        if duty.kind == "reveal":
            return body.get("slot") == want["slot"] and bool(body.get("first")) == bool(
                want.get("first"))
        return all(body.get(k) == v for k, v in want.items())

    # ----- the referee ---------------------------------------------------------------------------
    def _referee(self, table: PublicTable, entry: Entry,
                 info: dict[str, Any]) -> Callable[[], None]:
        if entry.kind in ("rekey", "mix", "lock", "strip"):
            return lambda: None
        duty = self.duty()
        if duty is not None:
            if not self._matches(duty, entry):
                raise ProtocolError(f"the rules want {duty.kind} {duty.details} from device "
                                    f"{duty.device}, not {entry.kind} from device {entry.sender}")
            return self._after_duty(duty, entry, info)
        if self.state is None or self.state.winner is not None:
            raise ProtocolError(f"nothing more may happen in this game ({entry.kind} refused)")
        if entry.sender != self.state.turn:
            raise ProtocolError(f"it is device {self.state.turn}'s turn, not device "
                                f"{entry.sender}'s")
        if entry.kind == "reveal":
            card = Card(info["card"])
            colour = entry.body.get("colour")
            try:
                after = uno.play(self.state, card, colour)
            except uno.UnoRuleError as exc:
                raise ProtocolError(str(exc)) from None

            def played() -> None:
                self.state = after
                self.discard.append(info["number"])

            return played
        move = entry.body.get("move") if entry.kind == "game" else None
        try:
            if move == "draw":
                after = uno.draw_for_turn(self.state)
            elif move == "pass":
                after = uno.pass_turn(self.state)
            else:
                raise ProtocolError(f"the player to move may play, draw or pass, not {entry.kind}")
        except uno.UnoRuleError as exc:
            raise ProtocolError(str(exc)) from None

        def moved() -> None:
            self.state = after

        return moved

    def _after_duty(self, duty: Duty, entry: Entry, info: dict[str, Any]) -> Callable[[], None]:
        state = self.state
        if duty.kind == "reveal" and info["pack"] == DIE:
            def thrown() -> None:
                self.die = int(info["card"])
                seats = tuple(uno.Seat(f"player {i + 1}", False) for i in range(self.n))
                self.state = uno.new_game(seats, start=(self.die - 1) % self.n, hand_size=HAND)
            return thrown
        if duty.kind == "reveal":  # the first card of the discard pile
            card = Card(info["card"])
            assert state is not None
            if card.is_black:
                return lambda: self.black_first.append(info["number"])
            after = uno.turn_first_card(state, card)

            def turned() -> None:
                self.state = after
                self.discard.append(info["number"])
            return turned
        if duty.kind == "put_back" and duty.details.get("open"):
            def refilled() -> None:
                if self.black_first:
                    self.black_first.clear()
                else:
                    del self.discard[:-1]
            return refilled
        if duty.kind == "put_back":
            return lambda: self.returned.add(entry.sender)
        if duty.kind == "draw" and state is not None and state.winner is not None:
            return lambda: self.redrawn.add(entry.sender)
        if duty.kind == "audit" and len(self.device.audited) + 1 == self.n:
            return self._run_audit
        return lambda: None

    def _run_audit(self) -> None:
        t = self.device
        self.report = audit(t.group, t.devices, t.log, trusted=t.index)

    # ----- acting ----------------------------------------------------------------------------
    def apply(self, entry: Entry) -> None:
        self.device.apply(entry)

    def next_entry(self) -> Entry | None:
        """The entry this device must send now by itself (a pass or a duty), if any."""
        t = self.device
        if t.op is not None:
            return t.next_pass()
        duty = self.duty()
        if duty is None or duty.device != t.index:
            return None
        d = duty.details
        if duty.kind == "new_pack":
            return t.new_pack(d["pack"], d["cards"])
        if duty.kind == "draw":
            return t.draw(d["pack"], d["count"])
        if duty.kind == "reveal":
            return t.reveal(d["slot"], first=True) if d.get("first") else t.reveal(d["slot"])
        if duty.kind == "put_back":
            return t.put_back(d["pack"], d.get("slots", ()), d.get("open", ()))
        return t.audit_entry()

    def my_turn(self) -> bool:
        return (self.phase == "play" and self.duty() is None and self.device.op is None
                and self.state is not None and self.state.turn == self.device.index)

    def play(self, slot: int, colour: str | None = None) -> Entry:
        """Play the card in ``slot`` (``colour`` for W and +4): a reveal the rules referee."""
        extra = {"colour": colour} if colour else {}
        return self.device.reveal(slot, **extra)

    def draw(self) -> Entry:
        return self.device.game(move="draw")

    def pass_turn(self) -> Entry:
        return self.device.game(move="pass")

    def choose(self) -> Entry:
        """A simple automatic player: the first playable card, else draw, else pass."""
        assert self.state is not None
        hand = self.device.hand(DECK)
        colours = Counter(Card(c).colour for _, c in hand if not Card(c).is_black)
        colour = colours.most_common(1)[0][0] if colours else "R"
        options = [(s, Card(c)) for s, c in hand if self.state.playable(Card(c))]
        if self.state.drawn:
            options = [o for o in options if o[0] == self.device.hands[self.device.index][-1]]
        if options:
            slot, card = options[0]
            return self.play(slot, colour if card.is_black else None)
        return self.pass_turn() if self.state.drawn else self.draw()

    # ----- what a page or a terminal shows ------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """This device's own hand and the public game, as JSON (the dashboard's feed)."""
        t = self.device
        hand = []
        if DECK in t.packs:
            for slot, code in t.hand(DECK):
                playable = (self.my_turn() and self.state is not None
                            and self.state.playable(Card(code)))
                hand.append({"slot": slot, "card": code, "playable": playable})
        duty = self.duty()
        return {
            "me": t.index,
            "devices": self.n,
            "phase": self.phase,
            "die": self.die,
            "hand": hand,
            "game": uno.state_to_json(self.state) if self.state else None,
            "pack_size": len(t.packs[DECK].slots) if DECK in t.packs else None,
            "my_turn": self.my_turn(),
            "waiting_for": (None if t.op is None and duty is None else
                            f"{t.op.steps[0][0]} from device {t.op.steps[0][1]}" if t.op else
                            f"{duty.kind} from device {duty.device}" if duty else None),
            "log_length": len(t.log),
            "audit": self.report.to_json() if self.report else None,
        }
