"""Recognition's second look: only unsure cards are read again, from wider crops."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.detect import locate_cards
from vision.geometry import TableGeometry
from vision.recognise import UNSURE_BELOW, TableReader
from vision.synth.scenes import render_scene

MODEL = Path(__file__).resolve().parent.parent / "models" / "card_classifier.onnx"
pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="no trained classifier in models/")


@pytest.mark.parametrize("unsure", [0, 1, 3])
def test_only_unsure_cards_are_read_again(unsure: int) -> None:
    scene = render_scene(11, 8)
    reader = TableReader.load()
    cards = locate_cards(scene.image, TableGeometry.from_markers(scene.image), fanned=False).cards
    n = len(reader.classes)
    sure = np.full(n, 0.01 / (n - 1), np.float32)
    sure[0] = 0.99
    doubtful = np.full(n, 0.5 / (n - 1), np.float32)
    doubtful[1] = 0.5
    assert doubtful.max() < UNSURE_BELOW <= sure.max()
    probs: list[np.ndarray | None] = [doubtful.copy() if i < unsure else sure.copy()
                                      for i in range(len(cards))]
    reader._second_look(scene.image, cards, probs, list(range(len(cards))))
    for i, p in enumerate(probs):
        assert p is not None
        assert float(p.sum()) == pytest.approx(1.0, abs=1e-4)
        if i < unsure:  # averaged with two real readings of the card: no longer the prior
            assert not np.allclose(p, doubtful)
        else:
            assert np.array_equal(p, sure)
