"""Train the photo reader of standard cards without the mat: a corner-index detector and a
corner classifier, both from the CC BY photos' training split (plus renders of the MIT scans).

WHY two small networks and not one 54-class detector: a detector of 54 classes cannot be trained
from scratch on this 2-core CPU in a session, but a detector of *two* classes — "a printed corner
index (or the word Joker)" and "a face-down card" — learns where to look from a few hundred
photos, and classifiers of small corner crops learn *what* it is from a few thousand crops,
cheaply: one for the rank, one for the suit (see :class:`vision.photo_detect.CornerClassifier`
for why two). The detector is YOLOv8n from its YAML at 416 px; the classifiers are YOLOv8n-cls
from its YAML on :data:`vision.photo_detect.CORNER_SIZE` px crops (ultralytics resizes them to
64). No pretrained weights, nothing downloaded (``YOLO_OFFLINE``, ``plots=False``).

Data: ``playing-cards-photos-cc-by`` (CC BY 4.0, Roboflow Universe "Card Detection v12" by
cadyzedevelopmenthub, via Ammememe/CardCounterML), only photos of the ``train`` split of
:mod:`vision.photo_split`; a tenth of those groups also serve as ultralytics' validation set (for
its log only: the last weights are exported, nothing is selected on held-out photos). Corner
crops of the MIT-licensed scans in ``vision/synth/assets/standard/`` (perspective, light, blur,
down-scaling) give every rank and suit printings beyond the two real decks.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from vision.photo_detect import (
    CORNER_CLASSES,
    CORNER_SIZE,
    DET_CLASSES,
    NONE,
    corner_crop,
)
from vision.photo_split import group_of, split_of

os.environ.setdefault("YOLO_OFFLINE", "1")

DEFAULT_PHOTOS = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / \
    "playing-cards-photos-cc-by"
SCANS = Path(__file__).resolve().parents[1] / "synth" / "assets" / "standard"
INDEX_BOX = (0.0, 0.0, 0.18, 0.29)
"""Where the printed index lies on the MIT scans, as fractions of the face (x0, y0, x1, y1)."""

Log = Callable[[str], None]


def _names(root: Path) -> list[str]:
    from vision.evaluate import read_names

    return read_names(root / "data.yaml")


def _labels(root: Path, image: Path) -> list[tuple[int, float, float, float, float]]:
    path = root / "labels" / image.relative_to(root / "images")
    path = path.with_suffix(".txt")
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        p = line.split()
        if len(p) == 5:
            out.append((int(p[0]), *(float(v) for v in p[1:])))
    return out


def train_images(root: Path) -> list[Path]:
    """The photos of the training split, sorted."""
    return sorted(p for p in (root / "images").rglob("*.jpg") if split_of(p.name) == "train")


def _is_val(name: str) -> bool:
    return hashlib.sha1(("val" + group_of(name)).encode()).digest()[0] % 10 == 0


# ----------------------------------------------------------------------------- detector


def build_detector_data(root: Path, out: Path) -> Path:
    """YOLO folder of the training photos with labels mapped to :data:`DET_CLASSES`."""
    names = _names(root)
    if out.exists():
        shutil.rmtree(out)
    for sub in ("train", "val"):
        (out / sub / "images").mkdir(parents=True)
        (out / sub / "labels").mkdir(parents=True)
    for i, image in enumerate(train_images(root)):
        rows = []
        for k, cx, cy, w, h in _labels(root, image):
            cls = 1 if names[k] == "BACK" else 0
            rows.append(f"{cls} {cx:.6f} {cy:.6f} {w:.6f} {h:.6f}")
        subs = ("train", "val") if _is_val(image.name) else ("train",)
        for sub in subs:
            dst = out / sub / "images" / f"{i:04d}.jpg"
            os.symlink(image.resolve(), dst)
            (out / sub / "labels" / f"{i:04d}.txt").write_text("\n".join(rows) + "\n")
    yaml = out / "data.yaml"
    yaml.write_text(f"path: {out.resolve()}\ntrain: train/images\nval: val/images\n"
                    f"names:\n" + "".join(f"  {k}: {n}\n" for k, n in enumerate(DET_CLASSES)))
    return yaml


def train_detector(data_yaml: Path, runs: Path, imgsz: int, epochs: int, hours: float | None,
                   workers: int) -> Path:
    """YOLOv8n from its YAML on the corner-index data; returns the last weights.

    ``hours`` (when given) caps the training time: ultralytics then fits the number of epochs
    and the learning-rate schedule into it, so a busy CPU gets fewer epochs, not a cut-off one.
    A GPU is used when there is one."""
    import torch
    from ultralytics import YOLO
    from ultralytics.utils import SETTINGS

    SETTINGS.update({"sync": False})
    model = YOLO("yolov8n.yaml")
    extra = {"time": hours} if hours else {}
    model.train(
        data=str(data_yaml), imgsz=imgsz, epochs=epochs, batch=16, workers=workers,
        device="0" if torch.cuda.is_available() else "cpu", project=str(runs),
        name="corner_det", exist_ok=True, pretrained=False,
        amp=False, plots=False, seed=0, deterministic=False, verbose=False, patience=1000,
        cache="ram", degrees=15.0, fliplr=0.5, mosaic=1.0, close_mosaic=2, scale=0.5,
        optimizer="AdamW", lr0=0.002, warmup_epochs=1, cos_lr=False, **extra,
    )
    return runs / "corner_det" / "weights" / "last.pt"


def export_detector(weights: Path, out: Path, imgsz: int) -> None:
    """ONNX of the detector (raw YOLOv8 head output; NMS is done by :mod:`vision.photo_detect`)."""
    from ultralytics import YOLO

    path = YOLO(str(weights)).export(format="onnx", imgsz=imgsz, opset=17, simplify=False,
                                     dynamic=False, device="cpu")
    quantise(Path(path), out)


def quantise(path: Path, out: Path) -> None:
    """``path`` with 8-bit weights at ``out``: a quarter of the size (the detector is 12 MB in
    float32, 3.2 MB here), and on the held-out photos the same cards found within 1 of 504."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.parent.mkdir(parents=True, exist_ok=True)
    quantize_dynamic(str(path), str(out), weight_type=QuantType.QUInt8)


