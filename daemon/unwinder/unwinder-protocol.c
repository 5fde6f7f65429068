/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unwinder-protocol.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "cleanup.h"

_Static_assert(sizeof(UnwinderFileRequest) >= sizeof(UnwinderSessionStart) &&
		       sizeof(UnwinderFileRequest) >= sizeof(UnwinderStats) &&
		       sizeof(UnwinderFileRequest) >= sizeof(UnwinderProbe),
	       "UNWINDER_MESSAGE_MAX holds every message");

int unwinder_send(int sock, const void *msg, size_t size, const int *fds, size_t n_fds)
{
	union {
		struct cmsghdr header;
		uint8_t buf[CMSG_SPACE(UNWINDER_FDS_MAX * sizeof(int))];
	} control = {};
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (n_fds > UNWINDER_FDS_MAX)
		return -EINVAL;
	if (n_fds > 0) {
		struct cmsghdr *c;

		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(n_fds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n_fds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n_fds * sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return negative_errno();
	return (size_t)n == size ? 0 : -EIO;
}

ssize_t unwinder_recv(int sock, void *buf, int flags, int ret_fds[UNWINDER_FDS_MAX])
{
	union {
		struct cmsghdr header;
		uint8_t buf[CMSG_SPACE(4 * sizeof(int))];
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = UNWINDER_MESSAGE_MAX };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf, .msg_controllen = sizeof(control.buf),
	};
	int fds[UNWINDER_FDS_MAX] = { -1, -1 }, n_fds = 0, extra = 0;
	ssize_t n;

	do
		n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : negative_errno();
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t count;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < count; i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (n_fds < UNWINDER_FDS_MAX)
				fds[n_fds++] = got;
			else {
				safe_close(got);
				extra++;
			}
		}
	}
	/* a cut message or descriptor list is nothing to act on */
	if (extra > 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		for (int i = 0; i < n_fds; i++)
			safe_close(fds[i]);
		return -EBADMSG;
	}
	memcpy(ret_fds, fds, sizeof(fds));
	return n;
}
