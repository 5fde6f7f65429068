/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The record of a live run: the program's, with profd's additions (live-record.h). */
#include "live-record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cleanup.h"
#include "json-number.h"


/* Set 'key' of the object *extra (made when missing); 'value' is taken over, NULL is ENOMEM. */
static int extra_set(json_t **extra, const char *key, json_t *value)
{
	if (!value)
		return -ENOMEM;
	if (!*extra && !(*extra = json_object())) {
		json_decref(value);
		return -ENOMEM;
	}
	return json_object_set_new(*extra, key, value) < 0 ? -ENOMEM : 0;
}

static double share(uint64_t part, uint64_t all)
{
	return all ? (double)part / (double)all : 0.0;
}

static json_t *string_or_null(const Profile *p, uint32_t id)
{
	return id == PROFILE_NONE ? json_null() : json_string(p->strings[id]);
}

/* {"samples", "cpu_share" (of all samples), "hottest": [{"function", "module", "samples", "share"}]} */
static json_t *group_json(const Profile *p, const JoinGroup *g, uint64_t all)
{
	_cleanup_(json_decrefp) json_t *o = json_object(), *hottest = json_array();

	if (!o || !hottest)
		return NULL;
	for (size_t i = 0; i < g->n_hottest; i++) {
		const HotFrame *f = &g->hottest[i];

		if (json_array_append_new(hottest, json_pack("{s:o,s:o,s:o,s:f}", "function",
							     string_or_null(p, f->function), "module",
							     string_or_null(p, f->module), "samples",
							     json_u64_new(f->samples), "share",
							     share(f->samples, g->samples))) < 0)
			return NULL;
	}
	if (json_object_set_new(o, "samples", json_u64_new(g->samples)) < 0 ||
	    json_object_set_new(o, "cpu_share", json_real(share(g->samples, all))) < 0 ||
	    json_object_set(o, "hottest", hottest) < 0)
		return NULL;
	return TAKE_PTR(o);
}

/* The group as an entry of a list, named by 'key' = 'name'. */
static json_t *named_group_json(const Profile *p, const JoinGroup *g, uint64_t all,
				const char *key, const char *name)
{
	json_t *o = group_json(p, g, all);

	if (o && json_object_set_new(o, key, json_string(name)) < 0)
		o = (json_decref(o), NULL);
	return o;
}

static int annotate_stages(RunProfile *record, const StageJoin *j, const Profile *p,
			   json_t *profd)
{
	_cleanup_(json_decrefp) json_t *unrecorded = json_array();
	bool recorded[_STAGE_MAX] = {};
	int r;

	if (!unrecorded)
		return -ENOMEM;
	for (size_t i = 0; i < record->n_stages; i++) {
		StageMeasurement *m = &record->stages[i];

		recorded[m->stage] = true;
		r = extra_set(&m->extra, "profd", group_json(p, &j->stages[m->stage], j->n_samples));
		if (r < 0)
			return r;
	}
	for (Stage s = 0; s < _STAGE_MAX; s++)
		if (!recorded[s] && j->stages[s].samples > 0 &&
		    json_array_append_new(unrecorded, named_group_json(p, &j->stages[s], j->n_samples,
								       "stage", stage_to_string(s))) < 0)
			return -ENOMEM;
	if (json_object_set(profd, "unrecorded_stages", unrecorded) < 0)
		return -ENOMEM;
	return 0;
}

/* Every state profd saw; and each of the record's states, when they are those transitions. */
static int annotate_states(RunProfile *record, const StageJoin *j, const Profile *p,
			   const SpanLog *log, json_t *profd)
{
	_cleanup_(json_decrefp) json_t *states = json_array();
	bool aligned = record->n_states + 1 == log->n_transitions;
	int r;

	if (!states)
		return -ENOMEM;
	for (size_t k = 0; k < log->n_transitions; k++) {
		json_t *o = named_group_json(p, &j->states[k], j->n_samples, "state",
					     run_state_to_string(log->transitions[k].state));

		if (!o || json_object_set_new(o, "elapsed_ns",
					      json_u64_new(log->transitions[k].time_ns -
							   log->transitions[0].time_ns)) < 0 ||
		    json_array_append_new(states, o) < 0)
			return -ENOMEM;
		if (k < record->n_states && record->states[k].state != log->transitions[k].state)
			aligned = false;
	}
	for (size_t k = 0; aligned && k < record->n_states; k++) {
		r = extra_set(&record->states[k].extra, "profd",
			      group_json(p, &j->states[k], j->n_samples));
		if (r < 0)
			return r;
	}
	if (json_object_set(profd, "states", states) < 0 ||
	    json_object_set_new(profd, "stateless", group_json(p, &j->stateless, j->n_samples)) < 0)
		return -ENOMEM;
	return 0;
}

