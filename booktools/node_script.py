"""A Node.js script run by the build (the formulas' typesetter, PurgeCSS), its failure a Sphinx error
that says what needed Node.js, or what the script said."""

from __future__ import annotations

import subprocess

from sphinx.errors import ExtensionError


def run_node(arguments: list, *, needs: str, tool: str, input: str | None = None) -> str:
    """``node *arguments``' standard output; ``needs`` names the work that needs Node.js, ``tool``
    the script in the error it reports."""
    try:
        done = subprocess.run(
            ["node", *map(str, arguments)],
            input=input,
            capture_output=True,
            text=True,
            check=True,
        )
    except FileNotFoundError as error:
        raise ExtensionError(f"{needs} needs Node.js: {error}") from error
    except subprocess.CalledProcessError as error:
        raise ExtensionError(f"{tool}: {error.stderr.strip()}") from error
    return done.stdout
