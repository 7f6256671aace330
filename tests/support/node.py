"""A widget's JavaScript front end run in Node.js, to test its pure parts against Python's."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

NODE = shutil.which("node")


def module_runner(source: Path, folder: Path):
    """A function ``run(function, data=None)`` that evaluates ``function`` (JavaScript text, a
    function of the module ``source`` and ``data``) in Node and returns its JSON result. Skips
    where Node is missing, except on CI, which must have it."""
    if NODE is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Node.js is missing on CI")
        pytest.skip(f"Node.js not found: install it to test {source.name}'s pure parts")
    module = folder / f"{source.stem}.mjs"  # .mjs: Node reads it as an ES module
    shutil.copy(source, module)

    def run(function: str, data=None):
        script = (
            f'import * as js from "{module.as_uri()}";\n'
            'import { readFileSync } from "node:fs";\n'
            'const data = JSON.parse(readFileSync(0, "utf8"));\n'
            f"process.stdout.write(JSON.stringify(({function})(js, data)));\n"
        )
        done = subprocess.run(
            [NODE, "--input-type=module", "-e", script],
            input=json.dumps(data),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    return run
