"""The main job: frames (or observation records) → vision → observations → runner, in one thread.

The pipeline owns the order of things. It reads a *timeline* (camera frames, video frames, and the
records a recording or a script holds: setup, operator events, views), paces it (real time, or as
fast as possible), and feeds the runner. Everything the dashboard shows comes from
:meth:`Pipeline.state`, a plain JSON snapshot, and every change is pushed through ``publish``.

Privacy (NOTES.md item 14): while the runner holds a blind window, frames are dropped before any
processing — not recognised, not drawn, not recorded. The page shows a blank panel instead.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from protocol_runner.cards import BACK, CardCodeError, parse_card, uno_faces
from protocol_runner.observations import (
    Event,
    ObservationError,
    Record,
    Setup,
    View,
    dumps,
    read_records,
)

log = logging.getLogger(__name__)

OPERATOR_EVENTS = {"shuffle_done": "shuffle_done", "undo": "step_undone",
                   "step_undone": "step_undone", "abort_turn": "abort_turn",
                   "drew": "drew", "pass": "pass"}
KEEP_OWN = 0.997
"""Confidence from which a covered card's own strip reading overrules the protocol's prior."""
FRAME_PUSH_INTERVAL = 1 / 12
"""Seconds between camera JPEGs pushed to the page: enough to look live, cheap on 2 cores."""


# ---- the timeline ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class FrameItem:
    """A camera image at ``t`` seconds into the source."""

    image: np.ndarray
    t: float
    index: int


@dataclass(frozen=True, slots=True)
class RecordItem:
    """An observation-format record (setup, view, event) at ``t`` seconds into the source."""

    record: Record
    t: float


Item = FrameItem | RecordItem


def records_timeline(path: str | Path, interval: float = 1.0) -> Iterator[RecordItem]:
    """A script of observation records; records without ``t`` come ``interval`` s apart."""
    t = 0.0
    for _, record in read_records(path):
        rt = getattr(record, "t", None)
        t = float(rt) if rt is not None else t + (interval if not isinstance(record, Setup) else 0)
        yield RecordItem(record, t)


def video_timeline(frames: Iterable[Any], fps: float,
                   records: Iterable[RecordItem] = ()) -> Iterator[Item]:
    """Frames of a video merged with the records of its recording, by time.

    A record at time ``t`` is fed before the first frame whose time is ≥ ``t``: an operator who
    pressed "shuffle done" at 12.0 s did so before the frame of 12.0 s was taken.
    """
    pending = sorted(records, key=lambda r: r.t)
    i = 0
    for frame in frames:
        t = frame.index / fps
        while i < len(pending) and pending[i].t <= t + 1e-9:
            yield pending[i]
            i += 1
        yield FrameItem(frame.image, t, frame.index)
    yield from pending[i:]


def live_timeline(frames: Iterable[Any]) -> Iterator[Item]:
    """A camera's frames timed from the first; closing it closes the source (the camera's
    reading thread stops and the capture is released)."""
    start = None
    try:
        for frame in frames:
            start = frame.timestamp if start is None else start
            yield FrameItem(frame.image, frame.timestamp - start, frame.index)
    finally:
        from vision.sources import close_source

        close_source(frames)


# ---- the two stages the pipeline drives --------------------------------------------------------

class Vision(Protocol):
    """Frames → committed views. ``cards`` are what to draw: dicts with zone, column, row, code,
    confidence and ``quad`` (4 image points)."""

    def process(self, image: np.ndarray, t: float) -> tuple[View | None, list[dict[str, Any]]]: ...

    def expect(self, hint: dict[str, Any] | None) -> None: ...

    def correct(self, zone: str, column: int, row: int, code: str) -> None: ...

    def reset(self) -> None: ...

    def assume(self, view: View) -> None: ...


class Game(Protocol):
    """The runner seen from the pipeline (see :mod:`protocol_runner.runner`)."""

    def feed(self, record: Record) -> Any: ...

    def state(self) -> dict[str, Any]: ...


@dataclass
class Recorder:
    """``--record DIR``: the video (never a blind-window frame) and the records, side by side.

    ``events.jsonl`` holds the setup and every operator event with ``t`` = the time in the saved
    video, so ``cardtable replay DIR`` puts each event back between the same two frames.
    """

    folder: Path
    fps: float
    writer: Any = None
    frames: int = 0
    _events: Any = None

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._events = open(self.folder / "events.jsonl", "a", encoding="utf-8")  # noqa: SIM115

    @property
    def t(self) -> float:
        return self.frames / self.fps

    def frame(self, image: np.ndarray) -> None:
        if self.writer is None:
            from vision.synth.video import VideoOut

            h, w = image.shape[:2]
            self.writer = VideoOut(self.folder / "video.mp4", self.fps, (w, h))
        self.writer.write(image)
        self.frames += 1

    def record(self, record: Record, blind: bool = False) -> None:
        """Keep a setup or an event; a view only when it was committed inside a blind window
        (a face-down move), whose frames are not kept: the replay feeds it from here."""
        data = record.to_json()
        if data.get("kind") != "view" or blind:
            data["t"] = round(self.t, 4)
            self._events.write(json.dumps(data, ensure_ascii=False) + "\n")
            self._events.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.__exit__(None, None, None)
        self._events.close()


# ---- the pipeline ------------------------------------------------------------------------------

@dataclass
class Pipeline:
    """Runs a timeline through vision and the runner in a background thread.

    ``make_game(setup)`` builds a runner for a setup (the page can start a new game);
    ``speed`` is 1.0 for real time, ``None`` for as fast as possible.

    WHY a replay never drops a frame, even behind the video's clock: a recording's events
    (the table's answers to what the page asked, a shuffle's end) were made against every one
    of its frames. A replay that dropped frames to keep up on a slow CPU committed other views,
    asked about other cards, and the recorded answers no longer fitted: on this 2-core machine
    the demo's virtual turn (frames of 0.6 s) went from 50 steps and no deviation to 13 steps
    and 59 deviations. A replay late by a few seconds reads what the table showed; a live camera
    (``speed`` None) reads each frame as it comes.
    """

    timeline: Iterable[Item]
    make_game: Callable[[Setup], Game]
    vision: Vision | None = None
    mode: str = "replay"
    source: str = ""
    speed: float | None = 1.0
    recorder: Recorder | None = None
    publish: Callable[[str | bytes], None] = lambda message: None
    game: Game | None = None
    setup_record: Setup | None = None

    frames_seen: int = 0
    frames_dropped: int = 0
    frames_processed: int = 0
    lag: float = 0.0
    """Seconds the replay is behind the video's clock now (real time only; 0 when it keeps up)."""
    lag_max: float = 0.0
    """The most it was behind: what a slow CPU cost the replay, as reading every frame."""
    finished: bool = False
    error: str | None = None
    last_notice: str | None = None
    last_verdict: dict[str, Any] | None = None
    timeline_log: list[dict[str, Any]] = field(default_factory=list)
    cards: list[dict[str, Any]] = field(default_factory=list)
    frame_size: tuple[int, int] = (1280, 720)
    t: float = 0.0
    started_at: float = 0.0
    commits: list[tuple[float, float, int]] = field(default_factory=list)
    """(video time, wall clock when its frame was read, state version after): bench-replay."""
    reading: View | None = None
    """The last view fed to the runner: what the camera (or the script) read."""
    _jpeg: bytes | None = None
    _was_blind: bool = False
    _last_push: float = 0.0
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    version: int = 0
    """Counts changes: a page drops a state older than the one it shows (an HTTP answer can
    arrive after a newer WebSocket push)."""

    # ---- running ---------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="cardtable-pipeline", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the timeline to end; ``True`` if it did."""
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def run(self) -> None:
        """Run in the calling thread (benchmarks, tests)."""
        self._run()

    def _run(self) -> None:
        started = self.started_at = time.perf_counter()
        try:
            for item in self.timeline:
                if self._stop.is_set():
                    break
                if self.speed:
                    delay = item.t / self.speed - (time.perf_counter() - started)
                    if delay > 0 and self._stop.wait(delay):
                        break
                    # behind the clock (a slow CPU): read the frame all the same (class doc)
                    self.lag = max(0.0, -delay)
                    self.lag_max = max(self.lag_max, self.lag)
                self.t = item.t
                if isinstance(item, RecordItem):
                    with self._lock:
                        self._feed(item.record)
                else:
                    self._frame(item)
        except (OSError, ValueError) as exc:
            self.error = f"the {self._what} stopped: {exc}"
        except Exception as exc:  # a defect, not the table's input: said, never silent
            log.exception("the %s stopped on an internal error", self._what)
            self.error = (f"the {self._what} stopped on an internal error ({type(exc).__name__}: "
                          f"{exc}); every step so far is in the game's journal: resume it "
                          "with `cardtable resume`")
        finally:
            self.finished = True
            from vision.sources import close_source

            close_source(self.timeline)  # a live source's camera thread stops, its capture freed
            if self.recorder is not None:
                self.recorder.close()
            self._changed()

    @property
    def _what(self) -> str:
        return "live table" if self.mode == "live" else self.mode

    def _frame(self, item: FrameItem) -> None:
        read_at = time.perf_counter()
        self.frames_seen += 1
        with self._lock:
            blind = self.blind
        if blind:
            # NOTES.md item 14: no recognition, no drawing, no recording of a shuffle.
            self.frames_dropped += 1
            self._jpeg = None
            self._was_blind = True
            return
        if self._was_blind:
            self._was_blind = False
            if self.vision is not None:
                self.vision.reset()
        if self.recorder is not None and not self._runner_state().get("blind_kind"):
            # a face-down move is a blind window too: looked at (its end is a still view of
            # backs), never kept
            self.recorder.frame(item.image)
        self.frame_size = (int(item.image.shape[1]), int(item.image.shape[0]))
        view, cards = (None, []) if self.vision is None else self.vision.process(item.image, item.t)
        self.frames_processed += 1
        self.cards = [_normalise_card(c, self.frame_size) for c in cards]
        with self._lock:
            if view is not None:
                if self.recorder is not None and self._runner_state().get("blind_kind"):
                    self.recorder.record(view, blind=True)
                self._feed(view, from_camera=True)
                self.commits.append((item.t, read_at, self.version))
        now = time.perf_counter()
        if view is not None or now - self._last_push >= FRAME_PUSH_INTERVAL:
            self._last_push = now
            self._jpeg = self._annotate(item.image, cards)
            self.publish(self._jpeg)

    # ---- feeding the runner ----------------------------------------------------------------

    def _feed(self, record: Record, from_camera: bool = False) -> dict[str, Any]:
        """Feed one record; every error the runner raises for bad input is shown, not fatal."""
        if isinstance(record, Setup):
            game = self.make_game(record)
            verdict = game.feed(record)
            if verdict is not None and not verdict.get("ok", True):
                raise ObservationError(verdict.get("text") or "the runner refused this setup")
            self.game, self.setup_record, self.last_verdict = game, record, verdict
            self.timeline_log.append({"text": f"new game: {_players_text(record)}", "ok": True})
            if self.recorder is not None:
                self.recorder.record(record)
            self._expect()
            self._changed()
            return {"ok": True, "message": "new game set up"}
        if self.game is None:
            raise ObservationError("no game is set up yet: start one from the page (New game…)")
        if self.recorder is not None and not from_camera:
            self.recorder.record(record)
        if isinstance(record, View):
            self.reading = record
            if self.vision is not None and not from_camera:
                self.vision.assume(record)
        result = self.game.feed(record)
        verdict = _verdict_of(result)
        if verdict is not None:
            self.last_verdict = verdict
            self.timeline_log.append({**verdict, "turn": self._turn()})
        self._expect()
        self._changed()
        return {"ok": verdict is None or verdict.get("ok", True),
                "message": verdict.get("text", "") if verdict else ""}

    def _expect(self) -> None:
        if self.vision is not None and self.game is not None:
            self.vision.expect(self.game.state().get("expectation"))

    def _turn(self) -> int | None:
        return self._runner_state().get("turn_number")

    def _runner_state(self) -> dict[str, Any]:
        return self.game.state() if self.game is not None else {}

    def _changed(self) -> None:
        self.version += 1
        self.publish(json.dumps({"type": "state", "state": self.state()}))

    def notice(self, message: str) -> None:
        """Something the table should know that is no verdict (the camera was lost, is back)."""
        with self._lock:
            self.timeline_log.append({"text": message, "notice": True})
            self.last_notice = message
            self._changed()

    def feed_record(self, record: Record) -> dict[str, Any]:
        """Feed a record from outside the timeline (a setup given on the command line)."""
        with self._lock:
            return self._feed(record)

    def summary(self) -> str:
        """One line for the terminal when the dashboard stops."""
        ok = sum(1 for v in self.timeline_log if v.get("ok") is True)
        bad = sum(1 for v in self.timeline_log if v.get("ok") is False and not v.get("unsure"))
        unsure = sum(1 for v in self.timeline_log if v.get("unsure"))
        asked = f", {unsure} asks to confirm cards" if unsure else ""
        game = (self._runner_state().get("game") or {})
        end = f", winner {game['winner']}" if game.get("winner") else ""
        late = (f", up to {self.lag_max:.1f} s behind the video to read every frame"
                if self.lag_max >= 0.5 else "")
        return (f"cardtable: {self.frames_seen} frames ({self.frames_dropped} dropped unseen in "
                f"blind windows{late}), {ok} steps ✓, {bad} deviations{asked}{end}"
                + (f"; {self.error}" if self.error else ""))

    # ---- what the page asks ---------------------------------------------------------------

    @property
    def blind(self) -> bool:
        return bool(self._runner_state().get("blind"))

    def state(self) -> dict[str, Any]:
        with self._lock:
            runner = self._runner_state()
            return {
                "version": self.version,
                "status": {
                    "mode": self.mode, "source": self.source, "frame": self.frames_seen,
                    "t": round(self.t, 2), "blind": bool(runner.get("blind")),
                    "finished": self.finished, "error": self.error,
                    "notice": self.last_notice,
                    "frames_dropped": self.frames_dropped,
                    "lag": round(self.lag, 1),
                    "camera": self.vision is not None,
                },
                "instruction": runner.get("instruction"),
                "verdict": self.last_verdict,
                "game": runner.get("game"),
                "timeline": self.timeline_log[-300:],
                "cards": [] if runner.get("blind") else self.cards,
                "reading": None if self.reading is None or runner.get("blind") else {
                    k: v for k, v in self.reading.to_json().items()
                    if k in ("work", "side", "discard")},
                "codes": CORRECTION_CODES,
            }

    def _annotate(self, image: np.ndarray, cards: list[dict[str, Any]]) -> bytes:
        """The camera view with what was read drawn on it, and the instruction's cells lit."""
        instruction = self._runner_state().get("instruction") or {}
        lit = {(c.get("zone"), c.get("column"), c.get("row"))
               for c in instruction.get("highlight") or []}
        lit_columns = {(c.get("zone"), c.get("column")) for c in instruction.get("highlight") or []
                       if c.get("row") is None}
        return encode_jpeg(draw_cards(image, cards, lit, lit_columns))

    def latest_jpeg(self) -> bytes | None:
        return None if self.blind else self._jpeg

    def operator_event(self, kind: str) -> dict[str, Any]:
        name = OPERATOR_EVENTS.get(kind)
        if name is None:
            raise ObservationError(f"unknown button {kind!r}: one of {', '.join(OPERATOR_EVENTS)}")
        with self._lock:
            out = self._feed(Event(event=name))  # type: ignore[arg-type]
            return {**out, "state": self.state()}

    def correct(self, zone: str, column: int, row: int, code: str) -> dict[str, Any]:
        code = code.strip().upper()
        if code != BACK:
            try:
                code = parse_card(code).code
            except CardCodeError as exc:
                raise ObservationError(f"cannot correct to {code!r}: {exc}") from None
        if zone not in ("work", "side", "discard"):
            raise ObservationError(f"unknown zone {zone!r}: work, side or discard")
        with self._lock:
            if self.vision is not None:
                self.vision.correct(zone, column, row, code)
            out = self._feed(Event(event="card_corrected", zone=zone, column=column, row=row,
                                   code=code))
            if self.reading is not None:
                with contextlib.suppress(ObservationError):
                    self.reading = self.reading.corrected(zone, column, row, code)
            return {**out, "state": self.state()}

    def setup(self, config: dict[str, Any]) -> dict[str, Any]:
        from protocol_runner.observations import from_json

        if self.mode != "live":
            raise ObservationError(f"this {self.mode} plays a recorded game, set up when it was "
                                   "recorded; start `cardtable serve` to set up a new game")
        players = config.get("players")
        if not isinstance(players, list):
            raise ObservationError("set-up needs a list of players")
        record = from_json({
            "v": 1, "kind": "setup", "game": config.get("game", "uno"),
            "players": [{"name": str(p.get("name", "")).strip(), "type": p.get("kind", "human")}
                        for p in players if isinstance(p, dict)],
            "helper_deck": {k: v for k, v in (config.get("helper_deck") or {}).items() if v},
        })
        with self._lock:
            out = self._feed(record)
            return {**out, "state": self.state()}

    def setup_options(self) -> dict[str, Any]:
        current = self.setup_record
        players = ([{"name": p.name, "kind": "virtual" if p.virtual else "human"}
                    for p in current.players] if current else
                   [{"name": "Ann", "kind": "human"}, {"name": "Bob", "kind": "human"},
                    {"name": "V1", "kind": "virtual"}, {"name": "V2", "kind": "virtual"}])
        return {"games": ["uno"], "config": {"game": "uno", "players": players},
                "helpers": helper_list(len(players) + 2)}


    def setup_helpers(self, config: dict[str, Any]) -> dict[str, Any]:
        players = config.get("players") or []
        mapping = {k: str(v) for k, v in (config.get("helper_deck") or {}).items() if v}
        return {"helpers": helper_list(len(players) + 2, mapping)}


