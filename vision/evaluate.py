"""Measurement: per-card accuracy, per-class accuracy, confusion pairs, exact-layout rate.

Three kinds of labelled set, one report:

* a YOLO folder (``images/``, ``labels/``, ``data.yaml`` whose names are card codes). The shared
  photo sets box only the printed corner index, so a labelled box counts as found when some
  detection *contains its centre* and has its code; a detection containing no labelled centre
  of its code is a false card;
* a ``labels.csv`` of ``image,code`` (one card per photo): the top detection must have the code;
* rendered table scenes (:mod:`vision.synth.scenes`) from seeds never used in training: every
  card must be found (its quad within 30% of a card width of the label's, corner by corner)
  and read, and a layout counts only if every cell of it is right. With
  ``prior`` the reveal is also decoded jointly against its own multiset (:mod:`vision.prior`).
"""

from __future__ import annotations

import csv
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.calibration import Reliability, reliability
from vision.photo_size import resized
from vision.recognise import Detection, TableReader, detect_still
from vision.sources import FrameSourceError, list_images, read_image

EVAL_SEED_BASE = 10_000_000
"""Scene seeds at and above this are for measurement; training renders must stay below."""
MISSED = "(missed)"


class EvalError(ValueError):
    """A labelled set that cannot be read: the message names the file and the problem."""


@dataclass
class Report:
    """Counts gathered over a labelled set; :meth:`summary` turns them into the figures."""

    kind: str
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (truth, read) per labelled card
    false_cards: int = 0
    detections: int = 0
    layouts: int = 0
    layouts_right: int = 0
    prior_pairs: list[tuple[str, str]] = field(default_factory=list)
    prior_layouts_right: int = 0
    flagged: int = 0
    images: int = 0
    unreadable: list[str] = field(default_factory=list)
    scene_errors: list[dict[str, Any]] = field(default_factory=list)
    """Per rendered scene read with any error: its seed and what went wrong (see
    :func:`scene_errors`), so that failure modes can be counted on tuning seeds."""
    cpu_ms: list[float] = field(default_factory=list)
    """CPU time (both cores, ms) to detect the cards of each photo of a labelled set, models
    loaded and photo decoded: the reader's cost printed beside its accuracy, so that a figure
    of speed comes from the same command as the figure it costs."""
    scored: list[tuple[float, bool]] = field(default_factory=list)
    """(confidence, right) per detection, for the reliability table (:mod:`vision.calibration`):
    a detection of a YOLO set or a scene is right when it is a labelled card with its code, the
    one detection of a ``labels.csv`` photo when it has the photo's code."""
    scenes: dict[str, list[int]] = field(default_factory=dict)
    """Per kind of scene of a YOLO set (:func:`vision.photo_split.scene_kind`, when asked for):
    [labelled cards, found, detections, false cards]."""
    codes: dict[str, list[int]] = field(default_factory=dict)
    """Per group of labels of a YOLO set (``code_group``, when asked for: e.g. whether the
    readers trained on the label's code in its kind of scene): [labelled cards, found]."""
    misses: Counter[str] = field(default_factory=Counter)
    """Missed labels of a YOLO set by the stage that lost them (:mod:`vision.photo_misses`),
    when asked for (``cardtable eval --misses``)."""

    def summary(self) -> dict[str, Any]:
        n = len(self.pairs)
        right = sum(t == r for t, r in self.pairs)
        per_class: dict[str, list[int]] = {}
        for t, r in self.pairs:
            per_class.setdefault(t, [0, 0])
            per_class[t][0] += t == r
            per_class[t][1] += 1
        confusions = Counter((t, r) for t, r in self.pairs if t != r)
        out: dict[str, Any] = {
            "kind": self.kind, "images": self.images, "cards": n, "cards_right": right,
            "card_accuracy": round(right / n, 5) if n else None,
            "missed": sum(r == MISSED for _, r in self.pairs),
            "detections": self.detections, "false_cards": self.false_cards,
            "false_card_rate": round(self.false_cards / self.detections, 5)
            if self.detections else None,
            "per_class": {c: {"right": a, "total": b, "accuracy": round(a / b, 4)}
                          for c, (a, b) in sorted(per_class.items())},
            "confusions": [{"truth": t, "read": r, "count": k}
                           for (t, r), k in confusions.most_common(20)],
            "unreadable": self.unreadable,
        }
        if self.scene_errors:
            out["scene_errors"] = self.scene_errors
        if self.scored:
            conf, right = zip(*self.scored, strict=True)
            out["calibration"] = reliability(conf, right).to_json()
        if len(self.scenes) > 1:
            out["by_scene_kind"] = {
                k: {"cards": n, "cards_right": r, "detections": d, "false_cards": f}
                for k, (n, r, d, f) in sorted(self.scenes.items())}
        if self.codes:
            out["by_code_group"] = {k: {"cards": n, "cards_right": r}
                                    for k, (n, r) in sorted(self.codes.items())}
        if self.misses:
            out["missed_by_stage"] = dict(self.misses.most_common())
        if self.cpu_ms:
            out["median_cpu_ms_per_image"] = round(float(np.median(self.cpu_ms)), 1)
        if self.layouts:
            out["layouts"] = self.layouts
            out["layouts_right"] = self.layouts_right
            out["layout_rate"] = round(self.layouts_right / self.layouts, 5)
        if self.prior_pairs:
            pr = sum(t == r for t, r in self.prior_pairs)
            out["prior_card_accuracy"] = round(pr / len(self.prior_pairs), 5)
            out["prior_layout_rate"] = round(self.prior_layouts_right / self.layouts, 5)
            out["prior_flagged"] = self.flagged
        return out


