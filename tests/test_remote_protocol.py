"""The shared pack between devices in one process: deal, draw, reveal, put back, die, refusals."""

from __future__ import annotations

import pytest

from protocol_runner.cards import uno_deck
from protocol_runner.remote.local import LocalTable
from protocol_runner.remote.protocol import CheatDetected, Device, Entry, ProtocolError
from protocol_runner.remote.scheme import small_group

UNO = [c.code for c in uno_deck()]


def _dealt(devices: int, hand: int = 7) -> LocalTable:
    table = LocalTable(small_group(), devices)
    table.post(table.devices[0].new_pack("deck", UNO))
    table.settle()
    for device in table.devices:
        table.post(device.draw("deck", hand))
        table.settle()
    return table


def _numbers(table: LocalTable) -> list[int]:
    return sorted(n for d in table.devices for n in d.cards.values())


@pytest.mark.parametrize("devices", [2, 3])
def test_every_card_ends_up_in_exactly_one_hand(devices: int) -> None:
    table = _dealt(devices)
    for d in table.devices:
        assert len(d.hand("deck")) == 7
    last = table.devices[-1]
    table.post(last.draw("deck", len(last.packs["deck"].slots)))
    table.settle()
    assert _numbers(table) == list(range(len(UNO)))
    assert all(d.packs["deck"].slots == [] for d in table.devices)


def test_cards_put_back_face_down_and_face_up_can_be_drawn_again() -> None:
    table = _dealt(2)
    d0, d1 = table.devices
    shown_slot, shown_code = d0.hand("deck")[0]
    table.post(d0.reveal(shown_slot))
    shown = d1.packs["deck"].faceup[0]
    assert UNO[shown] == shown_code
    returned = [slot for slot, _ in d1.hand("deck")[:3]]
    kept = {d1.cards[s] for s in d1.cards if s not in returned}
    table.post(d1.put_back("deck", returned, [shown]))
    table.settle()
    assert len(d1.hand("deck")) == 4 and {d1.cards[s] for s in d1.cards} == kept
    assert len(d0.packs["deck"].slots) == len(UNO) - 14 + 3 + 1
    table.post(d0.draw("deck", len(d0.packs["deck"].slots)))
    table.settle()
    assert _numbers(table) == list(range(len(UNO)))


def test_a_die_thrown_between_two_devices_shows_one_face() -> None:
    table = LocalTable(small_group(), 2)
    d0, d1 = table.devices
    table.post(d1.new_pack("die", ["1", "2", "3", "4", "5", "6"]))
    table.settle()
    table.post(d0.draw("die", 1))
    table.settle()
    table.post(d0.reveal(d0.hands[0][0]))
    face = d1.packs["die"].cards[d1.packs["die"].faceup[0]]
    assert face in {"1", "2", "3", "4", "5", "6"}


def _bad(entry: Entry, **change: object) -> Entry:
    fields = {"index": entry.index, "sender": entry.sender, "kind": entry.kind,
              "body": entry.body, **change}
    return Entry(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "message"),
    [({"index": 0}, "replay or a message out of order"),
     ({"index": 99}, "out of order"),
     ({"sender": 0}, "out of turn"),
     ({"sender": 7}, "no device 7"),
     ({"kind": "lock"}, "out of turn"),
     ({"kind": "shout"}, "unknown entry kind"),
     ({"body": {"values": ["1"]}}, "must carry"),
     ({"body": {"values": ["zz"] * len(UNO)}}, "hexadecimal")],
)
def test_entries_out_of_turn_or_malformed_are_refused_and_change_nothing(
        change: dict[str, object], message: str) -> None:
    table = LocalTable(small_group(), 2)
    d0, d1 = table.devices
    table.post(d0.new_pack("deck", UNO))
    table.post(d0.next_pass())  # device 0 mixed; device 1 must mix now
    honest = d1.next_pass()
    assert honest is not None
    with pytest.raises(ProtocolError, match=message):
        d0.apply(_bad(honest, **change))
    assert len(d0.log) == 2
    d0.apply(honest)  # the table still takes the right entry
    assert len(d0.log) == 3


def test_a_value_outside_the_subgroup_is_refused() -> None:
    table = LocalTable(small_group(), 2)
    d0, d1 = table.devices
    table.post(d0.new_pack("deck", UNO))
    honest = d0.next_pass()
    assert honest is not None
    values = list(honest.body["values"])
    values[5] = format(d0.group.p - 1, "x")  # -1 is a non-residue: it would leak through
    with pytest.raises(ProtocolError, match="not in the order-q subgroup"):
        d1.apply(_bad(honest, body={"values": values}))
    values[5] = values[4]
    with pytest.raises(CheatDetected, match="duplicated"):
        d1.apply(_bad(honest, body={"values": values}))


def test_a_card_shown_with_the_wrong_key_or_card_is_refused() -> None:
    table = _dealt(2)
    d0, d1 = table.devices
    slot = d1.hands[1][0]
    honest = d1.reveal(slot)
    liar = dict(honest.body, card=(honest.body["card"] + 1) % len(UNO))
    with pytest.raises(CheatDetected, match="does not open that slot"):
        d0.apply(_bad(honest, body=liar))
    with pytest.raises(CheatDetected, match="does not hold"):
        d1.apply(_bad(honest, sender=0))
    with pytest.raises(CheatDetected, match="did not send it"):
        d0.apply(_bad(honest, sender=0))
    table.post(honest)
    assert d0.packs["deck"].faceup == [honest.body["card"]]


def test_a_wrong_decryption_is_caught_by_the_drawer_at_once() -> None:
    table = _dealt(2)
    d0, d1 = table.devices
    table.post(d1.draw("deck", 2))
    honest = d0.next_pass()
    assert honest is not None and honest.kind == "strip"
    wrong = [format(d0.group.power(int(v, 16), 3), "x") for v in honest.body["values"]]
    with pytest.raises(CheatDetected, match="wrong key"):
        d1.apply(_bad(honest, body={"values": wrong}))
    assert len(d1.log) == len(d0.log)  # refused: the drawer still waits for a proper strip


def test_a_device_rebuilt_from_the_log_and_its_journal_holds_the_same_cards() -> None:
    table = _dealt(2)
    d0, d1 = table.devices
    table.post(d1.put_back("deck", [d1.hands[1][0]]))
    table.settle()
    rebuilt = Device(d1.group, 2, 1, journal=d1.journal)
    for entry in d1.log:
        rebuilt.apply(entry)
    assert rebuilt.cards == d1.cards and rebuilt.keys == d1.keys
    table.post(d0.draw("deck", 2))
    rebuilt.apply(d1.log[-1])
    honest = d1.next_pass()
    assert honest is not None
    assert rebuilt.next_pass() == honest  # the strip it owes is the same
