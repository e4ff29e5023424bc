"""The pipeline behind the dashboard: a whole scripted game replays to its winner; recording
keeps video and events together and never a frame of a blind window; the runner's answers
become the page's sections."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from protocol_runner.observations import Event, Record
from protocol_runner.pipeline import (
    FrameItem,
    Pipeline,
    Recorder,
    RecordItem,
    dump_records,
    make_game,
    open_recording,
    page_verdict,
)


@pytest.fixture(scope="module")
def game_records() -> list[Record]:
    from protocol_runner.tablesim import TableSimulator, simulated_setup

    return TableSimulator(simulated_setup(2, 2, hand_size=2), seed=2).play().records


def test_a_scripted_game_replays_to_its_winner(game_records: list[Record], tmp_path: Path) -> None:
    script = tmp_path / "game.jsonl"
    script.write_text(dump_records(game_records))
    pipeline = open_recording(script, speed=None)
    pipeline.run()
    state = pipeline.state()
    assert pipeline.error is None
    assert state["game"]["winner"] and state["status"]["finished"]
    assert all(v["ok"] for v in state["timeline"])
    assert "wins" in state["instruction"]["text"]
    json.dumps(state)  # the page's state is plain JSON


SHUFFLING = 250


def frame(n: int) -> np.ndarray:
    """A table frame (dark, 40..80) or, with ``n = SHUFFLING``, a frame of a shuffle (white)."""
    return np.full((48, 64, 3), SHUFFLING if n == SHUFFLING else 40 + n % 5 * 10, np.uint8)


def test_recording_never_keeps_a_blind_window_frame(game_records: list[Record],
                                                    tmp_path: Path) -> None:
    first_shuffle = next(i for i, r in enumerate(game_records)
                         if isinstance(r, Event) and r.event == "shuffle_done")
    items: list[RecordItem | FrameItem] = []
    t = 0.0
    n = 0
    for record in game_records[:first_shuffle + 3]:
        if isinstance(record, Event) and record.event == "shuffle_done":
            for _ in range(7):  # the table shuffles: the camera would see it
                items.append(FrameItem(frame(SHUFFLING), t, n))
                n, t = n + 1, t + 0.1
        items.append(RecordItem(record, t))
        items.append(FrameItem(frame(n), t, n))
        n, t = n + 1, t + 0.1
    recorder = Recorder(tmp_path / "rec", fps=10.0)
    pipeline = Pipeline(iter(items), make_game(None), speed=None, recorder=recorder)
    pipeline.run()
    assert pipeline.error is None
    assert pipeline.frames_dropped >= 7
    cap = cv2.VideoCapture(str(tmp_path / "rec" / "video.mp4"))
    kept = 0
    while (ok_frame := cap.read())[0]:
        assert float(ok_frame[1].mean()) < 150, "a frame of a shuffle was kept"
        kept += 1
    # face-down moves are blind windows too: looked at, never kept
    assert 0 < kept == recorder.frames < pipeline.frames_seen - pipeline.frames_dropped
    events = [json.loads(x) for x in (tmp_path / "rec" / "events.jsonl").read_text().splitlines()]
    assert events[0]["kind"] == "setup"
    assert any(e.get("event") == "shuffle_done" for e in events)
    assert all("t" in e for e in events)


@pytest.mark.parametrize(("runner_verdict", "ok", "shown"), [
    ({"verdict": "accepted", "message": "step 3 done"}, True, "step 3 done"),
    ({"verdict": "deviation", "message": "the table differs",
      "problems": [{"message": "column 2 should be αβ"}, {"message": "column 5: 2G"},
                   {"message": "x"}], "recover": "put it back"},
     False, "the table differs: column 2 should be αβ; column 5: 2G; and 1 more"),
    ({"verdict": "refused", "message": "inside a blind window"}, False, "inside a blind window"),
])
def test_runner_verdicts_become_page_verdicts(runner_verdict: dict, ok: bool, shown: str) -> None:
    v = page_verdict(runner_verdict)
    assert v["ok"] is ok and v["text"] == shown


def test_setup_from_the_page_starts_a_game_and_refuses_a_bad_one() -> None:
    pipeline = Pipeline(iter(()), make_game(None), mode="live")
    out = pipeline.setup({"game": "uno", "players": [
        {"name": "Ann", "kind": "human"}, {"name": "Robo", "kind": "virtual"}]})
    assert out["ok"] and out["state"]["game"]["players"][1]["kind"] == "virtual"
    assert "Deal" in out["state"]["instruction"]["text"]
    with pytest.raises(ValueError, match="virtual"):
        pipeline.setup({"players": [{"name": "Ann", "kind": "human"},
                                    {"name": "Bob", "kind": "human"}]})
    with pytest.raises(ValueError, match="differ"):
        pipeline.setup({"players": [{"name": "A", "kind": "human"},
                                    {"name": "A", "kind": "virtual"}]})
    helpers = pipeline.setup_helpers({"players": [{}, {}, {}], "helper_deck": {"alpha": "3R"}})
    assert helpers["helpers"][0] == {"role": "alpha", "label": "α", "face": "3R", "copies": 109}
    with pytest.raises(ValueError):
        pipeline.setup_helpers({"players": [{}], "helper_deck": {"alpha": "2G"}})  # = β's face
    replay = Pipeline(iter(()), make_game(None), mode="replay")
    with pytest.raises(ValueError, match="recorded game"):
        replay.setup({"players": [{"name": "A", "kind": "human"},
                                  {"name": "B", "kind": "virtual"}]})


@pytest.mark.parametrize(("path", "message"), [
    ("missing.mp4", "no such recording"),
    ("folder-without-video", "holds no video.mp4"),
])
def test_bad_recordings_are_clear_errors(tmp_path: Path, path: str, message: str) -> None:
    (tmp_path / "folder-without-video").mkdir()
    with pytest.raises(OSError, match=message):
        open_recording(tmp_path / path)


def test_video_without_events_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "video.mp4").write_bytes(b"not really a video")
    with pytest.raises(OSError, match="events"):
        open_recording(tmp_path)


def test_undecodable_video_is_refused_before_serving(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    (tmp_path / "video.mp4").write_bytes(b"not really a video")
    (tmp_path / "events.jsonl").write_text(
        '{"v": 1, "kind": "setup", "players": [{"name": "A", "type": "human"}, '
        '{"name": "B", "type": "virtual"}]}\n')
    assert main(["replay", str(tmp_path), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "cannot decode this video" in err and "Traceback" not in err


def test_a_stopped_live_pipeline_releases_its_camera(tmp_path: Path) -> None:
    """Stopping the dashboard's pipeline closes its frame source in the pipeline's thread, so
    the camera is released before `cardtable serve` exits (a capture thread still reading at
    exit crashed the process)."""
    from protocol_runner.pipeline import live_timeline
    from tests.test_sources import _write_video, paced
    from vision.sources import live_frames

    path = tmp_path / "long.avi"
    _write_video(path, 60)
    cams, opener = paced(30)
    frames = live_frames(str(path), opener=opener)  # type: ignore[arg-type]
    pipeline = Pipeline(live_timeline(frames), make_game(None), mode="live", speed=None)
    pipeline.start()
    assert pipeline.join(0.3) is False, "the camera is still being read"
    pipeline.stop()
    assert pipeline.finished and pipeline.frames_seen > 0
    assert cams[0].released.is_set()
