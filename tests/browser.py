"""Headless Chromium and a logging local web server, for the slide tests."""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tools.render import find_chromium  # noqa: F401 (one finder, for tests and the build)

# Flags for a sandboxed, offline machine: no background traffic, a fresh profile every time.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--window-size=1280,800",
]


class _LoggingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files and records (path, status) of every request."""

    log: list[tuple[str, int]]

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        self.log.append((self.path, int(code) if str(code).isdigit() else 0))

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass


@contextmanager
def serve(folder: Path) -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """Serve `folder` on a free loopback port; yield the base URL and the request log."""
    log: list[tuple[str, int]] = []
    handler = type("Handler", (_LoggingHandler,), {"log": log})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", log
    finally:
        server.shutdown()
        server.server_close()


def chromium(binary: str, url: str, profile: Path, *, screenshot: Path | None = None,
             wait_ms: int = 8000) -> str:
    """Load `url` headless, let scripts run for `wait_ms` of virtual time; return the live DOM."""
    action = [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    result = subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={wait_ms}",
         *action, url],
        capture_output=True, text=True, timeout=120, env={**os.environ, "LANG": "C.UTF-8"},
    )
    if result.returncode != 0:
        raise RuntimeError(f"chromium failed ({result.returncode}): {result.stderr[-2000:]}")
    return result.stdout
