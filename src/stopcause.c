/* Why systemd stops the service (stopcause.h): the manager's job list,
 * over its private socket (root, no dbus-daemon needed) or the system bus. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>

#include "stopcause.h"
#include "util.h"

/* The manager answers between jobs within milliseconds; a stop must not
 * wait on a bus that does not answer. */
#define STOPCAUSE_TIMEOUT_USEC (2 * USEC_PER_SEC)

static const char DEST[] = "org.freedesktop.systemd1";

static int bus_open(sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, "unix:path=/run/systemd/private");
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r >= 0) {
                *ret = bus;
                return 0;
        }
        sd_bus_unref(bus);
        return sd_bus_open_system(ret);
}

static int call(sd_bus *bus, const char *path, const char *iface, const char *member, sd_bus_message **ret,
                const char *types, ...) {
        sd_bus_message *m = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, DEST, path, iface, member);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd_bus_call(bus, m, STOPCAUSE_TIMEOUT_USEC, &e, ret);
        sd_bus_error_free(&e);
        sd_bus_message_unref(m);
        return r;
}

/* Whether unit is in our unit's property prop (a list of unit names). */
static int unit_listed(sd_bus *bus, const char *path, const char *prop, const char *unit) {
        sd_bus_message *reply = NULL;
        const char *s;
        bool found = false;
        int r;

        r = call(bus, path, "org.freedesktop.DBus.Properties", "Get", &reply, "ss", "org.freedesktop.systemd1.Unit",
                 prop);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'v', "as");
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "s");
        while (r >= 0 && !found && (r = sd_bus_message_read(reply, "s", &s)) > 0)
                found = strcmp(s, unit) == 0;
        sd_bus_message_unref(reply);
        return r < 0 ? r : found;
}

int stopcause_conflict(char *buf, size_t len) {
        sd_bus *bus = NULL;
        sd_bus_message *reply = NULL, *unit_reply = NULL;
        char *self = NULL;
        const char *self_path, *unit, *type, *state, *jpath, *upath;
        uint32_t id;
        int r, found = 0;

        if (len > 0)
                buf[0] = 0;
        if (sd_pid_get_unit(0, &self) < 0)
                return 0;
        r = bus_open(&bus);
        if (r >= 0)
                r = call(bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "GetUnit", &unit_reply,
                         "s", self);
        if (r >= 0)
                r = sd_bus_message_read(unit_reply, "o", &self_path);
        if (r >= 0)
                r = call(bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "ListJobs", &reply,
                         NULL);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(usssoo)");
        while (r >= 0 && !found &&
               (r = sd_bus_message_read(reply, "(usssoo)", &id, &unit, &type, &state, &jpath, &upath)) > 0) {
                if (strcmp(unit, self) == 0 || (strcmp(type, "start") != 0 && strcmp(type, "restart") != 0))
                        continue;
                /* either side may name the conflict */
                r = unit_listed(bus, self_path, "Conflicts", unit);
                if (r == 0)
                        r = unit_listed(bus, self_path, "ConflictedBy", unit);
                if (r > 0) {
                        snprintf(buf, len, "%s", unit);
                        found = 1;
                }
        }
        sd_bus_message_unref(reply);
        sd_bus_message_unref(unit_reply);
        sd_bus_flush_close_unref(bus);
        free(self);
        return r < 0 ? r : found;
}
