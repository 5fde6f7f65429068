/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "backlog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"

#define BACKLOG_MAGIC 0x676f6c6b63616250ULL /* "Pbacklog" */
#define BACKLOG_MAX_BYTES (1ULL << 32)
/*
 * A record only the backlog writes: the rest of the lap is unused, the next record is at
 * the data's start. Written when the consumer has caught up past a quarter of the data, so
 * the records keep to the memfd's first pages while the consumer keeps up: a page the ring
 * has not reached yet costs a fault, a zeroed page and its freeing at the end (for 16 KiB
 * stack copies that was most of a session's CPU outside unwinding).
 */
#define BACKLOG_REWIND UINT32_MAX
#define BACKLOG_REWIND_DIVISOR 4
/*
 * backlog_notify_batched(): the consumer is woken once records fill this part
 * of the data (an eighth: ~125 ms at the full rate), or have waited this long.
 */
#define BACKLOG_NOTIFY_DIVISOR 8
#define BACKLOG_NOTIFY_NANOS (100ULL * 1000000ULL)

/* The memfd's first page; each side writes only its own fields. */
typedef struct BacklogControl {
	uint64_t magic;
	uint64_t data_size;
	_Atomic uint64_t head;      /* producer: bytes ever written */
	_Atomic uint64_t watermark; /* producer */
	_Atomic uint64_t cutoff;    /* producer, before closed */
	_Atomic uint32_t closed;    /* producer */
	uint64_t start_mono, start_unix; /* producer, before started */
	_Atomic uint32_t started;   /* producer */
	uint8_t pad[64];            /* the consumer's field on a cache line of its own */
	_Atomic uint64_t tail;      /* consumer: bytes ever consumed */
} BacklogControl;

struct Backlog {
	int memfd, eventfd;
	BacklogControl *control;
	size_t page;
	uint8_t *data; /* data_size bytes, mapped twice in a row */
	uint64_t data_size;
	/*
	 * our own copies: the shared ones are only published. A backlog consumed by
	 * a thread of the same process is one Backlog for both sides: each side
	 * keeps its own fields
	 */
	uint64_t head;          /* producer */
	uint64_t consumed;      /* producer: the consumer's tail as last read */
	uint64_t tail;          /* consumer */
	uint64_t rewind_from, rewind_to; /* producer: the latest lap cut short */
	uint64_t peek_size;
	uint64_t peak;
	uint64_t notified_head, notified_at; /* producer: at the last wakeup */
};

Backlog *backlog_free(Backlog *b)
{
	if (!b)
		return NULL;
	if (b->data)
		munmap(b->data, 2 * b->data_size);
	if (b->control)
		munmap(b->control, b->page);
	safe_close(b->memfd);
	safe_close(b->eventfd);
	free(b);
	return NULL;
}

void backlog_freep(Backlog **b)
{
	backlog_free(*b);
}

