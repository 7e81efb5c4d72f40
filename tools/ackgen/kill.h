/* ackgen kill: freeze, take the kill instant, SIGKILL (tools/ackgen/kill.c). */
#ifndef ACKGEN_KILL_H
#define ACKGEN_KILL_H

int ackgen_kill_main(int argc, char **argv);

#endif
