/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Containers of Docker and Podman by name or id: which runtime, and what
 * the runtime says of a container (its pid, full id and name), asked of the
 * runtime's own client as a child process (so DOCKER_HOST, CONTAINER_HOST
 * and the runtime's configuration files apply as they do for its users).
 */
#ifndef BFBPF_CONTAINER_H
#define BFBPF_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CONTAINER_ID_LENGTH 64
#define CONTAINER_NAME_MAX 256
#define CONTAINER_RUNTIME_MAX 16
/* A pod's uid or a container's name in its pod (Kubernetes: a UUID, a DNS label), with its NUL. */
#define CONTAINER_POD_KEY_MAX 64
/* How long a runtime client may take to answer. */
#define CONTAINER_INSPECT_TIMEOUT_MS 15000

struct container_info {
	char id[CONTAINER_ID_LENGTH + 1];
	char name[CONTAINER_NAME_MAX];
	char runtime[CONTAINER_RUNTIME_MAX];
	pid_t pid; /* 0: not running */
};

/* A full container id: 64 lowercase hex digits. */
bool container_id_valid(const char *id);
/*
 * A pod uid or a container's name in its pod: 1 to 63 letters, digits, '.', '_'
 * and '-' (a Kubernetes UID is a UUID, a container name a DNS label).
 */
bool container_pod_key_valid(const char *key);
/* "docker", "podman" or "cri-o". */
bool container_runtime_valid(const char *runtime);
/*
 * The runtime to ask: the one given, else the only one of docker and podman
 * on PATH. -ENOENT if neither is, -EEXIST if both are (then it must be given).
 */
int container_runtime_pick(const char *given, char *out, size_t size);
/*
 * Inspect a container by name or id. -ENOENT when the runtime says there is
 * no such container, -EIO for any other failure; err holds one line.
 */
int container_inspect(const char *runtime, const char *name_or_id, struct container_info *out,
		      char *err, size_t err_size);
/* 1 if the runtime knows the id, 0 if it says it does not, negative if it cannot tell. */
int container_exists(const char *runtime, const char *id);

#endif /* BFBPF_CONTAINER_H */
