#include <errno.h>
#include "export-writers.h"
int export_write_firefox(const Folding *f, FILE *out) { return -EOPNOTSUPP; }
int export_write_speedscope(const Folding *f, FILE *out) { return -EOPNOTSUPP; }
int export_write_svg(const Folding *f, FILE *out) { return -EOPNOTSUPP; }
