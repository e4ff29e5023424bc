"""Table geometry: the homography between camera pixels and the mat's millimetres, and the zones.

Everything downstream (card size, zones, columns) is easiest in a top-down, metric view, so the
camera image is mapped onto the mat's coordinate frame (millimetres, origin at the mat's top-left,
x to the right, y down). The mapping comes from the ArUco markers printed in the mat's corners
(re-found every few frames, so a nudged camera heals itself) or from four corners given once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.photo_size import working_copy

ARUCO_DICT = cv2.aruco.DICT_4X4_50
"""The fixed marker dictionary of every cardtable mat (small markers, robust to blur)."""


class GeometryError(ValueError):
    """The table cannot be located: too few markers seen, or corners that make no quadrilateral."""


@dataclass(frozen=True, slots=True)
class Zone:
    """A named rectangle of the mat in millimetres: ``x, y`` top-left, ``w, h`` size."""

    name: str
    x: float
    y: float
    w: float
    h: float

    def contains(self, point: tuple[float, float] | np.ndarray) -> bool:
        px, py = float(point[0]), float(point[1])
        return self.x <= px <= self.x + self.w and self.y <= py <= self.y + self.h


@dataclass(frozen=True, slots=True)
class MatSpec:
    """Layout of the printable mat: size, corner markers and the zones of the observation format.

    Markers 0, 1, 2, 3 sit in the top-left, top-right, bottom-right, bottom-left corners. The
    default work area holds 13 columns of 4 UNO/standard cards side by side (52 cards) and more in
    fanned columns; the discard pile and the side area lie along the bottom edge.
    """

    width: float = 1000.0
    height: float = 580.0
    marker: float = 50.0
    margin: float = 10.0
    zones: tuple[Zone, ...] = field(
        default=(
            Zone("work", 70.0, 10.0, 860.0, 410.0),
            Zone("discard", 70.0, 430.0, 180.0, 140.0),
            Zone("side", 260.0, 430.0, 670.0, 140.0),
        )
    )

    def marker_corners(self, marker_id: int) -> np.ndarray:
        """The four corners (mm) of a marker, in ArUco order: clockwise from its top-left."""
        m, s = self.margin, self.marker
        x0, y0 = {
            0: (m, m),
            1: (self.width - m - s, m),
            2: (self.width - m - s, self.height - m - s),
            3: (m, self.height - m - s),
        }[marker_id]
        return np.array([[x0, y0], [x0 + s, y0], [x0 + s, y0 + s], [x0, y0 + s]], np.float32)

    def corners(self) -> np.ndarray:
        """The mat's own corners (mm), clockwise from top-left."""
        w, h = self.width, self.height
        return np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)

    def zone(self, name: str) -> Zone:
        for z in self.zones:
            if z.name == name:
                return z
        raise KeyError(f"no zone named {name!r}; the mat has {[z.name for z in self.zones]}")

    def zone_of(self, point: tuple[float, float] | np.ndarray) -> str | None:
        for z in self.zones:
            if z.contains(point):
                return z.name
        return None


DEFAULT_MAT = MatSpec()


def _detector() -> cv2.aruco.ArucoDetector:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(ARUCO_DICT), params)


def find_markers(image: np.ndarray) -> dict[int, np.ndarray]:
    """Marker id → its four image corners (clockwise from its top-left), ids 0–3 only.

    WHY on a copy of at most :data:`vision.photo_size.PHOTO_SIDE` px, the corners refined on
    the image itself: the search's cost grows with the pixels (about 0.1 s for a phone's
    12 MP photo, against 0.01 s at 1280 × 720) and a mat's markers are large at any size a
    camera frames the mat at; the refinement gives back the full image's precision."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    small, f = working_copy(gray)
    corners, ids, _ = _detector().detectMarkers(small)
    found: dict[int, np.ndarray] = {}
    if ids is None:
        return found
    for c, i in zip(corners, ids.ravel(), strict=True):
        if 0 <= int(i) <= 3:
            found[int(i)] = c.reshape(4, 2).astype(np.float32)
    if f < 1.0:
        found = {i: _refined(gray, (c + 0.5) / f - 0.5, f) for i, c in found.items()}
    return found


def _refined(gray: np.ndarray, corners: np.ndarray, f: float) -> np.ndarray:
    """Marker corners found on a copy reduced by ``f``, refined on the full image ``gray``
    (a window of about one and a half of the copy's pixels each way)."""
    half = max(3, round(1.5 / f))
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.01)
    pts = corners.reshape(-1, 1, 2).astype(np.float32)
    return cv2.cornerSubPix(gray, pts, (half, half), (-1, -1), criteria).reshape(4, 2)


