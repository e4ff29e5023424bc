"""Train the strip classifier: the top-left corner of a card that a fanned layout leaves visible.

WHY a second classifier: in the card selection layout (up to 107 columns of 4 cards in bands)
columns overlap sideways and rows overlap downwards, so each covered card shows only its top-left
corner, about 13 × 22 mm — the printed corner index and a bit of the field colour. A whole-card
classifier sees mostly the cards on top of it there. This one is trained on exactly that patch,
cut from renders of :func:`vision.synth.faces.render_face` fanned the way people fan cards (a
neighbour on the right and one below, each with a shadow), at the camera's resolution (about
1 px/mm) with blur, noise, JPEG, light colour casts and the localiser's small misplacements.

The same network reads the index corners of a single card held up to a camera
(:mod:`vision.corner_index`), so the data also holds unfanned corners of whole cards
(:func:`compose_single`): sharper (up to 3 px/mm), washed out by a webcam, partly under a finger,
or with a sliver beyond the photo's edge. Those are drawn after the fanned patches from a generator
of their own, so the fanned data (and its held-out set) are exactly what they were without them.
The one-card networks (``--wide``) also learn corners that show no index (``NO_INDEX``,
:func:`no_index_patches`).

ultralytics' own augmentations are off (flips swap 6 and 9, hue jitter swaps colours, random
crops cut the index); ours are applied when the patches are composed. Training runs on CPU in a
few minutes: YOLOv8n-cls from its YAML (no pretrained weights), 32 px input, ONNX export.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from vision.strip_classifier import (
    CORNER_MM,
    NO_INDEX,
    STRIP_CLASSES,
    STRIP_SIZE,
    corner_patch_quad,
)

os.environ.setdefault("YOLO_OFFLINE", "1")

CARD_MM = (57.0, 88.0)
RENDER_PX_PER_MM = 2.0
WIDE_REVERSE_INDEX = 1.5
"""The wide printings draw the reverse corner index up to this many times the plain look's size
(``UnoStyle.reverse_index``). WHY: the plain look draws it smaller than a numeral index (its
two arrows lie along the diagonal of a box 0.9 of an index high: on the classic face it covers
194 white pixels of the corner against a 2's 434), where printed decks, as we know them, draw
the symbol about as tall as a numeral (not measured on any photo)."""
TRAIN_SEED_BASE = 100
"""A training of seed N > 0 renders its pool from seed ``TRAIN_SEED_BASE + 2N - 1`` and its
patches from the next one (101 and 102 for seed 1, 103 and 104 for seed 2): no two trainings
share a generator, and none is a held-out (1, 2) or calibration (3, 4) seed."""
FELT_BGR = (110, 45, 95)


def face_pool(seed: int, styles: int, classes: Sequence[str] = STRIP_CLASSES, wide: int = 0,
              px_per_mm: float = RENDER_PX_PER_MM) -> dict[str, list[np.ndarray]]:
    """``styles`` renders of every class at ``px_per_mm``, each in a random printing (plus the
    classic look in the training pool, seed 0, since it is one printing people own), then ``wide``
    renders in wide printings (:func:`vision.synth.faces.widen_uno_style` with recent
    printings' details and the other typefaces, the reverse index up to
    ``WIDE_REVERSE_INDEX`` times as large, the 6/9 index drawn each of the
    :data:`vision.synth.faces.INDEX_BARS` ways with equal chance), from a generator of their
    own.

    WHY the wide printings: the corner indices of real decks are heavy, outlined, in other
    typefaces, with a footless 1 and a curled reverse symbol, as the whole-card trainings learned
    since the eighth session; with corners trained on plain renders alone, the single-card
    reading took real 1s for 7s and reverses for 2s. WHY the 6/9 index three ways: the plain
    look alone taught 6 and 9 as a small numeral over a bar; rendered without the bar, the
    corner networks read 6s as 0 and 9s as 6, as they read the real photos' 6 and 9 corners
    (nine times in ten); read upright (an index corner always is), their shapes tell them
    apart. Drawn tall or bare only (the plain half keeps the short look), the fanned held-out
    strips fell to 94% (models/HISTORY.md, forty-fifth session).
    Drawn after the plain ones from ``[seed, 2]``, so the plain faces are the same whatever
    ``wide`` is."""
    from vision.synth.faces import (
        INDEX_BARS,
        LATER_TYPEFACES,
        OTHER_TYPEFACES,
        canonical_face,
        draw_uno_style,
        render_face,
        widen_uno_style,
    )

    rng = np.random.default_rng(seed)
    size = (round(CARD_MM[0] * px_per_mm), round(CARD_MM[1] * px_per_mm))
    pool: dict[str, list[np.ndarray]] = {}
    for code in classes:
        faces = [render_face(code, rng, size=size, deck="uno") for _ in range(styles)]
        if seed == 0:
            faces.append(canonical_face(code, size))
        pool[code] = faces
    rng_wide = np.random.default_rng([seed, 2])
    for code in classes:
        for _ in range(wide):
            style = widen_uno_style(draw_uno_style(rng_wide), rng_wide, True,
                                    OTHER_TYPEFACES + LATER_TYPEFACES)
            style = replace(style,
                            reverse_index=float(rng_wide.uniform(1.0, WIDE_REVERSE_INDEX)),
                            index_bar=str(rng_wide.choice(INDEX_BARS)))
            pool[code].append(render_face(code, rng_wide, size=size, style=style, deck="uno"))
    return pool


def _paste(canvas: np.ndarray, face: np.ndarray, x: float, y: float, angle: float) -> None:
    """Lay ``face`` with its top-left corner at (x, y) px, rotated by ``angle`` degrees, with a
    soft shadow to its lower left (as the renderer and a real table draw it)."""
    from vision.synth.faces import card_mask

    h, w = face.shape[:2]
    M = cv2.getRotationMatrix2D((0.0, 0.0), angle, 1.0)
    M[:, 2] += (x, y)
    H, W = canvas.shape[:2]
    alpha = cv2.warpAffine(card_mask((w, h)), M, (W, H)).astype(np.float32)[..., None] / 255
    card = cv2.warpAffine(face, M, (W, H)).astype(np.float32)
    shadow = cv2.GaussianBlur(alpha[..., 0], (0, 0), 2.5)
    shadow = np.roll(shadow, (2, -2), (0, 1))[..., None]
    out = canvas.astype(np.float32) * (1 - 0.4 * shadow)
    canvas[:] = np.clip(out * (1 - alpha) + card * alpha, 0, 255).astype(np.uint8)


def compose(target: np.ndarray, right: np.ndarray | None, below: np.ndarray | None,
            rng: np.random.Generator, size: int = STRIP_SIZE) -> np.ndarray:
    """One training patch: ``target`` fanned under its neighbours, cut like the reader cuts it
    (``size`` square)."""
    p = _px_per_mm(target)
    margin = 12.0
    W = round((CORNER_MM[0] + 2 * margin + 30) * p)
    H = round((CORNER_MM[1] + 2 * margin + 30) * p)
    canvas = np.empty((H, W, 3), np.uint8)
    canvas[:] = np.clip(np.array(FELT_BGR) * rng.uniform(0.7, 1.2), 0, 255)
    ox, oy = margin * p, margin * p
    _paste(canvas, target, ox, oy, float(rng.normal(0, 1.5)))
    pitch_x = rng.uniform(CORNER_MM[0] - 0.5, 24.0)
    pitch_y = rng.uniform(CORNER_MM[1] - 0.5, 45.0)
    if below is not None:
        _paste(canvas, below, ox + rng.normal(0, 1.2) * p, oy + pitch_y * p,
               float(rng.normal(0, 1.5)))
    if right is not None:
        _paste(canvas, right, ox + pitch_x * p, oy + rng.normal(0, 1.2) * p,
               float(rng.normal(0, 1.5)))
    # the localiser places covered cards within a few mm (a hand's jitter, a card's rotation)
    quad = _misplaced_quad(rng, 0.05, 2.0, 1.8, 4.5) * p + [ox, oy]
    patch = _cut(canvas, quad.astype(np.float32), rng, size=size)
    return _degrade(patch, rng)


def _misplaced_quad(rng: np.random.Generator, scale: float, turn_deg: float, shift_mm: float,
                    max_shift_mm: float) -> np.ndarray:
    """The card's outline (mm, from its top-left corner) where a localiser would put it: off by
    up to ``scale`` in size, ``turn_deg`` (s.d.) in angle and ``shift_mm`` (s.d., clipped)."""
    w_mm, h_mm = CARD_MM
    s = rng.uniform(1 - scale, 1 + scale)
    a = np.deg2rad(rng.normal(0, turn_deg))
    R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    quad_mm = np.array([[0, 0], [w_mm, 0], [w_mm, h_mm], [0, h_mm]], np.float32) * s @ R.T
    return quad_mm + np.clip(rng.normal(0, shift_mm, 2), -max_shift_mm, max_shift_mm)


def compose_single(target: np.ndarray, rng: np.random.Generator, size: int = STRIP_SIZE
                   ) -> np.ndarray:
    """One training patch of a whole card's index corner (no neighbours), as the single-card
    reader cuts it from a completed quad: misplaced by a few mm, seen at up to 3 px/mm (at a
    32-px input; as much more as ``size`` is larger), on any background, maybe washed out,
    partly under a finger or running off the photo."""
    p = _px_per_mm(target)
    margin = 12.0
    W = round((CORNER_MM[0] + 2 * margin + 30) * p)
    H = round((CORNER_MM[1] + 2 * margin + 30) * p)
    canvas = np.empty((H, W, 3), np.uint8)
    canvas[:] = rng.uniform(20, 240, 3)
    ox, oy = margin * p, margin * p
    _paste(canvas, target, ox, oy, float(rng.normal(0, 2.0)))
    quad = _misplaced_quad(rng, 0.08, 2.5, 2.2, 6.0) * p + [ox, oy]
    patch = _cut(canvas, quad.astype(np.float32), rng, (0.8, 3.0 * size / STRIP_SIZE), size)
    if rng.random() < 0.3:  # a fingertip over part of the corner
        skin = (rng.uniform(50, 150), rng.uniform(80, 170), rng.uniform(120, 220))
        centre = (int(rng.uniform(0, size)), int(rng.uniform(0.5, 1.3) * size))
        axes = (int(rng.uniform(0.2, 0.45) * size), int(rng.uniform(0.2, 0.4) * size))
        cv2.ellipse(patch, centre, axes, float(rng.uniform(0, 180)), 0, 360, skin, -1,
                    cv2.LINE_AA)
    if rng.random() < 0.2:  # a sliver beyond the photo's edge, filled as the reader fills it
        k = int(rng.uniform(0.05, 0.15) * size)
        side = int(rng.integers(4))
        patch = np.rot90(patch, side).copy()
        patch[:, :k] = patch[:, k:k + 1]
        patch = np.rot90(patch, -side).copy()
    if rng.random() < 0.4:  # a washed-out webcam
        haze = rng.uniform(0.1, 0.45)
        patch = (patch * (1 - haze) + 255 * haze).astype(np.uint8)
    return _degrade(patch, rng)


def no_index_target(face: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``face`` moved so that the top-left corner patch :func:`compose_single` cuts from it
    shows no upright index: turned a quarter (the patch falls on a corner that has none) or cut
    to its interior (the field, the oval, the big symbol). WHY: a quad located wrong, or a card
    taken the wrong way round, puts such a patch where the reader looks for an index; the
    corner networks, which had only seen indices, read it as the reverse most often (the
    smallest white shape), and confidently (RULE 26, models/HISTORY.md)."""
    if rng.random() < 0.5:
        return np.ascontiguousarray(np.rot90(face, 1 if rng.random() < 0.5 else 3))
    h, w = face.shape[:2]
    # right of the top-left index, or below it; never as far as the bottom-right one
    if rng.random() < 0.5:
        x, y = rng.uniform(0.3, 0.4) * w, rng.uniform(0.0, 0.45) * h
    else:
        x, y = rng.uniform(0.0, 0.4) * w, rng.uniform(0.32, 0.45) * h
    return np.ascontiguousarray(face[int(y):, int(x):])


def no_index_patches(pool: dict[str, list[np.ndarray]], count: int, seed: int,
                     size: int = STRIP_SIZE) -> list[np.ndarray]:
    """``count`` single-card corner patches that show no index (:func:`no_index_target`),
    composed as :func:`compose_single` composes a whole card's corner, from faces of
    ``pool`` (generator ``[seed, 3]``, so every other patch is the same without them)."""
    rng = np.random.default_rng([seed, 3])
    faces = [f for code, fs in pool.items() if code != NO_INDEX for f in fs]
    return [compose_single(no_index_target(faces[int(rng.integers(len(faces)))], rng), rng, size)
            for _ in range(count)]


def _px_per_mm(face: np.ndarray) -> float:
    """The resolution ``face`` was rendered at (:func:`face_pool`)."""
    return face.shape[1] / CARD_MM[0]


def _cut(image: np.ndarray, quad: np.ndarray, rng: np.random.Generator,
         ppm_range: tuple[float, float] = (0.8, 1.5), size: int = STRIP_SIZE) -> np.ndarray:
    """The corner patch of ``quad`` seen at the camera's resolution (0.8 to 1.5 px/mm for a
    table camera), as a ``size``-square input."""
    ppm = rng.uniform(*ppm_range)
    small = (max(6, round(CORNER_MM[0] * ppm)), max(8, round(CORNER_MM[1] * ppm)))
    src = corner_patch_quad(quad)
    dst = np.float32([[0, 0], [small[0], 0], [small[0], small[1]], [0, small[1]]])
    M = cv2.getPerspectiveTransform(src, dst)
    low = cv2.warpPerspective(image, M, small, flags=cv2.INTER_AREA,
                              borderMode=cv2.BORDER_REPLICATE)
    return cv2.resize(low, (size, size), interpolation=cv2.INTER_LINEAR)


def _degrade(patch: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Light of a room and a phone camera: colour cast, brightness, blur, noise, JPEG."""
    img = patch.astype(np.float32)
    img *= rng.uniform(0.88, 1.12, 3) * rng.uniform(0.65, 1.25)
    img += rng.uniform(-15, 15)
    if rng.random() < 0.5:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.0))
    img += rng.normal(0, rng.uniform(0, 6), img.shape)
    img = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.7:
        ok, data = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 90))])
        img = cv2.imdecode(data, cv2.IMREAD_COLOR)
    return img


def make_patches(pool: dict[str, list[np.ndarray]], per_class: int, seed: int,
                 single: int = 0, size: int = STRIP_SIZE) -> dict[str, list[np.ndarray]]:
    """``per_class`` fanned patches of every class of ``pool``, then ``single`` unfanned
    whole-card corners of each (from a generator of their own: the fanned patches are the same
    whatever ``single`` is)."""
    rng = np.random.default_rng(seed)
    everything = [f for faces in pool.values() for f in faces]
    out: dict[str, list[np.ndarray]] = {}
    for code, faces in pool.items():
        out[code] = []
        for _ in range(per_class):
            target = faces[int(rng.integers(len(faces)))]
            right = everything[int(rng.integers(len(everything)))] if rng.random() < 0.85 else None
            below = everything[int(rng.integers(len(everything)))] if rng.random() < 0.85 else None
            out[code].append(compose(target, right, below, rng, size))
    rng_single = np.random.default_rng([seed, 1])
    for code, faces in pool.items():
        for _ in range(single):
            target = faces[int(rng_single.integers(len(faces)))]
            out[code].append(compose_single(target, rng_single, size))
    return out


def write_folder(patches: dict[str, list[np.ndarray]], folder: Path) -> None:
    for code, images in patches.items():
        d = folder / code
        d.mkdir(parents=True, exist_ok=True)
        for i, img in enumerate(images):
            cv2.imwrite(str(d / f"{i:05d}.png"), img)


def training_seeds(seed: int) -> tuple[int, int]:
    """The render seeds of training ``seed``'s pool and patches (``TRAIN_SEED_BASE``)."""
    first = 0 if seed == 0 else TRAIN_SEED_BASE + 2 * seed - 1
    return first, first + 1


def train_strip_classifier(out: str | Path = "models/strip_classifier.onnx",
                           work: str | Path = "runs/strip", per_class: int = 220,
                           styles: int = 12, epochs: int = 12, batch: int = 128,
                           workers: int = 2, log: bool = True, single: int | None = None,
                           wide: int = 0, seed: int = 0, size: int = STRIP_SIZE
                           ) -> dict[str, float]:
    """Render the data, train, export ``out`` (+ ``.json`` sidecar), measure held-out accuracy.

    ``per_class`` fanned patches and ``single`` whole-card corners per class (by default
    ``5 * (per_class // 16)``: 100 with the 320 of ``cardtable train``, which made the committed
    model). ``wide`` wide printings per class join the training pool's ``styles`` plain ones
    (:func:`face_pool`); the held-out and calibration pools stay plain. A wide training (one
    card's corners only) also learns ``NO_INDEX`` from as many patches as any face has
    (:func:`no_index_patches`), measured on held-out ones (``held_out_no_index``, and
    ``held_out_read_as_no_index`` for the faces' held-out patches). The held-out sets
    use printings (render seeds) the training never saw: ``held_out_accuracy`` on fanned
    patches (the table pipeline's case), ``held_out_single_accuracy`` on whole-card corners.
    ``seed`` 0 renders the training pool and patches from seeds 0 and 1 (the shipped networks);
    N > 0 from seeds of its own (``TRAIN_SEED_BASE``), measured on the same held-out and
    calibration sets. ``size``: the network's input side; the faces are rendered and the
    single-card corners seen at ``size / STRIP_SIZE`` times the resolution of the 32-px recipe
    (the fanned patches stay at a table camera's), so that a larger input sees finer print.
    Returns the figures written to the sidecar. About 10 minutes on 2 CPU cores.
    """
    from ultralytics import YOLO
    from ultralytics.utils import SETTINGS

    from vision.strip_classifier import StripClassifier, fit_temperature

    SETTINGS.update({"sync": False})
    out, work = Path(out), Path(work)
    single = 5 * (per_class // 16) if single is None else single
    data = work / "data"
    if data.exists():
        shutil.rmtree(data)
    t0 = time.perf_counter()
    pool_seed, patch_seed = training_seeds(seed)
    px = RENDER_PX_PER_MM * size / STRIP_SIZE
    train_pool = face_pool(pool_seed, styles, wide=wide, px_per_mm=px)
    train = make_patches(train_pool, per_class, patch_seed, single, size)
    val_pool = face_pool(1, 3, px_per_mm=px)
    fanned = max(20, per_class // 10)
    held = make_patches(val_pool, fanned, 2, max(20, single // 5) if single else 0, size)
    held_out = {c: v[:fanned] for c, v in held.items()}
    held_single = {c: v[fanned:] for c, v in held.items()}
    held_none: list[np.ndarray] = []
    if wide:  # the one-card networks also learn a corner that shows no index (NO_INDEX)
        train[NO_INDEX] = no_index_patches(train_pool, per_class + single, patch_seed, size)
        held_none = no_index_patches(val_pool, fanned, 2, size)
    write_folder(train, data / "train")
    write_folder({**held_out, NO_INDEX: held_none} if held_none else held_out, data / "val")
    if log:
        print(f"strip data: {len(STRIP_CLASSES)} classes × {per_class} patches rendered in "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    model = YOLO("yolov8n-cls.yaml")
    model.train(data=str(data), imgsz=size, epochs=epochs, batch=batch, workers=workers,
                device="cpu", project=str(work.resolve()), name="cls", exist_ok=True,
                pretrained=False, amp=False, plots=False, fliplr=0.0, flipud=0.0, hsv_h=0.0,
                hsv_s=0.0, hsv_v=0.0, erasing=0.0, auto_augment=None, scale=0.0, cache="ram",
                seed=seed, verbose=False, lr0=0.003, optimizer="AdamW", warmup_epochs=1,
                cos_lr=True)
    best = work / "cls" / "weights" / "best.pt"
    onnx_path = Path(YOLO(str(best)).export(format="onnx", imgsz=size, simplify=False,
                                            dynamic=True))
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(onnx_path, out)
    names = YOLO(str(best)).names
    classes = [names[i] for i in range(len(names))]
    meta = {"classes": classes, "input": size, "corner_mm": list(CORNER_MM)}
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1))
    clf = StripClassifier.load(out)
    # calibration on printings neither training nor validation used
    calib = make_patches(face_pool(3, 2, px_per_mm=px), max(20, per_class // 10), 4,
                         single // 10, size)
    probs = np.concatenate([clf.predict_patches(v) for v in calib.values()])
    labels = np.concatenate([[clf.classes.index(c)] * len(v) for c, v in calib.items()])
    meta["temperature"] = round(fit_temperature(probs, labels), 3)
    right = total = 0
    for code, images in held_out.items():
        probs = clf.predict_patches(images)
        right += sum(clf.classes[int(np.argmax(p))] == code for p in probs)
        total += len(images)
    meta["held_out_accuracy"] = round(right / total, 4)
    meta["held_out_patches"] = total
    singles = [(code, img) for code, images in held_single.items() for img in images]
    if singles:
        probs = clf.predict_patches([img for _, img in singles])
        ok = sum(clf.classes[int(np.argmax(p))] == c for p, (c, _) in zip(probs, singles,
                                                                          strict=True))
        meta["held_out_single_accuracy"] = round(ok / len(singles), 4)
        meta["held_out_single_patches"] = len(singles)
    if held_none:
        none = clf.classes.index(NO_INDEX)
        meta["held_out_no_index"] = round(float(np.mean(
            np.argmax(clf.predict_patches(held_none), 1) == none)), 4)
        codes = [img for images in held.values() for img in images]
        meta["held_out_read_as_no_index"] = round(float(np.mean(
            np.argmax(clf.predict_patches(codes), 1) == none)), 4)
    meta["train_seconds"] = round(time.perf_counter() - t0)
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1))
    if log:
        print(f"strip classifier: {right}/{total} held-out fanned patches right "
              f"({100 * right / total:.1f}%), whole-card corners "
              f"{meta.get('held_out_single_accuracy', '-')}, {meta['train_seconds']} s in all "
              f"→ {out}")
    return meta
