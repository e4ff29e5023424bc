"""Train the pip-suit reader (:mod:`vision.pip_suits`): a spade's, club's, heart's or diamond's
shape from one pip of a standard number card on a rendered table.

WHY rendered tables: the reader must know pips exactly as the table pipeline cuts them — a card
about 70 × 100 pixels in a 1280×720 frame, under the scenes' light, blur, noise and JPEG, cut
by a quad a pixel or two off. :func:`vision.synth.scenes.render_scene` draws exactly those (MIT
scans and drawn light and dark printings), with exact labels, from seeds below the measurement
range (:data:`TRAIN_SEED`, :data:`CALIB_SEED`). Only number cards (A–10) give pips; each
label quad is jittered by up to :data:`JITTER` pixels per corner, as the localiser misplaces.

The network is two dense layers (:data:`HIDDEN` units), trained with Adam in plain numpy (no
torch needed, a few minutes on one core), its softmax temperature fitted by negative
log-likelihood on the calibration scenes. Run: ``cardtable train --part pips`` (writes
``models/pip_suit.npz``) or ``python -m vision.train.pip_suits`` (``--scenes N``, ``--out``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from vision.pip_suits import (
    CLASSES,
    COURT_RANKS,
    DEFAULT_PIP_MODEL,
    PATCH,
    PIP_RANKS,
    SUITS,
    PipSuitReader,
    features,
    in_index,
    pip_patches,
    rectify,
)

TRAIN_SEED = 5_000_000
CALIB_SEED = 5_500_000
JITTER = 1.5
HIDDEN = 48
EPOCHS = 30
BATCH = 256
LEARNING_RATE = 2e-3
GLYPH_H = (0.1, 0.22)
"""Height (share of the card) of a drawn court card's suit glyph (16% of it, as drawn)."""


def _label(code: str, cx: float, cy: float, h: float) -> int:
    """The class (index into :data:`CLASSES`) of a blob of card ``code`` centred at (``cx``,
    ``cy``) and ``h`` tall (shares of the card): a number card's pips are its suit and its
    index digits ``X``; a court card's big suit glyph (drawn printings: below the letter,
    either way up) is its suit and the rest of it ``X``; a joker's and a back's blobs ``X``."""
    from protocol_runner.cards import BACK, parse_card

    other = CLASSES.index("X")
    if code in (BACK, "JK"):
        return other
    rank = parse_card(code).rank
    if in_index(cx, cy):
        return other
    if rank in PIP_RANKS:
        return SUITS.index(code[-1])
    glyph = abs(cx - 0.5) < 0.1 and min(abs(cy - 0.66), abs(cy - 0.34)) < 0.05 \
        and GLYPH_H[0] <= h <= GLYPH_H[1]
    return SUITS.index(code[-1]) if glyph and rank in COURT_RANKS else other


def scene_pips(seeds: range, jitter: float = JITTER) -> tuple[np.ndarray, np.ndarray]:
    """(N, PATCH, PATCH) blob patches and (N,) classes (:func:`_label`) of the cards of the
    rendered standard tables ``seeds``."""
    from vision.synth.scenes import render_scene

    xs, ys = [], []
    for seed in seeds:
        scene = render_scene(seed, deck="standard")
        rng = np.random.default_rng([seed, 1])
        for card in scene.cards:
            quad = card.quad + rng.uniform(-jitter, jitter, card.quad.shape)
            patches, where, heights = pip_patches(rectify(scene.image, quad), index=True,
                                                  heights=True)
            xs.append(patches)
            ys.append(np.array([_label(card.code, cx, cy, h)
                                for (cx, cy), h in zip(where, heights, strict=True)], int))
    return (np.concatenate(xs).astype(np.float32) if xs else np.zeros((0, PATCH, PATCH)),
            np.concatenate(ys).astype(int) if ys else np.zeros(0, int))


