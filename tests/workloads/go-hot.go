// SPDX-License-Identifier: LGPL-2.1-or-later
// go-hot [SECONDS]: a Go program (frame pointers, .gopclntab) that spends its
// time in two known functions, goHotHash (about 3/4) and goHotSort (1/4).
package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"
)

//go:noinline
func goHotHash(n int) uint64 {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x ^= x >> 31
		x *= 0x9e3779b97f4a7c15
	}
	return x
}

//go:noinline
func goHotSort(v []int) int {
	for i := range v {
		v[i] = (i * 7919) % len(v)
	}
	sort.Ints(v)
	return v[len(v)/2]
}

func main() {
	seconds := 3.0
	if len(os.Args) > 1 {
		if s, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			seconds = s
		}
	}
	end := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	v := make([]int, 20000)
	sum := uint64(0)
	for time.Now().Before(end) {
		sum += goHotHash(3000000)
		sum += uint64(goHotSort(v))
	}
	fmt.Println(sum)
}
