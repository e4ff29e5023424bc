"""``cardtable render-video SCRIPT OUT``: the table renderer — a scripted game as a camera video.

SCRIPT is an observations file (setup, views, events: what ``cardtable run`` reads). OUT receives
``video.mp4``, ``events.jsonl`` (what ``--record`` would have kept) and ``script.jsonl`` (each
view and the time from which it lies still). ``--simulate SEED`` plays the game on the runner's
simulated table first (it also writes ``game.jsonl``): that is how ``datasets/demo`` was made.
``cardtable replay OUT`` then plays it back through the camera checks.
``--mistake VIEW:COLUMN:ROW:CODE`` plants a table mistake: the VIEW-th view is first shown with
that work cell wrong, then put right. ``--answer`` replays the video once with the table's
people answering the camera as the dashboard asks them to — looking at each card the camera is
unsure of and naming it, looking at the cards a deviation points at and correcting those the
camera misread (what they see is the script) — and adds those answers (``card_corrected``) to
``events.jsonl``, as ``--record`` keeps them: the recording then replays to the game's end on
its own. A real mistake on the table is not answered: the camera must catch it.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from protocol_runner.observations import View
    from protocol_runner.pipeline import Item


def register(sub: Any) -> None:
    p = sub.add_parser("render-video", help="render a scripted game as a realistic table video",
                       description=__doc__)
    p.add_argument("script", type=Path, nargs="?", default=None,
                   help="observations file (JSON Lines); or use --simulate")
    p.add_argument("out", type=Path, help="output folder")
    p.add_argument("--simulate", type=int, default=None, metavar="SEED",
                   help="instead of a script, play a game on the runner's simulated table "
                        "(2 humans, 2 virtual players, 2 cards each) with this seed")
    p.add_argument("--fps", type=float, default=10.0, help="frames per second (default 10)")
    p.add_argument("--seed", type=int, default=0, help="hands, light and card jitter")
    p.add_argument("--hold", type=float, default=1.6,
                   help="seconds each view lies still (default 1.6)")
    p.add_argument("--mistake", default=None, metavar="VIEW:COLUMN:ROW:CODE",
                   help="plant a wrong card before the VIEW-th view")
    p.add_argument("--answer", action="store_true",
                   help="replay the video once with the table answering the camera (naming "
                        "the cards it is unsure of, correcting its misreads) and keep those "
                        "answers in events.jsonl, as a recording of the session would")
    p.set_defaults(handler=run)


def parse_mistake(text: str) -> tuple[int, int, int, str]:
    parts = text.split(":")
    try:
        view, column, row = (int(x) for x in parts[:3])
        code = parts[3]
    except (ValueError, IndexError):
        raise ValueError(f"--mistake {text!r}: expected VIEW:COLUMN:ROW:CODE, e.g. 4:2:3:2G") \
            from None
    return view, column, row, code


def run(args: argparse.Namespace) -> int:
    from vision.synth.video import load_script, plant_mistake, render_script

    if args.fps <= 0 or args.fps > 60:
        raise ValueError("--fps must be in (0, 60]")
    if (args.script is None) == (args.simulate is None):
        raise ValueError("give either an observations SCRIPT or --simulate SEED")
    if args.simulate is not None:
        from protocol_runner.tablesim import TableSimulator, simulated_setup

        game = TableSimulator(simulated_setup(2, 2, hand_size=2), seed=args.simulate).play()
        records = game.records
        args.out.mkdir(parents=True, exist_ok=True)
        game.write(args.out / "game.jsonl")
        print(f"simulated game: {len(records)} records, {game.virtual_turns} virtual turns, "
              f"winner {game.winner}")
    else:
        records = load_script(args.script)
    if args.mistake:
        view, column, row, code = parse_mistake(args.mistake)
        records = plant_mistake(records, view, column, row, code)
    out = render_script(records, args.out, fps=args.fps, seed=args.seed, hold=args.hold)
    size = (out.folder / "video.mp4").stat().st_size
    print(f"{out.folder / 'video.mp4'}: {out.frames} frames, {out.seconds:.1f} s, "
          f"{out.views} views, {size / 1e6:.1f} MB")
    if args.answer:
        got = replay(out.folder)
        add_events(out.folder / "events.jsonl", got.answers)
        print(f"the table answered the camera: {got.named} unsure cards named, "
              f"{len(got.misread)} misread cards corrected")
    return 0


def add_events(path: Path, events: list[dict[str, Any]]) -> None:
    """Merge ``events`` into an ``events.jsonl``, in time order (the setup stays first)."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    merged = sorted([*lines, *events], key=lambda e: float(e.get("t", 0.0)))
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in merged),
                    encoding="utf-8")


def truth_at(script: Path) -> Callable[[float], View]:
    """The table at a time of the video, from a ``script.jsonl`` (each view and the second from
    which it lies still)."""
    from protocol_runner.observations import from_json

    still = []
    for line in script.read_text().splitlines():
        data = json.loads(line)
        t = data.pop("t")
        still.append((float(t), from_json(data)))

    def at(t: float) -> View:
        return [view for ts, view in still if ts <= t + 1e-6][-1]

    return at


