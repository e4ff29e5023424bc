"""Mat, markers and homography: the printed mat is found again, corners map exactly, bad input."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.geometry import (
    DEFAULT_MAT,
    GeometryError,
    TableGeometry,
    find_markers,
    parse_corners,
)
from vision.mat import encode_pdf, render_mat


@pytest.fixture(scope="module")
def mat_image() -> np.ndarray:
    return render_mat(DEFAULT_MAT, 1.5)


def test_mat_has_four_markers_and_maps_to_millimetres(mat_image: np.ndarray) -> None:
    assert sorted(find_markers(mat_image)) == [0, 1, 2, 3]
    g = TableGeometry.from_markers(mat_image)
    px = np.array([[0, 0], [1500, 870], [750, 435]], np.float32)
    assert g.to_mat(px) == pytest.approx(np.array([[0, 0], [1000, 580], [500, 290]]), abs=1.0)
    assert g.px_per_mm() == pytest.approx(1.5, rel=0.02)


def _view(mat_image: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h, w = mat_image.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    M = cv2.getPerspectiveTransform(src, dst.astype(np.float32))
    return cv2.warpPerspective(mat_image, M, (1280, 720), borderValue=(60, 90, 120)), M


@pytest.mark.parametrize("cover", [None, 0, 2])
def test_homography_from_markers_under_perspective(mat_image: np.ndarray, cover: int | None
                                                    ) -> None:
    dst = np.array([[120, 60], [1180, 90], [1230, 690], [60, 650]], np.float32)
    img, _ = _view(mat_image, dst)
    if cover is not None:  # a hand over one marker: three are enough
        c = find_markers(img)[cover].mean(axis=0).astype(int)
        cv2.circle(img, tuple(int(v) for v in c), 60, (150, 170, 220), -1)
    g = TableGeometry.from_markers(img)
    assert g.markers_seen == (4 if cover is None else 3)
    assert g.to_image(DEFAULT_MAT.corners()) == pytest.approx(dst, abs=2.5)


@pytest.mark.parametrize("scale", [1.5, 2.0, 3.15])
def test_markers_of_a_large_photo_are_found_reduced_and_refined(mat_image: np.ndarray,
                                                                scale: float) -> None:
    """A 1920 x 1080 camera's frame (1.5) or a phone's photo (4032 px wide at 3.15) of the mat:
    the markers are searched on a copy of at most 1280 px and refined on the image."""
    dst = np.array([[120, 60], [1180, 90], [1230, 690], [60, 650]], np.float32) * scale
    h, w = mat_image.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    M = cv2.getPerspectiveTransform(src, dst)
    img = cv2.warpPerspective(mat_image, M, (round(1280 * scale), round(720 * scale)),
                              borderValue=(60, 90, 120))
    g = TableGeometry.from_markers(img)
    assert g.markers_seen == 4
    assert g.to_image(DEFAULT_MAT.corners()) == pytest.approx(dst, abs=2.5)


def test_corners_given_once_equal_markers(mat_image: np.ndarray) -> None:
    dst = np.array([[100, 50], [1200, 80], [1250, 700], [40, 660]], np.float32)
    img, _ = _view(mat_image, dst)
    a = TableGeometry.from_corners(dst)
    b = TableGeometry.from_markers(img)
    pts = np.array([[500, 290], [100, 100], [900, 500]], np.float32)
    assert a.to_image(pts) == pytest.approx(b.to_image(pts), abs=2.5)
    assert a.warp(img, 0.5).shape == (290, 500, 3)


@pytest.mark.parametrize(
    ("corners", "message"),
    [
        ([[0, 0], [10, 0], [10, 10]], "need 4 corners"),
        ([[0, 0], [10, 10], [10, 0], [0, 10]], "no convex"),
        ([[0, 0], [0, 10], [10, 10], [10, 0]], "anticlockwise"),
        ([[0, 0], [0, 0], [0, 0], [0, 0]], "no convex"),
    ],
)
def test_bad_corners(corners: list, message: str) -> None:
    with pytest.raises(GeometryError, match=message):
        TableGeometry.from_corners(corners)


@pytest.mark.parametrize(
    ("text", "ok"),
    [("1,2,3,4,5,6,7,8", True), ("1;2;3;4;5;6;7;8", True), ("1,2,3", False), ("a,b", False),
     ("", False)],
)
def test_parse_corners(text: str, ok: bool) -> None:
    if ok:
        assert parse_corners(text).shape == (4, 2)
    else:
        with pytest.raises(GeometryError):
            parse_corners(text)


def test_no_markers_is_a_clear_error() -> None:
    with pytest.raises(GeometryError, match="found 0 of the mat's 4 corner markers"):
        TableGeometry.from_markers(np.full((200, 300, 3), 128, np.uint8))


def test_zones_and_zone_of() -> None:
    assert DEFAULT_MAT.zone_of((500, 200)) == "work"
    assert DEFAULT_MAT.zone_of((150, 500)) == "discard"
    assert DEFAULT_MAT.zone_of((600, 500)) == "side"
    assert DEFAULT_MAT.zone_of((5, 5)) is None
    with pytest.raises(KeyError, match="no zone named"):
        DEFAULT_MAT.zone("hand")


def test_pdf_is_a_one_page_pdf_of_the_mat_size(mat_image: np.ndarray) -> None:
    pdf = encode_pdf(mat_image, 1000, 580)
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    assert b"/MediaBox [0 0 2834.65 1644.09]" in pdf
    assert b"/DCTDecode" in pdf


@pytest.mark.parametrize(
    ("argv", "code", "check"),
    [
        (["mat", "-o", "{d}/mat.png", "--dpi", "40"], 0, "png"),
        (["mat", "-o", "{d}/mat.pdf", "--dpi", "30"], 0, "pdf"),
        (["mat", "-o", "{d}/mat.gif"], 2, None),
        (["mat", "-o", "{d}/mat.png", "--dpi", "5"], 2, None),
    ],
)
def test_mat_command(tmp_path: Path, argv: list[str], code: int, check: str | None,
                     capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    assert main([a.format(d=tmp_path) for a in argv]) == code
    if check == "png":
        img = cv2.imread(str(tmp_path / "mat.png"))
        assert sorted(find_markers(img)) == [0, 1, 2, 3]
    elif check == "pdf":
        assert (tmp_path / "mat.pdf").read_bytes().startswith(b"%PDF")
    else:
        assert "cardtable: error:" in capsys.readouterr().err
