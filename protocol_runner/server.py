"""The dashboard's HTTP side: one FastAPI app over a running pipeline.

The app holds no game logic. It serves the static page, answers ``GET /api/state`` with the
pipeline's JSON snapshot, turns button presses into operator events, and pushes every change over
a WebSocket (JSON text messages for state, binary messages for the annotated camera JPEG), so a
second tab or a reloaded page is always exactly as current as the first.

Served on 127.0.0.1 unless asked otherwise; on the local network (``--lan``) every request must
carry the access token printed with the URL (query ``?token=``, header ``X-Cardtable-Token`` or the
cookie the page sets), because anyone on the Wi-Fi could otherwise press "abort turn".
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import secrets
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fastapi import FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

WEB_DIR = Path(__file__).with_name("web")
TOKEN_COOKIE = "cardtable_token"
TOKEN_HEADER = "x-cardtable-token"


class Driver(Protocol):
    """What the app needs from the pipeline (kept small so tests can see the whole contract)."""

    def state(self) -> dict[str, Any]: ...

    def operator_event(self, kind: str) -> dict[str, Any]: ...

    def correct(self, zone: str, column: int, row: int, code: str) -> dict[str, Any]: ...

    def setup(self, config: dict[str, Any]) -> dict[str, Any]: ...

    def setup_options(self) -> dict[str, Any]: ...

    def setup_helpers(self, config: dict[str, Any]) -> dict[str, Any]: ...

    def latest_jpeg(self) -> bytes | None: ...


@dataclass
class Hub:
    """Fan-out from the pipeline thread to every connected WebSocket's event loop.

    The pipeline publishes from its own thread; each subscriber is an asyncio queue living in
    the server's loop, fed with ``call_soon_threadsafe``. Queues are bounded and a slow tab only
    ever gets the newest message of each kind: a stale camera frame is worth nothing.
    """

    _subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[Any]]] = field(
        default_factory=set
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def subscribe(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Queue[Any]]:
        entry = (asyncio.get_running_loop(), asyncio.Queue(maxsize=8))
        with self._lock:
            self._subscribers.add(entry)
        return entry

    def unsubscribe(self, entry: tuple[asyncio.AbstractEventLoop, asyncio.Queue[Any]]) -> None:
        with self._lock:
            self._subscribers.discard(entry)

    def publish(self, message: str | bytes) -> None:
        """Thread-safe; never blocks the pipeline."""
        with self._lock:
            targets = list(self._subscribers)
        for loop, queue in targets:
            with contextlib.suppress(RuntimeError):  # loop already closed: tab went away
                loop.call_soon_threadsafe(_offer, queue, message)


def _offer(queue: asyncio.Queue[Any], message: str | bytes) -> None:
    """Put without blocking; when full, drop the oldest message of the same kind first."""
    if queue.full():
        kept = [m for m in _drain(queue) if type(m) is not type(message)]
        for m in kept[-(queue.maxsize - 1):]:
            queue.put_nowait(m)
    queue.put_nowait(message)


def _drain(queue: asyncio.Queue[Any]) -> list[Any]:
    items = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items


def create_app(driver: Driver, hub: Hub, token: str | None = None) -> FastAPI:
    """Build the app. ``token`` set means LAN mode: every request must present it."""
    app = FastAPI(title="cardtable dashboard", docs_url=None, redoc_url=None)

    def authorised(params: Any, headers: Any, cookies: Any) -> bool:
        if token is None:
            return True
        given = params.get("token") or headers.get(TOKEN_HEADER) or cookies.get(TOKEN_COOKIE)
        return given is not None and secrets.compare_digest(str(given), token)

    @app.middleware("http")
    async def check_token(request: Request, call_next: Callable[..., Any]) -> Response:
        if not authorised(request.query_params, request.headers, request.cookies):
            return JSONResponse(
                {"error": "this dashboard is shared on the network: open the URL with the "
                          "?token=... that cardtable printed"},
                status_code=401,
            )
        response: Response = await call_next(request)
        if token is not None and request.query_params.get("token") == token:
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
        return response

    @app.get("/")
    async def index() -> FileResponse:
        return FileResponse(WEB_DIR / "index.html", headers={"Cache-Control": "no-store"})

    app.mount("/static", StaticFiles(directory=WEB_DIR), name="static")

    @app.get("/api/state")
    async def get_state() -> dict[str, Any]:
        return driver.state()

    @app.get("/api/setup")
    async def get_setup_options() -> dict[str, Any]:
        return driver.setup_options()

    @app.get("/api/frame.jpg")
    async def get_frame() -> Response:
        jpeg = driver.latest_jpeg()
        if jpeg is None:
            return Response(status_code=204)
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "no-store"})

    @app.post("/api/event/{kind}")
    async def post_event(kind: str) -> dict[str, Any]:
        return await _call(driver.operator_event, kind)

    @app.post("/api/correct")
    async def post_correct(request: Request) -> dict[str, Any]:
        body = await _json_body(request)
        try:
            zone, column, row, code = (body["zone"], int(body["column"]), int(body["row"]),
                                       body["code"])
        except (KeyError, TypeError, ValueError):
            raise HTTPException(
                422, "a correction needs zone, column, row (numbers) and code") from None
        if not isinstance(zone, str) or not isinstance(code, str):
            raise HTTPException(422, "zone and code must be strings")
        return await _call(driver.correct, zone, column, row, code)

    @app.post("/api/setup/helpers")
    async def post_setup_helpers(request: Request) -> dict[str, Any]:
        return await _call(driver.setup_helpers, await _json_body(request))

    @app.post("/api/setup")
    async def post_setup(request: Request) -> dict[str, Any]:
        return await _call(driver.setup, await _json_body(request))

    @app.websocket("/ws")
    async def websocket(ws: WebSocket) -> None:
        if not authorised(ws.query_params, ws.headers, ws.cookies):
            await ws.close(code=4401, reason="token required")
            return
        await ws.accept()
        entry = hub.subscribe()
        try:
            await ws.send_text(json.dumps({"type": "state", "state": driver.state()}))
            jpeg = driver.latest_jpeg()
            if jpeg is not None:
                await ws.send_bytes(jpeg)
            queue = entry[1]
            while True:
                message = await queue.get()
                if isinstance(message, bytes):
                    await ws.send_bytes(message)
                else:
                    await ws.send_text(message)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            hub.unsubscribe(entry)

    return app


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise HTTPException(400, "the request body must be JSON") from None
    if not isinstance(body, dict):
        raise HTTPException(400, "the request body must be a JSON object")
    return body


async def _call(func: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """Run a driver call; user mistakes become 400 with the message, never a 500."""
    try:
        return func(*args)
    except (ValueError, LookupError) as exc:
        raise HTTPException(400, str(exc)) from None


class PortInUseError(OSError):
    """The dashboard's port is taken: say which, and what to do."""


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind before starting anything, so a taken port is a clear message and not a traceback
    from deep inside uvicorn after the camera has already started."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(
                f"port {port} on {host} is already in use (another cardtable or another "
                f"program): stop it, or pick another port with --port"
            ) from None
        raise OSError(f"cannot serve on {host}:{port}: {exc.strerror}") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def lan_address() -> str:
    """This machine's address on the local network (the route a packet out would take)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent for a UDP connect
        return str(probe.getsockname()[0])
    except OSError:
        return "127.0.0.1"
    finally:
        probe.close()


@dataclass(frozen=True)
class Listen:
    """Where the dashboard listens and the URL people should open."""

    host: str
    port: int
    token: str | None

    @classmethod
    def choose(cls, lan: bool, port: int, host: str | None = None) -> Listen:
        if lan:
            return cls(host or "0.0.0.0", port, secrets.token_urlsafe(12))
        return cls(host or "127.0.0.1", port, None)

    def url(self, port: int | None = None) -> str:
        shown = lan_address() if self.host in ("0.0.0.0", "::") else self.host
        base = f"http://{shown}:{port or self.port}/"
        return f"{base}?token={self.token}" if self.token else base


def make_server(app: FastAPI) -> Any:
    """A uvicorn server for ``app`` (quiet: the page is the interface); ``run(sockets=[sock])``
    serves until Ctrl-C or until ``should_exit`` is set."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, ws="websockets-sansio")
    return uvicorn.Server(config)


def serve_in_thread(app: FastAPI, sock: socket.socket) -> Any:
    """Run uvicorn in a daemon thread (tests, benchmarks); set ``.should_exit`` to stop it."""
    import time

    server = make_server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.02)
    return server
