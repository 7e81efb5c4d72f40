/* ackgen's subcommands that live in files of their own (main.c dispatches). */
#ifndef ACKGEN_H
#define ACKGEN_H

/* ackgen relay SOCKET FILE (relay.c): the host's end of a generator's log port. */
int relay_main(int argc, char **argv);

#endif
