"""The single-card locator: partial white balance, hull fill, tinted and fingered cards, and
cards held up in realistic webcam frames (white walls, windows, lamps, white shirts, JPEG)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.card_locator import (
    FRAME_EDGE,
    LARGE_CREDIT,
    LARGEST,
    SPLIT_CREDIT,
    SingleCardError,
    _cluster_proposals,
    _demote_nested,
    _evidence_parts,
    _proposals,
    _rect,
    _score,
    candidates,
    card_evidence,
    iou_in_photo,
    locate_card,
    white_patch,
    whiteness,
)
from vision.synth.faces import render_face
from vision.synth.photos import (
    _lay_face,
    held_card_photo,
    single_card_photo,
    tint_light,
    webcam_card_photo,
)


def _tinted(img: np.ndarray, gain: tuple[float, float, float]) -> np.ndarray:
    return np.clip(img * np.array(gain), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("gain", [
    (1.0, 1.0, 1.0),     # untinted: left as it is
    (0.55, 0.8, 1.0),    # tungsten: blue sunk
    (1.0, 0.85, 0.6),    # a cool window
    (0.7, 1.0, 0.7),     # a green fluorescent tube
])
def test_white_patch_moves_white_half_way_back(gain):
    img = np.full((60, 80, 3), 60, np.uint8)
    img[10:50, 20:60] = 230  # a white card border in a dark room
    tinted = _tinted(img, gain)
    out = white_patch(tinted)
    white_in, white_out = tinted[30, 40].astype(float), out[30, 40].astype(float)
    assert out.dtype == np.uint8 and out.shape == tinted.shape
    assert white_out.max() == pytest.approx(white_in.max(), abs=1)  # brightest channel kept
    spread_in = np.log(white_in.max() / white_in.min())
    spread_out = np.log(white_out.max() / white_out.min())
    assert spread_out == pytest.approx(spread_in / 2, abs=0.03)


def test_white_patch_of_a_black_photo_is_black():
    assert not white_patch(np.zeros((8, 8, 3), np.uint8)).any()


def _notched_card() -> np.ndarray:
    """Outline of an upright 100×155 card with a finger's notch bitten into its lower edge."""
    return np.array([[100, 100], [200, 100], [200, 255], [170, 255], [160, 200], [140, 200],
                     [130, 255], [100, 255]], np.int32).reshape(-1, 1, 2)


@pytest.mark.parametrize(("contour", "shape", "convex", "fill"), [
    (_notched_card(), None, False, (0.85, 0.95)),           # the notch counts against it
    (_notched_card(), None, True, (0.99, 1.0)),             # a card is convex: the hull fills
    # a card running off the photo's bottom: its box is measured inside the photo only
    (np.array([[100, 300], [200, 300], [200, 480], [100, 480]]).reshape(-1, 1, 2),
     (480, 640), False, (0.99, 1.0)),
])
def test_rect_fill(contour, shape, convex, fill):
    _, f = _rect(contour, 1.0, shape, convex)
    assert fill[0] <= f <= fill[1]


@pytest.mark.parametrize("gain", [
    (1.0, 1.0, 1.0),
    (0.5, 0.8, 1.0),
    (1.0, 0.8, 0.5),
    (0.65, 1.0, 0.6),
])
def test_a_card_on_a_table_is_found_under_any_light(gain):
    img, quad = single_card_photo("5G", np.random.default_rng(41))
    tinted = _tinted(img, gain)
    assert iou_in_photo(locate_card(tinted).quad, quad, img.shape) > 0.85


def test_a_card_held_between_fingers_is_found():
    """A card on a light wall with three fingers over its lower edge: the card, not a piece."""
    img, quad = single_card_photo("7B", np.random.default_rng(3))
    img = img.copy()
    bottom = quad[2:].mean(0)
    half = np.linalg.norm(quad[1] - quad[0]) / 2
    for dx in (-0.6, 0.0, 0.6):
        centre = (int(bottom[0] + dx * half), int(bottom[1] - 0.1 * half))
        cv2.ellipse(img, centre, (int(0.2 * half), int(0.5 * half)), 0, 0, 360,
                    (120, 150, 200), -1)
    assert iou_in_photo(locate_card(img).quad, quad, img.shape) > 0.8


def test_held_up_cards_are_found_by_their_white_border():
    """Rendered webcam frames (a light wall, a head, fingers, haze; seeds not used in
    development): the whitest pixels outline the card where the other segmentations join it to
    the head or the hand (0.67 of these before the white-border proposal, 0.92 with it)."""
    ious = []
    for i in range(12):
        img, quad = held_card_photo("6Y", np.random.default_rng([32, i]))
        ious.append(iou_in_photo(locate_card(img).quad, quad, img.shape))
    assert np.mean(np.array(ious) > 0.8) >= 0.8, np.round(ious, 2)


