"""Frame sources: webcam, video file, folder of images, network stream — one generator interface.

Every source yields frozen :class:`Frame` objects, so the rest of the pipeline never knows where
pixels came from. Failures the user can fix (no camera, unreadable file) raise
:class:`FrameSourceError`, an ``OSError`` whose message says what to do. Live sources (cameras and
streams) survive a disconnect: it is reported through ``on_event`` and the capture is reopened a
bounded number of times before giving up, because a game must not die when a USB cable wiggles;
and they give their newest frame, read in a thread of their own, because a tracker slower than
the camera must see the table as it is, not as a buffer kept it (:func:`live_frames`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff"})
VIDEO_SUFFIXES = frozenset({".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg"})
STREAM_PREFIXES = ("rtsp://", "rtmp://", "http://", "https://", "udp://", "tcp://")


class FrameSourceError(OSError):
    """A frame source that cannot be opened or read; the message says what to do about it."""


@dataclass(frozen=True, slots=True, eq=False)
class Frame:
    """One image from a source. ``image`` is BGR uint8 and read-only (frames are shared)."""

    image: np.ndarray
    index: int
    timestamp: float
    source: str
    name: str = field(default="")

    def __post_init__(self) -> None:
        self.image.setflags(write=False)

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return int(self.image.shape[1]), int(self.image.shape[0])


def _freeze(image: np.ndarray, index: int, source: str, name: str = "") -> Frame:
    return Frame(np.ascontiguousarray(image), index, time.time(), source, name)


def read_image(path: str | Path) -> np.ndarray:
    """Read one image as BGR, or raise :class:`FrameSourceError` saying why it cannot be read."""
    p = Path(path)
    if not p.exists():
        raise FrameSourceError(f"{p}: no such file; check the path")
    if p.is_dir():
        raise FrameSourceError(f"{p}: is a folder, not an image")
    data = np.fromfile(str(p), dtype=np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise FrameSourceError(f"{p}: not a readable image (PNG, JPEG, BMP, WebP or TIFF expected)")
    return image


def list_images(folder: str | Path) -> list[Path]:
    """The images of a folder, sorted by name (the order ``cardtable detect`` promises)."""
    return sorted(
        p for p in Path(folder).iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
    )


def image_folder_frames(folder: str | Path) -> Iterator[Frame]:
    """Frames from a folder of images in name order; unreadable files are skipped with a warning."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FrameSourceError(f"{folder}: not a folder of images")
    paths = list_images(folder)
    if not paths:
        raise FrameSourceError(f"{folder}: holds no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
    index = 0
    for path in paths:
        try:
            image = read_image(path)
        except FrameSourceError as exc:
            log.warning("skipping %s", exc)
            continue
        yield _freeze(image, index, str(folder), path.name)
        index += 1


def video_file_frames(path: str | Path) -> Iterator[Frame]:
    """Frames of a video file until its end."""
    path = Path(path)
    if not path.is_file():
        raise FrameSourceError(f"{path}: no such video file; check the path")
    cap = cv2.VideoCapture(str(path))
    try:
        ok, image = cap.read() if cap.isOpened() else (False, None)
        if not ok:
            raise FrameSourceError(
                f"{path}: cannot decode this video; convert it to MP4 (H.264) or AVI (MJPG)"
            )
        index = 0
        while ok:
            yield _freeze(image, index, str(path))
            index += 1
            ok, image = cap.read()
    finally:
        cap.release()


def live_frames(
    target: int | str,
    *,
    retries: int = 5,
    retry_delay: float = 1.0,
    on_event: Callable[[str], None] | None = None,
    opener: Callable[[int | str], cv2.VideoCapture] = cv2.VideoCapture,
    newest: bool = True,
) -> Iterator[Frame]:
    """Frames from a camera index or stream URL, reconnecting after a lost connection.

    A failed read is reported through ``on_event`` (default: a logged warning) and the capture is
    reopened up to ``retries`` times, ``retry_delay`` seconds apart; frame indices keep counting
    so downstream stability filters see one continuous stream.

    ``newest`` (the default): the capture is read in a thread as fast as it delivers, and each
    frame asked for is the newest one not yet given; those in between are dropped (their
    indices are skipped). WHY: a reader slower than the camera would otherwise get what a
    driver's buffer or a stream's queue kept, captured when the last read ended (a webcam) or
    ever longer ago (a network stream's backlog grows without end): the table as it was, not as
    it is. ``newest=False`` gives every frame in order, each read when asked for.
    """
    frames = _every_live_frame(target, retries, retry_delay,
                               on_event or (lambda msg: log.warning("%s", msg)), opener)
    return _newest_of(frames) if newest else frames


def _every_live_frame(target: int | str, retries: int, retry_delay: float,
                      report: Callable[[str], None],
                      opener: Callable[[int | str], cv2.VideoCapture]) -> Iterator[Frame]:
    """:func:`live_frames` with ``newest=False``."""
    label = f"camera {target}" if isinstance(target, int) else str(target)
    cap = opener(target)
    if not cap.isOpened():
        cap.release()
        if isinstance(target, int):
            raise FrameSourceError(
                f"no camera at index {target}: plug one in, check it is not used by another "
                f"program and that you may read /dev/video{target}, or give a video file or a "
                "folder of images instead"
            )
        raise FrameSourceError(f"cannot open stream {target}: check the URL and the network")
    index = 0
    try:
        while True:
            ok, image = cap.read()
            if ok and image is not None:
                yield _freeze(image, index, label)
                index += 1
                continue
            cap.release()
            report(f"{label}: connection lost after frame {index}; reconnecting")
            for attempt in range(1, retries + 1):
                time.sleep(retry_delay)
                cap = opener(target)
                if cap.isOpened():
                    ok, image = cap.read()
                    if ok and image is not None:
                        report(f"{label}: reconnected (attempt {attempt})")
                        yield _freeze(image, index, label)
                        index += 1
                        break
                cap.release()
            else:
                raise FrameSourceError(
                    f"{label}: lost and not back after {retries} attempts; check the cable or "
                    "network, then restart"
                )
    finally:
        cap.release()


def close_source(frames: object) -> None:
    """Close a frame source that can be closed (the generators of :func:`open_source`): a live
    source's reading thread stops and its capture is released before this returns. WHY: a
    ``for`` loop over a generator does not close it, and a capture thread still reading while
    the program exits can crash it (``cardtable serve`` stopped by Ctrl-C, CI of the
    eighty-eighth session)."""
    close = getattr(frames, "close", None)
    if callable(close):
        close()


CLOSE_WAIT = 5.0
"""Seconds closing a live source waits for its reading thread to release the capture (it
notices the close after its next frame, a frame period; a stalled stream may take longer, and
the thread, a daemon, is then left behind)."""


def _newest_of(frames: Iterator[Frame]) -> Iterator[Frame]:
    """``frames`` pumped by a thread of their own; each ``next`` waits for and gives the newest
    frame not yet given. The source's end, or its error (no camera, lost for good), comes after
    the last frame it gave. Closing this generator stops the thread, which closes ``frames``
    (and so releases the capture) in the thread that reads them, and waits for that
    (:data:`CLOSE_WAIT`)."""
    ready = threading.Condition()
    newest: list[Frame] = []  # at most one: the frame not yet given
    ended: list[BaseException | None] = []  # once the source ends: its error, or None
    stop = threading.Event()

    def pump() -> None:
        error: BaseException | None = None
        try:
            for frame in frames:
                with ready:
                    newest[:] = [frame]
                    ready.notify()
                if stop.is_set():
                    break
        except BaseException as exc:  # handed to the reader, raised there
            error = exc
        finally:
            frames.close()
            with ready:
                ended.append(error)
                ready.notify()

    thread = threading.Thread(target=pump, name="camera-reader", daemon=True)
    thread.start()
    try:
        while True:
            with ready:
                ready.wait_for(lambda: bool(newest or ended))
                if newest:
                    frame = newest.pop()
                elif ended[0] is not None:
                    raise ended[0]
                else:
                    return
            yield frame
    finally:
        stop.set()
        # the capture is released before the reader goes on (or the program exits): a
        # thread left inside OpenCV's read while Python shuts down can crash the process
        thread.join(CLOSE_WAIT)


def open_source(spec: int | str | Path, **live_options: object) -> Iterator[Frame]:
    """The frame generator for ``spec``: a camera index, stream URL, video file or image folder.

    A single image file is accepted too (one frame), so every command takes the same inputs.
    """
    if isinstance(spec, int) or (isinstance(spec, str) and spec.strip().isdigit()):
        return live_frames(int(spec), **live_options)  # type: ignore[arg-type]
    text = str(spec)
    if text.lower().startswith(STREAM_PREFIXES):
        return live_frames(text, **live_options)  # type: ignore[arg-type]
    path = Path(text)
    if path.is_dir():
        return image_folder_frames(path)
    if not path.exists():
        raise FrameSourceError(
            f"{path}: no such file or folder; give a camera index (0), a video file, a folder "
            "of images or a stream URL"
        )
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        image = read_image(path)
        return iter([_freeze(image, 0, str(path), path.name)])
    if suffix in VIDEO_SUFFIXES:
        return video_file_frames(path)
    raise FrameSourceError(
        f"{path}: unknown kind of file (suffix {suffix or 'none'}); use an image or a video"
    )
