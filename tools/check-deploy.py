#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`make lint`'s check of deploy/kubernetes/: the manifest parses and holds what
docs/kubernetes.md promises, and the node install script it carries works.

- every document of bfbpf-daemonset.yaml parses (python3-yaml) and has a kind;
- the DaemonSet's daemon container is privileged, the pod has hostPID, and the
  node's /sys/fs/bpf (Bidirectional), /sys/fs/cgroup and /run/bfbpf are mounted where
  the daemon's command line expects them; the daemon joins the host's cgroup
  namespace; the policies ConfigMap is its --policy-dir;
- an init container runs node-install.sh with the node's /opt/bfbpf and
  /usr/share/containers/oci/hooks.d mounted;
- the ConfigMap's node-install.sh is deploy/kubernetes/node-install.sh, byte for byte;
- node-install.sh, run into a temporary root (with /bin/true as the binary), writes a
  hook JSON that is contrib/oci/bfbpf-hook.json with its path moved to
  /opt/bfbpf/bin/bfbpf-hook, and that wrapper runs the binary with the copied loader.

Exit 0 when everything holds, 1 otherwise (each failure on one line).
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "deploy/kubernetes/bfbpf-daemonset.yaml")
SCRIPT = os.path.join(ROOT, "deploy/kubernetes/node-install.sh")
HOOK = os.path.join(ROOT, "contrib/oci/bfbpf-hook.json")
HOOKS_DIR = "/usr/share/containers/oci/hooks.d"

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


def by_kind(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def host_mounts(pod, container):
    """{mountPath: (hostPath, mountPropagation)} of a container's hostPath volumes."""
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    out = {}
    for m in container.get("volumeMounts", []):
        v = volumes.get(m["name"], {})
        if "hostPath" in v:
            out[m["mountPath"]] = (v["hostPath"]["path"], m.get("mountPropagation"))
    return out


def config_map_mount(pod, container, name):
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for m in container.get("volumeMounts", []):
        if volumes.get(m["name"], {}).get("configMap", {}).get("name") == name:
            return m["mountPath"]
    return None


def check_daemon(pod, configmaps):
    daemons = [c for c in pod.get("containers", []) if "daemon" in c.get("command", [])]
    if not check(len(daemons) == 1, "no container runs `bfbpf daemon`"):
        return
    d = daemons[0]
    cmd = d["command"]
    check(d.get("securityContext", {}).get("privileged") is True, "the daemon is not privileged")
    check(pod.get("hostPID") is True, "the pod has no hostPID")
    check(cmd[:2] == ["nsenter", "--cgroup=/proc/1/ns/cgroup"], "the daemon does not join the host's cgroup namespace")
    mounts = host_mounts(pod, d)
    check(mounts.get("/sys/fs/bpf") == ("/sys/fs/bpf", "Bidirectional"), "bpffs: /sys/fs/bpf not mounted Bidirectional")
    check(mounts.get("/sys/fs/cgroup", ("",))[0] == "/sys/fs/cgroup", "the node's /sys/fs/cgroup is not mounted")
    check(mounts.get("/run/bfbpf", ("",))[0] == "/run/bfbpf", "the node's /run/bfbpf (socket) is not mounted")

    def arg(flag):
        return cmd[cmd.index(flag) + 1] if flag in cmd[:-1] else None

    check(arg("--socket") == "/run/bfbpf/bfbpf.sock", "--socket is not /run/bfbpf/bfbpf.sock (the hook's default)")
    check((arg("--bpffs") or "").startswith("/sys/fs/bpf/"), "--bpffs is not below /sys/fs/bpf")
    policy_dir = config_map_mount(pod, d, "bfbpf-policies")
    check(policy_dir is not None and arg("--policy-dir") == policy_dir, "--policy-dir is not the bfbpf-policies mount")
    for name, text in configmaps.get("bfbpf-policies", {}).items():
        try:
            check(isinstance(json.loads(text), dict), f"policy {name} is not a JSON object")
        except ValueError as e:
            check(False, f"policy {name} does not parse: {e}")


def check_init(pod, configmaps):
    inits = [c for c in pod.get("initContainers", []) if any("node-install.sh" in a for a in c.get("command", []))]
    if not check(len(inits) == 1, "no init container runs node-install.sh"):
        return
    init = inits[0]
    env = {e["name"]: e.get("value") for e in init.get("env", [])}
    root = env.get("BFBPF_HOST_ROOT", "/host")
    mounts = host_mounts(pod, init)
    check(mounts.get(root + HOOKS_DIR, ("",))[0] == HOOKS_DIR, f"the init container does not mount the node's {HOOKS_DIR}")
    check(mounts.get(root + "/opt/bfbpf", ("",))[0] == "/opt/bfbpf", "the init container does not mount the node's /opt/bfbpf")
    where = config_map_mount(pod, init, "bfbpf-node-install")
    check(where is not None and os.path.join(where, "node-install.sh") in init["command"], "node-install.sh is not the ConfigMap's")
    with open(SCRIPT) as f:
        check(configmaps.get("bfbpf-node-install", {}).get("node-install.sh") == f.read(),
              "the ConfigMap's node-install.sh differs from deploy/kubernetes/node-install.sh")


def check_script():
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, BFBPF_HOST_ROOT=tmp, BFBPF_BIN="/bin/true", BFBPF_HOOK_JSON=HOOK)
        done = subprocess.run(["/bin/sh", SCRIPT], env=env, capture_output=True, text=True)
        if not check(done.returncode == 0, f"node-install.sh failed: {done.stderr.strip()}"):
            return
        with open(HOOK) as f:
            want = json.load(f)
        want["hook"]["path"] = "/opt/bfbpf/bin/bfbpf-hook"
        want["hook"]["args"][0] = "bfbpf-hook"
        with open(os.path.join(tmp + HOOKS_DIR, "bfbpf-hook.json")) as f:
            check(json.load(f) == want, "the installed hook JSON is not contrib/oci/bfbpf-hook.json with the node's path")
        check("createRuntime" in want.get("stages", []), "the hook's stage is not createRuntime")
        wrapper = os.path.join(tmp, "opt/bfbpf/bin/bfbpf-hook")
        run = subprocess.run([wrapper], capture_output=True, text=True)
        check(run.returncode == 0, f"the installed wrapper does not run the binary: {run.stderr.strip()}")


def main():
    try:
        with open(MANIFEST) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
    except (OSError, yaml.YAMLError) as e:
        print(f"check-deploy: {MANIFEST}: {e}")
        return 1
    for d in docs:
        check(isinstance(d, dict) and d.get("kind") and d.get("apiVersion"), f"a document without kind/apiVersion: {d!r:.80}")
    configmaps = {c["metadata"]["name"]: c.get("data", {}) for c in by_kind(docs, "ConfigMap")}
    sets = by_kind(docs, "DaemonSet")
    if check(len(sets) == 1, "not exactly one DaemonSet"):
        pod = sets[0]["spec"]["template"]["spec"]
        check_daemon(pod, configmaps)
        check_init(pod, configmaps)
    check_script()
    for f in failures:
        print(f"check-deploy: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
