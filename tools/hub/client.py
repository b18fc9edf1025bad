"""One person on the classroom hub, as a browser would act for them, without a browser.

``HubUser`` logs in through the hub's login form, takes an API token, starts their server, follows
the nbgitpuller link, reads and saves notebooks (jupyter_server's REST API) and opens kernels;
``Kernel`` speaks the kernel's own protocol over its websocket (jupyter_server's channels URL):
``execute`` runs a cell, ``comm_update`` moves a widget's input as the front end does (a
``comm_msg`` with ``method: update``), each returning when the kernel is idle again.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import requests
import websocket


class HubError(RuntimeError):
    """The hub or a server answered something other than what a student needs."""


def _check(response: requests.Response, what: str) -> requests.Response:
    if not response.ok:
        raise HubError(f"{what}: HTTP {response.status_code} {response.text[:300]}")
    return response


class HubUser:
    """A person with an account on the hub at ``url`` (``http://127.0.0.1:<port>``, or ``https``).

    ``verify`` is requests' ``verify=``: True, or the path of the hub's certificate (self-signed).
    """

    def __init__(self, url: str, name: str, *, verify: str | bool = True) -> None:
        self.url, self.name = url, name
        self.http = requests.Session()
        self.http.verify = verify
        if isinstance(verify, str):  # else REQUESTS_CA_BUNDLE, where set, would replace it
            self.http.trust_env = False
        self.server = f"{url}/user/{name}"

    def log_in(self, password: str) -> None:
        """Log in through the hub's form, then take an API token for everything after."""
        form = _check(self.http.get(f"{self.url}/hub/login", timeout=30), "the login page")
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', form.text)
        fields = {"username": self.name, "password": password, "_xsrf": xsrf[1] if xsrf else ""}
        page = self.http.post(f"{self.url}/hub/login", data=fields, allow_redirects=False, timeout=60)
        if page.status_code != 302:
            raise HubError(f"{self.name} could not log in: HTTP {page.status_code}")
        headers = {"X-XSRFToken": self.http.cookies.get("_xsrf", path="/hub/") or ""}
        reply = self.http.post(
            f"{self.url}/hub/api/users/{self.name}/tokens",
            json={"note": "classroom"},
            headers=headers,
            timeout=60,
        )
        self.http.headers["Authorization"] = (
            f"token {_check(reply, f'{self.name} taking a token').json()['token']}"
        )

    def model(self, name: str | None = None) -> dict[str, Any]:
        """The hub's record of a user (``name``, or this user)."""
        reply = self.http.get(f"{self.url}/hub/api/users/{name or self.name}", timeout=60)
        return _check(reply, f"the hub's record of {name or self.name}").json()

    def server_ready(self, name: str | None = None) -> bool:
        """Whether the user's server is running and ready."""
        return bool(self.model(name).get("servers", {}).get("", {}).get("ready"))

    def start_server(self, timeout: float = 300) -> float:
        """Ask for this user's server and wait until it is ready; the seconds it took."""
        start = time.perf_counter()
        reply = self.http.post(f"{self.url}/hub/api/users/{self.name}/server", timeout=timeout)
        while reply.status_code == 400 and "pending stop" in reply.text:  # the culler is stopping it
            time.sleep(1)
            reply = self.http.post(f"{self.url}/hub/api/users/{self.name}/server", timeout=timeout)
        if reply.status_code not in (201, 202, 400):  # 400: already running
            _check(reply, f"starting {self.name}'s server")
        while not self.server_ready():
            if time.perf_counter() - start > timeout:
                raise HubError(f"{self.name}'s server was not ready within {timeout} s")
            time.sleep(0.5)
        return time.perf_counter() - start

    def stop_server(self, name: str | None = None) -> None:
        """Stop a user's server (an admin may stop anyone's)."""
        reply = self.http.delete(f"{self.url}/hub/api/users/{name or self.name}/server", timeout=120)
        _check(reply, f"stopping {name or self.name}'s server")

    def pull(self, repo: str, *, branch: str = "main", urlpath: str = "lab") -> str:
        """Follow the nbgitpuller link, as a click on it does; nbgitpuller's output.

        The link (``/hub/user-redirect/git-pull?…``) leads to this user's own server, whose page
        then streams the clone or merge (``git-pull/api``); that stream is read to its end.
        """
        query = urlencode({"repo": repo, "branch": branch, "urlpath": urlpath})
        page = _check(
            self.http.get(f"{self.url}/hub/user-redirect/git-pull?{query}", timeout=120), "the link"
        )
        if not page.url.startswith(f"{self.server}/git-pull"):
            raise HubError(f"the link led {self.name} to {page.url}")
        stream = self.http.get(
            f"{self.server}/git-pull/api?{urlencode({'repo': repo, 'branch': branch})}",
            stream=True,
            timeout=300,
        )
        _check(stream, "nbgitpuller")
        output = []
        for line in stream.iter_lines(decode_unicode=True):
            if not line.startswith("data: "):
                continue
            event = json.loads(line[6:])
            output.append(event.get("output", ""))
            if event.get("phase") == "error":
                raise HubError(f"nbgitpuller failed for {self.name}: {event.get('message')}")
            if event.get("phase") == "finished":
                return "".join(output)
        raise HubError(f"nbgitpuller's stream ended without finishing for {self.name}")

    def contents(self, path: str, *, owner: str | None = None) -> dict[str, Any]:
        """A file of a server (``owner``'s, or this user's), through jupyter_server's contents API."""
        server = f"{self.url}/user/{owner or self.name}"
        reply = self.http.get(f"{server}/api/contents/{path}", timeout=120, allow_redirects=False)
        return _check(reply, f"{self.name} reading {owner or self.name}'s {path}").json()

    def nbgrader(self, action: str, course: str, assignment: str) -> list[dict[str, Any]]:
        """*Fetch*, *Submit* or *Fetch Feedback* in nbgrader's *Assignments* tab (its server API).

        ``action`` is ``fetch``, ``submit`` or ``fetch_feedback``; returns the assignments as the
        tab lists them after the action.
        """
        body = {"course_id": course, "assignment_id": assignment}
        reply = self.http.post(f"{self.server}/assignments/{action}", json=body, timeout=300)
        listed = _check(reply, f"{self.name}: nbgrader {action} {assignment}").json()
        if isinstance(listed, dict) and not listed.get("success", True):
            raise HubError(f"{self.name}: nbgrader {action} {assignment}: {listed.get('value')}")
        return listed["value"] if isinstance(listed, dict) else listed

    def save(self, path: str, notebook: dict[str, Any]) -> None:
        """Save a notebook (nbformat JSON) to this user's server."""
        body = {"type": "notebook", "format": "json", "content": notebook}
        _check(self.http.put(f"{self.server}/api/contents/{path}", json=body, timeout=120), f"saving {path}")

    def open_notebook(self, path: str) -> Kernel:
        """Open a notebook as JupyterLab does: a session with a fresh kernel in the notebook's folder."""
        body = {
            "path": path,
            "name": path.rsplit("/", 1)[-1],
            "type": "notebook",
            "kernel": {"name": "python3"},
        }
        reply = _check(
            self.http.post(f"{self.server}/api/sessions", json=body, timeout=180), "opening a notebook"
        )
        return Kernel(self, reply.json()["kernel"]["id"])

    def restart_kernel(self, kernel_id: str, *, tries: int = 5) -> None:
        """*Kernel → Restart Kernel*, pressed again after a second while the server answers 500.

        Right after a kernel dies, the server's own restarter may be starting it again, and a
        restart asked for meanwhile fails with 500 ("Exception restarting kernel"); a student
        presses the button again, and so does this.
        """
        for attempt in range(tries):
            reply = self.http.post(f"{self.server}/api/kernels/{kernel_id}/restart", timeout=180)
            if reply.status_code != 500 or attempt == tries - 1:
                break
            time.sleep(1)
        _check(reply, "restarting the kernel")


@dataclass
class Reply:
    """What a request to the kernel brought back."""

    status: str  # the reply's status: ok, error, or aborted
    seconds: float
    outputs: list[dict[str, Any]] = field(default_factory=list)  # iopub messages with this parent
    error: str = ""  # ename: evalue of an error


class Kernel:
    """A kernel of a user's server, over jupyter_server's websocket (``api/kernels/<id>/channels``)."""

    def __init__(self, user: HubUser, kernel_id: str) -> None:
        self.user, self.id = user, kernel_id
        self.session = uuid.uuid4().hex
        self.widgets: dict[str, dict[str, Any]] = {}  # comm id → the state the kernel opened it with
        self.connect()

    def connect(self, timeout: float = 60) -> None:
        """Open (or reopen) the kernel's websocket."""
        url = "ws" + self.user.server.removeprefix("http") + f"/api/kernels/{self.id}/channels"
        verify = self.user.http.verify
        self.ws = websocket.create_connection(
            f"{url}?session_id={self.session}",
            header=[f"Authorization: {self.user.http.headers['Authorization']}"],
            timeout=timeout,
            sslopt={"ca_certs": verify} if isinstance(verify, str) else None,
        )

    def close(self) -> None:
        self.ws.close()

    def _send(self, msg_type: str, content: dict[str, Any], channel: str = "shell") -> str:
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "msg_type": msg_type, "session": self.session, "username": self.user.name}
        header |= {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "version": "5.3"}
        message = {
            "header": header,
            "parent_header": {},
            "metadata": {},
            "content": content,
            "channel": channel,
        }
        self.ws.send(json.dumps(message))
        return msg_id

    def _receive(self) -> dict[str, Any]:
        frame = self.ws.recv()
        if isinstance(frame, bytes):  # a message with buffers: offsets, then the JSON, then the buffers
            count = int.from_bytes(frame[:4], "big")
            offsets = [int.from_bytes(frame[4 + 4 * i : 8 + 4 * i], "big") for i in range(count)]
            frame = frame[offsets[0] : offsets[1] if count > 1 else None].decode()
        return json.loads(frame)

    def _wait(self, msg_id: str, start: float, timeout: float, *, replies: bool = True) -> Reply:
        """Read messages until the kernel is idle after ``msg_id`` (and its reply has come, if any)."""
        reply, idle, outputs = (None if replies else {}), False, []
        deadline = time.monotonic() + timeout
        while reply is None or not idle:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the kernel did not answer within {timeout} s")
            self.ws.settimeout(max(deadline - time.monotonic(), 0.1))
            message = self._receive()
            kind = message["header"]["msg_type"]
            if kind == "comm_open" and message["content"].get("target_name") == "jupyter.widget":
                self.widgets[message["content"]["comm_id"]] = message["content"]["data"].get("state", {})
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if message["channel"] == "shell":
                reply = message["content"]
            elif kind == "status":
                idle = message["content"]["execution_state"] == "idle"
            elif message["channel"] == "iopub":
                outputs.append(message)
        error = f"{reply.get('ename')}: {reply.get('evalue')}" if reply.get("status") == "error" else ""
        return Reply(reply.get("status", "ok"), time.perf_counter() - start, outputs, error)

    def execute(self, code: str, timeout: float = 600) -> Reply:
        """Run one cell's code, as *Run* does."""
        start = time.perf_counter()
        msg_id = self._send("execute_request", {"code": code, "silent": False, "store_history": True})
        return self._wait(msg_id, start, timeout)

    def comm_update(self, comm_id: str, state: dict[str, Any], timeout: float = 120) -> Reply:
        """Set a widget's inputs as its front end does on a move; returns when the kernel is idle."""
        start = time.perf_counter()
        data = {"method": "update", "state": state, "buffer_paths": []}
        msg_id = self._send("comm_msg", {"comm_id": comm_id, "data": data})
        return self._wait(msg_id, start, timeout, replies=False)  # a comm_msg has no reply, only idle
