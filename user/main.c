// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "cli/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