def format_report(summary: dict[str, Any]) -> str:
    """The human-readable form of :meth:`Report.summary`."""
    lines = [f"{summary['kind']}: {summary['images']} images, {summary['cards']} labelled cards"]
    if summary["cards"]:
        lines.append(f"  per-card accuracy: {summary['card_accuracy']:.4%} "
                     f"({summary['cards_right']}/{summary['cards']}, {summary['missed']} missed)")
    if summary["detections"]:
        lines.append(f"  false cards: {summary['false_cards']}/{summary['detections']} "
                     f"detections ({summary['false_card_rate']:.2%})")
    if "layouts" in summary:
        lines.append(f"  layouts read with no error: {summary['layouts_right']}/"
                     f"{summary['layouts']} ({summary['layout_rate']:.2%})")
    if "prior_card_accuracy" in summary:
        lines.append(f"  with the protocol prior: {summary['prior_card_accuracy']:.4%} of cards, "
                     f"{summary['prior_layout_rate']:.2%} of layouts, "
                     f"{summary['prior_flagged']} cards flagged")
    if "by_scene_kind" in summary:
        lines.append("  by scene kind: " + "; ".join(
            f"{k} {v['cards_right']}/{v['cards']} found"
            + (f" ({v['cards_right'] / v['cards']:.1%})" if v["cards"] else "")
            + f", {v['false_cards']}/{v['detections']} false"
            for k, v in summary["by_scene_kind"].items()))
    if "by_code_group" in summary:
        lines.append("  by code group: " + "; ".join(
            f"{k} {v['cards_right']}/{v['cards']}"
            + (f" ({v['cards_right'] / v['cards']:.1%})" if v["cards"] else "")
            for k, v in summary["by_code_group"].items()))
    if "missed_by_stage" in summary:
        lines.append("  missed labels by stage: " + ", ".join(
            f"{stage} {n}" for stage, n in summary["missed_by_stage"].items()))
    worst = sorted(summary["per_class"].items(), key=lambda kv: kv[1]["accuracy"])[:10]
    if worst:
        lines.append("  lowest per-class accuracy: " + ", ".join(
            f"{c} {v['accuracy']:.0%} ({v['right']}/{v['total']})" for c, v in worst))
    if summary["confusions"]:
        lines.append("  confusion pairs (truth->read x count): " + ", ".join(
            f"{c['truth']}->{c['read']} x{c['count']}" for c in summary["confusions"][:12]))
    if "calibration" in summary:
        lines.append("  calibration (confidence group: detections at mean confidence -> share "
                     "right): " + Reliability.from_json(summary["calibration"]).text())
    if "median_cpu_ms_per_image" in summary:
        lines.append(f"  median CPU per image: {summary['median_cpu_ms_per_image']:.1f} ms "
                     "(detection only, models loaded)")
    if summary["unreadable"]:
        lines.append(f"  unreadable images: {len(summary['unreadable'])}")
    if summary.get("scene_errors"):
        kinds = Counter(e["kind"] for s in summary["scene_errors"] for e in s["errors"])
        lines.append("  errors by kind (all scenes): " + ", ".join(
            f"{k} x{n}" for k, n in kinds.most_common()))
    return "\n".join(lines)


