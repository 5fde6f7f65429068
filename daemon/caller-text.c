/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "caller-text.h"
#include "control-chars.h"

int caller_text_check(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max)
		return -E2BIG;
	for (const char *p = s; *p; p++)
		if (control_char_at(p))
			return -EILSEQ;
	return 0;
}

int record_identity_check(const RunIdentity *id, char **ret_why)
{
	const struct {
		const char *name;
		const char *value;
	} fields[] = {
		{ "run_id", id->run_id },
		{ "binary_version", id->binary_version },
		{ "detector_digest", id->detector_digest },
		{ "config_digest", id->config_digest },
		{ "source_kind", id->source_kind },
		{ "workload_class", id->workload_class },
		{ "backend_requested", id->backend_requested },
		{ "backend_selected", id->backend_selected },
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		int r;

		if (!fields[i].value)
			continue;
		r = caller_text_check(fields[i].value, CALLER_TEXT_MAX);
		if (r == 0)
			continue;
		if (!ret_why)
			return r;
		if ((r == -E2BIG ? asprintf(ret_why, "identity.%s is %zu bytes, more than profd's limit of %d",
					   fields[i].name, strlen(fields[i].value), CALLER_TEXT_MAX)
				: asprintf(ret_why, "identity.%s contains control characters, which profd refuses",
					   fields[i].name)) < 0)
			*ret_why = NULL;
		return r;
	}
	return 0;
}

const char *caller_text_quote(const char *s, char buf[static CALLER_TEXT_QUOTE_SIZE])
{
	char head[CALLER_TEXT_QUOTE_MAX + 1];
	size_t n = strlen(s), cut = n <= CALLER_TEXT_QUOTE_MAX ? n : CALLER_TEXT_QUOTE_MAX;
	FILE *f;

	/* never cut a character in half */
	while (cut > 0 && cut < n && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	memcpy(head, s, cut);
	head[cut] = '\0';
	f = fmemopen(buf, CALLER_TEXT_QUOTE_SIZE, "w");
	if (!f)
		return "(text)";
	fputs_escaped(head, false, f);
	if (cut < n)
		fprintf(f, "... (%zu bytes)", n);
	fclose(f);
	buf[CALLER_TEXT_QUOTE_SIZE - 1] = '\0';
	return buf;
}

void caller_text_sanitize(char *s)
{
	for (unsigned char *p = (unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			*p = '?';
}
