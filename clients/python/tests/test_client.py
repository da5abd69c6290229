# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""bfbpf_client against the real daemon (root), and against fake daemons for
replies the real one never sends (no root).

    python3 -m pytest clients/python/tests        # make pytest

Enforcement is proven with UDP connects (no packet is sent) from a child
process that joins the sandbox cgroup before it starts and runs in a network
namespace of its own, where 198.18.0.1/15 sits on lo: nothing can leave the
host, and the test does not depend on the host's routes.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import socket
import tempfile
import threading
import time
from typing import Iterator, Optional

import bfbpf_client
import pytest
from bfbpf_client import BfbpfError, Client
from support import ALLOWLIST, NO_NETWORK, expect_code, probe, spawn_in


def test_whole_api(client: Client, make_cgroup) -> None:
    cg = make_cgroup()
    relative = os.path.relpath(cg, bfbpf_client.cgroup_mount())

    reply = client.attach(cg, ALLOWLIST)
    assert reply["ok"] is True
    assert reply["cgroup"] == cg
    assert reply["cgroup_id"] == os.stat(cg).st_ino
    assert reply["entries"] == 2  # the /24 and the model endpoint
    assert isinstance(reply["generation"], int)
    digest = reply["digest"]
    assert re.fullmatch(r"[0-9a-f]{16}", digest)

    listed = {s["cgroup"]: s for s in client.status()["sandboxes"]}
    sandbox = listed[cg]
    assert sandbox["policy"]["network_mode"] == "allowlist"
    assert sandbox["policy"]["allowed_hosts"] == ["198.18.0.0/24"]
    assert sandbox["policy"]["model_endpoints"] == ["198.18.7.1:4000"]
    assert sandbox["digest"] == digest
    assert "connect4" in sandbox["hooks"]

    assert [s["cgroup"] for s in client.status(cg)["sandboxes"]] == [cg]
    assert client.status(relative)["sandboxes"][0]["cgroup"] == cg

    verified = client.verify(cg)
    assert verified["lockdown_complete"] is True, verified
    names = [c["name"] for c in verified["checks"]]
    for name in ("attached:connect4", "attached:sendmsg4", "attached:egress", "policy", "maps"):
        assert name in names
    assert all(c["ok"] is True for c in verified["checks"]), verified
    assert client.verify(cg, require_complete=True)["lockdown_complete"] is True
    assert "probe:udp4_connect_denied" in names
    assert verified["cached"] is False
    cached = client.verify(cg, max_age=3600)
    assert cached["cached"] is True
    assert cached["checks"] == client.verify(cg)["checks"]

    updated = client.update(cg, NO_NETWORK)
    assert updated["cgroup"] == cg
    assert updated["generation"] != reply["generation"]
    assert updated["digest"] != digest
    assert updated["entries"] == 1  # the model endpoint
    client.verify(cg, require_complete=True)

    raw = client.request("status")
    assert raw["ok"] is True
    mine = [s for s in raw["sandboxes"] if s["cgroup"] == cg]
    assert len(mine) == 1
    assert mine[0]["policy"]["network_mode"] == "no-network"
    assert mine[0]["digest"] == updated["digest"]
    assert client.request("status", cgroup=cg, policy=None)["sandboxes"][0]["cgroup"] == cg

    assert client.detach(cg) == {"ok": True, "cgroup": cg}
    assert cg not in [s["cgroup"] for s in client.status()["sandboxes"]]
    expect_code("not_attached", client.status, cg)


def test_default_socket_from_environment(daemon, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BFBPF_SOCKET", daemon.sock)
    client = Client()
    assert client.socket_path == daemon.sock
    assert client.status()["ok"] is True
    monkeypatch.delenv("BFBPF_SOCKET")
    assert Client().socket_path == bfbpf_client.DEFAULT_SOCKET


def test_load_policy_file(client: Client, make_cgroup, tmp_path) -> None:
    cg = make_cgroup()
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(ALLOWLIST))
    assert client.attach(cg, bfbpf_client.load_policy(path))["entries"] == 2
    path.write_text('{"network_mode": "allowlist", "network_mode": "public"}')
    assert "network_mode" in expect_code("invalid_policy", bfbpf_client.load_policy, path).message
    path.write_text('["allowlist"]')
    expect_code("invalid_policy", bfbpf_client.load_policy, path)
    path.write_text('{"network_mode": ')
    assert "invalid JSON" in expect_code("invalid_policy", bfbpf_client.load_policy, path).message


# ------------------------------------------------------------------ errors


def test_attach_twice(client: Client, make_cgroup) -> None:
    cg = make_cgroup()
    client.attach(cg, ALLOWLIST)
    e = expect_code("already_attached", client.attach, cg, NO_NETWORK)
    assert e.exit_status == 1
    assert e.reply is not None and e.reply["ok"] is False
    # The first policy still holds.
    assert client.status(cg)["sandboxes"][0]["policy"]["network_mode"] == "allowlist"


def test_detach_unattached(client: Client, make_cgroup) -> None:
    cg = make_cgroup()
    expect_code("not_attached", client.detach, cg)
    expect_code("not_attached", client.update, cg, NO_NETWORK)
    expect_code("not_attached", client.verify, cg)


