/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The daemon's optional metrics endpoint (GET anything: the Prometheus text). */
#ifndef BFBPF_METRICS_HTTP_H
#define BFBPF_METRICS_HTTP_H

struct sandbox_registry;

/* Listen on ADDR:PORT ([v6]:PORT); returns the non-blocking listening fd or -errno. */
int metrics_http_listen(const char *address);
/* Answer one connection waiting on the listening fd, then close it. */
void metrics_http_serve(int listen_fd, struct sandbox_registry *registry);

#endif /* BFBPF_METRICS_HTTP_H */
