"""Old Maid at a real table, checked from observations: bad or untimely input is refused and
changes nothing. (Whole games and a mistake planted at every reveal, through `cardtable run`:
tests/test_runner_games.py.)"""


import pytest

from protocol_runner.games.checked import CheckedGame
from protocol_runner.instructions import Verdict
from protocol_runner.observations import Cell, Event, PlayerSpec, Setup, View

PLAYERS = [("Ann", False), ("Vic", True), ("Bob", False)]


def _setup(game: str = "old-maid") -> Setup:
    return Setup(players=tuple(PlayerSpec(n, v) for n, v in PLAYERS), game=game)


@pytest.mark.parametrize(("records", "kind", "message"), [
    ([Event("drew", seq=1)], "refused", "no setup record yet"),
    ([_setup(), _setup()], "refused", "already set up"),
    ([_setup("uno")], "refused", "this runner plays old-maid"),
    ([_setup(), Event("drew", seq=1)], "refused", "drew does not apply now"),
    ([_setup(), Event("pass", seq=2), Event("pass", seq=2)], "refused", "out of order"),
    ([_setup(), View(side=((Cell("AS"), Cell("2S")),), seq=1)], "deviation", "not pairs"),
    ([_setup(), View(side=((Cell("AS"), Cell("BACK")),), seq=1)], "deviation", "not pairs"),
    ([_setup(), View(discard=Cell("AS"), seq=1)], "deviation", "appeared on the table"),
    ([_setup(), View(hands={"Vic": 3}, seq=1)], "deviation", "Vic holds 3 cards"),
    ([_setup(), View(hands={"Zed": 3}, seq=1)], "deviation", "no player called 'Zed'"),
])
def test_bad_input_is_refused_and_changes_nothing(records: list, kind: str,
                                                  message: str) -> None:
    game = CheckedGame()
    for record in records[:-1]:
        game.feed(record)
    before = (game.phase, game.game, game.instruction)
    verdict = game.feed(records[-1])[0]
    assert isinstance(verdict, Verdict)
    assert verdict.kind == kind and message in verdict.message + str(verdict.problems)
    if kind == "refused" or kind == "deviation":
        assert (game.phase, game.game) == before[:2]
