"""Train the photo reader of standard cards without the mat: the index spotter
(:mod:`vision.train.spotter`, which finds every printed corner index) and the corner classifier
that reads each index, both from the CC BY photos' training split (plus renders).

WHY a classifier of crops beside the spotter: the spotter finds indices at every size in one
pass, but what an index says is read best from a crop cut around it at the index's own scale.
The reader is one small torch trunk with a rank head and a suit head (:func:`_network`; see
:class:`vision.photo_detect.CornerClassifier` for why two factors) on
:data:`vision.photo_detect.CORNER_SIZE` px crops read at :data:`READER_SIZE`. No pretrained
weights, nothing downloaded.

Data: ``playing-cards-photos-cc-by`` (CC BY 4.0, Roboflow Universe "Card Detection v12" by
cadyzedevelopmenthub, via Ammememe/CardCounterML), only photos of the ``train`` split of
:mod:`vision.photo_split`; the crops of its validation groups
(:func:`vision.photo_split.in_validation`) are never trained on: they fit the temperatures and
measure the reader. Rendered index crops (:mod:`vision.synth.index_crops`: the MIT-licensed
scans of ``vision/synth/assets/standard/`` recoloured, and indices drawn in the shipped DejaVu
fonts, at every angle, size and camera fault) outnumber the real crops: the two real decks and
few hundred scenes alone taught the reader the scenes, not the glyphs (a quarter of unseen
scenes' indices read right).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.evaluate import read_names
from vision.photo_cards import card_quads, cut, index_squares
from vision.photo_detect import CORNER_CLASSES, CORNER_SIZE, NONE, corner_crop, part_of
from vision.photo_split import in_validation, split_of
from vision.synth.index_crops import jitter_box, render_crops

DEFAULT_PHOTOS = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / \
    "playing-cards-photos-cc-by"

Log = Callable[[str], None]


def yolo_boxes(root: Path, image: Path) -> list[tuple[int, float, float, float, float]]:
    """The labelled boxes of ``image`` (class, centre x, centre y, width, height, all but the
    class as shares of the photo); no label file means none."""
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


# ----------------------------------------------------------------------------- classifier


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


def _quad_crops(image: np.ndarray, boxes: list[tuple[str, tuple[float, float, float, float]]],
                quad: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The four index crops of a card outline (:func:`vision.photo_cards.index_squares`), each
    labelled with the code of the labelled index whose centre it holds, else ``none``: exactly
    what the reader cuts at run time, so the network learns the crops it will be shown."""
    centres = [(code, ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)) for code, b in boxes]
    out = []
    for square in index_squares(quad):
        inside = [(float(np.hypot(*(square.mean(0) - c))), code) for code, c in centres
                  if cv2.pointPolygonTest(square.reshape(-1, 1, 2), c, False) >= 0]
        code = min(inside)[1] if inside else NONE
        out.append((code, cut(image, square, CORNER_SIZE)))
    return out


QUAD_NONE_KEPT = 0.1
"""Share of the outline crops that hold no index which are kept for training: most outlines
and half the corners of every card are empty, and all of them would drown the indices."""
READER_MASKS = ("bright5", "bright15", "dark5", "dark15", "white5", "white15", "local5",
                "local15", "edges")
"""The outline masks (:func:`vision.photo_cards._masks`) whose outlines the shipped reader's
crops were cut from. WHY fixed: the run-time finder has since gained more masks (more outlines
found); the documented command must still rebuild the shipped reader's data. Widen this with
the next retrained reader."""
READER_SIDES = 0.42
"""The least short-to-long side ratio of those outlines (:data:`vision.photo_cards.MIN_SIDES`
was 0.42 then; run-time outlines may be thinner since the eighty-first session). Fixed for
the same reason as :data:`READER_MASKS`."""