@pytest.mark.parametrize(
    "bad, says",
    [
        ({"network_mode": "allowlist", "allowed_hosts": ["a.*.com"]}, "a.*.com"),
        ({"network_mode": "allowlist", "allowed_hosts": ["10.0.0.0/33"]}, "10.0.0.0/33"),
        ({"network_mode": "everything"}, "everything"),
        ({"network_mode": "public", "colour": "blue"}, "colour"),
    ],
)
def test_invalid_policy(client: Client, make_cgroup, bad, says) -> None:
    cg = make_cgroup()
    e = expect_code("invalid_policy", client.attach, cg, bad)
    assert says in e.message
    assert e.exit_status == 2
    expect_code("not_attached", client.status, cg)
    # On update the sandbox keeps its policy.
    digest = client.attach(cg, ALLOWLIST)["digest"]
    assert says in expect_code("invalid_policy", client.update, cg, bad).message
    assert client.status(cg)["sandboxes"][0]["digest"] == digest


def test_policy_not_a_mapping(client: Client, make_cgroup) -> None:
    with pytest.raises(TypeError):
        client.attach(make_cgroup(), ["network_mode", "public"])  # type: ignore[arg-type]


def test_missing_cgroup(daemon, client: Client) -> None:
    expect_code("no_cgroup", client.attach, os.path.join(daemon.cgbase, "no-such-cgroup"), ALLOWLIST)


def test_unknown_op(client: Client) -> None:
    assert expect_code("unknown_op", client.request, "frobnicate").exit_status == 2


def test_bad_request(client: Client) -> None:
    expect_code("bad_request", client.request, "status", colour="blue")


