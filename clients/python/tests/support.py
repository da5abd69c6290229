# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What the client's tests share: constants, cgroups, the probe inside a sandbox."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Callable, Dict, List, NamedTuple

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)
REPO_ROOT = os.path.dirname(os.path.dirname(PACKAGE_ROOT))
# Run from the checkout without installing: the source tree comes first. (test_install.py
# checks the installed package separately, in a virtual environment of its own.)
sys.path.insert(0, os.path.join(PACKAGE_ROOT, "src"))

from bfbpf_client import BfbpfError, Client, cgroup_mount  # noqa: E402

BFBPF = os.environ.get("BFBPF") or os.path.join(REPO_ROOT, "build", "bfbpf")
TAG = f"bfbpf-pyclient-{os.getpid()}"
PINS = f"/sys/fs/bpf/{TAG}"
CLONE_NEWNET = 0x40000000

ALLOWLIST = {
    "network_mode": "allowlist",
    "allowed_hosts": ["198.18.0.0/24"],
    "model_endpoints": ["198.18.7.1:4000"],
}
NO_NETWORK = {"network_mode": "no-network", "model_endpoints": ["198.18.7.1:4000"]}

# The child's probe: UDP connect sends no packet; errno 0 means allowed.
PROBE = r"""
import json, socket, sys
out = {"cgroup": [l for l in open("/proc/self/cgroup").read().splitlines() if l.startswith("0::")]}
for name, address in (("denied", "198.19.0.1"), ("allowed", "198.18.0.9")):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect((address, 9))
        out[name] = 0
    except OSError as e:
        out[name] = e.errno
    finally:
        s.close()
print(json.dumps(out))
"""

class Daemon(NamedTuple):
    sock: str
    work: str
    cgbase: str
    process: subprocess.Popen


def rmdir_cgroup(path: str) -> None:
    """Kill what is left in a cgroup tree, then remove it (deepest first)."""
    if not os.path.isdir(path):
        return
    for sub in sorted((e.path for e in os.scandir(path) if e.is_dir(follow_symlinks=False)), reverse=True):
        rmdir_cgroup(sub)
    for _ in range(200):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if e.errno != errno.EBUSY:
                raise
        try:
            with open(os.path.join(path, "cgroup.procs")) as f:
                for pid in f.read().split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        except OSError:
            pass
        time.sleep(0.025)
    os.rmdir(path)


def daemon_log_tail(work: str, lines: int = 25) -> str:
    try:
        with open(os.path.join(work, "daemon.log"), errors="replace") as f:
            kept = [line for line in f if "debug: libbpf" not in line]
        return "".join(kept[-lines:])
    except OSError:
        return ""


def wait_ready(process: subprocess.Popen, sock: str, work: str) -> None:
    probe = Client(sock, timeout=5)
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"bfbpf daemon exited with {process.returncode} during start:\n{daemon_log_tail(work)}")
        try:
            probe.status()
            return
        except BfbpfError as e:
            if e.code not in ("unreachable", "timeout"):
                raise
        if time.monotonic() > deadline:
            raise RuntimeError(f"bfbpf daemon not ready after 30 s:\n{daemon_log_tail(work)}")
        time.sleep(0.05)


def spawn_in(cgroup: str, argv: List[str], own_netns: bool = False, **kwargs) -> subprocess.Popen:
    """Start argv with its pid written into cgroup.procs before it execs
    (so before it opens any socket), optionally in a new network namespace."""
    procs = os.path.join(cgroup, "cgroup.procs")
    libc = ctypes.CDLL(None, use_errno=True) if own_netns else None

    def join() -> None:
        fd = os.open(procs, os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)
        if libc is not None and libc.unshare(CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET)")

    return subprocess.Popen(argv, preexec_fn=join, **kwargs)


def probe(cgroup: str) -> Dict[str, object]:
    """Run PROBE inside the sandbox, in a private netns with 198.18.0.1/15 on lo."""
    if not shutil.which("ip"):
        pytest.skip("needs ip (iproute2)")
    script = 'ip link set lo up && ip addr add 198.18.0.1/15 dev lo && exec "$0" -c "$1"'
    child = spawn_in(
        cgroup,
        ["sh", "-c", script, sys.executable, PROBE],
        own_netns=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, f"probe failed: {err.decode(errors='replace')}"
    return json.loads(out)


def expect_code(code: str, fn: Callable, *args, **kwargs) -> BfbpfError:
    """Call fn, require a BfbpfError with code and a message; return it."""
    with pytest.raises(BfbpfError) as caught:
        fn(*args, **kwargs)
    assert caught.value.code == code, caught.value.message
    assert caught.value.message
    return caught.value