# ----------------------------------------------------------------------------- classifier


def _augment(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Turns, light, colour cast, blur, down-scaling and noise of one corner crop."""
    img = np.rot90(crop, int(rng.integers(4))).copy()
    s = CORNER_SIZE
    M = cv2.getRotationMatrix2D((s / 2, s / 2), float(rng.uniform(-20, 20)), 1.0)
    img = cv2.warpAffine(img, M, (s, s), borderMode=cv2.BORDER_REPLICATE)
    img = img.astype(np.float32) * rng.uniform(0.55, 1.3) * rng.uniform(0.85, 1.15, 3) \
        + rng.uniform(-30, 30)
    img = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.5:  # a small corner seen at the camera's resolution
        low = int(rng.integers(12, s))
        img = cv2.resize(cv2.resize(img, (low, low), interpolation=cv2.INTER_AREA), (s, s))
    if rng.random() < 0.3:
        img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.4, 1.2)))
    if rng.random() < 0.3:
        noise = rng.normal(0, rng.uniform(3, 12), img.shape)
        img = np.clip(img.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    return img


def _jitter(box: tuple[float, float, float, float], rng: np.random.Generator
            ) -> tuple[float, float, float, float]:
    """A box as an imperfect detector might return it: shifted and scaled a little."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    cx = (x0 + x1) / 2 + rng.uniform(-0.12, 0.12) * w
    cy = (y0 + y1) / 2 + rng.uniform(-0.12, 0.12) * h
    w *= rng.uniform(0.85, 1.2)
    h *= rng.uniform(0.85, 1.2)
    return cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2


def _scan_corner(face: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The top-left index of a scanned face, laid on a random table and cut like a photo's."""
    h, w = face.shape[:2]
    pad = 60
    table = np.empty((h + 2 * pad, w + 2 * pad, 3), np.uint8)
    table[:] = rng.integers(0, 256, 3)
    table[pad:pad + h, pad:pad + w] = face
    x0, y0, x1, y1 = INDEX_BOX
    box = (pad + x0 * w, pad + y0 * h, pad + x1 * w, pad + y1 * h)
    return corner_crop(table, _jitter(box, rng))


def _free_box(labels: list[tuple[float, float, float, float]], w: int, h: int,
              rng: np.random.Generator) -> tuple[float, float, float, float] | None:
    """A box of corner size that holds no labelled box's centre (a "none" example)."""
    for _ in range(20):
        side = float(rng.uniform(0.03, 0.2)) * w
        bw, bh = side * rng.uniform(0.6, 1.0), side
        x = float(rng.uniform(0, w - bw))
        y = float(rng.uniform(0, h - bh))
        if not any(x - bw / 2 < (a + c) / 2 < x + 1.5 * bw and y - bh / 2 < (b + d) / 2
                   < y + 1.5 * bh for a, b, c, d in labels):
            return x, y, x + bw, y + bh
    return None


def build_classifier_data(root: Path, out: Path, per_label: int, per_scan: int,
                          negatives_per_image: int, seed: int = 0) -> dict[str, int]:
    """Image folders ``out/{train,val}/<class>/`` of corner crops; returns counts per split."""
    names = _names(root)
    rng = np.random.default_rng(seed)
    if out.exists():
        shutil.rmtree(out)
    for sub in ("train", "val"):
        for c in CORNER_CLASSES:
            (out / sub / c).mkdir(parents=True)
    counts = {"train": 0, "val": 0}

    def save(sub: str, code: str, img: np.ndarray) -> None:
        cv2.imwrite(str(out / sub / code / f"{counts[sub]:06d}.png"), img)
        counts[sub] += 1

    for image_path in train_images(root):
        image = cv2.imread(str(image_path))
        if image is None:
            continue
        H, W = image.shape[:2]
        sub = "val" if _is_val(image_path.name) else "train"
        boxes = []
        for k, cx, cy, bw, bh in _labels(root, image_path):
            box = ((cx - bw / 2) * W, (cy - bh / 2) * H, (cx + bw / 2) * W, (cy + bh / 2) * H)
            boxes.append(box)
            code = names[k]
            if code == "BACK":
                continue
            if sub == "val":
                save(sub, code, corner_crop(image, box))
                continue
            reps = per_label * (3 if code == "JK" else 1)  # one real deck's jokers only
            for _ in range(reps):
                save(sub, code, _augment(corner_crop(image, _jitter(box, rng)), rng))
        for _ in range(negatives_per_image):
            free = _free_box(boxes, W, H, rng)
            if free is not None:
                crop = corner_crop(image, free)
                save(sub, NONE, crop if sub == "val" else _augment(crop, rng))
    for scan in sorted(SCANS.glob("*.png")):
        face = cv2.imread(str(scan))
        if face is None or scan.stem not in CORNER_CLASSES:
            continue
        for _ in range(per_scan):
            save("train", scan.stem, _augment(_scan_corner(face, rng), rng))
    return counts


FACTORS = ("rank", "suit")


def factor_folders(data: Path, out: Path) -> dict[str, Path]:
    """Image folders per factor (:func:`vision.photo_detect.part_of`), linked to the crops of
    ``data`` (``train``/``val``/<code>/): ``out/rank/...``, ``out/suit/...``."""
    from vision.photo_detect import part_of

    folders = {}
    for part in FACTORS:
        root = out / part
        if root.exists():
            shutil.rmtree(root)
        for f in sorted(data.glob("*/*/*.png")):
            label = part_of(f.parent.name, part)
            if label is None:
                continue
            dst = root / f.parent.parent.name / label
            dst.mkdir(parents=True, exist_ok=True)
            os.symlink(f.resolve(), dst / f"{f.parent.name}_{f.name}")
        folders[part] = root
    return folders


def train_factor(data: Path, runs: Path, part: str, imgsz: int, epochs: int, workers: int
                 ) -> Path:
    """YOLOv8n-cls from its YAML on one factor's folders; returns the last weights."""
    from vision.train.classifier import train_yolo

    train_yolo(data, runs, imgsz, epochs, 128, workers, name=f"corner_{part}")
    return runs / f"corner_{part}" / "weights" / "last.pt"


def export_factor(weights: Path, out: Path, part: str, imgsz: int) -> dict:
    """ONNX of one factor network (softmax output); its entry of the classifier JSON."""
    from ultralytics import YOLO

    yolo = YOLO(str(weights))
    classes = [yolo.model.names[i] for i in range(len(yolo.model.names))]
    path = yolo.export(format="onnx", imgsz=imgsz, opset=17, simplify=False, dynamic=True,
                       device="cpu")
    quantise(Path(path), out)
    return {"model": out.name, "part": part, "classes": classes, "temperature": 1.0}


def calibrate_classifier(meta_path: Path, val: Path) -> dict:
    """Fit each factor's softmax temperature on the real crops of the validation groups (of the
    training split; never trained on) and measure the combined top-1 there; rewrites the JSON."""
    from vision.photo_detect import CornerClassifier, part_of
    from vision.strip_classifier import fit_temperature

    meta = json.loads(meta_path.read_text())
    clf = CornerClassifier.load(meta_path)
    crops, codes = [], []
    for folder in sorted(p for p in val.iterdir() if p.is_dir()):
        for f in sorted(folder.glob("*.png")):
            crops.append(cv2.imread(str(f)))
            codes.append(folder.name)
    for entry, factor in zip(meta["factors"], clf.factors, strict=True):
        keep = [i for i, c in enumerate(codes) if part_of(c, factor.part) is not None]
        p = clf.factor_probs(factor, [crops[i] for i in keep])
        y = np.array([factor.classes.index(part_of(codes[i], factor.part)) for i in keep])
        entry["temperature"] = round(fit_temperature(p, y), 3)
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    clf = CornerClassifier.load(meta_path)
    y = np.array([clf.classes.index(c) for c in codes])
    probs = np.concatenate([clf.classify(crops[i:i + 256]) for i in range(0, len(crops), 256)])
    meta["val_crops"] = len(y)
    meta["val_top1"] = round(float((probs.argmax(1) == y).mean()), 4)
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return meta


FULL = {"det_imgsz": 416, "det_epochs": 60, "det_hours": 1.2, "cls_epochs": 8,
        "per_label": 8, "per_scan": 40, "negatives": 4}
QUICK = {"det_imgsz": 128, "det_epochs": 1, "det_hours": None, "cls_epochs": 1,
         "per_label": 1, "per_scan": 1, "negatives": 1}


def train_corners(out_dir: Path, runs: Path, photos: Path = DEFAULT_PHOTOS, quick: bool = False,
                  epochs: int | None = None, workers: int = 2, log: Log = print) -> dict:
    """The whole recipe: data from the training split, both trainings, ONNX + JSON in
    ``out_dir`` (``corner_detector.onnx``, ``corner_classifier.{onnx,json}``). ``epochs``
    replaces the detector's time cap by that many epochs (for a machine with a GPU)."""
    if not (photos / "data.yaml").is_file():
        raise OSError(f"{photos}: no data.yaml; the CC BY photos are needed to train the corner "
                      "models (give their folder with --photos)")
    r = QUICK if quick else FULL
    t0 = time.time()
    yaml = build_detector_data(photos, runs / "corner_det_data")
    counts = build_classifier_data(photos, runs / "corner_cls_data", int(r["per_label"]),
                                   int(r["per_scan"]), int(r["negatives"]))
    log(f"corner data: {counts['train']} training crops, {counts['val']} validation crops "
        f"({time.time() - t0:.0f} s)")
    t1 = time.time()
    det = train_detector(yaml, runs, int(r["det_imgsz"]), epochs or int(r["det_epochs"]),
                         None if epochs else r["det_hours"], workers)
    export_detector(det, out_dir / "corner_detector.onnx", int(r["det_imgsz"]))
    log(f"corner detector trained and exported in {time.time() - t1:.0f} s")
    t2 = time.time()
    cls_imgsz = 64  # ultralytics rounds classifier inputs up to a multiple of 32
    factors = []
    for part, data in factor_folders(runs / "corner_cls_data", runs / "corner_factors").items():
        weights = train_factor(data, runs, part, cls_imgsz, int(r["cls_epochs"]), workers)
        factors.append(export_factor(weights, out_dir / f"corner_{part}.onnx", part, cls_imgsz))
    meta_path = out_dir / "corner_classifier.json"
    meta_path.write_text(json.dumps({"classes": list(CORNER_CLASSES), "input_size": cls_imgsz,
                                     "crop_size": CORNER_SIZE, "factors": factors}, indent=1))
    meta = calibrate_classifier(meta_path, runs / "corner_cls_data" / "val")
    log(f"corner classifier trained and exported in {time.time() - t2:.0f} s: validation "
        f"top-1 {meta['val_top1']} on {meta['val_crops']} real crops; total "
        f"{time.time() - t0:.0f} s")
    return meta
