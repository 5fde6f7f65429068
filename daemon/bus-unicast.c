/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "bus-unicast.h"
#include "cleanup.h"

int bus_signal_to(sd_bus *bus, const char *destination, const char *path, const char *interface,
		  const char *member, const char *types, ...)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
	va_list ap;
	int r;

	r = sd_bus_message_new_signal(bus, &m, path, interface, member);
	if (r < 0)
		return r;
	r = sd_bus_message_set_destination(m, destination);
	if (r < 0)
		return r;
	va_start(ap, types);
	r = sd_bus_message_appendv(m, types, ap);
	va_end(ap);
	if (r < 0)
		return r;
	return sd_bus_send(bus, m, NULL);
}

/* The property 'name' in 'vtable' (entries are start.element_size bytes apart, as sd-bus walks them). */
static const sd_bus_vtable *find_property(const sd_bus_vtable *vtable, const char *name)
{
	size_t step = vtable[0].x.start.element_size;

	for (const sd_bus_vtable *v = vtable; v->type != _SD_BUS_VTABLE_END;
	     v = (const sd_bus_vtable *)((const char *)v + step))
		if ((v->type == _SD_BUS_VTABLE_PROPERTY || v->type == _SD_BUS_VTABLE_WRITABLE_PROPERTY) &&
		    strcmp(v->x.property.member, name) == 0)
			return v;
	return NULL;
}

int bus_properties_changed_to(sd_bus *bus, const char *destination, const char *path,
			      const char *interface, const sd_bus_vtable *vtable, void *userdata,
			      const char *const *names)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	int r;

	r = sd_bus_message_new_signal(bus, &m, path, "org.freedesktop.DBus.Properties",
				      "PropertiesChanged");
	if (r >= 0)
		r = sd_bus_message_set_destination(m, destination);
	if (r >= 0)
		r = sd_bus_message_append(m, "s", interface);
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "{sv}");
	for (const char *const *n = names; r >= 0 && *n; n++) {
		const sd_bus_vtable *p = find_property(vtable, *n);

		if (!p || !p->x.property.get)
			return -ENOENT;
		r = sd_bus_message_open_container(m, 'e', "sv");
		if (r >= 0)
			r = sd_bus_message_append(m, "s", *n);
		if (r >= 0)
			r = sd_bus_message_open_container(m, 'v', p->x.property.signature);
		if (r >= 0)
			/* as sd-bus itself calls getters: with the userdata moved by the offset */
			r = p->x.property.get(bus, path, interface, *n, m,
					      (uint8_t *)userdata + p->x.property.offset, &error);
		sd_bus_error_free(&error);
		if (r >= 0)
			r = sd_bus_message_close_container(m);
		if (r >= 0)
			r = sd_bus_message_close_container(m);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_message_append(m, "as", 0);
	if (r < 0)
		return r;
	return sd_bus_send(bus, m, NULL);
}
