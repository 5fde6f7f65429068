/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bus_open_address() (lib/common/bus-address.h): a listening socket is
 * reached as a broker's client or as a peer, as asked; an address nothing
 * listens on fails and leaves the result untouched.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bus-address.h"
#include "test-util.h"

static void check_open(const char *address, bool client)
{
	sd_bus *bus = NULL;
	const char *got = NULL;
	int r;

	r = bus_open_address(address, client, &bus);
	CHECK(r == 0, "open %s (client %d): %d", address, client, r);
	if (r < 0)
		return;
	CHECK(sd_bus_get_address(bus, &got) >= 0 && strcmp(got, address) == 0, "address %s",
	      got ? got : "(none)");
	CHECK(sd_bus_is_bus_client(bus) == client, "client %d", sd_bus_is_bus_client(bus));
	sd_bus_close_unref(bus); /* no flush: no one answers the handshake */
}

int main(void)
{
	char dir[] = "/tmp/test-bus-address.XXXXXX";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char address[sizeof(sa.sun_path) + 16];
	sd_bus *untouched = (sd_bus *)&sa;
	int fd, r;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/bus", dir);
	snprintf(address, sizeof(address), "unix:path=%s", sa.sun_path);

	r = bus_open_address(address, true, &untouched);
	CHECK(r < 0, "nothing listens, yet %d", r);
	CHECK(untouched == (sd_bus *)&sa, "result changed on failure");

	/* connect() completes against the backlog: no one needs to accept */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 4) == 0,
	      "listen on %s", sa.sun_path);
	check_open(address, true);
	check_open(address, false);

	close(fd);
	unlink(sa.sun_path);
	rmdir(dir);
	return test_result();
}
