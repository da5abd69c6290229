// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bfbpf check: preflight of everything bfbpf needs from the kernel and the host. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <linux/magic.h>
#include <linux/vm_sockets.h>
#include <bpf/libbpf.h>

#include "lib/cgroup.h"
#include "cli_commands.h"
#include "loader/loader.h"
#include "lib/log.h"

#define CHECK_CAP_NET_ADMIN 12
#define CHECK_CAP_SYS_ADMIN 21
#define CHECK_CAP_BPF 39

struct check_report {
	json_t *items;
	bool all_ok;
	bool json;
};

static void check_add(struct check_report *report, const char *name, bool ok, bool warning,
		      const char *detail, const char *fix)
{
	json_t *item = json_pack("{s:s, s:b, s:s}", "name", name, "ok", ok, "detail", detail);

	if (warning)
		json_object_set_new(item, "warning", json_true());
	if ((!ok || warning) && fix)
		json_object_set_new(item, "fix", json_string(fix));
	json_array_append_new(report->items, item);
	if (!ok)
		report->all_ok = false;
	if (!report->json)
		printf("%-4s %-22s %s%s%s\n",
		       !ok	 ? "FAIL"
		       : warning ? "warn"
				 : "ok",
		       name, detail, (!ok || warning) && fix ? " — fix: " : "",
		       (!ok || warning) && fix ? fix : "");
}

static void check_item(struct check_report *report, const char *name, bool ok, const char *detail,
		       const char *fix)
{
	check_add(report, name, ok, false, detail, fix);
}

/*
 * AF_VSOCK passes no address hook: where a transport to a hypervisor (or to
 * guests) is loaded, it is a path out that only BPF LSM or seccomp refuses.
 * Live means a socket can be made and /dev/vsock reports a local CID; a CID
 * that cannot be read counts as live (the operator decides, knowing).
 */
static void check_vsock(struct check_report *report)
{
	unsigned int cid = VMADDR_CID_ANY;
	char detail[384], cid_text[16];
	int fd, device;

	fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		check_item(report, "vsock", true, "no AF_VSOCK here (the family is not loaded)",
			   NULL);
		return;
	}
	close(fd);
	device = open("/dev/vsock", O_RDONLY | O_CLOEXEC);
	if (device >= 0 && ioctl(device, IOCTL_VM_SOCKETS_GET_LOCAL_CID, &cid))
		cid = VMADDR_CID_ANY - 1; /* unknown: a live transport cannot be ruled out */
	if (device >= 0)
		close(device);
	if (device >= 0 && cid == VMADDR_CID_ANY) {
		check_item(report, "vsock", true,
			   "AF_VSOCK is loaded, but no transport to a hypervisor or guest", NULL);
		return;
	}
	if (cid >= VMADDR_CID_ANY - 1)
		snprintf(cid_text, sizeof(cid_text), "unknown");
	else
		snprintf(cid_text, sizeof(cid_text), "%u", cid);
	snprintf(detail, sizeof(detail),
		 "AF_VSOCK: a transport to the hypervisor or to guests is live (local CID %s); "
		 "without BPF LSM no cgroup hook refuses AF_VSOCK sockets",
		 cid_text);
	check_add(report, "vsock", true, true, detail,
		  "bfbpf run refuses AF_VSOCK with seccomp; give other sandboxes a seccomp profile "
		  "that refuses it, or a kernel with BPF LSM (docs/threat-model.md)");
}

static unsigned long long check_effective_capabilities(void)
{
	FILE *status = fopen("/proc/self/status", "re");
	unsigned long long caps = 0;
	char line[256];

	if (!status)
		return 0;
	while (fgets(line, sizeof(line), status))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(status);
	return caps;
}

static void check_privileges(struct check_report *report)
{
	unsigned long long caps = check_effective_capabilities();
	bool ok = (caps & (1ULL << CHECK_CAP_SYS_ADMIN)) &&
		  (caps & (1ULL << CHECK_CAP_NET_ADMIN)) &&
		  ((caps & (1ULL << CHECK_CAP_BPF)) || geteuid() == 0);
	char detail[128];

	snprintf(detail, sizeof(detail), "uid %d, effective capabilities %#llx", (int)geteuid(),
		 caps);
	check_item(report, "privileges", ok, detail,
		   "run as root (CAP_BPF, CAP_SYS_ADMIN and CAP_NET_ADMIN are needed)");
}

