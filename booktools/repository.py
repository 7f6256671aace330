"""The repository the book is built from, found at build time (its URL is never written into
the book's files): the launch buttons link to it (_ext/launch_buttons.py), and the notebooks' set-up
cell installs attnkit from it (the chapters' and the assignments').

1. ``BOOK_REPOSITORY_URL`` (``https://github.com/OWNER/NAME``) and ``BOOK_BRANCH`` (default main);
2. otherwise, on GitHub Actions, ``$GITHUB_SERVER_URL/$GITHUB_REPOSITORY`` and the branch built;
3. otherwise the ``origin`` remote of the checkout, when it is on GitHub;
4. otherwise none.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

GITHUB = re.compile(
    r"^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)"
    r"(?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?/?$"
)


def find_repository(environ, origin: str | None) -> dict | None:
    """The repository and branch to link to, from the environment or the ``origin`` remote."""
    branch = environ.get("BOOK_BRANCH") or None
    if environ.get("BOOK_REPOSITORY_URL"):
        url, source = environ["BOOK_REPOSITORY_URL"].rstrip("/"), "BOOK_REPOSITORY_URL"
    elif environ.get("GITHUB_ACTIONS") == "true" and environ.get("GITHUB_REPOSITORY"):
        server = environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
        url, source = f"{server}/{environ['GITHUB_REPOSITORY']}", "GitHub Actions"
        # a pull request builds a merge ref: link to the branch it comes from
        branch = branch or environ.get("GITHUB_HEAD_REF") or environ.get("GITHUB_REF_NAME")
    elif origin and GITHUB.match(origin):
        match = GITHUB.match(origin)
        url, source = f"https://github.com/{match['owner']}/{match['name']}", "the origin remote"
    else:
        return None
    match = GITHUB.match(url)
    return {
        "url": url,
        "branch": branch or "main",
        "source": source,
        "github": f"{match['owner']}/{match['name']}" if match else None,
    }


def origin_remote(folder: Path) -> str | None:
    try:
        result = subprocess.run(
            ["git", "-C", str(folder), "remote", "get-url", "origin"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git on this machine
        return None
    return (result.stdout.strip() or None) if result.returncode == 0 else None