# ----------------------------------------------------------------------------- YOLO sets


def read_names(data_yaml: Path) -> list[str]:
    """Class names of a YOLO ``data.yaml``: ``names: [a, b]``, a ``- a`` list or ``0: a`` lines.

    Parsed by hand (only this one key is needed) so that measuring needs no YAML library.
    """
    try:
        lines = data_yaml.read_text().splitlines()
    except OSError as exc:
        raise EvalError(f"{data_yaml}: cannot read ({exc.strerror})") from exc

    def unquote(text: str) -> str:
        return text.split(" #")[0].strip().strip("'\"")

    for i, line in enumerate(lines):
        if not line.startswith("names:"):
            continue
        rest = line[len("names:"):].strip()
        if rest.startswith("["):
            if not rest.endswith("]"):
                raise EvalError(f"{data_yaml}: names list must be on one line")
            return [unquote(x) for x in rest[1:-1].split(",") if x.strip()]
        if rest:
            raise EvalError(f"{data_yaml}: names must be a list or a mapping, got {rest!r}")
        names: dict[int, str] = {}
        listed: list[str] = []
        for item in lines[i + 1:]:
            if not item.startswith((" ", "\t")) or not item.strip():
                break
            body = item.strip()
            if body.startswith("- "):
                listed.append(unquote(body[2:]))
                continue
            key, sep, value = body.partition(":")
            if not sep or not key.strip().isdigit():
                raise EvalError(f"{data_yaml}: cannot read names entry {body!r}")
            names[int(key)] = unquote(value)
        if listed:
            return listed
        if names and sorted(names) == list(range(len(names))):
            return [names[k] for k in range(len(names))]
        raise EvalError(f"{data_yaml}: names must number the classes 0, 1, 2, ...")
    raise EvalError(f"{data_yaml}: no names: entry")


def _label_path(root: Path, image: Path) -> Path:
    rel = image.relative_to(root)
    parts = list(rel.parts)
    if "images" in parts:
        parts[parts.index("images")] = "labels"
    return (root / Path(*parts)).with_suffix(".txt")


def read_yolo_labels(path: Path, names: Sequence[str], w: int, h: int
                     ) -> list[tuple[str, float, float]]:
    """(code, centre x, centre y) in pixels of every labelled box; no file means no cards."""
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        try:
            k, cx, cy = int(parts[0]), float(parts[1]), float(parts[2])
            code = names[k]
        except (ValueError, IndexError) as exc:
            raise EvalError(f"{path} line {n}: not a YOLO label ({exc})") from exc
        out.append((code, cx * w, cy * h))
    return out


def _yolo_images(root: Path) -> list[Path]:
    """The photos under a YOLO folder's ``images/``, sorted."""
    return sorted(p for p in (root / "images").rglob("*") if p.suffix.lower() in
                  {".jpg", ".jpeg", ".png", ".bmp", ".webp"})


def _contains(d: Detection, x: float, y: float) -> bool:
    return cv2.pointPolygonTest(d.quad.astype(np.float32).reshape(-1, 1, 2), (x, y), False) >= 0


