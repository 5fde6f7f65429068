/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hostile profd-unwinder (test-unwinder-flood.sh installs it beside a copy
 * of profd): on its first session it saves a 16 MiB module file to its uid's
 * symbol cache, then asks profd for it back (a copy profd makes on its loop
 * each time) as fast as profd answers, WINDOW requests ahead of the answers,
 * which a second thread reads so that they never back up (profd kills an
 * unwinder that leaves its answers unread). It never consumes the backlog.
 * Says how many answers it got on stderr, every 10.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unwinder-protocol.h"

#define SOCKET_FD 3
#define WINDOW 4
#define FILE_NAME "f100d"
#define FILE_BYTES (16U << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t answered = PTHREAD_COND_INITIALIZER;
static unsigned long n_answers;

static void *read_answers(void *userdata)
{
	for (unsigned long n = 1;; n++) {
		uint8_t buf[UNWINDER_MESSAGE_MAX];
		int fds[UNWINDER_FDS_MAX];

		if (unwinder_recv(SOCKET_FD, buf, 0, fds) <= 0)
			_exit(0); /* profd is gone, or killed us meanwhile */
		for (int i = 0; i < UNWINDER_FDS_MAX; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		pthread_mutex_lock(&lock);
		n_answers = n;
		pthread_cond_signal(&answered);
		pthread_mutex_unlock(&lock);
		if (n % 10 == 0)
			fprintf(stderr, "flood-unwinder: %lu answers\n", n);
	}
	return NULL;
}

int main(void)
{
	UnwinderSessionStart start;
	UnwinderStoreFile request = { .type = UNWINDER_STORE_SAVE, .name = FILE_NAME };
	pthread_t reader;
	int fds[UNWINDER_FDS_MAX], fd;
	ssize_t n;

	do
		n = unwinder_recv(SOCKET_FD, &start, 0, fds);
	while (n > 0 && start.type != UNWINDER_SESSION_START);
	if (n != sizeof(start))
		return 1;
	fd = memfd_create("flood", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, FILE_BYTES) < 0 ||
	    unwinder_send(SOCKET_FD, &request, sizeof(request), &fd, 1) < 0)
		return 1;
	close(fd);
	if (pthread_create(&reader, NULL, read_answers, NULL) != 0)
		return 1;
	request.type = UNWINDER_STORE_LOAD;
	for (;;) {
		pthread_mutex_lock(&lock);
		while (request.cookie >= n_answers + WINDOW)
			pthread_cond_wait(&answered, &lock);
		pthread_mutex_unlock(&lock);
		request.cookie++;
		if (unwinder_send(SOCKET_FD, &request, sizeof(request), NULL, 0) < 0)
			return 0;
	}
}
