# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""bfbpf_client: the Python client of the bfbpf daemon's control socket.

    from bfbpf_client import Client, BfbpfError, cgroup_of_pid, netns_of_pid

Everything lives in ``bfbpf_client.client``; this re-exports its public names.
See clients/python/README.md and docs/runner-integration.md.
"""

from .client import (
    DEFAULT_SOCKET,
    DEFAULT_TIMEOUT,
    MAX_REPLY_BYTES,
    USAGE_CODES,
    BfbpfError,
    Client,
    cgroup_mount,
    cgroup_of_pid,
    container_inspect,
    container_runtime,
    load_policy,
    netns_of_pid,
)

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
