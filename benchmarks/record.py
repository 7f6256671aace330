"""What every benchmark records with its figures: the machine, the revision, the JSON file."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def machine(browser_version: str | None = None) -> dict:
    found = {
        "machine": platform.machine(),
        "system": platform.system(),
        "processor": platform.processor() or platform.machine(),
        "cpus": len(os.sched_getaffinity(0)),
    }
    if browser_version:
        found["browser"] = f"Chromium {browser_version} (headless)"
    return found


def write_json(path: Path, result: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {path}")
