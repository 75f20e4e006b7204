"""The hardened proxy (deploy/nginx.conf.template) in front of one replica, with every
outbound connection caught by a black hole.

The replica runs with HTTP(S)_PROXY pointing at a local "black hole" (127.0.0.1 only) that
accepts connections and never answers, as a school network that drops outbound traffic
would: anything Streamlit tries to fetch from the internet is counted there, and stalls
it for the request's timeout. Checked: nothing is fetched at start; a WebSocket from a
foreign origin is refused by nginx (and never reaches Streamlit, which would look up its
external IP for it); the security headers are sent and Streamlit still works under the
Content-Security-Policy in Chromium; /_stcore/metrics is not served; the longest link the
app writes, and a 2,048-character Chinese link, pass nginx.
"""

from __future__ import annotations

import base64
import os
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from plotly_page import first_heatmap, wait_for_app
from test_deployment import running_replicas

from attention_core import ToySettings, build_toy_trace
from ui.url import MAX_URL_BYTES, MAX_URL_TEXT, fit_link

FOREIGN = "https://evil.example"


class BlackHole:
    """A TCP listener on 127.0.0.1 that accepts connections, keeps them open and never
    replies; `connections` counts them."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            self._held.append(connection)

    def close(self) -> None:
        self.server.close()
        for connection in self._held:
            connection.close()


@pytest.fixture(scope="module")
def black_hole():
    hole = BlackHole()
    yield hole
    hole.close()


@pytest.fixture(scope="module")
def proxied(black_hole, tmp_path_factory):
    """(nginx URL, replica URL) of deploy/run_replicas.sh 1, its outbound traffic sent to the black hole."""
    proxy = f"http://127.0.0.1:{black_hole.port}"
    env = {name: proxy for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY")}
    env |= {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}  # the health checks are local
    with running_replicas(tmp_path_factory.mktemp("proxy-run"), replicas=1, env=env) as (url, replica_urls, _):
        yield url, replica_urls[0].rstrip("/")


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # straight to 127.0.0.1
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


def _websocket_status(base_url: str, origin: str | None) -> int:
    """The status of a WebSocket handshake on /_stcore/stream (101 = accepted)."""
    host = urllib.parse.urlsplit(base_url).netloc
    address, port = host.rsplit(":", 1)
    lines = [
        "GET /_stcore/stream HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
        f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}", "Sec-WebSocket-Version: 13",
        "Sec-WebSocket-Protocol: streamlit",
    ]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    with socket.create_connection((address, int(port)), timeout=30) as connection:
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status_line = connection.recv(4096).split(b"\r\n", 1)[0].decode()
    return int(status_line.split()[1])


def test_nothing_is_fetched_from_the_internet_at_start(proxied, black_hole):
    url, _ = proxied
    assert _get(url + "/_stcore/health")[0] == 200
    assert black_hole.connections == 0


def test_a_foreign_origin_websocket_is_refused_by_the_proxy(proxied, black_hole):
    url, _ = proxied
    before = black_hole.connections
    assert _websocket_status(url, origin=url) == 101, "the page's own origin is accepted"
    assert _websocket_status(url, origin=None) == 101, "no Origin (not a browser) is Streamlit's business"
    for _ in range(5):
        assert _websocket_status(url, origin=FOREIGN) == 403
        assert _websocket_status(url, origin=url.replace("127.0.0.1", "localhost")) == 403  # another host
    assert _get(url + "/", headers={"Origin": FOREIGN})[0] == 403
    assert black_hole.connections == before, "no lookup was made for them"


def test_without_the_proxy_streamlit_looks_up_its_address_for_a_foreign_origin(proxied, black_hole):
    """The control: straight to the replica, the same WebSocket makes Streamlit contact the
    internet (here: the black hole). What deploy/README.md says a bare server does."""
    _, replica = proxied
    before = black_hole.connections
    assert _websocket_status(replica, origin=FOREIGN) == 403
    assert black_hole.connections > before


def test_security_headers_and_no_public_metrics(proxied):
    url, replica = proxied
    status, headers = _get(url + "/")
    assert status == 200
    policy = headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy
    assert "'unsafe-eval'" not in policy and "script-src 'self' 'sha256-" in policy
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert _get(url + "/_stcore/metrics")[0] == 404
    assert _get(replica + "/_stcore/metrics")[0] == 200, "a bare streamlit run serves its metrics"


def test_the_longest_links_pass_the_proxy(proxied):
    url, _ = proxied
    chinese = "".join(chr(0x4E00 + i) for i in range(2048))  # 18,432 bytes encoded
    assert _get(url + "/?" + urllib.parse.urlencode({"text": chinese, "mask_kind": "causal"}))[0] == 200
    # a link as long as the app ever writes: one sentence at its cap, the other filling the rest
    longest = {"dk": "12", "cross": "true", "text": "x" * MAX_URL_TEXT, "query_text": ""}
    longest["query_text"] = "y" * (MAX_URL_BYTES - len(urllib.parse.urlencode(longest)))
    assert len(urllib.parse.urlencode(longest)) == MAX_URL_BYTES and fit_link(longest) == (longest, [])
    assert _get(url + "/multi-head?" + urllib.parse.urlencode(longest))[0] == 200


def test_the_app_works_in_chromium_under_the_policy_and_cannot_be_framed(proxied, browser, black_hole):
    url, _ = proxied
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    messages: list[str] = []
    page.on("console", lambda message: messages.append(f"{message.type}: {message.text}"))
    try:
        sentence = "注意力 就是 一切"
        page.goto(url + "/?" + urllib.parse.urlencode({"text": sentence}))
        wait_for_app(page, timeout=90_000)
        assert first_heatmap(page)["y"] == build_toy_trace(ToySettings(text=sentence)).query_labels
        violations = [text for text in messages if "Content Security Policy" in text]
        assert not violations, violations
        assert page.evaluate("() => window.__wholeCharacters === true"), "the text boxes' guard ran"
        assert not [text for text in messages if text.startswith("error")], messages

        framing = context.new_page()
        framing.set_content(f'<iframe id="app" src="{url}/" width="800" height="600"></iframe>')
        time.sleep(3)
        framed = next((frame for frame in framing.frames if frame.url.startswith(url)), None)
        assert framed is None or not framed.query_selector('[data-testid="stApp"]'), "the app ran inside a frame"
    finally:
        context.close()
