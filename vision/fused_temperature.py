"""Fit the fused reading's temperature on rendered photos, and score temperatures on them.

``python -m vision.fused_temperature [--seeds 7 123] [--kinds ...] [--also T ...] [--bias]``

WHY: the single-card reader of a UNO photo multiplies its experts (the whole card at jittered
quads, two corner indices, the field's colour) and tempers the product by
:data:`vision.single_card.FUSED_TEMPERATURE`, because the experts share evidence (the same
print, the same blur) that a product counts twice. The right temperature depends on every
expert, so it must be fitted again whenever one of them is retrained; this is the command that
does it, so the constant and the figures beside it can be rerun. It reads every photo once,
untempered, and scores any temperature on the same readings: a temperature keeps the order of
the codes, so the reading (top-1) is the same at all of them and only the confidences move.

The fit is by negative log-likelihood (:func:`vision.strip_classifier.fit_temperature`) on
rendered photos only, never on real ones: the real photo sets are measured, not tuned on.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from vision.calibration import Reliability, reliability
from vision.render_check import map_sets, set_jobs, shipped_uno_reader
from vision.strip_classifier import fit_temperature, soften

TUNING_SEEDS = (7, 123)
"""The render seeds every temperature and weight of the single-card reader is tuned on."""
TUNING_KINDS = ("table", "held", "tinted", "closeup", "webcam")
"""The kinds the shipped temperature was fitted on (fifteenth and sixteenth sessions; with
``near`` as a sixth the fit lowered the likelihood a little but raised the ECE)."""


@dataclass(frozen=True, slots=True)
class FusedReadings:
    """Untempered fused distributions of rendered photos with their true codes.

    ``probs`` (photos x codes) sum to 1 per row; ``labels`` index ``codes``; ``kinds`` and
    ``seeds`` say which set each photo came from."""

    probs: np.ndarray
    labels: np.ndarray
    kinds: tuple[str, ...]
    seeds: np.ndarray
    codes: tuple[str, ...]

    def subset(self, keep: np.ndarray) -> FusedReadings:
        return FusedReadings(self.probs[keep], self.labels[keep],
                             tuple(k for k, s in zip(self.kinds, keep, strict=True) if s),
                             self.seeds[keep], self.codes)


@dataclass(frozen=True, slots=True)
class Score:
    """How one temperature holds on a set of readings."""

    temperature: float
    nll: float
    top1: float
    calibration: Reliability

    def text(self) -> str:
        return (f"T {self.temperature:.3f}: NLL {self.nll:.4f}  top-1 {self.top1:.4f}  "
                f"{self.calibration.text()}")


def score(readings: FusedReadings, temperature: float) -> Score:
    """The mean negative log-likelihood, top-1 and reliability of ``readings`` tempered so."""
    probs = soften(readings.probs, temperature)
    rows = np.arange(len(readings.labels))
    best = probs.argmax(axis=1)
    nll = float(-np.log(np.maximum(probs[rows, readings.labels], 1e-12)).mean())
    return Score(temperature, nll, float((best == readings.labels).mean()),
                 reliability(probs[rows, best], best == readings.labels))


def _read_set(job: tuple[str, int, int]) -> tuple[np.ndarray, list[str], tuple[str, ...]]:
    """One synthetic set read untempered: (probabilities, true codes, the codes they are over)."""
    from vision.single_card import read_single_card_probs, synthetic_photos
    from vision.synth.faces import UNO_FACE_CODES

    kind, seed, count = job
    both, corners = shipped_uno_reader()
    rows, truth, codes = [], [], ()
    for code, img, _ in synthetic_photos(kind, count, seed):
        *_, probs, codes = read_single_card_probs(img, both, UNO_FACE_CODES, None, corners,
                                                  temperature=1.0)
        rows.append(probs.astype(np.float64))
        truth.append(code)
    return np.array(rows), truth, codes


def collect(kinds: Sequence[str], seeds: Sequence[int], count: int, jobs: int = 2
            ) -> FusedReadings:
    """Read ``count`` photos of every kind at every seed, ``jobs`` sets at a time."""
    done = map_sets(_read_set, kinds, seeds, count, jobs)
    work = set_jobs(kinds, seeds, count)
    codes = done[0][2]
    index = {c: i for i, c in enumerate(codes)}
    sizes = [len(truth) for _, truth, _ in done]
    return FusedReadings(np.concatenate([p for p, _, _ in done]),
                         np.array([index[c] for _, truth, _ in done for c in truth]),
                         tuple(str(k) for k in np.repeat([k for k, _, _ in work], sizes)),
                         np.repeat([s for _, s, _ in work], sizes), codes)


def rebias(readings: FusedReadings, bias: Mapping[str, float]) -> FusedReadings:
    """``readings`` (read with the shipped :data:`vision.symbol_bias.SYMBOL_BIAS`) as they read
    with the symbol weights ``bias`` instead."""
    from vision.symbol_bias import symbol_weights, without_bias

    probs = without_bias(readings.probs, readings.codes) * symbol_weights(readings.codes, bias)
    return replace(readings, probs=probs / probs.sum(1, keepdims=True))


def report(readings: FusedReadings, temperatures: Sequence[float], bias: bool = False) -> str:
    """The fitted temperature, then each temperature scored on all readings (read with the
    shipped symbol weights) and per seed; with ``bias``, then the symbol weights fitted at the
    shipped temperature (:func:`vision.symbol_bias.fit_symbol_bias` on the readings without the
    shipped weights), scored beside no weights at all."""
    from vision.single_card import FUSED_TEMPERATURE
    from vision.symbol_bias import fit_symbol_bias, without_bias

    fitted = fit_temperature(readings.probs, readings.labels)
    lines = [f"{len(readings.labels)} photos ({', '.join(sorted(set(readings.kinds)))}; seeds "
             f"{' '.join(str(s) for s in sorted(set(readings.seeds.tolist())))}); "
             f"shipped T {FUSED_TEMPERATURE}, fitted T {fitted:.3f}"]
    rows = [("", readings, t) for t in dict.fromkeys((FUSED_TEMPERATURE, fitted, *temperatures))]
    if bias:
        weights = fit_symbol_bias(without_bias(readings.probs, readings.codes), readings.labels,
                                  readings.codes, FUSED_TEMPERATURE)
        lines.append(f"symbol bias fitted at T {FUSED_TEMPERATURE}: "
                     + ", ".join(f"{s} {v:+.3f}" for s, v in weights.items()))
        rows += [("no symbol bias ", rebias(readings, {}), FUSED_TEMPERATURE),
                 ("fitted symbol bias ", rebias(readings, weights), FUSED_TEMPERATURE)]
    for name, read, t in rows:
        lines.append(f"all   {name}" + score(read, t).text())
        for seed in sorted(set(read.seeds.tolist())):
            lines.append(f"  seed {seed}  " + score(read.subset(read.seeds == seed), t).text())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Read the sets, print the fit and the scores."""
    ap = argparse.ArgumentParser(prog="python -m vision.fused_temperature",
                                 description="fit the fused single-card reading's temperature "
                                             "on rendered UNO photos (with both shipped "
                                             "networks and the corner reader)")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(TUNING_SEEDS))
    ap.add_argument("--kinds", nargs="+", default=list(TUNING_KINDS))
    ap.add_argument("--count", type=int, default=216, help="photos of each kind at each seed")
    ap.add_argument("--jobs", type=int, default=2, help="sets read at once (processes)")
    ap.add_argument("--also", type=float, nargs="*", default=[],
                    help="further temperatures to score on the same readings")
    ap.add_argument("--bias", action="store_true",
                    help="also fit each UNO symbol's log weight (vision.symbol_bias) at the "
                         "shipped temperature, and score it")
    args = ap.parse_args(argv)
    if args.count < 1 or args.jobs < 1 or any(t <= 0 for t in args.also):
        ap.error("--count and --jobs must be at least 1, temperatures above 0")
    print(report(collect(args.kinds, args.seeds, args.count, args.jobs), args.also,
                 args.bias))
    return 0


if __name__ == "__main__":
    from vision.module_main import run_module

    run_module("vision.fused_temperature")
