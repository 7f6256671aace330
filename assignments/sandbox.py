"""A submitted notebook's own process, shut in a sandbox, and the channel to it.

Each notebook runs in :mod:`assignments.notebook_process`, started through bubblewrap
(``bwrap``, Debian's package ``bubblewrap``; no daemon needed). Inside, it sees:

- the system's programs and libraries, this Python, its environment and ``attnkit``, read-only;
- a copy of its own notebook, in an empty folder of its own (memory-backed, of limited size);
- its own ``/tmp`` (the same), its own process tree, no network (loopback only);

and nothing else: not the folder of collected submissions, not the assignments' solutions or
hidden tests, not the instructor's home. It runs under limits (:class:`Limits`): memory (address
space) per process, processes, file size, CPU time, and a wall clock the grader enforces by
killing the sandbox, which ends every process started inside it. Run as root (a CI machine, a
container), the sandbox is entered as root and the notebook's process then becomes a user of no
account, so the process limit counts its processes alone; run as an ordinary user, bubblewrap
makes a user namespace and the limit counts that user's processes too.
"""

from __future__ import annotations

import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import attnkit
from assignments import wire

ROOT = Path(__file__).resolve().parent.parent
INSIDE = "/submission"  # the notebook's folder inside the sandbox
NOTEBOOK = f"{INSIDE}/submission.ipynb"
MOUNTED = {"/tmp", INSIDE}  # writable folders of the sandbox's own: never made read-only


@dataclass(frozen=True)
class Limits:
    """What one notebook may use. ``seconds`` is the wall clock for running its cells, and
    again for each question's check."""

    seconds: float = 120.0
    memory_bytes: int = 4 << 30  # address space per process: PyTorch needs about 2 GiB
    disk_bytes: int = 256 << 20  # each of its two writable folders, in memory
    processes: int = 64  # threads included


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot make a sandbox here."""


class ProcessEnded(RuntimeError):
    """The notebook's process is gone: it died, or it was stopped at its time limit."""


def _program(name: str, package: str) -> str:
    """The path of a program the sandbox needs, or :class:`SandboxUnavailable` saying how to get
    it."""
    found = shutil.which(name)
    if found is None:
        raise SandboxUnavailable(
            f"grading runs each notebook in a sandbox that needs `{name}`, which is not "
            f"installed: install {package} (Debian and Ubuntu: apt install {package}; Fedora: "
            f"dnf install {package}), or grade with Otter's Docker containers (otter grade)"
        )
    return found


def bubblewrap() -> str:
    """The path of ``bwrap`` (and that ``prlimit`` is there), or :class:`SandboxUnavailable`."""
    _program("prlimit", "util-linux")
    return _program("bwrap", "bubblewrap")


def _read_only_paths() -> list[str]:
    """What the notebook's Python needs: this interpreter, its environment, attnkit, this
    package (the notebook's side of the channel), each once."""
    paths = {
        sys.base_prefix,
        os.path.realpath(sys.base_prefix),
        sys.prefix,
        os.path.realpath(sys.prefix),
        str(Path(attnkit.__file__).resolve().parent),
        str(Path(__file__).resolve().parent),
    }
    ordered = sorted(paths, key=len)
    return [p for i, p in enumerate(ordered) if not any(p.startswith(q + "/") for q in ordered[:i])]


def _read_only(paths: list[str]) -> list[str]:
    """bwrap's arguments binding ``paths`` read-only, each folder on the way made traversable:
    as root, bwrap makes them private (0700), and the notebook's process is no longer root."""
    arguments, made = [], set()
    for path in paths:
        for folder in list(reversed(Path(path).parents))[1:]:
            if str(folder) not in made | MOUNTED and str(folder).split("/")[1] not in {
                "usr",
                "etc",
            }:
                arguments += ["--perms", "0755", "--dir", str(folder)]
                made.add(str(folder))
        arguments += ["--ro-bind", path, path]
    return arguments


def _system() -> list[str]:
    """The system's programs and libraries, read-only; /bin and the like as the host has them."""
    arguments = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            arguments += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            arguments += ["--ro-bind", top, top]
    return arguments


def _environment() -> dict[str, str]:
    return {
        "HOME": INSIDE,
        "TMPDIR": "/tmp",
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PIP_NO_INDEX": "1",  # no network: a set-up cell's pip fails at once instead of retrying
        "LANG": "C.UTF-8",
    }


def _processes_of_this_user() -> int:
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count