@dataclass(frozen=True, slots=True, eq=False)
class TableGeometry:
    """Image pixels ↔ mat millimetres. ``H`` maps image points to mat points."""

    H: np.ndarray
    mat: MatSpec = DEFAULT_MAT
    markers_seen: int = 0
    H_inv: np.ndarray = field(init=False, repr=False)
    """Mat millimetres → image pixels: inverted once, not for every card placed."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "H_inv", np.linalg.inv(self.H))

    @classmethod
    def from_markers(cls, image: np.ndarray, mat: MatSpec = DEFAULT_MAT) -> TableGeometry:
        """Locate the mat by its corner markers; two of the four are enough (a hand may cover)."""
        found = find_markers(image)
        if len(found) < 2:
            raise GeometryError(
                f"found {len(found)} of the mat's 4 corner markers (need 2); make sure the mat "
                "is in view, lit and not covered, or give its corners with --corners"
            )
        src = np.concatenate([found[i] for i in sorted(found)])
        dst = np.concatenate([mat.marker_corners(i) for i in sorted(found)])
        H, _ = cv2.findHomography(src, dst, 0)
        if H is None:
            raise GeometryError("the markers seen give no usable homography; move the camera")
        return cls(H, mat, len(found))

    @classmethod
    def from_corners(
        cls, corners: np.ndarray | list[float] | list[list[float]], mat: MatSpec = DEFAULT_MAT
    ) -> TableGeometry:
        """The mat's (or table area's) four image corners, clockwise from its top-left."""
        pts = np.asarray(corners, np.float32).reshape(-1, 2)
        if pts.shape != (4, 2):
            raise GeometryError(f"need 4 corners (8 numbers x,y,...), got {pts.size} numbers")
        area = cv2.contourArea(pts)
        if area <= 1.0 or not cv2.isContourConvex(pts):
            raise GeometryError(
                "the 4 corners make no convex quadrilateral; give them clockwise from top-left"
            )
        if _signed_area(pts) < 0:
            raise GeometryError("the corners run anticlockwise; give them clockwise from top-left")
        return cls(cv2.getPerspectiveTransform(pts, mat.corners()), mat, 0)

    def to_mat(self, points: np.ndarray) -> np.ndarray:
        """Image pixels (N, 2) → mat millimetres (N, 2)."""
        pts = np.asarray(points, np.float32).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.H).reshape(-1, 2)

    def to_image(self, points: np.ndarray) -> np.ndarray:
        """Mat millimetres (N, 2) → image pixels (N, 2)."""
        pts = np.asarray(points, np.float32).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.H_inv).reshape(-1, 2)

    def topdown_transform(self, px_per_mm: float) -> np.ndarray:
        """The homography from image pixels to a top-down view at ``px_per_mm``."""
        return np.diag([px_per_mm, px_per_mm, 1.0]) @ self.H

    def warp(self, image: np.ndarray, px_per_mm: float) -> np.ndarray:
        """The top-down view of the mat at ``px_per_mm`` pixels per millimetre."""
        size = (round(self.mat.width * px_per_mm), round(self.mat.height * px_per_mm))
        return cv2.warpPerspective(image, self.topdown_transform(px_per_mm), size,
                                   flags=cv2.INTER_LINEAR)

    def px_per_mm(self, image_point: np.ndarray | None = None) -> float:
        """The camera's resolution on the mat near a point (default: the mat's centre)."""
        c = (np.array([[self.mat.width / 2, self.mat.height / 2]], np.float32)
             if image_point is None else self.to_mat(np.asarray(image_point).reshape(1, 2)))
        pts = np.concatenate([c, c + [[10.0, 0.0]], c + [[0.0, 10.0]]])
        img = self.to_image(pts)
        return float((np.linalg.norm(img[1] - img[0]) + np.linalg.norm(img[2] - img[0])) / 20.0)


def _signed_area(pts: np.ndarray) -> float:
    """Shoelace area, positive for clockwise order in image coordinates (y down)."""
    x, y = pts[:, 0], pts[:, 1]
    return float(0.5 * (np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def parse_corners(text: str) -> np.ndarray:
    """``"x,y,x,y,x,y,x,y"`` (the ``--corners`` option) → (4, 2) array, with a clear error."""
    try:
        values = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError as exc:
        raise GeometryError(f"--corners: {text!r} is not 8 numbers x,y,x,y,...") from exc
    if len(values) != 8:
        raise GeometryError(f"--corners needs 8 numbers (4 corners x,y), got {len(values)}")
    return np.array(values, np.float32).reshape(4, 2)