@dataclass
class Replay:
    """What a replay gave: the verdicts on the protocol (the player's exchanges with the camera
    left out), the cards the player named because the camera was unsure of them, and the
    cards it corrected because the camera read them wrong: (zone, column, row, read, truth)."""

    verdicts: list[str] = field(default_factory=list)
    named: int = 0
    misread: list[tuple[str, int, int, str, str]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)


def replay(folder: Path, want: list[str] | None = None, profile: Path | None = None) -> Replay:
    """Replay the video as fast as possible with a player at the table who does what the
    dashboard asks of people: when the camera is unsure of cards ("confirm these cards", the
    runner's ``unsure`` deviation), it looks at each and names it; when a deviation names
    cards, it looks at them and corrects those the camera read wrong ("correct this card").
    What it sees is what the renderer drew (``script.jsonl``). A deviation about what really
    lies on the table is left alone: the table puts it right. With ``want`` (the script's
    verdicts), stops at the first verdict that differs (nothing after it could match any
    more). The player's answers are kept in ``answers`` as the events a recording of the
    session (``--record``) holds, ``t`` between the frame it answered and the next.
    ``profile``: a deck enrolled on the mat to read the table with."""
    from protocol_runner.pipeline import open_recording, video_fps

    truth = truth_at(folder / "script.jsonl")
    pipeline = open_recording(folder, speed=None, profile=profile)
    half_frame = 0.5 / video_fps(folder / "video.mp4")
    out = Replay()
    exchanges: set[int] = set()
    handled: set[int] = set()

    def code_at(table: View, zone: str, column: int, row: int) -> str | None:
        if zone == "discard":
            return table.discard.code
        columns = table.cells(zone)
        if column > len(columns) or row > len(columns[column - 1]):
            return None
        return columns[column - 1][row - 1].code

    def named(problem: dict[str, Any], reading: View) -> Iterator[tuple[str, int, int, str]]:
        """The cards a deviation's problem points at, as the camera read them: every card of
        its column (a pair is checked against the card above it), or of the columns its
        message names ("9Y shows 3 times (columns 1, 71, 94)")."""
        zone = problem.get("zone")
        if zone == "discard":
            yield "discard", 1, 1, str(reading.discard.code)
        elif zone in ("work", "side"):
            columns = reading.cells(zone)
            text = problem.get("message", "") if problem.get("row") is None \
                else f"column {problem.get('column')}"
            for c in {int(n) for n in re.findall(r"\d+", " ".join(
                    re.findall(r"columns? ([\d, –-]+)", text)))}:
                for r, cell in enumerate(columns[c - 1] if c <= len(columns) else (), start=1):
                    if cell.code is not None:
                        yield zone, c, r, cell.code

    def answer() -> bool:
        log = pipeline.timeline_log
        i = len(log) - 1
        if i < 0 or i in handled or log[i].get("kind") != "deviation" \
                or pipeline.reading is None:
            return False
        verdict, table, reading = log[i], truth(pipeline.t), pipeline.reading
        unsure = bool(verdict.get("unsure"))
        asked = [(p["zone"], p.get("column") or 1, p.get("row") or 1, str(p.get("saw")))
                 for p in verdict.get("problems", [])] if unsure else \
            [card for p in verdict.get("problems", []) for card in named(p, reading)]
        todo = {(zone, c, r): (saw, code) for zone, c, r, saw in asked
                if (code := code_at(table, zone, c, r)) is not None and (unsure or code != saw)}
        if not todo:
            handled.add(i)
            return False  # the camera read the table right: the table must put it right
        for (zone, column, row), (saw, code) in todo.items():
            pipeline.correct(zone, column, row, code)
            out.answers.append({"v": 1, "kind": "event", "event": "card_corrected",
                                "zone": zone, "column": column, "row": row, "code": code,
                                "t": round(pipeline.t + half_frame, 4)})
            if unsure:
                out.named += 1
            else:
                out.misread.append((zone, column, row, saw, code))
        exchanges.update(range(i, len(log) - 1))  # the answer to the last one is the verdict
        handled.add(i)  # last: the test's thread reads these while the pipeline runs
        return True

    def player(items: Iterable[Item]) -> Iterator[Item]:
        for item in items:
            while answer():
                pass
            yield item

    def verdicts(settled: bool = False) -> list[str]:
        """The verdicts the table sees. ``settled``: only those before the first deviation
        the player has not looked at yet — read from another thread while the pipeline runs,
        a deviation the player is about to answer is not a verdict yet."""
        out = []
        for i, v in enumerate(list(pipeline.timeline_log)):
            if "kind" not in v or i in exchanges or v.get("unsure"):
                continue
            if settled and v["kind"] == "deviation" and i not in handled:
                break
            out.append(f"{v['kind']}: {v['text'].replace('after the correction: ', '')}")
        return out

    pipeline.timeline = player(pipeline.timeline)
    pipeline.start()
    while not pipeline.join(0.2):
        got = verdicts(settled=True)
        if want is not None and got != want[:len(got)]:
            break
    pipeline.stop()
    assert pipeline.error is None, pipeline.error
    out.verdicts = verdicts()
    return out
