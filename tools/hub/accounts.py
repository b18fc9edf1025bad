"""The classroom hub's accounts: one per student, each with a password of its own, and the teacher's.

``ClassroomAuthenticator`` is NativeAuthenticator (jupyterhub-nativeauthenticator, maintained by
the JupyterHub team) with the accounts made by the hub, not by sign-up: at every start it creates
each account of the roster that does not exist yet, with a new random password, authorized, and
appends ``name,password,role`` to the password sheet (``<state>/passwords.csv``, readable by the
hub's user only) that the teacher hands out. Sign-up is off, and the login page is JupyterHub's
own (``get_handlers``). A student changes their own password
at ``/hub/change-password``; the teacher (an administrator) sets anyone's at
``/hub/change-password/<name>``. NativeAuthenticator keeps only bcrypt hashes, in the hub's
database.
"""

from __future__ import annotations

import asyncio
import csv
import os
import re
import secrets
import time
from pathlib import Path

import bcrypt
from nativeauthenticator import NativeAuthenticator
from nativeauthenticator.orm import UserInfo
from traitlets import Integer, List, Unicode

#: An account name: lower-case letters, digits, ``-`` and ``_``, starting with a letter. It becomes
#: part of a system user's name (``spawner.py``), so it stays short and plain.
NAME = re.compile(r"[a-z][a-z0-9_-]{0,22}")


def check_name(name: str) -> str:
    """``name`` if it can be an account name.

    Raises
    ------
    ValueError
        Naming ``name`` and the rule, if it is not one.
    """
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(
            f"account name {name!r}: use 1 to 23 lower-case letters, digits, '-' or '_', starting "
            "with a letter"
        )
    return name


def read_sheet(path: Path) -> dict[str, str]:
    """The password sheet's ``{name: password}`` (the latest row of each name)."""
    if not path.exists():
        return {}
    with path.open(newline="", encoding="utf-8") as sheet:
        return {row["name"]: row["password"] for row in csv.DictReader(sheet)}


class ClassroomAuthenticator(NativeAuthenticator):
    """NativeAuthenticator whose accounts are the roster's and the teacher's, made at the hub's start.

    Its password check runs off the hub's event loop, one at a time: NativeAuthenticator's own runs
    bcrypt (a deliberately slow hash) on the loop itself, so a handful of clients guessing passwords
    stalled every page and API call of the class. A client address with more than
    ``client_failures`` failed logins in ``client_window_s`` seconds waits that window out before
    each further try is checked (a whole classroom behind one address is slowed only after that many
    failures); an account is locked after ``allowed_failed_logins`` wrong passwords, as before.
    """

    roster = List(Unicode(), config=True, help="The students' account names.")
    client_failures = Integer(20, config=True, help="Failed logins from one address before it is slowed.")
    client_window_s = Integer(60, config=True, help="The window, in seconds, those failures are counted in.")
    teacher = Unicode("teacher", config=True, help="The teacher's account name (an administrator).")
    sheet = Unicode(config=True, help="The password sheet: name,password,role of each new account.")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._checking = asyncio.Semaphore(1)
        self._failures: dict[str, list[float]] = {}
        self.enable_signup = False
        names = [check_name(name) for name in [self.teacher, *self.roster]]
        if len(set(names)) < len(names):
            raise ValueError(f"the roster names an account twice, or the teacher's: {sorted(names)}")
        self.allowed_users = set(self.roster)
        self.admin_users = {self.teacher}
        new = [name for name in names if UserInfo.find(self.db, name) is None]
        if not new:
            return
        sheet = Path(self.sheet)
        fresh = not sheet.exists()
        descriptor = os.open(sheet, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(descriptor, "w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            if fresh:
                writer.writerow(["name", "password", "role"])
            for name in new:
                password = secrets.token_urlsafe(9)
                self.db.add(UserInfo(username=name, password=_hash(password), is_authorized=True))
                writer.writerow([name, password, "teacher" if name == self.teacher else "student"])
        self.db.commit()
        self.log.info("%d new accounts; their passwords are in %s", len(new), sheet)

    async def authenticate(self, handler, data: dict[str, str]) -> str | None:
        """The account name if ``data``'s password is the account's; None otherwise."""
        client = handler.request.remote_ip if handler is not None else ""
        failures = self._failures.setdefault(client, [])
        now = time.monotonic()
        failures[:] = [moment for moment in failures if now - moment < self.client_window_s]
        if len(failures) >= self.client_failures:
            await asyncio.sleep(self.client_window_s)  # this client only: the loop serves the others
        username = self.normalize_username(data["username"])
        user = self.get_user(username)
        blocked = self.allowed_failed_logins and self.is_blocked(username)
        if user is not None and user.is_authorized and not blocked:
            async with self._checking:  # bcrypt in a thread, one at a time: the loop stays free
                if await asyncio.to_thread(user.is_valid_password, data["password"]):
                    self.successful_login(username)
                    return username
            self.add_login_attempt(username)
        failures.append(time.monotonic())
        return None

    def get_handlers(self, app) -> list[tuple[str, type]]:
        """Only the password pages: JupyterHub's own login page (NativeAuthenticator 1.3.0's
        LoginHandler uses ``statsd``, which JupyterHub 6 no longer has), no sign-up, no approvals."""
        return [
            (pattern, handler)
            for pattern, handler in super().get_handlers(app)
            if pattern.startswith("/change-password")
        ]


def _hash(password: str) -> bytes:
    """NativeAuthenticator's form of a password: its bcrypt hash, salt included."""
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt())
