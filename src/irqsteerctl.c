/* irqsteerctl: main(), the command line dispatched to the ctl-*.c subcommands. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ctl-internal.h"
#include "ctl.h"
#include "log.h"
#include "util.h"

static const char main_help[] =
        "Usage: irqsteerctl [-v] COMMAND [OPTIONS]\n"
        "Inspect and control irqsteer, the NIC IRQ/RPS/XPS steering daemon.\n\n"
        "Commands:\n"
        "  inventory   CPUs, NICs, queues, IRQs and their masks\n"
        "  top         per-CPU load, softirq rates and the queues each CPU serves\n"
        "  status      what the running irqsteerd is doing\n"
        "  metrics     the running irqsteerd's metrics (Prometheus text format)\n"
        "  plan        the actions the policy would take now (changes nothing)\n"
        "  restore     put back the values saved by a previous run\n"
        "  ban         keep CPUs free at run time: ban NAME CPULIST\n"
        "  unban       lift the ban NAME\n"
        "  bans        list the runtime bans\n\n"
        "Options:\n"
        "  -v, --verbose   debug messages on stderr\n"
        "  -h, --help      show this help\n"
        "      --version   show the version\n\n"
        "'irqsteerctl COMMAND --help' describes each command.  See irqsteerctl(8).\n";

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        static const struct {
                const char *name;
                int (*fn)(int argc, char **argv);
        } commands[] = {
                { "inventory", ctl_inventory }, { "top", ctl_top },         { "status", ctl_status },
                { "plan", ctl_plan },           { "restore", ctl_restore },
                { "ban", ctl_ban },             { "unban", ctl_unban },     { "bans", ctl_bans },
                { "metrics", ctl_metrics },
        };
        int c, level = LOG_WARNING;

        /* '+': stop at the subcommand, whose options are its own. */
        while ((c = getopt_long(argc, argv, "+vh", options, NULL)) >= 0) {
                switch (c) {
                case 'v': level = LOG_DEBUG; break;
                case 'h': fputs(main_help, stdout); return CTL_EXIT_OK;
                case 'V': printf("irqsteerctl %s\n", IRQSTEER_VERSION); return CTL_EXIT_OK;
                default: return ctl_usage_error(NULL, "bad option");
                }
        }
        log_setup(LOG_TARGET_STDERR, level);
        if (optind >= argc)
                return ctl_usage_error(NULL, "missing command");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(argv[optind], commands[i].name) == 0)
                        return commands[i].fn(argc - optind, argv + optind);
        return ctl_usage_error(NULL, "unknown command '%s'", argv[optind]);
}
