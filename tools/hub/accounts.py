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

import csv
import os
import re
import secrets
from pathlib import Path

import bcrypt
from nativeauthenticator import NativeAuthenticator
from nativeauthenticator.orm import UserInfo
from traitlets import List, Unicode

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
    """NativeAuthenticator whose accounts are the roster's and the teacher's, made at the hub's start."""

    roster = List(Unicode(), config=True, help="The students' account names.")
    teacher = Unicode("teacher", config=True, help="The teacher's account name (an administrator).")
    sheet = Unicode(config=True, help="The password sheet: name,password,role of each new account.")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
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
