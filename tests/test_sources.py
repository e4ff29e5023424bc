"""Frame sources on real files: a video from cv2.VideoWriter, a folder of PNGs, bad paths."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.sources import Frame, FrameSourceError, live_frames, open_source


def _write_video(path: Path, n: int = 6) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for i in range(n):
        writer.write(np.full((48, 64, 3), 20 * i % 256, np.uint8))
    writer.release()


@pytest.fixture
def video(tmp_path: Path) -> Path:
    path = tmp_path / "clip.avi"
    _write_video(path)
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "imgs"
    d.mkdir()
    for name in ["b.png", "a.png", "c.jpg"]:
        cv2.imwrite(str(d / name), np.full((10, 12, 3), ord(name[0]), np.uint8))
    (d / "notes.txt").write_text("not an image")
    (d / "broken.png").write_bytes(b"not a png")
    return d


def test_video_file_yields_all_frames_in_order(video: Path) -> None:
    frames = list(open_source(video))
    assert [f.index for f in frames] == list(range(6))
    assert frames[0].size == (64, 48)
    assert frames[3].image.mean() == pytest.approx(60, abs=4)
    assert all(isinstance(f, Frame) and f.source == str(video) for f in frames)


def test_frames_are_frozen(video: Path) -> None:
    frame = next(open_source(video))
    with pytest.raises(ValueError):
        frame.image[0, 0, 0] = 1
    with pytest.raises(AttributeError):
        frame.index = 5  # type: ignore[misc]


def test_folder_sorted_and_skips_unreadable(folder: Path) -> None:
    frames = list(open_source(str(folder)))
    assert [f.name for f in frames] == ["a.png", "b.png", "c.jpg"]
    assert [f.index for f in frames] == [0, 1, 2]


def test_single_image_is_one_frame(folder: Path) -> None:
    (frame,) = list(open_source(folder / "a.png"))
    assert frame.size == (12, 10)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.mp4", "no such file"),
        (lambda d: d / "empty", "holds no images"),
        (lambda d: d / "junk.avi", "cannot decode"),
        (lambda d: d / "data.xyz", "unknown kind of file"),
        (lambda d: d / "bad.png", "not a readable image"),
    ],
)
def test_bad_sources_raise_clear_oserror(tmp_path: Path, make, message: str) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk.avi").write_bytes(b"\x00" * 100)
    (tmp_path / "data.xyz").write_bytes(b"x")
    (tmp_path / "bad.png").write_bytes(b"x")
    with pytest.raises(OSError, match=message):
        list(open_source(make(tmp_path)))


def test_missing_camera_says_what_to_do() -> None:
    with pytest.raises(FrameSourceError, match="no camera at index 97"):
        next(open_source(97))


def test_live_source_reconnects_and_keeps_counting(video: Path) -> None:
    """A live capture whose stream ends (a video file here) is reopened and indices continue."""
    events: list[str] = []
    frames = list(itertools.islice(
        live_frames(str(video), retry_delay=0, on_event=events.append, newest=False), 15))
    assert [f.index for f in frames] == list(range(15))
    assert sum("connection lost" in e for e in events) == 2
    assert sum("reconnected" in e for e in events) == 2


@pytest.mark.parametrize("newest", [False, True])
def test_live_source_gives_up_after_bounded_retries(video: Path, tmp_path: Path,
                                                    newest: bool) -> None:
    """Given up on, the source's error comes after its frames, also through the reading
    thread of ``newest``."""
    opened: list[int | str] = []

    def opener(target: int | str) -> cv2.VideoCapture:
        opened.append(target)
        return cv2.VideoCapture(str(target) if len(opened) == 1 else str(tmp_path / "gone.avi"))

    events: list[str] = []
    gen = live_frames(str(video), retries=3, retry_delay=0, opener=opener, on_event=events.append,
                      newest=newest)
    with pytest.raises(FrameSourceError, match="not back after 3 attempts"):
        list(gen)
    assert len(opened) == 4
    assert any("connection lost after frame 6" in e for e in events)


class CameraPaced:
    """A real capture of a video file delivered at a camera's pace: each ``read`` returns when
    the camera would have its next frame ready, as a webcam's driver does."""

    def __init__(self, path: Path, fps: float) -> None:
        self.cap = cv2.VideoCapture(str(path))
        self.interval = 1.0 / fps
        self.due = time.perf_counter()
        self.released = threading.Event()

    def isOpened(self) -> bool:  # noqa: N802 (cv2.VideoCapture's name)
        return self.cap.isOpened()

    def read(self) -> tuple[bool, np.ndarray | None]:
        self.due += self.interval
        time.sleep(max(0.0, self.due - time.perf_counter()))
        return self.cap.read()

    def release(self) -> None:
        self.cap.release()
        self.released.set()


def paced(fps: float) -> tuple[list[CameraPaced], Callable[[int | str], CameraPaced]]:
    """An ``opener`` for :func:`live_frames` that opens a :class:`CameraPaced` at ``fps``, and
    the list of the cameras it opened."""
    cams: list[CameraPaced] = []

    def opener(target: int | str) -> CameraPaced:
        cams.append(CameraPaced(Path(str(target)), fps))
        return cams[-1]

    return cams, opener


@pytest.mark.parametrize(("newest", "gaps"), [(True, True), (False, False)])
def test_a_slow_reader_gets_the_newest_frame(tmp_path: Path, newest: bool, gaps: bool) -> None:
    """A camera at 50 frames/s read by a pipeline that takes 0.1 s a frame: with ``newest`` it
    gets frames a few indices apart, each at most a few camera frames old; without, every
    frame in order, ever older."""
    path = tmp_path / "long.avi"
    _write_video(path, 60)
    cams, opener = paced(50)
    gen = live_frames(str(path), opener=opener, newest=newest)  # type: ignore[arg-type]
    ages, indices = [], []
    for frame in itertools.islice(gen, 8):
        ages.append(time.time() - frame.timestamp)
        indices.append(frame.index)
        time.sleep(0.1)
    gen.close()
    assert cams[0].released.is_set(), "closing the source released the camera"
    assert indices == sorted(set(indices))
    steps = np.diff(indices)
    if gaps:
        assert steps.max() >= 3 and max(ages[2:]) < 0.1
    else:
        assert indices == list(range(8))


def test_closing_a_newest_source_stops_its_reader(tmp_path: Path) -> None:
    """Closing returns once the reading thread has ended: a thread left inside OpenCV's read
    while the program exits can crash it (`cardtable serve` stopped by Ctrl-C)."""
    path = tmp_path / "long.avi"
    _write_video(path, 60)
    before = {t for t in threading.enumerate() if t.name == "camera-reader"}
    cams, opener = paced(30)
    gen = live_frames(str(path), retry_delay=0, on_event=lambda m: None,
                      opener=opener)  # type: ignore[arg-type]
    next(gen)
    gen.close()
    assert cams[0].released.is_set()
    assert not [t for t in threading.enumerate() if t.name == "camera-reader" and t not in before]
