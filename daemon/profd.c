/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profd: the profiler daemon. Parses the command line and the config, sets
 * up the manager on an sd-event loop, connects to the bus and runs until
 * SIGTERM (SIGINT, SIGHUP) or the loss of the bus, when running sessions are stopped
 * early and saved and every call read is answered (manager-stop.c).
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "bus-address.h"
#include "bus-errors.h"
#include "cleanup.h"
#include "config.h"
#include "fd-limit.h"
#include "log.h"
#include "manager.h"

typedef enum BusKind {
	BUS_SYSTEM,
	BUS_USER,
	BUS_ADDRESS,
} BusKind;

typedef struct Arguments {
	BusKind bus;
	const char *address;
	const char *state_dir;
	const char *config;
	bool debug;
} Arguments;

static void help(FILE *f)
{
	fprintf(f,
		"Usage: profd [OPTIONS]\n"
		"\n"
		"The profd sampling profiler daemon (org.profd.Profiler1).\n"
		"\n"
		"  --bus=system|user   connect to the system (default) or the user's bus\n"
		"  --address=ADDR      connect to the bus at ADDR\n"
		"  --state-dir=DIR     keep runs and sessions in DIR (default $STATE_DIRECTORY,\n"
		"                      else " CONFIG_DEFAULT_STATE_DIR ")\n"
		"  --config=PATH       read PATH instead of " CONFIG_DEFAULT_PATH "\n"
		"  --debug             log debug messages\n"
		"  -h, --help          show this help\n"
		"      --version       show the version\n");
}