static void check_bpffs(struct check_report *report)
{
	struct statfs fs;
	bool mounted = !statfs("/sys/fs/bpf", &fs) && fs.f_type == BPF_FS_MAGIC;

	check_item(report, "bpffs", true,
		   mounted ? "mounted at /sys/fs/bpf"
			   : "not mounted at /sys/fs/bpf; bfbpf mounts it when it starts",
		   NULL);
}

/* Load every program and attach each to a scratch cgroup, then undo it all. */
static void check_hooks(struct check_report *report, const char *mount)
{
	char cgroup[PATH_MAX], detail[256];
	struct loader *loader = NULL;
	int link_fds[LOADER_HOOK_COUNT];
	int err;

	err = loader_open(NULL, &loader);
	if (err) {
		snprintf(detail, sizeof(detail), "the kernel refused the programs: %s",
			 strerror(-err));
		check_item(report, "bpf programs", false, detail,
			   "a kernel >= 6.1 with CONFIG_CGROUP_BPF and BTF is needed");
		return;
	}
	snprintf(cgroup, sizeof(cgroup), "%s/bfbpf-check-%d", mount, (int)getpid());
	if (mkdir(cgroup, 0755)) {
		snprintf(detail, sizeof(detail), "cannot create %s: %s", cgroup, strerror(errno));
		check_item(report, "cgroup attach", false, detail, "run as root");
		goto cleanup;
	}
	err = loader_links_attach(loader, 0, cgroup, link_fds);
	for (int hook = 0; hook < LOADER_HOOK_COUNT; hook++) {
		char name[64];

		snprintf(name, sizeof(name), "hook %s", loader_hook_name(hook));
		if (!loader_hook_available(loader, hook)) {
			check_item(report, name, true,
				   "not supported here (no BPF LSM): packet sockets are kept out "
				   "only by the sandbox lacking CAP_NET_RAW (docs/threat-model.md)",
				   NULL);
			continue;
		}
		snprintf(detail, sizeof(detail), "%s", err ? strerror(-err) : "loads and attaches");
		check_item(report, name, !err, detail,
			   "a kernel >= 6.1 with CONFIG_CGROUP_BPF is needed");
	}
	if (!err)
		loader_links_detach(loader, 0, link_fds);
	rmdir(cgroup);
cleanup:
	loader_close(loader);
}

int cli_check(const struct cli_command *command, int argc, char **argv)
{
	struct check_report report = {.all_ok = true};
	char mount[PATH_MAX], detail[PATH_MAX + 64];
	struct utsname system;
	struct cli_args args;
	int status;

	cli_args_init(&args);
	status = cli_parse(command, argc, argv, &args, NULL, NULL);
	cli_args_free(&args);
	if (status)
		return status;
	report.json = args.json;
	report.items = json_array();
	log_set_level(LOG_LEVEL_ERROR);
	uname(&system);
	snprintf(detail, sizeof(detail), "%s %s", system.sysname, system.release);
	check_item(&report, "kernel", true, detail, NULL);
	check_privileges(&report);
	snprintf(detail, sizeof(detail), "%s",
		 libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, NULL) == 1
			 ? "cgroup socket-address programs supported"
			 : "the bpf() syscall refused a cgroup program");
	check_item(&report, "bpf syscall",
		   libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, NULL) == 1, detail,
		   "enable CONFIG_BPF_SYSCALL and CONFIG_CGROUP_BPF; run as root");
	if (cgroup_mount_find(mount, sizeof(mount))) {
		check_item(&report, "cgroup2", false, "no cgroup2 mount in /proc/self/mountinfo",
			   "mount -t cgroup2 none /sys/fs/cgroup");
	} else {
		snprintf(detail, sizeof(detail), "mounted at %s", mount);
		check_item(&report, "cgroup2", true, detail, NULL);
	}
	check_bpffs(&report);
	check_vsock(&report);
	if (report.all_ok)
		check_hooks(&report, mount);
	if (report.json) {
		json_t *out = json_pack("{s:b, s:o}", "ok", report.all_ok, "checks", report.items);

		cli_print_json(out);
		json_decref(out);
	} else {
		json_decref(report.items);
		printf("%s\n", report.all_ok ? "bfbpf can run here" : "bfbpf cannot run here yet");
	}
	return report.all_ok ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}
