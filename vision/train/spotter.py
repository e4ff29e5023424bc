"""Train the index spotter (:mod:`vision.index_spotter`): one small fully convolutional network
that finds every printed corner index (and face-down card) in a photo, trained on the CC BY
photos' training split and on rendered photos of other printings.

WHY this and not the YOLO detector it replaced: on this 2-core CPU the YOLOv8n detector got 14
epochs (validation mAP50 0.20) and boxed only about 60% of the training split's indices. A
CenterNet-style network of 0.8 M weights trains at about 50 crops a second here (bfloat16), so
an hour is some three hundred passes over the photos, each time with a fresh zoom, any turn, a
mirror image and camera faults: on the validation groups it finds 92% of the indices. Mirror
images teach it the selfie view of webcams, whose indices sit top-right and read backwards. It
also learns each index's rank and suit (a second task that shapes its features; the corner
classifier reads the indices). Nothing is downloaded; torch only at training time, onnxruntime
at run time.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.index_spotter import (
    BACK_HEAT,
    HEADS,
    INDEX_HEAT,
    RANKS,
    STRIDE,
    SUITS,
)
from vision.photo_split import in_validation
from vision.synth.index_crops import motion_kernel, table_photo

Log = Callable[[str], None]

CROP = 288
"""Side of a training crop (px): the network is fully convolutional, so it runs on whole photos
at any size that is a multiple of 32."""
RENDERED_SHARE = 0.3
"""Share of the training crops cut from rendered photos (when there are)."""
SCALES = (0.5, 1.6)
"""Range (log-uniform) of the zoom applied to a 640-px photo before cropping: indices from 9 to
220 px, around the 18-137 px of the photos (5th-95th percentile)."""


@dataclass(frozen=True)
class Photo:
    """One labelled photo: BGR pixels and its boxes (kind 0 index / 1 back, rank, suit,
    x0, y0, x1, y1 in pixels; rank/suit -1 where they do not apply)."""

    image: np.ndarray
    boxes: np.ndarray  # (N, 7) float32
    name: str


def code_parts(code: str) -> tuple[int, int, int]:
    """(kind, rank, suit) of a label code: ``BACK`` is kind 1; ``JK`` has no suit."""
    if code == "BACK":
        return 1, -1, -1
    if code == "JK":
        return 0, RANKS.index("JK"), -1
    if code[:-1] not in RANKS[:-1] or code[-1:] not in SUITS:
        raise ValueError(f"{code!r} is no standard card code (rank A 2-10 J Q K and suit "
                         "S H D C, JK or BACK)")
    return 0, RANKS.index(code[:-1]), SUITS.index(code[-1])


def load_photos(root: Path, val: bool) -> list[Photo]:
    """The training split's photos (``val``: only its validation groups,
    :func:`vision.photo_split.in_validation`, else all the rest)."""
    from vision.evaluate import read_names
    from vision.train.corners import train_images, yolo_boxes

    names = read_names(root / "data.yaml")
    out = []
    for path in train_images(root):
        if in_validation(path.name) != val or (image := cv2.imread(str(path))) is None:
            continue
        h, w = image.shape[:2]
        rows = [(*code_parts(names[k]), (cx - bw / 2) * w, (cy - bh / 2) * h,
                 (cx + bw / 2) * w, (cy + bh / 2) * h)
                for k, cx, cy, bw, bh in yolo_boxes(root, path)]
        out.append(Photo(image, np.asarray(rows, np.float32).reshape(-1, 7), path.name))
    return out


# ----------------------------------------------------------------------------- augmentation


def _affine(photo: Photo, rng: np.random.Generator) -> np.ndarray:
    """A random 2×3 map from the photo to a training crop: zoom, any turn, a mirror image half
    the time, centred on a labelled box most of the time (so most crops hold an index)."""
    h, w = photo.image.shape[:2]
    scale = math.exp(rng.uniform(*np.log(SCALES))) * 640 / max(h, w)
    angle = rng.uniform(0, 360) if rng.random() < 0.7 else rng.normal(0, 10)
    if len(photo.boxes) and rng.random() < 0.8:
        b = photo.boxes[rng.integers(len(photo.boxes))]
        cx, cy = (b[3] + b[5]) / 2, (b[4] + b[6]) / 2
        spread = CROP * 0.35 / scale
        cx, cy = cx + rng.uniform(-spread, spread), cy + rng.uniform(-spread, spread)
    else:
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    m = cv2.getRotationMatrix2D((float(cx), float(cy)), float(angle), float(scale))
    m[:, 2] += (CROP / 2 - cx, CROP / 2 - cy)
    if rng.random() < 0.5:  # mirror about the crop's vertical axis
        m = np.float64([[-1, 0, CROP], [0, 1, 0]]) @ np.vstack([m, [0, 0, 1]])
    return m


def _camera(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Light, colour and camera faults: exposure, contrast, gamma, saturation (down to grey),
    a slight hue shift, a colour cast, blur or motion blur, noise, salt and pepper, JPEG."""
    x = img.astype(np.float32)
    if rng.random() < 0.8:
        hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV).astype(np.float32)
        hsv[..., 0] = (hsv[..., 0] + rng.normal(0, 3)) % 180
        hsv[..., 1] *= rng.uniform(0.5, 1.3)
        x = cv2.cvtColor(np.clip(hsv, 0, 255).astype(np.uint8), cv2.COLOR_HSV2BGR).astype(
            np.float32)
    if rng.random() < 0.15:
        x = np.repeat(cv2.cvtColor(x.astype(np.uint8), cv2.COLOR_BGR2GRAY)[..., None], 3,
                      2).astype(np.float32)
    x = x * rng.uniform(0.85, 1.15, 3)[None, None] if rng.random() < 0.5 else x
    x = (x - 128) * rng.uniform(0.6, 1.3) + 128 + rng.uniform(-50, 40)
    x = 255 * np.power(np.clip(x, 0, 255) / 255, rng.uniform(0.7, 1.4))
    if rng.random() < 0.3:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.5, 1.8))
    elif rng.random() < 0.1:
        kernel = motion_kernel(rng)
        x = cv2.filter2D(x, -1, kernel / max(float(kernel.sum()), 1e-6))
    if rng.random() < 0.4:
        x = x + rng.normal(0, rng.uniform(2, 12), x.shape)
    out = np.clip(x, 0, 255).astype(np.uint8)
    if rng.random() < 0.15:
        dots = rng.random(out.shape[:2])
        out[dots < 0.004] = 0
        out[dots > 0.996] = 255
    if rng.random() < 0.3:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(25, 90))])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def sample(photo: Photo, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One training crop (CROP × CROP BGR) and its targets: heat (2, G, G), and per box the row
    (kind, rank, suit, centre x, centre y, size) in crop pixels (size = √(w·h), the box's scale
    whatever its turn)."""
    m = _affine(photo, rng)
    fill = tuple(int(v) for v in rng.integers(0, 256, 3))
    img = cv2.warpAffine(photo.image, m, (CROP, CROP), flags=cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_CONSTANT, borderValue=fill)
    img = _camera(img, rng)
    b = photo.boxes
    scale = math.sqrt(abs(np.linalg.det(m[:, :2])))
    rows = np.zeros((len(b), 6), np.float32)
    if len(b):
        centres = np.stack([(b[:, 3] + b[:, 5]) / 2, (b[:, 4] + b[:, 6]) / 2, np.ones(len(b))], 1)
        xy = centres @ m.T
        rows[:, :3] = b[:, :3]
        rows[:, 3:5] = xy
        rows[:, 5] = np.sqrt((b[:, 5] - b[:, 3]) * (b[:, 6] - b[:, 4])) * scale
    return img, rows, heatmaps(rows, CROP // STRIDE)


def heatmaps(rows: np.ndarray, grid: int) -> np.ndarray:
    """(2, grid, grid) Gaussian peaks at each box's centre cell (σ a sixth of its size, at least
    half a cell): index heat and face-down heat."""
    heat = np.zeros((2, grid, grid), np.float32)
    ys, xs = np.mgrid[0:grid, 0:grid].astype(np.float32)
    for kind, _, _, x, y, size in rows:
        gx, gy = x / STRIDE - 0.5, y / STRIDE - 0.5
        if not (-0.5 <= gx < grid - 0.5 and -0.5 <= gy < grid - 0.5):
            continue
        sigma = max(0.5, size / STRIDE / 6)
        cx, cy = round(gx), round(gy)
        g = np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * sigma ** 2))
        k = INDEX_HEAT if kind == 0 else BACK_HEAT
        heat[k] = np.maximum(heat[k], g)
    return heat


# ----------------------------------------------------------------------------- network


def network(widths: tuple[int, ...] = (24, 48, 80, 128, 160), head: int = 64) -> Any:
    """The spotter: a plain conv trunk to 1/32, a feature pyramid back to 1/8, one head of
    :data:`vision.index_spotter.HEADS` channels at every 1/8 cell (torch)."""
    import torch
    from torch import nn
    from torch.nn import functional as F  # noqa: N812

    def cbr(a: int, b: int, s: int = 1) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(a, b, 3, s, 1, bias=False), nn.BatchNorm2d(b),
                             nn.ReLU(inplace=True))

    a, b, c, d, e = widths

    class Spotter(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.s4 = nn.Sequential(cbr(3, a, 2), cbr(a, b, 2), cbr(b, b))
            self.s8 = nn.Sequential(cbr(b, c, 2), cbr(c, c))
            self.s16 = nn.Sequential(cbr(c, d, 2), cbr(d, d))
            self.s32 = nn.Sequential(cbr(d, e, 2), cbr(e, e))
            self.lat16, self.lat8 = nn.Conv2d(d, e, 1), nn.Conv2d(c, e, 1)
            self.mix16, self.mix8 = cbr(e, e), cbr(e, head)
            self.head = nn.Sequential(cbr(head, head), nn.Conv2d(head, HEADS, 1))
            nn.init.constant_(self.head[-1].bias[:2], -4.0)  # heat starts near 0

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x8 = self.s8(self.s4(x))
            x16 = self.s16(x8)
            x32 = self.s32(x16)
            p16 = self.mix16(self.lat16(x16) + F.interpolate(x32, scale_factor=2.0))
            p8 = self.mix8(self.lat8(x8) + F.interpolate(p16, scale_factor=2.0))
            return self.head(p8)

    return Spotter()


def losses(out: Any, heat: Any, rows: list[np.ndarray]) -> dict[str, Any]:
    """CenterNet's focal loss on both heat maps; at each box's centre cell and its neighbours,
    L1 on the log size and the sub-cell offset, cross-entropy on the rank and the suit."""
    import torch
    from torch.nn import functional as F  # noqa: N812

    from vision.index_spotter import OFFSET, RANK, SIZE, SUIT

    pred = torch.sigmoid(out[:, :2]).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg = 1 - pos
    focal = -(pos * (1 - pred) ** 2 * torch.log(pred)
              + neg * (1 - heat) ** 4 * pred ** 2 * torch.log(1 - pred)).sum()
    n_pos = max(float(pos.sum()), 1.0)
    g = out.shape[-1]
    idx, tgt = [], []
    for n, r in enumerate(rows):
        for kind, rank, suit, x, y, size in r:
            gx, gy = x / STRIDE - 0.5, y / STRIDE - 0.5
            cx, cy = round(gx), round(gy)
            if not (0 <= cx < g and 0 <= cy < g):
                continue
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    px, py = cx + dx, cy + dy
                    if 0 <= px < g and 0 <= py < g:
                        idx.append((n, py, px))
                        tgt.append((kind, rank, suit, math.log(size / STRIDE), gx - px, gy - py,
                                    float(dx == dy == 0)))
    zero = out.sum() * 0
    if not idx:
        return {"heat": focal / n_pos, "size": zero, "offset": zero, "rank": zero, "suit": zero}
    n_, y_, x_ = (torch.tensor(v, device=out.device) for v in zip(*idx, strict=True))
    t = torch.tensor(tgt, dtype=torch.float32, device=out.device)
    cell = out[n_, :, y_, x_]  # (M, HEADS)
    kind = t[:, 0].long()
    centre = t[:, 6] > 0
    size_pred = cell[torch.arange(len(t), device=out.device), SIZE + kind]
    size = F.l1_loss(size_pred[centre], t[centre, 3]) if centre.any() else zero
    offset = F.l1_loss(cell[:, OFFSET:OFFSET + 2][centre], t[centre, 4:6]) if centre.any() \
        else zero
    faces = (kind == 0) & (t[:, 1] >= 0)
    rank = F.cross_entropy(cell[faces, RANK:RANK + len(RANKS)], t[faces, 1].long()) \
        if faces.any() else zero
    suited = faces & (t[:, 2] >= 0)
    suit = F.cross_entropy(cell[suited, SUIT:SUIT + len(SUITS)], t[suited, 2].long()) \
        if suited.any() else zero
    return {"heat": focal / n_pos, "size": size, "offset": offset, "rank": rank, "suit": suit}


# ----------------------------------------------------------------------------- training


def rendered_photos(count: int, seed: int) -> list[Photo]:
    """``count`` rendered photos of standard cards (:func:`vision.synth.index_crops.table_photo`,
    seeds ``[seed, k]``): printings and fonts the two decks of the real photos do not show."""
    out = []
    for k in range(count):
        image, labels = table_photo(np.random.default_rng([seed, k]))
        rows = [(*code_parts(code), *box) for code, box in labels]
        out.append(Photo(image, np.asarray(rows, np.float32).reshape(-1, 7), f"render-{k}"))
    return out


def batches(photos: list[Photo], rendered: list[Photo], batch: int, rng: np.random.Generator
            ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """One training batch: (N, 3, CROP, CROP) RGB in [0, 1], heat (N, 2, G, G), box rows; a
    :data:`RENDERED_SHARE` of its crops from ``rendered`` photos."""
    imgs, heats, rows = [], [], []
    for _ in range(batch):
        pool = rendered if rendered and rng.random() < RENDERED_SHARE else photos
        img, r, h = sample(pool[int(rng.integers(len(pool)))], rng)
        imgs.append(cv2.cvtColor(img, cv2.COLOR_BGR2RGB))
        heats.append(h)
        rows.append(r)
    x = np.stack(imgs).astype(np.float32).transpose(0, 3, 1, 2) / 255
    return x, np.stack(heats), rows


def train_spotter(root: Path, runs: Path, steps: int = 12000, batch: int = 16, seed: int = 0,
                  rendered: int = 0, log: Log = print) -> Path:
    """Train ``steps`` batches (AdamW, one-cycle learning rate) on the training split less its
    validation groups; the last weights are saved at ``runs/spotter.pt`` (nothing is chosen on
    held-out photos).

    WHY bfloat16 and channels-last tensors: on the CPU it was chosen on (one with AMX) a step
    took 0.15-0.23 s against 0.39-0.57 s in float32 (a batch of 16), so twice the float32
    recipe's 6,000 steps fit in its time (3,845 s against 4,544 s), and more steps find more
    indices (on a lent GPU, 18,000 steps against 6,000: models/HISTORY.md). A CUDA device is
    used when torch sees one (the quick recipe ran so on a lent H200; each batch is drawn on one
    core, about 0.125 s, which bounds a GPU run of the full recipe: models/HISTORY.md)."""
    import torch

    torch.manual_seed(seed)
    photos = load_photos(root, val=False)
    log(f"spotter: {len(photos)} training photos, "
        f"{sum(len(p.boxes) for p in photos)} boxes")
    synth = rendered_photos(rendered, seed)
    if synth:
        log(f"spotter: {len(synth)} rendered photos, {sum(len(p.boxes) for p in synth)} boxes")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = network().to(device, memory_format=torch.channels_last)
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3, total_steps=steps,
                                                pct_start=0.05)
    rng = np.random.default_rng(seed)
    weights = {"heat": 1.0, "size": 0.5, "offset": 0.5, "rank": 1.0, "suit": 1.0}
    t0 = time.time()
    run = {k: 0.0 for k in weights}
    net.train()
    for step in range(1, steps + 1):
        x, heat, rows = batches(photos, synth, batch, rng)
        x = torch.from_numpy(x).to(device, memory_format=torch.channels_last)
        with torch.autocast(device.type, dtype=torch.bfloat16):
            out = net(x)
        parts = losses(out.float(), torch.from_numpy(heat).to(device), rows)
        loss = sum(weights[k] * v for k, v in parts.items())
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        for k, v in parts.items():
            run[k] = 0.98 * run[k] + 0.02 * float(v.detach())
        if step % 500 == 0 and step < steps:
            runs.mkdir(parents=True, exist_ok=True)
            torch.save(net.state_dict(), runs / "spotter-last.pt")
        if step % 100 == 0:
            log(f"spotter: step {step}/{steps} " + " ".join(f"{k} {v:.3f}" for k, v in
                                                           run.items())
                + f" ({time.time() - t0:.0f} s)")
    runs.mkdir(parents=True, exist_ok=True)
    path = runs / "spotter.pt"
    torch.save({k: v.cpu() for k, v in net.state_dict().items()}, path)
    return path


def export(weights: Path, out: Path, meta: dict[str, Any]) -> None:
    """ONNX of the spotter (dynamic height and width) and its JSON beside it."""
    import torch

    net = network()
    net.load_state_dict(torch.load(weights, map_location="cpu"))
    net.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    x = torch.zeros(1, 3, 320, 320)
    torch.onnx.export(net, x, str(out), input_names=["images"], output_names=["maps"],
                      dynamic_axes={"images": {0: "n", 2: "h", 3: "w"},
                                    "maps": {0: "n", 2: "gh", 3: "gw"}},
                      opset_version=17, dynamo=False)
    out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")


def _matches(spots: list[Any], photo: Photo, least: float) -> list[tuple[int, Any | None]]:
    """Each labelled index of ``photo`` (its row number) with the highest spot of kind index at
    ``least`` whose centre lies within half the label's size of the label's centre, or None."""
    out = []
    for n, row in enumerate(photo.boxes):
        if row[0] != 0:
            continue
        near = [s for s in spots if s.kind == "index" and s.score >= least and _on(s, row)]
        out.append((n, max(near, key=lambda s: s.score) if near else None))
    return out


def _on(spot: Any, row: np.ndarray) -> bool:
    """Whether a spot's centre lies within half the size of the labelled box ``row`` (a
    :class:`Photo` box row) of that box's centre (6 px at least)."""
    x0, y0, x1, y1 = (float(v) for v in row[3:7])
    reach = max(0.5 * math.sqrt((x1 - x0) * (y1 - y0)), 6.0)
    c = (spot.box[:2] + spot.box[2:]) / 2
    return float(np.linalg.norm(c - np.float32([(x0 + x1) / 2, (y0 + y1) / 2]))) <= reach


