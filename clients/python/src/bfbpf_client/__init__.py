# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""bfbpf_client: the Python client of the bfbpf daemon's control socket.

    from bfbpf_client import Client, BfbpfError, cgroup_of_pid, netns_of_pid

Everything lives in ``bfbpf_client.client``; this re-exports its public names.
See clients/python/README.md and docs/runner-integration.md.
"""

from .client import *  # noqa: F401,F403 (exactly client.__all__)
from .client import __all__
