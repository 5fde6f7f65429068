#include <errno.h>
#include "export-writers.h"
int export_write_svg(const Folding *f, FILE *out) { return -EOPNOTSUPP; }
