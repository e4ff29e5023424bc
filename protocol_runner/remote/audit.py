"""The end-of-game audit (``NOTES.md`` item 13): replay every device's work from the log.

At the end every device publishes, for each pass it sent, the permutation and the exponent it
applied to each value, and the card and key behind every card it put back face down. A value
has one discrete logarithm, so ``output[j] == input[perm[j]] ^ exps[j]`` can hold for the
revealed numbers only if the device really did that. Replaying the log then follows every card
from the public face values to where it is now and names each cheat:

* a pass whose outputs are not its inputs permuted and re-keyed: a **duplicated** card (an input
  used twice) or a **substituted** one (an output that is no input at all);
* a strip that does not take the stripper's layer off exactly: a **wrong decryption**;
* a face-down return that is not the card drawn into that slot: a **drawn card kept** while
  another goes back in its place;
* a reveal of a card other than the one in the slot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protocol_runner.remote.protocol import PASS_KINDS, Entry, ProtocolError, PublicTable
from protocol_runner.remote.scheme import Group


@dataclass(frozen=True)
class Cheat:
    device: int
    entry: int
    what: str

    def __str__(self) -> str:
        return f"device {self.device}, entry {self.entry}: {self.what}"


@dataclass
class AuditReport:
    findings: list[Cheat] = field(default_factory=list)
    passes_checked: int = 0
    values_checked: int = 0
    cards_followed: int = 0

    @property
    def clean(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        return {"clean": self.clean, "passes_checked": self.passes_checked,
                "values_checked": self.values_checked, "cards_followed": self.cards_followed,
                "findings": [{"device": c.device, "entry": c.entry, "what": c.what}
                             for c in self.findings]}


class _Replay:
    def __init__(self, group: Group, devices: int, reveals: dict[int, dict[str, Any]],
                 trusted: int | None) -> None:
        self.group, self.n, self.reveals, self.trusted = group, devices, reveals, trusted
        self.table = PublicTable(group, devices)
        # value -> (card number, each device's exponent on it); None: lost track after a cheat
        self.info: dict[int, tuple[int, tuple[int, ...]] | None] = {}
        self.slot_card: dict[int, int | None] = {}
        self.report = AuditReport()

    def flag(self, device: int, entry: int, what: str) -> None:
        self.report.findings.append(Cheat(device, entry, what))

    def revealed_pass(self, entry: Entry) -> tuple[list[int] | None, list[int]] | None:
        record = self.reveals.get(entry.sender, {}).get("passes", {}).get(str(entry.index))
        if not isinstance(record, dict):
            self.flag(entry.sender, entry.index, f"no keys revealed for its {entry.kind} pass")
            return None
        try:
            perm = record.get("perm")
            exps = [int(x, 16) for x in record["exps"]]
        except (KeyError, TypeError, ValueError):
            self.flag(entry.sender, entry.index, "malformed keys for its pass")
            return None
        return (list(perm) if perm is not None else None), exps

    def run(self, log: list[Entry]) -> AuditReport:
        for entry in log:
            op = self.table.op
            inputs = list(op.values) if op is not None else []
            try:
                self.table.apply(entry)
            except ProtocolError as exc:
                self.flag(entry.sender, entry.index, f"entry breaks the protocol: {exc}")
                break
            if entry.kind == "new_pack":
                assert self.table.op is not None
                for number, value in enumerate(self.table.op.values):
                    self.info[value] = (number, (1,) * self.n)
            elif entry.kind == "put_back":
                self.put_back(entry)
            elif entry.kind in PASS_KINDS:
                assert op is not None
                self.pass_(entry, op.kind, inputs, op)
                if self.table.op is None:
                    self.finished(entry, op)
            elif entry.kind == "reveal":
                slot, number = entry.body["slot"], entry.body["card"]
                if self.slot_card.get(slot, number) != number:
                    self.flag(entry.sender, entry.index, f"revealed card {number} for slot {slot}, "
                              f"which holds card {self.slot_card[slot]}")
        return self.report

    def pass_(self, entry: Entry, kind: str, inputs: list[int], op: Any) -> None:
        outputs = [int(v, 16) for v in entry.body["values"]]
        revealed = self.revealed_pass(entry)
        if revealed is None:
            for value in outputs:
                self.info[value] = None
            return
        perm, exps = revealed
        n = len(inputs)
        if perm is None:
            perm = list(range(n))
        elif entry.kind != "mix":
            self.flag(entry.sender, entry.index, f"a {entry.kind} pass may not permute")
        if len(perm) != n or len(exps) != n or sorted(perm) != list(range(n)):
            used = [i for i in set(perm) if perm.count(i) > 1]
            self.flag(entry.sender, entry.index,
                      f"duplicated card: its permutation uses input {used[0]} twice" if used
                      else "its revealed permutation/keys do not fit the pass")
            for value in outputs:
                self.info[value] = None
            return
        self.report.passes_checked += 1
        g = self.group
        for j, (source, exp) in enumerate(zip(perm, exps, strict=True)):
            if entry.sender != self.trusted:
                self.report.values_checked += 1
                if g.power(inputs[source], exp) != outputs[j]:
                    self.flag(entry.sender, entry.index, self.explain(inputs, outputs[j], exp,
                                                                      source, j))
                    self.info[outputs[j]] = None
                    continue
            known = self.info.get(inputs[source])
            if known is None:
                self.info[outputs[j]] = None
                continue
            number, layers = known
            layers = tuple(g.mul(x, exp) if d == entry.sender else x
                           for d, x in enumerate(layers))
            self.info[outputs[j]] = (number, layers)

    def explain(self, inputs: list[int], output: int, exp: int, claimed: int, j: int) -> str:
        g = self.group
        for i, value in enumerate(inputs):
            if i != claimed and g.power(value, exp) == output:
                return (f"duplicated card: output {j} is input {i} again, not input {claimed} "
                        "as its permutation claims")
        return (f"substituted card: output {j} is no input of the pass under the key it "
                "revealed")

    def finished(self, entry: Entry, op: Any) -> None:
        if op.kind == "draw":
            for slot, value in zip(op.slots, op.values, strict=True):
                known = self.info.get(value)
                if known is None:
                    self.slot_card[slot] = None
                    continue
                number, layers = known
                for device, layer in enumerate(layers):
                    if device != op.drawer and layer != 1:
                        self.flag(device, entry.index, f"wrong decryption: its layer is still on "
                                  f"slot {slot} drawn by device {op.drawer}")
                self.slot_card[slot] = number
                self.report.cards_followed += 1
            return
        for slot in self.table.packs[op.pack].slots:
            known = self.info.get(self.table.slot_value[slot])
            self.slot_card[slot] = None if known is None else known[0]

    def put_back(self, entry: Entry) -> None:
        g = self.group
        keys = self.reveals.get(entry.sender, {}).get("hidden", {}).get(str(entry.index))
        hidden = entry.body.get("hidden", [])
        for number in entry.body.get("open", []):
            self.info[g.encode(number)] = (number, (1,) * self.n)
        if not hidden:
            return
        if not isinstance(keys, list) or len(keys) != len(hidden):
            self.flag(entry.sender, entry.index, "no keys revealed for the cards it put back")
            return
        for item, secret in zip(hidden, keys, strict=True):
            value, slot = int(item["value"], 16), item["slot"]
            number, key = secret.get("card"), int(secret.get("key", "0"), 16)
            if not isinstance(number, int) or g.power(g.encode(number), key) != value:
                self.flag(entry.sender, entry.index, f"the card it put back for slot {slot} is not "
                          "what it revealed")
                self.info[value] = None
                continue
            held = self.slot_card.get(slot)
            if held is not None and held != number:
                self.flag(entry.sender, entry.index, f"kept a drawn card: it put back card "
                          f"{number} in place of card {held} drawn into slot {slot}")
            layers = tuple(key if d == entry.sender else 1 for d in range(self.n))
            self.info[value] = (number, layers)


def audit(group: Group, devices: int, log: list[Entry], trusted: int | None = None) -> AuditReport:
    """Replay ``log`` with the keys its ``audit`` entries reveal; list every cheat found.

    ``trusted`` (the auditing device itself) skips re-checking its own passes' arithmetic.
    """
    reveals = {e.sender: e.body for e in log if e.kind == "audit"}
    missing = [d for d in range(devices) if d not in reveals]
    replay = _Replay(group, devices, reveals, trusted)
    for device in missing:
        replay.flag(device, len(log), "did not reveal its keys")
    return replay.run(log)
