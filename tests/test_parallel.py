"""vision.parallel: calls run at once, their results in order, their errors raised; and the
shipped ensembles read at once exactly as their members read alone."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial

import numpy as np
import pytest

from vision.parallel import each_at_once


def _value(v: int) -> int:
    return v


def _fail() -> int:
    raise ValueError("this call failed")


@pytest.mark.parametrize(("calls", "workers", "expected"), [
    ([], None, []),
    ([partial(_value, 1)], None, [1]),
    ([partial(_value, i) for i in range(7)], None, list(range(7))),
    ([partial(_value, i) for i in range(7)], 1, list(range(7))),
    ([partial(_value, i) for i in range(7)], 3, list(range(7))),
])
def test_results_come_in_the_order_of_the_calls(calls: list[Callable[[], int]],
                                                workers: int | None, expected: list[int]) -> None:
    assert each_at_once(calls, workers) == expected


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failing_call_raises_its_own_error(workers: int) -> None:
    with pytest.raises(ValueError, match="this call failed"):
        each_at_once([partial(_value, 1), _fail], workers)


def test_two_workers_run_two_calls_at_once() -> None:
    """Each call waits for the other to start: they finish only when run side by side."""
    both = threading.Barrier(2, timeout=10)

    def meet() -> int:
        return both.wait()

    assert sorted(each_at_once([meet, meet], workers=2)) == [0, 1]


def test_one_worker_runs_in_the_callers_thread() -> None:
    here = threading.get_ident()
    assert each_at_once([threading.get_ident] * 2, workers=1) == [here, here]


def test_the_shipped_whole_card_ensemble_reads_as_its_members_alone() -> None:
    """Run at once, each member computes exactly what it computes alone: the same numbers."""
    from vision.classifier import DEFAULT_MODEL, CardClassifier, Ensemble, with_later_trainings
    from vision.synth.faces import UNO_FACE_CODES, canonical_face

    both = with_later_trainings(CardClassifier.load(DEFAULT_MODEL, threads=1), DEFAULT_MODEL)
    if not isinstance(both, Ensemble):
        pytest.skip("no later trainings shipped beside the whole-card model")
    crops = [canonical_face(c) for c in UNO_FACE_CODES[:5]]
    probs, feats = both.read(crops, both_ways=True)
    alone = [m.read(crops, both_ways=True) for m in both.members]
    assert np.array_equal(probs, np.mean([p for p, _ in alone], axis=0))
    assert np.array_equal(feats, alone[0][1])


def test_the_shipped_strip_pair_reads_as_its_members_alone() -> None:
    from vision.strip_classifier import (
        DEFAULT_STRIP_MODEL,
        StripClassifier,
        StripEnsemble,
        single_card_strip,
    )
    from vision.synth.faces import UNO_FACE_CODES, canonical_face

    pair = single_card_strip(StripClassifier.load(DEFAULT_STRIP_MODEL))
    if not isinstance(pair, StripEnsemble):
        pytest.skip("no wide strip networks shipped")
    rng = np.random.default_rng(3)
    patches = [np.ascontiguousarray(canonical_face(c)[:pair.size, :pair.size])
               for c in UNO_FACE_CODES[:4]]
    patches += [rng.integers(0, 256, (pair.size, pair.size, 3), np.uint8) for _ in range(3)]
    logp = np.mean([np.log(np.maximum(m.predict_patches(patches), 1e-12))
                    for m in pair.members], axis=0)
    expected = np.exp(logp - logp.max(axis=1, keepdims=True))
    expected = (expected / expected.sum(axis=1, keepdims=True)).astype(np.float32)
    assert np.array_equal(pair.predict_patches(patches), expected)
