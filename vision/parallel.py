"""Several networks' calls at once, one per CPU core.

WHY: the readers of one card are ensembles (:class:`vision.classifier.Ensemble`,
:class:`vision.strip_classifier.StripEnsemble`) whose members each run on one thread; called one
after another they leave the second core of a 2-core machine idle. onnxruntime releases the GIL
while a session runs, so threads suffice, and each member computes exactly what it computes
alone: the results are the same numbers, sooner."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def usable_cpus() -> int:
    """The CPU cores this process may run on (its affinity where the OS says, else all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def each_at_once(calls: Sequence[Callable[[], T]], workers: int | None = None) -> list[T]:
    """The results of ``calls``, in their order, run on up to ``workers`` threads (default:
    :func:`usable_cpus`); one at a time where there is one call or one core. A call's exception
    is raised here, as if it had been called alone.

    WHY a pool per call, not one kept for the process: a kept pool's threads do not survive a
    fork (the evaluation and training commands fork workers), and a pool of two threads costs
    far less than one network call."""
    n = min(len(calls), workers or usable_cpus())
    if n <= 1:
        return [call() for call in calls]
    with ThreadPoolExecutor(n, thread_name_prefix="network") as pool:
        return list(pool.map(lambda call: call(), calls))
