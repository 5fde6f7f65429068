/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "session-identity.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

static void elf_endp(Elf **e)
{
	if (*e)
		elf_end(*e);
}

static int hex_encode(const uint8_t *p, size_t n, char **ret)
{
	char *s = malloc(n * 2 + 1);

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		sprintf(s + i * 2, "%02x", p[i]);
	s[n * 2] = '\0';
	*ret = s;
	return 0;
}

int target_build_id(pid_t pid, char **ret)
{
	_cleanup_close_ int fd = -1;
	_cleanup_(elf_endp) Elf *elf = NULL;
	char path[64];
	Elf_Scn *scn = NULL;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -EBADMSG;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		GElf_Nhdr nhdr;
		Elf_Data *data;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0)
			if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
			    memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 && nhdr.n_descsz > 0)
				return hex_encode((uint8_t *)data->d_buf + desc_off, nhdr.n_descsz, ret);
	}
	return -ENODATA;
}

int session_request_digest(const SessionRequest *req, uint32_t hz, uint64_t duration_usec,
			   char **ret)
{
	_cleanup_free_ char *line = NULL;
	uint64_t h = 0xcbf29ce484222325ULL;

	if (asprintf(&line, "hz=%" PRIu32 " duration_usec=%" PRIu64 " backend=%s event=%s kernel=%d "
		     "stack_bytes=%" PRIu32 " ring_capacity=%" PRIu64,
		     hz, duration_usec, req->backend ?: "auto", req->event ?: "cpu-clock",
		     req->kernel, req->stack_bytes, req->ring_capacity) < 0)
		return -ENOMEM;
	for (const char *p = line; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	if (asprintf(ret, "%016" PRIx64, h) < 0)
		return -ENOMEM;
	return 0;
}

int session_identity_new(const SessionRequest *req, const char *comm, uint32_t hz,
			 uint64_t duration_usec, RunIdentity *ret)
{
	_cleanup_free_ char *build_id = NULL, *digest = NULL;
	int r;

	r = target_build_id(req->pid, &build_id);
	if (r == -ENOMEM)
		return r;
	r = session_request_digest(req, hz, duration_usec, &digest);
	if (r < 0)
		return r;
	return run_identity_new("profd " PROFD_VERSION, build_id ?: "none", digest, "pid",
				req->workload_class ?: comm, req->backend ?: "auto", ret);
}
