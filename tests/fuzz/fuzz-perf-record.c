/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-perf-record: the ring reader and the record parser on arbitrary ring
 * contents. The input chooses the record format and where in the ring the
 * unread data starts (so records wrap), and supplies the ring bytes. Every
 * parsed field is read, so any read outside a record shows up under ASan.
 *
 * Input: u8 flags (1 dwarf, 2 sample_id_all, 4 more sample_id fields, 8 the
 * weight and address of bpf's aggregated samples), u16 tail offset, u16 unread
 * length, then ring data.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf-record.h"
#include "ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void touch_record(const PerfRecord *rec)
{
	uint64_t sum = rec->type;

	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		for (uint64_t i = 0; i < rec->sample.n_callchain; i++)
			sum += rec->sample.callchain[i];
		for (uint32_t i = 0; i < rec->sample.n_regs; i++)
			sum += rec->sample.regs[i];
		for (uint64_t i = 0; i < rec->sample.stack_dyn_size; i++)
			sum += rec->sample.stack[i];
		sum += rec->sample.weight + rec->sample.addr;
		break;
	case PERF_RECORD_MMAP2:
		sum += strlen(rec->mmap2.filename);
		for (uint8_t i = 0; i < rec->mmap2.build_id_size; i++)
			sum += rec->mmap2.build_id[i];
		break;
	case PERF_RECORD_COMM:
		sum += strlen(rec->comm.comm);
		break;
	default:
		break;
	}
	sink += sum;
}

static int on_record(void *userdata, const struct perf_event_header *header, size_t size)
{
	const PerfRecordFormat *format = userdata;
	PerfRecord rec;

	if (perf_record_parse(format, header, size, &rec) == 0)
		touch_record(&rec);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *memory;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	PerfRecordFormat format = {};
	PerfRing *ring = NULL;
	uint64_t data_size = 64, tail, len;
	uint16_t tail16, len16;

	if (size < 5)
		return 0;
	format.sample_type = perf_record_sample_type(data[0] & 1);
	format.sample_regs_user = (data[0] & 1) ? 0xff0fffULL : 0;
	format.sample_id_all = data[0] & 2;
	if (data[0] & 4)
		format.sample_type |= PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (data[0] & 8)
		format.sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT;
	memcpy(&tail16, data + 1, sizeof(tail16));
	memcpy(&len16, data + 3, sizeof(len16));
	data += 5;
	size -= 5;

	while (data_size < size && data_size < 65536)
		data_size *= 2;
	if (!memory)
		memory = aligned_alloc(page, page + 65536);
	memset(memory, 0, page);
	memcpy(memory + page, data, size < data_size ? size : data_size);
	if (size < data_size)
		memset(memory + page + size, 0, data_size - size);

	/* a tail far along, as after many laps, so head and tail are not small numbers */
	tail = 1000 * data_size + tail16 % data_size;
	len = len16;
	((struct perf_event_mmap_page *)memory)->data_tail = tail;
	((struct perf_event_mmap_page *)memory)->data_head = tail + len;

	if (ring_wrap_memory(memory, data_size, &ring) < 0)
		return 0;
	(void)ring_drain(ring, on_record, &format, NULL);
	ring_free(ring);

	/* and the parser alone on the raw bytes, as one record */
	if (size >= sizeof(struct perf_event_header) && size <= 65535 && size % 8 == 0) {
		uint64_t *copy = malloc(size);
		PerfRecord rec;

		memcpy(copy, data, size);
		((struct perf_event_header *)copy)->size = (uint16_t)size;
		if (perf_record_parse(&format, (const struct perf_event_header *)copy, size, &rec) == 0)
			touch_record(&rec);
		free(copy);
	}
	return 0;
}
