// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "dns/responder.h"
#include "loader/loader.h"
#include "metrics.h"
#include "sandbox/events.h"
#include "sandbox/guard.h"
#include "sandbox/sandbox.h"

/* Label values are cgroup paths: escape what the exposition format requires. */
static void metrics_label(const char *value, char *out, size_t size)
{
	size_t used = 0;

	for (; *value && used + 3 < size; value++) {
		if (*value == '\\' || *value == '"')
			out[used++] = '\\';
		if (*value == '\n') {
			out[used++] = '\\';
			out[used++] = 'n';
			continue;
		}
		out[used++] = *value;
	}
	out[used] = '\0';
}

static void metrics_dns(const struct sandbox *sandbox, const char *label, FILE *out)
{
	json_t *queries, *value;
	const char *key;

	if (!sandbox->responder)
		return;
	queries = responder_counters(sandbox->responder);
	json_object_foreach(queries, key, value)
		fprintf(out, "bfbpf_dns_queries_total{cgroup=\"%s\",result=\"%s\"} %lld\n", label,
			key, (long long)json_integer_value(value));
	json_decref(queries);
}

static void metrics_sandbox(struct sandbox_registry *registry, const struct sandbox *sandbox,
			    FILE *out)
{
	char label[2 * PATH_MAX];
	struct bfbpf_stats sum;

	metrics_label(sandbox->path, label, sizeof(label));
	fprintf(out, "bfbpf_lockdown_ok{cgroup=\"%s\"} %d\n", label,
		sandbox->last_check_at ? sandbox->last_check_ok : 1);
	/* A sandbox whose counters cannot be read shows no counters, not zeros. */
	if (loader_stats_read(registry->loader, sandbox->cgroup_id, &sum))
		return;
	for (int hook = 0; hook < BFBPF_HOOK_COUNT; hook++) {
		fprintf(out,
			"bfbpf_verdicts_total{cgroup=\"%s\",hook=\"%s\",verdict=\"allow\"} %llu\n",
			label, events_hook_name(hook), (unsigned long long)sum.allowed[hook]);
		fprintf(out,
			"bfbpf_verdicts_total{cgroup=\"%s\",hook=\"%s\",verdict=\"deny\"} %llu\n",
			label, events_hook_name(hook), (unsigned long long)sum.denied[hook]);
	}
	fprintf(out, "bfbpf_events_total{cgroup=\"%s\",outcome=\"sent\"} %llu\n", label,
		(unsigned long long)sum.events_sent);
	fprintf(out, "bfbpf_events_total{cgroup=\"%s\",outcome=\"rate_limited\"} %llu\n", label,
		(unsigned long long)sum.events_limited);
	fprintf(out, "bfbpf_events_total{cgroup=\"%s\",outcome=\"lost\"} %llu\n", label,
		(unsigned long long)sum.events_lost);
	/* Names bound to TLS: judged flows, allowed or refused by reason. */
	fprintf(out, "bfbpf_sni_flows_total{cgroup=\"%s\",outcome=\"allowed\"} %llu\n", label,
		(unsigned long long)sum.sni_allowed);
	for (unsigned int reason = 1; reason < BFBPF_REASON_COUNT; reason++)
		fprintf(out, "bfbpf_sni_flows_total{cgroup=\"%s\",outcome=\"%s\"} %llu\n", label,
			events_reason_name(reason), (unsigned long long)sum.sni_refused[reason]);
	metrics_dns(sandbox, label, out);
}

char *metrics_text(struct sandbox_registry *registry)
{
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);

	if (!out)
		return NULL;
	fprintf(out, "# HELP bfbpf_sandboxes Sandboxes attached.\n# TYPE bfbpf_sandboxes gauge\n");
	fprintf(out, "bfbpf_sandboxes %zu\n", registry->count);
	fprintf(out, "# HELP bfbpf_cgroups_gone_total Sandboxes forgotten because their cgroup was "
		     "removed.\n# TYPE bfbpf_cgroups_gone_total counter\n");
	fprintf(out, "bfbpf_cgroups_gone_total %llu\n", (unsigned long long)registry->cgroups_gone);
	fprintf(out, "# HELP bfbpf_reapplied_total Containers' current policies re-applied to "
		     "their re-created cgroup, or to their pod's restarted container.\n"
		     "# TYPE bfbpf_reapplied_total counter\n");
	fprintf(out, "bfbpf_reapplied_total %llu\n", (unsigned long long)registry->reapplied);
	fprintf(out, "# HELP bfbpf_lockdown_ok 1 if the last periodic check of the sandbox "
		     "passed.\n# TYPE bfbpf_lockdown_ok gauge\n");
	fprintf(out, "# HELP bfbpf_verdicts_total Verdicts of the BPF hooks (egress counts "
		     "packets).\n# TYPE bfbpf_verdicts_total counter\n");
	fprintf(out, "# HELP bfbpf_events_total Denial events: sent, over the rate limit, or lost "
		     "to a full ring.\n# TYPE bfbpf_events_total counter\n");
	fprintf(out, "# HELP bfbpf_sni_flows_total Flows judged by their TLS SNI or HTTP Host: "
		     "allowed, or refused by reason.\n# TYPE bfbpf_sni_flows_total counter\n");
	fprintf(out, "# HELP bfbpf_dns_queries_total Queries of the sandbox's DNS responder.\n"
		     "# TYPE bfbpf_dns_queries_total counter\n");
	for (size_t i = 0; i < registry->count; i++)
		metrics_sandbox(registry, registry->items[i], out);
	guard_metrics(registry, out);
	fclose(out);
	return text;
}