def test_unreachable(sockdir) -> None:
    e = expect_code("unreachable", Client(os.path.join(sockdir, "nobody-here.sock"), timeout=5).status)
    assert "nobody-here.sock" in e.message
    # A socket file nobody listens on any more.
    stale = os.path.join(sockdir, "stale.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(stale)
    listener.close()
    expect_code("unreachable", Client(stale, timeout=5).status)


# --------------------------------------------------------------- transport


class FakeDaemon:
    """A unix socket server that answers one request with canned bytes."""

    def __init__(self, directory: str, answer: Optional[bytes]):
        self.path = os.path.join(directory, f"fake-{id(self)}.sock")
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


@pytest.fixture
def sockdir() -> Iterator[str]:
    """A short directory for fake daemons' sockets (sun_path holds 108 bytes: tmp_path may be longer)."""
    path = tempfile.mkdtemp(prefix="bfpy.")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def exchange(directory, answer: Optional[bytes], timeout: float = 5, op: str = "status", **fields):
    fake = FakeDaemon(str(directory), answer)
    try:
        return fake, Client(fake.path, timeout=timeout).request(op, **fields)
    except BfbpfError as e:
        return fake, e
    finally:
        fake.close()


@pytest.mark.parametrize(
    "answer", [b"not json\n", b"[1,2]\n", b'{"no_ok": 1}\n', b'{"ok": "yes"}\n', b'{"ok": false}\n', b"\xff\n"]
)
def test_bad_reply(sockdir, answer: bytes) -> None:
    _, e = exchange(sockdir, answer)
    assert isinstance(e, BfbpfError)
    assert e.code == "bad_reply"


def test_closed_and_silent(sockdir) -> None:
    _, e = exchange(sockdir, b"")
    assert e.code == "unreachable"
    _, e = exchange(sockdir, None, timeout=0.5)
    assert e.code == "timeout"


def test_wire_format(sockdir) -> None:
    fake, reply = exchange(sockdir, b'{"ok":true,"sandboxes":[]}\n{"ok":false}\n', cgroup="/x", policy=None)
    assert reply == {"ok": True, "sandboxes": []}
    assert fake.received.endswith(b"\n")
    assert fake.received.count(b"\n") == 1
    assert json.loads(fake.received) == {"op": "status", "cgroup": "/x"}


def test_require_complete(sockdir) -> None:
    incomplete = {
        "ok": True,
        "lockdown_complete": False,
        "checks": [
            {"name": "attached:connect4", "ok": True, "detail": "program id 7"},
            {"name": "packet_sockets", "ok": False, "detail": "process 42 holds CAP_NET_RAW"},
        ],
    }
    answer = json.dumps(incomplete).encode() + b"\n"
    _, reply = exchange(sockdir, answer, op="verify", cgroup="/x")
    assert reply == incomplete  # not raised without require_complete
    fake = FakeDaemon(sockdir, answer)
    try:
        e = expect_code("lockdown_incomplete", Client(fake.path, timeout=5).verify, "/x", require_complete=True)
    finally:
        fake.close()
    assert "packet_sockets" in e.message
    assert "CAP_NET_RAW" in e.message
    assert "attached:connect4" not in e.message
    assert e.reply == incomplete


def test_verify_max_age_checked() -> None:
    for bad in (-1, 1.5, True, "10"):
        with pytest.raises(ValueError):
            Client("/nonexistent", timeout=1).verify("/x", max_age=bad)  # type: ignore[arg-type]


# ------------------------------------------------------------- enforcement


def test_allowlist_then_no_network(client: Client, make_cgroup) -> None:
    cg = make_cgroup()
    client.attach(cg, ALLOWLIST)
    client.verify(cg, require_complete=True)
    result = probe(cg)
    assert result["cgroup"] == ["0::" + cg[len(bfbpf_client.cgroup_mount()) :]]
    assert result["denied"] == errno.EPERM, result
    assert result["allowed"] == 0, result

    client.update(cg, NO_NETWORK)
    result = probe(cg)
    assert (result["denied"], result["allowed"]) == (errno.EPERM, errno.EPERM), result

    client.detach(cg)
    result = probe(cg)
    assert (result["denied"], result["allowed"]) == (0, 0), result


def test_verify_incomplete(client: Client, make_cgroup) -> None:
    """Where the kernel cannot refuse packet sockets per cgroup (no BPF LSM),
    a sandbox process holding CAP_NET_RAW makes the lockdown incomplete."""
    cg = make_cgroup()
    client.attach(cg, NO_NETWORK)
    names = [c["name"] for c in client.verify(cg, require_complete=True)["checks"]]
    if "packet_sockets" not in names:
        pytest.skip("this kernel refuses packet sockets per cgroup (BPF LSM): no incomplete state to provoke")
    child = spawn_in(cg, ["sleep", "60"])  # root, CAP_NET_RAW in its bounding set
    try:
        reply = client.verify(cg)  # a successful reply, not an exception
        assert reply["ok"] is True
        assert reply["lockdown_complete"] is False
        e = expect_code("lockdown_incomplete", client.verify, cg, require_complete=True)
        assert "packet_sockets" in e.message
        assert f"process {child.pid}" in e.message
        assert e.reply is not None and e.reply["lockdown_complete"] is False
    finally:
        child.kill()
        child.wait()


def test_pid_helpers(client: Client, make_cgroup) -> None:
    cg = make_cgroup()
    child = spawn_in(cg, ["sleep", "60"], own_netns=True)
    try:
        assert bfbpf_client.cgroup_of_pid(child.pid) == cg
        assert bfbpf_client.cgroup_of_pid(str(child.pid)) == cg
        netns = bfbpf_client.netns_of_pid(child.pid)
        assert netns == f"/proc/{child.pid}/ns/net"
        assert os.stat(netns).st_ino != os.stat("/proc/self/ns/net").st_ino
        # attach_pid: the child's cgroup and netns; verify's probes run in that netns.
        assert client.attach_pid(child.pid, ALLOWLIST)["cgroup"] == cg
        assert client.status(cg)["sandboxes"][0]["netns"] == netns
        verified = client.verify(cg)
        assert [c for c in verified["checks"] if c["name"].startswith("probe:")], verified
        # The child is root with every capability: it holds CAP_NET_ADMIN, can leave its
        # cgroup and, without BPF LSM, open packet sockets. Its new netns's loopback is
        # down, so the responder cannot listen there: verify's real DNS query fails
        # (docs/dns.md). Nothing else may fail.
        failed = [c["name"] for c in verified["checks"] if not c["ok"]]
        expected = ["net_admin", "cgroup_escape", "dns"]
        dns = next(c for c in verified["checks"] if c["name"] == "dns")
        assert "unreachable" in dns["detail"], dns
        if any(c["name"] == "packet_sockets" for c in verified["checks"]):
            expected.insert(0, "packet_sockets")
        assert failed == expected, verified
    finally:
        child.kill()
        child.wait()
    expect_code("no_process", bfbpf_client.cgroup_of_pid, child.pid)
    expect_code("no_process", bfbpf_client.netns_of_pid, child.pid)


@pytest.mark.parametrize("pid", [0, "0", -1, "abc", "", True, None])
def test_invalid_pid(client: Client, pid) -> None:
    # 0 is `podman inspect`'s pid of a container that is not running: a BfbpfError
    # like every failure, bad_request as the CLI's `--pid 0` (exit 2), not ValueError.
    before = len(client.status()["sandboxes"])
    for call in (
        lambda: client.attach_pid(pid, ALLOWLIST),
        lambda: bfbpf_client.cgroup_of_pid(pid),
        lambda: bfbpf_client.netns_of_pid(pid),
    ):
        assert expect_code("bad_request", call).exit_status == 2
    if pid == 0:
        assert "not running" in expect_code("bad_request", client.attach_pid, 0, ALLOWLIST).message
    assert len(client.status()["sandboxes"]) == before


def test_container_helpers_without_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    """The container helpers' errors when no engine answers (the real engines are
    test-13-containers.sh's: Podman there relocks through container_update)."""
    monkeypatch.setenv("PATH", "/nonexistent")
    assert expect_code("no_runtime", bfbpf_client.container_runtime).exit_status == 1
    with pytest.raises(ValueError):
        bfbpf_client.container_runtime("lxc")
    expect_code("no_runtime", Client("/nonexistent").container_verify, "web")
    expect_code("no_runtime", bfbpf_client.container_inspect, "web", "podman")