class NotebookProcess:
    """One notebook's process in its sandbox: start it, wait until its cells have run, call
    its functions, stop it. ``slot`` tells concurrent sandboxes apart (their users, as root)."""

    def __init__(self, notebook: bytes, limits: Limits, slot: int = 0):
        self.limits = limits
        self._folder = tempfile.TemporaryDirectory(prefix="grading-")
        copy = Path(self._folder.name) / "submission.ipynb"
        copy.write_bytes(notebook)
        copy.chmod(0o444)
        child_in, self._to_child = os.pipe()  # (read, write)
        self._from_child, child_out = os.pipe()
        as_root = os.geteuid() == 0
        uid = 100_000 + 8 * (os.getpid() % 100_000) + slot % 8
        # As root, no user namespace: the process becomes a real user of its own instead.
        namespaces = (
            ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
             "--unshare-cgroup-try"]
            if as_root
            else ["--unshare-all"]
        )  # fmt: skip
        command = [
            bubblewrap(),
            *namespaces,
            "--die-with-parent",
            "--new-session",
            # the writable folders first: the read-only binds may lie below one (a clone in /tmp)
            "--perms", "1777", "--size", str(limits.disk_bytes), "--tmpfs", "/tmp",
            "--perms", "1777", "--size", str(limits.disk_bytes), "--tmpfs", INSIDE,
            "--proc", "/proc",
            "--dev", "/dev",
            *_system(),
            *_read_only(_read_only_paths()),
            "--ro-bind", str(copy), NOTEBOOK,
            "--chdir", INSIDE,
            "--clearenv",
            *[arg for key, value in _environment().items() for arg in ("--setenv", key, value)],
        ]  # fmt: skip
        if as_root:  # a privileged sandbox: keep only what the process needs to become uid
            command += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            command += ["--uid", "65534", "--gid", "65534"]
        command += [
            sys.executable,
            "-m",
            "assignments.notebook_process",
            NOTEBOOK,
            str(child_in),
            str(child_out),
            *([str(uid)] if as_root else []),
        ]
        processes = limits.processes + (0 if as_root else _processes_of_this_user())
        self._process = subprocess.Popen(
            [*_limits(limits, processes), *command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(child_in, child_out),
            start_new_session=True,
        )
        os.close(child_in)
        os.close(child_out)
        self._output = collections.deque(maxlen=40)  # its last lines, for a death notice
        threading.Thread(target=self._keep_output, daemon=True).start()
        self.stopped_because: str | None = None

    def _keep_output(self) -> None:
        for line in self._process.stdout:
            self._output.append(line.decode("utf-8", "replace").rstrip()[:300])

    def wait_ready(self) -> dict:
        """The ready message, once the cells have run: ``errors`` (cells that raised) and
        ``functions`` (the names of the callables the notebook defines)."""
        return self._receive(time.monotonic() + self.limits.seconds, "running the notebook")

    def call(self, function: str, args: tuple, forbidden: tuple, how: dict, deadline: float):
        """The notebook's answer to one call of ``function``, by ``deadline`` (monotonic);
        ``how`` holds :func:`attnkit.exercises.calling.invoke`'s ``measure``, ``layout`` and
        ``twice``."""
        request = {"function": function, "args": args, "forbidden": forbidden, **how}
        try:
            wire.send(self._to_child, request)
        except OSError:
            raise ProcessEnded(self._death("calling " + function)) from None
        return self._receive(deadline, f"calling {function}")

    def _receive(self, deadline: float, doing: str) -> dict:
        if self.stopped_because is not None:
            raise ProcessEnded(self.stopped_because)
        try:
            return wire.receive(wire.reader(self._from_child, deadline))
        except TimeoutError:
            self.stop(
                f"time limit: {self.limits.seconds:g} s passed while {doing} (an endless loop, "
                "or far too slow)"
            )
            raise ProcessEnded(self.stopped_because) from None
        except EOFError:
            raise ProcessEnded(self._death(doing)) from None
        except wire.WireError as error:
            self.stop(f"the notebook's process sent what the grader cannot read ({error})")
            raise ProcessEnded(self.stopped_because) from None

    def _death(self, doing: str) -> str:
        """Why the process ended while ``doing``, once it has."""
        if self.stopped_because is None:
            try:
                code = self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                code = None
            self.stop(_death_notice(code, doing, self.limits, list(self._output)))
        return self.stopped_because

    def stop(self, because: str = "stopped by the grader") -> None:
        """End the sandbox and every process in it."""
        if self.stopped_because is None:
            self.stopped_because = because
        if self._process.poll() is None:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._process.wait()
        # Each end closed once: a number closed twice may by then be another sandbox's pipe.
        for fd in (self._to_child, self._from_child):
            if fd >= 0:
                os.close(fd)
        self._to_child = self._from_child = -1
        self._folder.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _limits(limits: Limits, processes: int) -> list[str]:
    """util-linux's ``prlimit`` setting the limits every process of the sandbox inherits, then
    running the rest of the command. A program, not a ``preexec_fn``: Python code between fork
    and exec can deadlock where the grader has threads (one per job)."""
    cpu = int(limits.seconds * 20) + 60  # a backstop: the grader's wall clock comes first
    return [
        _program("prlimit", "util-linux"),
        f"--as={limits.memory_bytes}",
        f"--nproc={processes}",
        f"--fsize={limits.disk_bytes}",
        f"--cpu={cpu}",
        "--core=0",
        "--",
    ]


def _death_notice(code: int | None, doing: str, limits: Limits, output: list[str]) -> str:
    """A kernel death in words: the signal or exit code, the likely limit, the last output."""
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        how = f"killed by {name}"
    elif code is not None and code > 128:  # bwrap passes on a signal's death as 128 + n
        try:
            how = f"killed by {signal.Signals(code - 128).name}"
        except ValueError:
            how = f"exited with code {code}"
    else:
        how = f"exited with code {code}"
    last = "\n".join(line for line in output[-6:] if line)
    hints = []
    if "MemoryError" in last or "Cannot allocate memory" in last or "SIGKILL" in how:
        hints.append(f"its memory limit is {limits.memory_bytes / 2**30:g} GiB per process")
    if "Resource temporarily unavailable" in last or "can't start new thread" in last:
        hints.append(f"its limit is {limits.processes} processes and threads")
    notice = f"kernel died: the notebook's Python {how} while {doing}"
    if hints:
        notice += f" ({'; '.join(hints)})"
    return notice + (f". Its last output:\n{last}" if last else "")
