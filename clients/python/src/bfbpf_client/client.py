# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Client of the bfbpf daemon's control socket, for sandbox runners.

Python 3.8+, standard library only. Install the package from the checkout
(``pip install --no-build-isolation ./clients/python``, see
clients/python/README.md) and import ``bfbpf_client``. This module needs
nothing else of the package: a runner that vendors one file may still copy it
as ``bfbpf_client.py``.

    from bfbpf_client import Client, BfbpfError, cgroup_of_pid, netns_of_pid

    bf = Client()                                  # $BFBPF_SOCKET, else /run/bfbpf/bfbpf.sock
    cgroup = cgroup_of_pid(container_pid)          # /sys/fs/cgroup/system.slice/docker-….scope
    bf.attach(cgroup, {"network_mode": "public"},  # install phase
              netns=netns_of_pid(container_pid))   # (or: bf.attach_pid(container_pid, policy))
    bf.update(cgroup, task_policy)                 # relock: atomic, cuts open flows
    bf.verify(cgroup, require_complete=True)       # raises unless lockdown is complete
    ...
    bf.detach(cgroup)

Containers by name or id (Docker, Podman), whose policy the daemon keeps
across restarts: ``container_attach``, ``container_update`` (the relock),
``container_verify``, ``container_detach``.

The protocol (docs/operations.md, "The control socket"): one JSON object per
line in, one per line out; every reply has ``"ok"``; a failure carries
``"error": {"code", "message"}``. Each call opens its own connection, sends
one line, reads one line and closes: there is no connection state to lose,
the daemon drops clients idle for 30 s, and a restarted daemon is picked up by
the next call. A ``Client`` holds no socket and may be shared between threads.

Every failure is a ``BfbpfError`` with ``code`` and ``message``: the daemon's
codes (``already_attached``, ``not_attached``, ``invalid_policy``, ``nested``,
``no_cgroup``, ``kernel``, ``unknown_op``, ...) and the client's own:

- ``unreachable``: no daemon listens on the socket (not started, wrong path),
  or it closed the connection before it replied;
- ``timeout``: no reply within ``timeout`` seconds;
- ``bad_reply``: the reply is not one JSON object with a boolean ``ok``;
- ``lockdown_incomplete``: ``verify(..., require_complete=True)`` found
  failed checks (they are named in the message and in ``reply["checks"]``);
- ``no_process``, ``no_cgroup``: from ``cgroup_of_pid`` and ``netns_of_pid``
  (``no_cgroup`` also from the daemon: the cgroup does not exist);
