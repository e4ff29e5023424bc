"""Deck enrolment on the mat: the deck laid out in order, photographed, read as it prints.

The deck is a rendered printing in a font no training render uses (``thin:SEED``), the user's
photos its enrolment renders (:mod:`vision.synth.enrolment`), the test a table of that printing.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from protocol_runner.cards import BACK
from protocol_runner.cli import main
from vision.enrol import MAT, PHOTOS, DeckProfile, EnrolError, enrol_mat, mat_order, mat_photos
from vision.recognise import TableReader, uno_card_detection
from vision.synth.enrolment import ENROL_SEED_BASE, render_enrolment
from vision.synth.faces import FaceError, printing
from vision.synth.scenes import render_scene

PRINTING = "thin:2"  # read 956 of 1,000 cards right without enrolment, 1,000 with it


@pytest.fixture(scope="module")
def reader() -> TableReader:
    return TableReader.load()


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("enrol")
    paths = []
    for k, image in enumerate(render_enrolment(PRINTING), start=1):
        paths.append(folder / f"enrol_{k}.png")
        cv2.imwrite(str(paths[-1]), image)
    return paths


@pytest.fixture(scope="module")
def profile_file(photos: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("profile") / "deck.npz"
    assert main(["enrol", "--mat", *map(str, photos), "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize(("deck", "count"), [("uno", 55), ("standard", 54)])
def test_mat_order_is_every_face_then_a_back(deck: str, count: int) -> None:
    order = mat_order(deck)
    assert len(order) == len(set(order)) == count and order[-1] == BACK


def test_mat_order_of_an_unknown_deck_is_refused() -> None:
    with pytest.raises(EnrolError, match="uno or standard"):
        mat_order("tarot")


@pytest.mark.parametrize(("spec", "font"), [("plain:7", None), ("thin:7", 3), ("thin:0", 3)])
def test_printing_names_one_fixed_style(spec: str, font: int | None) -> None:
    style = printing(spec)
    assert style == printing(spec)  # fixed by its seed
    plain = printing("plain:" + spec.split(":")[1])
    assert style.field == plain.field
    assert style.font == (plain.font if font is None else font)


def test_the_classic_printing_is_the_demo_s_deck() -> None:
    from vision.synth.faces import CLASSIC_UNO

    assert printing("classic") is CLASSIC_UNO


@pytest.mark.parametrize("spec", ["thin", "bold:7", "thin:x", ":7", "", "classic:1"])
def test_a_bad_printing_is_a_clear_error(spec: str) -> None:
    with pytest.raises(FaceError, match="KIND:SEED"):
        printing(spec)


def test_enrol_mat_command_writes_a_mat_profile(profile_file: Path) -> None:
    profile = DeckProfile.load(profile_file)
    assert profile.source == MAT
    assert set(profile.codes) == set(mat_order("uno"))
    assert set(profile.corner_codes) == set(mat_order("uno"))  # the strip knows UNO backs too


def test_enrol_mat_records_how_the_plain_reader_read_each_card(photos: list[Path],
                                                                reader: TableReader) -> None:
    from vision.card_locator import read_image

    profile = enrol_mat([(p.name, read_image(p)) for p in photos], mat_order("uno"), reader)
    assert [p.code for p in profile.photos] == list(mat_order("uno"))
    assert [p.path for p in profile.photos] == ["enrol_1.png"] * 52 + ["enrol_2.png"] * 3
    # this printing's thin 8s are the plain reader's weak spot, and nothing else much
    assert sum(p.read_as == p.code for p in profile.photos) >= 45


def test_order_command_prints_the_columns(capsys: pytest.CaptureFixture) -> None:
    assert main(["enrol", "--mat", "--order"]) == 0
    lines = capsys.readouterr().out.splitlines()
    columns = [line.split(":", 1)[1].split() for line in lines if line.startswith("  column")]
    assert [c for col in columns for c in col] == list(mat_order("uno"))
    assert sum(line.startswith("photo") for line in lines) == 2
    assert all(len(col) == 4 for col in columns[:-1])


def test_the_profile_reads_the_printing_s_table_better(profile_file: Path) -> None:
    """The deck's own 8s, which the plain models read as 3 or 5 in this thin font."""
    scene = render_scene(10_000_000, style=printing(PRINTING))
    truth = sorted(c.code for c in scene.cards)
    reads = {}
    for name, profile in (("plain", None), ("enrolled", profile_file)):
        reader = TableReader.load(profile=profile)
        reads[name] = sum(a == b for a, b in zip(
            sorted(d.code for d in reader.read(scene.image).detections), truth, strict=False))
    assert reads["enrolled"] == len(truth) >= reads["plain"]


