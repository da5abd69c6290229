# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixtures of the client's tests: one real bfbpf daemon for the session.

The daemon listens on a socket in a temporary directory and pins under
/sys/fs/bpf/bfbpf-pyclient-<pid>; the tests' cgroups live under the cgroup2
mount in bfbpf-pyclient-<pid>/. All of it is removed at the end, failed or not.
Environment: BFBPF (the binary, default build/bfbpf of this checkout), KEEP=1
keeps the temporary directory (daemon.log).

Every test that needs the daemon is skipped when not run as root (cgroups,
bpffs); the tests of the transport and of the package's installation need no
root and always run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from typing import Callable, Iterator, List

import pytest
from support import BFBPF, PINS, TAG, Client, BfbpfError, Daemon, cgroup_mount, daemon_log_tail, rmdir_cgroup, wait_ready

_LOGS: List[str] = []


def _stop(process: subprocess.Popen, sock: str) -> None:
    if process.poll() is None:
        # Detach whatever a failed test left attached, before the daemon stops.
        client = Client(sock, timeout=30)
        try:
            for sandbox in client.status()["sandboxes"]:
                client.detach(sandbox["cgroup"])
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="session")
def work() -> Iterator[str]:
    path = tempfile.mkdtemp(prefix=f"{TAG}.")
    yield path
    if os.environ.get("KEEP") != "1":
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def daemon(work: str) -> Iterator[Daemon]:
    """The session's real daemon; skips the test when not root."""
    if os.geteuid() != 0:
        pytest.skip("needs root (cgroups, bpffs): the daemon's tests run under `make test`")
    if not os.access(BFBPF, os.X_OK):
        pytest.fail(f"{BFBPF} is missing (run make)")
    sock = os.path.join(work, "s")
    cgbase = os.path.join(cgroup_mount(), TAG)
    os.mkdir(cgbase)
    process = None
    log = open(os.path.join(work, "daemon.log"), "ab")
    try:
        process = subprocess.Popen(
            # This host's live vsock transport is the vsock case's (test-10), not these tests'.
            [BFBPF, "daemon", "--socket", sock, "--bpffs", PINS, "--log-level", "debug", "--accept-vsock"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        wait_ready(process, sock, work)
        _LOGS.append(work)
        yield Daemon(sock, work, cgbase, process)
    finally:
        try:
            if process is not None:
                _stop(process, sock)
        finally:
            log.close()
            rmdir_cgroup(cgbase)
            shutil.rmtree(PINS, ignore_errors=True)
            if os.path.exists(PINS):
                raise RuntimeError(f"{PINS} could not be removed")


@pytest.fixture
def client(daemon: Daemon) -> Client:
    return Client(daemon.sock, timeout=60)


@pytest.fixture
def make_cgroup(daemon: Daemon, client: Client, request: pytest.FixtureRequest) -> Iterator[Callable[[], str]]:
    """Makes cgroups for one test under the session's base; detaches and removes them after it."""
    made: List[str] = []

    def make() -> str:
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)  # parameters may hold a '/'
        path = os.path.join(daemon.cgbase, f"{name}-{len(made) + 1}")
        os.mkdir(path)
        made.append(path)
        return path

    yield make
    for path in reversed(made):
        try:
            client.detach(path)
        except BfbpfError as e:
            if e.code != "not_attached":
                raise
        rmdir_cgroup(path)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config) -> None:  # noqa: ANN001
    """On failure, the end of the daemon's log (but libbpf's debug lines)."""
    if exitstatus == 0:
        return
    for work in _LOGS:
        tail = daemon_log_tail(work)
        if tail:
            terminalreporter.write_line("--- daemon.log (last 25 lines but libbpf's debug)")
            terminalreporter.write(tail)