- ``bad_request`` also from ``attach_pid``, ``cgroup_of_pid`` and
  ``netns_of_pid`` given a pid that is not a positive whole number: 0 is what
  ``podman inspect`` and ``docker inspect`` report for a container that is not
  running (the CLI's ``--pid 0`` fails the same way);
- ``invalid_policy`` also from ``load_policy`` (a policy file that is not one
  JSON object, or repeats a key).

After ``unreachable`` or ``timeout`` on ``attach``, ``update`` or ``detach``
the outcome is unknown (the daemon may have applied it): ask ``status``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Union

# The public names; bfbpf_client re-exports exactly these.
__all__ = [
    "BfbpfError",
    "Client",
    "DEFAULT_SOCKET",
    "DEFAULT_TIMEOUT",
    "MAX_REPLY_BYTES",
    "USAGE_CODES",
    "cgroup_mount",
    "cgroup_of_pid",
    "container_inspect",
    "container_runtime",
    "load_policy",
    "netns_of_pid",
]

DEFAULT_SOCKET = "/run/bfbpf/bfbpf.sock"
DEFAULT_TIMEOUT = 120.0
# The daemon refuses requests over 1 MiB; replies (status of many sandboxes)
# may be longer, but not without bound.
MAX_REPLY_BYTES = 64 << 20

# Codes that mean the request itself was wrong (the bfbpf CLI exits 2 on them).
USAGE_CODES = frozenset({"bad_json", "bad_request", "unknown_op", "invalid_policy"})

PathArg = Union[str, "os.PathLike[str]"]


class BfbpfError(Exception):
    """A failed request: ``code`` is machine-readable, ``message`` is for people.

    ``reply`` is the daemon's whole reply when there was one (for
    ``lockdown_incomplete``, the verify reply with its ``checks``), else None.
    """

    def __init__(self, code: str, message: str, reply: Optional[Dict[str, Any]] = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.reply = reply

    @property
    def exit_status(self) -> int:
        """The exit status the bfbpf CLI uses for this failure: 2 usage, 1 otherwise."""
        return 2 if self.code in USAGE_CODES else 1


class Client:
    """A client of one bfbpf daemon.

    ``socket_path`` defaults to ``$BFBPF_SOCKET``, else ``/run/bfbpf/bfbpf.sock``
    (the daemon's and the CLI's default). ``timeout`` bounds each request, from
    connect to the end of the reply, in seconds. ``verify`` runs checks in the
    kernel and may take a while on a busy host: keep the timeout generous.
    """

    def __init__(self, socket_path: Optional[PathArg] = None, timeout: float = DEFAULT_TIMEOUT):
        if socket_path is None:
            socket_path = os.environ.get("BFBPF_SOCKET") or DEFAULT_SOCKET
        self.socket_path: str = os.fspath(socket_path)
        self.timeout = float(timeout)

    def __repr__(self) -> str:
        return f"Client({self.socket_path!r}, timeout={self.timeout!r})"

    # ------------------------------------------------------------ the ops

    def attach(
        self, cgroup: PathArg, policy: Mapping[str, Any], netns: Optional[PathArg] = None
    ) -> Dict[str, Any]:
        """Attach a sandbox to ``cgroup`` (absolute, or relative to the cgroup2 mount).

        ``policy`` is the policy file's JSON as a dict (docs/policy.md).
        ``netns`` names the sandbox's network namespace (``/proc/PID/ns/net``,
        ``/run/netns/NAME``): the daemon holds it open, runs ``verify``'s live
        probes inside it, and (in a later version) serves the sandbox's DNS
        there; without it the probes run in the daemon's namespace.
        Returns the reply: ``cgroup`` (resolved), ``cgroup_id``, ``generation``,
        ``digest``, ``entries``. Attach before any process of the sandbox opens
        a socket: a socket belongs to the cgroup it was created in.
        Raises ``already_attached`` if the cgroup has a sandbox (use ``update``),
        ``nested`` if one is attached above or below it, ``no_netns`` if
        ``netns`` cannot be opened.
        """
        return self.request(
            "attach",
            cgroup=os.fspath(cgroup),
            policy=_policy_dict(policy),
            netns=None if netns is None else os.fspath(netns),
        )

    def attach_pid(self, pid: Union[int, str], policy: Mapping[str, Any]) -> Dict[str, Any]:
        """``attach`` to the cgroup and network namespace of process ``pid``
        (a container's init, from ``docker inspect -f '{{.State.Pid}}'``), like
        ``bfbpf attach --pid PID``."""
        return self.attach(cgroup_of_pid(pid), policy, netns=netns_of_pid(pid))

    def update(self, cgroup: PathArg, policy: Mapping[str, Any]) -> Dict[str, Any]:
        """Replace the policy of an attached sandbox, atomically; flows the new
        policy does not allow stop. Same reply as ``attach``; ``not_attached``
        if there is no sandbox."""
        return self.request("update", cgroup=os.fspath(cgroup), policy=_policy_dict(policy))

    def detach(self, cgroup: PathArg) -> Dict[str, Any]:
        """Remove the sandbox of ``cgroup``: its processes are no longer
        confined. Returns ``{"ok": true, "cgroup": path}``; ``not_attached``
        if there is none."""
        return self.request("detach", cgroup=os.fspath(cgroup))

    def status(self, cgroup: Optional[PathArg] = None) -> Dict[str, Any]:
        """Every attached sandbox, or the one of ``cgroup`` (``not_attached`` if
        it has none). The reply's ``sandboxes`` is a list of ``{cgroup,
        cgroup_id, generation, digest, policy, entries, hooks, netns}`` and,
        once the daemon's periodic check has run, ``lockdown: {ok, checked_at,
        age_seconds}``; ``policy`` is the canonical policy, or None when the
        daemon lost its state file."""
        if cgroup is None:
            return self.request("status")
        return self.request("status", cgroup=os.fspath(cgroup))

    def verify(
        self, cgroup: PathArg, require_complete: bool = False, max_age: Optional[int] = None
    ) -> Dict[str, Any]:
        """Check the lockdown of an attached sandbox.

        The reply has ``lockdown_complete``, ``checks`` (a list of ``{name, ok,
        detail}``: the programs attached, ``packet_sockets`` on kernels without
        BPF LSM, ``policy``, ``maps``, and ``probe:*`` live probes from inside
        the cgroup), ``cached`` and ``age_seconds``. With ``max_age`` (seconds)
        the daemon may answer from its last full verification if it is at most
        that old (and no periodic check failed since); without it every call
        runs the full verification.

        An incomplete lockdown is a successful reply: it is returned, not
        raised, unless ``require_complete`` is true, in which case
        ``BfbpfError(code="lockdown_incomplete")`` names the failed checks (and
        carries the reply in ``.reply``).
        """
        if max_age is not None and (isinstance(max_age, bool) or not isinstance(max_age, int) or max_age < 0):
            raise ValueError(f"max_age must be a whole number of seconds, not {max_age!r}")
        reply = self.request("verify", cgroup=os.fspath(cgroup), max_age=max_age)
        if require_complete and reply.get("lockdown_complete") is not True:
            failed = [c for c in reply.get("checks") or [] if not (isinstance(c, dict) and c.get("ok") is True)]
            names = "; ".join(
                f"{c.get('name', '?')}: {c.get('detail', '')}" if isinstance(c, dict) else repr(c) for c in failed
            )
            raise BfbpfError(
                "lockdown_incomplete",
                f"lockdown of {reply.get('cgroup', os.fspath(cgroup))} is not complete: "
                + (names or "the daemon reported it incomplete without a failed check"),
                reply,
            )
        return reply

    # ------------------------------------------------------- by container

    def container_attach(
        self, container: str, policy: Mapping[str, Any], runtime: Optional[str] = None
    ) -> Dict[str, Any]:
        """``attach`` to a running Docker or Podman container by name or id
        (``bfbpf attach --container``): its cgroup and network namespace are
        those of its process, and the daemon records its policy by container
        id, so that a restart, stop/start or restart policy gets the CURRENT
        policy back (docs/runner-integration.md). ``runtime`` is ``docker`` or
        ``podman``; default: the one installed. Raises ``no_container`` if it
        is not running. A container registered by the OCI hook at its start
        needs no attach: relock it with ``container_update``."""
        info = container_inspect(container, runtime)
        return self.request(
            "attach",
            cgroup=cgroup_of_pid(info["pid"]),
            netns=netns_of_pid(info["pid"]),
            policy=_policy_dict(policy),
            container=_container_ref(info),
        )

    def container_update(
        self, container: str, policy: Mapping[str, Any], runtime: Optional[str] = None
    ) -> Dict[str, Any]:
        """The relock of a container: ``update`` of its sandbox, and its record's
        policy, which its next start gets (never the install policy)."""
        info = container_inspect(container, runtime)
        return self.request(
            "update", cgroup=cgroup_of_pid(info["pid"]), policy=_policy_dict(policy), container=_container_ref(info)
        )

    def container_verify(
        self, container: str, runtime: Optional[str] = None, require_complete: bool = False
    ) -> Dict[str, Any]:
        """``verify`` of the container's sandbox (see ``verify``)."""
        info = container_inspect(container, runtime)
        return self.verify(cgroup_of_pid(info["pid"]), require_complete=require_complete)

    def container_detach(self, container: str, runtime: Optional[str] = None) -> Dict[str, Any]:
        """``detach`` of the container's sandbox; the daemon forgets its record."""
        info = container_inspect(container, runtime)
        return self.request("detach", cgroup=cgroup_of_pid(info["pid"]), container=_container_ref(info))

    # ------------------------------------------------------------ the wire

    def request(self, op: str, **fields: Any) -> Dict[str, Any]:
        """Send ``{"op": op, **fields}`` and return the reply (``ok`` is true).

        Fields whose value is None are left out. Raises ``BfbpfError`` with the
        daemon's code when the reply has ``ok: false``, and ``unreachable``,
        ``timeout`` or ``bad_reply`` on transport failures. A field that JSON
        cannot encode raises ``TypeError`` (a bug in the caller).
        """
        message: Dict[str, Any] = {"op": op}
        message.update({k: v for k, v in fields.items() if v is not None})
        line = json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"
        reply = self._exchange(line)
        if reply.get("ok") is True:
            return reply
        error = reply.get("error")
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            raise BfbpfError("bad_reply", f"the daemon refused {op!r} without an error object: {reply!r}", reply)
        raise BfbpfError(error["code"], str(error.get("message", "")), reply)

    def _exchange(self, line: bytes) -> Dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                sock.settimeout(self.timeout)
                sock.connect(self.socket_path)
            except socket.timeout:
                raise BfbpfError(
                    "timeout", f"connecting to the bfbpf daemon at {self.socket_path}: no answer within {self.timeout:g} s"
                ) from None
            except OSError as e:
                raise BfbpfError(
                    "unreachable",
                    f"cannot reach the bfbpf daemon at {self.socket_path}: {e.strerror or e} "
                    "(start it with 'bfbpf daemon', or pass the socket path / set BFBPF_SOCKET)",
                ) from None
            try:
                _remaining(sock, deadline, self.timeout)
                sock.sendall(line)
                data = bytearray()
                while b"\n" not in data:
                    _remaining(sock, deadline, self.timeout)
                    chunk = sock.recv(65536)
                    if not chunk:
                        raise BfbpfError(
                            "unreachable", f"the bfbpf daemon at {self.socket_path} closed the connection without a reply"
                        )
                    data += chunk
                    if len(data) > MAX_REPLY_BYTES:
                        raise BfbpfError("bad_reply", f"the reply is longer than {MAX_REPLY_BYTES} bytes")
            except socket.timeout:
                raise BfbpfError(
                    "timeout", f"the bfbpf daemon at {self.socket_path} did not answer within {self.timeout:g} s"
                ) from None
            except OSError as e:
                raise BfbpfError(
                    "unreachable", f"talking to the bfbpf daemon at {self.socket_path}: {e.strerror or e}"
                ) from None
        finally:
            sock.close()
        text = bytes(data[: data.index(b"\n")])
        try:
            reply = json.loads(text.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise BfbpfError("bad_reply", f"the daemon sent an invalid reply ({e}): {text[:200]!r}") from None
        if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
            raise BfbpfError("bad_reply", f"the daemon's reply is not an object with a boolean 'ok': {text[:200]!r}")
        return reply


def _remaining(sock: socket.socket, deadline: float, timeout: float) -> None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout()
    sock.settimeout(left)


def _policy_dict(policy: Mapping[str, Any]) -> Dict[str, Any]:
    if not isinstance(policy, Mapping):
        raise TypeError(f"policy must be a dict (the policy file's JSON), not {type(policy).__name__}")
    return dict(policy)


# ---------------------------------------------------------------- helpers


def load_policy(path: PathArg) -> Dict[str, Any]:
    """Read a policy file as the daemon would: one JSON object, no repeated key.

    (``json.load`` would silently keep the last of two equal keys; the bfbpf
    CLI refuses such a file, and so does this.) The content is not validated
    here: the daemon does that, with ``invalid_policy``.
    """

    def no_duplicates(pairs: List[Any]) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise BfbpfError("invalid_policy", f"{os.fspath(path)}: duplicate key {key!r}")
            out[key] = value
        return out

    try:
        with open(path, encoding="utf-8") as f:
            policy = json.load(f, object_pairs_hook=no_duplicates)
    except ValueError as e:
        raise BfbpfError("invalid_policy", f"{os.fspath(path)}: invalid JSON: {e}") from None
    if not isinstance(policy, dict):
        raise BfbpfError("invalid_policy", f"{os.fspath(path)}: a policy is a JSON object")
    return policy


def _unescape_mountinfo(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash as \040, \011, \012, \134.
    out, i = [], 0
    while i < len(field):
        code = field[i + 1 : i + 4]
        if field[i] == "\\" and len(code) == 3 and all(c in "01234567" for c in code):
            out.append(chr(int(code, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def cgroup_mount(mountinfo: PathArg = "/proc/self/mountinfo") -> str:
    """The mount point of the whole cgroup v2 hierarchy, from ``mountinfo``.

    The first mount of fstype ``cgroup2`` whose root is ``/`` (as the daemon
    chooses): ``/sys/fs/cgroup`` on most systems, ``/sys/fs/cgroup/unified``
    on hybrid ones. Never assumed.
    """
    try:
        with open(mountinfo, encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                # ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPER
                head, sep, tail = line.partition(" - ")
                fields = head.split()
                if not sep or len(fields) < 5 or tail.split()[:1] != ["cgroup2"]:
                    continue
                if _unescape_mountinfo(fields[3]) != "/":
                    continue  # a bind mount of a subtree, not the hierarchy
                return _unescape_mountinfo(fields[4])
    except OSError as e:
        raise BfbpfError("no_cgroup", f"cannot read {os.fspath(mountinfo)}: {e.strerror or e}") from None
    raise BfbpfError("no_cgroup", "no cgroup2 mount in /proc/self/mountinfo (bfbpf needs cgroup v2)")


def _check_pid(pid: Union[int, str]) -> int:
    # Runners pass what their container engine reports: 0 is `podman inspect`'s
    # (and docker's) pid of a container that is not running. A BfbpfError like
    # every other failure, with the code of the CLI's `--pid 0` (exit 2).
    given = pid
    if isinstance(pid, bool) or not isinstance(pid, int):
        try:
            pid = int(pid, 10) if isinstance(pid, str) else int(pid)
        except (TypeError, ValueError):
            raise BfbpfError("bad_request", f"not a process id: {given!r}") from None
        if isinstance(given, bool):
            raise BfbpfError("bad_request", f"not a process id: {given!r}")
    if pid <= 0:
        raise BfbpfError(
            "bad_request",
            f"not a process id: {given!r}"
            + (" (0 is the pid a container engine reports for a container that is not running)" if pid == 0 else ""),
        )
    return pid


def cgroup_of_pid(pid: Union[int, str]) -> str:
    """The cgroup v2 directory of process ``pid``, as an absolute path.

    Reads the ``0::/path`` line of ``/proc/PID/cgroup`` and joins it with the
    cgroup2 mount found in ``/proc/self/mountinfo``. The path is as seen from
    the caller's cgroup namespace: call it from the host's (the runner's
    usual place), not from inside a container. Raises ``BfbpfError`` with
    ``no_process`` if the process does not exist, ``no_cgroup`` if it has no
    cgroup v2 (a v1-only system) or its cgroup was removed.
    """
    pid = _check_pid(pid)
    mount = cgroup_mount()
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except (FileNotFoundError, ProcessLookupError):
        raise BfbpfError("no_process", f"process {pid} does not exist") from None
    except OSError as e:
        raise BfbpfError("no_process", f"process {pid}: cannot read /proc/{pid}/cgroup: {e.strerror or e}") from None
    for line in lines:
        if not line.startswith("0::"):
            continue
        path = line[3:]
        if path.endswith(" (deleted)"):
            raise BfbpfError("no_cgroup", f"process {pid}: its cgroup {path[:-10]} was removed")
        if not path.startswith("/") or "/../" in path + "/":
            raise BfbpfError(
                "no_cgroup",
                f"process {pid}: its cgroup {path} is outside this cgroup namespace (run this from the host's)",
            )
        return mount if path == "/" else mount.rstrip("/") + path
    raise BfbpfError("no_cgroup", f"process {pid} has no cgroup v2 (no '0::' line in /proc/{pid}/cgroup)")


def netns_of_pid(pid: Union[int, str]) -> str:
    """``/proc/PID/ns/net``: the network namespace of process ``pid`` (for
    ``bfbpf attach --netns``). Raises ``BfbpfError("no_process")`` if the
    process does not exist. The path stays valid only while the process lives:
    bind-mount it (``/run/netns/NAME``) to keep the namespace by name."""
    pid = _check_pid(pid)
    path = f"/proc/{pid}/ns/net"
    if not os.path.lexists(f"/proc/{pid}"):
        raise BfbpfError("no_process", f"process {pid} does not exist")
    return path


def _container_ref(info: Mapping[str, Any]) -> Dict[str, Any]:
    return {"id": info["id"], "name": info["name"], "runtime": info["runtime"]}


def container_runtime(runtime: Optional[str] = None) -> str:
    """``runtime`` if given, else the only one of ``docker`` and ``podman`` on
    PATH (``no_runtime`` if neither is, ``bad_request`` if both are)."""
    if runtime is not None:
        if runtime not in ("docker", "podman"):
            raise ValueError(f"runtime must be docker or podman, not {runtime!r}")
        return runtime
    found = [r for r in ("docker", "podman") if shutil.which(r)]
    if not found:
        raise BfbpfError("no_runtime", "neither docker nor podman is on PATH")
    if len(found) > 1:
        raise BfbpfError("bad_request", "both docker and podman are installed: say which (runtime=...)")
    return found[0]


def container_inspect(container: str, runtime: Optional[str] = None) -> Dict[str, Any]:
    """``{"id", "name", "runtime", "pid"}`` of a running container, from its
    runtime's client (``DOCKER_HOST``, ``CONTAINER_HOST`` and the runtime's
    configuration apply). Raises ``no_container`` if it does not exist or is
    not running."""
    runtime = container_runtime(runtime)
    try:
        done = subprocess.run(
            [runtime, "container", "inspect", "--format", "{{.State.Pid}} {{.Id}} {{.Name}}", "--", container],
            capture_output=True,
            text=True,
            timeout=DEFAULT_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BfbpfError("no_runtime", f"{runtime}: {e}") from None
    if done.returncode != 0:
        raise BfbpfError("no_container", f"{runtime}: {(done.stderr or done.stdout).strip()}")
    fields = done.stdout.split()
    if len(fields) != 3 or not fields[0].isdigit():
        raise BfbpfError("no_container", f"{runtime}: unexpected answer to inspect: {done.stdout.strip()!r}")
    pid, cid, name = int(fields[0]), fields[1], fields[2].lstrip("/")
    if pid == 0:
        raise BfbpfError("no_container", f"{runtime} container {name} ({cid[:12]}) is not running")
    return {"id": cid, "name": name, "runtime": runtime, "pid": pid}


# -------------------------------------------------------------------- CLI


def _main(argv: List[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="bfbpf-client",
        description="Talk to the bfbpf daemon (prints the reply as one JSON line). "
        "Exit 0 success (verify: lockdown complete), 1 failure, 2 bad usage or invalid policy.",
    )
    parser.add_argument("op", help="attach, update, detach, status, verify, or any op for the raw protocol")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--cgroup", help="cgroup v2 directory (absolute, or relative to the cgroup2 mount)")
    target.add_argument("--pid", help="that process's cgroup v2")
    parser.add_argument("--policy", metavar="FILE.json", help="policy file (attach, update)")
    parser.add_argument("--netns", help="attach: the sandbox's network namespace (default with --pid: its own)")
    parser.add_argument("--max-age", type=int, metavar="SECONDS", help="verify: a cached result this fresh will do")
    parser.add_argument("--socket", help="control socket (default $BFBPF_SOCKET, else %s)" % DEFAULT_SOCKET)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds (default %(default)g)")
    args = parser.parse_args(argv)
    try:
        cgroup = cgroup_of_pid(args.pid) if args.pid else args.cgroup
        policy = load_policy(args.policy) if args.policy else None
        client = Client(args.socket, timeout=args.timeout)
        netns = args.netns
        if netns is None and args.pid and args.op == "attach":
            netns = netns_of_pid(args.pid)
        reply = client.request(args.op, cgroup=cgroup, policy=policy, netns=netns, max_age=args.max_age)
    except BfbpfError as e:
        if e.reply is not None:
            print(json.dumps(e.reply, separators=(",", ":")))
        print(f"bfbpf-client: {e.code}: {e.message}", file=sys.stderr)
        return e.exit_status
    except ValueError as e:
        print(f"bfbpf-client: {e}", file=sys.stderr)
        return 2
    print(json.dumps(reply, separators=(",", ":")))
    if args.op == "verify" and reply.get("lockdown_complete") is not True:
        print(f"bfbpf-client: lockdown of {reply.get('cgroup', cgroup)} is not complete", file=sys.stderr)
        return 1
    return 0


def main() -> None:
    """The ``bfbpf-client`` command and ``python3 -m bfbpf_client``."""
    sys.exit(_main(sys.argv[1:]))


if __name__ == "__main__":
    main()
