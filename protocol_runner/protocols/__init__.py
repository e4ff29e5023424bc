"""The papers' protocols as generators of :class:`~protocol_runner.machine.Step`.

Each module holds one protocol family, written over public inputs only; see
:mod:`protocol_runner.machine` for how they are driven (simulator or camera-checked runner).
"""
