/* observers.c — the registry of the sync engine's observers (see ash_observer.h): one line each,
 * in the order events reach them. A new observer: one file defining its ash_observer_t, one line
 * here. The report comes before the trace: the trace closes last at exit.
 *
 * Folder shim/observe/ owns: the engine's observers, called only through the observer interface
 * (`shim/sync/ash_observer.h`) and issuing nothing: record, exit report, trace; their registry
 * (`observers.c`, one line each)
 *
 * Must not: hold an observer's code or any logic (one line per observer); be reached except through
 * the dispatchers (shim/sync/events.c).
 */
#include "ash_observer.h"
#include "ash_record.h"
#include "ash_report.h"
#include "ash_trace.h"

const ash_observer_t *const ash_observers[] = {
    &ash_record_observer, /* record.c: the JSON Lines record of sync points */
    &ash_report_observer, /* report.c: the exit report */
    &ash_trace_observer,  /* trace.c: the Chrome-trace timeline */
    NULL,
};
