/* Why systemd stops the service (stopcause.h): the manager's job list over
 * its private socket or the system bus. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>

#include "stopcause.h"
#include "util.h"

/* A stop must not wait on a bus that does not answer. */
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
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
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
        return r;
}

/* Our unit's property prop (a list of unit names) into *ret (strv_free). */
static int unit_list(sd_bus *bus, const char *path, const char *prop, char ***ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = call(bus, path, "org.freedesktop.DBus.Properties", "Get", &reply, "ss", "org.freedesktop.systemd1.Unit",
                 prop);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'v', "as");
        if (r >= 0)
                r = sd_bus_message_read_strv(reply, ret);
        return r;
}

static bool strv_has(char **l, const char *s) {
        for (; l && *l; l++)
                if (strcmp(*l, s) == 0)
                        return true;
        return false;
}

static void strv_freep(char ***l) {
        for (char **p = *l; p && *p; p++)
                free(*p);
        free(*l);
}

int stopcause_conflict(char *buf, size_t len) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL, *unit_reply = NULL;
        _cleanup_(freep) char *self = NULL;
        _cleanup_(strv_freep) char **conflicts = NULL, **conflicted_by = NULL;
        const char *self_path, *unit, *type, *state, *jpath, *upath;
        uint32_t id;
        int r, found = 0;

        if (len > 0)
                buf[0] = 0;
        /* a service started by systemd (INVOCATION_ID), not a hand run */
        if (!getenv("INVOCATION_ID") || sd_pid_get_unit(0, &self) < 0)
                return 0;
        if (strlen(self) < 8 || strcmp(self + strlen(self) - 8, ".service") != 0)
                return 0;
        r = bus_open(&bus);
        if (r >= 0)
                r = call(bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "GetUnit", &unit_reply,
                         "s", self);
        if (r >= 0)
                r = sd_bus_message_read(unit_reply, "o", &self_path);
        /* either side may name the conflict */
        if (r >= 0)
                r = unit_list(bus, self_path, "Conflicts", &conflicts);
        if (r >= 0)
                r = unit_list(bus, self_path, "ConflictedBy", &conflicted_by);
        if (r >= 0)
                r = call(bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "ListJobs", &reply,
                         NULL);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(usssoo)");
        while (r >= 0 && !found &&
               (r = sd_bus_message_read(reply, "(usssoo)", &id, &unit, &type, &state, &jpath, &upath)) > 0)
                if ((strcmp(type, "start") == 0 || strcmp(type, "restart") == 0) &&
                    (strv_has(conflicts, unit) || strv_has(conflicted_by, unit))) {
                        snprintf(buf, len, "%s", unit);
                        found = 1;
                }
        return r < 0 ? r : found;
}