def evaluate_yolo(root: Path, reader: TableReader, limit: int | None = None,
                  progress: Callable[[str], None] | None = None,
                  detect: Callable[[np.ndarray], Sequence[Detection]] | None = None,
                  keep: Callable[[Path], bool] | None = None,
                  explain: Callable[[np.ndarray, Sequence[tuple[str, float, float]]],
                                    list[str]] | None = None,
                  resize: tuple[int, int] | None = None,
                  kind_of: Callable[[Path], str] | None = None,
                  code_group: Callable[[Path, str], str] | None = None) -> Report:
    """``detect`` replaces :func:`detect_still` (e.g. :mod:`vision.photo_detect` for photos
    without the mat); ``keep`` selects images (e.g. the held-out split of a set); ``explain``
    names the stage that lost each missed label (:func:`vision.photo_misses.miss_explainer`),
    after the photo's timing; ``resize`` = (w, h) reads every photo at that size
    (:func:`vision.photo_size.resized`, before the timing); ``kind_of`` names each photo's kind
    of scene, counted apart (:attr:`Report.scenes`); ``code_group`` names a group for each
    label, from its photo and code (:attr:`Report.codes`, e.g. :func:`trained_codes`)."""
    names = read_names(root / "data.yaml")
    images = _yolo_images(root) if (root / "images").is_dir() else list_images(root)
    if keep is not None and images:
        images = [p for p in images if keep(p)]
        if not images:
            raise EvalError(f"{root}: no images in the selected split")
    if not images:
        raise EvalError(f"{root}: no images (expected images/ beside data.yaml)")
    rep = Report("yolo " + str(root) + _at(resize))
    for path in images[:limit]:
        try:
            image = read_image(path)
        except FrameSourceError as exc:
            rep.unreadable.append(str(exc))
            continue
        if resize is not None:
            image = resized(image, resize)
        h, w = image.shape[:2]
        labels = read_yolo_labels(_label_path(root, path), names, w, h)
        start = time.process_time()
        dets = detect(image) if detect is not None else detect_still(image, reader)
        rep.cpu_ms.append(1000 * (time.process_time() - start))
        rep.images += 1
        rep.detections += len(dets)
        missed, found = [], 0
        for code, x, y in labels:
            ok = any(d.code == code and _contains(d, x, y) for d in dets)
            found += ok
            if code_group is not None:
                tally = rep.codes.setdefault(code_group(path, code), [0, 0])
                tally[0] += 1
                tally[1] += ok
            inside = [d.code for d in dets if _contains(d, x, y)]
            rep.pairs.append((code, code if ok else (inside[0] if inside else MISSED)))
            if not ok and not inside:
                missed.append((code, x, y))
        if explain is not None:
            rep.misses.update(explain(image, missed))
        labelled = [any(d.code == code and _contains(d, x, y) for code, x, y in labels)
                    for d in dets]
        rep.false_cards += labelled.count(False)
        if kind_of is not None:
            tally = rep.scenes.setdefault(kind_of(path), [0, 0, 0, 0])
            for i, v in enumerate((len(labels), found, len(dets), labelled.count(False))):
                tally[i] += v
        rep.scored.extend((float(d.confidence), ok) for d, ok in zip(dets, labelled, strict=True))
        if progress and rep.images % 50 == 0:
            progress(f"{rep.images} images")
    return rep


def trained_codes(root: Path, kind_of: Callable[[Path], str],
                  trained: Callable[[Path], bool]) -> Callable[[Path, str], str]:
    """A ``code_group`` for :func:`evaluate_yolo`: "KIND, code trained on" where some photo of
    ``root`` that the readers train on (``trained``) of the same kind of scene holds a label of
    that code, else "KIND, code not trained on".

    WHY: the CC BY split holds out whole scene groups, and a webcam run is one card held, so
    every held-out webcam label is a code the readers never saw held to the webcam (only in
    the other kinds of scene and in renders); the figure by kind mixes that with reading what
    was trained on. Said apart, a gap between kinds is seen for what it is."""
    names = read_names(root / "data.yaml")
    seen: set[tuple[str, str]] = set()
    for path in _yolo_images(root):
        if not trained(path):
            continue
        seen.update((kind_of(path), code)
                    for code, _, _ in read_yolo_labels(_label_path(root, path), names, 1, 1))

    def group(path: Path, code: str) -> str:
        kind = kind_of(path)
        return f"{kind}, code {'' if (kind, code) in seen else 'not '}trained on"

    return group


def _at(resize: tuple[int, int] | None) -> str:
    return "" if resize is None else f" at {resize[0]}x{resize[1]}"


# ----------------------------------------------------------------------------- labels.csv


