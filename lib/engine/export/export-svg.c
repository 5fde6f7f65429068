/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A self-contained flame graph (SVG with embedded script, nothing fetched):
 * the merged folding drawn root at the bottom, siblings in name order, widths
 * proportional to samples. Frames narrower than 0.1 px are left out with
 * their descendants, so huge profiles stay light. Colour says where code
 * lives: kernel frames orange, each user module its own hue (in drawing order
 * from a palette of ten), inlined frames lighter, unmapped code grey, and the
 * process frames at the bottom of a multi-process profile lavender.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "export-writers.h"
#include "hash.h"
#include "text-escape.h"

#define SVG_WIDTH 1200.0
#define SVG_PAD 10.0
#define FRAME_HEIGHT 16.0
#define HEADER 40.0
#define FOOTER 30.0
#define MIN_WIDTH_PX 0.1
#define TITLE_MIN_WIDTH_PX 1.0
#define CHAR_WIDTH 7.2 /* 12 px monospace; the script trims labels with the same figure */
#define PROCESS_FILL "#b8b8d8" /* the process frames of a multi-process profile */

static const char flamegraph_js[] =
#include "flamegraph-js.h"
	;

static void hsl_to_hex(double h, double s, double l, char ret[8])
{
	double c = (1 - (2 * l - 1 < 0 ? 1 - 2 * l : 2 * l - 1)) * s;
	double hp = h / 60, x, rgb[3] = {};
	int sector = (int)hp % 6;
	double frac = hp - (int)hp + (int)hp % 2;

	x = c * (1 - (frac - 1 < 0 ? 1 - frac : frac - 1));
	switch (sector) {
	case 0: rgb[0] = c, rgb[1] = x; break;
	case 1: rgb[0] = x, rgb[1] = c; break;
	case 2: rgb[1] = c, rgb[2] = x; break;
	case 3: rgb[1] = x, rgb[2] = c; break;
	case 4: rgb[0] = x, rgb[2] = c; break;
	default: rgb[0] = c, rgb[2] = x; break;
	}
	snprintf(ret, 8, "#%02x%02x%02x", (int)((rgb[0] + l - c / 2) * 255 + 0.5),
		 (int)((rgb[1] + l - c / 2) * 255 + 0.5), (int)((rgb[2] + l - c / 2) * 255 + 0.5));
}

/* Well-separated hues for user modules, given out in drawing order; orange stays the kernel's. */
static const double module_hues[] = { 120, 210, 280, 170, 330, 60, 245, 95, 300, 190 };

typedef struct Colours {
	uint32_t *hue_of_module; /* profile string id of a module -> module_hues index */
	uint32_t n_modules;
} Colours;

static void frame_colour(const Profile *p, Colours *c, const ProfileFrame *frame, char ret[8])
{
	/* a little lightness jitter per name keeps neighbours apart */
	const char *name = p->strings[frame->function];
	uint64_t h = hash_fnv1a(HASH_FNV1A_BASIS, name, strlen(name));
	double jitter = (double)(h % 1000) / 1000 * 0.12;

	if (frame->kernel)
		hsl_to_hex(28, 0.85, 0.55 + jitter, ret);
	else if (frame->module == PROFILE_NONE)
		hsl_to_hex(0, 0, 0.65 + jitter, ret);
	else {
		uint32_t *hue = &c->hue_of_module[frame->module];

		if (*hue == PROFILE_NONE)
			*hue = c->n_modules++ % ELEMENTSOF(module_hues);
		hsl_to_hex(module_hues[*hue], 0.55, (frame->inlined ? 0.72 : 0.58) + jitter, ret);
	}
}

/* Up to max_chars code points of name, ".." marking a cut; empty when too narrow. */
static void write_label(FILE *out, const char *name, double width)
{
	int max_chars = (int)((width - 6) / CHAR_WIDTH), n = 0;
	const char *end = name;

	if (max_chars < 3)
		return;
	for (; *end; end++)
		if (((unsigned char)*end & 0xc0) != 0x80 && ++n > max_chars)
			break;
	if (!*end) {
		write_xml_text(out, name);
		return;
	}
	/* cut two code points earlier to make room for ".." */
	{
		_cleanup_free_ char *cut = NULL;
		const char *e = name;

		for (n = 0; *e; e++)
			if (((unsigned char)*e & 0xc0) != 0x80 && ++n > max_chars - 2)
				break;
		cut = strndup(name, e - name);
		if (cut)
			write_xml_text(out, cut);
		fputs_unlocked("..", out);
	}
}

/*
 * A frame's description, "name\nmodule\nN samples, P%", goes into a <title>
 * (the browser's tooltip) when the frame is at least TITLE_MIN_WIDTH_PX wide,
 * else into a data-t attribute that only the script reads: thousands of
 * <title> elements made Chromium take a minute to show a 25 000-frame graph.
 */