@dataclass
class CropSet:
    """Corner crops (N, S, S, 3) BGR uint8 with their codes, for one split."""

    crops: list[np.ndarray] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)

    def add(self, code: str, crop: np.ndarray) -> None:
        self.crops.append(crop)
        self.codes.append(code)


def build_crops(root: Path, per_label: int, per_quad: int, rendered: int, negatives: int,
                seed: int = 0, log: Log = print,
                skip: Callable[[str], bool] | None = None) -> dict[str, CropSet]:
    """Crops of the training split (``train``) and of its validation groups (``val``, cut once,
    unjittered): labelled indices cut as the spotter's boxes would be (``per_label`` copies,
    jittered, turned any way and mirrored half the time: the spotter finds indices at every
    angle, and webcams mirror), the four index crops of every card outline the finder sees
    (:mod:`vision.photo_cards`, ``per_quad`` copies with the outline's corners jittered), crops
    of empty table (``none``), and about ``rendered`` crops of rendered cards
    (:mod:`vision.synth.index_crops`: MIT scans and drawn indices, every angle and camera
    fault), which teach the glyphs where two real decks would teach the scenes. Photos whose
    name ``skip`` is true of are left out (:mod:`vision.train.leave_out`)."""
    names = read_names(root / "data.yaml")
    rng = np.random.default_rng(seed)
    sets = {"train": CropSet(), "val": CropSet()}
    images = [p for p in train_images(root) if skip is None or not skip(p.name)]
    for n, image_path in enumerate(images):
        image = cv2.imread(str(image_path))
        if image is None:
            continue
        H, W = image.shape[:2]
        val = in_validation(image_path.name)
        out = sets["val" if val else "train"]
        boxes = []
        for k, cx, cy, bw, bh in yolo_boxes(root, image_path):
            box = ((cx - bw / 2) * W, (cy - bh / 2) * H, (cx + bw / 2) * W, (cy + bh / 2) * H)
            if names[k] == "BACK":
                continue
            boxes.append((names[k], box))
            if val:
                out.add(names[k], corner_crop(image, box))
            for _ in range(0 if val else per_label * (3 if names[k] == "JK" else 1)):
                out.add(names[k], corner_crop(image, jitter_box(box, rng),
                                              float(rng.uniform(0, 360)), rng.random() < 0.5))
        for found in card_quads(image, masks=READER_MASKS, sides=READER_SIDES):
            for _ in range(1 if val else per_quad):
                quad = found.quad
                if not val:
                    size = float(np.sqrt(max(found.area, 1.0)))
                    quad = quad + rng.normal(0, 0.02 * size, quad.shape).astype(np.float32)
                for code, crop in _quad_crops(image, boxes, quad):
                    if code != NONE or val or rng.random() < QUAD_NONE_KEPT:
                        out.add(code, crop)
        for _ in range(negatives):
            free = _free_box([b for _, b in boxes], W, H, rng)
            if free is not None:
                out.add(NONE, corner_crop(image, free))
        if (n + 1) % 100 == 0:
            log(f"corner crops: {n + 1} photos, {len(sets['train'].codes)} training crops")
    t0 = time.time()
    crops, codes = render_crops(rendered, seed)
    for code, crop in zip(codes, crops, strict=True):
        sets["train"].add(code, crop)
    log(f"corner crops: {len(crops)} rendered ({time.time() - t0:.0f} s)")
    return sets


def factor_classes(part: str) -> list[str]:
    """The labels one factor network reads (:func:`vision.photo_detect.part_of`), sorted."""
    return sorted({lab for c in CORNER_CLASSES if (lab := part_of(c, part)) is not None})


