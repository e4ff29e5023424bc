"""Each UNO symbol's log weight on the fused reading (`vision.symbol_bias`): the fit finds a
lean the labels were drawn with, the ridge holds it back, the weights divide back out, the
reader applies them once, and the command fits them."""

from __future__ import annotations

import numpy as np
import pytest

from protocol_runner.cards import Card
from vision.corner_index import CornerFusion, fuse
from vision.fused_temperature import FusedReadings, rebias, report
from vision.single_card import FUSED_TEMPERATURE, read_single_card_probs, synthetic_photos
from vision.strip_classifier import soften
from vision.symbol_bias import (
    SYMBOL_BIAS,
    fit_symbol_bias,
    symbol_weights,
    without_bias,
)
from vision.synth.faces import UNO_FACE_CODES


def test_every_uno_symbol_has_a_shipped_weight() -> None:
    assert set(SYMBOL_BIAS) == {Card(c).symbol for c in UNO_FACE_CODES}
    assert all(abs(v) < 2 for v in SYMBOL_BIAS.values())


CODES = ("1R", "1B", "2R", "2B", "RR", "RB", "W")


def _leaning(lean: dict[str, float], n: int = 6000, temperature: float = 1.0, seed: int = 0
             ) -> tuple[np.ndarray, np.ndarray]:
    """Readings whose labels were drawn from softmax((z + b) / T), b the symbols' ``lean``,
    while the readings say softmax(z): they lean by exactly -b."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 2, (n, len(CODES)))
    b = np.array([lean.get(Card(c).symbol, 0.0) for c in CODES])
    truth = np.exp((z + b) / temperature)
    truth /= truth.sum(1, keepdims=True)
    labels = np.array([rng.choice(len(CODES), p=p) for p in truth])
    probs = np.exp(z - z.max(1, keepdims=True))
    return probs / probs.sum(1, keepdims=True), labels


@pytest.mark.parametrize(("lean", "temperature"), [
    ({"R": -1.0}, 1.0),
    ({"R": -1.0, "1": 0.5}, 1.0),
    ({"R": -0.8, "W": 0.6}, 1.5),
    ({}, 1.22),
])
def test_the_fit_finds_the_lean_the_labels_were_drawn_with(lean: dict[str, float],
                                                           temperature: float) -> None:
    probs, labels = _leaning(lean, temperature=temperature)
    got = fit_symbol_bias(probs, labels, CODES, temperature, ridge=0.0)
    # a common shift of every symbol changes nothing, so compare differences from one symbol
    for s in ("1", "R", "W"):
        want = lean.get(s, 0.0) - lean.get("2", 0.0)
        assert got[s] - got["2"] == pytest.approx(want, abs=0.15)


def test_the_ridge_holds_the_weights_back() -> None:
    probs, labels = _leaning({"R": -1.0})
    free = fit_symbol_bias(probs, labels, CODES, 1.0, ridge=0.0)
    held = fit_symbol_bias(probs, labels, CODES, 1.0, ridge=0.05)
    assert abs(held["R"]) < abs(free["R"])
    assert sum(v * v for v in held.values()) < sum(v * v for v in free.values())


@pytest.mark.parametrize("bias", [SYMBOL_BIAS, {}, {"R": -2.0, "7": 1.0}])
def test_the_weights_divide_back_out(bias: dict[str, float]) -> None:
    rng = np.random.default_rng(3)
    raw = rng.dirichlet(np.ones(len(UNO_FACE_CODES)), size=5)
    weighed = raw * symbol_weights(UNO_FACE_CODES, bias)
    weighed /= weighed.sum(1, keepdims=True)
    np.testing.assert_allclose(without_bias(weighed, UNO_FACE_CODES, bias), raw, atol=1e-12)


@pytest.fixture(scope="module")
def reader():
    from vision.classifier import DEFAULT_MODEL, CardClassifier, with_later_trainings

    clf = CardClassifier.load(DEFAULT_MODEL, threads=1)
    return with_later_trainings(clf, DEFAULT_MODEL), CornerFusion.load(clf.classes,
                                                                       UNO_FACE_CODES)


def test_the_reader_weighs_its_fused_reading_once(reader) -> None:
    """The distribution the reader returns is its experts' product times the symbols'
    weights, tempered: the weights neither go missing nor count twice."""
    both, corners = reader
    for _, image, _ in synthetic_photos("webcam", 3, 7):
        parts: dict[str, np.ndarray] = {}
        *_, probs, codes = read_single_card_probs(image, both, UNO_FACE_CODES, None, corners,
                                                  parts=parts)
        raw = fuse(parts["card"], parts["corners"], shown=parts["shown"]) * parts["colour"]
        want = raw * symbol_weights(codes)
        want = soften((want / want.sum())[None], FUSED_TEMPERATURE)[0]
        np.testing.assert_allclose(probs, want, atol=1e-9)


def test_the_command_fits_and_scores_the_weights() -> None:
    probs, labels = _leaning({"R": -1.0}, n=800)
    readings = FusedReadings(probs, labels, ("held",) * len(labels), np.full(len(labels), 7),
                             CODES)
    text = report(readings, [], bias=True)
    assert "symbol bias fitted at T" in text and "R " in text.splitlines()[1]
    assert "no symbol bias" in text and "fitted symbol bias" in text
    # scoring without weights is the readings with the shipped ones divided out
    plain = rebias(readings, {})
    np.testing.assert_allclose(plain.probs, without_bias(probs, CODES), atol=1e-12)
