/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Labels of a profile's samples and markers on its threads' timelines (profile.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "profile.h"

int profile_set_label_keys(Profile *p, const char *const *keys, uint32_t n)
{
	size_t rows = p->samples_allocated > p->n_samples ? p->samples_allocated : p->n_samples;
	uint32_t ids[PROFILE_LABEL_KEYS_MAX];
	uint32_t *labels;
	int r;

	if (p->n_label_keys > 0)
		return -EBUSY;
	if (n == 0 || n > PROFILE_LABEL_KEYS_MAX)
		return -EINVAL;
	for (uint32_t k = 0; k < n; k++) {
		r = profile_intern_string(p, keys[k], &ids[k]);
		if (r < 0)
			return r;
	}
	labels = malloc((rows ?: 1) * n * sizeof(uint32_t));
	if (!labels)
		return -ENOMEM;
	memset(labels, 0xff, (rows ?: 1) * n * sizeof(uint32_t)); /* PROFILE_NONE */
	memcpy(p->label_keys, ids, n * sizeof(uint32_t));
	p->sample_labels = labels;
	p->n_label_keys = n;
	return 0;
}

int profile_find_label_key(const Profile *p, const char *key, uint32_t *ret)
{
	for (uint32_t k = 0; k < p->n_label_keys; k++)
		if (strcmp(p->strings[p->label_keys[k]], key) == 0) {
			*ret = k;
			return 0;
		}
	return -ENOENT;
}

int profile_add_marker(Profile *p, const ProfileMarker *m)
{
	int r;

	if (m->name >= p->n_strings || m->end_ns < m->start_ns)
		return -EINVAL;
	r = ARRAY_RESERVE_U32(p->markers, p->markers_allocated, (size_t)p->n_markers + 1, 256);
	if (r < 0)
		return r;
	p->markers[p->n_markers++] = *m;
	return 0;
}

int profile_keep_labelled(Profile *p, const char *key, const char *value)
{
	uint32_t k, id = PROFILE_NONE, kept_markers = 0;
	size_t kept = 0;

	if (profile_find_label_key(p, key, &k) < 0)
		return -ENOENT;
	/* a value no sample has is not interned: nothing matches it */
	for (uint32_t i = 0; i < p->n_strings && id == PROFILE_NONE; i++)
		if (strcmp(p->strings[i], value) == 0)
			id = i;
	for (size_t i = 0; i < p->n_samples; i++) {
		if (id == PROFILE_NONE || profile_sample_label(p, i, k) != id)
			continue;
		p->samples[kept] = p->samples[i];
		memmove(&p->sample_labels[kept * p->n_label_keys],
			&p->sample_labels[i * p->n_label_keys], p->n_label_keys * sizeof(uint32_t));
		kept++;
	}
	p->n_samples = kept;
	for (uint32_t i = 0; i < p->n_markers; i++)
		if (id != PROFILE_NONE && p->markers[i].name == id)
			p->markers[kept_markers++] = p->markers[i];
	p->n_markers = kept_markers;
	return 0;
}
