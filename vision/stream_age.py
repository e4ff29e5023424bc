"""How old a live frame is when a slow reader gets it: a real HTTP MJPEG stream (what a phone's
camera app serves) on this machine, read through :func:`vision.sources.live_frames` by a reader
that takes as long per frame as the pipeline does on a busy table.

WHY a real stream: what a reader slower than its camera is given depends on the buffers between
them (OpenCV's FFmpeg reader, the socket's), which only a real connection has. The server
stamps each frame with its number on a camera clock that never waits (a sensor runs on while a
client is slow); the age of a frame read is the time since that clock produced it.

    python -m vision.stream_age --work 0.4 --reads 25
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import cv2
import numpy as np

from vision.sources import live_frames

BITS = 16
SQUARE = 12  # px per bit: a JPEG keeps a square this size black or white


def stamped(number: int, size: tuple[int, int] = (320, 240)) -> np.ndarray:
    """A grey frame whose top row of squares spells ``number`` in binary (white = 1)."""
    image = np.full((size[1], size[0], 3), 128, np.uint8)
    for bit in range(BITS):
        value = 255 if number >> bit & 1 else 0
        image[:SQUARE, bit * SQUARE:(bit + 1) * SQUARE] = value
    return image


def stamp_of(image: np.ndarray) -> int:
    """The number :func:`stamped` wrote into ``image``."""
    centre = SQUARE // 2
    return sum(1 << bit for bit in range(BITS)
               if image[centre, bit * SQUARE + centre].mean() > 128)


@dataclass
class Camera:
    """An MJPEG stream served on localhost at ``fps``, its frames numbered by a clock started
    at ``started``: frame ``k`` exists from ``started + k / fps`` and shows ``picture(k)``
    (default :func:`stamped`; the tests also serve a recorded table this way)."""

    fps: float
    picture: Callable[[int], np.ndarray] = stamped
    started: float = 0.0
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/video.mjpg"

    def produced(self, number: int) -> float:
        return self.started + number / self.fps

    def __enter__(self) -> Camera:
        camera = self

        class Stream(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self.send_response(200)
                self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
                self.end_headers()
                try:
                    for jpeg in camera._jpegs():
                        self.wfile.write(b"--frame\r\nContent-Type: image/jpeg\r\n"
                                         + f"Content-Length: {len(jpeg)}\r\n\r\n".encode()
                                         + jpeg + b"\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the reader hung up

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Stream)
        self.server.daemon_threads = True
        self.started = time.perf_counter()
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def _jpegs(self) -> Iterator[bytes]:
        """The frame the clock is at now, each time the clock moves on (frames it passed while
        the socket was full are never sent: the sensor does not wait)."""
        last = -1
        while True:
            number = int((time.perf_counter() - self.started) * self.fps)
            if number == last:
                time.sleep(max(0.0, self.produced(number + 1) - time.perf_counter()))
                continue
            last = number
            ok, data = cv2.imencode(".jpg", self.picture(number))
            if not ok:
                raise OSError("could not encode a stream frame")
            yield data.tobytes()


def ages(camera: Camera, newest: bool, work: float, reads: int) -> list[float]:
    """Seconds from each frame's making to its reading, over ``reads`` frames read by a reader
    that works ``work`` seconds on each."""
    out = []
    frames = live_frames(camera.url, newest=newest, retries=0)
    try:
        for _ in range(reads):
            frame = next(frames)
            out.append(time.perf_counter() - camera.produced(stamp_of(frame.image)))
            time.sleep(work)
    finally:
        frames.close()  # type: ignore[attr-defined]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vision.stream_age", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fps", type=float, default=15.0, help="the camera's frame rate (15)")
    p.add_argument("--work", type=float, default=0.4,
                   help="the reader's seconds per frame (0.4)")
    p.add_argument("--reads", type=int, default=25, help="frames read each way (25)")
    args = p.parse_args(argv)
    for newest in (False, True):
        with Camera(args.fps) as camera:
            seen = ages(camera, newest, args.work, args.reads)
        print(f"live_frames(newest={newest}): {args.reads} frames of a {args.fps:g} frames/s "
              f"stream read every {args.work:g} s: age median {statistics.median(seen):.2f} s, "
              f"last {seen[-1]:.2f} s, max {max(seen):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
