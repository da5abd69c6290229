#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tools/bfbpf_client.py against the real daemon (run as root).

    python3 tests/integration/test_client.py [-v] [unittest args]

Starts its own daemon (socket in a temporary directory, pins under
/sys/fs/bpf/bfbpf-pyclient-<pid>), makes its own cgroups under the cgroup2
mount (bfbpf-pyclient-<pid>/...), and removes all of it at the end, failed or
not. Environment: BFBPF (the binary, default build/bfbpf), KEEP=1 keeps the
temporary directory (daemon.log). Exit status 0 when every test passed, 1
otherwise, 2 when not run as root.

Enforcement is proven with UDP connects (no packet is sent) from a child
process that joins the sandbox cgroup before it starts and runs in a network
namespace of its own, where 198.18.0.1/15 sits on lo: nothing can leave the
host, and the test does not depend on the host's routes.
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import bfbpf_client  # noqa: E402
from bfbpf_client import BfbpfError, Client  # noqa: E402

BFBPF = os.environ.get("BFBPF") or os.path.join(ROOT, "build", "bfbpf")
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

# Module state, set by setUpModule.
WORK: str = ""
SOCK: str = ""
CGBASE: str = ""
DAEMON: Optional[subprocess.Popen] = None
DAEMON_LOG = None


def _daemon_log_tail(lines: int = 25) -> str:
    try:
        with open(os.path.join(WORK, "daemon.log"), errors="replace") as f:
            kept = [line for line in f if "debug: libbpf" not in line]
        return "".join(kept[-lines:])
    except OSError:
        return ""


def _rmdir_cgroup(path: str) -> None:
    """Kill what is left in a cgroup tree, then remove it (deepest first)."""
    if not os.path.isdir(path):
        return
    for sub in sorted((e.path for e in os.scandir(path) if e.is_dir(follow_symlinks=False)), reverse=True):
        _rmdir_cgroup(sub)
    for attempt in range(200):
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


def _stop_daemon() -> None:
    global DAEMON
    if DAEMON is None:
        return
    if DAEMON.poll() is None:
        DAEMON.terminate()
        try:
            DAEMON.wait(10)
        except subprocess.TimeoutExpired:
            DAEMON.kill()
            DAEMON.wait()
    DAEMON = None


def _detach_all() -> None:
    """Detach whatever a failed test left attached, before the daemon stops."""
    if DAEMON is None or DAEMON.poll() is not None:
        return
    client = Client(SOCK, timeout=30)
    for sandbox in client.status()["sandboxes"]:
        client.detach(sandbox["cgroup"])


def _remove_pins() -> None:
    shutil.rmtree(PINS, ignore_errors=True)
    if os.path.exists(PINS):
        raise RuntimeError(f"{PINS} could not be removed")


def setUpModule() -> None:
    """Each resource registers its removal as soon as it exists, so a failure
    half-way through the setup cleans up too (module cleanups run last in,
    first out)."""
    global WORK, SOCK, CGBASE, DAEMON, DAEMON_LOG
    if not os.access(BFBPF, os.X_OK):
        raise RuntimeError(f"{BFBPF} is missing (run make)")
    WORK = tempfile.mkdtemp(prefix=f"{TAG}.")
    if os.environ.get("KEEP") != "1":
        atexit.register(shutil.rmtree, WORK, True)
    SOCK = os.path.join(WORK, "s")
    CGBASE = os.path.join(bfbpf_client.cgroup_mount(), TAG)
    os.mkdir(CGBASE)
    unittest.addModuleCleanup(_rmdir_cgroup, CGBASE)
    unittest.addModuleCleanup(_remove_pins)
    DAEMON_LOG = open(os.path.join(WORK, "daemon.log"), "ab")
    unittest.addModuleCleanup(DAEMON_LOG.close)
    DAEMON = subprocess.Popen(
        # This host's live vsock transport is the vsock case's (test-10), not these tests'.
        [BFBPF, "daemon", "--socket", SOCK, "--bpffs", PINS, "--log-level", "debug", "--accept-vsock"],
        stdin=subprocess.DEVNULL,
        stdout=DAEMON_LOG,
        stderr=subprocess.STDOUT,
    )
    unittest.addModuleCleanup(_stop_daemon)
    unittest.addModuleCleanup(_detach_all)
    probe = Client(SOCK, timeout=5)
    deadline = time.monotonic() + 30
    while True:
        if DAEMON.poll() is not None:
            raise RuntimeError(f"bfbpf daemon exited with {DAEMON.returncode} during start:\n{_daemon_log_tail()}")
        try:
            probe.status()
            return
        except BfbpfError as e:
            if e.code not in ("unreachable", "timeout"):
                raise
        if time.monotonic() > deadline:
            raise RuntimeError(f"bfbpf daemon not ready after 30 s:\n{_daemon_log_tail()}")
        time.sleep(0.05)