/* The control page, and the data area twice in a row in one reserved range. */
static int backlog_map(Backlog *b)
{
	uint8_t *base;

	b->control = mmap(NULL, b->page, PROT_READ | PROT_WRITE, MAP_SHARED, b->memfd, 0);
	if (b->control == MAP_FAILED) {
		b->control = NULL;
		return negative_errno();
	}
	base = mmap(NULL, 2 * b->data_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return negative_errno();
	b->data = base;
	for (int i = 0; i < 2; i++)
		if (mmap(base + i * b->data_size, b->data_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, b->memfd, (off_t)b->page) == MAP_FAILED)
			return negative_errno();
	return 0;
}

/* What backlog_new() makes of 'bytes': whole pages, within its bounds (0: too large). */
static uint64_t backlog_data_size(uint64_t bytes, size_t page)
{
	if (bytes < BACKLOG_MIN_BYTES)
		bytes = BACKLOG_MIN_BYTES;
	if (bytes > BACKLOG_MAX_BYTES)
		return 0;
	return (bytes + page - 1) / page * page;
}

static void backlog_init_control(Backlog *b)
{
	*b->control = (BacklogControl){ .magic = BACKLOG_MAGIC, .data_size = b->data_size };
	atomic_store(&b->control->watermark, UINT64_MAX);
}

int backlog_new(uint64_t bytes, Backlog **ret)
{
	_cleanup_(backlog_freep) Backlog *b = calloc(1, sizeof(*b));
	int r;

	if (!b)
		return -ENOMEM;
	b->memfd = b->eventfd = -1;
	b->page = (size_t)sysconf(_SC_PAGESIZE);
	b->data_size = backlog_data_size(bytes, b->page);
	if (b->data_size == 0)
		return -E2BIG;

	b->memfd = memfd_create("profd-backlog", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (b->memfd < 0)
		return negative_errno();
	if (ftruncate(b->memfd, (off_t)(b->page + b->data_size)) < 0)
		return negative_errno();
	/* a consumer elsewhere must not make our mappings fault by shrinking it */
	if (fcntl(b->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return negative_errno();
	b->eventfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->eventfd < 0)
		return negative_errno();
	r = backlog_map(b);
	if (r < 0)
		return r;
	backlog_init_control(b);
	*ret = TAKE_PTR(b);
	return 0;
}

int backlog_reset(Backlog *b, uint64_t bytes)
{
	uint64_t v;

	if (backlog_data_size(bytes, b->page) != b->data_size)
		return -EMSGSIZE;
	backlog_init_control(b);
	b->head = b->consumed = b->tail = 0;
	b->rewind_from = b->rewind_to = 0;
	b->peek_size = b->peak = 0;
	b->notified_head = b->notified_at = 0;
	/* a wakeup the last consumer left unread would only wake the next one for nothing */
	(void)!read(b->eventfd, &v, sizeof(v));
	return 0;
}

int backlog_attach(int memfd, int eventfd, Backlog **ret)
{
	_cleanup_(backlog_freep) Backlog *b = calloc(1, sizeof(*b));
	struct stat st;
	int seals, r;

	if (!b) {
		safe_close(memfd);
		safe_close(eventfd);
		return -ENOMEM;
	}
	b->memfd = memfd;
	b->eventfd = eventfd;
	b->page = (size_t)sysconf(_SC_PAGESIZE);
	if (fstat(memfd, &st) < 0)
		return negative_errno();
	seals = fcntl(memfd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || (uint64_t)st.st_size <= b->page ||
	    (uint64_t)st.st_size > b->page + BACKLOG_MAX_BYTES ||
	    ((uint64_t)st.st_size - b->page) % b->page != 0)
		return -EBADMSG;
	b->data_size = (uint64_t)st.st_size - b->page;
	r = backlog_map(b);
	if (r < 0)
		return r;
	if (b->control->magic != BACKLOG_MAGIC || b->control->data_size != b->data_size)
		return -EBADMSG;
	b->tail = atomic_load_explicit(&b->control->tail, memory_order_acquire);
	*ret = TAKE_PTR(b);
	return 0;
}

int backlog_get_memfd(const Backlog *b)
{
	return b->memfd;
}

int backlog_get_eventfd(const Backlog *b)
{
	return b->eventfd;
}

uint64_t backlog_get_size(const Backlog *b)
{
	return b->data_size;
}

int backlog_push(Backlog *b, const struct perf_event_header *rec, uint64_t limit)
{
	uint64_t tail = atomic_load_explicit(&b->control->tail, memory_order_acquire);
	uint64_t used;

	/* the consumer only moves forward, and never past what we wrote */
	if (tail < b->consumed || tail > b->head)
		return -EBADMSG;
	b->consumed = tail;
	if (rec->size < sizeof(*rec) || rec->size % 8 != 0)
		return -EINVAL;
	if (tail == b->head && b->head % b->data_size >= b->data_size / BACKLOG_REWIND_DIVISOR) {
		/* empty: the lap's unused rest counts as used until the consumer passes it */
		struct perf_event_header rewind = { .type = BACKLOG_REWIND, .size = sizeof(rewind) };

		memcpy(b->data + b->head % b->data_size, &rewind, sizeof(rewind));
		b->rewind_from = b->head;
		b->head += b->data_size - b->head % b->data_size;
		b->rewind_to = b->head;
	}
	used = b->head - tail;
	if (limit > b->data_size)
		limit = b->data_size;
	if (used + rec->size > limit)
		return -ENOBUFS;
	memcpy(b->data + b->head % b->data_size, rec, rec->size);
	b->head += rec->size;
	/* the peak is of records held, not of a lap's skipped rest */
	if (tail < b->rewind_to)
		used -= b->rewind_to - b->rewind_from;
	if (used + rec->size > b->peak)
		b->peak = used + rec->size;
	atomic_store_explicit(&b->control->head, b->head, memory_order_release);
	return 0;
}

void backlog_set_watermark(Backlog *b, uint64_t time)
{
	atomic_store_explicit(&b->control->watermark, time, memory_order_release);
}

void backlog_notify(Backlog *b)
{
	uint64_t one = 1;

	/* only fails when the counter would overflow: the consumer is awake then anyway */
	(void)!write(b->eventfd, &one, sizeof(one));
}

void backlog_notify_batched(Backlog *b, uint64_t now)
{
	if (b->head == b->notified_head ||
	    (b->head - b->notified_head < b->data_size / BACKLOG_NOTIFY_DIVISOR &&
	     now - b->notified_at < BACKLOG_NOTIFY_NANOS))
		return;
	b->notified_head = b->head;
	b->notified_at = now;
	backlog_notify(b);
}

void backlog_close(Backlog *b, uint64_t cutoff)
{
	atomic_store_explicit(&b->control->cutoff, cutoff, memory_order_relaxed);
	atomic_store_explicit(&b->control->closed, 1, memory_order_release);
	backlog_notify(b);
}

void backlog_set_start(Backlog *b, uint64_t mono, uint64_t unix_nanos)
{
	b->control->start_mono = mono;
	b->control->start_unix = unix_nanos;
	atomic_store_explicit(&b->control->started, 1, memory_order_release);
}

bool backlog_get_start(const Backlog *b, uint64_t *ret_mono, uint64_t *ret_unix)
{
	if (!atomic_load_explicit(&b->control->started, memory_order_acquire))
		return false;
	*ret_mono = b->control->start_mono;
	*ret_unix = b->control->start_unix;
	return true;
}

uint64_t backlog_get_peak(const Backlog *b)
{
	return b->peak;
}

int backlog_peek(Backlog *b, const struct perf_event_header **ret)
{
	uint64_t head = atomic_load_explicit(&b->control->head, memory_order_acquire);
	const struct perf_event_header *rec;
	uint64_t avail;

	if (head < b->tail || head - b->tail > b->data_size)
		return -EBADMSG;
	avail = head - b->tail;
	if (avail == 0)
		return 0;
	rec = (const struct perf_event_header *)(b->data + b->tail % b->data_size);
	if (rec->type == BACKLOG_REWIND) {
		uint64_t skip = b->data_size - b->tail % b->data_size;

		/* written only past a lap's first quarter: one rewind, never two in a row */
		if (rec->size != sizeof(*rec) || skip == b->data_size || skip > avail)
			return -EBADMSG;
		b->tail += skip;
		atomic_store_explicit(&b->control->tail, b->tail, memory_order_release);
		return backlog_peek(b, ret);
	}
	b->peek_size = rec->size;
	if (b->peek_size < sizeof(*rec) || b->peek_size % 8 != 0 || b->peek_size > avail)
		return -EBADMSG;
	*ret = rec;
	return 1;
}

void backlog_consume(Backlog *b)
{
	/* the size checked by peek, whatever the record says now */
	b->tail += b->peek_size;
	b->peek_size = 0;
	atomic_store_explicit(&b->control->tail, b->tail, memory_order_release);
}

uint64_t backlog_get_watermark(const Backlog *b)
{
	return atomic_load_explicit(&b->control->watermark, memory_order_acquire);
}

bool backlog_is_closed(const Backlog *b, uint64_t *ret_cutoff)
{
	if (!atomic_load_explicit(&b->control->closed, memory_order_acquire))
		return false;
	if (ret_cutoff)
		*ret_cutoff = atomic_load_explicit(&b->control->cutoff, memory_order_relaxed);
	return true;
}

int backlog_wait(Backlog *b, int timeout_ms)
{
	struct pollfd p = { .fd = b->eventfd, .events = POLLIN };
	uint64_t v;
	int n;

	n = poll(&p, 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : negative_errno();
	if (n > 0)
		(void)!read(b->eventfd, &v, sizeof(v));
	return 0;
}
