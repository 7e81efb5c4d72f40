/* dm-log-writes marks from a program (tools/ackgen/dmmark.c). */
#ifndef ACKGEN_DMMARK_H
#define ACKGEN_DMMARK_H

/* Open /dev/mapper/control: the descriptor, or -errno. */
int dmmark_open(void);
/* Send "mark NAME" to the dm device DEV (its dm name): 0 or -errno. NAME has
 * no spaces and fewer than 480 bytes (the log's block minus its entry header). */
int dmmark_send(int ctl, const char *dev, const char *name);

#endif