class DaemonCase(unittest.TestCase):
    """A test with a client of the module's daemon and cgroups of its own."""

    def setUp(self) -> None:
        self.client = Client(SOCK, timeout=60)
        self.n = 0

    def make_cgroup(self) -> str:
        self.n += 1
        path = os.path.join(CGBASE, f"{self._testMethodName}-{self.n}")
        os.mkdir(path)
        self.addCleanup(self._drop_cgroup, path)
        return path

    def _drop_cgroup(self, path: str) -> None:
        try:
            self.client.detach(path)
        except BfbpfError as e:
            if e.code != "not_attached":
                raise
        _rmdir_cgroup(path)

    def spawn_in(self, cgroup: str, argv: List[str], own_netns: bool = False, **kwargs) -> subprocess.Popen:
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

    def probe(self, cgroup: str) -> dict:
        """Run PROBE inside the sandbox, in a private netns with 198.18.0.1/15 on lo."""
        if not shutil.which("ip"):
            self.skipTest("needs ip (iproute2)")
        script = 'ip link set lo up && ip addr add 198.18.0.1/15 dev lo && exec "$0" -c "$1"'
        child = self.spawn_in(
            cgroup,
            ["sh", "-c", script, sys.executable, PROBE],
            own_netns=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = child.communicate(timeout=60)
        self.assertEqual(child.returncode, 0, f"probe failed: {err.decode(errors='replace')}")
        return json.loads(out)


class TestLifecycle(DaemonCase):
    def test_whole_api(self) -> None:
        cg = self.make_cgroup()
        relative = os.path.relpath(cg, bfbpf_client.cgroup_mount())

        reply = self.client.attach(cg, ALLOWLIST)
        self.assertIs(reply["ok"], True)
        self.assertEqual(reply["cgroup"], cg)
        self.assertEqual(reply["cgroup_id"], os.stat(cg).st_ino)
        self.assertEqual(reply["entries"], 2)  # the /24 and the model endpoint
        self.assertIsInstance(reply["generation"], int)
        digest = reply["digest"]
        self.assertRegex(digest, r"^[0-9a-f]{16}$")

        listed = {s["cgroup"]: s for s in self.client.status()["sandboxes"]}
        self.assertIn(cg, listed)
        sandbox = listed[cg]
        self.assertEqual(sandbox["policy"]["network_mode"], "allowlist")
        self.assertEqual(sandbox["policy"]["allowed_hosts"], ["198.18.0.0/24"])
        self.assertEqual(sandbox["policy"]["model_endpoints"], ["198.18.7.1:4000"])
        self.assertEqual(sandbox["digest"], digest)
        self.assertIn("connect4", sandbox["hooks"])

        one = self.client.status(cg)["sandboxes"]
        self.assertEqual([s["cgroup"] for s in one], [cg])
        self.assertEqual(self.client.status(relative)["sandboxes"][0]["cgroup"], cg)

        verified = self.client.verify(cg)
        self.assertIs(verified["lockdown_complete"], True, verified)
        names = [c["name"] for c in verified["checks"]]
        for name in ("attached:connect4", "attached:sendmsg4", "attached:egress", "policy", "maps"):
            self.assertIn(name, names)
        self.assertTrue(all(c["ok"] is True for c in verified["checks"]), verified)
        self.assertIs(self.client.verify(cg, require_complete=True)["lockdown_complete"], True)
        self.assertIn("probe:udp4_connect_denied", names)
        self.assertIs(verified["cached"], False)
        cached = self.client.verify(cg, max_age=3600)
        self.assertIs(cached["cached"], True)
        self.assertEqual(cached["checks"], self.client.verify(cg)["checks"])

        updated = self.client.update(cg, NO_NETWORK)
        self.assertEqual(updated["cgroup"], cg)
        self.assertNotEqual(updated["generation"], reply["generation"])
        self.assertNotEqual(updated["digest"], digest)
        self.assertEqual(updated["entries"], 1)  # the model endpoint
        self.client.verify(cg, require_complete=True)

        raw = self.client.request("status")
        self.assertIs(raw["ok"], True)
        mine = [s for s in raw["sandboxes"] if s["cgroup"] == cg]
        self.assertEqual(len(mine), 1)
        self.assertEqual(mine[0]["policy"]["network_mode"], "no-network")
        self.assertEqual(mine[0]["digest"], updated["digest"])
        self.assertEqual(self.client.request("status", cgroup=cg, policy=None)["sandboxes"][0]["cgroup"], cg)

        self.assertEqual(self.client.detach(cg), {"ok": True, "cgroup": cg})
        self.assertNotIn(cg, [s["cgroup"] for s in self.client.status()["sandboxes"]])
        with self.assertRaises(BfbpfError) as caught:
            self.client.status(cg)
        self.assertEqual(caught.exception.code, "not_attached")

    def test_default_socket_from_environment(self) -> None:
        saved = os.environ.get("BFBPF_SOCKET")
        os.environ["BFBPF_SOCKET"] = SOCK
        try:
            client = Client()
            self.assertEqual(client.socket_path, SOCK)
            self.assertIs(client.status()["ok"], True)
        finally:
            if saved is None:
                del os.environ["BFBPF_SOCKET"]
            else:
                os.environ["BFBPF_SOCKET"] = saved

    def test_load_policy_file(self) -> None:
        cg = self.make_cgroup()
        path = os.path.join(WORK, "policy.json")
        with open(path, "w") as f:
            json.dump(ALLOWLIST, f)
        self.assertEqual(self.client.attach(cg, bfbpf_client.load_policy(path))["entries"], 2)
        with open(path, "w") as f:
            f.write('{"network_mode": "allowlist", "network_mode": "public"}')
        with self.assertRaises(BfbpfError) as caught:
            bfbpf_client.load_policy(path)
        self.assertEqual(caught.exception.code, "invalid_policy")
        self.assertIn("network_mode", caught.exception.message)


class TestErrors(DaemonCase):
    def assertCode(self, code: str, fn, *args, **kwargs) -> BfbpfError:
        with self.assertRaises(BfbpfError) as caught:
            fn(*args, **kwargs)
        self.assertEqual(caught.exception.code, code, caught.exception.message)
        self.assertTrue(caught.exception.message)
        return caught.exception

    def test_attach_twice(self) -> None:
        cg = self.make_cgroup()
        self.client.attach(cg, ALLOWLIST)
        e = self.assertCode("already_attached", self.client.attach, cg, NO_NETWORK)
        self.assertEqual(e.exit_status, 1)
        self.assertEqual(e.reply["ok"], False)
        # The first policy still holds.
        self.assertEqual(self.client.status(cg)["sandboxes"][0]["policy"]["network_mode"], "allowlist")

    def test_detach_unattached(self) -> None:
        cg = self.make_cgroup()
        self.assertCode("not_attached", self.client.detach, cg)
        self.assertCode("not_attached", self.client.update, cg, NO_NETWORK)
        self.assertCode("not_attached", self.client.verify, cg)

    def test_invalid_policy(self) -> None:
        cg = self.make_cgroup()
        bad = {"network_mode": "allowlist", "allowed_hosts": ["a.*.com"]}
        e = self.assertCode("invalid_policy", self.client.attach, cg, bad)
        self.assertIn("a.*.com", e.message)
        self.assertEqual(e.exit_status, 2)
        self.assertCode("not_attached", self.client.status, cg)
        # On update the sandbox keeps its policy.
        digest = self.client.attach(cg, ALLOWLIST)["digest"]
        self.assertIn("a.*.com", self.assertCode("invalid_policy", self.client.update, cg, bad).message)
        self.assertEqual(self.client.status(cg)["sandboxes"][0]["digest"], digest)

    def test_missing_cgroup(self) -> None:
        self.assertCode("no_cgroup", self.client.attach, os.path.join(CGBASE, "no-such-cgroup"), ALLOWLIST)

    def test_unknown_op(self) -> None:
        self.assertEqual(self.assertCode("unknown_op", self.client.request, "frobnicate").exit_status, 2)

    def test_bad_request(self) -> None:
        self.assertCode("bad_request", self.client.request, "status", colour="blue")

    def test_unreachable(self) -> None:
        e = self.assertCode("unreachable", Client(os.path.join(WORK, "nobody-here.sock"), timeout=5).status)
        self.assertIn("nobody-here.sock", e.message)
        # A socket file nobody listens on any more.
        stale = os.path.join(WORK, "stale.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(stale)
        listener.close()
        self.assertCode("unreachable", Client(stale, timeout=5).status)


class FakeDaemon:
    """A unix socket server that answers one request with canned bytes."""

    def __init__(self, answer: Optional[bytes]):
        self.path = os.path.join(WORK, f"fake-{id(self)}.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(1)
        self.answer = answer
        self.received = b""
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            while not self.received.endswith(b"\n"):
                chunk = conn.recv(4096)
                if not chunk:
                    break
                self.received += chunk
            if self.answer is None:
                time.sleep(2)  # never answer
            else:
                conn.sendall(self.answer)

    def close(self) -> None:
        self.thread.join(5)
        self.listener.close()
        os.unlink(self.path)


class TestTransport(unittest.TestCase):
    """Replies the real daemon never sends, from a fake one."""

    def exchange(self, answer: Optional[bytes], timeout: float = 5, op: str = "status", **fields):
        fake = FakeDaemon(answer)
        try:
            return fake, Client(fake.path, timeout=timeout).request(op, **fields)
        except BfbpfError as e:
            return fake, e
        finally:
            fake.close()

    def test_bad_reply(self) -> None:
        for answer in (b"not json\n", b"[1,2]\n", b'{"no_ok": 1}\n', b'{"ok": "yes"}\n', b'{"ok": false}\n', b"\xff\n"):
            _, e = self.exchange(answer)
            self.assertIsInstance(e, BfbpfError, answer)
            self.assertEqual(e.code, "bad_reply", answer)

    def test_closed_and_silent(self) -> None:
        _, e = self.exchange(b"")
        self.assertEqual(e.code, "unreachable")
        _, e = self.exchange(None, timeout=0.5)
        self.assertEqual(e.code, "timeout")

    def test_wire_format(self) -> None:
        fake, reply = self.exchange(b'{"ok":true,"sandboxes":[]}\n{"ok":false}\n', cgroup="/x", policy=None)
        self.assertEqual(reply, {"ok": True, "sandboxes": []})
        self.assertTrue(fake.received.endswith(b"\n"))
        self.assertEqual(fake.received.count(b"\n"), 1)
        self.assertEqual(json.loads(fake.received), {"op": "status", "cgroup": "/x"})

    def test_require_complete(self) -> None:
        incomplete = {
            "ok": True,
            "lockdown_complete": False,
            "checks": [
                {"name": "attached:connect4", "ok": True, "detail": "program id 7"},
                {"name": "packet_sockets", "ok": False, "detail": "process 42 holds CAP_NET_RAW"},
            ],
        }
        answer = json.dumps(incomplete).encode() + b"\n"
        _, reply = self.exchange(answer, op="verify", cgroup="/x")
        self.assertEqual(reply, incomplete)  # not raised without require_complete
        fake = FakeDaemon(answer)
        try:
            with self.assertRaises(BfbpfError) as caught:
                Client(fake.path, timeout=5).verify("/x", require_complete=True)
        finally:
            fake.close()
        e = caught.exception
        self.assertEqual(e.code, "lockdown_incomplete")
        self.assertIn("packet_sockets", e.message)
        self.assertIn("CAP_NET_RAW", e.message)
        self.assertNotIn("attached:connect4", e.message)
        self.assertEqual(e.reply, incomplete)


class TestEnforcement(DaemonCase):
    def test_allowlist_then_no_network(self) -> None:
        cg = self.make_cgroup()
        self.client.attach(cg, ALLOWLIST)
        self.client.verify(cg, require_complete=True)
        result = self.probe(cg)
        self.assertEqual(result["cgroup"], ["0::" + cg[len(bfbpf_client.cgroup_mount()) :]])
        self.assertEqual(result["denied"], errno.EPERM, result)
        self.assertEqual(result["allowed"], 0, result)

        self.client.update(cg, NO_NETWORK)
        result = self.probe(cg)
        self.assertEqual(result["denied"], errno.EPERM, result)
        self.assertEqual(result["allowed"], errno.EPERM, result)

        self.client.detach(cg)
        result = self.probe(cg)
        self.assertEqual((result["denied"], result["allowed"]), (0, 0), result)

    def test_verify_incomplete(self) -> None:
        """Where the kernel cannot refuse packet sockets per cgroup (no BPF LSM),
        a sandbox process holding CAP_NET_RAW makes the lockdown incomplete."""
        cg = self.make_cgroup()
        self.client.attach(cg, NO_NETWORK)
        names = [c["name"] for c in self.client.verify(cg, require_complete=True)["checks"]]
        if "packet_sockets" not in names:
            self.skipTest("this kernel refuses packet sockets per cgroup (BPF LSM): no incomplete state to provoke")
        child = self.spawn_in(cg, ["sleep", "60"])  # root, CAP_NET_RAW in its bounding set
        try:
            reply = self.client.verify(cg)  # a successful reply, not an exception
            self.assertIs(reply["ok"], True)
            self.assertIs(reply["lockdown_complete"], False)
            with self.assertRaises(BfbpfError) as caught:
                self.client.verify(cg, require_complete=True)
            e = caught.exception
            self.assertEqual(e.code, "lockdown_incomplete")
            self.assertIn("packet_sockets", e.message)
            self.assertIn(f"process {child.pid}", e.message)
            self.assertIs(e.reply["lockdown_complete"], False)
        finally:
            child.kill()
            child.wait()

    def test_pid_helpers(self) -> None:
        cg = self.make_cgroup()
        child = self.spawn_in(cg, ["sleep", "60"], own_netns=True)
        try:
            self.assertEqual(bfbpf_client.cgroup_of_pid(child.pid), cg)
            self.assertEqual(bfbpf_client.cgroup_of_pid(str(child.pid)), cg)
            netns = bfbpf_client.netns_of_pid(child.pid)
            self.assertEqual(netns, f"/proc/{child.pid}/ns/net")
            self.assertNotEqual(os.stat(netns).st_ino, os.stat("/proc/self/ns/net").st_ino)
            # attach_pid: the child's cgroup and netns; verify's probes run in that netns.
            self.assertEqual(self.client.attach_pid(child.pid, ALLOWLIST)["cgroup"], cg)
            self.assertEqual(self.client.status(cg)["sandboxes"][0]["netns"], netns)
            verified = self.client.verify(cg)
            probes = [c for c in verified["checks"] if c["name"].startswith("probe:")]
            self.assertTrue(probes, verified)
            # The child is root with every capability: it holds CAP_NET_ADMIN, can leave its
            # cgroup and, without BPF LSM, open packet sockets. Nothing else may fail.
            failed = [c["name"] for c in verified["checks"] if not c["ok"]]
            expected = ["net_admin", "cgroup_escape"]
            if any(c["name"] == "packet_sockets" for c in verified["checks"]):
                expected.insert(0, "packet_sockets")
            self.assertEqual(failed, expected, verified)
        finally:
            child.kill()
            child.wait()
        with self.assertRaises(BfbpfError) as caught:
            bfbpf_client.cgroup_of_pid(child.pid)
        self.assertEqual(caught.exception.code, "no_process")
        with self.assertRaises(BfbpfError) as caught:
            bfbpf_client.netns_of_pid(child.pid)
        self.assertEqual(caught.exception.code, "no_process")

    def test_invalid_pid(self) -> None:
        # 0 is `podman inspect`'s pid of a container that is not running: a BfbpfError
        # like every failure, bad_request as the CLI's `--pid 0` (exit 2), not ValueError.
        before = len(self.client.status()["sandboxes"])
        for pid in (0, "0", -1, "abc", "", True, None):
            for call in (
                lambda: self.client.attach_pid(pid, ALLOWLIST),
                lambda: bfbpf_client.cgroup_of_pid(pid),
                lambda: bfbpf_client.netns_of_pid(pid),
            ):
                with self.assertRaises(BfbpfError) as caught:
                    call()
                self.assertEqual(caught.exception.code, "bad_request", pid)
                self.assertEqual(caught.exception.exit_status, 2)
        with self.assertRaises(BfbpfError) as caught:
            self.client.attach_pid(0, ALLOWLIST)
        self.assertIn("not running", caught.exception.message)
        self.assertEqual(len(self.client.status()["sandboxes"]), before)

def main() -> int:
    if os.geteuid() != 0:
        print("test_client: must run as root (cgroups, bpffs)", file=sys.stderr)
        return 2
    program = unittest.main(exit=False, verbosity=2 if "-v" in sys.argv else 1)
    result = program.result
    if not result.wasSuccessful():
        tail = _daemon_log_tail()
        if tail:
            print("--- daemon.log (last 25 lines but libbpf's debug)", file=sys.stderr)
            sys.stderr.write(tail)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
