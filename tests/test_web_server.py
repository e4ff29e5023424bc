"""The dashboard's HTTP and WebSocket contract, on a real pipeline (no game set up yet, or a
scripted one): page and state served, pushes reach every tab, LAN mode needs the token, bad
input is refused with a message."""

from __future__ import annotations

import socket

import pytest
from fastapi.testclient import TestClient

from protocol_runner.pipeline import Pipeline, make_game
from protocol_runner.server import Hub, Listen, PortInUseError, bind_socket, create_app


def idle_pipeline(hub: Hub) -> Pipeline:
    return Pipeline(iter(()), make_game(None), mode="live", source="test", publish=hub.publish)


@pytest.fixture
def client() -> TestClient:
    hub = Hub()
    return TestClient(create_app(idle_pipeline(hub), hub))


def test_page_and_static_files_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "cardtable" in page.text
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200


def test_state_is_json_with_the_page_sections(client: TestClient) -> None:
    state = client.get("/api/state").json()
    assert set(state) >= {"status", "instruction", "verdict", "game", "timeline", "cards", "codes"}
    assert state["status"]["mode"] == "live"
    assert "7R" in state["codes"] and "BACK" in state["codes"]


def test_no_frame_yet_is_204(client: TestClient) -> None:
    assert client.get("/api/frame.jpg").status_code == 204


@pytest.mark.parametrize(("body", "status", "message"), [
    ({"zone": "work", "column": 1, "row": 1, "code": "8X"}, 400, "unknown card code"),
    ({"zone": "work", "column": 1, "row": 1, "code": "7Z"}, 400, "unknown card code"),
    ({"zone": "moon", "column": 1, "row": 1, "code": "7R"}, 400, "unknown zone"),
    ({"zone": "work", "column": "one", "row": 1, "code": "7R"}, 422, "numbers"),
    ({"zone": "work", "row": 1, "code": "7R"}, 422, "column"),
    ({"zone": "work", "column": 1, "row": 1, "code": "7R"}, 400, "no game is set up"),
])
def test_bad_corrections_are_refused(client: TestClient, body: dict, status: int,
                                     message: str) -> None:
    r = client.post("/api/correct", json=body)
    assert r.status_code == status
    assert message in r.json()["detail"]


def test_body_that_is_not_json_is_refused(client: TestClient) -> None:
    r = client.post("/api/correct", content=b"{nope", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "JSON" in r.json()["detail"]


@pytest.mark.parametrize(("kind", "message"), [
    ("explode", "unknown button"),
    ("shuffle_done", "no game is set up"),
])
def test_buttons_without_a_game_say_why(client: TestClient, kind: str, message: str) -> None:
    r = client.post(f"/api/event/{kind}")
    assert r.status_code == 400 and message in r.json()["detail"]


def test_websocket_sends_state_then_pushes_to_every_tab() -> None:
    hub = Hub()
    pipeline = idle_pipeline(hub)
    client = TestClient(create_app(pipeline, hub))
    with client.websocket_connect("/ws") as tab1, client.websocket_connect("/ws") as tab2:
        assert tab1.receive_json()["type"] == "state"
        assert tab2.receive_json()["type"] == "state"
        pipeline.error = "camera unplugged"
        pipeline._changed()
        for tab in (tab1, tab2):
            assert tab.receive_json()["state"]["status"]["error"] == "camera unplugged"
        hub.publish(b"\xff\xd8jpeg")
        assert tab1.receive_bytes() == b"\xff\xd8jpeg"


def test_lan_mode_requires_the_token() -> None:
    hub = Hub()
    client = TestClient(create_app(idle_pipeline(hub), hub, token="s3cret"))
    assert client.get("/api/state").status_code == 401
    assert "token" in client.get("/").json()["error"]
    assert client.get("/api/state", headers={"X-Cardtable-Token": "wrong"}).status_code == 401
    assert client.get("/api/state", headers={"X-Cardtable-Token": "s3cret"}).status_code == 200
    page = client.get("/?token=s3cret")
    assert page.status_code == 200
    assert client.get("/api/state").status_code == 200  # the cookie set by the page is enough
    anonymous = TestClient(create_app(idle_pipeline(hub), hub, token="s3cret"))
    with pytest.raises(Exception), anonymous.websocket_connect("/ws") as ws:  # noqa: B017
        ws.receive_json()
    with anonymous.websocket_connect("/ws?token=s3cret") as ws:
        assert ws.receive_json()["type"] == "state"


def test_lan_url_carries_the_token_and_local_does_not() -> None:
    lan = Listen.choose(lan=True, port=8123)
    assert lan.host == "0.0.0.0" and lan.token and f"?token={lan.token}" in lan.url()
    local = Listen.choose(lan=False, port=8123)
    assert local.url() == "http://127.0.0.1:8123/" and local.token is None


def test_port_in_use_is_a_clear_message() -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        with pytest.raises(PortInUseError, match=f"port {port} .* already in use.*--port"):
            bind_socket("127.0.0.1", port)
    finally:
        taken.close()


def test_port_in_use_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        code = main(["serve", "--camera", "/nonexistent-folder-xyz",
                     "--port", str(taken.getsockname()[1])])
    finally:
        taken.close()
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("cardtable: error:") and "already in use" in err


@pytest.mark.parametrize(("camera", "message"), [
    ("{tmp}/empty", "holds no images"),
    ("{tmp}/missing.mp4", "no such file"),
])
def test_a_camera_that_gives_nothing_is_a_clear_error_before_serving(
        tmp_path: object, capsys: pytest.CaptureFixture[str], camera: str, message: str) -> None:
    from protocol_runner.cli import main

    (tmp_path / "empty").mkdir()  # type: ignore[operator]
    code = main(["serve", "--camera", camera.format(tmp=tmp_path), "--port", "0",
                 "--journal", str(tmp_path / "j.sqlite")])  # type: ignore[operator]
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("cardtable: error:") and message in err
