"""The local page of a remote game: this device's own hand and the public game, with buttons.

``cardtable remote host|join --web`` serves it on 127.0.0.1 next to the terminal. The page holds
no rule: it shows :meth:`RemoteUno.snapshot` and sends the player's choice, which becomes the
very entry the terminal would make (:meth:`RemoteUno.play`, ``draw``, ``pass_turn``) and goes
through the session's ``submit``, where the rules engine referees it. A refused move changes
nothing and comes back as a message on the page.

Whoever changes the game (the play loop, the host's HTTP threads, a move from the page) does so
under the session's lock; a watcher thread takes a snapshot under that lock every
``interval`` seconds and pushes it over the WebSocket when it differs from the last one, so the
page is current whatever changed it. The page shows a hand, so it needs the random token printed
with its URL, like the dashboard on the LAN.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
from pathlib import Path
from typing import Any, Protocol

import anyio.to_thread
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from protocol_runner.remote.protocol import Entry, ProtocolError
from protocol_runner.remote.uno_remote import RemoteUno
from protocol_runner.server import TOKEN_HEADER, Hub, bind_socket, serve_in_thread

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
COLOURS = ("R", "Y", "G", "B")


class Session(Protocol):
    """What the page needs from a host, joiner or in-process session."""

    game: RemoteUno
    lock: Any

    def submit(self, entry: Entry) -> None: ...


class MoveError(ValueError):
    """A move the page cannot make: ``status`` 400 malformed, 409 not now, 422 the rules say no."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def player_name(seat: int) -> str:
    return f"player {seat + 1}"


class RemotePage:
    """Serves one session's page; :meth:`move` is the page's only way to change the game."""

    def __init__(self, session: Session, token: str | None = None, interval: float = 0.1) -> None:
        self.session = session
        self.token = token if token is not None else secrets.token_urlsafe(12)
        self.hub = Hub()
        self.interval = interval
        self.acted = threading.Event()  # set after a move from the page: the loop may owe duties
        self._view: dict[str, Any] = {}
        self._version = 0
        self._view_lock = threading.Lock()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._server: Any = None
        self.port: int | None = None
        self.refresh()

    # ----- the view ------------------------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        with self._view_lock:
            return self._view

    def refresh(self) -> bool:
        """Take a snapshot; if it changed, push it to every open page. True if it changed."""
        with self.session.lock:
            snap = self.session.game.snapshot()
        with self._view_lock:
            old = {k: v for k, v in self._view.items() if k != "version"}
            if snap == old:
                return False
            self._version += 1
            self._view = {**snap, "version": self._version,
                          "me_name": player_name(snap["me"])}
            message = json.dumps({"type": "state", "state": self._view})
        self.hub.publish(message)
        return True

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            with contextlib.suppress(Exception):  # a snapshot mid-shutdown: try again later
                self.refresh()

    # ----- moves -----------------------------------------------------------------------------
    def move(self, request: object) -> dict[str, Any]:
        """Make the move ``{"move": "play", "slot": S, "colour": C} | {"move": "draw"} |
        {"move": "pass"}`` if it is this device's turn; raise :class:`MoveError` otherwise."""
        if not isinstance(request, dict) or request.get("move") not in ("play", "draw", "pass"):
            raise MoveError(400, 'send {"move": "play", "slot": N, "colour": "R"}, '
                            '{"move": "draw"} or {"move": "pass"}')
        kind = request["move"]
        slot, colour = request.get("slot"), request.get("colour")
        if kind == "play" and (not isinstance(slot, int) or isinstance(slot, bool)):
            raise MoveError(400, "say which card to play: its slot number, from the hand")
        if colour is not None and colour not in COLOURS:
            raise MoveError(400, f"colour must be one of {', '.join(COLOURS)}, not {colour!r}")
        session, game = self.session, self.session.game
        with session.lock:
            if not game.my_turn():
                snap = game.snapshot()
                if snap["phase"] == "play" and snap["waiting_for"] is None:
                    raise MoveError(409, f"it is {snap['game']['turn']}'s turn, not yours")
                waiting = f", waiting for {snap['waiting_for']}" if snap["waiting_for"] else ""
                raise MoveError(409, f"not your turn: the game is at '{snap['phase']}'{waiting}")
            if kind == "play":
                held = dict(game.device.hand("deck"))
                if slot not in held:
                    raise MoveError(400, f"you hold no card in slot {slot}")
                entry = game.play(slot, colour)
            else:
                entry = game.draw() if kind == "draw" else game.pass_turn()
            try:
                session.submit(entry)
            except ProtocolError as exc:
                raise MoveError(422, f"not allowed: {exc}") from None
            except OSError as exc:
                raise MoveError(503, f"the move did not get through, try again: {exc}") from None
        self.acted.set()
        self.refresh()
        return self.view()

    # ----- HTTP ------------------------------------------------------------------------------
    def app(self) -> FastAPI:
        app = FastAPI(title="cardtable remote page", docs_url=None, redoc_url=None)

        def authorised(params: Any, headers: Any) -> bool:
            given = params.get("token") or headers.get(TOKEN_HEADER)
            return given is not None and secrets.compare_digest(str(given), self.token)

        refused = {"detail": "open the page with the ?token=... that cardtable printed"}

        @app.get("/")
        async def index() -> FileResponse:
            return FileResponse(WEB_DIR / "remote.html")

        app.mount("/static", StaticFiles(directory=WEB_DIR), name="static")

        @app.get("/api/state")
        async def state(request: Request) -> JSONResponse:
            if not authorised(request.query_params, request.headers):
                return JSONResponse(refused, status_code=401)
            return JSONResponse(self.view())

        @app.post("/api/move")
        async def post_move(request: Request) -> JSONResponse:
            if not authorised(request.query_params, request.headers):
                return JSONResponse(refused, status_code=401)
            try:
                body = await request.json()
            except ValueError:
                return JSONResponse({"detail": "the request body must be JSON"}, status_code=400)
            try:  # the move may wait on the host over HTTP: keep it off the event loop
                view = await anyio.to_thread.run_sync(self.move, body)
            except MoveError as exc:
                return JSONResponse({"detail": str(exc), "state": self.view()},
                                    status_code=exc.status)
            return JSONResponse({"ok": True, "state": view})

        @app.websocket("/ws")
        async def websocket(ws: WebSocket) -> None:
            if not authorised(ws.query_params, ws.headers):
                await ws.close(code=4401, reason="token required")
                return
            await ws.accept()
            entry = self.hub.subscribe()
            try:
                await ws.send_text(json.dumps({"type": "state", "state": self.view()}))
                while True:
                    await ws.send_text(await entry[1].get())
            except (WebSocketDisconnect, RuntimeError):
                pass
            finally:
                self.hub.unsubscribe(entry)

        return app

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def serve(self, port: int = 0) -> str:
        """Serve on 127.0.0.1 (``port`` 0: any free one) and start the watcher; return the URL."""
        sock = bind_socket("127.0.0.1", port)
        self.port = int(sock.getsockname()[1])
        self._stop.clear()
        self._server = serve_in_thread(self.app(), sock)
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()
        return self.url()

    def stop(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
        if self._server is not None:
            self._server.should_exit = True
            self._server = None
