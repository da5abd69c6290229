// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer target: control socket request lines (untrusted input from clients). */
#include <stddef.h>
#include <stdint.h>

#include "daemon/ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sandbox_error error;
	struct ctl_request request;

	if (!ctl_request_parse((const char *)data, size, &request, &error))
		ctl_request_free(&request);
	return 0;
}
