/* ash_shim.h — private to the shim: lifecycle.
 *
 * ash_shim_init runs once (pthread_once), called by intercept/'s lazy init from whichever door
 * is used first — never from an ELF constructor. It reads the options, discovers the world and
 * registers the exit report with atexit. The exit report prints, at info level, the allocation
 * peaks per device and whatever the registered reporters print (intercept/: launch counts).
 */
#ifndef ASH_SHIM_H
#define ASH_SHIM_H

#include "ash_status.h"

#define ASH_EXPORT __attribute__((visibility("default")))

ash_status_t ash_shim_init(void);
/* Add a function the exit report calls (at most 4; init-time only). */
ash_status_t ash_shim_on_exit(void (*report)(void));

#endif /* ASH_SHIM_H */
