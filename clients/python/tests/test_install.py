# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The package as a user installs it: pip from the checkout, with Debian's
setuptools, without build isolation and without any index, into a virtual
environment of the test's own; then its command and module, against the real
daemon (root) or alone (not root)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Dict, Iterator, List

import pytest
from support import ALLOWLIST, PACKAGE_ROOT

try:
    import tomllib  # Python 3.11
except ImportError:  # pragma: no cover
    tomllib = None  # type: ignore[assignment]


def _clean_env() -> Dict[str, str]:
    # Nothing of the caller's may point Python at the checkout's sources.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "BFBPF_SOCKET"}
    env["PIP_NO_INPUT"] = "1"
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A venv (with the system's site-packages, where Debian's pip and setuptools
    are) holding the package installed from the checkout."""
    root = tmp_path_factory.mktemp("venv")
    env_dir = str(root / "env")
    # /usr/bin/python3: Debian's, whose pip and setuptools are the packaged ones.
    base = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", "--system-site-packages", env_dir], check=True)
    source = PACKAGE_ROOT
    made = [p for p in ("build", os.path.join("src", "bfbpf_client.egg-info")) if not os.path.exists(os.path.join(source, p))]
    if not os.access(source, os.W_OK):
        # setuptools builds in the source tree: a read-only checkout is installed from a copy.
        source = str(root / "src")
        shutil.copytree(PACKAGE_ROOT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        for top, dirs, _ in os.walk(source):  # the copy keeps the modes: make it writable
            for d in [top] + [os.path.join(top, d) for d in dirs]:
                os.chmod(d, os.stat(d).st_mode | 0o700)
        made = []
    try:
        done = subprocess.run(
            [f"{env_dir}/bin/python", "-m", "pip", "install", "--no-build-isolation", "--no-index", source],
            cwd=str(root),
            env=_clean_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"pip install failed:\n{done.stdout}\n{done.stderr}"
        assert "Successfully installed bfbpf-client" in done.stdout, done.stdout
    finally:
        for path in made:  # only what this install created, never a developer's build
            shutil.rmtree(os.path.join(PACKAGE_ROOT, path), ignore_errors=True)
    yield env_dir


def run(argv: List[str], cwd: str, check_rc: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == check_rc, f"{argv}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def test_installed_package(venv: str) -> None:
    code = (
        "import json, importlib.metadata as m, os, bfbpf_client, bfbpf_client.client as c;"
        "print(json.dumps({'file': bfbpf_client.__file__, 'version': m.version('bfbpf-client'),"
        "'requires': m.requires('bfbpf-client'), 'names': sorted(bfbpf_client.__all__),"
        "'typed': os.path.exists(os.path.join(os.path.dirname(bfbpf_client.__file__), 'py.typed')),"
        "'same': bfbpf_client.Client is c.Client}))"
    )
    info = json.loads(run([f"{venv}/bin/python", "-c", code], cwd=venv).stdout)
    assert info["file"].startswith(os.path.realpath(venv) + "/") or info["file"].startswith(venv + "/"), info
    assert info["typed"] is True
    assert info["same"] is True
    assert not info["requires"], "the client depends on the standard library only"
    if tomllib is not None:
        with open(os.path.join(PACKAGE_ROOT, "pyproject.toml"), "rb") as f:
            assert info["version"] == tomllib.load(f)["project"]["version"]
    for name in ("Client", "BfbpfError", "cgroup_of_pid", "netns_of_pid", "load_policy", "container_inspect"):
        assert name in info["names"]
    for argv in ([f"{venv}/bin/bfbpf-client", "--help"], [f"{venv}/bin/python", "-m", "bfbpf_client", "--help"]):
        assert "--policy" in run(argv, cwd=venv).stdout


def test_installed_command_unreachable(venv: str, tmp_path) -> None:
    done = run([f"{venv}/bin/bfbpf-client", "status", "--socket", str(tmp_path / "none.sock")], cwd=venv, check_rc=1)
    assert "bfbpf-client: unreachable:" in done.stderr


def test_installed_command_against_daemon(venv: str, daemon, make_cgroup, tmp_path) -> None:
    cg = make_cgroup()
    cli = [f"{venv}/bin/bfbpf-client"]
    module = [f"{venv}/bin/python", "-m", "bfbpf_client"]
    sock = ["--socket", daemon.sock]
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(ALLOWLIST))
    bad = tmp_path / "bad.json"
    bad.write_text('{"network_mode": "allowlist", "allowed_hosts": ["a.*.com"]}')

    done = run(cli + ["attach", "--cgroup", cg, "--policy", str(bad)] + sock, cwd=venv, check_rc=2)
    assert "invalid_policy" in done.stderr and json.loads(done.stdout)["ok"] is False
    attached = json.loads(run(cli + ["attach", "--cgroup", cg, "--policy", str(policy)] + sock, cwd=venv).stdout)
    assert (attached["cgroup"], attached["entries"]) == (cg, 2)
    verified = json.loads(run(module + ["verify", "--cgroup", cg] + sock, cwd=venv).stdout)
    assert verified["lockdown_complete"] is True
    status = json.loads(run(cli + ["status", "--cgroup", cg] + sock, cwd=venv).stdout)
    assert status["sandboxes"][0]["digest"] == attached["digest"]
    assert json.loads(run(cli + ["detach", "--cgroup", cg] + sock, cwd=venv).stdout) == {"ok": True, "cgroup": cg}
    done = run(cli + ["status", "--cgroup", cg] + sock, cwd=venv, check_rc=1)
    assert "not_attached" in done.stderr
