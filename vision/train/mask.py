"""Train the card-mask network (:mod:`vision.card_mask`) on rendered single-card photos.

The data are the renders of the single-card checks (:mod:`vision.synth.photos`: a card on a
table, held up, under tinted light, a close-up, held up to a webcam in a lit room, held so
close that it runs off the frame), drawn at random, three in four with a UNO face and one in
four with a standard one, and one photo in ten with no card at all (a room with a person, a
plain surface), at render seeds of their own (``TRAIN_SEED``, ``VAL_SEED``: never the
tuning seeds 7 and 123 nor the measurement seed 99). Half of the webcam kind's renders and of
the photos with no card are drawn in real webcam frames of the CC BY set's training split
(:mod:`vision.synth.real_rooms`; ``ROOM_SHARE``): a mask that had seen only drawn rooms took the
player and the room of a real frame for card (models/HISTORY.md, thirty-sixth session). The
rendered card there is lit as the real card it covers: lit at its own brightness, it taught a
mask that missed the dim real cards (thirty-seventh session). Likewise half of the table kind's
renders, and half of the other photos with no card, are drawn on real surfaces: the set's phone
photos of one card lying on a table, floor or sofa (``SURFACE_SHARE``, training split). The
target is the part of the card's quad inside the frame, under thumbs and glare alike: the card
is where its outline runs.

The network is a small encoder-decoder (three stride-2 stages, dilated convolutions for
context, two upsampling stages with skips; about 230,000 weights) trained from scratch with
binary cross-entropy plus a soft Dice term, under random channel gains, gamma and mirroring.
It runs on a 160 × 120 photo in a few milliseconds on one core.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np

INPUT_SIZE = (160, 120)  # (W, H) of the photo the network sees
TRAIN_SEED, VAL_SEED = 4242, 4343
# the share of each kind of render: the webcam and close-held kinds are where the classical
# proposals fail most (models/HISTORY.md, "A learned card mask")
KINDS = (("near", 0.25), ("webcam", 0.25), ("held", 0.15), ("tinted", 0.1), ("closeup", 0.1),
         ("table", 0.15))
UNO_SHARE = 0.75
EMPTY_SHARE = 0.1  # photos with no card (:func:`vision.synth.photos.no_card_photo`)
ROOM_SHARE = 0.5  # of webcam renders and of photos with no card: in a real webcam frame
SURFACE_SHARE = 0.5  # of table renders, and of the photos with no card not in a real webcam
# frame: on a real surface of the CC BY set's phone photos (thirty-eighth session)
FULL = {"train": 6000, "val": 600, "epochs": 40}
"""40 epochs since the sixty-eighth session (RULE 74; 20 before): the same renders trained twice
as long fit real cards better (the CC BY held-out webcam frames' best-scored proposals 15 → 18 of
22, its phone photos' 93 → 98 of 129; models/HISTORY.md, "The card mask trained twice as long")."""
QUICK = {"train": 64, "val": 16, "epochs": 1}
BATCH = 32


def render_pair(seed: int, i: int, rooms: tuple[Path, ...] = (),
                surfaces: tuple[Path, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Render ``i`` of seed ``seed``: (BGR photo at ``INPUT_SIZE``, uint8 mask of the card's
    quad inside it, 255 on the card; drawn at 4× and averaged down, so edges are fractional).
    ``rooms``: real webcam frames (:mod:`vision.synth.real_rooms`), :data:`ROOM_SHARE` of the
    webcam kind's renders and of the photos with no card drawn in one of them; ``surfaces``:
    real phone photos of one card lying down, :data:`SURFACE_SHARE` of the table kind's renders
    and of the other photos with no card drawn on one of them."""
    from vision.synth.faces import STANDARD_FACE_CODES, UNO_FACE_CODES
    from vision.synth.photos import (
        empty_room,
        empty_surface,
        held_in_room,
        lying_in_room,
        no_card_photo,
        single_card_kinds,
    )
    from vision.synth.real_rooms import load_room

    makers = single_card_kinds()
    rng = np.random.default_rng([seed, i])
    W, H = INPUT_SIZE
    big = np.zeros((H * 4, W * 4), np.uint8)
    if rng.random() < EMPTY_SHARE:
        if rooms and rng.random() < ROOM_SHARE:
            photo = empty_room(load_room(rooms[int(rng.integers(len(rooms)))]), rng)
        elif surfaces and rng.random() < SURFACE_SHARE:
            photo = empty_surface(load_room(surfaces[int(rng.integers(len(surfaces)))]), rng)
        else:
            photo = no_card_photo(rng)
        return cv2.resize(photo, (W, H), interpolation=cv2.INTER_AREA), big[::4, ::4].copy()
    share = np.array([p for _, p in KINDS])
    kind = KINDS[int(rng.choice(len(KINDS), p=share / share.sum()))][0]
    codes = UNO_FACE_CODES if rng.random() < UNO_SHARE else STANDARD_FACE_CODES
    code = codes[int(rng.integers(len(codes)))]
    if kind == "webcam" and rooms and rng.random() < ROOM_SHARE:
        photo, quad = held_in_room(code, rng, load_room(rooms[int(rng.integers(len(rooms)))]))
    elif kind == "table" and surfaces and rng.random() < SURFACE_SHARE:
        photo, quad = lying_in_room(code, rng,
                                    load_room(surfaces[int(rng.integers(len(surfaces)))]))
    else:
        photo, quad = makers[kind](code, rng)
    h, w = photo.shape[:2]
    small = cv2.resize(photo, (W, H), interpolation=cv2.INTER_AREA)
    cv2.fillPoly(big, [np.round(quad * [W * 4 / w, H * 4 / h]).astype(np.int32)], 255)
    return small, cv2.resize(big, (W, H), interpolation=cv2.INTER_AREA)


def _render_many(job: tuple[int, int, int, tuple[Path, ...], tuple[Path, ...]]
                 ) -> tuple[np.ndarray, np.ndarray]:
    seed, start, stop, rooms, surfaces = job
    pairs = [render_pair(seed, i, rooms, surfaces) for i in range(start, stop)]
    return np.stack([p for p, _ in pairs]), np.stack([m for _, m in pairs])


def render_set(seed: int, count: int, workers: int = 2, rooms: tuple[Path, ...] = (),
               surfaces: tuple[Path, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """``count`` renders of ``seed`` (:func:`render_pair`): photos (N, H, W, 3) and masks
    (N, H, W), the same for any number of ``workers``."""
    chunk = 64
    jobs = [(seed, a, min(a + chunk, count), rooms, surfaces) for a in range(0, count, chunk)]
    if workers <= 1:
        parts = [_render_many(j) for j in jobs]
    else:
        with ProcessPoolExecutor(workers) as pool:
            parts = list(pool.map(_render_many, jobs))
    return np.concatenate([p for p, _ in parts]), np.concatenate([m for _, m in parts])


def _network() -> Any:
    import torch
    from torch import nn
    from torch.nn import functional as F  # noqa: N812

    def block(a: int, b: int, stride: int = 1, dilation: int = 1) -> nn.Module:
        return nn.Sequential(nn.Conv2d(a, b, 3, stride, dilation, dilation=dilation, bias=False),
                             nn.BatchNorm2d(b), nn.ReLU(inplace=True))

    class MaskNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.e1 = nn.Sequential(block(3, 16, 2), block(16, 16))
            self.e2 = nn.Sequential(block(16, 32, 2), block(32, 32))
            self.e3 = nn.Sequential(block(32, 64, 2), block(64, 64))
            self.context = nn.Sequential(block(64, 64, dilation=2), block(64, 64, dilation=4),
                                         block(64, 64, dilation=8))
            self.d2 = nn.Sequential(block(64 + 32, 32), block(32, 32))
            self.d1 = nn.Sequential(block(32 + 16, 16), nn.Conv2d(16, 1, 1))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            a = self.e1(x)
            b = self.e2(a)
            c = self.context(self.e3(b))
            u = F.interpolate(c, size=b.shape[2:], mode="bilinear", align_corners=False)
            u = self.d2(torch.cat([u, b], 1))
            u = F.interpolate(u, size=a.shape[2:], mode="bilinear", align_corners=False)
            u = self.d1(torch.cat([u, a], 1))
            return F.interpolate(u, size=x.shape[2:], mode="bilinear", align_corners=False)

    return MaskNet()


def _tensors(photos: np.ndarray, masks: np.ndarray) -> tuple[Any, Any]:
    import torch

    x = torch.from_numpy(photos).permute(0, 3, 1, 2).float() / 255
    return x, torch.from_numpy(masks).float()[:, None] / 255


def mask_iou(pred: Any, target: Any) -> Any:
    """Per-photo IoU of the masks at 0.5 (tensors (N, 1, H, W)); 1 where both are empty."""
    p, t = pred > 0.5, target > 0.5
    union = (p | t).sum((1, 2, 3)).float()
    return ((p & t).sum((1, 2, 3)).float() / union.clamp(min=1)).where(union > 0, 1.0)


def score_mask(runtime: Any, photos: np.ndarray, masks: np.ndarray) -> dict:
    """The exported model in its runtime (a :class:`vision.card_mask.CardMask`) on held-out
    renders: the mean IoU of its mask with the card's on photos of a card, the share above
    0.9, and on photos of no card, how many it proposes a blob in (false cards)."""
    from vision.card_mask import THRESHOLD, mask_blobs

    ious, false = [], []
    for photo, truth in zip(photos, masks, strict=True):
        pred = runtime.predict(photo)
        if truth.max() == 0:
            false.append(bool(mask_blobs(pred, pred.shape)))
            continue
        p, t = pred >= THRESHOLD, truth >= 128
        ious.append(float((p & t).sum() / max((p | t).sum(), 1)))
    return {"val_iou_mean": round(float(np.mean(ious)), 4),
            "val_iou_over_0.9": round(float(np.mean(np.array(ious) > 0.9)), 4),
            "val_card_photos": len(ious), "val_empty_photos": len(false),
            "val_empty_with_blob": int(sum(false))}


def train_mask(out: Path, photos: Path, quick: bool = False, epochs: int | None = None,
               workers: int = 2, log: Callable[[str], None] = print, seed: int = 0) -> dict:
    """Render, train, export ``out`` (``card_mask.onnx``) and its ``.json``; returns the
    metadata (the validation renders' mask IoU among it). ``seed`` sets the network's initial
    weights, the batch order and the augmentation, never the renders: trainings of one recipe
    at several seeds show how far its luck alone moves a figure (0 made the shipped mask)."""
    import torch
    from torch.nn import functional as F  # noqa: N812

    recipe = QUICK if quick else FULL
    epochs = epochs or recipe["epochs"]
    start = time.time()
    from vision.synth.real_rooms import room_frames

    rooms, surfaces = room_frames(photos), room_frames(photos, source="phone")
    for frames, what in ((rooms, "webcam frames"), (surfaces, "phone photos of one card")):
        if not frames:
            raise FileNotFoundError(
                f"no {what} of the CC BY photo set under {photos}: the card mask is drawn "
                "partly in them; pass --photos DIR (playing-cards-photos-cc-by)")
    x, y = _tensors(*render_set(TRAIN_SEED, recipe["train"], workers, rooms, surfaces))
    val = render_set(VAL_SEED, recipe["val"], workers, rooms, surfaces)
    vx, vy = _tensors(*val)
    log(f"rendered {len(x)} training and {len(vx)} validation photos "
        f"({time.time() - start:.0f} s)")
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    net = _network()
    steps = max(1, len(x) // BATCH)
    opt = torch.optim.AdamW(net.parameters(), 3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=epochs * steps)
    for epoch in range(epochs):
        net.train()
        order = torch.randperm(len(x), generator=gen)
        total = 0.0
        for k in range(steps):
            idx = order[k * BATCH:(k + 1) * BATCH]
            n = len(idx)
            # the webcam's colour cast and exposure, and the photo mirrored
            gain = 1 + 0.25 * (torch.rand(n, 3, 1, 1, generator=gen) - 0.5)
            gamma = torch.exp(0.4 * (torch.rand(n, 1, 1, 1, generator=gen) - 0.5))
            bx = (x[idx].clamp(1e-4, 1) ** gamma * gain).clamp(0, 1)
            by = y[idx].clone()
            flip = torch.rand(n, generator=gen) < 0.5
            bx[flip], by[flip] = bx[flip].flip(3), by[flip].flip(3)
            logits = net(bx)
            p = torch.sigmoid(logits)
            dice = 1 - (2 * (p * by).sum((1, 2, 3)) + 1) / (p.sum((1, 2, 3))
                                                          + by.sum((1, 2, 3)) + 1)
            loss = F.binary_cross_entropy_with_logits(logits, by) + dice.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach())
        net.eval()
        with torch.no_grad():
            ious = torch.cat([mask_iou(torch.sigmoid(net(vx[i:i + 64])), vy[i:i + 64])
                              for i in range(0, len(vx), 64)])
        log(f"epoch {epoch + 1}/{epochs}: loss {total / steps:.4f}, validation mask IoU "
            f"{float(ious.mean()):.4f} (>0.9 in {float((ious > 0.9).float().mean()):.3f})")
    _export(net, out)
    from vision.card_mask import CardMask
    from vision.classifier import cpu_session

    meta = {
        "input_size": list(INPUT_SIZE),
        **score_mask(CardMask(cpu_session(out, 1), INPUT_SIZE), *val),
        "train_photos": len(x),
        "epochs": epochs,
        "seeds": {"train": TRAIN_SEED, "val": VAL_SEED},
        "kinds": dict(KINDS),
        "empty_share": EMPTY_SHARE,
        "room_share": ROOM_SHARE,
        "room_frames": len(rooms),
        "surface_share": SURFACE_SHARE,
        "surface_frames": len(surfaces),
        **({"training_seed": seed} if seed else {}),
        "command": "cardtable train --part mask" + (" --quick" if quick else "")
        + (f" --seed {seed}" if seed else ""),
        "train_seconds": round(time.time() - start),
    }
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def _export(net: Any, out: Path) -> None:
    """The network with its sigmoid, as ONNX taking (1, 3, H, W) BGR in [0, 1]."""
    import torch

    class WithSigmoid(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.sigmoid(self.net(x))

    w, h = INPUT_SIZE
    torch.onnx.export(WithSigmoid().eval(), torch.zeros(1, 3, h, w), str(out), opset_version=17,
                      input_names=["images"], output_names=["mask"], dynamo=False)