def test_a_fanned_table_reads_covered_cards_as_without_the_profile(profile_file: Path) -> None:
    """A covered card's sliver is read by the plain strip network (its prototypes are of whole
    cards' corners); the whole cards of the table are read through the profile: in this
    printing the plain reader gets 14 of the scene's 50 cards wrong."""
    scene = render_scene(10_000_001, style=printing(PRINTING), fanned=True)
    wrong, covered = {}, {}
    for name, profile in (("plain", None), ("enrolled", profile_file)):
        dets = TableReader.load(profile=profile, fanned=True).read(scene.image).detections
        wrong[name] = sum(_nearest(scene, d).code != d.code for d in dets)
        covered[name] = {tuple(d.quad.mean(0).round()): d.probs for d in dets if d.covered}
    assert covered["plain"].keys() == covered["enrolled"].keys() and covered["plain"]
    assert all(np.allclose(covered["plain"][k], covered["enrolled"][k])
               for k in covered["plain"])
    assert wrong["enrolled"] <= wrong["plain"]


def _nearest(scene: object, det: object) -> object:
    return min(scene.cards, key=lambda c: float(  # type: ignore[attr-defined]
        np.linalg.norm(c.quad.mean(0) - det.quad.mean(0))))  # type: ignore[attr-defined]


def _shifted_photos() -> list[tuple[str, np.ndarray]]:
    """The enrolment photos with each place holding the card that belongs one place later
    (the first card last)."""
    order = mat_order("uno")
    shifted = iter(order[1:] + order[:1])
    style = printing(PRINTING)
    return [(f"p{k}", render_scene(ENROL_SEED_BASE + k, style=style,
                                   codes=[next(shifted) for _ in chunk]).image)
            for k, chunk in enumerate(mat_photos("uno"))]


@pytest.mark.parametrize(("setup", "message"), [
    ("one photo", "found 52 cards .* for the 55"),
    ("shifted", r"not lie in the enrolment order: 5\d of them read as the card 1 place\(s\) later"),
    ("no mat", "p0: found 0 of the mat.s 4 corner markers"),
    ("off the work area", "outside the work area"),
])
def test_bad_enrolment_layouts_are_refused(setup: str, message: str, photos: list[Path],
                                           reader: TableReader) -> None:
    from vision.card_locator import read_image

    mine = [(str(p), read_image(p)) for p in photos]
    if setup == "one photo":
        mine = mine[:1]
    elif setup == "shifted":
        mine = _shifted_photos()
    elif setup == "no mat":
        mine = [("p0", np.full((720, 1280, 3), 128, np.uint8))]
    elif setup == "off the work area":  # the last photo's 3 cards, one on the discard pile
        scene = render_scene(ENROL_SEED_BASE + 1, style=printing(PRINTING), n_cards=3,
                             back_fraction=0.0)
        assert [c.zone for c in scene.cards].count("discard") == 1
        mine = [mine[0], ("p1", scene.image)]
    with pytest.raises(EnrolError, match=message):
        enrol_mat(mine, mat_order("uno"), reader)


