"""Reliability of confidences: does a card read at 0.9 come true nine times in ten?

WHY: issue 5 asks for a *calibrated* confidence, and the runner stops a step on a card read
below ``min_confidence``: that threshold means what it says only if confidences are
probabilities. The temperatures are fitted on renders (the whole-card classifier) or on the
training split's validation groups (the corner reader), never on the sets measured, so how
they hold on real photos is a measurement of its own, printed beside the accuracy.

A reliability table groups readings by confidence and compares, in each group, the mean
confidence with the share that was right; the expected calibration error (ECE) is the mean
gap, weighted by the groups' sizes (Guo et al., "On Calibration of Modern Neural Networks",
2017). The groups are finer near 1 than the usual ten equal bins, because nearly every
reading of a card is given above 0.9 and the false cards that matter hide there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

ROUNDING = 1e-6
"""How far outside [0, 1] a confidence may lie and still count (as 0 or 1): float32
probabilities renormalised sum to 1.0000001 (a rendered table's card did)."""
EDGES = (0.0, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0)
"""Group edges: each group holds ``low <= confidence < high``, the last also 1.0."""


@dataclass(frozen=True, slots=True)
class Bin:
    """One confidence group: how many readings, their mean confidence, the share right."""

    low: float
    high: float
    count: int
    confidence: float
    accuracy: float


@dataclass(frozen=True, slots=True)
class Reliability:
    """The non-empty groups and the expected calibration error over ``count`` readings
    (``ece`` is None when there are none)."""

    bins: tuple[Bin, ...]
    count: int
    ece: float | None

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count,
                "ece": None if self.ece is None else round(self.ece, 4),
                "bins": [{"low": b.low, "high": b.high, "count": b.count,
                          "confidence": round(b.confidence, 4),
                          "accuracy": round(b.accuracy, 4)} for b in self.bins]}

    @property
    def over_confidence(self) -> float | None:
        """The over-confident part of :attr:`ece`: each group's share of the readings times how
        far its mean confidence lies *above* its share right (groups read too modestly add 0).

        WHY: a reading given more trust than it earns is what lets a wrong card through, while
        one given less only asks the table to confirm it; a rule bounds this part (models/
        README.md, RULE 45 on)."""
        if self.ece is None:
            return None
        return sum(b.count * max(0.0, b.confidence - b.accuracy) for b in self.bins) / self.count

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reliability:
        """The table back from :meth:`to_json` (a report's summary holds it as JSON)."""
        return cls(tuple(Bin(**b) for b in data["bins"]), int(data["count"]), data["ece"])

    def text(self) -> str:
        """One line: ``ECE e over n; [low, high) n at mean -> share right; ...``."""
        if self.ece is None:
            return "no readings with a confidence"
        groups = "; ".join(f"[{b.low:g}, {b.high:g}{']' if b.high == 1.0 else ')'} {b.count} "
                           f"at {b.confidence:.3f} -> {b.accuracy:.1%}" for b in self.bins)
        return f"ECE {self.ece:.4f} over {self.count}; {groups}"


def reliability(confidences: Sequence[float], right: Sequence[bool],
                edges: Sequence[float] = EDGES) -> Reliability:
    """Group ``confidences`` by ``edges`` and compare each group with the share of ``right``.

    Raises ValueError for lengths that differ, a confidence outside [0, 1] beyond
    :data:`ROUNDING` (or not a number),
    or edges that do not rise from 0 to 1: a figure from bad input would mislead."""
    conf = np.asarray(confidences, dtype=np.float64).reshape(-1)
    ok = np.asarray(right, dtype=bool).reshape(-1)
    if conf.shape != ok.shape:
        raise ValueError(f"{conf.size} confidences but {ok.size} outcomes")
    if np.isnan(conf).any() or (conf < -ROUNDING).any() or (conf > 1 + ROUNDING).any():
        raise ValueError("confidences must be numbers in [0, 1]")
    conf = conf.clip(0.0, 1.0)
    e = np.asarray(edges, dtype=np.float64)
    if e.size < 2 or e[0] != 0.0 or e[-1] != 1.0 or (np.diff(e) <= 0).any():
        raise ValueError(f"edges must rise from 0 to 1, got {list(edges)}")
    if conf.size == 0:
        return Reliability((), 0, None)
    group = np.clip(np.searchsorted(e, conf, side="right") - 1, 0, e.size - 2)
    bins, gap = [], 0.0
    for g in range(e.size - 1):
        sel = group == g
        n = int(sel.sum())
        if n == 0:
            continue
        mean, acc = float(conf[sel].mean()), float(ok[sel].mean())
        bins.append(Bin(float(e[g]), float(e[g + 1]), n, mean, acc))
        gap += n * abs(acc - mean)
    return Reliability(tuple(bins), int(conf.size), gap / conf.size)