/* 0 to go on, 1 to exit successfully, -EINVAL on a usage error */
static int parse_arguments(int argc, char **argv, Arguments *args)
{
	enum { ARG_BUS = 0x100, ARG_ADDRESS, ARG_STATE_DIR, ARG_CONFIG, ARG_DEBUG, ARG_VERSION };
	static const struct option options[] = {
		{ "bus", required_argument, NULL, ARG_BUS },
		{ "address", required_argument, NULL, ARG_ADDRESS },
		{ "state-dir", required_argument, NULL, ARG_STATE_DIR },
		{ "config", required_argument, NULL, ARG_CONFIG },
		{ "debug", no_argument, NULL, ARG_DEBUG },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
		switch (c) {
		case ARG_BUS:
			if (strcmp(optarg, "system") == 0)
				args->bus = BUS_SYSTEM;
			else if (strcmp(optarg, "user") == 0)
				args->bus = BUS_USER;
			else {
				fprintf(stderr, "profd: unknown bus '%s' (system or user)\n", optarg);
				return -EINVAL;
			}
			break;
		case ARG_ADDRESS:
			args->bus = BUS_ADDRESS;
			args->address = optarg;
			break;
		case ARG_STATE_DIR:
			args->state_dir = optarg;
			break;
		case ARG_CONFIG:
			args->config = optarg;
			break;
		case ARG_DEBUG:
			args->debug = true;
			break;
		case 'h':
			help(stdout);
			return 1;
		case ARG_VERSION:
			printf("profd %s\n", PROFD_VERSION);
			return 1;
		default:
			return -EINVAL;
		}
	if (optind < argc) {
		fprintf(stderr, "profd: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int load_config(const Arguments *args, Config *config)
{
	const char *path = args->config ?: CONFIG_DEFAULT_PATH;
	_cleanup_free_ char *key = NULL;
	unsigned line = 0;
	int r;

	r = config_load(config, path, args->config != NULL, &line, &key);
	if (r == -ENOKEY)
		return log_error_errno(r, "%s:%u: unknown key '%s'", path, line, key);
	if (r == -ERANGE)
		return log_error_errno(r, "%s:%u: value of '%s' is out of range", path, line, key);
	if (r == -EINVAL)
		return log_error_errno(r, "%s:%u: malformed line or value at '%s' (Key=Value, values "
				       "are non-negative integers or an absolute path)", path, line, key);
	if (r < 0)
		return log_error_errno(r, "cannot read config '%s': %s", path, strerror(-r));
	if (args->state_dir) {
		free(config->state_dir);
		config->state_dir = strdup(args->state_dir);
		if (!config->state_dir)
			return -ENOMEM;
	}
	return 0;
}

static int connect_bus(const Arguments *args, sd_bus **ret)
{
	sd_bus *bus = NULL;
	int r;

	switch (args->bus) {
	case BUS_SYSTEM:
		r = sd_bus_open_system(&bus);
		break;
	case BUS_USER:
		r = sd_bus_open_user(&bus);
		break;
	default:
		r = bus_open_address(args->address, true, &bus);
		break;
	}
	if (r < 0) {
		sd_bus_unref(bus);
		return r;
	}
	*ret = bus; /* losing it later is a stop (manager-stop.c) */
	return 0;
}

/*
 * The signals that stop profd in order. SIGHUP too: there is nothing to
 * reload, and its default action would end profd with its sessions unsaved.
 */
static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP };

static int on_terminate(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	Manager *m = userdata;

	if (!m->stopping)
		log_info("SIG%s: stopping", sigabbrev_np((int)si->ssi_signo));
	manager_begin_stop(m, EXIT_SUCCESS);
	return 0;
}

static int run(int argc, char **argv)
{
	_cleanup_(manager_freep) Manager *m = NULL;
	_cleanup_(config_done) Config config = {};
	_cleanup_(sd_event_unrefp) sd_event *event = NULL;
	_cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
	Arguments args = {};
	sigset_t mask;
	int r;

	r = parse_arguments(argc, argv, &args);
	if (r != 0)
		return r < 0 ? 2 : 0;
	if (args.debug)
		log_set_max_level(LOG_DEBUG);

	config_init(&config);
	r = load_config(&args, &config);
	if (r < 0)
		return 1;

	r = raise_fd_limit();
	if (r < 0)
		log_warning("cannot raise the open file limit: %s", strerror(-r));

	sigemptyset(&mask);
	for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++)
		sigaddset(&mask, stop_signals[i]);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN); /* a client closing its export pipe is an error, not a death */

	r = sd_event_default(&event);
	if (r < 0) {
		log_error("cannot create the event loop: %s", strerror(-r));
		return 1;
	}
	r = manager_new(event, &config, &m); /* it takes its own reference to the loop */
	if (r < 0)
		return 1;
	r = 0;
	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(stop_signals); i++)
		r = sd_event_add_signal(m->event, NULL, stop_signals[i], on_terminate, m);
	if (r < 0) {
		log_error("cannot watch signals: %s", strerror(-r));
		return 1;
	}

	r = bus_errors_register();
	if (r >= 0)
		r = connect_bus(&args, &bus);
	if (r < 0) {
		if (args.address)
			log_error("cannot connect to the bus at '%s': %s", args.address, strerror(-r));
		else
			log_error("cannot connect to the %s bus: %s",
				  args.bus == BUS_USER ? "user" : "system", strerror(-r));
		return 1;
	}
	r = manager_connect_bus(m, bus); /* it takes its own reference to the bus */
	if (r < 0) {
		log_error("cannot register %s on the bus: %s", PROFD_BUS_NAME, strerror(-r));
		return 1;
	}

	log_info("profd %s ready; state in '%s'", PROFD_VERSION, m->state_dir);
	sd_notify(false, "READY=1");
	manager_update_status(m);

	r = sd_event_loop(m->event);
	manager_refuse_remaining_calls(m);
	if (r < 0) {
		log_error("event loop failed: %s", strerror(-r));
		return 1;
	}
	log_info("profd exiting");
	return r; /* the manager's cleanup saves what is left and flushes the replies */
}

int main(int argc, char **argv)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	/*
	 * Records and replies of megabytes come and go with every caller: keep
	 * them in their own mappings, returned on free, instead of letting
	 * glibc's rising threshold park them in the heaps of the worker threads.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	return run(argc, argv);
}
