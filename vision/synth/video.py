"""The table renderer: a scripted game (observation records) → a realistic camera video.

Why: the dashboard, the demo and the end-to-end tests need videos of whole protocol turns whose
truth is known, and no one can film a hundred UNO turns by hand. Each ``view`` record of a script
becomes the table as the camera sees it: the printed mat (``vision.mat``), the project's own card
faces (``vision.synth.faces``) laid at the cells of the observation format with a hand's
imprecision, a camera looking down at an angle, light that drifts, hands that reach in to change
cards, sensor noise. A ``shuffle_done`` event becomes a blind window: a cloth over the work area
and hands moving on it, so the video never holds what a shuffle did (NOTES.md item 14).

Output: ``video.mp4``, ``events.jsonl`` (setup and operator events, ``t`` in video seconds: what
a recording made with ``--record`` holds) and ``script.jsonl`` (every view with the time from
which it lies still: the truth the end-to-end tests compare verdicts with).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import cv2
import numpy as np

from protocol_runner.observations import EMPTY, Event, Record, Setup, View, read_records
from vision.geometry import DEFAULT_MAT, MatSpec
from vision.mat import render_mat
from vision.synth.faces import canonical_face

WORLD_MARGIN = 140.0
"""Millimetres of wooden table drawn around the mat."""
PX_PER_MM = 1.6
"""Resolution of the top-down world canvas (a 57 mm card is 91 px wide before the camera)."""
CARD = (57.0, 88.0)
SIDE_BY_SIDE_PITCH = 66.0
MIN_PITCH = (13.0, 22.0)
"""Smallest column and row offsets when cards overlap: a corner index still shows."""


class RenderError(ValueError):
    """A script the renderer cannot draw (no views, a layout that does not fit the mat)."""


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a cell's card lies on the mat: centre in millimetres and rotation in degrees."""

    zone: str
    column: int
    row: int
    centre: tuple[float, float]
    angle: float


