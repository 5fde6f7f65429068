// SPDX-License-Identifier: LGPL-2.1-or-later
// workload-cxx-throw [SECONDS]: a C++ program that spends its time throwing
// and catching: throw_hot() mixes a value and throws it, catch_loop() catches
// it. Much of the time goes to libstdc++'s __cxa_throw and libgcc's unwinder
// (_Unwind_RaiseException and below), whose frames a profiler must walk back
// to main through the CFI of those libraries.
#include <cstdint>
#include <cstdlib>
#include <ctime>

struct Thrown {
	uint64_t x;
};

static uint64_t now_ns()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return uint64_t(ts.tv_sec) * 1000000000ULL + uint64_t(ts.tv_nsec);
}

__attribute__((noinline)) uint64_t throw_hot(uint64_t x)
{
	for (int i = 0; i < 300; i++) {
		x ^= x >> 31;
		x *= 0x9e3779b97f4a7c15ULL;
		__asm__ volatile("" : "+r"(x));
	}
	throw Thrown{ x };
}

__attribute__((noinline)) uint64_t catch_loop(uint64_t end)
{
	uint64_t x = 1;

	while (now_ns() < end)
		try {
			x = throw_hot(x);
		} catch (const Thrown &t) {
			x = t.x + 1;
		}
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;

	return catch_loop(now_ns() + uint64_t(seconds * 1e9)) == 42;
}
