// SPDX-License-Identifier: LGPL-2.1-or-later
// workload-cxx [SECONDS]: time goes to a C++ member function, so its frame
// must show demangled as demo::Grid::relax(int).
#include <chrono>
#include <cstdint>
#include <cstdlib>

namespace demo {
class Grid {
public:
	__attribute__((noinline)) std::uint64_t relax(int rounds);

private:
	std::uint64_t state_ = 17;
};

std::uint64_t Grid::relax(int rounds)
{
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < 1024; i++) {
			state_ ^= state_ >> 31;
			state_ *= 0x9e3779b97f4a7c15ULL;
			state_ += static_cast<std::uint64_t>(i);
		}
	return state_;
}
} // namespace demo

static volatile std::uint64_t sink;

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
	demo::Grid grid;

	while (std::chrono::steady_clock::now() < end)
		sink = grid.relax(64);
	return 0;
}