def cell_centres(zone_columns: Sequence[int], zone: str, mat: MatSpec = DEFAULT_MAT
                 ) -> dict[tuple[int, int], tuple[float, float]]:
    """Centres (mm) of the cells of a zone holding columns of the given lengths.

    Columns run left to right and wrap into bands top to bottom; when they do not fit side by
    side, later columns overlap earlier ones from the right and lower rows overlap upper ones, so
    that every card's top-left corner index stays visible, as people fan cards on a small table.
    """
    box = mat.zone(zone)
    n, rows = len(zone_columns), max(zone_columns, default=0)
    if n == 0 or rows == 0:
        return {}
    w, h = CARD
    pad = 6.0 if zone == "work" else 3.0
    min_y = MIN_PITCH[1] if zone == "work" else 16.0  # the side strip is only 140 mm deep
    for bands in range(1, 8):
        per_band = -(-n // bands)
        pitch_x = min(SIDE_BY_SIDE_PITCH, (box.w - 2 * pad - w) / max(per_band - 1, 1))
        band_h = (box.h - 2 * pad) / bands
        pitch_y = min(h + 6.0, (band_h - h - 4.0) / max(rows - 1, 1)) if rows > 1 else 0.0
        if pitch_x >= MIN_PITCH[0] and (rows == 1 or pitch_y >= min_y) \
                and band_h >= h + 4.0:
            break
    else:
        raise RenderError(f"{n} columns of {rows} cards do not fit the {zone} area of the mat")
    used_w = (per_band - 1) * pitch_x + w
    x0 = box.x + (box.w - used_w) / 2 + w / 2
    out = {}
    for c, length in enumerate(zone_columns):
        band, k = divmod(c, per_band)
        for r in range(length):
            out[(c + 1, r + 1)] = (x0 + k * pitch_x, box.y + pad + band * band_h + h / 2
                                   + r * pitch_y)
    return out


def place_view(view: View, mat: MatSpec = DEFAULT_MAT, seed: int = 0) -> list[Placement]:
    """Every non-empty cell of ``view`` placed on the mat, with a hand's small offsets."""
    out: list[Placement] = []
    for zone in ("work", "side"):
        columns = view.cells(zone)
        centres = cell_centres([len(c) for c in columns], zone, mat)
        for (c, r), (x, y) in centres.items():
            if columns[c - 1][r - 1].code is None:
                continue
            jitter = np.random.default_rng([seed, 1 if zone == "work" else 2, c, r])
            dx, dy = jitter.normal(0, 1.2, 2)
            out.append(Placement(zone, c, r, (x + dx, y + dy), float(jitter.normal(0, 1.8))))
    if view.discard.code is not None:
        z = mat.zone("discard")
        out.append(Placement("discard", 1, 1, (z.x + z.w / 2, z.y + z.h / 2), 7.0))
    return out


def cell_code(view: View, p: Placement) -> str:
    if p.zone == "discard":
        return str(view.discard.code)
    return str(view.cells(p.zone)[p.column - 1][p.row - 1].code)


# ---- drawing -----------------------------------------------------------------------------------

@cache
def _face(code: str, size: tuple[int, int]) -> np.ndarray:
    return canonical_face(code, size)


@cache
def _card_alpha(size: tuple[int, int]) -> np.ndarray:
    w, h = size
    mask = np.zeros((h, w), np.uint8)
    r = max(2, int(0.07 * w))
    cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


@cache
def _world_base(mat: MatSpec) -> np.ndarray:
    """Wooden table with the mat on it, top-down."""
    s = PX_PER_MM
    m = WORLD_MARGIN
    w, h = round((mat.width + 2 * m) * s), round((mat.height + 2 * m) * s)
    rng = np.random.default_rng(7)
    grain = cv2.resize(rng.normal(0, 1, (h // 16 + 1, 6)).astype(np.float32), (w, h),
                       interpolation=cv2.INTER_CUBIC)
    streaks = np.sin(np.linspace(0, 90, h))[:, None] * 0.3 + grain
    wood = np.stack([40 + 10 * streaks, 75 + 14 * streaks, 115 + 18 * streaks], axis=-1)
    world = np.clip(wood, 0, 255).astype(np.uint8)
    matimg = render_mat(mat, s)
    ox, oy = round(m * s), round(m * s)
    world[oy:oy + matimg.shape[0], ox:ox + matimg.shape[1]] = matimg
    return world


def _to_world(point_mm: tuple[float, float]) -> tuple[float, float]:
    return ((point_mm[0] + WORLD_MARGIN) * PX_PER_MM, (point_mm[1] + WORLD_MARGIN) * PX_PER_MM)


def _paste_card(world: np.ndarray, face: np.ndarray, centre: tuple[float, float],
                angle: float) -> None:
    h, w = face.shape[:2]
    rot = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    diag = int(np.hypot(w, h)) + 8
    cx, cy = centre
    x0, y0 = int(cx - diag / 2), int(cy - diag / 2)
    rot[0, 2] += cx - x0 - w / 2
    rot[1, 2] += cy - y0 - h / 2
    alpha = cv2.warpAffine(_card_alpha((w, h)), rot, (diag, diag), flags=cv2.INTER_LINEAR)
    card = cv2.warpAffine(face, rot, (diag, diag), flags=cv2.INTER_LINEAR)
    H, W = world.shape[:2]
    xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + diag, W), min(y0 + diag, H)
    if xa >= xb or ya >= yb:
        return
    roi = world[ya:yb, xa:xb].astype(np.float32)
    a2 = alpha[ya - y0:yb - y0, xa - x0:xb - x0].astype(np.float32) / 255.0
    shadow = np.roll(np.roll(cv2.GaussianBlur(a2, (0, 0), 3), 3, 0), 3, 1)[..., None]
    a = a2[..., None]
    roi *= 1.0 - 0.35 * shadow
    roi = roi * (1 - a) + card[ya - y0:yb - y0, xa - x0:xb - x0].astype(np.float32) * a
    world[ya:yb, xa:xb] = np.clip(roi, 0, 255).astype(np.uint8)


def render_world(view: View, mat: MatSpec = DEFAULT_MAT, seed: int = 0,
                 covered: bool = False) -> np.ndarray:
    """The table top-down with ``view``'s cards on it; ``covered`` lays a cloth over the work
    and side areas (a blind window: what lies under it is not drawn at all)."""
    world = _world_base(mat).copy()
    size = (round(CARD[0] * PX_PER_MM), round(CARD[1] * PX_PER_MM))
    if covered:
        rng = np.random.default_rng(seed)
        for name in ("work", "side"):
            z = mat.zone(name)
            p0 = _to_world((z.x - 15, z.y - 8))
            p1 = _to_world((z.x + z.w + 15, z.y + z.h + 8))
            x0, y0, x1, y1 = (int(v) for v in (*p0, *p1))
            folds = cv2.resize(rng.normal(0, 1, (6, 12)).astype(np.float32), (x1 - x0, y1 - y0),
                               interpolation=cv2.INTER_CUBIC)
            cloth = np.stack([95 + 18 * folds, 40 + 9 * folds, 35 + 8 * folds], -1)
            world[y0:y1, x0:x1] = np.clip(cloth, 0, 255).astype(np.uint8)
        placements = [p for p in place_view(view, mat, seed) if p.zone == "discard"]
    else:
        placements = place_view(view, mat, seed)
    for p in placements:
        _paste_card(world, _face(cell_code(view, p), size), _to_world(p.centre), p.angle)
    return world


@dataclass(frozen=True)
class Camera:
    """Where the mat's corners appear in the video frame (a phone above the table, tilted)."""

    size: tuple[int, int] = (1280, 720)
    mat_corners: tuple[tuple[float, float], ...] = ((170, 70), (1110, 62), (1236, 668), (44, 676))
    mat: MatSpec = DEFAULT_MAT

    @property
    def world_to_image(self) -> np.ndarray:
        src = np.float32([_to_world(tuple(p)) for p in self.mat.corners()])  # type: ignore[misc]
        return cv2.getPerspectiveTransform(src, np.float32(self.mat_corners))

    def project(self, points_mm: np.ndarray) -> np.ndarray:
        world = np.float32([_to_world((float(x), float(y))) for x, y in points_mm])
        return cv2.perspectiveTransform(world.reshape(-1, 1, 2), self.world_to_image).reshape(-1, 2)

    def shoot(self, world: np.ndarray) -> np.ndarray:
        return cv2.warpPerspective(world, self.world_to_image, self.size, flags=cv2.INTER_AREA,
                                   borderMode=cv2.BORDER_REPLICATE)


# ---- hands and light ---------------------------------------------------------------------------

SKIN = ((120, 150, 205), (95, 125, 180), (70, 95, 140), (150, 175, 225))


def draw_hand(image: np.ndarray, entry: tuple[float, float], tip: tuple[float, float],
              skin: tuple[int, int, int], scale: float = 1.0) -> None:
    """A forearm from ``entry`` (a frame edge) to a hand whose fingertips reach ``tip``, with its
    soft shadow on the table. Drawn in camera pixels, over everything."""
    e, t = np.float32(entry), np.float32(tip)
    d = t - e
    length = float(np.hypot(*d)) or 1.0
    u = d / length
    n = np.float32([-u[1], u[0]])
    wrist = t - u * 95 * scale
    mask = np.zeros(image.shape[:2], np.uint8)
    arm = np.int32([e + n * 62 * scale, wrist + n * 40 * scale,
                    wrist - n * 40 * scale, e - n * 62 * scale])
    cv2.fillConvexPoly(mask, arm, 255, cv2.LINE_AA)
    palm = wrist + u * 38 * scale
    cv2.ellipse(mask, (int(palm[0]), int(palm[1])), (int(52 * scale), int(44 * scale)),
                float(np.degrees(np.arctan2(u[1], u[0]))), 0, 360, 255, -1, cv2.LINE_AA)
    for k, spread in enumerate((-0.55, -0.2, 0.15, 0.5)):
        base = palm + n * spread * 70 * scale + u * 30 * scale
        end = base + (u * (0.95 - abs(spread) * 0.3) + n * spread * 0.25) * 58 * scale
        cv2.line(mask, (int(base[0]), int(base[1])), (int(end[0]), int(end[1])), 255,
                 int(19 * scale), cv2.LINE_AA)
        del k
    thumb = palm - n * 50 * scale
    cv2.line(mask, (int(thumb[0]), int(thumb[1])), (int(thumb[0] + (u[0] - n[0]) * 30 * scale),
             int(thumb[1] + (u[1] - n[1]) * 30 * scale)), 255, int(22 * scale), cv2.LINE_AA)
    h, w = mask.shape
    # the wide blurs (shadow, shading) are smooth: computed at a quarter of the size
    small = cv2.resize(mask, (w // 4, h // 4), interpolation=cv2.INTER_AREA)

    def smooth(sigma: float) -> np.ndarray:
        blurred = cv2.GaussianBlur(small, (0, 0), sigma / 4).astype(np.float32) / 255.0
        return cv2.resize(blurred, (w, h), interpolation=cv2.INTER_LINEAR)[..., None]

    shadow = np.zeros((h, w, 1), np.float32)  # cast down and to the right (no wrap-around)
    shadow[28:, 22:] = smooth(12)[:-28, :-22]
    img = image.astype(np.float32) * (1 - 0.45 * shadow)
    a = cv2.GaussianBlur(mask, (0, 0), 1.5).astype(np.float32)[..., None] / 255.0
    colour = np.float32(skin)[None, None, :] * (0.75 + 0.3 * smooth(9))
    image[:] = np.clip(img * (1 - a) + colour * a, 0, 255).astype(np.uint8)


def light(image: np.ndarray, t: float, seed: int) -> np.ndarray:
    """Slowly drifting brightness, colour temperature and a soft lamp spot, plus sensor noise."""
    h, w = image.shape[:2]
    rng = np.random.default_rng([seed, int(t * 1000)])
    gain = 1.0 + 0.10 * np.sin(2 * np.pi * t / 23.0 + seed) + 0.05 * np.sin(2 * np.pi * t / 7.3)
    warm = 0.05 * np.sin(2 * np.pi * t / 31.0 + 1.0)
    yy, xx = np.mgrid[0:18, 0:32].astype(np.float32)
    cx = 16 + 10 * np.sin(2 * np.pi * t / 40.0 + seed)
    spot = 0.85 + 0.3 * np.exp(-((xx - cx) ** 2 + (yy - 6) ** 2) / 120.0)
    channel = np.float32([1 - warm, 1.0, 1 + warm]) * np.float32(gain)
    # one smooth gain per pixel and channel, drawn small and resized (cheap at 1280×720)
    scale = cv2.resize(spot[..., None] * channel, (w, h), interpolation=cv2.INTER_LINEAR)
    out = cv2.multiply(image, scale, dtype=cv2.CV_32F)
    noise = rng.standard_normal((h // 2, w // 2), dtype=np.float32) * np.float32(1.5)
    noise = cv2.resize(noise, (w, h), interpolation=cv2.INTER_NEAREST)
    out += noise[..., None]
    return np.clip(out, 0, 255, out=out).astype(np.uint8)


# ---- scripts → segments → frames ----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Segment:
    """A stretch of video: a view held still, a hand changing cards, or a covered shuffle."""

    kind: str  # "hold" | "change" | "blind"
    before: View
    after: View
    seconds: float


@dataclass
class Script:
    """What the renderer was asked to draw, and when each thing happens in the video."""

    setup: Setup | None = None
    segments: list[Segment] = field(default_factory=list)
    events: list[tuple[float, Record]] = field(default_factory=list)
    views: list[tuple[float, View]] = field(default_factory=list)


def plan(records: Iterable[Record], hold: float = 1.6, change: float = 1.2,
         shuffle: float = 2.5, fps: float | None = None) -> Script:
    """Turn a script of records into timed segments.

    Each new view is reached by a hand (``change`` s) and then lies still for ``hold`` s (long
    enough for the tracker to commit it); a ``shuffle_done`` is preceded by a covered table
    (``shuffle`` s). Other events keep their place between views. With ``fps``, every segment
    lasts a whole number of frames (as the video will), so the times in ``events.jsonl`` and
    ``script.jsonl`` are those of the video: 2.5 s at 5 frames/s is 12 frames, 2.4 s.
    """
    def frames(seconds: float) -> float:
        return seconds if fps is None else max(1, round(seconds * fps)) / fps

    hold, change, shuffle = frames(hold), frames(change), frames(shuffle)
    script = Script()
    current = View()
    t = 0.0
    for record in records:
        if isinstance(record, Setup):
            script.setup = record
            script.events.append((t, record))
        elif isinstance(record, View):
            # a hand reaches in even when the table looks the same afterwards (face-down
            # cards rearranged): people touched it, and the camera saw them do it
            script.segments.append(Segment("change", current, record, change))
            t += change
            script.views.append((t, record))
            script.segments.append(Segment("hold", record, record, hold))
            t += hold
            current = record
        elif isinstance(record, Event):
            if record.event == "shuffle_done":
                script.segments.append(Segment("blind", current, current, shuffle))
                t += shuffle
            script.events.append((t, record))
    if not script.views:
        raise RenderError("the script holds no view: nothing to draw")
    return script


def changed_cells(a: View, b: View) -> list[tuple[str, int, int]]:
    out = []
    for zone in ("work", "side"):
        ca, cb = a.cells(zone), b.cells(zone)
        for c in range(max(len(ca), len(cb))):
            col_a = ca[c] if c < len(ca) else ()
            col_b = cb[c] if c < len(cb) else ()
            for r in range(max(len(col_a), len(col_b))):
                x = col_a[r] if r < len(col_a) else EMPTY
                y = col_b[r] if r < len(col_b) else EMPTY
                if x.code != y.code:
                    out.append((zone, c + 1, r + 1))
    if a.discard.code != b.discard.code:
        out.append(("discard", 1, 1))
    return out


@dataclass
class Renderer:
    """Draws frames for a planned script at ``fps``."""

    camera: Camera = field(default_factory=Camera)
    fps: float = 10.0
    seed: int = 0
    _worlds: dict[tuple[int, bool], np.ndarray] = field(default_factory=dict)

    def _shot(self, view: View, covered: bool = False) -> np.ndarray:
        key = (id(view), covered)
        if key not in self._worlds:
            if len(self._worlds) > 6:
                self._worlds.clear()
            self._worlds[key] = self.camera.shoot(render_world(view, self.camera.mat, self.seed,
                                                               covered))
        return self._worlds[key]

    def frames(self, script: Script) -> Iterator[np.ndarray]:
        t = 0.0
        rng = np.random.default_rng(self.seed)
        skin = SKIN[self.seed % len(SKIN)]
        w, h = self.camera.size
        for seg in script.segments:
            n = max(1, round(seg.seconds * self.fps))
            if seg.kind == "change":
                target = self._target(seg.before, seg.after)
                entry = (float(rng.uniform(0.3, 0.7) * w), h + 40.0)
                for i in range(n):
                    phase = i / max(n - 1, 1)
                    reach = np.sin(np.pi * phase)  # in, then out
                    view = seg.before if phase < 0.5 else seg.after
                    frame = self._shot(view).copy()
                    tip = (entry[0] + (target[0] - entry[0]) * reach + 25 * np.sin(9 * phase),
                           entry[1] + (target[1] - entry[1]) * reach)
                    if reach > 0.05:
                        draw_hand(frame, entry, tip, skin)
                    yield light(frame, t, self.seed)
                    t += 1 / self.fps
            elif seg.kind == "blind":
                for i in range(n):
                    frame = self._shot(seg.before, covered=True).copy()
                    phase = i / max(n - 1, 1)
                    for side, sign in ((0.3, 1), (0.7, -1)):
                        tip = (w * (side + 0.12 * np.sin(2 * np.pi * (2 * phase) * sign)),
                               h * (0.45 + 0.12 * np.cos(2 * np.pi * 3 * phase)))
                        draw_hand(frame, (w * side, h + 40.0), tip, skin)
                    yield light(frame, t, self.seed)
                    t += 1 / self.fps
            else:
                still = self._shot(seg.after)
                for _ in range(n):
                    yield light(still, t, self.seed)
                    t += 1 / self.fps

    def _target(self, a: View, b: View) -> tuple[float, float]:
        cells = changed_cells(a, b)
        placed = {(p.zone, p.column, p.row): p.centre
                  for v in (a, b) for p in place_view(v, self.camera.mat, self.seed)}
        pts = [placed[c] for c in cells if c in placed]
        if not pts:
            w, h = self.camera.size
            return (w / 2, h / 2)
        mm = np.float32(pts).mean(0)
        x, y = self.camera.project(np.float32([mm]))[0]
        return (float(x), float(y) + 40.0)


def plant_mistake(records: Sequence[Record], at_view: int, column: int, row: int,
                  code: str) -> list[Record]:
    """The script with a table mistake: before the ``at_view``-th view (1-based), the table first
    shows that view with one work cell wrong; then the mistake is fixed (the right view follows).
    The runner must report a deviation for the wrong view and accept the fixed one."""
    return plant_view(records, at_view, lambda view: view.corrected("work", column, row, code))


def plant_view(records: Sequence[Record], at_view: int, wrong: Callable[[View], View]
               ) -> list[Record]:
    """The script with ``wrong(view)`` shown first in place of the ``at_view``-th view
    (1-based), then the right view: what the table looks like while someone errs and mends it."""
    out: list[Record] = []
    seen = 0
    for record in records:
        if isinstance(record, View):
            seen += 1
            if seen == at_view:
                try:
                    out.append(wrong(record))
                except ValueError as exc:
                    raise RenderError(f"cannot plant the mistake in view {at_view}: {exc}") \
                        from None
        out.append(record)
    if not 1 <= at_view <= seen:
        raise RenderError(f"the script has {seen} views, not {at_view}")
    return out


class VideoOut:
    """An MP4 writer: H.264 through the ffmpeg that ``imageio-ffmpeg`` ships when it is installed
    (a table that lies still costs almost nothing: the demo fits in a few MB), else OpenCV's
    MPEG-4 part 2 (about six times larger). OpenCV reads both."""

    def __init__(self, path: Path, fps: float, size: tuple[int, int]) -> None:
        self.path = path
        try:
            import imageio_ffmpeg
        except ImportError:
            self._cv = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, size)
            if not self._cv.isOpened():
                raise OSError(f"cannot write a video at {path}") from None
            self._ff = None
            return
        self._cv = None
        self._ff = imageio_ffmpeg.write_frames(
            str(path), size, fps=fps, codec="libx264", pix_fmt_in="bgr24",
            pix_fmt_out="yuv420p", macro_block_size=2, quality=None,
            output_params=["-crf", "27", "-preset", "medium", "-g", str(int(fps * 10))])
        self._ff.send(None)

    def write(self, frame: np.ndarray) -> None:
        if self._ff is not None:
            self._ff.send(np.ascontiguousarray(frame))
        else:
            self._cv.write(frame)

    def __enter__(self) -> VideoOut:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._ff is not None:
            self._ff.close()
        else:
            self._cv.release()


@dataclass(frozen=True)
class Rendered:
    folder: Path
    frames: int
    seconds: float
    views: int


def render_script(records: Sequence[Record], folder: str | Path, fps: float = 10.0,
                  seed: int = 0, camera: Camera | None = None, hold: float = 1.6,
                  change: float = 1.2, shuffle: float = 2.5) -> Rendered:
    """Write ``video.mp4``, ``events.jsonl`` and ``script.jsonl`` of ``records`` in ``folder``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    script = plan(records, hold=hold, change=change, shuffle=shuffle, fps=fps)
    renderer = Renderer(camera or Camera(), fps, seed)
    count = 0
    with VideoOut(out / "video.mp4", fps, renderer.camera.size) as writer:
        for frame in renderer.frames(script):
            writer.write(frame)
            count += 1
    with open(out / "events.jsonl", "w", encoding="utf-8") as fh:
        for t, record in script.events:
            data = {k: v for k, v in record.to_json().items() if k != "seq"}
            fh.write(json.dumps({**data, "t": round(t, 3)}, ensure_ascii=False) + "\n")
    with open(out / "script.jsonl", "w", encoding="utf-8") as fh:
        for t, view in script.views:
            fh.write(json.dumps({**view.to_json(), "t": round(t, 3)}, ensure_ascii=False) + "\n")
    return Rendered(out, count, count / fps, len(script.views))


def load_script(path: str | Path) -> list[Record]:
    return [record for _, record in read_records(path)]


__all__ = ["Camera", "Placement", "RenderError", "Renderer", "Rendered", "Script",
           "cell_centres", "changed_cells", "draw_hand", "light", "load_script", "place_view",
           "plan", "plant_mistake", "plant_view", "render_script", "render_world", "VideoOut"]
