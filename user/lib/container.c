// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Asking Docker's or Podman's client about a container (see container.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "container.h"
#include "log.h"

bool container_id_valid(const char *id)
{
	size_t i;

	for (i = 0; id[i]; i++)
		if (!isxdigit((unsigned char)id[i]) || isupper((unsigned char)id[i]))
			return false;
	return i == CONTAINER_ID_LENGTH;
}

bool container_pod_key_valid(const char *key)
{
	size_t length = strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				    "._-");

	return length && length == strlen(key) && length < CONTAINER_POD_KEY_MAX;
}

bool container_runtime_valid(const char *runtime)
{
	return !strcmp(runtime, "docker") || !strcmp(runtime, "podman") ||
	       !strcmp(runtime, "cri-o");
}

static bool container_on_path(const char *program)
{
	const char *path = getenv("PATH");
	char candidate[PATH_MAX];

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t length = strcspn(path, ":");

		snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)length, path, program);
		if (length && !access(candidate, X_OK))
			return true;
		path += length + (path[length] == ':');
	}
	return false;
}

int container_runtime_pick(const char *given, char *out, size_t size)
{
	bool docker, podman;

	if (given) {
		snprintf(out, size, "%s", given);
		return 0;
	}
	docker = container_on_path("docker");
	podman = container_on_path("podman");
	if (docker && podman)
		return -EEXIST;
	if (!docker && !podman)
		return -ENOENT;
	snprintf(out, size, "%s", docker ? "docker" : "podman");
	return 0;
}

/* Reads what fd gives until EOF or the deadline; always NUL-terminates. */
static void container_read_all(int fd, char *buffer, size_t size, uint64_t deadline_ms)
{
	size_t used = 0;

	buffer[0] = '\0';
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		uint64_t now = log_monotonic_ms();
		ssize_t got;

		if (now >= deadline_ms || poll(&pfd, 1, (int)(deadline_ms - now)) <= 0)
			return;
		got = read(fd, buffer + used, size - 1 - used);
		if (got <= 0)
			return;
		used += (size_t)got;
		buffer[used] = '\0';
		if (used == size - 1)
			return;
	}
}

/* Runs argv with stdout and stderr (merged) into out; returns its exit status or -errno. */
static int container_run(char *const argv[], char *out, size_t size)
{
	uint64_t deadline = log_monotonic_ms() + CONTAINER_INSPECT_TIMEOUT_MS;
	int pipe_fds[2], status, err = 0;
	pid_t child;

	if (pipe2(pipe_fds, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child < 0) {
		err = -errno;
		close(pipe_fds[0]);
		close(pipe_fds[1]);
		return err;
	}
	if (child == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, 0);
		dup2(pipe_fds[1], 1);
		dup2(pipe_fds[1], 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pipe_fds[1]);
	container_read_all(pipe_fds[0], out, size, deadline);
	close(pipe_fds[0]);
	/* A client that hangs (a daemon that does not answer) is stopped: we wait for no one. */
	if (log_monotonic_ms() >= deadline)
		kill(child, SIGKILL);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status))
		return -ETIMEDOUT;
	return WEXITSTATUS(status);
}

static bool container_says_missing(const char *text)
{
	return strstr(text, "no such container") || strstr(text, "No such container") ||
	       strstr(text, "No such object");
}

int container_inspect(const char *runtime, const char *name_or_id, struct container_info *out,
		      char *err, size_t err_size)
{
	char *argv[] = {(char *)runtime,
			"container",
			"inspect",
			"--format",
			"{{.State.Pid}} {{.Id}} {{.Name}}",
			"--",
			(char *)name_or_id,
			NULL};
	char text[4096], name[CONTAINER_NAME_MAX];
	long long pid;
	int status;

	memset(out, 0, sizeof(*out));
	snprintf(out->runtime, sizeof(out->runtime), "%s", runtime);
	status = container_run(argv, text, sizeof(text));
	text[strcspn(text, "\n")] = '\0';
	if (status) {
		if (status == 127 || status < 0)
			snprintf(err, err_size, "%s: cannot run its client (%s)", runtime,
				 status < 0 ? strerror(-status) : "not found");
		else
			snprintf(err, err_size, "%s: %s", runtime, text);
		return status > 0 && container_says_missing(text) ? -ENOENT : -EIO;
	}
	if (sscanf(text, "%lld %64s %255s", &pid, out->id, name) != 3 || pid < 0 || pid > INT_MAX ||
	    !container_id_valid(out->id)) {
		snprintf(err, err_size, "%s: unexpected answer to inspect: %.200s", runtime, text);
		return -EIO;
	}
	/* Docker names start with a slash ("/web"); Podman's do not. */
	snprintf(out->name, sizeof(out->name), "%s", name[0] == '/' ? name + 1 : name);
	out->pid = (pid_t)pid;
	return 0;
}

int container_exists(const char *runtime, const char *id)
{
	char *argv[] = {(char *)runtime, "container", "inspect",  "--format",
			"{{.Id}}",	 "--",	      (char *)id, NULL};
	char text[1024];
	int status;

	if (!strcmp(runtime, "cri-o"))
		return -ENOTSUP; /* no client of ours: CRI-O's containers are forgotten by detach */
	status = container_run(argv, text, sizeof(text));
	if (status == 0)
		return 1;
	if (status > 0 && status != 127 && container_says_missing(text))
		return 0;
	return -EIO;
}
