/* ackgen's subcommands that live in files of their own (main.c dispatches). */
#ifndef ACKGEN_H
#define ACKGEN_H

/* ackgen relay SOCKET FILE (relay.c): the host's end of a generator's log port. */
int relay_main(int argc, char **argv);

/* ackgen busy --run R --gens LIST LOG... (busy.c): every generator has a command in flight? */
int busy_main(int argc, char **argv);

/* A comma-separated list of generator names into gens (main.c); returns how many (at most 32). */
unsigned parse_gens(const char *list, char gens[32][64]);

#endif
