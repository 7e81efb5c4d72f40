/* vaai-sim's per-command JSON line (fixed interface; see main.c). */
#ifndef VAAI_SIM_CMD_OUTPUT_H
#define VAAI_SIM_CMD_OUTPUT_H

#include <stdio.h>
#include "simhost.h"

void print_cmd_result(FILE *f, const struct simhost_result *r);

#endif
