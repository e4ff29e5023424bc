"""The single-card reader on rendered photos of every kind: the figures each rule decides on.

``python -m vision.render_check --seeds 10505 10606 [--count 216] [--kinds near,webcam]
[--deck uno|any] [--jobs 2] [--out readings.jsonl]``; a kind may name one printing for all
its faces, ``shown-gripped@thin:3``, or ``@thin``, one per face (:func:`split_kind`).

WHY: every change to how one UNO card is read (models/HISTORY.md, RULE 38 on) is decided on
render seeds never used before, and only then are the real UNO photos measured, once. The
rules decide by the kinds' sum of cards read right per seed, their mean ECE, the over-confident
part of ``near``'s ECE and the share of readings at 0.95 or more that are wrong. This command
prints them all, read exactly as ``python -m vision.single_card synthetic:KIND --deck uno``
reads, so anyone can rerun a rule's table; ``--out`` keeps every photo's reading, for a
photo-by-photo comparison of two checkouts. ``--deck any`` reads each photo as plain
``cardtable detect`` (no ``--deck``) answers it instead, scored by its surest detection: the
table RULE 49 and RULE 50 were decided on.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from vision.calibration import reliability

DECISION_KINDS = ("near", "webcam", "held", "closeup", "table", "tinted", "handheld", "gripped",
                  "shown-gripped@thin", "shown-gripped@wild")
"""The kinds a rule decides on (``handheld`` since RULE 47, ``gripped`` since RULE 53,
``shown-gripped@thin`` since the fifty-ninth session, ``shown-gripped@wild`` since RULE 61),
in the model card's column order.

