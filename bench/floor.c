/* The least a balancer that samples every INTERVAL can cost: an sd-event
 * timer, and at each wake-up /proc/stat of ROOT read whole (opened, read,
 * closed) and nothing else.  bench/run.py measures its CPU time per hour beside the
 * two daemons' (bench/README.md, "Per-tick cost and CPU per hour").
 *
 * With "least" as a third argument it does the least any sampler can: no
 * timer source (sd_event_run() with a timeout: no timerfd to read and
 * re-arm) and /proc/stat read with one pread through a kept fd, as on a
 * real /proc (the same section's "least" columns).
 *
 * usage: irqsteer-floor ROOT INTERVAL_MS [least] */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-event.h>

struct probe {
        int rootfd;
        uint64_t interval_usec;
};

static void read_whole(int dirfd, const char *path) {
        char buf[65536];
        int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return;
        while (read(fd, buf, sizeof(buf)) > 0)
                ;
        close(fd);
}

/* The least: epoll_wait with a timeout, one pread, and what sd-event adds. */
static int run_least(sd_event *e, const struct probe *p) {
        char buf[65536];
        uint64_t now, next;
        int fd, r;

        fd = openat(p->rootfd, "proc/stat", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = sd_event_now(e, CLOCK_MONOTONIC, &next);
        for (next += p->interval_usec; r >= 0;) {
                r = sd_event_now(e, CLOCK_MONOTONIC, &now);
                if (r >= 0 && now >= next) {
                        if (pread(fd, buf, sizeof(buf), 0) < 0)
                                r = -errno;
                        next += p->interval_usec;
                        continue;
                }
                if (r >= 0)
                        r = sd_event_run(e, next - now);
        }
        close(fd);
        return r;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        struct probe *p = userdata;

        read_whole(p->rootfd, "proc/stat");
        return sd_event_source_set_time(s, usec + p->interval_usec);
}

int main(int argc, char **argv) {
        struct probe p = {};
        sd_event_source *timer = NULL;
        sd_event *e = NULL;
        uint64_t now;
        int r;

        if (argc < 3 || argc > 4 || atol(argv[2]) <= 0 || (argc == 4 && strcmp(argv[3], "least") != 0)) {
                fprintf(stderr, "usage: %s ROOT INTERVAL_MS [least]\n", argv[0]);
                return 2;
        }
        p.interval_usec = (uint64_t) atol(argv[2]) * 1000;
        p.rootfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (p.rootfd < 0) {
                fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
                return 1;
        }
        r = sd_event_default(&e);
        if (r >= 0 && argc == 4)
                r = run_least(e, &p); /* returns on an error only */
        else if (r >= 0) {
                r = sd_event_now(e, CLOCK_MONOTONIC, &now);
                if (r >= 0)
                        r = sd_event_add_time(e, &timer, CLOCK_MONOTONIC, now + p.interval_usec, 0, on_timer, &p);
                if (r >= 0) /* a timer source fires once unless turned on for good */
                        r = sd_event_source_set_enabled(timer, SD_EVENT_ON);
                if (r >= 0)
                        r = sd_event_loop(e);
        }
        if (r < 0)
                fprintf(stderr, "sd-event: %s\n", strerror(-r));
        sd_event_source_unref(timer);
        sd_event_unref(e);
        return r < 0 ? 1 : 0;
}
