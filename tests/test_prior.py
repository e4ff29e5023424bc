"""Joint decoding against the protocol's multiset: exact assignment, flags, bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from vision.prior import PriorError, decode_detections, decode_reveal, hungarian


@pytest.mark.parametrize(("n", "m"), [(1, 1), (3, 3), (4, 6), (5, 5), (6, 7), (2, 5)])
def test_hungarian_is_optimal(n: int, m: int) -> None:
    rng = np.random.default_rng(n * 10 + m)
    for _ in range(20):
        cost = rng.random((n, m))
        col = hungarian(cost)
        assert len(set(col.tolist())) == n
        best = min(sum(cost[i, p[i]] for i in range(n))
                   for p in itertools.permutations(range(m), n))
        assert cost[np.arange(n), col].sum() == pytest.approx(best)


def test_hungarian_107_cards() -> None:
    rng = np.random.default_rng(0)
    perm = rng.permutation(107)
    cost = rng.random((107, 107)) + 1.0
    cost[np.arange(107), perm] = 0.0
    assert (hungarian(cost) == perm).all()


@pytest.mark.parametrize(
    ("cost", "message"),
    [(np.zeros((3, 2)), "cannot assign"), (np.array([[np.inf]]), "finite")],
)
def test_hungarian_bad_input(cost: np.ndarray, message: str) -> None:
    with pytest.raises(PriorError, match=message):
        hungarian(cost)


CLASSES = ("1R", "2G", "7R", "BACK")


def test_prior_fixes_a_misread_within_the_multiset() -> None:
    # card 0 looks a bit more like 7R, but the reveal must be {1R, 2G}: 1R is its legal reading
    probs = np.array([[0.40, 0.05, 0.50, 0.05], [0.05, 0.90, 0.03, 0.02]])
    out = decode_reveal(probs, CLASSES, ["1R", "2G"])
    assert [r.code for r in out] == ["1R", "2G"]
    assert out[0].alone == "7R" and not out[0].flagged


def test_duplicates_in_the_multiset_are_used_once_each() -> None:
    probs = np.array([[0.9, 0.1, 0, 0], [0.8, 0.2, 0, 0], [0.7, 0.3, 0, 0]])
    out = decode_reveal(probs, CLASSES, ["1R", "1R", "2G"])
    assert sorted(r.code for r in out) == ["1R", "1R", "2G"]
    assert out[2].code == "2G"


def test_unlikely_best_legal_reading_is_flagged() -> None:
    probs = np.array([[0.01, 0.01, 0.97, 0.01]])  # clearly 7R, which the protocol does not allow
    (r,) = decode_reveal(probs, CLASSES, ["1R", "2G"])
    assert r.flagged and r.code in ("1R", "2G") and r.alone == "7R"


def test_more_cards_than_the_multiset_flags_the_surplus() -> None:
    probs = np.array([[0.9, 0.1, 0, 0], [0.05, 0.05, 0.05, 0.85]])
    out = decode_reveal(probs, CLASSES, ["1R"])
    assert out[0].code == "1R" and out[1].code is None and out[1].flagged


@pytest.mark.parametrize(
    ("probs", "allowed", "message"),
    [(np.ones((2, 3)), ["1R"], "must be"), (np.ones((1, 4)) / 4, ["9Y"], "not classes")],
)
def test_prior_bad_input(probs: np.ndarray, allowed: list[str], message: str) -> None:
    with pytest.raises(PriorError, match=message):
        decode_reveal(probs, CLASSES, allowed)


def test_decode_detections_replaces_codes_in_the_zone_only() -> None:
    from vision.recognise import Detection

    quad = np.float32([[0, 0], [5, 0], [5, 8], [0, 8]])
    p_a = np.array([0.40, 0.05, 0.50, 0.05])
    p_b = np.array([0.05, 0.90, 0.03, 0.02])
    dets = [Detection("7R", 0.5, quad, zone="work", probs=p_a),
            Detection("2G", 0.9, quad, zone="work", probs=p_b),
            Detection("7R", 0.5, quad, zone="discard", probs=p_a)]
    out, flagged = decode_detections(dets, CLASSES, ["1R", "2G"])
    assert [d.code for d in out] == ["1R", "2G", "7R"]
    assert out[0].confidence == pytest.approx(0.40) and flagged == []
