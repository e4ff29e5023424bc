"""Which expert errs: the UNO single-card reading split into its experts, photo by photo.

``python -m vision.expert_eval LABELS.csv [--group G] [--source S] [--json OUT]``, or
``python -m vision.expert_eval synthetic:KIND [--count N] [--seed S] [--printing P]`` for rendered
photos (``--printing``: every face in one printing, e.g. ``thin:1``, numerals in a font no
training render uses: a deck the networks never saw, as a real deck is).

WHY: the reading of a photo of one UNO card (``--deck uno``) multiplies experts: the whole card
at jittered quads, the two index corners (top-left, and bottom-right turned) and the field's
colour (:mod:`vision.corner_index`). A wrong reading may be any one of them outvoting the
others, or a quad located wrong misleading them all. This reads every photo as ``--deck uno``
does and prints, for the card it chose, how often each expert alone had the true code on top,
the fused errors by which experts had it, and each expert's commonest confusions, so a figure
about an expert in a model card comes from a command anyone can rerun. The colour expert
weighs codes by colour only: it counts as right when the true code has its highest weight.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

EXPERTS = ("card", "top_left", "bottom_right")
"""The experts whose top code is compared with the truth (the colour is scored apart)."""


@dataclass(frozen=True, slots=True)
class ExpertReading:
    """One photo's fused reading and each expert's top code over the deck's codes (None: a
    corner not read, or no card located)."""

    image: str
    group: str
    truth: str
    fused: str
    card: str | None
    top_left: str | None
    bottom_right: str | None
    colour_right: bool | None
    index_in_view: bool | None = None
    """Rendered photos only (the true card is known): whether the card's top-left index patch
    lies in the photo as far as the reader requires (:func:`vision.corner_index.index_in_photo`)."""

    def right(self, expert: str) -> bool:
        return getattr(self, expert) == self.truth


def _top(probs: np.ndarray, codes: tuple[str, ...]) -> str | None:
    if np.isnan(probs).any():
        return None
    return codes[int(np.argmax(probs))]


def read_experts(photos: Iterable[tuple[Any, ...]]) -> Iterator[ExpertReading]:
    """Read ``photos`` (image name, group, true code, BGR image, and for a rendered photo the
    true card's quad) with the shipped models as ``--deck uno`` reads them, one
    :class:`ExpertReading` each."""
    from vision.card_locator import SingleCardError
    from vision.classifier import DEFAULT_MODEL, CardClassifier, with_later_trainings
    from vision.corner_index import CornerFusion, index_in_photo
    from vision.single_card import read_single_card_probs
    from vision.synth.faces import UNO_FACE_CODES

    clf = CardClassifier.load(DEFAULT_MODEL)
    corners = CornerFusion.load(clf.classes, UNO_FACE_CODES)
    both = with_later_trainings(clf, DEFAULT_MODEL)
    for name, group, truth, image, *quad in photos:
        in_view = index_in_photo(np.float32(quad[0]), image.shape[:2]) if quad else None
        parts: dict[str, np.ndarray] = {}
        try:
            _, code, _, _, codes = read_single_card_probs(image, both, UNO_FACE_CODES,
                                                          corners=corners, parts=parts)
        except SingleCardError:
            yield ExpertReading(name, group, truth, "?", None, None, None, None, in_view)
            continue
        colour = parts["colour"]
        yield ExpertReading(
            name, group, truth, code, _top(parts["card"], codes),
            _top(parts["corners"][0], codes), _top(parts["corners"][1], codes),
            bool(truth in codes and colour[codes.index(truth)] >= colour.max()), in_view)


def report(readings: list[ExpertReading]) -> str:
    """The figures: each expert alone, the fused errors by which experts were right, and the
    commonest confusions of the fused reading and of each expert."""
    n = len(readings)
    lines = [f"photos {n}  fused right {sum(r.fused == r.truth for r in readings)}"]
    alone = []
    for e in EXPERTS:
        read = [r for r in readings if getattr(r, e) is not None]
        alone.append(f"{e.replace('_', '-')} {sum(r.right(e) for r in read)}/{len(read)} read")
    scored = [r for r in readings if r.colour_right is not None]
    alone.append(f"colour {sum(bool(r.colour_right) for r in scored)}/{len(scored)}")
    lines.append("each expert alone, truth on top: " + ", ".join(alone))
    wrong = [r for r in readings if r.fused != r.truth]
    ways = Counter(" + ".join(e.replace("_", "-") for e in EXPERTS if r.right(e)) or "none"
                   for r in wrong)
    lines.append(f"fused errors {len(wrong)}, by the experts that had the truth on top: "
                 + ", ".join(f"{k} {v}" for k, v in ways.most_common()))
    groups = Counter(r.group for r in wrong)
    lines.append("fused errors per group: " + ", ".join(f"{g} {k}" for g, k in
                                                         sorted(groups.items())))
    rendered = [r for r in readings if r.index_in_view is not None]
    for seen in (True, False) if rendered else ():
        some = [r for r in rendered if r.index_in_view is seen]
        ways = Counter("unread" if r.top_left is None else "right" if r.right("top_left")
                       else "wrong" for r in some)
        lines.append(f"top-left index {'in' if seen else 'out of'} the photo: {len(some)}, its "
                     f"corner read right {ways['right']}, wrong {ways['wrong']}, "
                     f"unread {ways['unread']}")
    for e in ("fused", *EXPERTS):
        c = Counter((r.truth, getattr(r, e)) for r in readings
                    if getattr(r, e) not in (None, r.truth))
        lines.append(f"confusions of {e.replace('_', '-')} (truth->read x n): " + ", ".join(
            f"{t}->{p} x{k}" for (t, p), k in c.most_common(12)))
    return "\n".join(lines)


def _labelled(labels: Path, group: str | None, source: str | None
              ) -> Iterator[tuple[str, str, str, np.ndarray]]:
    from vision.card_locator import read_image
    from vision.photo_size import working_copy
    from vision.single_card import read_labels

    for r in read_labels(labels):
        if (group and not r["group"].startswith(group)) or (source and r.get("source") != source):
            continue  # each photo as cardtable detect reads it
        yield r["image"], r["group"], r["code"], working_copy(read_image(r["path"]))[0]


def _rendered(kind: str, count: int, seed: int, style: object | None = None,
              codes: Collection[str] | None = None
              ) -> Iterator[tuple[str, str, str, np.ndarray, np.ndarray]]:
    from vision.single_card import synthetic_numbers, synthetic_photos

    # each photo keeps its number in the whole set, so a subset's names match the set's
    for i, (code, image, quad) in zip(synthetic_numbers(count, codes),
                                      synthetic_photos(kind, count, seed, style=style,
                                                       codes=codes), strict=True):
        yield f"{kind}-{seed}-{i}", kind, code, image, quad


def main(argv: list[str] | None = None) -> int:
    """Read the photos, print the figures (and write the per-photo readings with ``--json``)."""
    ap = argparse.ArgumentParser(prog="python -m vision.expert_eval",
                                 description="the UNO single-card reading split by expert")
    ap.add_argument("labels", help="a labels.csv, or synthetic:KIND (rendered photos)")
    ap.add_argument("--group", default=None, help="only rows whose group starts with this")
    ap.add_argument("--source", default=None, help="only rows whose source column is this")
    ap.add_argument("--count", type=int, default=108, help="synthetic: how many photos")
    ap.add_argument("--seed", type=int, default=99, help="synthetic: render seed")
    ap.add_argument("--printing", default=None,
                    help="synthetic: every face in one printing (a seed, plain:SEED, thin:SEED "
                         "or classic), or thin: each face its own printing in a font no render "
                         "uses, or wild: each its own, wild cards as current decks print them, "
                         "as `python -m vision.single_card --printing`")
    ap.add_argument("--codes", default=None,
                    help="synthetic: only the photos of these faces, comma-separated (e.g. "
                         "W,+4: the wild cards of a set, the same pictures as in the whole set)")
    ap.add_argument("--json", type=Path, default=None, help="write the per-photo readings here")
    args = ap.parse_args(argv)
    codes = None if args.codes is None else frozenset(args.codes.split(","))
    if str(args.labels).startswith("synthetic:"):
        from vision.single_card import style_of, synthetic_maker
        from vision.synth.faces import UNO_FACE_CODES

        kind = str(args.labels).split(":", 1)[1]
        synthetic_maker(kind)  # an unknown kind fails before any model loads
        if codes is not None and (unknown := sorted(codes - set(UNO_FACE_CODES))):
            raise ValueError(f"--codes: no UNO face {', '.join(unknown)} (codes as "
                             "CONVENTIONS.md writes them: 7R, SB, +2G, W, +4)")
        style = None if args.printing is None else style_of(args.printing)
        photos = _rendered(kind, args.count, args.seed, style, codes)
    else:
        if args.printing is not None or codes is not None:
            raise ValueError("--printing and --codes draw rendered photos: give synthetic:KIND")
        photos = _labelled(Path(args.labels), args.group, args.source)
    readings = list(read_experts(photos))
    if not readings:
        raise ValueError("no photos to read: check the labels file, --group and --source")
    print(report(readings))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in readings], indent=1))
    return 0


if __name__ == "__main__":
    from vision.module_main import run_module

    run_module("vision.expert_eval")
