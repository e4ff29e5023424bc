"""The shared encrypted pack: every device applies the same log of entries, in the same order.

The patent's two-device exchange, generalised to ``n`` devices and arranged so that dealing
touches each card a few times per device, not per draw (``NOTES.md`` items 12–13):

* **new pack** — the face values (encoded card numbers) are public. Each device in turn permutes
  the pack and raises it to a fresh key (*mix*); the last one uses a fresh key per card. Then every
  other device strips its mixing key and puts on a fresh key per card (*lock*). Afterwards every
  device holds its own key for every slot, and nobody knows which card lies in which slot.
* **draw** — the drawer names ``count`` slots from the top; every other device strips its layer
  from those slots only (*strip*); only the drawer can take off the last layer.
* **reveal** — the owner of a slot publishes the card and its key for that slot; everybody checks
  ``encode(card)^key`` against the value they saw, so a played card is proven on the spot.
* **put back** — cards go back hidden (``encode(card)^a`` under a fresh ``a``) or face up; every
  device then swaps its old keys for a fresh round key in place (*rekey*), and the pack is mixed and
  locked again, so nobody, not even the returner, knows where a returned card lies.
* **audit** — at the end every device publishes every exponent and permutation it used;
  :mod:`protocol_runner.remote.audit` replays the whole log and names whoever cheated.

:class:`PublicTable` is what an observer knows; :class:`Device` adds one device's secrets. Both
are pure: entries in, state out, no I/O. An entry that breaks the protocol raises
:class:`ProtocolError` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from protocol_runner.remote.scheme import Group, GroupError, random_permutation

CRYPTO_KINDS = ("new_pack", "draw", "rekey", "mix", "lock", "strip", "reveal", "put_back",
                "game", "audit")
PASS_KINDS = ("rekey", "mix", "lock", "strip")


class ProtocolError(ValueError):
    """An entry the protocol does not allow here: wrong turn, malformed, a value outside the group.

    The entry is rejected and the table is unchanged.
    """


class CheatDetected(ProtocolError):
    """An entry that only a cheating (or broken) device sends, e.g. a strip that decrypts to no
    card of the pack, or a card shown twice."""


@dataclass(frozen=True)
class Entry:
    """One line of the public log: ``index`` is its position, so a replay or gap cannot apply."""

    index: int
    sender: int
    kind: str
    body: dict[str, Any]


@dataclass
class Pack:
    """A named pack: the card codes by physical number, its face-down slots, its face-up cards."""

    cards: tuple[str, ...]
    slots: list[int] = field(default_factory=list)
    faceup: list[int] = field(default_factory=list)


@dataclass
class Op:
    """A multi-entry operation under way: who must send the next pass, and the values so far.

    ``items`` says where each input of a shuffle came from: ``("slot", id)`` (a slot of the pack),
    ``("hidden", device, number_or_-1)`` (a card put back face down) or ``("open", number)``.
    """

    kind: str  # "shuffle" or "draw"
    pack: str
    start: int
    steps: list[tuple[str, int]]
    values: list[int]
    items: list[tuple[Any, ...]] = field(default_factory=list)
    drawer: int = -1
    slots: list[int] = field(default_factory=list)


# A referee sees each entry before it takes effect; it raises to refuse it, or returns what to do
# once the crypto side has committed. The UNO game plugs in here.
Referee = Callable[["PublicTable", Entry, dict[str, Any]], Callable[[], None]]


def _hex(value: int) -> str:
    return format(value, "x")


def _parse_hex(text: object, what: str) -> int:
    if not isinstance(text, str) or not 0 < len(text) <= 2048 or text.startswith(("-", "+")):
        raise ProtocolError(f"{what} is not a hexadecimal number")
    try:
        return int(text, 16)
    except ValueError:
        raise ProtocolError(f"{what} is not a hexadecimal number") from None


def _int(body: dict[str, Any], key: str) -> int:
    value = body.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProtocolError(f"{key!r} must be an integer")
    return value


class PublicTable:
    """The state every device and any observer of the log agrees on."""

    def __init__(self, group: Group, devices: int, referee: Referee | None = None) -> None:
        if devices < 2:
            raise ValueError("the scheme needs at least two devices")
        self.group = group
        self.devices = devices
        self.referee = referee
        self.log: list[Entry] = []
        self.packs: dict[str, Pack] = {}
        self.slot_value: dict[int, int] = {}
        self.slot_pack: dict[int, str] = {}
        self.hands: list[list[int]] = [[] for _ in range(devices)]
        self.op: Op | None = None
        self.next_slot = 0
        self.audited: dict[int, dict[str, Any]] = {}
        self._codebooks: dict[str, dict[int, int]] = {}

    # ----- queries -------------------------------------------------------------------------
    def due(self) -> int | None:
        """The device that must send the next pass, or None when no operation is under way."""
        return self.op.steps[0][1] if self.op else None

    def codebook(self, pack: str) -> dict[int, int]:
        """Encoded value -> physical card number, for decrypting a drawn card."""
        book = self._codebooks.get(pack)
        if book is None:
            book = {self.group.encode(i): i for i in range(len(self.packs[pack].cards))}
            self._codebooks[pack] = book
        return book

    # ----- applying entries ------------------------------------------------------------------
    def apply(self, entry: Entry) -> None:
        """Check ``entry`` against the log and the protocol; apply it or raise, changing nothing."""
        if entry.index != len(self.log):
            raise ProtocolError(f"entry {entry.index} arrived when entry {len(self.log)} was "
                                "expected (a replay or a message out of order)")
        if not 0 <= entry.sender < self.devices:
            raise ProtocolError(f"no device {entry.sender} at this table")
        if entry.kind not in CRYPTO_KINDS:
            raise ProtocolError(f"unknown entry kind {entry.kind!r}")
        if entry.sender in self.audited and entry.kind != "audit":
            raise ProtocolError(f"device {entry.sender} has revealed its keys; the game is over")
        due = self.due()
        if entry.kind in PASS_KINDS:
            if self.op is None or (entry.kind, entry.sender) != self.op.steps[0]:
                want = f"{self.op.steps[0][0]} from device {due}" if self.op else "no pass"
                raise ProtocolError(f"{entry.kind} from device {entry.sender} out of turn "
                                    f"(the protocol wants {want})")
        elif self.op is not None:
            raise ProtocolError(f"{entry.kind} while a {self.op.kind} of {self.op.pack!r} is under "
                                f"way (waiting for {self.op.steps[0][0]} from device {due})")
        self._private_check_sender(entry)
        handler = getattr(self, f"_on_{entry.kind}")
        commit, info = handler(entry)
        after = self.referee(self, entry, info) if self.referee else None
        commit()
        self.log.append(entry)
        if after is not None:
            after()

    def _pack(self, body: dict[str, Any]) -> tuple[str, Pack]:
        name = body.get("pack")
        if not isinstance(name, str) or name not in self.packs:
            raise ProtocolError(f"no pack called {name!r}")
        return name, self.packs[name]

    def _values(self, body: dict[str, Any], count: int, what: str) -> list[int]:
        raw = body.get("values")
        if not isinstance(raw, list) or len(raw) != count:
            raise ProtocolError(f"{what} must carry {count} values")
        values = [_parse_hex(v, f"{what} value") for v in raw]
        try:
            for v in values:
                self.group.check(v)
        except GroupError as exc:
            raise ProtocolError(f"{what}: {exc}") from None
        if len(set(values)) != count:
            raise CheatDetected(f"{what} repeats a value (a duplicated card)")
        return values

    def _on_new_pack(self, entry: Entry) -> tuple[Callable[[], None], dict[str, Any]]:
        name, cards = entry.body.get("pack"), entry.body.get("cards")
        if not isinstance(name, str) or not name or name in self.packs:
            raise ProtocolError(f"a new pack needs a new name, not {name!r}")
        if (not isinstance(cards, list) or len(cards) < 2
                or not all(isinstance(c, str) and c for c in cards)):
            raise ProtocolError("a new pack needs a list of at least two card codes")
        values = [self.group.encode(i) for i in range(len(cards))]
        items = [("open", i) for i in range(len(cards))]

        def commit() -> None:
            self.packs[name] = Pack(tuple(cards))
            self.op = Op("shuffle", name, entry.index, self._shuffle_steps(rekey=False),
                         values, items)
            self._private_shuffle_start()

        return commit, {"pack": name, "cards": len(cards)}

    def _shuffle_steps(self, rekey: bool) -> list[tuple[str, int]]:
        order = range(self.devices)
        steps = [("rekey", d) for d in order] if rekey else []
        return steps + [("mix", d) for d in order] + [("lock", d) for d in order[:-1]]

    def _on_draw(self, entry: Entry) -> tuple[Callable[[], None], dict[str, Any]]:
        name, pack = self._pack(entry.body)
        count = _int(entry.body, "count")
        if not 1 <= count <= len(pack.slots):
            raise ProtocolError(f"cannot draw {count} from {name!r}, which holds {len(pack.slots)}")
        slots = pack.slots[:count]
        steps = [("strip", d) for d in range(self.devices) if d != entry.sender]

        def commit() -> None:
            del pack.slots[:count]
            self.op = Op("draw", name, entry.index, steps, [self.slot_value[s] for s in slots],
                         drawer=entry.sender, slots=slots)

        return commit, {"pack": name, "count": count, "drawer": entry.sender}

    def _on_reveal(self, entry: Entry) -> tuple[Callable[[], None], dict[str, Any]]:
        slot, number = _int(entry.body, "slot"), _int(entry.body, "card")
        key = _parse_hex(entry.body.get("key"), "reveal key")
        if slot not in self.hands[entry.sender]:
            raise CheatDetected(f"device {entry.sender} reveals slot {slot}, "
                                "which it does not hold")
        name = self.slot_pack[slot]
        pack = self.packs[name]
        if not 0 <= number < len(pack.cards):
            raise ProtocolError(f"card number {number} is not in pack {name!r}")
        if not 1 < key < self.group.q:
            raise ProtocolError("reveal key out of range")
        if self.group.power(self.group.encode(number), key) != self.slot_value[slot]:
            raise CheatDetected(f"device {entry.sender} shows {pack.cards[number]} for slot {slot},"
                                " but its key does not open that slot to that card")
        if number in pack.faceup:
            raise CheatDetected(f"{pack.cards[number]} (card {number}) is already face up")

        def commit() -> None:
            self.hands[entry.sender].remove(slot)
            pack.faceup.append(number)
            self._private_reveal(slot)

        return commit, {"pack": name, "slot": slot, "number": number, "card": pack.cards[number]}

    def _on_put_back(self, entry: Entry) -> tuple[Callable[[], None], dict[str, Any]]:
        name, pack = self._pack(entry.body)
        hidden, opened = entry.body.get("hidden", []), entry.body.get("open", [])
        if not isinstance(hidden, list) or not isinstance(opened, list) or not hidden + opened:
            raise ProtocolError("put_back needs 'hidden' and/or 'open' lists, not both empty")
        slots, values = [], []
        for item in hidden:
            if not isinstance(item, dict):
                raise ProtocolError("each hidden card is {slot, value}")
            slot = _int(item, "slot")
            if slot not in self.hands[entry.sender] or self.slot_pack[slot] != name:
                raise CheatDetected(f"device {entry.sender} puts back slot {slot} of {name!r}, "
                                    "which it does not hold")
            slots.append(slot)
            values.append(_parse_hex(item.get("value"), "returned value"))
        if len(set(slots)) != len(slots):
            raise CheatDetected("the same slot is put back twice")
        if values:
            self._values({"values": [_hex(v) for v in values]}, len(values), "put_back")
        if (not all(isinstance(n, int) and n in pack.faceup for n in opened)
                or len(set(opened)) != len(opened)):
            raise ProtocolError(f"open cards must be face-up cards of {name!r}, each once")
        items = ([("slot", s) for s in pack.slots]
                 + [("hidden", entry.sender, s) for s in slots] + [("open", n) for n in opened])
        start = ([self.slot_value[s] for s in pack.slots] + values
                 + [self.group.encode(n) for n in opened])

        def commit() -> None:
            for slot in slots:
                self.hands[entry.sender].remove(slot)
            for n in opened:
                pack.faceup.remove(n)
            self.op = Op("shuffle", name, entry.index, self._shuffle_steps(rekey=True), start,
                         items)
            self._private_shuffle_start()
            for slot in slots:
                self._private_forget(slot)

        return commit, {"pack": name, "hidden": len(slots), "open": list(opened)}

    def _on_game(self, entry: Entry) -> tuple[Callable[[], None], dict[str, Any]]:
        return (lambda: None), {}

    def _on_audit(self, entry: Entry) -> tuple[Callable[[], None], dict[str, Any]]:
        if entry.sender in self.audited:
            raise ProtocolError(f"device {entry.sender} has already revealed its keys")
        if not isinstance(entry.body.get("passes"), dict) or not isinstance(
                entry.body.get("hidden"), dict):
            raise ProtocolError("an audit entry carries 'passes' and 'hidden' maps")

        def commit() -> None:
            self.audited[entry.sender] = entry.body

        return commit, {}

    def _on_pass(self, entry: Entry) -> tuple[Callable[[], None], dict[str, Any]]:
        op = self.op
        assert op is not None
        values = self._values(entry.body, len(op.values), entry.kind)
        done = len(op.steps) == 1
        check = self._private_check_pass(entry, values, done)

        def commit() -> None:
            self._private_pass(entry, op, values)
            op.values = values
            op.steps.pop(0)
            if done:
                self._finish(op)
            if check is not None:
                check()

        return commit, {"done": done, "op": op.kind, "pack": op.pack}

    _on_rekey = _on_mix = _on_lock = _on_strip = _on_pass

    def _finish(self, op: Op) -> None:
        self.op = None
        if op.kind == "draw":
            for slot, value in zip(op.slots, op.values, strict=True):
                self.slot_value[slot] = value
                self.hands[op.drawer].append(slot)
            return
        pack = self.packs[op.pack]
        for item in op.items:
            if item[0] in ("slot", "hidden"):
                slot = item[1] if item[0] == "slot" else item[2]
                self.slot_value.pop(slot, None)
        ids = list(range(self.next_slot, self.next_slot + len(op.values)))
        self.next_slot += len(ids)
        pack.slots = ids
        for slot, value in zip(ids, op.values, strict=True):
            self.slot_value[slot] = value
            self.slot_pack[slot] = op.pack
        self._private_shuffle_done(op, ids)

    # ----- hooks for a device's secrets (an observer has none) -------------------------------
    def _private_check_sender(self, entry: Entry) -> None: ...

    def _private_shuffle_start(self) -> None: ...

    def _private_shuffle_done(self, op: Op, ids: list[int]) -> None: ...

    def _private_pass(self, entry: Entry, op: Op, values: list[int]) -> None: ...

    def _private_check_pass(self, entry: Entry, values: list[int],
                            done: bool) -> Callable[[], None] | None:
        return None

    def _private_reveal(self, slot: int) -> None: ...

    def _private_forget(self, slot: int) -> None: ...


class Device(PublicTable):
    """One device: the public table plus its keys, the cards it holds, and its journal.

    ``journal`` maps the log index of each entry this device sent to the random choices it made
    for it (permutations and keys). It is what the device must persist to resume after a crash
    (replaying the log with it rebuilds every secret), and what it reveals at the audit.
    """

    def __init__(self, group: Group, devices: int, index: int, referee: Referee | None = None,
                 journal: dict[int, dict[str, Any]] | None = None) -> None:
        super().__init__(group, devices, referee)
        if not 0 <= index < devices:
            raise ValueError(f"device index {index} outside 0..{devices - 1}")
        self.index = index
        self.journal: dict[int, dict[str, Any]] = dict(journal or {})
        self.keys: dict[int, int] = {}  # slot -> this device's exponent on its value
        self.cards: dict[int, int] = {}  # slot -> card number, for the slots this device holds
        self.records: dict[int, tuple[list[int] | None, list[int]]] = {}  # for the audit
        self._round = 1  # product of this device's round keys in the current shuffle
        self._old: list[int] = []  # this device's exponent on each input of the current shuffle
        self._final: list[int] = []  # this device's per-slot keys for the shuffle's outcome
        self._made: dict[int, dict[str, Any]] = {}
        self._returned: dict[int, list[int]] = {}  # put_back index -> card numbers returned

    # ----- what this device holds --------------------------------------------------------------
    def hand(self, pack: str) -> list[tuple[int, str]]:
        """(slot, card code) of every card this device holds from ``pack``, in drawing order."""
        return [(s, self.packs[pack].cards[self.cards[s]]) for s in self.hands[self.index]
                if self.slot_pack[s] == pack]

    # ----- making entries ---------------------------------------------------------------------
    def _entry(self, kind: str, body: dict[str, Any]) -> Entry:
        index = len(self.log)
        if self.journal.get(index, {}).get("kind") != kind:
            self.journal[index] = {"kind": kind}
        return Entry(index, self.index, kind, body)

    def new_pack(self, name: str, cards: Sequence[str]) -> Entry:
        return self._entry("new_pack", {"pack": name, "cards": list(cards)})

    def draw(self, pack: str, count: int) -> Entry:
        return self._entry("draw", {"pack": pack, "count": count})

    def reveal(self, slot: int, **extra: Any) -> Entry:
        if slot not in self.cards:
            raise ValueError(f"this device holds no slot {slot}")
        return self._entry("reveal", {"slot": slot, "card": self.cards[slot],
                                      "key": _hex(self.keys[slot]), **extra})

    def put_back(self, pack: str, slots: Sequence[int] = (), opened: Sequence[int] = ()) -> Entry:
        """Return ``slots`` face down (each under a fresh key) and face-up cards ``opened``."""
        for slot in slots:
            if slot not in self.cards:
                raise ValueError(f"this device holds no slot {slot}")
        index = len(self.log)
        old = self.journal.get(index, {})
        keys = (old["keys"] if old.get("kind") == "put_back" and len(old["keys"]) == len(slots)
                else [_hex(self.group.random_key()) for _ in slots])
        self.journal[index] = {"kind": "put_back", "keys": keys}
        hidden = [{"slot": s, "value": _hex(self.group.power(self.group.encode(self.cards[s]),
                                                              int(k, 16)))}
                  for s, k in zip(slots, keys, strict=True)]
        return self._entry("put_back", {"pack": pack, "hidden": hidden, "open": list(opened)})

    def game(self, **move: Any) -> Entry:
        return self._entry("game", move)

    def audit_entry(self) -> Entry:
        """Reveal every permutation and exponent this device used, and its face-down returns."""
        passes = {str(i): {"perm": perm, "exps": [_hex(x) for x in exps]}
                  for i, (perm, exps) in self.records.items()}
        hidden = {}
        for entry in self.log:
            if entry.sender == self.index and entry.kind == "put_back" and entry.body["hidden"]:
                keys = self.journal[entry.index]["keys"]
                hidden[str(entry.index)] = [
                    {"card": self._returned[entry.index][j], "key": keys[j]}
                    for j in range(len(keys))]
        return self._entry("audit", {"passes": passes, "hidden": hidden})

    def next_pass(self) -> Entry | None:
        """This device's pass if the protocol is waiting for it, else None."""
        if self.op is None or self.op.steps[0][1] != self.index:
            return None
        index = len(self.log)
        if index not in self._made:
            kind = self.op.steps[0][0]
            choices = self.journal.get(index)
            if not choices or choices.get("kind") != kind:
                choices = {"kind": kind, **self._choose(kind, len(self.op.values))}
            self.journal[index] = choices
            perm, exps = self._exponents(kind, choices)
            source = self.op.values if perm is None else [self.op.values[i] for i in perm]
            values = self.group.powers(source, exps)
            self._made[index] = {"values": [_hex(v) for v in values]}
        return Entry(index, self.index, self.op.steps[0][0], self._made[index])

    def _choose(self, kind: str, n: int) -> dict[str, Any]:
        g = self.group
        if kind == "rekey":
            return {"key": _hex(g.random_key())}
        if kind == "mix" and self.index != self.devices - 1:
            return {"perm": random_permutation(n), "key": _hex(g.random_key())}
        if kind == "mix":
            return {"perm": random_permutation(n), "keys": [_hex(g.random_key()) for _ in range(n)]}
        if kind == "lock":
            return {"keys": [_hex(g.random_key()) for _ in range(n)]}
        return {}  # strip: nothing random

    def _exponents(self, kind: str, choices: dict[str, Any]) -> tuple[list[int] | None, list[int]]:
        """The permutation (None: in place) and exponent per output position of this pass."""
        g, op = self.group, self.op
        assert op is not None
        n = len(op.values)
        if kind == "rekey":
            key = int(choices["key"], 16)
            return None, [g.mul(g.inverse(old), key) for old in self._old]
        if kind == "mix" and "key" in choices:
            return list(choices["perm"]), [int(choices["key"], 16)] * n
        if kind in ("mix", "lock"):
            undo = g.inverse(self._round)
            perm = list(choices["perm"]) if kind == "mix" else None
            return perm, [g.mul(undo, int(k, 16)) for k in choices["keys"]]
        return None, [g.inverse(self.keys[s]) for s in op.slots]  # strip

    # ----- private hooks ------------------------------------------------------------------------
    def _private_check_sender(self, entry: Entry) -> None:
        """Refuse an entry in this device's name that it never made (a forging relay)."""
        if entry.sender == self.index and self.journal.get(entry.index, {}).get(
                "kind") != entry.kind:
            raise CheatDetected(f"entry {entry.index} ({entry.kind}) claims to come from this "
                                "device, which did not send it")

    def _private_shuffle_start(self) -> None:
        op = self.op
        assert op is not None
        self._round, self._final = 1, []
        hidden = [it[2] for it in op.items if it[0] == "hidden" and it[1] == self.index]
        returned = iter(int(k, 16) for k in self.journal[op.start]["keys"]) if hidden else iter(())
        self._old = [self.keys[it[1]] if it[0] == "slot"
                     else next(returned) if it[0] == "hidden" and it[1] == self.index else 1
                     for it in op.items]
        if hidden:
            self._returned[op.start] = [self.cards.pop(slot) for slot in hidden]

    def _private_pass(self, entry: Entry, op: Op, values: list[int]) -> None:
        if entry.sender != self.index:
            return
        self._made.pop(entry.index, None)
        choices = self.journal[entry.index]
        perm, exps = self._exponents(entry.kind, choices)
        self.records[entry.index] = (perm, exps)
        g = self.group
        if entry.kind == "rekey":
            self._round = int(choices["key"], 16)
        elif entry.kind == "mix" and "key" in choices:
            self._round = g.mul(self._round, int(choices["key"], 16))
        elif entry.kind in ("mix", "lock"):
            self._final = [int(k, 16) for k in choices["keys"]]
        else:  # strip: this device's layer is gone from those slots
            for slot in op.slots:
                self.keys.pop(slot, None)

    def _private_check_pass(self, entry: Entry, values: list[int],
                            done: bool) -> Callable[[], None] | None:
        op = self.op
        assert op is not None
        if entry.sender == self.index:
            made = self._made.get(entry.index)
            if made is not None and made["values"] != entry.body["values"]:
                raise ProtocolError(f"entry {entry.index} is not the pass this device made")
        if not (done and op.kind == "draw" and op.drawer == self.index):
            return None
        book, cards = self.codebook(op.pack), []
        seen = set(self.cards.values()) | set(self.packs[op.pack].faceup)
        for slot, value in zip(op.slots, values, strict=True):
            number = book.get(self.group.power(value, self.group.inverse(self.keys[slot])))
            if number is None:
                raise CheatDetected(f"slot {slot} does not decrypt to a card of {op.pack!r}: "
                                    f"device {entry.sender} (or one before it) stripped with the "
                                    "wrong key")
            if number in seen or number in cards:
                raise CheatDetected(f"slot {slot} decrypts to {self.packs[op.pack].cards[number]} "
                                    f"(card {number}), which is already out: a duplicated card")
            cards.append(number)

        def keep() -> None:
            self.cards.update(zip(op.slots, cards, strict=True))

        return keep

    def _private_shuffle_done(self, op: Op, ids: list[int]) -> None:
        for item in op.items:
            if item[0] == "slot":
                self.keys.pop(item[1], None)
        self.keys.update(zip(ids, self._final, strict=True))

    def _private_reveal(self, slot: int) -> None:
        self.cards.pop(slot, None)
        self.keys.pop(slot, None)

    def _private_forget(self, slot: int) -> None:
        self.keys.pop(slot, None)
