/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "jitdump.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cleanup.h"
#include "sorted.h"
#include "time-util.h"

#define JITDUMP_MAGIC 0x4A695444U /* "JiTD" in the writer's byte order */
#define JITDUMP_FLAGS_ARCH_TIMESTAMP 1ULL
#define HEADER_SIZE 40
#define RECORD_HEADER_SIZE 16
#define CODE_LOAD_SIZE (RECORD_HEADER_SIZE + 40) /* then the name, then the code */
#define CODE_MOVE_SIZE (RECORD_HEADER_SIZE + 48)
#define NAME_MAX_BYTES 4096
/* covering entries are looked for this far back, at most */
#define LOOKUP_MAX_STEPS 4096

enum { JIT_CODE_LOAD = 0, JIT_CODE_MOVE = 1 };

typedef struct JitCode {
	uint64_t start, size;
	uint64_t from;  /* timestamp from which it is there */
	uint32_t name;  /* offset into names, or UINT32_MAX: nothing there (moved away) */
} JitCode;

struct JitDump {
	const TargetFileOpener *files;
	int fd;
	char *path;
	bool timed;         /* timestamps are CLOCK_MONOTONIC, comparable with samples */
	uint64_t parsed;    /* file offset of the next record */
	uint64_t read_at;   /* CLOCK_MONOTONIC of the last read: code run before is known */
	JitCode *codes;     /* sorted by (start, from) */
	size_t n_codes, n_allocated;
	uint64_t max_size;  /* of any code: how far back a lookup must look */
	char *names;
	size_t names_size, names_allocated;
};

const ProcessMapping *jitdump_find_mapping(const ProcessMaps *maps)
{
	for (size_t i = 0; i < maps->n_mappings; i++) {
		const ProcessMapping *m = &maps->mappings[i];

		if (target_mapping_has_file(m) && target_file_is_jitdump(m->path))
			return m;
	}
	return NULL;
}