def test_held_up_cards_under_tinted_light_are_found():
    """Rendered webcam frames under strong coloured light (seeds not used in development):
    the white balance keeps most of them found (`python -m vision.single_card
    synthetic:tinted`)."""
    ious = []
    for i in range(12):
        rng = np.random.default_rng([31, i])
        img, quad = held_card_photo("3R", rng)
        ious.append(iou_in_photo(locate_card(tint_light(img, rng)).quad, quad, img.shape))
    assert np.mean(np.array(ious) > 0.8) >= 0.6, np.round(ious, 2)


def _white_room(distractor: str) -> tuple[np.ndarray, np.ndarray]:
    """A card held up in front of a white wall beside one white thing that is not a card, as a
    washed-out, JPEG-compressed webcam frame: (photo, the card's quad)."""
    rng = np.random.default_rng(5)
    room = np.full((480, 640, 3), 228, np.float32)
    room += rng.normal(0, 3, room.shape)
    if distractor.endswith("window"):  # blown out and as card-shaped as the card: 150×232
        cv2.rectangle(room, (60, 80), (210, 312), (255, 255, 255), -1)
    if distractor == "framed window":
        cv2.rectangle(room, (52, 72), (218, 320), (90, 110, 130), 8)
    elif distractor == "lamp":
        cv2.circle(room, (120, 150), 45, (255, 255, 255), -1)
        room = cv2.GaussianBlur(room, (0, 0), 4)
    elif distractor == "shirt":  # a white shirt and a skin-toned head behind the card
        cv2.ellipse(room, (330, 560), (300, 260), 0, 0, 360, (245, 245, 245), -1)
        cv2.ellipse(room, (330, 170), (70, 95), 0, 0, 360, (120, 150, 205), -1)
    face = render_face("7B", np.random.default_rng(2), size=(200, 300))
    photo, quad = _lay_face(room, face, (430.0, 250.0), 0.62, np.radians(8), 0.02, rng,
                            cv2.INTER_AREA)
    cv2.ellipse(photo, tuple(int(v) for v in quad[2:].mean(0)), (30, 45), 0, 0, 360,
                (120, 150, 205), -1)  # the thumb over the card's lower edge
    photo = np.clip(photo * 1.1, 0, 255).astype(np.uint8)  # washed out: the border clips
    _, jpeg = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 35])
    return cv2.imdecode(jpeg, cv2.IMREAD_COLOR), quad


@pytest.mark.parametrize("distractor", [
    # a framed window is outlined more clearly than the card; the card's field, cut by its
    # oval and the thumb into pieces of one colour, wins since the hull of all of them is
    # proposed and credited (sixth session)
    "wall", "window", "lamp", "framed window",
    # a white border on a white shirt loses its outline, and a head outscored it until the
    # proposals were weighed by their agreement with the card mask (thirty-sixth session)
    "shirt",
])
def test_a_card_is_found_beside_white_things_that_are_not_cards(distractor):
    img, quad = _white_room(distractor)
    assert iou_in_photo(locate_card(img).quad, quad, img.shape) > 0.8


@pytest.mark.parametrize(("thing", "low", "high"), [
    ("card", 0.8, 2.0),    # printed inside its border, though its outline fades into the wall
    ("window", 0.0, 0.3),  # as card-shaped and whiter, but blown out to the middle
])
def test_card_evidence_tells_a_printed_card_from_a_white_window(thing, low, high):
    img, quad = _white_room("window")
    box = quad if thing == "card" else np.float32([[60, 80], [210, 80], [210, 312], [60, 312]])
    small = white_patch(img)
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grad = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1)) / 4
    assert low <= card_evidence(whiteness(small), grad, box) <= high


def test_cards_in_realistic_webcam_frames_are_found():
    """Rendered webcam frames of a person holding a card up in a lit room (seeds not used in
    development; `python -m vision.single_card synthetic:webcam`): white walls, windows, lamps,
    white shirts, skin all round, washed out, blurred, JPEG. Before the card evidence and the
    colour-cluster proposals 1 of these 12 was found, with them 6, with the evidence weighed
    over size and the whole photo's box needing an outline 9, with the hull of all pieces of
    one colour proposed and the colours split at 320 pixels 10."""
    ious = []
    for i in range(12):
        img, quad = webcam_card_photo("4G", np.random.default_rng([33, i]))
        ious.append(iou_in_photo(locate_card(img).quad, quad, img.shape))
    assert np.mean(np.array(ious) > 0.8) >= 9 / 12, np.round(ious, 2)


def _small_or_filling(scene: str, code: str) -> tuple[np.ndarray, np.ndarray]:
    """A card a tenth of a plain wall's photo beside a head, or a card larger than a close-up
    photo on a dark backdrop (cut on every side): (photo, the card's quad)."""
    rng = np.random.default_rng(4)
    level = 200 if scene == "small" else 30
    back = np.full((480, 640, 3), level, np.float32) + rng.normal(0, 3, (480, 640, 3))
    face = render_face(code, np.random.default_rng(1), size=(200, 300))
    if scene == "small":
        cv2.ellipse(back, (420, 200), (80, 110), 0, 0, 360, (120, 150, 205), -1)
        photo, quad = _lay_face(back, face, (180.0, 220.0), 0.48, np.radians(10), 0.02, rng,
                                cv2.INTER_AREA)
    else:
        photo, quad = _lay_face(back, face, (320.0, 240.0), 2.35, np.radians(93), 0.02, rng,
                                cv2.INTER_LINEAR)
    return np.clip(photo, 0, 255).astype(np.uint8), quad


