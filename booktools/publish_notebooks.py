"""Publish the generated notebooks to the branch that the launch buttons open.

    .venv/bin/python -m booktools.publish_notebooks _build/html [--student _build/student] [--remote origin]

Colab opens only notebooks stored on GitHub. This commits every notebook under the build's
``_sources/`` (``chapters/<slug>.ipynb``, the path the Colab button names), the Japanese
edition's under ``ja/`` (from the build's ``ja/_sources/``) and, with ``--student``, the student
edition's under ``STUDENT_FOLDER/`` and ``STUDENT_FOLDER/ja/`` (what their Colab and Binder
buttons open) as the whole
content of the branch ``NOTEBOOKS_BRANCH``, in one commit without history, and force-pushes it.
It uses git's plumbing in the current checkout, so the push uses the checkout's credentials and
the working tree is not touched.
``.github/workflows/publish.yml`` runs it after ``make book`` and ``make student``.
Not ghp-import nor a publishing action: both push one ready folder, so the editions' notebooks
would still be gathered here first; ghp-import is not in the lock, and an action cannot run in
test_launch_buttons, which publishes to a local repository and follows every button to it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

NOTEBOOKS_BRANCH = "notebooks"  # where the publish workflow puts the generated notebooks
STUDENT_FOLDER = "student"  # the student edition's notebooks, on that branch
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


def notebooks(html: Path, folder: str = "") -> dict[str, Path]:
    """The notebooks under a build's ``_sources/``, by their path on the branch."""
    sources = html / "_sources"
    found = {
        f"{folder}{notebook.relative_to(sources).as_posix()}": notebook
        for notebook in sorted(sources.rglob("*.ipynb"))
    }
    if not found:
        raise SystemExit(f"no notebooks under {sources}: build it first (make book, make student)")
    return found


def editions(html: Path, prefix: str = "") -> dict[str, Path]:
    """The notebooks of the editions in other languages built beside the book (``ja/``)."""
    return {
        path: notebook
        for folder in sorted(html.iterdir())
        if (folder / "_sources").is_dir()
        for path, notebook in notebooks(folder, f"{prefix}{folder.name}/").items()
    }


def publish(html: Path, remote: str, student: Path | None = None) -> str:
    files = notebooks(html) | editions(html)
    if student:
        files |= notebooks(student, f"{STUDENT_FOLDER}/") | editions(student, f"{STUDENT_FOLDER}/")
    with tempfile.TemporaryDirectory() as folder:
        env = IDENTITY | os.environ | {"GIT_INDEX_FILE": str(Path(folder) / "index")}
        for path, notebook in files.items():
            blob = git("hash-object", "-w", str(notebook))
            git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git("write-tree", env=env)
        commit = git(
            "commit-tree", tree, "-m", "The book's notebooks, for Colab and Binder", env=env
        )
    git("push", "--quiet", "--force", remote, f"{commit}:refs/heads/{NOTEBOOKS_BRANCH}")
    return commit


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=Path, help="the built book's html folder")
    parser.add_argument("--student", type=Path, help="the built student edition's html folder")
    parser.add_argument("--remote", default="origin", help="where to push (default: origin)")
    arguments = parser.parse_args()
    commit = publish(arguments.html, arguments.remote, arguments.student)
    print(f"published {commit} to {arguments.remote} {NOTEBOOKS_BRANCH}")


if __name__ == "__main__":
    main()
