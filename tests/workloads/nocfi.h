/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include <stdint.h>

uint64_t nocfi_middle(uint64_t x, uint64_t n);
uint64_t nocfi_leaf(uint64_t x);
