/*
 * clock.c - the monotonic clock in milliseconds that deadlines, retry
 * budgets and bounded waits read (pt_now_ms(), pt.h): never the wall
 * clock, which a settimeofday or NTP step can move back.
 */
#include "scoring/util/pt.h"

#include <time.h>

long pt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
