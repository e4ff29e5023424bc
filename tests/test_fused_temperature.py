"""The fused reading's temperature (`vision.fused_temperature`): the fit finds a known
temperature, scoring keeps the reading, the untempered readings are the shipped reading's, and
bad arguments fail before any reading."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.fused_temperature import FusedReadings, collect, main, score
from vision.single_card import FUSED_TEMPERATURE, read_single_card_probs, synthetic_photos
from vision.strip_classifier import fit_temperature, soften


def _overconfident(true_t: float, n: int = 4000, k: int = 12, seed: int = 0
                   ) -> FusedReadings:
    """Readings whose labels are drawn from softmax(z / true_t) but whose probabilities are
    softmax(z): overconfident by exactly ``true_t``."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 4, (n, k))
    truth = np.exp(z / true_t)
    truth /= truth.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(k, p=p) for p in truth])
    probs = np.exp(z - z.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    return FusedReadings(probs, labels, ("table",) * n, np.full(n, 7),
                         tuple(f"c{i}" for i in range(k)))


@pytest.mark.parametrize("true_t", [1.0, 1.5, 2.0, 3.0])
def test_fit_finds_the_temperature_the_labels_were_drawn_at(true_t: float) -> None:
    readings = _overconfident(true_t)
    fitted = fit_temperature(readings.probs, readings.labels)
    assert fitted == pytest.approx(true_t, rel=0.1)
    # and it scores better there than at a temperature far off
    assert score(readings, fitted).nll < score(readings, true_t * 2).nll
    assert score(readings, fitted).nll < score(readings, true_t / 2).nll


@pytest.mark.parametrize("temperature", [0.5, 1.0, FUSED_TEMPERATURE, 4.0])
def test_a_temperature_moves_the_confidence_not_the_reading(temperature: float) -> None:
    readings = _overconfident(2.0, n=500)
    base, tempered = score(readings, 1.0), score(readings, temperature)
    assert tempered.top1 == base.top1
    assert tempered.calibration.count == 500


@pytest.mark.parametrize(("probs", "label", "nll"), [
    ([0.5, 0.5], 0, math.log(2)),
    ([0.9, 0.1], 0, -math.log(0.9)),
    ([0.9, 0.1], 1, -math.log(0.1)),
    ([1.0, 0.0], 1, -math.log(1e-12)),  # a sure miss costs what the clip allows, not infinity
])
def test_score_is_the_mean_negative_log_likelihood(probs: list[float], label: int,
                                                   nll: float) -> None:
    readings = FusedReadings(np.array([probs]), np.array([label]), ("table",), np.array([7]),
                             ("a", "b"))
    assert score(readings, 1.0).nll == pytest.approx(nll, rel=1e-6)


def test_untempered_readings_are_the_shipped_reading_before_its_temperature() -> None:
    """Tempered by the shipped constant, the collected readings are exactly what the reader
    gives: the fit scores the distribution the user sees."""
    from vision.classifier import DEFAULT_MODEL, CardClassifier, with_later_trainings
    from vision.corner_index import CornerFusion
    from vision.synth.faces import UNO_FACE_CODES

    readings = collect(["held"], [7], 3, jobs=1)
    assert readings.probs.shape[0] == 3 and readings.kinds == ("held",) * 3
    np.testing.assert_allclose(readings.probs.sum(axis=1), 1.0, rtol=1e-6)
    clf = CardClassifier.load(DEFAULT_MODEL, threads=1)
    both = with_later_trainings(clf, DEFAULT_MODEL)
    corners = CornerFusion.load(clf.classes, UNO_FACE_CODES)
    for i, (code, img, _) in enumerate(synthetic_photos("held", 3, 7)):
        assert readings.codes[readings.labels[i]] == code
        shipped = read_single_card_probs(img, both, UNO_FACE_CODES, None, corners)[3]
        np.testing.assert_allclose(soften(readings.probs[i:i + 1], FUSED_TEMPERATURE)[0],
                                   shipped, atol=1e-6)


@pytest.mark.parametrize(("argv", "message"), [
    (["--kinds", "beach", "--count", "1"], "no synthetic set 'beach'"),
    (["--count", "0"], "--count and --jobs must be at least 1"),
    (["--jobs", "0"], "--count and --jobs must be at least 1"),
    (["--also", "-1"], "temperatures above 0"),
])
def test_bad_arguments_fail_before_any_reading(argv: list[str], message: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    if message.startswith("no synthetic"):
        with pytest.raises(ValueError, match=message):
            main(argv)
        return
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
