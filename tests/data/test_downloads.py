"""Downloads against a local HTTP server with Range support: fetch, resume, checksum, base-URL override."""
from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mbertlab.cli.main import run
from mbertlab.data.downloads import download, get, url_for
from mbertlab.errors import DownloadError

PAYLOAD = bytes(range(256)) * 400  # 102,400 bytes


class Handler(BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self):  # noqa: N802
        Handler.requests.append(self.headers.get("Range", ""))
        if not self.path.endswith("/muse/en-de.txt"):
            self.send_error(404)
            return
        start = 0
        if self.headers.get("Range"):
            start = int(self.headers["Range"].split("=")[1].split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(PAYLOAD) - 1}/{len(PAYLOAD)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(PAYLOAD) - start))
        self.end_headers()
        self.wfile.write(PAYLOAD[start:])

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Handler.requests = []
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_download_and_resume(server, tmp_path):
    digest = hashlib.sha256(PAYLOAD).hexdigest()
    dest = tmp_path / "en-de.txt"
    (tmp_path / "en-de.txt.part").write_bytes(PAYLOAD[:1000])  # an interrupted earlier transfer
    download(f"{server}/muse/en-de.txt", dest, sha256=digest)
    assert dest.read_bytes() == PAYLOAD and Handler.requests == ["bytes=1000-"]
    download(f"{server}/muse/en-de.txt", dest, sha256=digest)  # cached: no new request
    assert len(Handler.requests) == 1


def test_tampered_file_refused_and_removed(server, tmp_path):
    with pytest.raises(DownloadError, match="checksum mismatch"):
        download(f"{server}/muse/en-de.txt", tmp_path / "x.txt", sha256="0" * 64)
    assert list(tmp_path.iterdir()) == []


def test_base_url_override_and_cli(server, tmp_path, capsys):
    assert url_for("muse", "en-de") == "https://dl.fbaipublicfiles.com/arrival/dictionaries/en-de.txt"
    [path] = get("muse", ["en-de"], tmp_path, base_url=f"{server}/muse")
    assert path == tmp_path / "muse" / "en-de.txt" and path.read_bytes() == PAYLOAD
    code = run(["--workdir", str(tmp_path / "w"), "data", "get", "muse", "en-de", "--base-url", f"{server}/muse"])
    assert code == 0 and (tmp_path / "w" / "downloads" / "muse" / "en-de.txt").exists()
    assert run(["data", "get", "muse", "--base-url", server]) == 1
    assert "needs a name" in capsys.readouterr().err
    with pytest.raises(DownloadError, match="HTTP 404"):
        download(f"{server}/nothing.txt", tmp_path / "n.txt")
