"""A loopback stand-in for a Hugging Face hub's dataset upload endpoints (create a repository, validate
a card's YAML, pre-upload, commit), as huggingface_hub's client calls them: no network in tests."""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeHub:
    url: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)  # (path, Authorization header)
    repos: dict[str, dict[str, Any]] = field(default_factory=dict)  # repo id → how it was created
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)  # repo id → path → content
    refuse: int = 0  # answer every call with this status (0: serve)


def serve() -> tuple[FakeHub, ThreadingHTTPServer]:
    hub = FakeHub()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            hub.calls.append((self.path, self.headers.get("Authorization", "")))
            if hub.refuse:
                return self._answer(hub.refuse, {"error": "You don't have the rights to create a dataset here"})
            if self.path == "/api/repos/create":
                asked = json.loads(body)
                repo = f"{asked['organization']}/{asked['name']}"
                hub.repos[repo] = asked
                return self._answer(200, {"url": f"{hub.url}/datasets/{repo}"})
            if self.path == "/api/validate-yaml":
                return self._answer(200, {"errors": [], "warnings": []})
            repo = "/".join(self.path.split("/")[3:5])
            if "/preupload/" in self.path:
                named = json.loads(body)["files"]
                regular = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in named]
                return self._answer(200, {"files": regular})
            if "/commit/" in self.path:
                for line in body.decode().splitlines():
                    item = json.loads(line)
                    if item["key"] == "file":
                        value = item["value"]
                        hub.files.setdefault(repo, {})[value["path"]] = base64.b64decode(value["content"])
                oid = "0" * 40
                return self._answer(200, {"commitUrl": f"{hub.url}/datasets/{repo}/commit/{oid}", "commitOid": oid})
            return self._answer(404, {"error": f"no such endpoint {self.path}"})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return hub, server