def test_enrolling_through_a_profiled_reader_is_refused(profile_file: Path,
                                                        photos: list[Path]) -> None:
    from vision.card_locator import read_image

    with pytest.raises(EnrolError, match="no deck profile"):
        enrol_mat([(str(photos[0]), read_image(photos[0]))], mat_order("uno"),
                  TableReader.load(profile=profile_file))


def test_a_profile_adapts_only_where_it_was_enrolled(profile_file: Path) -> None:
    mat = TableReader.load(profile=profile_file)
    assert mat.mat_profile is not None and mat.photo_profile is None
    p = DeckProfile.load(profile_file)  # its whole-card prototypes alone, as from photos
    photo = DeckProfile(p.codes, p.prototypes, p.model_classes, model_digest=p.model_digest,
                        source=PHOTOS)
    reader = TableReader.load()
    reader.profile = photo
    assert reader.mat_profile is None and reader.photo_profile is photo
    # a photo of one card is read without a mat profile: the same as with no profile at all
    from vision.synth.faces import render_face
    from vision.synth.photos import single_card_photo

    rng = np.random.default_rng(7)
    photo_of_one = single_card_photo(
        "8G", rng, face=render_face("8G", rng, (200, 300), style=printing(PRINTING)))[0]
    with_mat = uno_card_detection(photo_of_one, mat)
    without = uno_card_detection(photo_of_one, TableReader.load())
    assert with_mat is not None and without is not None
    assert np.allclose(with_mat.probs, without.probs)


@pytest.mark.parametrize("argv", [
    ["eval", "scenes", "--count", "1", "--profile", "{photo}"],
    ["serve", "--camera", "{video}", "--port", "0", "--profile", "{photo}"],
])
def test_a_photo_profile_on_the_mat_is_a_clear_error(argv: list[str], profile_file: Path,
                                                     tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    p = DeckProfile.load(profile_file)  # its whole-card prototypes alone, as from photos
    photo = DeckProfile(p.codes, p.prototypes, p.model_classes, model_digest=p.model_digest,
                        source=PHOTOS)
    path = photo.save(tmp_path / "photo.npz")
    video = tmp_path / "frames"
    video.mkdir()
    cv2.imwrite(str(video / "0.png"), np.zeros((72, 128, 3), np.uint8))
    args = [a.format(photo=path, video=video) for a in argv]
    assert main(args) == 2
    assert "enrolled from photos of single cards" in capsys.readouterr().err


def test_eval_scenes_with_the_profile_reports_the_printing(profile_file: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    assert main(["eval", "scenes", "--count", "1", "--printing", PRINTING, "--profile",
                 str(profile_file), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert f"printing {PRINTING}" in report["kind"] and report["card_accuracy"] == 1.0


def test_the_live_vision_stage_reads_through_a_mat_profile(profile_file: Path) -> None:
    from protocol_runner.pipeline import vision_stage

    stage = vision_stage(profile_file)
    assert stage.reader.mat_profile is not None  # type: ignore[attr-defined]


def test_a_replay_through_a_profile_names_the_deck_on_the_page(profile_file: Path) -> None:
    from protocol_runner.pipeline import open_recording

    demo = Path(__file__).resolve().parents[1] / "datasets" / "demo"
    plain = open_recording(demo, speed=None)
    enrolled = open_recording(demo, speed=None, profile=profile_file)
    assert plain.source == "demo" and enrolled.source == "demo · deck deck.npz"


@pytest.mark.parametrize(("argv", "message"), [
    (["enrol", "--order"], "give --mat too"),
    (["enrol"], "give one folder of card photos"),
    (["enrol", "a", "b"], "give one folder of card photos"),
    (["enrol", "--mat"], "photos of the deck laid out on the mat"),
    (["enrol", "--mat", "{missing}"], "no image file at"),
])
def test_enrol_command_errors(argv: list[str], message: str, tmp_path: Path,
                              capsys: pytest.CaptureFixture) -> None:
    assert main([a.format(missing=tmp_path / "none.png") for a in argv]) == 2
    assert message in capsys.readouterr().err