def _network(n_rank: int, n_suit: int) -> Any:
    """A small convolutional trunk with a rank head and a suit head (torch).

    WHY this and not yolov8n-cls: on the shared 2-core CPU the ultralytics classifier got 8
    epochs in 25 minutes and read barely half of its own training crops; this trunk (about
    0.3 M weights) trains 20 epochs on both factors at once in 16 minutes at a 32-px input,
    29 at 48 px.
    Its width (24-192 channels) was raised from 16-128 when the rendered crops came: the narrow
    trunk no longer fitted its own training crops (64% of the real ones)."""
    import torch
    from torch import nn

    def block(a: int, b: int) -> list[Any]:
        return [nn.Conv2d(a, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU()]

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.trunk = nn.Sequential(
                *block(3, 24), nn.MaxPool2d(2),
                *block(24, 48), *block(48, 48), nn.MaxPool2d(2),
                *block(48, 96), *block(96, 96), nn.MaxPool2d(2),
                *block(96, 192), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2))
            self.rank = nn.Linear(192, n_rank)
            self.suit = nn.Linear(192, n_suit)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            f = self.trunk(x)
            return self.rank(f), self.suit(f)

    return Net()


def _tensor(crops: list[np.ndarray], size: int) -> Any:
    """Crops → (N, 3, size, size) float RGB in [0, 1], resized as the run time does."""
    import torch

    x = np.stack([cv2.cvtColor(cv2.resize(c, (size, size), interpolation=cv2.INTER_LINEAR),
                               cv2.COLOR_BGR2RGB) for c in crops])
    return torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2))).float() / 255


