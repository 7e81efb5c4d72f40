/*
 * org.kernel.TCMUService1 on the system bus, with sd-bus (see
 * include/vaaid/dbus.h).
 *
 * How this works: targetcli (ui_backstore.py) calls GetManagedObjects on
 * /org/kernel/TCMUService1 and shows one "user:<name>" backstore per object
 * below it, <name> being the last path component (the daemon's handler name,
 * vaaid.conf [tcmu] handler, "vaai" by default); `create` calls
 * CheckConfig("<name>/<cfgstring>") on that object and prints ConfigDesc in
 * `help create`. sd-bus's object manager reports every vtable registered
 * below its path, so one vtable at /org/kernel/TCMUService1/vaai is all it
 * takes (/org/kernel/TCMUService1/<name>). The connection's fd is polled by the daemon's reactor;
 * vd_dbus_process() runs sd_bus_process() until it has nothing left and
 * flushes the replies (a local socket: the flush does not block in practice).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "vaaid/dbus.h"
#include "vaaid/util.h"

#define BUS_NAME "org.kernel.TCMUService1"
#define ROOT_PATH "/org/kernel/TCMUService1"
#define IFACE "org.kernel.TCMUService1"

static const char config_desc[] =
	"<pool>/<volume>: a thin volume in a vaaid pool. The volume is created on first use "
	"with the backstore's size and kept when the backstore is deleted (create it again to "
	"get the same data and identity). Pools: `vaaictl pool list`; the pool 'default' always "
	"exists. Names: letters, digits, '_', '.', '-'.";

struct vd_dbus {
	sd_bus *bus;
	sd_bus_slot *om_slot, *vt_slot;
	vd_dbus_check_fn check;
	void *arg;
	char handler[64]; /* Name, SubType */
};

static int method_check_config(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
	struct vd_dbus *b = userdata;
	const char *cfg;
	(void)err;
	int rc = sd_bus_message_read(m, "s", &cfg);
	if (rc < 0)
		return rc;
	char msg[512] = "success";
	rc = b->check(b->arg, cfg, msg, sizeof(msg));
	return sd_bus_reply_method_return(m, "bs", rc == 0, rc == 0 ? "success" : msg);
}

static int prop_string(sd_bus *bus, const char *path, const char *iface, const char *prop,
		       sd_bus_message *reply, void *userdata, sd_bus_error *err)
{
	(void)bus, (void)path, (void)iface, (void)err;
	const struct vd_dbus *b = userdata;
	if (!strcmp(prop, "ConfigDesc"))
		return sd_bus_message_append(reply, "s", config_desc);
	return sd_bus_message_append(reply, "s", b->handler); /* Name, SubType */
}

static const sd_bus_vtable handler_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("CheckConfig", "s", "bs", method_check_config, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_PROPERTY("Name", "s", prop_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("SubType", "s", prop_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("ConfigDesc", "s", prop_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_VTABLE_END,
};

int vd_dbus_open(const char *handler, vd_dbus_check_fn check, void *arg, struct vd_dbus **out)
{
	char path[128];
	if (strlen(handler) >= sizeof(((struct vd_dbus *)0)->handler))
		return -EINVAL;
	struct vd_dbus *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->check = check;
	b->arg = arg;
	snprintf(b->handler, sizeof(b->handler), "%s", handler);
	snprintf(path, sizeof(path), "%s/%s", ROOT_PATH, handler);
	int rc = sd_bus_open_system(&b->bus);
	if (rc >= 0)
		rc = sd_bus_add_object_manager(b->bus, &b->om_slot, ROOT_PATH);
	if (rc >= 0)
		rc = sd_bus_add_object_vtable(b->bus, &b->vt_slot, path, IFACE, handler_vtable, b);
	if (rc >= 0)
		rc = sd_bus_request_name(b->bus, BUS_NAME, 0);
	if (rc < 0) {
		if (rc == -EEXIST)
			vlog_err(NULL, "%s is owned by another process (tcmu-runner?): vaaid replaces "
				 "tcmu-runner on this host; stop it", BUS_NAME);
		vd_dbus_close(b);
		return rc;
	}
	*out = b;
	return 0;
}

int vd_dbus_fd(const struct vd_dbus *b) { return sd_bus_get_fd(b->bus); }

void vd_dbus_process(struct vd_dbus *b)
{
	if (!b)
		return;
	for (int i = 0; i < 1000; i++) {
		int rc = sd_bus_process(b->bus, NULL);
		if (rc < 0) {
			vlog_warn(NULL, "D-Bus: %s", strerror(-rc));
			break;
		}
		if (rc == 0)
			break;
	}
	sd_bus_flush(b->bus);
}

void vd_dbus_close(struct vd_dbus *b)
{
	if (!b)
		return;
	sd_bus_slot_unref(b->vt_slot);
	sd_bus_slot_unref(b->om_slot);
	if (b->bus)
		sd_bus_flush_close_unref(b->bus);
	free(b);
}
