"""The protocol as a prior: decode a whole reveal jointly against the multiset the runner allows.

When the runner says "these N cells will show exactly these codes" (a public multiset, e.g. the
helper cards of Step 5), reading each card on its own throws that knowledge away. The best joint
reading is an assignment problem: give every card one code of the multiset, each copy used once,
maximising the summed log-probabilities. It is solved exactly with the Hungarian algorithm
(Kuhn–Munkres, shortest augmenting paths, O(n²m)), written here in numpy because scipy is not a
dependency; 107 cards take a few milliseconds. A card whose best *legal* reading is still
improbable is flagged rather than guessed: that is a misplaced card, not a misread one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from vision.recognise import Detection

PROB_FLOOR = 1e-6
FLAG_BELOW = 0.2


class PriorError(ValueError):
    """A multiset or probability table that cannot be decoded (the message says why)."""


def hungarian(cost: np.ndarray) -> np.ndarray:
    """Minimum-cost assignment of every row to a distinct column (rows ≤ columns).

    Returns ``col`` with ``col[i]`` the column given to row ``i``.
    """
    cost = np.asarray(cost, np.float64)
    n, m = cost.shape
    if n > m:
        raise PriorError(f"cannot assign {n} rows to {m} columns")
    if n == 0:
        return np.zeros(0, int)
    if not np.isfinite(cost).all():
        raise PriorError("assignment costs must be finite")
    u = np.zeros(n + 1)
    v = np.zeros(m + 1)
    p = np.zeros(m + 1, int)  # p[j]: row (1-based) holding column j; column 0 is the root
    way = np.zeros(m + 1, int)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = np.full(m + 1, np.inf)
        used = np.zeros(m + 1, bool)
        while True:
            used[j0] = True
            i0 = p[j0]
            free = ~used
            free[0] = False
            cur = cost[i0 - 1] - u[i0] - v[1:]
            better = free[1:] & (cur < minv[1:])
            minv[1:][better] = cur[better]
            way[1:][better] = j0
            candidates = np.where(free, minv, np.inf)
            j1 = int(np.argmin(candidates))
            delta = candidates[j1]
            u[p[used]] += delta
            v[used] -= delta
            minv[free] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    col = np.zeros(n, int)
    for j in range(1, m + 1):
        if p[j]:
            col[p[j] - 1] = j - 1
    return col


@dataclass(frozen=True, slots=True)
class Reading:
    """One card of a reveal after joint decoding.

    ``code`` is its legal reading (``None`` if the multiset ran out: more cards than allowed),
    ``prob`` the classifier's probability of that reading, ``alone`` what the card read on its
    own, ``flagged`` true when even the best legal reading is unlikely (< ``FLAG_BELOW``).
    """

    code: str | None
    prob: float
    alone: str
    alone_prob: float
    flagged: bool


def decode_reveal(probs: np.ndarray, classes: Sequence[str], allowed: Iterable[str],
                  flag_below: float = FLAG_BELOW) -> list[Reading]:
    """Jointly read ``len(probs)`` cards whose codes are drawn from the multiset ``allowed``.

    ``probs`` is (N, C) with columns in the order of ``classes``. The multiset may hold more codes
    than there are cards (the runner may allow a superset); if it holds fewer, the surplus cards
    get ``code=None`` and are flagged.
    """
    probs = np.asarray(probs, np.float64)
    if probs.ndim != 2 or probs.shape[1] != len(classes):
        raise PriorError(f"probabilities must be (N, {len(classes)}), got {probs.shape}")
    slots = list(Counter(allowed).elements())
    index = {c: k for k, c in enumerate(classes)}
    unknown = sorted({c for c in slots if c not in index})
    if unknown:
        raise PriorError(f"codes {unknown} are not classes of this classifier")
    n = len(probs)
    logp = np.log(np.maximum(probs, PROB_FLOOR))
    cost = -logp[:, [index[c] for c in slots]] if slots else np.zeros((n, 0))
    surplus = max(0, n - len(slots))
    if surplus:  # a card the multiset cannot explain costs more than any legal reading
        cost = np.hstack([cost, np.full((n, surplus), -np.log(PROB_FLOOR) + 1.0)])
    col = hungarian(cost)
    out = []
    for i, j in enumerate(col):
        k = int(np.argmax(probs[i]))
        if j < len(slots):
            code, pr = slots[j], float(probs[i, index[slots[j]]])
            out.append(Reading(code, pr, classes[k], float(probs[i, k]), pr < flag_below))
        else:
            out.append(Reading(None, 0.0, classes[k], float(probs[i, k]), True))
    return out


def decode_detections(detections: Sequence[Detection], classes: Sequence[str],
                      allowed: Iterable[str], zone: str | None = "work",
                      flag_below: float = FLAG_BELOW) -> tuple[tuple[Detection, ...], list[int]]:
    """Re-read the detections of ``zone`` (all if None) jointly against ``allowed``.

    Returns the detections with those codes and confidences replaced by their legal reading and
    its probability, and the indices of flagged detections (unlikely even at their best legal
    reading: report them, do not trust them). Detections without probabilities are kept as read.
    """
    chosen = [i for i, d in enumerate(detections)
              if d.probs is not None and (zone is None or d.zone == zone)]
    if not chosen:
        return tuple(detections), []
    probs = np.array([detections[i].probs for i in chosen])
    readings = decode_reveal(probs, classes, allowed, flag_below)
    out = list(detections)
    flagged = []
    for i, r in zip(chosen, readings, strict=True):
        d = detections[i]
        if r.flagged:
            flagged.append(i)
        code = r.code if r.code is not None else d.code
        out[i] = replace(d, code=code, confidence=r.prob if r.code is not None else 0.0)
    return tuple(out), flagged
