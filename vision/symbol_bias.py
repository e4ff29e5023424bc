"""A log weight per UNO symbol on the fused single-card reading, and its fit.

WHY: when the single-card reader of a UNO photo is unsure, its mistakes do not spread over the
codes; they fall into two symbols. Of the 160 errors on the tuning renders (seeds 7 and 123,
six kinds x 216 photos, read before RULE 41), 43 read a reverse and 24 a +2, each the truth of
7.4% of the photos; of the 48 real webcam photos read wrong (forty-ninth session's reader), 16
read a reverse and 14 a +2. A symbol drawn in more ways (the reverse's arrows, a +2's two small
cards) takes the doubtful photos of the others. Weighing each symbol's codes by exp(b) before
the temperature (logit adjustment) takes that lean back out. One weight per symbol, shared by
its colours: the lean is the symbol's (the colour has an expert of its own, the field's
colour), and 15 numbers are fewer to fit on 2,592 photos than 54 (RULE 39 and RULE 42,
models/HISTORY.md, fiftieth session).

The weights are fitted on rendered photos only (:func:`fit_symbol_bias`, run by
``python -m vision.fused_temperature --bias``), never on real ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from protocol_runner.cards import Card

SYMBOL_BIAS: Mapping[str, float] = {
    "0": 0.522, "1": 0.054, "2": -0.025, "3": 0.221, "4": -0.026, "5": -0.027, "6": 0.233,
    "7": -0.181, "8": 0.512, "9": 0.369, "S": 0.012, "R": -0.838, "+2": -0.616, "W": -0.086,
    "+4": -0.124,
}
"""The shipped log weight of each UNO symbol (absent: 0), fitted on the tuning renders (seeds 7
and 123, all six kinds x 216, at the shipped temperature 1.22):
``python -m vision.fused_temperature --kinds table held tinted closeup webcam near --bias``."""

BIAS_RIDGE = 0.003
"""The ridge on the weights in their fit. WHY 0.003: fitted on one tuning seed and scored on the
other (seeds 7 and 123, six kinds, temperature fitted with them), ridges 0, 0.001, 0.003, 0.01
and 0.03 read 10, 8, 10, 5 and 2 more of the 2,592 photos right; 0 gave weights of up to 2 that
differed between the seeds."""


def symbol_weights(codes: Sequence[str], bias: Mapping[str, float] = SYMBOL_BIAS
                   ) -> np.ndarray:
    """(len(codes),) the weight exp(b) of each UNO code's symbol (:attr:`Card.symbol`)."""
    return np.exp([float(bias.get(Card(c).symbol, 0.0)) for c in codes])


def fit_symbol_bias(probs: np.ndarray, labels: np.ndarray, codes: Sequence[str],
                    temperature: float, ridge: float = BIAS_RIDGE, steps: int = 50
                    ) -> dict[str, float]:
    """The log weight of each symbol of ``codes`` that minimises the mean negative
    log-likelihood of ``labels`` (indices into ``codes``) under softmax((log probs + b) / T),
    plus ``ridge`` x the sum of the squared weights.

    ``probs`` (photos x codes) are readings before any weight and temperature. The objective is
    convex in b, so Newton's steps (its 15 x 15 Hessian) reach the minimum in a few steps."""
    of = [Card(c).symbol for c in codes]
    symbols = sorted(set(of))
    member = np.zeros((len(codes), len(symbols)))
    member[np.arange(len(codes)), [symbols.index(s) for s in of]] = 1.0
    logp = np.log(np.maximum(np.asarray(probs, np.float64), 1e-12))
    truth = member[np.asarray(labels)]  # (photos, symbols): the true code's symbol
    b = np.zeros(len(symbols))
    n = len(logp)
    for _ in range(steps):
        z = (logp + member @ b) / temperature
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        q = p @ member  # each photo's probability of each symbol
        grad = (q - truth).sum(0) / (n * temperature) + 2 * ridge * b
        hess = (np.diag(q.sum(0)) - q.T @ q) / (n * temperature ** 2) \
            + 2 * ridge * np.eye(len(symbols))
        step = np.linalg.solve(hess, grad)
        b -= step
        if np.abs(step).max() < 1e-9:
            break
    return {s: float(v) for s, v in zip(symbols, b, strict=True)}


def without_bias(probs: np.ndarray, codes: Sequence[str],
                 bias: Mapping[str, float] = SYMBOL_BIAS) -> np.ndarray:
    """Readings with ``bias``'s weights divided back out, renormalised: what the experts gave."""
    out = np.asarray(probs, np.float64) / symbol_weights(codes, bias)
    return out / out.sum(1, keepdims=True)
