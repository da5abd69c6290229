/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every header of the kernel side needs: the UAPI and libbpf headers,
 * the ABI shared with userspace, and the constants that UAPI leaves to libc.
 */
#ifndef BFBPF_LIB_COMMON_H
#define BFBPF_LIB_COMMON_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/socket.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>

#include "bfbpf.h"

#ifndef AF_UNIX
#define AF_UNIX 1
#endif
#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif
#ifndef AF_NETLINK
#define AF_NETLINK 16
#endif
#define SOCK_STREAM 1
#define SOCK_DGRAM 2

/* NAT64 well-known prefix (RFC 6052): 64:ff9b::/96, first word in network order. */
#define NAT64_WORD0 0x0064ff9b

#endif /* BFBPF_LIB_COMMON_H */