JitDump *jitdump_free(JitDump *j)
{
	if (!j)
		return NULL;
	safe_close(j->fd);
	free(j->path);
	free(j->codes);
	free(j->names);
	free(j);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(JitDump *, jitdump_free);

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static bool read_exact(int fd, void *buf, size_t size, uint64_t offset)
{
	ssize_t n = pread(fd, buf, size, (off_t)offset);

	return n == (ssize_t)size;
}

/* The file header, once written: format, byte order, clock. */
static int read_header(JitDump *j)
{
	uint8_t h[HEADER_SIZE];
	uint32_t header_size;

	if (j->parsed > 0)
		return 0;
	if (!read_exact(j->fd, h, sizeof(h), 0))
		return -ENODATA;
	/* x86-64 writers are little-endian; a swapped magic is another machine's file */
	if (get32(h) != JITDUMP_MAGIC || get32(h + 4) != 1)
		return -EPROTONOSUPPORT;
	header_size = get32(h + 8);
	if (header_size < HEADER_SIZE)
		return -EBADMSG;
	j->timed = !(get64(h + 32) & JITDUMP_FLAGS_ARCH_TIMESTAMP);
	j->parsed = header_size;
	return 0;
}

int jitdump_open(const TargetFileOpener *files, uint32_t pid, const ProcessMapping *m,
		 JitDump **ret)
{
	_cleanup_(jitdump_freep) JitDump *j = calloc(1, sizeof(*j));
	TargetFileRequest req = {
		.kind = TARGET_FILE_JITDUMP,
		.pid = pid,
		.address = m->start,
		.inode = m->inode,
		.dev_major = m->dev_major,
		.dev_minor = m->dev_minor,
	};
	int r;

	if (!j)
		return -ENOMEM;
	j->files = files ?: &target_file_opener_default;
	j->fd = target_file_opener_open(j->files, &req);
	if (j->fd < 0)
		return j->fd;
	j->path = strdup(m->path);
	if (!j->path)
		return -ENOMEM;
	/* kept open even before the JIT writes its header out (it buffers): read once there */
	r = read_header(j);
	if (r < 0 && r != -ENODATA)
		return r;
	*ret = TAKE_PTR(j);
	return 0;
}

const char *jitdump_path(const JitDump *j)
{
	return j->path;
}

static int add_name(JitDump *j, const char *name, size_t len, uint32_t *ret)
{
	/* names are found by 32-bit offsets */
	if (j->names_size + len + 1 > UINT32_MAX)
		return -E2BIG;
	if (ARRAY_RESERVE(j->names, j->names_allocated, j->names_size + len + 1, 65536) < 0)
		return -ENOMEM;
	memcpy(j->names + j->names_size, name, len);
	j->names[j->names_size + len] = '\0';
	*ret = (uint32_t)j->names_size;
	j->names_size += len + 1;
	return 0;
}

static int add_code(JitDump *j, uint64_t start, uint64_t size, uint64_t from, uint32_t name)
{
	if (size == 0)
		return 0;
	if (ARRAY_RESERVE(j->codes, j->n_allocated, j->n_codes + 1, 256) < 0)
		return -ENOMEM;
	j->codes[j->n_codes++] = (JitCode){ start, size, from, name };
	if (size > j->max_size)
		j->max_size = size;
	return 0;
}

/* JIT_CODE_LOAD: pid, tid, vma, code_addr, code_size, code_index, name, code bytes. */
static int parse_load(JitDump *j, uint64_t offset, uint32_t total, uint64_t timestamp)
{
	uint8_t fixed[CODE_LOAD_SIZE];
	char name[NAME_MAX_BYTES];
	size_t max = total - CODE_LOAD_SIZE < sizeof(name) ? total - CODE_LOAD_SIZE : sizeof(name);
	const char *end;
	uint32_t name_off;
	int r;

	if (total < CODE_LOAD_SIZE + 1 || !read_exact(j->fd, fixed, sizeof(fixed), offset) ||
	    !read_exact(j->fd, name, max, offset + CODE_LOAD_SIZE))
		return 0;
	end = memchr(name, '\0', max);
	if (!end || end == name)
		return 0;
	r = add_name(j, name, (size_t)(end - name), &name_off);
	if (r < 0)
		return r;
	return add_code(j, get64(fixed + 32), get64(fixed + 40), timestamp, name_off);
}

/* JIT_CODE_MOVE: pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index. */
static int parse_move(JitDump *j, uint64_t offset, uint32_t total, uint64_t timestamp)
{
	uint8_t fixed[CODE_MOVE_SIZE];
	uint64_t old_addr, new_addr, size;
	const JitCode *moved = NULL;
	int r;

	if (total < CODE_MOVE_SIZE || !read_exact(j->fd, fixed, sizeof(fixed), offset))
		return 0;
	old_addr = get64(fixed + 32);
	new_addr = get64(fixed + 40);
	size = get64(fixed + 48);
	/* the code last loaded at the old address, among what was read so far */
	for (size_t i = j->n_codes; i > 0; i--)
		if (j->codes[i - 1].start == old_addr && j->codes[i - 1].name != UINT32_MAX) {
			moved = &j->codes[i - 1];
			break;
		}
	if (!moved)
		return 0;
	r = add_code(j, new_addr, size, timestamp, moved->name);
	if (r < 0)
		return r;
	/* nothing is left where it was */
	return add_code(j, old_addr, size, timestamp, UINT32_MAX);
}

static int code_compare(const void *a, const void *b)
{
	const JitCode *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* Take the complete records the JIT appended since the last read. */
static int read_appended(JitDump *j)
{
	struct stat st;
	uint64_t end;
	size_t before = j->n_codes;
	int r;

	r = read_header(j);
	if (r < 0)
		return r == -ENOMEM ? r : 0;
	if (fstat(j->fd, &st) < 0)
		return negative_errno();
	end = (uint64_t)st.st_size < TARGET_FILE_JITDUMP_MAX ? (uint64_t)st.st_size
							     : TARGET_FILE_JITDUMP_MAX;
	while (j->parsed + RECORD_HEADER_SIZE <= end) {
		uint8_t h[RECORD_HEADER_SIZE];
		uint32_t id, total;
		uint64_t timestamp;

		if (!read_exact(j->fd, h, sizeof(h), j->parsed))
			break;
		id = get32(h);
		total = get32(h + 4);
		timestamp = get64(h + 8);
		if (total < RECORD_HEADER_SIZE) {
			/* a corrupt record: nothing after it can be trusted to line up */
			j->parsed = end;
			break;
		}
		if (j->parsed + total > end)
			break; /* still being written */
		if (id == JIT_CODE_LOAD)
			r = parse_load(j, j->parsed, total, timestamp);
		else if (id == JIT_CODE_MOVE)
			r = parse_move(j, j->parsed, total, timestamp);
		if (r < 0)
			break;
		j->parsed += total;
	}
	if (j->n_codes > before)
		qsort(j->codes, j->n_codes, sizeof(JitCode), code_compare);
	return r;
}

/*
 * Among the codes covering 'addr', the one loaded last at or before 'time'
 * (without comparable clocks, or if all came later: the latest, the earliest).
 */
static const JitCode *find(const JitDump *j, uint64_t addr, uint64_t time)
{
	size_t i = SORTED_UPPER_BOUND(j->codes, j->n_codes, start, addr);
	const JitCode *best = NULL, *earliest = NULL;

	for (size_t steps = 0; i > 0 && steps < LOOKUP_MAX_STEPS; i--, steps++) {
		const JitCode *c = &j->codes[i - 1];

		if (addr - c->start >= j->max_size)
			break;
		if (addr - c->start >= c->size)
			continue;
		if (!earliest || c->from < earliest->from)
			earliest = c;
		if ((!j->timed || c->from <= time) && (!best || c->from > best->from))
			best = c;
	}
	return best ?: earliest;
}

int jitdump_lookup(JitDump *j, uint64_t addr, uint64_t time, const char **ret_name,
		   uint64_t *ret_start)
{
	const JitCode *c = find(j, addr, time);

	/*
	 * A JIT writes a record before it runs the code: a sample taken before
	 * the last read is named by what was read; a later one (or a miss) reads
	 * what was appended since, in case the address was reused meanwhile.
	 */
	if (!c || (j->timed && time > j->read_at)) {
		int r;

		j->read_at = clock_nanos(CLOCK_MONOTONIC);
		r = read_appended(j);
		if (r == -ENOMEM)
			return r;
		c = find(j, addr, time);
	}
	if (!c || c->name == UINT32_MAX)
		return -ENOENT;
	if (ret_name)
		*ret_name = j->names + c->name;
	if (ret_start)
		*ret_start = c->start;
	return 0;
}
