"""vision.stream_age: a real MJPEG stream over HTTP on localhost, read through live_frames by a
slow reader: with ``newest`` the frames are fresh, without they grow ever older."""

from __future__ import annotations

import cv2
import pytest

from vision.stream_age import Camera, ages, stamp_of, stamped


@pytest.mark.parametrize("number", [0, 1, 2, 1000, 4097, 65535])
def test_a_stamp_survives_jpeg(number: int) -> None:
    ok, data = cv2.imencode(".jpg", stamped(number))
    assert ok
    assert stamp_of(cv2.imdecode(data, cv2.IMREAD_COLOR)) == number


def test_a_slow_reader_of_a_stream_sees_fresh_frames_only_with_newest() -> None:
    with Camera(fps=15) as camera:
        backlog = ages(camera, newest=False, work=0.2, reads=8)
    with Camera(fps=15) as camera:
        fresh = ages(camera, newest=True, work=0.2, reads=8)
    # in order, each frame is the one after the last: 0.2 s of work costs 0.13 s of age
    assert backlog[-1] > backlog[0] + 0.6
    assert max(fresh) < 0.5 < backlog[-1]