@pytest.mark.parametrize(("scene", "code", "outlined"), [
    ("small", "2R", False), ("small", "+4", False), ("small", "SG", False),
    ("filling", "2R", True), ("filling", "+4", True), ("filling", "SG", True),
])
def test_the_whole_photo_stands_for_a_card_only_where_its_outline_lies_on_edges(
        scene, code, outlined):
    """The fallback box of the whole photo is credited as a card only as far as its outline
    lies on edges (``FRAME_EDGE``): a close-up's card is printed up to the photo's edge, a
    wall round a small card is plain there (webcam renders lost a small card to it)."""
    img, quad = _small_or_filling(scene, code)
    small = white_patch(img)
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grad = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1)) / 4
    frame = [p.box for p in _proposals(small, whiteness(small)) if p.method == "frame"][0]
    assert (_evidence_parts(whiteness(small), grad, frame)[0] >= FRAME_EDGE) == outlined
    assert iou_in_photo(locate_card(img).quad, quad, img.shape) > 0.8


def test_the_pieces_of_a_cut_field_are_proposed_together():
    """A blue field cut into three pieces by its oval and a thumb, its white border lost in a
    white wall: the hull of all the field's pieces is proposed, grown to the card."""
    img = np.full((480, 640, 3), 248, np.uint8)
    cv2.ellipse(img, (250, 170), (70, 95), 0, 0, 360, (120, 150, 205), -1)  # a head
    card = np.float32([[330, 120], [480, 120], [480, 352], [330, 352]])
    field = np.full((204, 126, 3), (170, 60, 20), np.uint8)
    cv2.ellipse(field, (63, 102), (125, 34), -60, 0, 360, (248, 248, 248), -1)  # the oval
    img[134:338, 342:468] = field
    cv2.ellipse(img, (430, 330), (16, 70), 0, 0, 360, (120, 150, 205), -1)  # the thumb
    split = [p for p in _cluster_proposals(img) if p.method == "cluster-all"]
    ious = [iou_in_photo(p.box, card, img.shape) for p in split]
    assert max(ious, default=0.0) > 0.8
    assert {p.credit for p in split} == {SPLIT_CREDIT}  # a field cut in pieces: credited


def _box(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])


@pytest.mark.parametrize(("share", "kept"), [
    (0.5, True), (0.85, True),
    (0.93, True), (0.96, True),  # a card held close, off two sides, its corner in view
    (0.98, False),               # the whole photo: the frame proposal's job
])
def test_a_card_off_two_sides_may_cover_nearly_all_the_photo(share: float, kept: bool) -> None:
    side = 640 * np.sqrt(share)
    score = _score(_box(640 - side, 640 - side, 640, 640), 0.9, (640, 640))
    assert (score > -0.5) == kept


def test_a_box_over_the_size_credit_gains_nothing_more() -> None:
    """Beyond ``LARGE_CREDIT`` of the photo a box is as likely the room as the card."""
    def at(share: float) -> float:
        side = 640 * np.sqrt(share)
        return _score(_box(640 - side, 640 - side, 640, 640), 0.9, (640, 640))

    assert at(LARGE_CREDIT) == pytest.approx(at(0.95))
    assert at(0.8) < at(LARGE_CREDIT)
    assert LARGE_CREDIT < LARGEST < 1.0


@pytest.mark.parametrize(("outer", "demoted"), [
    (("card", _box(100, 100, 300, 400), 2.6, 0.7), True),    # the oval inside its card
    (("head", _box(100, 100, 300, 400), 2.9, 0.1), False),   # a head's box round the card
    (("wall", _box(100, 100, 300, 400), 2.0, 0.9), False),   # far less card-like
    (("frame", _box(100, 100, 300, 400), 2.9, 0.9), False),  # the whole photo's box
    (("small", _box(150, 180, 250, 320), 2.9, 0.9), False),  # not much larger
])
def test_a_proposal_inside_a_larger_outlined_one_is_demoted(outer, demoted):
    inner = ("oval", _box(160, 200, 240, 300), 2.5, 0.5)
    (_, _, score), _ = _demote_nested([inner, outer])
    assert score == pytest.approx(2.5 - 0.3 if demoted else 2.5)


@pytest.mark.parametrize(("image", "message"), [
    (np.zeros((10, 10), np.uint8), "BGR image"),
    (np.zeros((10, 10, 4), np.uint8), "BGR image"),
    ([[0, 0, 0]], "BGR image"),
    (np.zeros((0, 0, 3), np.uint8), "empty"),
])
def test_bad_images_get_a_clear_error(image, message):
    with pytest.raises(SingleCardError, match=message):
        candidates(image)