def train(x: np.ndarray, y: np.ndarray, seed: int = 0, epochs: int = EPOCHS,
          hidden: int = HIDDEN) -> PipSuitReader:
    """A :class:`PipSuitReader` fitted to patches ``x`` and suits ``y`` (cross-entropy, Adam,
    180° turns added: a pip in a card's lower half is printed upside down)."""
    x = np.concatenate([x, x[:, ::-1, ::-1]])
    y = np.concatenate([y, y])
    f = features(x)
    rng = np.random.default_rng(seed)
    d, k = f.shape[1], len(CLASSES)
    params = [rng.normal(0, np.sqrt(2 / d), (d, hidden)), np.zeros(hidden),
              rng.normal(0, np.sqrt(2 / hidden), (hidden, k)), np.zeros(k)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    step = 0
    for _ in range(epochs):
        order = rng.permutation(len(f))
        for start in range(0, len(f), BATCH):
            b = order[start:start + BATCH]
            w1, b1, w2, b2 = params
            pre = f[b] @ w1 + b1
            h = np.maximum(pre, 0.0)
            z = h @ w2 + b2
            z -= z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(len(b)), y[b]] -= 1.0
            gz = p / len(b)
            gh = (gz @ w2.T) * (pre > 0)
            grads = [f[b].T @ gh, gh.sum(axis=0), h.T @ gz, gz.sum(axis=0)]
            step += 1
            for i, g in enumerate(grads):
                m[i] = 0.9 * m[i] + 0.1 * g
                v[i] = 0.999 * v[i] + 0.001 * g * g
                params[i] -= (LEARNING_RATE * (m[i] / (1 - 0.9 ** step))
                              / (np.sqrt(v[i] / (1 - 0.999 ** step)) + 1e-8))
    w1, b1, w2, b2 = (p.astype(np.float32) for p in params)
    return PipSuitReader(w1, b1, w2, b2)


def fit_temperature(reader: PipSuitReader, x: np.ndarray, y: np.ndarray) -> float:
    """The softmax temperature with the least negative log-likelihood on ``x``, ``y``."""
    z = reader.logits(x)
    best, best_t = np.inf, 1.0
    for t in np.exp(np.linspace(np.log(0.3), np.log(5.0), 60)):
        s = z / t
        s = s - s.max(axis=1, keepdims=True)
        nll = float(-(s[np.arange(len(y)), y] - np.log(np.exp(s).sum(axis=1))).mean())
        if nll < best:
            best, best_t = nll, float(t)
    return best_t


def train_pip_suits(out: Path, scenes: int = 240, calib: int = 40,
                    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr)
                    ) -> dict[str, float]:
    """Render the pips of ``scenes`` training and ``calib`` calibration tables, train, fit the
    temperature, write the weights to ``out`` (.npz); returns the calibration figures."""
    t0 = time.perf_counter()
    x, y = scene_pips(range(TRAIN_SEED, TRAIN_SEED + scenes))
    xc, yc = scene_pips(range(CALIB_SEED, CALIB_SEED + calib))
    log(f"pip_suits: {len(x)} training pips, {len(xc)} calibration pips "
        f"({time.perf_counter() - t0:.0f} s)")
    reader = train(x, y)
    t = fit_temperature(reader, xc, yc)
    acc = float((reader.logits(xc).argmax(axis=1) == yc).mean())
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, w1=reader.w1, b1=reader.b1, w2=reader.w2, b2=reader.b2,
             temperature=np.float32(t), classes=np.array(CLASSES), patch=np.int32(PATCH),
             calib_top1=np.float32(acc), train_pips=np.int32(len(x)))
    log(f"pip_suits: calibration pips top-1 {acc:.4f}, temperature {t:.3f}, wrote {out} "
        f"({time.perf_counter() - t0:.0f} s)")
    return {"calib_top1": acc, "temperature": t, "train_pips": len(x)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Train the pip-suit reader on rendered tables.")
    ap.add_argument("--scenes", type=int, default=240, help="training scenes (default 240)")
    ap.add_argument("--calib", type=int, default=40, help="calibration scenes (default 40)")
    ap.add_argument("--out", type=Path, default=DEFAULT_PIP_MODEL, help="weights file (.npz)")
    args = ap.parse_args(argv)
    train_pip_suits(args.out, args.scenes, args.calib)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
