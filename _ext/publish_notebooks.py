"""Publish the generated notebooks to the branch that the Colab buttons open.

    python3 _ext/publish_notebooks.py _build/html [--remote origin]

Colab opens only notebooks stored on GitHub. This commits every notebook under the build's
``_sources/`` (``chapters/<slug>.ipynb``, the path the Colab button names) as the whole content
of the branch ``NOTEBOOKS_BRANCH``, in one commit without history, and force-pushes it. It uses
git's plumbing in the current checkout, so the push uses the checkout's credentials and the
working tree is not touched. ``.github/workflows/publish.yml`` runs it after ``make book``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from launch_buttons import NOTEBOOKS_BRANCH

IDENTITY = {
    "GIT_AUTHOR_NAME": "Notebook publisher",
    "GIT_AUTHOR_EMAIL": "notebooks@invalid",
    "GIT_COMMITTER_NAME": "Notebook publisher",
    "GIT_COMMITTER_EMAIL": "notebooks@invalid",
}


def git(*arguments: str, env: dict | None = None) -> str:
    return subprocess.run(
        ["git", *arguments], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def publish(html: Path, remote: str) -> str:
    sources = html / "_sources"
    notebooks = sorted(sources.rglob("*.ipynb"))
    if not notebooks:
        raise SystemExit(f"no notebooks under {sources}: build the book first (make book)")
    with tempfile.TemporaryDirectory() as folder:
        env = IDENTITY | os.environ | {"GIT_INDEX_FILE": str(Path(folder) / "index")}
        for notebook in notebooks:
            blob = git("hash-object", "-w", str(notebook))
            path = notebook.relative_to(sources).as_posix()
            git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git("write-tree", env=env)
        commit = git(
            "commit-tree", tree, "-m", "The book's chapters as notebooks, for Colab", env=env
        )
    git("push", "--quiet", "--force", remote, f"{commit}:refs/heads/{NOTEBOOKS_BRANCH}")
    return commit


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=Path, help="the built book's html folder")
    parser.add_argument("--remote", default="origin", help="where to push (default: origin)")
    arguments = parser.parse_args()
    commit = publish(arguments.html, arguments.remote)
    print(f"published {commit} to {arguments.remote} {NOTEBOOKS_BRANCH}")


if __name__ == "__main__":
    main()