def evaluate_csv(labels: Path, reader: TableReader, limit: int | None = None,
                 detect: Callable[[np.ndarray], Sequence[Detection]] | None = None,
                 resize: tuple[int, int] | None = None) -> Report:
    """One card per photo: the first detection must have the photo's code. ``detect`` replaces
    :func:`detect_still` (``cardtable eval`` gives it what ``cardtable detect`` does,
    :func:`vision.still_detect.still_detector`); ``resize`` as :func:`evaluate_yolo`'s."""
    try:
        with labels.open(newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as exc:
        raise EvalError(f"cannot read {labels}: {exc.strerror}") from exc
    if not rows or not {"image", "code"} <= set(rows[0]):
        raise EvalError(f"{labels}: needs a header with columns image,code")
    rep = Report("labels.csv " + str(labels) + _at(resize))
    for row in rows[:limit]:
        path = labels.parent / row["image"]
        if not path.exists() and (labels.parent / "images" / row["image"]).exists():
            path = labels.parent / "images" / row["image"]  # the common images/ layout
        try:
            image = read_image(path)
        except FrameSourceError as exc:
            rep.unreadable.append(str(exc))
            continue
        if resize is not None:
            image = resized(image, resize)
        rep.images += 1
        start = time.process_time()
        dets = detect(image) if detect is not None else detect_still(image, reader)
        rep.cpu_ms.append(1000 * (time.process_time() - start))
        rep.detections += len(dets)
        read = dets[0].code if dets else MISSED
        truth = row["code"].strip().upper()
        rep.pairs.append((truth, read))
        if dets:
            rep.scored.append((float(dets[0].confidence), read == truth))
    return rep


# ----------------------------------------------------------------------------- scenes


def _truth_columns(scene: Any, zone: str) -> list[list[str]]:
    return scene.columns(zone)


def _view_columns(columns: Iterable[Iterable[Any]]) -> list[list[str | None]]:
    from protocol_runner.observations import trim

    out = [[c.code for c in trim(tuple(col))] for col in columns]
    while out and not out[-1]:
        out.pop()
    return out


def evaluate_scenes(reader: TableReader, count: int, seed: int = EVAL_SEED_BASE,
                    deck: str = "uno", fanned: bool = False, prior: bool = True,
                    progress: Callable[[str], None] | None = None,
                    printing: str | None = None) -> Report:
    """Render ``count`` scenes from ``seed`` on, read them, compare with their labels.
    ``printing`` (:func:`vision.synth.faces.printing`, e.g. ``thin:7``) prints every UNO face
    of every scene in that one deck's look instead of one drawn per scene."""
    if seed < EVAL_SEED_BASE:
        raise EvalError(f"measurement seeds start at {EVAL_SEED_BASE} (below are for training)")
    from vision.layout import build_view
    from vision.prior import decode_reveal
    from vision.synth.faces import printing as printed
    from vision.synth.scenes import render_scene

    style = printed(printing) if printing else None
    rep = Report(f"rendered scenes ({deck}{', fanned' if fanned else ''}"
                 f"{f', printing {printing}' if printing else ''}, seeds {seed}+)")
    for k in range(count):
        scene = render_scene(seed + k, deck=deck, fanned=fanned, style=style)
        reader.geometry = None
        reader.fanned = fanned
        reader.reuse = False  # every scene is a new table: nothing may carry over
        view = reader.read(scene.image)
        dets = list(view.detections)
        rep.images += 1
        rep.layouts += 1
        rep.detections += len(dets)
        matched: list[Detection | None] = []
        used: set[int] = set()
        right: set[int] = set()  # detections that are a card with its code
        for card in scene.cards:
            # nearest quad, corner by corner: in a fanned column a covered card's centre lies
            # inside the cards over it too, so containment alone cannot tell them apart
            width = float(np.linalg.norm(card.quad[1] - card.quad[0]))
            errs = [quad_error(d.quad, card.quad) if i not in used else np.inf
                    for i, d in enumerate(dets)]
            hit = int(np.argmin(errs)) if errs and min(errs) < 0.3 * width else None
            if hit is not None:
                used.add(hit)
                if dets[hit].code == card.code:
                    right.add(hit)
            matched.append(None if hit is None else dets[hit])
        rep.false_cards += len(dets) - len(used)
        rep.scored.extend((float(d.confidence), i in right) for i, d in enumerate(dets))
        reads = [MISSED if d is None else d.code for d in matched]
        rep.pairs.extend((c.code, r) for c, r in zip(scene.cards, reads, strict=True))
        obs = view.observation
        errors = scene_errors(scene, dets, matched, obs)
        rep.layouts_right += not errors
        if errors:
            rep.scene_errors.append({"seed": seed + k, "errors": errors})
        if prior:
            found = [i for i, d in enumerate(matched) if d is not None]
            probs = np.array([matched[i].probs for i in found])  # type: ignore[union-attr]
            readings = decode_reveal(probs, reader.classes, [c.code for c in scene.cards]) \
                if found else []
            decoded = [MISSED] * len(scene.cards)
            for i, r in zip(found, readings, strict=True):
                decoded[i] = r.code or MISSED
                rep.flagged += r.flagged
            rep.prior_pairs.extend((c.code, r) for c, r in zip(scene.cards, decoded,
                                                               strict=True))
            changed = {id(matched[i]): r.code for i, r in zip(found, readings, strict=True)}
            located = not any(e["kind"] in ("missed", "false", "no view") for e in errors)
            if obs is not None and located:  # the prior fixes codes, never a card's outline
                fixed = [Detection(changed.get(id(d)) or d.code, d.confidence, d.quad, d.quad_mm,
                                   d.zone, d.covered) for d in dets]
                v2 = build_view(fixed, reader.mat, reader.rows_per_column)
                rep.prior_layouts_right += (
                    _view_columns(v2.work) == _truth_columns(scene, "work")
                    and _view_columns(v2.side) == _truth_columns(scene, "side")
                    and v2.discard.code == next(c.code for c in scene.cards
                                                if c.zone == "discard"))
        if progress and (k + 1) % 10 == 0:
            progress(f"{k + 1}/{count} scenes")
    return rep


def _where(card: Any) -> str:
    return card.zone if card.column is None else f"{card.zone} c{card.column} r{card.row}"


def quad_error(found: np.ndarray, label: np.ndarray) -> float:
    """Mean corner distance between a detected quad and a labelled one, the card taken either
    way up.

    WHY either way up: both quads are in :func:`vision.synth.scenes.canonical_quad` order, whose
    top is the higher short edge; for a card lying level on its long side the two short edges
    are equally high, a fraction of a pixel decides, and the same outline turned 180° would
    count as a card missed plus a false one. Where a card lies is the same either way up."""
    return float(min(np.linalg.norm(found - q, axis=1).mean()
                     for q in (label, np.roll(label, 2, axis=0))))


def scene_errors(scene: Any, dets: Sequence[Detection], matched: Sequence[Detection | None],
                 obs: Any) -> list[dict[str, Any]]:
    """What one scene's reading got wrong, one entry per error, each with a ``kind``:
    ``missed`` (a card not found), ``false`` (a detection of no card), ``wrong code`` (found,
    misread; ``covered``: only a strip of it showed), ``arrangement`` (a zone's columns or rows,
    or the discard, differ from the layout's), ``no view``. A layout is read with no error
    exactly when this list is empty.

    WHY: a layout rate alone does not say what to fix; counted by kind over tuning seeds, the
    errors name the stage (localisation, recognition, layout) that fails most.
    """
    out: list[dict[str, Any]] = []
    for card, d in zip(scene.cards, matched, strict=True):
        if d is None:
            out.append({"kind": "missed", "code": card.code, "where": _where(card)})
        elif d.code != card.code:
            out.append({"kind": "wrong code", "code": card.code, "read": d.code,
                        "confidence": round(float(d.confidence), 3), "where": _where(card),
                        "covered": bool(card.covered)})
    hit = {id(d) for d in matched if d is not None}
    for d in dets:
        if id(d) not in hit:
            centre = d.quad_mm.mean(axis=0) if d.quad_mm is not None else d.quad.mean(axis=0)
            out.append({"kind": "false", "read": d.code, "zone": d.zone,
                        "at_mm": [round(float(v), 1) for v in centre]})
    if obs is None:
        out.append({"kind": "no view"})
    elif not out:  # a misread card also misplaces its column: report the cause alone
        for zone in ("work", "side"):
            seen, truth = _view_columns(getattr(obs, zone)), _truth_columns(scene, zone)
            if seen != truth:
                out.append({"kind": "arrangement", "zone": zone, "seen": seen,
                            "truth": truth})
        discard = next(c.code for c in scene.cards if c.zone == "discard")
        if obs.discard.code != discard:
            out.append({"kind": "arrangement", "zone": "discard", "seen": obs.discard.code,
                        "truth": discard})
    return out


def report_json(rep: Report) -> str:
    return json.dumps(rep.summary())