def measure(model: Path, photos: list[Photo], least: float = 0.3) -> dict[str, Any]:
    """What the spotter finds on the validation groups' labelled indices: labels found (a peak
    ≥ ``least`` within half an index of the label's centre), found and read right by the
    network's own rank and suit, and peaks ≥ ``least`` near no labelled index."""
    from vision.index_spotter import IndexSpotter

    spotter = IndexSpotter.load(model)
    found = right = labels = false = 0
    for photo in photos:
        spots = spotter.spots(photo.image, least=least)
        matched = _matches(spots, photo, least)
        labels += len(matched)
        for n, spot in matched:
            if spot is None:
                continue
            found += 1
            _, rank, suit = (int(v) for v in photo.boxes[n, :3])
            right += int(np.argmax(spot.rank)) == rank and (
                suit < 0 or int(np.argmax(spot.suit)) == suit)
        used = {id(s) for _, s in matched if s is not None}
        # a second peak on one index is not a false index
        false += sum(1 for s in spots if s.kind == "index" and id(s) not in used
                     and not any(row[0] == 0 and _on(s, row) for row in photo.boxes))
    return {"val_labels": labels, "val_found": found, "val_right": right, "val_false": false}


FULL = {"steps": 12000, "batch": 16, "rendered": 1500, "precision": "bfloat16"}
QUICK = {"steps": 4, "batch": 4, "rendered": 4, "precision": "bfloat16"}
LONG_SIDE = 640
"""Long side (px) at which photos are read: the CC BY photos' own size."""


def build_spotter(out_dir: Path, runs: Path, photos: Path, quick: bool = False,
                  log: Log = print, seed: int = 0) -> dict[str, Any]:
    """The whole recipe: train (:func:`train_spotter`), export ``index_spotter.onnx`` into
    ``out_dir``, measure it on the validation groups (:func:`measure`) and write the JSON
    beside it (what the run time reads and what the model card quotes)."""
    r = QUICK if quick else FULL
    t0 = time.time()
    weights = train_spotter(photos, runs, steps=r["steps"], batch=r["batch"],
                            rendered=r["rendered"], seed=seed, log=log)
    path = out_dir / "index_spotter.onnx"
    meta: dict[str, Any] = {"long_side": LONG_SIDE, "stride": STRIDE, "ranks": list(RANKS),
                            "suits": list(SUITS), "recipe": r, "seed": seed}
    export(weights, path, meta)
    meta.update(measure(path, load_photos(photos, val=True)))
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    log(f"index spotter trained and exported in {time.time() - t0:.0f} s: validation groups "
        f"{meta['val_found']}/{meta['val_labels']} indices found, {meta['val_right']} read "
        f"right, {meta['val_false']} false")
    return meta