static void write_frame(FILE *out, const char *name, const char *module, uint64_t count,
			uint64_t total, double x, double y, double w, const char *fill)
{
	bool title = w >= TITLE_MIN_WIDTH_PX;
	const char *newline = title ? "\n" : "&#10;";

	fputs_unlocked(title ? "<g class=\"f\"><title>" : "<g class=\"f\" data-t=\"", out);
	write_xml_text(out, name);
	if (module) {
		fputs_unlocked(newline, out);
		write_xml_text(out, module);
	}
	fprintf(out, "%s%llu samples, %.2f%%%s<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
		     "height=\"%.1f\" fill=\"%s\" rx=\"2\"/><text x=\"%.1f\" y=\"%.1f\">",
		newline, (unsigned long long)count, total ? 100.0 * count / total : 0.0,
		title ? "</title>" : "\">", x, y, w, FRAME_HEIGHT - 1, fill, x + 3,
		y + FRAME_HEIGHT - 4.5);
	write_label(out, name, w);
	fputs_unlocked("</text></g>\n", out);
}

int export_write_svg(const Folding *f, FILE *out)
{
	const Profile *p = f->profile;
	size_t n = (size_t)f->n_nodes + 1;
	_cleanup_free_ uint64_t *inclusive = calloc(n, sizeof(uint64_t));
	_cleanup_free_ uint64_t *x = calloc(n, sizeof(uint64_t));
	_cleanup_free_ uint64_t *next_x = calloc(n, sizeof(uint64_t));
	_cleanup_free_ uint32_t *hues = malloc(((size_t)p->n_strings + 1) * sizeof(uint32_t));
	Colours colours = { .hue_of_module = hues };
	double height = HEADER + FOOTER + FRAME_HEIGHT * (f->max_depth + 1), scale;
	uint64_t total = f->n_samples, root_cursor = 0;
	char fill[8];

	if (!inclusive || !x || !next_x || !hues)
		return -ENOMEM;
	memset(hues, 0xff, ((size_t)p->n_strings + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < f->n_stacks; i++)
		inclusive[f->stacks[i].node] += f->stacks[i].count;
	/* children have higher ids than their parents */
	for (uint32_t i = f->n_nodes; i > 0; i--)
		if (f->nodes[i - 1].parent != PROFILE_NONE)
			inclusive[f->nodes[i - 1].parent] += inclusive[i - 1];

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		     "xmlns=\"http://www.w3.org/2000/svg\">\n",
		SVG_WIDTH, height, SVG_WIDTH, height);
	fputs_unlocked("<style>text{font-family:monospace;font-size:12px;fill:#000}"
		       "g.f:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}"
		       "g.f text{pointer-events:none}.ui{cursor:pointer;fill:#333}"
		       "#title{font-size:17px;text-anchor:middle}</style>\n", out);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		     "<text id=\"title\" x=\"%.0f\" y=\"24\">Flame graph: ", SVG_WIDTH / 2);
	/* what was profiled: a pid, or a cgroup, unit or the whole machine */
	if (p->target != PROFILE_NONE)
		write_xml_text(out, p->strings[p->target]);
	else
		fprintf(out, "pid %u", p->pid);
	fprintf(out, ", %llu samples</text>\n"
		     "<text id=\"reset\" class=\"ui\" x=\"%.0f\" y=\"24\" "
		     "style=\"display:none\">Reset zoom</text>\n"
		     "<text id=\"search\" class=\"ui\" x=\"%.0f\" y=\"24\" "
		     "text-anchor=\"end\">Search</text>\n"
		     "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n"
		     "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"></text>\n",
		(unsigned long long)total, SVG_PAD, SVG_WIDTH - SVG_PAD,
		SVG_PAD, height - 10, SVG_WIDTH - SVG_PAD, height - 10);

	scale = total ? (SVG_WIDTH - 2 * SVG_PAD) / (double)total : 0;
	write_frame(out, "all", NULL, total, total, SVG_PAD, height - FOOTER - FRAME_HEIGHT,
		    SVG_WIDTH - 2 * SVG_PAD, "#c8c8c0");
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		/* rank order visits parents first and siblings in name order */
		uint32_t node = f->node_of_rank[i], parent = f->nodes[node].parent;
		/* the process frame rooting a multi-process profile's stacks has no profile frame */
		const ProfileFrame *frame = f->nodes[node].frame == PROFILE_NONE ? NULL :
					    &p->frames[f->nodes[node].frame];
		double w = inclusive[node] * scale;

		if (parent == PROFILE_NONE) {
			x[node] = root_cursor;
			root_cursor += inclusive[node];
		} else {
			x[node] = next_x[parent];
			next_x[parent] += inclusive[node];
		}
		next_x[node] = x[node];
		if (w < MIN_WIDTH_PX || inclusive[node] == 0)
			continue;
		if (frame)
			frame_colour(p, &colours, frame, fill);
		else
			memcpy(fill, PROCESS_FILL, sizeof(PROCESS_FILL));
		write_frame(out, p->strings[f->nodes[node].function],
			    frame && frame->module != PROFILE_NONE ? p->strings[frame->module] : NULL,
			    inclusive[node], total, SVG_PAD + x[node] * scale,
			    height - FOOTER - FRAME_HEIGHT * (f->nodes[node].depth + 1), w, fill);
	}
	fputs_unlocked("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fputs_unlocked(flamegraph_js, out);
	fputs_unlocked("]]></script>\n</svg>\n", out);
	return 0;
}