WHY ``@thin``: the card gripped as people show one, its top-left index in view, each face in a
printing of its own in a font no training render uses, is the one rendered set whose experts
read as the real hand-held webcam photos' do (the whole card about 80%, the top-left corner
about 88%, against the real 73% and 92%); on the ``handheld``, ``gripped`` and ``webcam``
renders the whole card is the stronger expert (models/HISTORY.md, fifty-eighth and fifty-ninth
sessions). WHY ``@wild``: its wild cards are printed as current decks print them (the card's
own oval in four colours), which every shipped expert reads worse than the drawn look, as on
the real photos, where the other kinds draw the drawn look only (sixty-first session)."""
DECKS = ("uno", "any")
"""How each photo is read: as ``--deck uno`` reads it, or as plain ``cardtable detect`` does."""
SURE = 0.95
"""Readings at this confidence or more are the ones a wrong card must not hide in."""
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Reading:
    """How the reader read photo ``index`` of ``synthetic:kind`` at ``seed``."""

    kind: str
    seed: int
    index: int
    code: str
    read: str
    confidence: float
    pose: str

    @property
    def right(self) -> bool:
        return self.read == self.code


@cache
def shipped_uno_reader() -> tuple[object, object]:
    """The shipped whole-card networks (the first with its later trainings) and the corner
    fusion over the UNO faces, loaded once per process, one thread per network.

    WHY one thread: the checks that use it read sets in as many processes as there are cores."""
    from vision.classifier import DEFAULT_MODEL, CardClassifier, with_later_trainings
    from vision.corner_index import CornerFusion
    from vision.synth.faces import UNO_FACE_CODES

    clf = CardClassifier.load(DEFAULT_MODEL, threads=1)
    return (with_later_trainings(clf, DEFAULT_MODEL),
            CornerFusion.load(clf.classes, UNO_FACE_CODES))


def split_kind(spec: str) -> tuple[str, object | None]:
    """``KIND`` or ``KIND@PRINTING`` to the kind and its printing
    (:func:`vision.single_card.style_of`: one printing for every face, ``thin`` a function
    that draws one per face; ``None`` for a bare kind, whose faces draw printings of the
    renders' own family), or a clear error naming what is wrong.

    WHY: the real deck is a printing no render draws; its whole face reads far worse than any
    drawn printing's (models/HISTORY.md, fifty-eighth session). Printings in a font the
    networks never saw, drawn per face (``@thin``), read about as the real photos do, so a
    rule can be decided on them too (fifty-ninth session)."""
    from vision.single_card import style_of, synthetic_maker

    kind, _, printing = spec.partition("@")
    synthetic_maker(kind)
    if "@" in spec and not printing:
        raise ValueError(f"kind {spec!r} names no printing after '@': e.g. {kind}@thin:3")
    return kind, style_of(printing) if printing else None


def _readings(job: tuple[str, int, int], read: Callable[[np.ndarray], tuple[str, float]]
              ) -> list[Reading]:
    """Photos ``0..count-1`` of ``synthetic:kind`` at ``seed`` (``job``; the kind may name a
    printing, :func:`split_kind`), each read by ``read`` (the photo to its code and
    confidence)."""
    from vision.single_card import card_pose, synthetic_photos

    spec, seed, count = job
    kind, style = split_kind(spec)
    out = []
    for i, (code, img, quad) in enumerate(synthetic_photos(kind, count, seed, style)):
        answer, p = read(img)
        out.append(Reading(spec, seed, i, code, answer, round(float(p), 6), card_pose(quad)))
    return out


def read_set(job: tuple[str, int, int]) -> list[Reading]:
    """The set ``job`` read as ``--deck uno`` reads."""
    from vision.single_card import read_single_card
    from vision.synth.faces import UNO_FACE_CODES

    networks, corners = shipped_uno_reader()
    return _readings(job, lambda img: read_single_card(img, networks, UNO_FACE_CODES, None,
                                                       corners)[1:])


@cache
def plain_detector() -> Callable[[np.ndarray], tuple[Any, ...]]:
    """What plain ``cardtable detect`` (no ``--deck``) does with one still image
    (:func:`vision.still_detect.still_detector`, deck ``any``), loaded once per process."""
    from vision.recognise import TableReader
    from vision.still_detect import still_detector

    return still_detector(TableReader.load(), "any")


def detect_set(job: tuple[str, int, int]) -> list[Reading]:
    """The set ``job`` answered as plain ``cardtable detect`` answers it: its surest detection
    is the reading; a photo with none is read wrong (an empty code, confidence 0)."""
    detect = plain_detector()

    def surest(img: np.ndarray) -> tuple[str, float]:
        best = max(detect(img), key=lambda d: d.confidence, default=None)
        return ("", 0.0) if best is None else (best.code, best.confidence)

    return _readings(job, surest)


def set_jobs(kinds: Sequence[str], seeds: Sequence[int], count: int
             ) -> list[tuple[str, int, int]]:
    """The ``(kind, seed, count)`` of every set, in the order :func:`map_sets` returns them:
    seed by seed, the kinds in their order within each."""
    return [(k, s, count) for s in seeds for k in kinds]


def map_sets(read: Callable[[tuple[str, int, int]], T], kinds: Sequence[str],
             seeds: Sequence[int], count: int, jobs: int = 1,
             load: Callable[[], object] = shipped_uno_reader) -> list[T]:
    """``read`` of every ``(kind, seed, count)``, seed by seed, ``jobs`` at a time in worker
    processes that each ``load`` what ``read`` reads with once; an unknown kind or printing
    fails first, before minutes of reading."""
    for kind in kinds:
        split_kind(kind)
    work = set_jobs(kinds, seeds, count)
    if jobs <= 1:
        return [read(w) for w in work]
    with ProcessPoolExecutor(jobs, initializer=load) as pool:
        return list(pool.map(read, work))


def check(kinds: Sequence[str], seeds: Sequence[int], count: int, jobs: int = 1,
          deck: str = "uno") -> list[Reading]:
    """Every kind at every seed, read by :func:`read_set` (``deck`` ``uno``) or answered by
    :func:`detect_set` (``any``)."""
    if deck not in DECKS:
        raise ValueError(f"unknown deck {deck!r}: use one of {', '.join(DECKS)}")
    read, load = (read_set, shipped_uno_reader) if deck == "uno" else (detect_set, plain_detector)
    return [r for part in map_sets(read, kinds, seeds, count, jobs, load) for r in part]


def summary(readings: Sequence[Reading]) -> str:
    """The rules' table: cards right per kind and seed, their sum and mean ECE per seed; each
    kind's over-confident ECE and ECE with the seeds' readings merged; readings at
    :data:`SURE` or more that are wrong, per seed."""
    kinds = list(dict.fromkeys(r.kind for r in readings))
    seeds = list(dict.fromkeys(r.seed for r in readings))
    count = max((r.index + 1 for r in readings), default=0)
    width = max(len(k) for k in kinds) if kinds else 0
    label = f"top-1 of {count} renders per kind"
    lines = [label + "  " + "  ".join(k.rjust(width) for k in kinds) + "     sum  mean ECE"]
    for seed in seeds:
        mine = [r for r in readings if r.seed == seed]
        right = [sum(r.right for r in mine if r.kind == k) for k in kinds]
        eces = [reliability([r.confidence for r in mine if r.kind == k],
                            [r.right for r in mine if r.kind == k]).ece or 0.0 for k in kinds]
        lines.append(f"seed {seed}".ljust(len(label)) + "  "
                     + "  ".join(str(n).rjust(width) for n in right)
                     + f"  {sum(right):6d}  {np.mean(eces):.4f}")
    lines.append("seeds merged, per kind: over-confident ECE / ECE")
    for k in kinds:
        rel = reliability([r.confidence for r in readings if r.kind == k],
                          [r.right for r in readings if r.kind == k])
        lines.append(f"  {k:<{width}}  {rel.over_confidence:.4f} / {rel.ece:.4f} "
                     f"({rel.count} photos)")
    sure = []
    for seed in seeds:
        hi = [r for r in readings if r.seed == seed and r.confidence >= SURE]
        sure.append(f"seed {seed} {sum(not r.right for r in hi)} of {len(hi)}")
    lines.append(f"readings at {SURE} or more wrong: " + ", ".join(sure))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Read the sets, print :func:`summary`, and write every reading to ``--out`` (JSON lines)."""
    ap = argparse.ArgumentParser(prog="python -m vision.render_check")
    ap.add_argument("--seeds", type=int, nargs="+", required=True,
                    help="render seeds; a rule decides on seeds never used before")
    ap.add_argument("--count", type=int, default=216, help="photos per kind and seed")
    ap.add_argument("--kinds", default=",".join(DECISION_KINDS),
                    help="comma-separated synthetic kinds (default: the decision kinds), each "
                         "KIND or KIND@PRINTING (every face in one printing, e.g. "
                         "shown-gripped@thin:3; @thin: a printing per face in a font no "
                         "training render uses; @wild: a printing per face, wild cards as "
                         "current decks print them)")
    ap.add_argument("--deck", choices=DECKS, default="uno",
                    help="uno (default): read as `--deck uno` reads; any: answered as plain "
                         "`cardtable detect` answers, its surest detection")
    ap.add_argument("--jobs", type=int, default=1, help="sets read at a time, one per core")
    ap.add_argument("--out", type=Path, default=None, help="every reading, as JSON lines")
    args = ap.parse_args(argv)
    if args.count < 1 or args.jobs < 1:
        raise ValueError("--count and --jobs must be at least 1")
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds:
        raise ValueError("--kinds names no kind: give synthetic kinds, e.g. near,webcam")
    readings = check(kinds, args.seeds, args.count, args.jobs, args.deck)
    print(summary(readings))
    if args.out is not None:
        args.out.write_text("".join(json.dumps(asdict(r)) + "\n" for r in readings))
    return 0


if __name__ == "__main__":
    from vision.module_main import run_module

    run_module("vision.render_check")
