"""``cardtable remote``: play UNO with someone far away from one shared encrypted pack.

``host`` serves the table over HTTP and prints the join command; ``join URL CODE`` takes the
other seat; ``bench`` times dealing two 7-card hands from a fresh 108-card pack with the
2048-bit group. Heavy imports (FastAPI, uvicorn, httpx, gmpy2) happen inside the handlers.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

COLOURS = {"r": "R", "y": "Y", "g": "G", "b": "B", "red": "R", "yellow": "Y", "green": "G",
           "blue": "B"}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("remote", help="play with someone far away (shared "
                                   "encrypted pack, no dealer to trust)")
    sub = parser.add_subparsers(dest="remote_command", required=True, metavar="ACTION")

    host = sub.add_parser("host", help="host a table and wait for the other player")
    host.add_argument("--game", choices=("uno",), default="uno")
    host.add_argument("--players", type=int, default=2, help="players in all, host included")
    host.add_argument("--port", type=int, default=8765)
    host.add_argument("--bind", default="127.0.0.1",
                      help="address to listen on (0.0.0.0 to accept other machines)")
    host.add_argument("--state-dir", type=Path, default=None,
                      help="where the game is kept; pass an existing one to resume after a crash")
    host.add_argument("--code", default=None,
                      help="secret for the join codes (default: a random one per seat)")
    host.add_argument("--auto", action="store_true", help="let the computer choose the moves")
    host.add_argument("--group", default="rfc3526-2048", choices=("rfc3526-2048", "test-256"),
                      help=argparse.SUPPRESS)
    host.add_argument("--web", type=int, nargs="?", const=0, default=None, metavar="PORT",
                      help="also show your hand and the game on a local page (127.0.0.1, PORT or "
                      "any free port), with buttons to play, draw and pass")
    host.set_defaults(handler=run_host)

    join = sub.add_parser("join", help="join a table by its URL and the join code of a seat")
    join.add_argument("url")
    join.add_argument("code")
    join.add_argument("--state-dir", type=Path, default=None,
                      help="where the game is kept (default: one per table, so rerunning the "
                      "same command resumes)")
    join.add_argument("--auto", action="store_true", help="let the computer choose the moves")
    join.add_argument("--allow-test-group", action="store_true", help=argparse.SUPPRESS)
    join.add_argument("--web", type=int, nargs="?", const=0, default=None, metavar="PORT",
                      help="also show your hand and the game on a local page (127.0.0.1, PORT or "
                      "any free port), with buttons to play, draw and pass")
    join.set_defaults(handler=run_join)

    bench = sub.add_parser("bench", help="time dealing 2 × 7 cards from a fresh 108-card pack")
    bench.add_argument("--repeat", type=int, default=3)
    bench.add_argument("--devices", type=int, default=2)
    bench.add_argument("--hand", type=int, default=7)
    bench.add_argument("--game", action="store_true",
                       help="also time a whole automatic UNO game (die, deal, play, put back, "
                       "redraw, audit)")
    bench.set_defaults(handler=run_bench)


def _status(game: Any) -> str:
    snap = game.snapshot()
    g = snap["game"]
    if snap["phase"] == "done":
        return "game over"
    if g is None or g["top"] is None:
        return f"setting up: {snap['phase']} (die: {snap['die'] or '-'})"
    sizes = ", ".join(f"{p['name']}: {p['hand_size']}" for p in g["players"])
    colour = f" ({g['colour_in_force']} in force)" if g["colour_in_force"] else ""
    head = f"top {g['top']}{colour} | {sizes} | pack {snap['pack_size']} | turn: {g['turn']}"
    return head + (f" | winner: {g['winner']}" if g["winner"] else "")


def _hand(game: Any) -> str:
    cards = game.snapshot()["hand"]
    return "your hand: " + "  ".join(f"[{i}] {c['card']}{'*' if c['playable'] else ''}"
                                     for i, c in enumerate(cards, 1))


def _ask(game: Any) -> Any:
    """Read one move from the terminal: ``play N [colour]``, ``draw`` or ``pass``."""
    hand = game.snapshot()["hand"]
    while True:
        print(_hand(game) + "   (* = playable)")
        try:
            words = input("play N [colour] | draw | pass > ").strip().lower().split()
        except EOFError:
            raise KeyboardInterrupt from None
        if words in (["draw"], ["d"]):
            return game.draw()
        if words == ["pass"]:
            return game.pass_turn()
        if words and words[0] in ("play", "p") and len(words) in (2, 3) and words[1].isdigit():
            n = int(words[1])
            if 1 <= n <= len(hand):
                colour = COLOURS.get(words[2]) if len(words) == 3 else None
                if len(words) == 3 and colour is None:
                    print("colour: red, yellow, green or blue")
                    continue
                return game.play(hand[n - 1]["slot"], colour)
        print("say e.g. 'play 2', 'play 3 red' (for W and +4), 'draw' or 'pass'")


def _play(session: Any, auto: bool, page: Any = None) -> int:
    """Run the game to its end; moves come from the computer (``auto``), the page or the
    terminal. The terminal always shows how the game goes."""
    from protocol_runner.remote.protocol import ProtocolError

    game, last = session.game, ""
    while True:
        with session.lock:
            progressed = session.step()
            status, mine, done = _status(game), game.my_turn(), game.phase == "done"
        if status != last:
            print(status, flush=True)
            if mine and page is not None and not auto:
                print(f"your turn: play on the page {page.url()}", flush=True)
            last = status
        if done:
            break
        if progressed:
            continue
        if not mine:
            session.idle()
            continue
        if page is not None and not auto:  # the page submits the move itself
            page.acted.wait(0.5)
            page.acted.clear()
            continue
        entry = game.choose() if auto else _ask(game)
        try:
            with session.lock:
                session.submit(entry)
        except ProtocolError as exc:
            if auto:
                raise
            print(f"not allowed: {exc}")
    report = game.report
    print(_hand(game).replace("your hand", "your redrawn card"))
    print(f"audit: {report.passes_checked} passes and {report.values_checked} values replayed, "
          f"{report.cards_followed} drawn cards followed: "
          + ("no cheat found" if report.clean else f"{len(report.findings)} CHEAT(S) FOUND"))
    for finding in report.findings:
        print(f"  {finding}")
    return 0 if report.clean else 1


def _open_page(session: Any, port: int | None) -> Any:
    """Serve the local page (``--web``) for ``session``; None without ``--web``."""
    if port is None:
        return None
    from protocol_runner.remote.web import RemotePage
    from protocol_runner.server import PortInUseError

    page = RemotePage(session)
    try:
        print(f"your page: {page.serve(port)}", flush=True)
    except PortInUseError:
        raise PortInUseError(f"port {port} for the page is already in use: pick another with "
                             "--web PORT, or give --web alone for any free port") from None
    return page


def _keep_page(page: Any) -> None:
    """After the game, keep the page up (the audit is on it) until Enter, Ctrl-C or no stdin."""
    if page is None:
        return
    page.refresh()
    print(f"the page stays up at {page.url()}; press Enter to close it", flush=True)
    with contextlib.suppress(EOFError, KeyboardInterrupt):
        input()


def run_host(args: argparse.Namespace) -> int:
    from protocol_runner.remote.transport import HostSession

    state = args.state_dir or Path(".cardtable-remote") / time.strftime("host-%Y%m%d-%H%M%S")
    session = HostSession(state, group=args.group, code=args.code, players=args.players)
    session.serve(args.port, args.bind)
    shown = "127.0.0.1" if args.bind in ("0.0.0.0", "::") else args.bind
    print(f"hosting {args.game} for {session.players} players (state in {state}; rerun with "
          f"--state-dir {state} to resume)")
    for seat, code in session.codes.items():
        print(f"player {seat + 1} runs:  cardtable remote join http://{shown}:{args.port} {code}")
    sys.stdout.flush()

    def let_joiners_finish() -> None:
        deadline = time.monotonic() + 15  # let the joiners fetch the end of the log
        while not session.everyone_has_all and time.monotonic() < deadline:
            time.sleep(0.05)

    try:
        return _play_with_page(session, args, after=let_joiners_finish)
    finally:
        session.stop()


def run_join(args: argparse.Namespace) -> int:
    import httpx

    from protocol_runner.remote.transport import PLAY_GROUPS, JoinSession

    state = args.state_dir
    if state is None:
        try:
            table = httpx.get(args.url.rstrip("/") + "/table", timeout=10).json()["table"]
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            raise OSError(f"no cardtable host answers at {args.url}: {exc}") from None
        state = Path(".cardtable-remote") / f"join-{table[:12]}"
    groups = (*PLAY_GROUPS, "test-256") if args.allow_test_group else PLAY_GROUPS
    session = JoinSession(args.url, args.code, state, groups=groups)
    print(f"joined {args.url} (state in {state}; rerun the same command to resume)", flush=True)
    try:
        return _play_with_page(session, args)
    finally:
        session.close()


def _play_with_page(session: Any, args: argparse.Namespace,
                    after: Callable[[], None] | None = None) -> int:
    """Play from the terminal or the ``--web`` page; keep the page up after the game."""
    page = None
    try:
        page = _open_page(session, args.web)
        code = _play(session, args.auto, page)
        if after is not None:
            after()
        _keep_page(page)
        return code
    finally:
        if page is not None:
            page.stop()


def run_bench(args: argparse.Namespace) -> int:
    from protocol_runner.cards import uno_deck
    from protocol_runner.remote.audit import audit
    from protocol_runner.remote.local import LocalTable, play_uno_locally
    from protocol_runner.remote.scheme import sound_group

    group = sound_group()
    cards = [c.code for c in uno_deck()]
    value, timings = group.encode(5), []
    for key in (group.random_key(), group.inverse(group.random_key())):
        start = time.perf_counter()
        for _ in range(50):
            group.power(value, key)
        timings.append((time.perf_counter() - start) / 50 * 1000)
    print(f"group: RFC 3526 group 14, {group.bits}-bit safe prime; one powmod (gmpy2) with a "
          f"{group.key_bits}-bit key {timings[0]:.2f} ms, with a full-size exponent "
          f"{timings[1]:.2f} ms")
    runs: list[list[float]] = []
    audits: list[float] = []
    for _ in range(args.repeat):
        table = LocalTable(group, args.devices)
        spent = [0.0] * args.devices

        def post(entry: Any, table: LocalTable = table, spent: list[float] = spent) -> None:
            for i, device in enumerate(table.devices):
                t = time.perf_counter()
                device.apply(entry)
                spent[i] += time.perf_counter() - t

        def settle(table: LocalTable = table, spent: list[float] = spent) -> None:
            while (due := table.devices[0].due()) is not None:
                t = time.perf_counter()
                entry = table.devices[due].next_pass()
                spent[due] += time.perf_counter() - t
                post(entry)

        post(table.devices[0].new_pack("deck", cards))
        settle()
        for i in range(args.devices):
            post(table.devices[i].draw("deck", args.hand))
            settle()
        runs.append(spent)
        for device in table.devices:
            post(device.audit_entry())
        t = time.perf_counter()
        report = audit(group, args.devices, table.devices[0].log, trusted=0)
        audits.append(time.perf_counter() - t)
        if not report.clean:
            print("audit found a problem:", *report.findings, sep="\n  ", file=sys.stderr)
            return 1
    print(f"dealing {args.hand} cards to each of {args.devices} devices from a fresh "
          f"{len(cards)}-card pack (joint shuffle + draws), {args.repeat} runs:")
    for i in range(args.devices):
        times = [run[i] for run in runs]
        print(f"  device {i}: median {statistics.median(times):.3f} s per deal "
              f"(min {min(times):.3f}, max {max(times):.3f})")
    print(f"  end-of-game audit of that deal by device 0: median {statistics.median(audits):.3f} s")
    if args.game:
        start = time.perf_counter()
        games = play_uno_locally(group, args.devices)
        wall = time.perf_counter() - start
        game = games[0]
        assert game.report is not None and game.state is not None
        print(f"a whole UNO game: {game.state.turns_played} turns, {len(game.device.log)} log "
              f"entries, {wall:.1f} s for all {args.devices} devices together in one process; "
              f"audit {'clean' if game.report.clean else 'FOUND CHEATS'}")
    return 0
