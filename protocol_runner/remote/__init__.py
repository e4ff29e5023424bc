"""Long-distance play from one shared encrypted pack, with no dealer to trust (issue 7).

``scheme`` (the safe-prime group), ``protocol`` (the pack every device applies in the same order),
``audit`` (the end-of-game replay that names cheats), ``uno_remote`` (the UNO rules on top),
``messages`` / ``store`` / ``transport`` (authenticated entries, SQLite state, HTTP), ``local``
(devices in one process: benchmark and tests).
"""
