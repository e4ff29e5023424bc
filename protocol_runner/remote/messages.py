"""Log entries on the wire: versioned, schema-checked and authenticated by the join code.

Each joining seat has its own join code; the host and that seat derive the seat's MAC key from
it and the table id (PBKDF2-SHA256), so only someone given the code can add to the log in that
seat's name, and an entry cannot be moved to another table. The host relays every entry to each
reader with a MAC under the reader's key. The MAC covers the entry's log index, so a replayed or
reordered entry fails the index check (a replay) or its MAC (a forged index). Each body is
validated against the schema of its kind before the protocol even looks at it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from protocol_runner.remote.protocol import Entry

VERSION = 1
Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{1,1024}$")]
Name = Annotated[str, Field(min_length=1, max_length=40)]


class MessageError(ValueError):
    """A message that is not a well-formed, authentic entry of this table."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewPackBody(_Body):
    pack: Name
    cards: list[Name] = Field(min_length=2, max_length=1000)


class DrawBody(_Body):
    pack: Name
    count: int = Field(ge=1, le=1000)


class PassBody(_Body):
    values: list[Hex] = Field(min_length=1, max_length=1000)


class RevealBody(_Body):
    slot: int = Field(ge=0)
    card: int = Field(ge=0)
    key: Hex
    colour: Literal["R", "Y", "G", "B"] | None = None
    first: bool | None = None


class HiddenItem(_Body):
    slot: int = Field(ge=0)
    value: Hex


class PutBackBody(_Body):
    pack: Name
    hidden: list[HiddenItem] = Field(default_factory=list, max_length=1000)
    open: list[Annotated[int, Field(ge=0)]] = Field(default_factory=list, max_length=1000)


class GameBody(_Body):
    move: Literal["draw", "pass"]


class PassReveal(_Body):
    perm: list[int] | None
    exps: list[Hex]


class HiddenReveal(_Body):
    card: int = Field(ge=0)
    key: Hex


class AuditBody(_Body):
    passes: dict[str, PassReveal]
    hidden: dict[str, list[HiddenReveal]]


BODIES: dict[str, type[_Body]] = {
    "new_pack": NewPackBody, "draw": DrawBody, "rekey": PassBody, "mix": PassBody,
    "lock": PassBody, "strip": PassBody, "reveal": RevealBody, "put_back": PutBackBody,
    "game": GameBody, "audit": AuditBody,
}


class Envelope(BaseModel):
    """One entry as sent: the protocol version, the table, the entry, and its MAC."""

    model_config = ConfigDict(extra="forbid")
    v: Literal[1]
    table: Annotated[str, Field(pattern=r"^[0-9a-f]{16,64}$")]
    index: int = Field(ge=0)
    sender: int = Field(ge=0, le=15)
    kind: Literal["new_pack", "draw", "rekey", "mix", "lock", "strip", "reveal", "put_back",
                  "game", "audit"]
    body: dict[str, Any]
    mac: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


def derive_key(code: str, table: str) -> bytes:
    """The MAC key both devices compute from the join code (never sent) and the table id."""
    return hashlib.pbkdf2_hmac("sha256", code.encode(), f"cardtable-remote/{table}".encode(),
                               100_000)


def _mac(key: bytes, table: str, index: int, sender: int, kind: str, body: dict[str, Any]) -> str:
    canonical = json.dumps({"v": VERSION, "table": table, "index": index, "sender": sender,
                            "kind": kind, "body": body}, sort_keys=True, separators=(",", ":"))
    return hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()


def seal(entry: Entry, table: str, key: bytes) -> dict[str, Any]:
    """The JSON envelope of ``entry`` for this table."""
    return {"v": VERSION, "table": table, "index": entry.index, "sender": entry.sender,
            "kind": entry.kind, "body": entry.body,
            "mac": _mac(key, table, entry.index, entry.sender, entry.kind, entry.body)}


def join_mac(key: bytes, table: str, seat: int) -> str:
    return _mac(key, table, -1, seat, "join", {})


def relay_mac(key: bytes, envelope: dict[str, Any]) -> str:
    """The host's MAC over an envelope it relays to one reader, under that reader's key."""
    canonical = json.dumps(envelope, sort_keys=True, separators=(",", ":"))
    return hmac.new(key, b"relay:" + canonical.encode(), hashlib.sha256).hexdigest()


def open_envelope(data: object, table: str, key: bytes | None) -> Entry:
    """Validate and authenticate an envelope; raise :class:`MessageError` saying what is wrong.

    ``key`` is the sender's MAC key; None when the sender's key is not ours to know (another
    joiner's entry, relayed by the host, whose relay MAC vouches for it).
    """
    try:
        env = Envelope.model_validate(data)
    except ValidationError as exc:
        if isinstance(data, dict) and data.get("v") not in (None, VERSION):
            raise MessageError(f"protocol version {data.get('v')!r} is not {VERSION}; "
                               "update cardtable on both machines") from None
        raise MessageError(f"malformed message: {exc.errors()[0]['msg']}") from None
    if env.table != table:
        raise MessageError("the message belongs to another table")
    if key is not None and not hmac.compare_digest(
            _mac(key, table, env.index, env.sender, env.kind, env.body), env.mac):
        raise MessageError("the message's MAC is wrong: tampered with, or a wrong join code")
    try:
        BODIES[env.kind].model_validate(env.body)
    except ValidationError as exc:
        raise MessageError(f"malformed {env.kind} body: {exc.errors()[0]['msg']}") from None
    return Entry(env.index, env.sender, env.kind, env.body)