def _augment_batch(x: Any, gen: Any) -> Any:
    """Quarter turns, exposure, colour cast, contrast, down-scaling and noise, per crop.
    WHY turns: the spotter's crops lie as the cards lie, at any angle, and the photos hold too
    few of each code to show every one; an index turned is still that index. The reader still
    reads each crop at :data:`READER_TURNS` quarter turns."""
    import torch
    import torch.nn.functional as F

    n, _, s, _ = x.shape
    at = {"generator": gen, "device": x.device}  # ``gen`` lives on the crops' device
    turns = torch.randint(0, 4, (n,), **at)
    x = x.clone()
    mirror = torch.rand(n, **at) < 0.5
    x[mirror] = torch.flip(x[mirror], (3,))
    for k in (1, 2, 3):
        sel = turns == k
        x[sel] = torch.rot90(x[sel], k, (2, 3))
    gain = torch.empty(n, 1, 1, 1, device=x.device).uniform_(0.55, 1.35, generator=gen)
    cast = torch.empty(n, 3, 1, 1, device=x.device).uniform_(0.85, 1.15, generator=gen)
    shift = torch.empty(n, 1, 1, 1, device=x.device).uniform_(-0.12, 0.12, generator=gen)
    mean = x.mean((1, 2, 3), keepdim=True)
    contrast = torch.empty(n, 1, 1, 1, device=x.device).uniform_(0.6, 1.3, generator=gen)
    x = ((x - mean) * contrast + mean) * gain * cast + shift
    low = int(torch.randint(s // 3, s + 1, (1,), **at))
    if low < s:
        x = F.interpolate(F.interpolate(x, size=(low, low), mode="area"), size=(s, s),
                          mode="bilinear", align_corners=False)
    x = x + torch.randn(x.shape, **at) * float(torch.rand(1, **at)) * 0.05
    return x.clamp(0, 1)


PRECISIONS = ("float32", "bfloat16")
"""What the reader's training computes in (:func:`train_reader`); the shipped reader: float32."""


def train_reader(sets: dict[str, CropSet], out_dir: Path, size: int, epochs: int,
                 log: Log = print, seed: int = 0, precision: str = "float32") -> list[dict]:
    """Train the rank and suit heads together; export them as one float32 ONNX into
    ``out_dir`` (:func:`_export_reader`); returns their entries of the classifier JSON.

    ``seed`` draws the weights, the order and the augmentation (0 made the shipped reader;
    on this CPU a seed gives the same network every run). A CUDA device is used when torch
    sees one, the crops and their augmentation on it. WHY a seed and a device: one seed moves
    the validation index crops by about 5 points, so recipes are compared over several seeds,
    and on a lent GPU those runs take minutes (models/HISTORY.md, twentieth session).

    ``precision`` "bfloat16" runs the network's forward pass under ``torch.autocast`` with
    channels-last tensors, as the spotter trains (:mod:`vision.train.spotter`); the weights,
    the augmentation and the loss stay float32. WHY: on a CPU with AMX (this one) a step of 128
    crops takes about 170 ms against 460 ms, so a screen of several seeds fits one session; it
    is a different recipe, so it is compared only with screens in the same precision."""
    import torch
    import torch.nn.functional as F

    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}: use one of {', '.join(PRECISIONS)}")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    half = precision == "bfloat16"
    layout = torch.channels_last if half else torch.contiguous_format
    torch.manual_seed(seed)
    gen = torch.Generator(device=device).manual_seed(seed)
    ranks, suits = factor_classes("rank"), factor_classes("suit")
    train = sets["train"]
    x = _tensor(train.crops, size).to(device)
    yr = torch.tensor([ranks.index(part_of(c, "rank")) for c in train.codes], device=device)
    ys = torch.tensor([suits.index(s) if (s := part_of(c, "suit")) else -100
                       for c in train.codes], device=device)
    net = _network(len(ranks), len(suits)).to(device, memory_format=layout)
    batch = 128
    steps = epochs * ((len(x) + batch - 1) // batch)
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    t0 = time.time()
    for epoch in range(epochs):
        net.train()
        order = torch.randperm(len(x), generator=gen, device=device)
        total = torch.zeros((), device=device)  # summed where the loss is: no sync a step
        for i in range(0, len(x), batch):
            idx = order[i:i + batch]
            xb = _augment_batch(x[idx], gen).contiguous(memory_format=layout)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=half):
                r, s = net(xb)
            r, s = r.float(), s.float()
            loss = F.cross_entropy(r, yr[idx]) + F.cross_entropy(s, ys[idx], ignore_index=-100)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.detach() * len(idx)
        log(f"corner reader epoch {epoch + 1}/{epochs}: loss {float(total) / len(x):.3f} "
            f"({time.time() - t0:.0f} s)")
    net = net.eval().cpu().to(memory_format=torch.contiguous_format)
    path = out_dir / READER_FILE
    _export_reader(net, size, path)
    return [{"model": path.name, "output": head, "part": part, "classes": classes,
             "temperature": 1.0}
            for part, classes, head in (("rank", ranks, 0), ("suit", suits, 1))]


def _export_reader(net: Any, size: int, out: Path) -> None:
    """The trunk and both heads as one float32 ONNX: (N, 3, size, size) RGB in [0, 1] →
    (rank, suit) softmax. WHY one file: the two heads share the trunk, so one run reads both
    (two files ran it twice). What ships is this network with 8-bit convolutions
    (:func:`quantize_reader`)."""
    import torch

    class Both(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            rank, suit = self.net(x)
            return torch.softmax(rank, 1), torch.softmax(suit, 1)

    out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(Both().eval(), torch.zeros(1, 3, size, size), str(out), opset_version=17,
                      input_names=["images"], output_names=["rank", "suit"],
                      dynamic_axes={"images": {0: "n"}, "rank": {0: "n"}, "suit": {0: "n"}},
                      dynamo=False)


def write_description(meta_path: Path, factors: list[dict], seed: int) -> None:
    """The classifier JSON of a reader just trained (:func:`train_reader`'s ``factors``), its
    temperatures still 1 (:func:`calibrate_classifier` fits them)."""
    meta_path.write_text(json.dumps({"classes": list(CORNER_CLASSES), "input_size": READER_SIZE,
                                     "crop_size": CORNER_SIZE, "turns": READER_TURNS,
                                     "seed": seed, "factors": factors}, indent=1))


def calibrate_classifier(meta_path: Path, val: CropSet) -> dict:
    """Fit each factor's softmax temperature on the real crops of the validation groups (of the
    training split; never trained on) and measure the combined top-1 there; rewrites the JSON."""
    from vision.photo_detect import CornerClassifier
    from vision.strip_classifier import fit_temperature

    meta = json.loads(meta_path.read_text())
    # every crop at every turn: the temperatures are those of the four-turn reading the
    # thresholds were chosen on (TURN_SURE's shortcut leaves the photo reader's output as it was)
    clf = replace(CornerClassifier.load(meta_path), sure=math.inf)
    crops, codes = val.crops, val.codes
    for entry, factor in zip(meta["factors"], clf.factors, strict=True):
        keep = [i for i, c in enumerate(codes) if part_of(c, factor.part) is not None]
        p = clf.factor_probs(factor, [crops[i] for i in keep])
        y = np.array([factor.classes.index(part_of(codes[i], factor.part)) for i in keep])
        entry["temperature"] = round(fit_temperature(p, y), 3)
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return score_classifier(meta_path, val)


def score_classifier(meta_path: Path, val: CropSet, **extra: object) -> dict:
    """Measure the classifier of the JSON at ``meta_path`` on the real crops ``val`` (every
    crop at every turn): top-1 of all crops and of the index crops; rewrites the JSON with
    those figures and ``extra``."""
    from vision.photo_detect import CornerClassifier

    meta = json.loads(meta_path.read_text())
    crops, codes = val.crops, val.codes
    clf = replace(CornerClassifier.load(meta_path), sure=math.inf)
    y = np.array([clf.classes.index(c) for c in codes])
    probs = np.concatenate([clf.classify(crops[i:i + 256]) for i in range(0, len(crops), 256)])
    hit = probs.argmax(1) == y
    cards = y != clf.classes.index(NONE)
    meta["val_crops"] = len(y)
    meta["val_top1"] = round(float(hit.mean()), 4)
    meta["val_top1_indices"] = round(float(hit[cards].mean()), 4)
    meta.update(extra)
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return meta


QUANT_CROPS = 1024
"""Training crops (drawn with seed 0) on which :func:`quantize_reader` measures the ranges of
the reader's activations."""


def quantize_reader(path: Path, crops: list[np.ndarray], size: int, keep: Path) -> int:
    """Rewrite the float reader at ``path`` with 8-bit convolutions and dense layers (static,
    QDQ: weights per channel in 7 bits, activations in 8 bits at the ranges they reach on
    :data:`QUANT_CROPS` of ``crops``, read at ``size`` px as the runtime reads them,
    :func:`reader_input`);
    the float file is moved to ``keep``. Returns the number of calibration crops.

    WHY: the reader is most of a photo's time (a slow webcam photo read 272 crops in 0.29 s),
    and on this AMD EPYC (AVX-512 VNNI) the 8-bit network reads 68 crops in 24 ms against
    59 ms (models/HISTORY.md, "The 8-bit corner reader"). WHY only Conv and Gemm: with the
    softmax in 8 bits too, a probability under 1/256 became 0, which the four-turn
    log-average reads as certainty (the rank temperature fitted on it jumped from 0.92 to
    1.54). WHY 7-bit weights (``reduce_range``): a CPU without VNNI may saturate 8-bit
    products (onnxruntime's advice); on this CPU it cost no speed. (The 8-bit reader of the
    tenth session was dynamic, ``quantize_dynamic``, and ran 1.7 times slower than float.)"""
    import shutil
    import tempfile

    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from vision.photo_detect import reader_input

    rng = np.random.default_rng(0)
    pick = rng.choice(len(crops), min(QUANT_CROPS, len(crops)), replace=False)
    x = reader_input([cv2.resize(crops[i], (size, size), interpolation=cv2.INTER_LINEAR)
                      for i in pick])

    class Batches(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter([{"images": x[i:i + 64]} for i in range(0, len(x), 64)])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.batches, None)

    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(path, keep)
    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(keep), str(pre))
        quantize_static(str(pre), str(path), Batches(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        per_channel=True, reduce_range=True, op_types_to_quantize=["Conv", "Gemm"])
    return len(pick)


FULL = {"cls_epochs": 30, "per_label": 10, "per_quad": 3, "rendered": 16000, "negatives": 1}
QUICK = {"cls_epochs": 1, "per_label": 1, "per_quad": 1, "rendered": 200, "negatives": 1}
READER_SIZE = 48
"""Input side of the rank and suit networks: the 48-px crops as they are (32 px until the tenth
session; at 48 the validation groups' index crops read 76.7% right instead of 57.4%, with the
same trunk, data and 20 epochs)."""
READER_TURNS = 4
"""Quarter turns each crop is read at, log-probabilities averaged (``turns`` in the JSON):
chosen on the validation groups of the training split, where reading the 317 index crops at
four turns instead of one read 52.7% right instead of 41.0% (the networks learn every turn)."""
PARTS = ("all", "reader", "spotter")
READER_FILE = "corner_reader.onnx"


def train_corners(out_dir: Path, runs: Path, photos: Path = DEFAULT_PHOTOS, quick: bool = False,
                  epochs: int | None = None, log: Log = print, part: str = "all",
                  seed: int = 0) -> dict:
    """The whole recipe: data from the training split, both trainings, ONNX + JSON in
    ``out_dir`` (``index_spotter.{onnx,json}``, ``corner_reader.onnx`` in 8 bits
    (:func:`quantize_reader`; the float network it was made from in ``runs``),
    ``corner_classifier.json``). ``epochs`` replaces the reader's number of epochs, ``seed``
    the seed of both trainings (:func:`train_reader`, :func:`~vision.train.spotter.train_spotter`;
    0 made the shipped networks). ``part`` rebuilds only the ``spotter`` or only the
    ``reader`` (one network, rank and suit heads)."""
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r}: use one of {', '.join(PARTS)}")
    if not (photos / "data.yaml").is_file():
        raise OSError(f"{photos}: no data.yaml; the CC BY photos are needed to train the corner "
                      "models (give their folder with --photos)")
    r = QUICK if quick else FULL
    t0 = time.time()
    if part in ("all", "spotter"):
        from vision.train.spotter import build_spotter

        spotter = build_spotter(out_dir, runs / "spotter", photos, quick, log, seed)
        if part == "spotter":
            return spotter
    meta_path = out_dir / "corner_classifier.json"
    t1 = time.time()
    sets = build_crops(photos, int(r["per_label"]), int(r["per_quad"]), int(r["rendered"]),
                       int(r["negatives"]), log=log)
    log(f"corner crops: {len(sets['train'].codes)} training, {len(sets['val'].codes)} "
        f"validation ({time.time() - t1:.0f} s)")
    factors = train_reader(sets, out_dir, READER_SIZE, epochs or int(r["cls_epochs"]), log,
                           seed)
    write_description(meta_path, factors, seed)
    # the float network's temperatures, kept for its 8-bit copy: refitted on the 8-bit one,
    # the whole photo reader found 1,189 of the training split's 1,414 labels, kept 1,193
    # (the float reader: 1,197)
    float_meta = calibrate_classifier(meta_path, sets["val"])
    used = quantize_reader(out_dir / READER_FILE, sets["train"].crops, READER_SIZE,
                           runs / "corner_reader.float.onnx")
    meta = score_classifier(
        meta_path, sets["val"],
        eight_bit={"calibration_crops": used, "float_val_top1": float_meta["val_top1"],
                   "float_val_top1_indices": float_meta["val_top1_indices"]})
    log(f"corner reader trained and exported in {time.time() - t1:.0f} s: validation top-1 "
        f"{meta['val_top1']} on {meta['val_crops']} real crops ({meta['val_top1_indices']} of "
        f"the indices); total {time.time() - t0:.0f} s")
    return meta
