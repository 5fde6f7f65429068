/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bounds of daemon/debuginfod-fetch.c against a misbehaving server on
 * localhost (a real libdebuginfod client, a stub HTTP server here): a file
 * larger than the size cap is abandoned early and its build-id remembered as
 * failed; a server that never answers is given up at the fetch's timeout, not
 * libdebuginfod's own (90 s without a byte); a build-id asked for again and
 * again while it is fetched reaches the server once; and freeing the fetcher
 * abandons a fetch in progress instead of waiting for its timeout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "debuginfod-fetch.h"
#include "test-util.h"

#define HUGE_SIZE (1ULL << 30)

/* By the build-id's first byte: 0xaa a huge file, 0xbb and 0xcc no answer ever. */
static atomic_uint requests_aa, requests_bb, requests_cc;
static atomic_ullong sent_aa;

static void *serve_connection(void *userdata)
{
	int fd = (int)(intptr_t)userdata;
	static char chunk[64 << 10];
	char req[4096];
	size_t n = 0;
	ssize_t k;

	while (n < sizeof(req) - 1 && (k = read(fd, req + n, sizeof(req) - 1 - n)) > 0) {
		n += (size_t)k;
		req[n] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	req[n] = '\0';
	if (strstr(req, "GET /buildid/aa")) {
		char head[128];

		requests_aa++;
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\n\r\n", HUGE_SIZE);
		if (write(fd, head, strlen(head)) > 0)
			while (sent_aa < HUGE_SIZE && (k = send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL)) > 0)
				sent_aa += (unsigned long long)k;
	} else {
		if (strstr(req, "GET /buildid/bb"))
			requests_bb++;
		if (strstr(req, "GET /buildid/cc"))
			requests_cc++;
		/* no answer: wait for the client to give up */
		while (read(fd, req, sizeof(req)) > 0)
			;
	}
	close(fd);
	return NULL;
}

static void *serve(void *userdata)
{
	int listener = (int)(intptr_t)userdata;

	for (;;) {
		int fd = accept(listener, NULL, NULL);
		pthread_t t;

		if (fd < 0)
			return NULL;
		if (pthread_create(&t, NULL, serve_connection, (void *)(intptr_t)fd) != 0)
			close(fd);
		else
			pthread_detach(t);
	}
}

static int start_server(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	pthread_t t;

	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, len) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&addr, &len) < 0 ||
	    pthread_create(&t, NULL, serve, (void *)(intptr_t)fd) != 0)
		return -1;
	pthread_detach(t);
	return ntohs(addr.sin_port);
}

typedef struct Ask {
	DebuginfodFetch *fetch;
	uint8_t first;
} Ask;

static int ask(DebuginfodFetch *f, uint8_t first)
{
	TargetFileRequest req = { .kind = TARGET_FILE_BUILD_ID, .pid = (uint32_t)getpid(),
				  .build_id_size = 20 };
	const TargetFileOpener *o = debuginfod_fetch_opener(f);
	int r;

	memset(req.build_id, first, 20);
	r = target_file_opener_open(o, &req);
	if (r >= 0)
		close(r);
	return r;
}

static bool has_failed(void *userdata)
{
	Ask *a = userdata;

	return ask(a->fetch, a->first) == -ENOENT;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static bool server_asked_cc(void *userdata)
{
	return requests_cc > 0;
}

int main(void)
{
	DebuginfodFetchLimits limits = DEBUGINFOD_FETCH_DEFAULT_LIMITS;
	char cache[] = "/tmp/profd-debuginfod-XXXXXX";
	char url[64];
	DebuginfodFetch *f = NULL;
	uint64_t start, elapsed;
	int port, r;

	port = start_server();
	CHECK(port > 0, "cannot start the stub server: %m");
	if (port <= 0 || !mkdtemp(cache))
		return EXIT_FAILURE;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", url, 1);
	limits.timeout_usec = 2000000;
	limits.max_bytes = 1 << 20;
	r = debuginfod_fetch_new(cache, &limits, &f);
	CHECK(r == 0, "debuginfod_fetch_new: %s", strerror(-r));
	if (r < 0)
		return test_result();

	/* a file over the cap: abandoned once its size is known, remembered as failed */
	CHECK(ask(f, 0xaa) == -EAGAIN, "the first request is not 'being fetched'");
	CHECK(test_wait_until(80, has_failed, &(Ask){ f, 0xaa }), "the huge file's fetch never failed");
	CHECK(sent_aa < HUGE_SIZE / 2, "%llu bytes of the huge file were sent before it was abandoned",
	      (unsigned long long)sent_aa);
	CHECK(requests_aa == 1, "the huge file was requested %u times", (unsigned)requests_aa);
	CHECK(ask(f, 0xaa) == -ENOENT && requests_aa == 1, "a failed build-id was fetched again");

	/* no answer: given up at the 2 s timeout, far below libdebuginfod's 90 s; asked once */
	start = clock_nanos(CLOCK_MONOTONIC);
	CHECK(ask(f, 0xbb) == -EAGAIN, "the second build-id is not 'being fetched'");
	for (int i = 0; i < 20; i++)
		CHECK(ask(f, 0xbb) == -EAGAIN, "request %d of a build-id being fetched", i);
	CHECK(test_wait_until(80, has_failed, &(Ask){ f, 0xbb }), "the silent server was never given up");
	elapsed = clock_nanos(CLOCK_MONOTONIC) - start;
	CHECK(elapsed >= 2 * NSEC_PER_SEC, "given up after %.1f s, before the timeout",
	      (double)elapsed / 1e9);
	CHECK(requests_bb == 1, "the server was asked %u times for one build-id", (unsigned)requests_bb);
	f = debuginfod_fetch_free(f);

	/* a fetch in progress does not hold up the fetcher's end for its timeout */
	limits.timeout_usec = 600ULL * 1000000;
	r = debuginfod_fetch_new(cache, &limits, &f);
	CHECK(r == 0, "debuginfod_fetch_new: %s", strerror(-r));
	if (r == 0) {
		CHECK(ask(f, 0xcc) == -EAGAIN, "the third build-id is not 'being fetched'");
		CHECK(test_wait_until(80, server_asked_cc, NULL), "the third build-id never reached the server");
		start = clock_nanos(CLOCK_MONOTONIC);
		f = debuginfod_fetch_free(f);
		elapsed = clock_nanos(CLOCK_MONOTONIC) - start;
		CHECK(elapsed < 60 * NSEC_PER_SEC, "freeing took %.1f s", (double)elapsed / 1e9);
	}
	nftw(cache, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return test_result();
}