CORRECTION_CODES = [c.code for c in uno_faces()] + [BACK]


def helper_list(groups: int, mapping: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The helper cards to prepare: α, β and one θ per owner group, with how many copies.

    Groups are the runner's: every player, the unplayed deck and a drawn card (draw-then-play).
    The card selection protocol on k cards uses k θ's, k validity pairs and 4 lottery cards
    (NOTES.md item 4); the copies are for the largest k of a UNO game (107: every card but the
    top discard), the most any one group could ever need.
    """
    from protocol_runner.helpers import ALPHA, BETA, HelperDeck, default_uno_helper_deck, theta

    base = default_uno_helper_deck(groups).to_mapping()
    deck = HelperDeck.from_mapping({**base, **(mapping or {})})
    k = 107
    rows = [{"role": "alpha", "label": "α", "face": deck.card(ALPHA).code, "copies": k + 2},
            {"role": "beta", "label": "β", "face": deck.card(BETA).code, "copies": k + 2}]
    for i in range(1, groups + 1):
        rows.append({"role": f"theta{i}", "label": f"θ{i}", "face": deck.card(theta(i)).code,
                     "copies": k})
    return rows


def _players_text(setup: Setup) -> str:
    return ", ".join(f"{p.name} ({'virtual' if p.virtual else 'human'})" for p in setup.players)


def _verdict_of(result: Any) -> dict[str, Any] | None:
    """The runner's answer to one record, as the page's verdict: ok, text, recover."""
    if result is None:
        return None
    if isinstance(result, dict):
        return result
    return {"ok": bool(getattr(result, "ok", True)), "text": str(getattr(result, "text", result)),
            "recover": getattr(result, "recover", None)}


def _normalise_card(card: dict[str, Any], size: tuple[int, int]) -> dict[str, Any]:
    w, h = size
    quad = card.get("quad")
    out = {k: v for k, v in card.items() if k != "quad"}
    if quad is not None:
        out["quad"] = [[round(float(x) / w, 4), round(float(y) / h, 4)] for x, y in quad]
    return out


def draw_cards(image: np.ndarray, cards: list[dict[str, Any]],
               lit: set[tuple[Any, Any, Any]] = frozenset(),  # type: ignore[assignment]
               lit_columns: set[tuple[Any, Any]] = frozenset()) -> np.ndarray:  # type: ignore[assignment]
    """Outline every card read (green; amber when unsure), its code, its column number on top."""
    import cv2

    out = image.copy()
    scale = max(out.shape[1] / 1280, 0.5)
    tops: dict[tuple[str, int], tuple[float, float]] = {}
    for card in cards:
        quad = np.asarray(card["quad"], np.float32).reshape(-1, 1, 2).astype(np.int32)
        key = (card.get("zone"), card.get("column"), card.get("row"))
        hot = key in lit or key[:2] in lit_columns
        colour = (0, 215, 255) if hot else (
            (80, 220, 80) if card.get("confidence", 1.0) >= 0.8 else (0, 160, 255))
        cv2.polylines(out, [quad], True, colour, max(1, int((4 if hot else 2) * scale)))
        x, y = quad[:, 0, 0].mean(), quad[:, 0, 1].mean()
        _label(out, str(card.get("code", "?")), (x, y), colour, scale)
        if card.get("column") is not None:
            top = (float(x), float(quad[:, 0, 1].min()))
            k = (str(card.get("zone")), int(card["column"]))
            if k not in tops or top[1] < tops[k][1]:
                tops[k] = top
    for (zone, column), (x, y) in tops.items():
        _label(out, f"{column}" if zone == "work" else f"{zone[0]}{column}", (x, y - 14 * scale),
               (255, 255, 255), scale * 0.9)
    return out


def _label(image: np.ndarray, text: str, centre: tuple[float, float], colour: tuple[int, int, int],
           scale: float) -> None:
    import cv2

    font, size, thick = cv2.FONT_HERSHEY_SIMPLEX, 0.55 * scale, max(1, int(2 * scale))
    (w, h), _ = cv2.getTextSize(text, font, size, thick)
    x, y = int(centre[0] - w / 2), int(centre[1] + h / 2)
    cv2.rectangle(image, (x - 3, y - h - 4), (x + w + 3, y + 4), (0, 0, 0), -1)
    cv2.putText(image, text, (x, y), font, size, colour, thick, cv2.LINE_AA)


def encode_jpeg(image: np.ndarray, quality: int = 70) -> bytes:
    import cv2

    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise OSError("could not encode the camera view as JPEG")
    return data.tobytes()


def dump_records(records: Iterable[Record]) -> str:
    return "".join(dumps(r) + "\n" for r in records)


# ---- wiring: what the commands start -----------------------------------------------------------

def open_recording(path: str | Path, events: str | Path | None = None, speed: float | None = 1.0,
                   journal: str | Path | None = None, record: str | Path | None = None,
                   profile: str | Path | None = None) -> Pipeline:
    """A pipeline over a recording folder, a video file (+ events) or an observations file;
    ``profile``: a deck enrolled on the mat (:func:`vision_stage`)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such recording, video or observations file")
    recorder = Recorder(Path(record), fps=10.0) if record else None
    if path.is_file() and path.suffix.lower() in (".jsonl", ".ndjson"):
        return Pipeline(records_timeline(path), make_game(journal), vision=None,
                        mode="replay", source=path.name, speed=speed, recorder=recorder)
    video = path / "video.mp4" if path.is_dir() else path
    if not video.is_file():
        raise FileNotFoundError(f"{path}: holds no video.mp4; give a recording folder, a video "
                                "or an observations file")
    events_path = Path(events) if events else video.with_name("events.jsonl")
    if not events_path.is_file():
        raise FileNotFoundError(f"{events_path}: the recording's events (setup, shuffle done…) "
                                "are missing; give them with --events")
    from vision.sources import video_file_frames

    fps = video_fps(video)  # also refuses a video that cannot be decoded, before serving
    if recorder is not None:
        recorder.fps = fps  # a re-recording plays at the speed of what it recorded
    records = list(records_timeline(events_path, interval=0.0))
    if not records or not isinstance(records[0].record, Setup):
        raise ObservationError(f"{events_path}: the first record must be the game's setup")
    return Pipeline(video_timeline(video_file_frames(video), fps, records), make_game(journal),
                    vision=vision_stage(profile), mode="replay",
                    source=(path.name if path.is_dir() else video.name) + deck_label(profile),
                    speed=speed, recorder=recorder)


def video_fps(path: Path) -> float:
    """The video's frame rate; an OSError naming the file if it cannot be decoded at all."""
    import cv2

    cap = cv2.VideoCapture(str(path))
    try:
        if not cap.isOpened() or not cap.read()[0]:
            raise OSError(f"{path}: cannot decode this video; convert it to MP4 (H.264) or AVI "
                          "(MJPG)")
        fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
    finally:
        cap.release()
    return fps if 1.0 <= fps <= 240.0 else 10.0


def default_journal() -> Path:
    """Where ``serve`` journals a live game unless told: one new file per session."""
    folder = Path.home() / ".cache" / "cardtable"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / time.strftime("game-%Y%m%d-%H%M%S.sqlite")


class RunnerGame:
    """The runner's :class:`~protocol_runner.runner.Session`, seen as the page needs it.

    The runner speaks in its own JSON (instructions with expected cells, verdicts with
    problems); this turns one answer into the page's verdict (ok, text, recover) and the
    runner's state into the page's sections, so the page does not depend on the runner's
    internals and the runner knows nothing of a screen.
    """

    def __init__(self, session: Any) -> None:
        self.session = session

    def feed(self, record: Record) -> dict[str, Any] | None:
        outputs = [o.to_json() for o in self.session.feed(record)]
        verdict = next((o for o in outputs if o.get("type") == "verdict"), None)
        return None if verdict is None else page_verdict(verdict)

    def state(self) -> dict[str, Any]:
        raw = self.session.state()
        instruction = raw.get("instruction")
        return {
            "blind": raw.get("blind") == "shuffle",
            "blind_kind": raw.get("blind"),
            "turn_number": raw.get("turn_number"),
            "phase": raw.get("phase"),
            "instruction": None if instruction is None else page_instruction(
                instruction, self._labels()),
            "expectation": None if instruction is None else {
                **instruction.get("expected", {}), "highlight": instruction.get("highlight"),
                "blind": instruction.get("blind")},
            "game": page_game(raw.get("game"), raw.get("turn_number")),
        }

    def _labels(self) -> dict[str, str]:
        deck = getattr(getattr(self.session, "runner", None), "helper_deck", None)
        if deck is None:
            return {}
        return {card.code: str(role) for role, card in deck.faces.items()}


def page_verdict(v: dict[str, Any]) -> dict[str, Any]:
    kind = v.get("verdict", "accepted")
    problems = [p.get("message", "") for p in v.get("problems", [])]
    text = str(v.get("message", ""))
    if problems:
        shown = "; ".join(problems[:2]) + (f"; and {len(problems) - 2} more"
                                           if len(problems) > 2 else "")
        text = f"{text}: {shown}"
    return {"ok": kind == "accepted", "kind": kind, "text": text,
            "recover": v.get("recover") or None, "seq": v.get("seq"),
            "problems": v.get("problems", []), "unsure": bool(v.get("unsure"))}


def page_instruction(ins: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    expected = ins.get("expected") or {}
    work = expected.get("work") or []
    highlight = [{"zone": z, "column": c, "row": r} for z, c, r in ins.get("highlight") or []]
    lit = {(h["column"], h["row"]) for h in highlight if h["zone"] == "work"}
    cells = [{"column": c, "row": r, "label": _cell_label(code, labels),
              "face": code not in (BACK, "?"), "highlight": (c, r) in lit}
             for c, column in enumerate(work, start=1)
             for r, code in enumerate(column, start=1) if code]
    where = f"{ins['protocol']}, step {ins['step']} of {ins['total']}" if ins.get("protocol") \
        else ins.get("phase", "")
    return {
        "text": ins.get("text", ""), "player": ins.get("player"), "phase": ins.get("phase"),
        "protocol": ins.get("protocol"), "context": ins.get("context"), "where": where,
        "step": ins.get("step") or None, "steps": ins.get("total") or None,
        "turn": ins.get("turn"), "blind": ins.get("blind"), "reveal": expected.get("reveal"),
        "highlight": highlight,
        "diagram": {"columns": len(work), "rows": max((len(c) for c in work), default=0),
                    "cells": cells} if work else None,
    }


def _cell_label(code: str, labels: dict[str, str]) -> str:
    if code == BACK:
        return ""
    return labels.get(code, code)


def page_game(game: dict[str, Any] | None, turn: int | None) -> dict[str, Any] | None:
    if not game:
        return None
    direction = game.get("direction")
    return {
        "name": {"uno": "UNO"}.get(game.get("name") or "uno",
                                  str(game.get("name")).replace("-", " ").title()),
        "players": [{"name": p["name"], "kind": p.get("type", "human"),
                     "hand": p.get("hand_size"), "current": p["name"] == game.get("turn"),
                     "winner": p["name"] == game.get("winner")} for p in game.get("players", [])],
        "discard": game.get("discard", []), "colour": game.get("colour_in_force"),
        "direction": None if direction is None else (1 if direction == "clockwise" else -1),
        "turn": turn, "deck": game.get("deck_size"), "winner": game.get("winner"),
        "result": game.get("result"), "scores": game.get("scores"),
    }


def make_game(journal: str | Path | None) -> Callable[[Setup], Game]:
    """The runner factory: a new runner session (journaled when asked) for each setup."""

    def build(setup: Setup) -> Game:
        from protocol_runner.runner import Session

        if journal is None:
            return RunnerGame(Session())
        from protocol_runner.journal import Journal

        return RunnerGame(Session(Journal.create(journal)))

    return build


class CameraVision:
    """The vision pipeline of issue 5 seen from here: read a frame (``vision.recognise``), keep a
    view only when it held still with no hand over it (``vision.tracking``), and report where
    each card lies (zone, column, row as ``vision.layout`` counts them) for drawing and clicks.

    A card the operator corrected keeps its corrected code while the camera goes on reading the
    same wrong code at that place, so one misread is not reported again at every later step.
    """

    def __init__(self, reader: Any = None, stable_frames: int = 4) -> None:
        from vision.recognise import TableReader
        from vision.tracking import StableCommitter

        self.reader = reader if reader is not None else TableReader.load()
        self.stable_frames = stable_frames
        self.committer = StableCommitter(stable_frames)
        self.face_down_move = False
        self.assumed: Any = None
        self.touched = False
        self.overrides: dict[tuple[str, int, int], tuple[str, str]] = {}
        self.last_cards: list[dict[str, Any]] = []
        self.expected_work: list[list[str]] = []
        self.expected_side: list[list[str]] = []
        self.may_show: Counter[str] = Counter()
        self.expected_key = ""
        self.keep_own = KEEP_OWN
        self._decoded: tuple[Any, Any] | None = None

    def process(self, image: np.ndarray, t: float) -> tuple[View | None, list[dict[str, Any]]]:
        from vision.tracking import StableCommitter, signature

        own = self.reader.read(image)
        table = self._with_prior(own, image)
        cards = self._cards(table)
        self.last_cards = cards
        if table.hand_in_view and self.face_down_move:
            # Face-down cards moved by hand may look exactly as before (all backs, same
            # places); the runner still needs to see the table once it is still again.
            self.committer = StableCommitter(self.stable_frames)
        if table.hand_in_view:
            self.touched = True
        # the prior changes with every accepted step, and the layout hints with it: only the
        # codes the camera read on its own (or a hand) say whether the table itself changed
        view = self.committer.update(table, [d.code for d in own.detections])
        if view is not None and self.overrides:
            view = self._apply_overrides(view)
        if view is not None:
            if self.assumed is not None and signature(view) == self.assumed \
                    and not self.touched:
                return None, cards  # the runner was given this view already (a recording)
            self.assumed, self.touched = None, False
        return view, cards

    def _with_prior(self, table: Any, image: np.ndarray) -> Any:
        """Re-read the work and side areas with what the runner expects there (issue 5, 7).

        Each cell of the expected layout names its code, or ``?`` for a card being revealed:
        a cell with a code is read as that code, the revealed cells are decoded jointly against
        the ``may_show`` multiset (:func:`vision.prior.decode_detections`). A card whose
        expected or best legal reading is still unlikely (flagged) keeps what it read on its own
        when that reading is strong evidence — the whole card was seen, or its corner was read
        with at least ``keep_own`` confidence — so the runner reports it as a deviation instead
        of the prior hiding it. A covered card read less surely from its corner strip takes its
        legal reading with that reading's low confidence (drawn as unsure on the page): on
        rendered card selection layouts the strip classifier's own misreads mostly fall below
        0.99, while a foreign card planted in the layout is mostly read at 0.99 or more
        (``tests/test_pipeline_prior.py``).
        """
        from dataclasses import replace

        from vision.layout import build_view, zone_columns
        from vision.prior import FLAG_BELOW, PriorError, decode_detections

        if not (self.expected_work or self.expected_side) or table.blind or table.error \
                or not table.detections:
            return table
        key = (table.detections, self.expected_key)
        if self._decoded is not None and self._decoded[0] == key:
            return replace(table, detections=self._decoded[1].detections,
                           observation=self._decoded[1].observation)
        classes = {c: k for k, c in enumerate(self.reader.classes)}
        read = {id(d): d for d in table.detections}
        revealed: list[Any] = []
        for zone, expected, rows in (("work", self.expected_work, self.reader.rows_per_column),
                                     ("side", self.expected_side, None)):
            found = [d for d in table.detections if d.zone == zone and d.quad_mm is not None]
            for c, column in enumerate(zone_columns(found, rows) if expected else []):
                for r, d in enumerate(column):
                    if d is None or d.probs is None or c >= len(expected) \
                            or r >= len(expected[c]) or not expected[c][r]:
                        continue
                    code = expected[c][r]
                    if code == "?":
                        revealed.append(d)
                    elif code in classes:
                        p = float(d.probs[classes[code]])
                        read[id(d)] = self._legal(d, code, p, p < FLAG_BELOW, image)
        if revealed and self.may_show:
            try:
                decoded, flagged = decode_detections(revealed, self.reader.classes,
                                                     self.may_show.elements(), zone=None)
            except PriorError:
                decoded, flagged = tuple(revealed), []
            for i, (own, legal) in enumerate(zip(revealed, decoded, strict=True)):
                read[id(own)] = self._legal(own, legal.code, legal.confidence, i in flagged,
                                            image)
        detections = tuple(read[id(d)] for d in table.detections)
        observation = build_view(detections, self.reader.mat,
                                 rows_per_column=self.reader.rows_per_column)
        out = replace(table, detections=detections, observation=observation)
        self._decoded = (key, out)  # a still table is decoded once, not at every frame
        return out

    def _legal(self, own: Any, code: str, p: float, flagged: bool, image: np.ndarray) -> Any:
        """``own`` read as ``code`` (probability ``p``), unless flagged and ``own`` is strong
        evidence of something else."""
        from dataclasses import replace

        if flagged and (not own.covered or (own.confidence >= self.keep_own
                                            and self._steady(own, image))):
            return own
        return replace(own, code=code, confidence=p)

    def _steady(self, own: Any, image: np.ndarray) -> bool:
        """Whether a covered card's corner still reads as ``own.code`` when cut 1.5 mm off in
        each direction. A foreign card shows its own index wherever the cut falls; a misread
        from a cut that caught a neighbour's edge does not survive moving the cut. Run only
        for the few cards that contradict the protocol."""
        strip = getattr(self.reader, "strip", None)
        if strip is None or own.code not in strip.classes:
            return True
        q = np.asarray(own.quad, np.float32)
        across, down = (q[1] - q[0]) / 57.0, (q[3] - q[0]) / 88.0
        quads = [q + dx * across + dy * down
                 for dx, dy in ((1.5, 0), (-1.5, 0), (0, 1.5), (0, -1.5))]
        probs = strip.predict(image, quads)
        k = strip.classes.index(own.code)
        return bool((np.argmax(probs, axis=1) == k).all())

    def assume(self, view: View) -> None:
        """The runner got ``view`` from elsewhere (a recording's face-down step): the camera
        must not report the same still table again unless a hand touched it since."""
        from vision.tracking import signature

        self.assumed, self.touched = signature(view), False

    def _cards(self, table: Any) -> list[dict[str, Any]]:
        from vision.layout import zone_columns

        out: list[dict[str, Any]] = []
        by_zone: dict[str, list[Any]] = {}
        for d in table.detections:
            if d.zone is not None and d.quad_mm is not None:
                by_zone.setdefault(d.zone, []).append(d)
        for zone, found in by_zone.items():
            if zone == "discard":
                best = max(found, key=lambda d: d.confidence)
                out.append(_card_dict(best, zone, 1, 1, self.overrides))
                continue
            rpc = self.reader.rows_per_column if zone == "work" else None
            for c, column in enumerate(zone_columns(found, rpc), start=1):
                for r, d in enumerate(column, start=1):
                    if d is not None:
                        out.append(_card_dict(d, zone, c, r, self.overrides))
        return out

    def _apply_overrides(self, view: View) -> View:
        for (zone, column, row), (misread, code) in list(self.overrides.items()):
            try:
                cell = view.discard if zone == "discard" else \
                    view.cells(zone)[column - 1][row - 1]
            except IndexError:
                cell = None
            if cell is None or cell.code != misread:
                del self.overrides[(zone, column, row)]  # the card changed: the camera reads anew
                continue
            view = view.corrected(zone, column, row, code)
        return view

    def expect(self, hint: dict[str, Any] | None) -> None:
        """The runner's expectation tells how tall the work area's columns are (bands)."""
        work = (hint or {}).get("work") or []
        self.reader.rows_per_column = max((len(c) for c in work), default=0) or None
        self.reader.columns = len(work) or None
        self.face_down_move = (hint or {}).get("blind") == "face-down move"
        self.expected_work = [[str(code) if code else "" for code in column] for column in work]
        self.expected_side = [[str(code) if code else "" for code in column]
                              for column in (hint or {}).get("side") or []]
        self.may_show = Counter({str(code): int(n) for code, n in
                                 ((hint or {}).get("may_show") or {}).items()})
        self.expected_key = json.dumps([self.expected_work, self.expected_side,
                                        sorted(self.may_show.items())])

    def correct(self, zone: str, column: int, row: int, code: str) -> None:
        self.committer.forget_commit()
        for card in self.last_cards:
            if (card["zone"], card["column"], card["row"]) == (zone, column, row):
                self.overrides[(zone, column, row)] = (card.get("read", card["code"]), code)

    def reset(self) -> None:
        """After a blind window: nothing seen before it is evidence of what lies there now."""
        from vision.tracking import StableCommitter

        self.committer = StableCommitter(self.stable_frames)
        self.overrides.clear()


def _card_dict(d: Any, zone: str, column: int, row: int,
               overrides: dict[tuple[str, int, int], tuple[str, str]]) -> dict[str, Any]:
    code = d.code
    fixed = overrides.get((zone, column, row))
    shown = fixed[1] if fixed and fixed[0] == code else code
    return {"zone": zone, "column": column, "row": row, "code": shown, "read": code,
            "confidence": round(float(d.confidence), 3),
            "quad": [[float(x), float(y)] for x, y in d.quad]}


def deck_label(profile: str | Path | None) -> str:
    """What the page's source line adds for an enrolled deck: the players see that the table
    is read as their deck prints it."""
    return "" if profile is None else f" · deck {Path(profile).name}"


def vision_stage(profile: str | Path | None = None) -> Vision:
    """The camera's vision stage; ``profile``: a deck enrolled on the mat (``cardtable enrol
    --mat``), so that the table is read as that deck prints its cards."""
    if profile is None:
        return CameraVision()
    from vision.recognise import TableReader

    reader = TableReader.load(profile=profile)
    reader.profile.check_source(on_mat=True, path=profile)
    return CameraVision(reader)
