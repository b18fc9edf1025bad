"""The course's repository address and branches (``repository.toml``), and the links made from them.

    .venv/bin/python tools/repository.py [--check]

``repository.toml`` is the one place the address is written. The build tools read it through
:func:`read`; the documents a reader opens on GitHub before anything is built (``README.md``,
``docs/instructor_guide.md``) hold the links written out, and this script rewrites them from the
file (``--check`` only says which differ): every GitHub, Binder and nbgitpuller link to a
repository named like this one's (``…/<owner>/<name>``, the address URL-encoded in an nbgitpuller
link) takes the address of ``repository.toml``.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "repository.toml"
#: The documents whose links this script keeps in step with repository.toml.
DOCUMENTS = ("README.md", "docs/instructor_guide.md")
GITHUB = "https://github.com/"


@dataclass(frozen=True)
class Repository:
    """A course repository on GitHub: its address, its teacher's and students' branches, a BinderHub."""

    url: str
    branch: str
    student_branch: str
    binderhub: str

    @property
    def slug(self) -> str:
        """``owner/name``."""
        return self.url.removeprefix(GITHUB).strip("/")

    @property
    def name(self) -> str:
        """The repository's name, the folder a clone (and nbgitpuller) makes."""
        return self.slug.split("/")[-1]

    def tree(self, branch: str) -> str:
        """The branch's page on GitHub."""
        return f"{self.url}/tree/{branch}"

    def binder(self, branch: str, path: str = "notebooks/00_start_here.ipynb") -> str:
        """A Binder link that opens ``path`` of ``branch`` in JupyterLab."""
        return f"{self.binderhub}/v2/gh/{self.slug}/{branch}?urlpath=lab/tree/{path}"

    def colab(self, branch: str, path: str = "notebooks/00_start_here.ipynb") -> str:
        """A Colab link that opens ``path`` of ``branch`` (its first code cell installs the package)."""
        return f"https://colab.research.google.com/github/{self.slug}/blob/{branch}/{path}"

    def nbgitpuller(self, hub: str, branch: str, path: str = "notebooks/00_start_here.ipynb") -> str:
        """An nbgitpuller link for the JupyterHub at ``hub``: clone (then update) ``branch`` into the
        user's home, in a folder named after the repository, and open ``path`` there."""
        return (
            f"{hub}/hub/user-redirect/git-pull?repo={quote(self.url, safe='')}"
            f"&urlpath={quote(f'lab/tree/{self.name}/{path}', safe='')}&branch={branch}"
        )


def read(path: Path = CONFIG) -> Repository:
    """The repository that ``repository.toml`` describes.

    Raises
    ------
    ValueError
        A key missing or unknown, or an address that is not ``https://github.com/<owner>/<name>``.
    """
    values = tomllib.loads(path.read_text(encoding="utf-8"))
    fields = set(Repository.__dataclass_fields__)
    if set(values) != fields:
        raise ValueError(f"{path} must set exactly {sorted(fields)}, got {sorted(values)}")
    repository = Repository(**values)
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", repository.url):
        raise ValueError(f"{path}: url must be https://github.com/<owner>/<name>, got {repository.url!r}")
    return repository


def rewrite(text: str, repository: Repository) -> str:
    """``text`` with every link to a repository of this one's name pointed at ``repository``."""
    name = re.escape(repository.name)
    text = re.sub(rf"https://github\.com/[\w.-]+/{name}(?![\w.-])", repository.url, text)
    text = re.sub(rf"/v2/gh/[\w.-]+/{name}/", f"/v2/gh/{repository.slug}/", text)
    text = re.sub(
        rf"colab\.research\.google\.com/github/[\w.-]+/{name}/",
        f"colab.research.google.com/github/{repository.slug}/",
        text,
    )
    return re.sub(
        rf"https%3A%2F%2Fgithub\.com%2F[\w.-]+%2F{name}(?![\w.-])", quote(repository.url, safe=""), text
    )


def main(argv: list[str]) -> int:
    """Rewrite the documents' links from repository.toml, or with ``--check`` name those that differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say which documents differ")
    args = parser.parse_args(argv)
    repository = read()
    stale = []
    for name in DOCUMENTS:
        path = ROOT / name
        text = path.read_text(encoding="utf-8")
        new = rewrite(text, repository)
        if new != text:
            stale.append(name)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    print(("differ from repository.toml: " if args.check else "rewritten: ") + (", ".join(stale) or "none"))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