static json_t *span_stats_json(const SpanLogStats *s, uint64_t markers)
{
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:I,s:I,s:I,s:I,s:o}",
			 "kept", json_u64_new(s->spans),
			 "lost", json_u64_new(s->spans_lost),
			 "invalid", json_u64_new(s->spans_invalid),
			 "over_limit", json_u64_new(s->spans_over_limit),
			 "ring_errors", json_u64_new(s->ring_errors),
			 "threads", (json_int_t)s->threads,
			 "threads_without_slot", (json_int_t)s->threads_without_slot,
			 "transitions", (json_int_t)s->transitions,
			 "transitions_invalid", (json_int_t)s->transitions_invalid,
			 "markers", json_u64_new(markers));
}

/* profd's own transitions and resource usage of the target, from its record of the run. */
static json_t *observed_json(const RunProfile *observed)
{
	_cleanup_(json_decrefp) json_t *doc = NULL;
	_cleanup_free_ char *text = NULL;

	if (record_serialise(observed, false, &text) < 0)
		return NULL;
	doc = json_loads(text, 0, NULL);
	if (!doc)
		return NULL;
	return json_pack("{s:O,s:O}", "transitions", json_object_get(doc, "transitions"),
			 "resources", json_object_get(doc, "resources"));
}

int live_record_annotate(RunProfile *record, const RunProfile *observed, const StageJoin *join,
			 const Profile *p, const SpanLog *log, const LiveRunFacts *facts)
{
	_cleanup_(json_decrefp) json_t *profd = NULL;
	int r;

	r = extra_set(&record->identity.extra, "profd",
		      json_pack("{s:I,s:I,s:s,s:o}", "pid", (json_int_t)facts->pid, "uid",
				(json_int_t)facts->uid, "comm", facts->comm ?: "", "build_id",
				facts->build_id ? json_string(facts->build_id) : json_null()));
	if (r < 0)
		return r;
	profd = json_pack("{s:s,s:s,s:I,s:o,s:o,s:o,s:o}",
			  "session", facts->session_id ?: "",
			  "end_reason", facts->end_reason ?: "",
			  "hz", (json_int_t)facts->hz,
			  "samples", json_u64_new(join->n_samples),
			  "samples_dropped", json_u64_new(facts->samples_dropped),
			  "spans", span_stats_json(&log->stats, join->markers),
			  "unstaged", group_json(p, &join->unstaged, join->n_samples));
	if (!profd)
		return -ENOMEM;
	r = annotate_stages(record, join, p, profd);
	if (r >= 0)
		r = annotate_states(record, join, p, log, profd);
	if (r < 0)
		return r;
	if (observed && json_object_set_new(profd, "observed", observed_json(observed)) < 0)
		return -ENOMEM;
	return extra_set(&record->extra, "profd", TAKE_PTR(profd));
}

int live_record_add_span_stages(RunProfile *record, const SpanLog *log)
{
	StageMeasurement sums[_STAGE_MAX] = {};
	StageMeasurement *stages;
	size_t n = 0;

	for (size_t i = 0; i < log->n_intervals; i++) {
		const SpanInterval *iv = &log->intervals[i];
		StageMeasurement *m = &sums[iv->stage];
		uint64_t elapsed = iv->end_ns - iv->begin_ns;

		m->elapsed_ns = elapsed > UINT64_MAX - m->elapsed_ns ? UINT64_MAX : m->elapsed_ns + elapsed;
		m->calls++;
	}
	for (Stage s = 0; s < _STAGE_MAX; s++)
		n += sums[s].calls > 0;
	if (n == 0)
		return 0;
	stages = calloc(n, sizeof(*stages));
	if (!stages)
		return -ENOMEM;
	n = 0;
	for (Stage s = 0; s < _STAGE_MAX; s++)
		if (sums[s].calls > 0) {
			stages[n] = sums[s];
			stages[n++].stage = s;
		}
	for (size_t i = 0; i < record->n_stages; i++)
		json_decref(record->stages[i].extra);
	free(record->stages);
	record->stages = stages;
	record->n_stages = n;
	return 0;
}

/* A deep copy of extra["profd"] of 'extra', NULL when there is none. */
static json_t *profd_of(const json_t *extra)
{
	json_t *v = extra ? json_object_get(extra, "profd") : NULL;

	return v ? json_deep_copy(v) : NULL;
}

int live_record_adopt(RunProfile *record, const RunProfile *stored)
{
	json_t *profd = profd_of(stored->extra);
	int r;

	if (!profd)
		return -ENOENT;
	if (json_object_set_new(profd, "finished_late", json_true()) < 0) {
		json_decref(profd);
		return -ENOMEM;
	}
	r = extra_set(&record->extra, "profd", profd);
	if (r >= 0 && json_object_get(stored->identity.extra, "profd"))
		r = extra_set(&record->identity.extra, "profd", profd_of(stored->identity.extra));
	for (size_t i = 0; r >= 0 && i < record->n_stages; i++)
		for (size_t k = 0; k < stored->n_stages; k++)
			if (stored->stages[k].stage == record->stages[i].stage &&
			    json_object_get(stored->stages[k].extra, "profd")) {
				r = extra_set(&record->stages[i].extra, "profd",
					      profd_of(stored->stages[k].extra));
				break;
			}
	return r;
}
