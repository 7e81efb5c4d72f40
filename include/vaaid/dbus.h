/*
 * vaaid D-Bus service (src/dbus/service.c): org.kernel.TCMUService1 on the
 * system bus, so that targetcli lists and creates user:vaai backstores.
 *
 * Objects (as tcmu-runner exports them, which targetcli/rtslib expects):
 *   /org/kernel/TCMUService1          org.freedesktop.DBus.ObjectManager
 *   /org/kernel/TCMUService1/HandlerManager1  (not needed by targetcli)
 *   /org/kernel/TCMUService1/vaai     org.kernel.TCMUService1:
 *       property Name "vaai", SubType "vaai", ConfigDesc (string),
 *       (vaai: the handler name given to vd_dbus_open, vaaid.conf [tcmu] handler)
 *       method CheckConfig(s cfgstring) -> (b ok, s message)
 * targetcli passes "vaai/<pool>/<volume>" (the handler name prefixed).
 */
#ifndef VAAID_DBUS_H
#define VAAID_DBUS_H

#include <stdbool.h>
#include <stddef.h>

struct vd_dbus;

/* CheckConfig's validation (the daemon's): 0, or -errno with the reason in msg. */
typedef int (*vd_dbus_check_fn)(void *arg, const char *cfg, char *msg, size_t len);

int vd_dbus_open(const char *handler, vd_dbus_check_fn check, void *arg, struct vd_dbus **out);
int vd_dbus_fd(const struct vd_dbus *b);
/* Process everything pending on the connection (main loop, not a callback). */
void vd_dbus_process(struct vd_dbus *b);
void vd_dbus_close(struct vd_dbus *b);

#endif
